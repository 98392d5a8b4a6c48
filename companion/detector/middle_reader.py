"""The middle reader: a second, independent cue to a card's rank, from its middle.

The corner reader names a card from its index alone, and its wrong cards are mostly a
rank one pip off where the index is small or blurred (a 5c read 6c, a 9s read 10s) or a
number read as a court. The middle of a card says the same thing another way: the count
and layout of its pips, or a picture. This small CNN reads the straightened card with its
four corners blanked out (so it cannot learn the index and share the corner reader's
mistakes) and answers one of `GROUPS`: the ace, 2-10, or "a court" (a jack, queen and
king differ by a picture no two decks draw alike, so they are one group), and the suit
(a middle's pips are far larger than the index's). Where it is sure the card is not what
the corner reader named, the card is "unclear", never a wrong card (`agrees`,
`CardReaderDetector`).

A second network on the same crop, in its own file, reads which court a court's picture
shows (`LETTERS`: jack, queen or king; `MiddleReader.letters`): most decks draw a king
bearded and crowned, a queen with a flower, a jack young, and a small court's index
letter is easily read one off (a queen read as a king). It weighs a named court's corner
reading (`prefers_court`), and on video names a court left unnamed whose middle is a
picture (`rescues_court`); it is asked nothing of other cards, so it costs a frame only
where a court is named or a picture left unnamed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..engine.cards import CLASS_NAMES, COURT_CLASSES, RANKS, SUITS
from .detections import ModelError, onnx_session, to_blob, warp_quad

GROUPS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "court")
COURT = len(GROUPS) - 1
MID_W, MID_H = 48, 68                # reader input: the whole card (pixels)
# Blanked at each corner (share of the card's width / height): where indices sit. Wider
# (0.2 x 0.26) hid the corner pips of some decks' 4s and 10s.
BLANK_W, BLANK_H = 0.16, 0.22
BLANK_GREY = 128
OUTPUTS = len(GROUPS) + len(SUITS)   # the rank group's logits, then the suit's
LETTERS = ("J", "Q", "K")            # the court-letter network's classes
FIRST_COURT = len(RANKS) - len(LETTERS)   # rank index of the jack


def rank_group(rank: int) -> int:
    """The group of a rank index (RANKS order): its own for A-10, one for the courts."""
    return min(rank, COURT)


def blank_corners(crop: np.ndarray) -> np.ndarray:
    """The crop with its four corner windows filled with grey."""
    out = crop.copy()
    h, w = out.shape[:2]
    bw, bh = int(round(BLANK_W * w)), int(round(BLANK_H * h))
    for ys in (slice(0, bh), slice(h - bh, h)):
        for xs in (slice(0, bw), slice(w - bw, w)):
            out[ys, xs] = BLANK_GREY
    return out


def middle_crop(image: np.ndarray, card: np.ndarray) -> np.ndarray:
    """The card (corners TL, TR, BR, BL in image pixels) straightened to MID_H x MID_W,
    its corner indices blanked."""
    return blank_corners(warp_quad(image, np.asarray(card, np.float32), MID_W, MID_H))


def _checked_session(path: Path, threads: int, outputs: int, what: str):
    session = onnx_session(path, threads)
    inp, out = session.get_inputs()[0].shape, session.get_outputs()[0].shape
    if inp[2:] != [MID_H, MID_W] or len(out) != 2 or out[1] != outputs:
        raise ModelError(f"{path}: reads {inp[2:]} -> {out}, not a {what}'s "
                         f"[{MID_H}, {MID_W}] -> {outputs}")
    return session


class MiddleReader:
    """The middle reader through ONNX Runtime: middle crops -> (N, len(GROUPS) + 4)
    probabilities: the rank group's, then the suit's (SUITS order). `letters_path`: the
    court-letter network (`letters`), if any."""

    def __init__(self, path: str | Path, threads: int = 2,
                 letters_path: str | Path | None = None) -> None:
        self.path = Path(path)
        self.session = _checked_session(self.path, threads, OUTPUTS,
                                        "middle reader (rank groups and suits)")
        self.input = self.session.get_inputs()[0].name
        self.letters_session = None if letters_path is None else \
            _checked_session(Path(letters_path), threads, len(LETTERS), "court-letter reader")

    def __call__(self, crops: list[np.ndarray]) -> np.ndarray:
        if not crops:
            return np.zeros((0, OUTPUTS), np.float32)
        return probabilities(self.session.run(None, {self.input: to_blob(crops)})[0])

    @property
    def reads_letters(self) -> bool:
        return self.letters_session is not None

    def letters(self, crops: list[np.ndarray]) -> np.ndarray:
        """(N, 3) probabilities of each middle crop's court letter (LETTERS order)."""
        if not crops or self.letters_session is None:
            return np.zeros((len(crops), len(LETTERS)), np.float32)
        return softmax(self.letters_session.run(
            None, {self.letters_session.get_inputs()[0].name: to_blob(crops)})[0])


def softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise softmax of logits (N, K)."""
    e = np.exp(z - z.max(1, keepdims=True))
    return (e / e.sum(1, keepdims=True)).astype(np.float32)


def probabilities(logits: np.ndarray) -> np.ndarray:
    """Softmax of the rank-group logits and of the suit logits, each on its own."""
    out = np.empty_like(logits, dtype=np.float32)
    for part in (slice(0, len(GROUPS)), slice(len(GROUPS), OUTPUTS)):
        z = logits[:, part] - logits[:, part].max(1, keepdims=True)
        e = np.exp(z)
        out[:, part] = e / e.sum(1, keepdims=True)
    return out


def agrees(probs: np.ndarray, card_cls: int, veto: float, suit_veto: float,
           ace: float = 1.0) -> bool:
    """Whether a middle reading lets the corner reader's card stand. It does not when the
    middle counts pips (its likeliest group is 2-10) and gives the card's rank group less
    than `veto`, or sees pips (2-10 or an ace) and gives the card's suit less than
    `suit_veto`, or reads an ace at `ace` or more on a card named 2-10 (one large pip: an
    ace's middle; an index read as a 3 or a 6 under blur). Otherwise a middle that sees an
    ace or a picture is no veto on the rank (an art deck's middle is a picture whatever
    the card: on realdecks/valid those were its sure mistakes, and its art 3s, 4s and 7s
    read as aces at 0.5-0.76), and a picture none on the suit (a court's suit is printed
    by its index)."""
    groups, suits = probs[:len(GROUPS)], probs[len(GROUPS):]
    rank, suit = card_cls % len(RANKS), card_cls // len(RANKS)
    seen = int(groups.argmax())
    if 1 <= seen < COURT and float(groups[rank_group(rank)]) < veto:
        return False
    if 1 <= rank_group(rank) < COURT and float(groups[0]) >= ace:
        return False
    return seen == COURT or float(suits[suit]) >= suit_veto


def confirms(probs: np.ndarray, card_cls: int, confirm: float) -> bool:
    """Whether a middle reading is sure enough of a card the corner reader was unsure of:
    its pips (2-10 or an ace) read as that rank group and that suit, each with at least
    `confirm`. A court's middle cannot tell a jack from a king, so it confirms nothing."""
    groups, suits = probs[:len(GROUPS)], probs[len(GROUPS):]
    rank, suit = card_cls % len(RANKS), card_cls // len(RANKS)
    group = rank_group(rank)
    return group != COURT and float(groups[group]) >= confirm and float(suits[suit]) >= confirm


def _read_card(probs: np.ndarray) -> tuple[int, int, float]:
    """A middle reading's likeliest rank group, its card's class (that group and the
    likeliest suit; meaningless for a court) and the lesser of the two probabilities."""
    groups, suits = probs[:len(GROUPS)], probs[len(GROUPS):]
    group, suit = int(groups.argmax()), int(suits.argmax())
    return group, suit * len(RANKS) + group, min(float(groups[group]), float(suits[suit]))


def names(probs: np.ndarray, sure: float) -> tuple[int, float] | None:
    """The card a middle reading names by itself, where the corner reader names nothing:
    its pips counted (2-10) and their suit, each with at least `sure`; (the card's class,
    the lesser of the two), or None. An ace's or a court's middle names no card: an art
    deck draws its aces and courts, and some of its numbers, as pictures."""
    group, cls, p = _read_card(probs)
    return (cls, p) if 1 <= group < COURT and p >= sure else None


def rescues(probs: np.ndarray, corner: np.ndarray, sure: float, support: float,
            rank_support: float = float("inf")) -> tuple[int, float] | None:
    """The card a middle reading names where the corner reader, weighed with it, named
    none: its pips (an ace or 2-10; a picture names nothing) and their suit, each read at
    `sure` or more, and that card given at least `support` by the corners' pooled reading
    (`corner`: its 52 card probabilities, summed over both ends), or its rank, summed over
    the four suits, at least `rank_support`. (The card's class, the lesser of the middle's
    two probabilities) or None. A blurred index read as a 2c where clear pips say 2s: the
    corners saw a 2 and a black suit, the middle says which; or read surely as a 2s where
    the pips are plainly clubs: the corners saw the 2, the middle says the suit."""
    group, cls, p = _read_card(probs)
    if group == COURT or p < sure:
        return None
    rank = cls % len(RANKS)
    return (cls, p) if float(corner[cls]) >= support or \
        float(corner[rank:len(CLASS_NAMES):len(RANKS)].sum()) >= rank_support else None


def rescues_court(probs: np.ndarray, letters: np.ndarray, corner: np.ndarray, sure: float,
                  support: float) -> tuple[int, float] | None:
    """The court a middle reading names where the corner reader named none: the middle sees
    a picture (the court group) and the letter network reads its letter, each at `sure` or
    more; the suit is the one the corners' pooled reading (`corner`: 52 card
    probabilities, summed over both ends) gives that letter's court most, and it must give
    that court at least `support`. (The court's class, the lesser of the two middle
    probabilities) or None. An art court whose index the corner reader reads unsurely,
    where its picture plainly shows a king: the corners saw a red suit and a court."""
    groups = probs[:len(GROUPS)]
    letter = int(np.argmax(letters))
    p = min(float(groups[COURT]), float(letters[letter]))
    if int(groups.argmax()) != COURT or p < sure:
        return None
    courts = [s * len(RANKS) + FIRST_COURT + letter for s in range(len(SUITS))]
    cls = max(courts, key=lambda c: float(corner[c]))
    return (cls, p) if float(corner[cls]) >= support else None


def prefers(probs: np.ndarray, corner: np.ndarray, card_cls: int, suit_w: float,
            rank_w: float = 0.0) -> bool:
    """Whether a card stays the likeliest once the corner reader's pooled reading (its 52
    card probabilities) is weighed with the middle: each card's probability times the
    middle's probability of that card's suit to the power `suit_w`, where the middle sees
    pips (2-10 or an ace; a picture says nothing of the suit), and times its probability
    of the card's rank group to the power `rank_w`, where it counts pips (2-10: a middle
    that sees an ace or a picture says nothing of the rank, as in `agrees`). A card the
    corner reader chose over a close second that the middle's large pips favour is not
    kept (a blurred index's club read as a spade over clear club pips; an index read 9
    where the middle counts ten pips). Both weights 0: every card stands."""
    groups, suits = probs[:len(GROUPS)], probs[len(GROUPS):]
    seen = int(groups.argmax())
    if seen == COURT or not (suit_w or rank_w):
        return True
    weight = np.repeat(np.maximum(suits, 1e-6) ** suit_w, len(RANKS))    # suit-major classes
    if rank_w and seen >= 1:
        by_rank = np.array([groups[rank_group(r)] for r in range(len(RANKS))])
        weight = weight * np.tile(np.maximum(by_rank, 1e-6) ** rank_w, len(SUITS))
    return int(np.argmax(np.asarray(corner[:len(weight)]) * weight)) == card_cls


def prefers_court(letters: np.ndarray, corner: np.ndarray, card_cls: int, power: float) -> bool:
    """Whether a court the corner reader named stays the likeliest court once its pooled
    reading (`corner`: 52 card probabilities) of the twelve courts is weighed with the
    court-letter network's reading of its picture (`letters`, LETTERS order): each court's
    probability times its letter's probability to the power `power`. Only the courts are
    compared: the letter says which court a picture is, not whether it is one. A small
    queen whose index reads as a king, where the picture says queen, is not kept. True for
    any other card and at power 0."""
    if not power or card_cls not in COURT_CLASSES:
        return True
    weight = np.maximum(np.asarray(letters, np.float64), 1e-6) ** power
    courts = [s * len(RANKS) + FIRST_COURT + k for s in range(len(SUITS))
              for k in range(len(LETTERS))]
    weighed = [float(corner[c]) * weight[c % len(RANKS) - FIRST_COURT] for c in courts]
    return courts[int(np.argmax(weighed))] == card_cls
