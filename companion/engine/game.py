"""The referee: a pure state machine over flips, slaps and pile pick-ups.

No I/O, no clocks, no camera. Each method validates its event first and raises
EventError without touching the state when the event is impossible; otherwise
it changes the state and returns the announcements (plain dicts, JSON-ready)
that the event caused. The referee counts cards, it does not know which cards
sit in each hand: the camera only sees the pile.

Rules decisions for the cases the rule documents leave open are listed in the
README ("Rules decisions"); the comments below point at them by name.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from .cards import _NAME_OF as _NAMES
from .cards import _PARSE, CardError, card_name, parse_card, rank_of
from .patterns import SPAN, make_detector
from .rules import PRESETS, Rules

Announcement = dict[str, Any]
_RANK_OF_LETTER = {"A": 1, "J": 11, "Q": 12, "K": 13}


class EventError(ValueError):
    """An impossible event: it is refused and nothing changes."""


class Game:
    """One table: a match of hands under one set of rules."""

    def __init__(self, rules: Rules | None = None) -> None:
        self.rules = rules or PRESETS["base"]
        self._detect = make_detector(self.rules)
        # rank -> challenge count, only for ranks that challenge under these rules.
        self._counts: dict[int, int] = {}
        if self.rules.challenge:
            self._counts = {_RANK_OF_LETTER[k]: v for k, v in self.rules.challenge_counts.items()
                            if v > 0}
        self.players: list[str] = []
        self.hands_won: list[int] = []
        self.hand_number = 0
        self.hand_active = False
        self.match_over = False
        self.match_number = 0
        self.dealer: int | None = None
        self._reset_hand([])

    # ------------------------------------------------------------------ state
    def _reset_hand(self, stacks: list[int]) -> None:
        n = len(stacks)
        self.n = n
        self.stacks = stacks
        self.out = [False] * n
        self.deck_size = sum(stacks)
        self.pile: list[int] = []          # face-up cards, oldest first
        self.pile_ranks: list[int] = []
        self.pile_seats: list[int] = []    # who played each face-up card
        self.in_pile: set[int] = set()
        self.under = 0                     # face-down penalty cards under the pile
        self.turn: int | None = None
        self.chain: list[int] = []         # challengers of the open challenge, in order
        self.responder: int | None = None
        self.left = 0                      # attempts the responder still has
        self.count = 0                     # attempts the open challenge gave
        self.pending: tuple[int, str] | None = None   # (seat, reason): won, not yet collected
        self.top_patterns: tuple[str, ...] = ()        # what a slap may claim right now
        self.grace = False                 # last pile went on a real pattern, no flip since
        self._out: list[Announcement] = []
        self._t: float | None = None

    @property
    def pile_count(self) -> int:
        return len(self.pile) + self.under

    def top_cards(self, k: int = 3) -> list[str]:
        return [card_name(c) for c in self.pile[-k:]]

    def _emit(self, ann: Announcement) -> None:
        if self._t is not None:
            ann["t"] = self._t
        self._out.append(ann)

    def _begin(self, t: float | None) -> list[Announcement]:
        if not self.hand_active:
            raise EventError("no hand in progress: send a start event first"
                             if not self.match_over and self.hand_number == 0
                             else "the hand is over: send a start event for the next hand")
        self._t = t
        out: list[Announcement] = []
        self._out = out
        return out

    def _next_seat(self, seat: int) -> int | None:
        """Clockwise from seat, skipping players who are out or hold no cards.

        Returns seat itself when nobody else holds cards, None when nobody does.
        """
        n, out, stacks = self.n, self.out, self.stacks
        for i in range(1, n + 1):
            j = (seat + i) % n
            if stacks[j] > 0 and not out[j]:
                return j
        return None

    # ------------------------------------------------------------------ events
    def start(self, players: Sequence[str], dealer: int | None = None,
              stacks: Sequence[int] | None = None, t: float | None = None) -> list[Announcement]:
        if (not isinstance(players, (list, tuple)) or len(players) < 2
                or not all(isinstance(p, str) and p.strip() for p in players)):
            raise EventError("players: need a list of at least two names")
        n = len(players)
        size = self.rules.deck_size
        if n > size:
            raise EventError(f"players: at most {size} players for one deck")
        if dealer is None:
            dealer = n - 1
        if not _is_int(dealer) or not 0 <= dealer < n:
            raise EventError(f"dealer: unknown seat {dealer!r} (seats 0-{n - 1})")
        if stacks is None:
            # The whole deck dealt one at a time from the dealer's left (seat 0 when the
            # last seat deals, the default).
            stacks = [size // n + (1 if (i - dealer - 1) % n < size % n else 0)
                      for i in range(n)]
        else:
            if (not isinstance(stacks, (list, tuple)) or len(stacks) != n
                    or not all(_is_int(s) and s >= 0 for s in stacks)):
                raise EventError(f"stacks: need {n} card counts, one per player")
            if sum(stacks) > size:
                raise EventError(f"stacks: {sum(stacks)} cards, but the deck has {size}")
            if sum(1 for s in stacks if s > 0) < 2:
                raise EventError("stacks: at least two players need cards")
        players = [p.strip() for p in players]
        if players != self.players or self.match_over or not self.hands_won:
            self.players = players
            self.hands_won = [0] * n
            self.hand_number = 0
            self.match_over = False
            self.match_number += 1
        self.hand_number += 1
        self.dealer = dealer
        self._reset_hand(list(stacks))
        self.hand_active = True
        self._t = t
        out: list[Announcement] = []
        self._out = out
        self.turn = self._next_seat(dealer)
        self._emit({"type": "start", "players": list(players), "stacks": list(self.stacks),
                    "dealer": dealer, "hand": self.hand_number, "match": self.match_number})
        self._emit({"type": "turn", "seat": self.turn})
        return out

    def flip(self, card: str | int, t: float | None = None) -> list[Announcement]:
        cid = _PARSE.get(card) if type(card) is str else None   # the common case: one lookup
        if cid is None:
            if type(card) is int and 0 <= card < 56 and card in _NAMES:
                cid = card
            else:
                try:
                    cid = parse_card(card)
                except CardError as exc:
                    raise EventError(str(exc)) from None
        if cid < 4 and not self.rules.jokers:
            raise EventError(f"{card_name(cid)}: jokers are not in play (jokers = false)")
        if cid in self.in_pile and self.pending is None:
            raise EventError(f"duplicate card: {card_name(cid)} is already in the pile")
        out = self._begin(t)
        if self.pending is not None:
            # The pile was won and not yet picked up; the winner's next card means it was.
            self._award(*self.pending)
            if not self.hand_active:
                return out
        seat = self.turn
        assert seat is not None
        attempt = self.responder == seat
        self.stacks[seat] -= 1
        self.pile.append(cid)
        rank = rank_of(cid)
        self.pile_ranks.append(rank)
        self.pile_seats.append(seat)
        self.in_pile.add(cid)
        self.grace = False
        flip_ann = {"type": "flip", "seat": seat, "card": _NAMES[cid],
                    "pile": len(self.pile) + self.under}
        self._emit(flip_ann)
        pats = self._detect(self.pile_ranks)
        if attempt and not self.rules.slaps_during_challenge:
            pats = ()  # Rules decision "slaps off during a challenge".
        self.top_patterns = pats
        if pats:
            self._emit({"type": "pattern", "patterns": list(pats), "cards": self._pattern_cards(pats)})
        count = self._counts.get(rank)
        if count:
            self._open_challenge(seat, count, cid)
        elif attempt:
            self.left -= 1
            if self.left > 0 and self.stacks[seat] > 0:
                flip_ann["left"] = self.left
            else:
                # Out of attempts, or out of cards to make them (Rules decision).
                self._challenge_failed(failer=seat)
        else:
            nxt = self._next_seat(seat)
            if nxt is None:
                # Nobody holds a card to play (Rules decision "nobody can play").
                self._set_pending(seat, "last_card")
            else:
                self.turn = nxt
                self._emit({"type": "turn", "seat": nxt})
        return out

    def slap(self, seats: Iterable[int], t: float | None = None) -> list[Announcement]:
        if isinstance(seats, (str, bytes)) or not isinstance(seats, Iterable):
            raise EventError("seats: need a list of seats, bottom hand first")
        seats = list(seats)
        if not seats:
            raise EventError("seats: need at least one seat")
        if not self.hand_active:
            self._begin(t)  # raises with the reason
        for s in seats:
            if not _is_int(s) or not 0 <= s < self.n:
                raise EventError(f"unknown seat {s!r} (seats 0-{self.n - 1})")
            if self.out[s]:
                raise EventError(f"seat {s} ({self.players[s]}) is out of this hand")
        seats = list(dict.fromkeys(seats))   # one hand per player, first landing kept
        out = self._begin(t)
        pats = self.top_patterns
        if pats:
            eligible = [s for s in seats if self.stacks[s] > 0 or self.rules.slap_back_in]
            if eligible:
                winner = eligible[0]     # bottom hand wins
                overrides = self.pending[0] if self.pending else None
                late = [s for s in seats if s != winner]
                self._award(winner, "slap", pats, overrides, late)
            # Hands with no cards (slap_back_in off) on a real pattern: nothing happens.
            return out
        if self.grace:
            # A real pattern, slower hands, pile already won: they owe nothing.
            self._emit({"type": "late_slap", "seats": seats})
            return out
        self._wrong_slap(seats)
        return out

    def collect(self, t: float | None = None) -> list[Announcement]:
        if not self.hand_active:
            self._begin(t)
        if self.pending is None and self.pile_count:
            raise EventError("the pile has not been won: nothing to collect")
        out = self._begin(t)
        if self.pending is not None:
            self._award(*self.pending)
        return out

    def give(self, seat: int, t: float | None = None) -> list[Announcement]:
        """The table's ruling: seat took the pile (a pick-up the referee did not see
        won, such as a slap no pad or camera caught). The pile and the cards under it go
        to seat, who leads, as with any award."""
        if not _is_int(seat) or not 0 <= seat < self.n:
            raise EventError(f"unknown seat {seat!r} (seats 0-{self.n - 1})")
        if not self.hand_active:
            self._begin(t)
        if self.out[seat]:
            raise EventError(f"seat {seat} ({self.players[seat]}) is out of this hand")
        if not self.pile_count and not self.under:
            raise EventError("there is no pile to give")
        out = self._begin(t)
        self._award(seat, "ruling")
        return out

    def state(self, t: float | None = None) -> list[Announcement]:
        self._t = t
        out: list[Announcement] = []
        self._out = out
        self._emit(self.snapshot())
        return out

    def snapshot(self) -> Announcement:
        challenge = None
        if self.chain:
            challenge = {"by": self.chain[-1], "seat": self.responder, "count": self.count,
                         "left": self.left, "chain": list(self.chain)}
        return {
            "type": "state", "stacks": list(self.stacks), "pile": self.pile_count,
            "out": [s for s in range(self.n) if self.out[s]], "turn": self.turn,
            "top": self.top_cards(3), "under": self.under, "challenge": challenge,
            "pending": ({"seat": self.pending[0], "reason": self.pending[1]}
                        if self.pending else None),
            "patterns": list(self.top_patterns), "hands_won": list(self.hands_won),
            "hand": self.hand_number, "hand_over": not self.hand_active,
        }

    def apply(self, event: Mapping[str, Any]) -> list[Announcement]:
        """One JSON event (see README "Referee contract") -> announcements."""
        if type(event) is not dict and not isinstance(event, Mapping):
            raise EventError("an event must be a JSON object")
        t = event.get("t")
        if t is not None and (type(t) is not float and type(t) is not int):
            raise EventError(f"t: expected seconds as a number, got {t!r}")
        kind = event.get("type")
        if kind == "flip":
            if "card" not in event:
                raise EventError("flip: missing key 'card'")
            return self.flip(event["card"], t)
        if kind == "slap":
            if "seats" in event:
                return self.slap(event["seats"], t)
            if "seat" in event:
                return self.slap([event["seat"]], t)
            raise EventError("slap: missing key 'seats' (or 'seat')")
        if kind == "collect":
            return self.collect(t)
        if kind == "give":
            if "seat" not in event:
                raise EventError("give: missing key 'seat'")
            return self.give(event["seat"], t)
        if kind == "state":
            return self.state(t)
        if kind == "start":
            return self.start(event.get("players"), event.get("dealer"), event.get("stacks"), t)
        raise EventError(f"unknown event type {kind!r} (start, flip, slap, collect, give, "
                         "state)")

    # ------------------------------------------------------------------ helpers
    def _pattern_cards(self, pats: tuple[str, ...]) -> list[str]:
        span = max(SPAN[p] for p in pats)
        cards = [card_name(c) for c in self.pile[-span:]] if span else []
        if "top_bottom" in pats and len(self.pile) > span:
            cards = [card_name(self.pile[0])] + (cards or [card_name(self.pile[-1])])
        return cards

    def _open_challenge(self, seat: int, count: int, cid: int) -> None:
        self.chain.append(seat)
        self.count = self.left = count
        nxt = self._next_seat(seat)
        if nxt is None or nxt == seat:
            # Nobody else holds a card to answer with (Rules decision).
            self.responder = None
            self._emit({"type": "challenge", "by": seat, "seat": None, "count": count,
                        "card": card_name(cid)})
            self._challenge_failed(failer=None)
            return
        self.responder = self.turn = nxt
        self._emit({"type": "challenge", "by": seat, "seat": nxt, "count": count,
                    "card": card_name(cid)})
        self._emit({"type": "turn", "seat": nxt})

    def _challenge_failed(self, failer: int | None) -> None:
        chain = self.chain
        if self.rules.challenge_winner == "last" or failer is None:
            winner = chain[-1]
        elif failer in chain:
            # The chain came back round to the player who failed: their own earlier
            # challenge no longer stands (Rules decision "challenge_winner = first").
            idx = len(chain) - 1 - chain[::-1].index(failer)
            winner = chain[idx + 1]
        else:
            winner = chain[0]
        self._emit({"type": "challenge_won", "seat": winner, "failed": failer,
                    "chain": list(chain), "cards": self.pile_count})
        self._set_pending(winner, "challenge")

    def _set_pending(self, seat: int, reason: str) -> None:
        self.chain = []
        self.responder = None
        self.pending = (seat, reason)
        self.turn = seat

    def _award(self, seat: int, reason: str, patterns: tuple[str, ...] = (),
               overrides: int | None = None, late: Sequence[int] = ()) -> None:
        cards = len(self.pile) + self.under
        last_player = self.pile_seats[-1] if self.pile_seats else seat
        self.grace = bool(self.top_patterns)
        self.stacks[seat] += cards
        ann: Announcement = {"type": "award", "seat": seat, "reason": reason, "cards": cards}
        if patterns:
            ann["patterns"] = list(patterns)
            ann["top"] = self.top_cards(3)
        if overrides is not None:
            ann["overrides"] = overrides
        if late:
            ann["late"] = list(late)
        self._emit(ann)
        self.pile = []
        self.pile_ranks = []
        self.pile_seats = []
        self.in_pile = set()
        self.under = 0
        self.chain = []
        self.responder = None
        self.pending = None
        self.top_patterns = ()
        # Empty hands: a legal slap won by someone else ends their one chance;
        # without slap-back-in any award to someone else does.
        if reason == "slap" or not self.rules.slap_back_in:
            self._mark_out([s for s in range(self.n)
                            if s != seat and not self.out[s] and self.stacks[s] == 0])
        if self._check_hand_over():
            return
        if reason == "slap" and self.rules.lead_after_slap == "seat":
            lead = self._next_seat(last_player)
        else:
            lead = seat
        self.turn = lead
        self._emit({"type": "turn", "seat": lead})

    def _wrong_slap(self, seats: list[int]) -> None:
        penalty = self.rules.penalty
        going_out = []
        for s in seats:
            paid = min(penalty, self.stacks[s])
            self.stacks[s] -= paid
            self.under += paid
            self._emit({"type": "wrong_slap", "seat": s, "paid": paid, "owed": penalty})
            if paid < penalty:
                going_out.append(s)
        alive = [s for s in range(self.n) if not self.out[s] and s not in going_out]
        if not alive and going_out:
            # Never everyone out at once: the bottom hand stays (Rules decision).
            going_out.remove(seats[0])
        self._mark_out(going_out)
        if self._check_hand_over():
            return
        turn = self.turn
        if self.pending is not None or turn is None:
            return
        if self.stacks[turn] == 0 or self.out[turn]:
            if self.responder == turn:
                self._challenge_failed(failer=turn)
                return
            nxt = self._next_seat(turn)
            if nxt is None:
                self._set_pending(turn, "last_card")
                return
            self.turn = nxt
            self._emit({"type": "turn", "seat": nxt})

    def _mark_out(self, seats: Iterable[int]) -> None:
        for s in seats:
            if not self.out[s]:
                self.out[s] = True
                self._emit({"type": "out", "seat": s})

    def _check_hand_over(self) -> bool:
        alive = [s for s in range(self.n) if not self.out[s]]
        winner = alive[0] if len(alive) == 1 else None
        if winner is None:
            for s in alive:
                if self.stacks[s] == self.deck_size:
                    winner = s
                    break
        if winner is None:
            return False
        self.hand_active = False
        self.turn = None
        self.hands_won[winner] += 1
        self._emit({"type": "hand_over", "winner": winner, "hands_won": list(self.hands_won)})
        if self.hands_won[winner] >= self.rules.hands_to_win:
            self.match_over = True
            self._emit({"type": "match_over", "winner": winner})
        return True


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)
