"""Cards as small integers, and their names.

A card is an int ``rank * 4 + suit`` with rank 1..13 (A=1 ... K=13) and suit
0..3 (s h d c). The two jokers have rank 0: ``RJ`` (red, id 0) and ``BJ``
(black, id 1). Ints keep the referee's hot path cheap; names are only made at
the edges (events in, announcements out).
"""

from __future__ import annotations

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("s", "h", "d", "c")
SUIT_WORDS = {"s": "spades", "h": "hearts", "d": "diamonds", "c": "clubs"}
RANK_WORDS = {
    "A": "ace", "2": "two", "3": "three", "4": "four", "5": "five", "6": "six",
    "7": "seven", "8": "eight", "9": "nine", "10": "ten", "J": "jack",
    "Q": "queen", "K": "king",
}
JOKER_NAMES = ("RJ", "BJ")

ACE, JACK, QUEEN, KING = 1, 11, 12, 13


class CardError(ValueError):
    """A card name that does not name a card."""


def card_id(rank: int, suit: int) -> int:
    return rank * 4 + suit


def rank_of(card: int) -> int:
    """1..13 for A..K, 0 for a joker."""
    return card >> 2


def is_joker(card: int) -> bool:
    return card < 4


# Every spelling we accept, precomputed once: parsing is a dict lookup.
_NAME_OF: dict[int, str] = {0: "RJ", 1: "BJ"}
_PARSE: dict[str, int] = {"RJ": 0, "BJ": 1}
for _r, _rank in enumerate(RANKS, start=1):
    for _s, _suit in enumerate(SUITS):
        _cid = card_id(_r, _s)
        _NAME_OF[_cid] = _rank + _suit
        for _rk in {_rank, _rank.lower(), "T" if _rank == "10" else _rank,
                    "t" if _rank == "10" else _rank}:
            for _su in (_suit, _suit.upper()):
                _PARSE[_rk + _su] = _cid
for _j, _name in enumerate(JOKER_NAMES):
    _PARSE[_name.lower()] = _j

STANDARD_DECK: tuple[int, ...] = tuple(card_id(r, s) for s in range(4) for r in range(1, 14))
JOKERS: tuple[int, ...] = (0, 1)
# The detector's 52 classes, in the order the issue fixes: As 2s ... Ks Ah ... Kc.
CLASS_NAMES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
# The detector's classes that are courts (J, Q, K): a picture no other card of a deck shares.
COURT_CLASSES: frozenset[int] = frozenset(i for i, n in enumerate(CLASS_NAMES)
                                          if n[:-1] in ("J", "Q", "K"))


def parse_card(text: object) -> int:
    """'Kh', '10s', 'Ts', 'qd', 'RJ' -> card id. Raises CardError."""
    if isinstance(text, str):
        cid = _PARSE.get(text.strip())
        if cid is not None:
            return cid
    raise CardError(f"unknown card {text!r} (ranks A 2-10 J Q K, T for 10; suits s h d c)")


def card_name(card: int) -> str:
    return _NAME_OF[card]


def card_words(card: int) -> str:
    """'Seven of hearts' style words, for speech and large print."""
    if is_joker(card):
        return "red joker" if card == 0 else "black joker"
    name = _NAME_OF[card]
    return f"{RANK_WORDS[name[:-1]]} of {SUIT_WORDS[name[-1]]}"


def rank_name(rank: int) -> str:
    return "joker" if rank == 0 else RANKS[rank - 1]


def deck(jokers: bool = False) -> list[int]:
    return list(STANDARD_DECK) + (list(JOKERS) if jokers else [])
