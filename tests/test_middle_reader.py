"""The middle reader: a card's rank group from its middle (pips or a picture), and the
veto that makes a corner reading it contradicts "unclear" instead of a wrong card."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.detector.card_reader import CardReaderDetector, CornerReader, orientations
from companion.detector.middle_reader import (BLANK_GREY, COURT, GROUPS, LETTERS, MID_H,
                                              MID_W, OUTPUTS, MiddleReader, agrees,
                                              blank_corners, confirms, middle_crop, names,
                                              prefers, prefers_court, rank_group, rescues,
                                              rescues_court)
from companion.detector.detections import ModelError
from companion.detector.model import COURT_LETTERS, MIDDLE_READER, MODELS
from companion.engine.cards import CLASS_NAMES, RANKS, SUITS
from companion.render.faces import Deck, DeckStyle
from companion.render.scene import card_transform, warp_onto
from helpers import FixedFinder, SameCornerReader


def _placed(name: str, angle: float, style: int):
    face = Deck(DeckStyle.random(style)).face(CLASS_NAMES.index(name))
    canvas = np.full((600, 600, 3), (40, 70, 30), np.uint8)
    H = card_transform(face, (300, 300), 420, angle)
    warp_onto(canvas, face, H)
    fh, fw = face.image.shape[:2]
    quad = cv2.perspectiveTransform(np.float32([[[0, 0], [fw, 0], [fw, fh], [0, fh]]]), H)[0]
    return canvas, quad


def test_groups_are_the_ranks_with_the_courts_as_one():
    assert [GROUPS[rank_group(r)] for r in range(10)] == list(RANKS[:10])
    assert {rank_group(RANKS.index(r)) for r in "JQK"} == {COURT}


def test_corners_are_blanked_and_the_middle_kept():
    crop = np.random.default_rng(0).integers(0, 255, (MID_H, MID_W, 3), np.uint8)
    out = blank_corners(crop)
    for ys, xs in ((0, 0), (0, -1), (-1, 0), (-1, -1)):
        assert (out[ys, xs] == BLANK_GREY).all()
    assert (out[MID_H // 2, :] == crop[MID_H // 2, :]).all()      # the middle row untouched
    assert (out[:, MID_W // 2] == crop[:, MID_W // 2]).all()
    assert (crop != BLANK_GREY).any() and out is not crop


@pytest.mark.parametrize("angle", [0, 40, 125, 250])
def test_the_middle_is_straightened_whatever_the_cards_angle(angle):
    """The same card at any angle gives the same straightened middle; read from the other
    end it is the same middle half turned."""
    upright_canvas, upright_quad = _placed("7h", 0, 5)
    want = middle_crop(upright_canvas, orientations(upright_quad)[0])
    canvas, quad = _placed("7h", angle, 5)
    reads = orientations(quad)
    got = [middle_crop(canvas, r) for r in reads[:2]]
    diffs = [np.abs(g.astype(int) - want.astype(int)).mean() for g in got]
    half = [np.abs(np.rot90(g, 2).astype(int) - want.astype(int)).mean() for g in got]
    # One reading is the upright card, the other that card half turned.
    assert min(diffs) < 12 and min(half) < 12, (diffs, half)
    assert got[0].shape == (MID_H, MID_W, 3)


class FixedMiddle:
    """A middle reader that is sure of one rank group and one suit, and keeps what it was
    shown."""

    def __init__(self, group: int, suit: str) -> None:
        self.p = np.full(OUTPUTS, 0.001, np.float32)
        self.p[group] = self.p[len(GROUPS) + SUITS.index(suit)] = 0.99
        self.seen = []

    def __call__(self, crops):
        self.seen += crops
        return np.tile(self.p, (len(crops), 1))


def test_a_card_the_middle_contradicts_is_unclear_and_one_it_confirms_is_named():
    canvas, quad = _placed("5c", 20, 5)
    reader = CornerReader(MODELS / "corner_reader.onnx")

    def names(middle):
        det = CardReaderDetector(FixedFinder(quad), reader, middle=middle, veto=0.03, suit_veto=0.03)
        return set(det(canvas).names), det.cards(canvas)[0][1]

    assert set(CardReaderDetector(FixedFinder(quad), reader)(canvas).names) == {"5c"}
    six = FixedMiddle(rank_group(5), "c")              # six pips: not a 5
    assert names(six) == (set(), 0.0)
    assert six.seen and six.seen[0].shape == (MID_H, MID_W, 3)
    assert names(FixedMiddle(rank_group(4), "s"))[0] == set()      # spades: not clubs
    assert names(FixedMiddle(rank_group(4), "c"))[0] == {"5c"}
    # A picture or one large symbol is no veto on the rank: an art deck's middle.
    assert names(FixedMiddle(COURT, "c"))[0] == {"5c"}
    assert names(FixedMiddle(0, "c"))[0] == {"5c"}


def test_the_veto_rule():
    court = FixedMiddle(COURT, "d").p
    assert agrees(court, CLASS_NAMES.index("Qd"), 0.03, 0.03)
    assert agrees(court, CLASS_NAMES.index("6d"), 0.03, 0.03)       # a picture: no veto
    assert agrees(court, CLASS_NAMES.index("Qh"), 0.03, 0.03)       # not on the suit either
    two = FixedMiddle(rank_group(1), "s").p
    assert not agrees(two, CLASS_NAMES.index("Qs"), 0.03, 0.03)
    assert agrees(two, CLASS_NAMES.index("Qs"), 0.0, 0.03)          # no rank veto asked
    assert not agrees(two, CLASS_NAMES.index("2h"), 0.03, 0.03)     # pips: hearts are not spades
    assert agrees(two, CLASS_NAMES.index("2h"), 0.03, 0.0)          # no suit veto asked
    ace = FixedMiddle(0, "c").p
    assert agrees(ace, CLASS_NAMES.index("5c"), 0.03, 0.03)
    assert not agrees(ace, CLASS_NAMES.index("Ad"), 0.03, 0.03)


def test_a_number_card_whose_middle_is_surely_an_ace_is_refused():
    ace = FixedMiddle(0, "c").p                      # an ace read at 0.99
    assert not agrees(ace, CLASS_NAMES.index("3c"), 0.03, 0.01, ace=0.9)
    assert not agrees(ace, CLASS_NAMES.index("10c"), 0.03, 0.01, ace=0.9)
    assert agrees(ace, CLASS_NAMES.index("Ac"), 0.03, 0.01, ace=0.9)
    assert agrees(ace, CLASS_NAMES.index("Kc"), 0.03, 0.01, ace=0.9)     # a picture: no veto
    unsure = ace.copy()
    unsure[0], unsure[rank_group(2)] = 0.7, 0.29     # an art 3's middle, ace at 0.7
    assert agrees(unsure, CLASS_NAMES.index("3c"), 0.03, 0.01, ace=0.9)
    assert agrees(ace, CLASS_NAMES.index("3c"), 0.03, 0.01)                # off by default


@pytest.mark.skipif(not MIDDLE_READER.is_file(), reason="no shipped middle reader")
def test_the_shipped_middle_reader_counts_the_pips_of_a_deck_style_it_never_saw():
    """Style seeds 2-4 are not among the training styles (31000 onwards): a rendered
    card's middle, at an angle, names its rank group, and the suit of its pips."""
    middle = MiddleReader(MIDDLE_READER)
    right = total = 0
    for style in (2, 3, 4):
        for name in ("As", "2h", "3c", "4d", "5s", "6h", "7c", "8d", "9s", "10h", "Jc", "Kd"):
            canvas, quad = _placed(name, 30, style)
            p = middle([middle_crop(canvas, orientations(quad)[0])])[0]
            group = rank_group(RANKS.index(name[:-1]))
            right += int(p[:len(GROUPS)].argmax()) == group
            if group != COURT:          # a court's suit is printed by its index, blanked
                right += int(p[len(GROUPS):].argmax()) == SUITS.index(name[-1])
            total += 1 + (group != COURT)
    assert right >= total - 3, f"{right} of {total}"


def test_an_unsure_card_is_named_when_its_middle_reads_it_surely():
    canvas, quad = _placed("5c", 20, 5)

    def names(middle, confirm=0.9):
        reader = SameCornerReader("5c", 0.35, 0.3)     # under the photo threshold
        return set(CardReaderDetector(FixedFinder(quad), reader, conf=0.45, retry=(),
                                      middle=middle, veto=0.03, suit_veto=0.01,
                                      confirm=confirm, confirm_conf=0.25)(canvas).names)

    assert names(None) == set()
    assert names(FixedMiddle(rank_group(4), "c")) == {"5c"}
    assert names(FixedMiddle(rank_group(4), "c"), confirm=1.0) == set()   # confirmation off
    assert names(FixedMiddle(rank_group(5), "c")) == set()                # six pips
    assert names(FixedMiddle(rank_group(4), "h")) == set()                # hearts
    assert names(FixedMiddle(COURT, "c")) == set()       # a picture confirms no rank
    assert confirms(FixedMiddle(rank_group(4), "c").p, CLASS_NAMES.index("5c"), 0.9)
    assert not confirms(FixedMiddle(COURT, "c").p, CLASS_NAMES.index("Qc"), 0.9)


class ClutteredReader:
    """A corner reader sure which card it would be (the 5 of clubs) but unsure an index is
    there: "no index" 0.6, the 5c 0.3 (a corner crop cluttered by the card below)."""

    def __call__(self, crops):
        p = np.full((len(crops), len(CLASS_NAMES) + 1), 0.1 / 51, np.float32)
        p[:, CLASS_NAMES.index("5c")] = 0.3
        p[:, -1] = 0.6
        return p


@pytest.mark.parametrize("conf", [0.25, 0.45])      # the video and the photo threshold
def test_a_card_unsure_of_its_index_is_named_when_the_middle_confirms_it(conf):
    canvas, quad = _placed("5c", 20, 5)

    def read(middle):
        return CardReaderDetector(FixedFinder(quad), ClutteredReader(), conf=conf, retry=(),
                                  middle=middle, veto=0.03, suit_veto=0.01,
                                  confirm=0.8, confirm_conf=0.25)(canvas)

    assert len(read(None)) == 0                     # "no index" reads higher: nothing
    named = read(FixedMiddle(rank_group(4), "c"))
    assert set(named.names) == {"5c"}
    # Its confidence is the card's given that an index is there: 0.3 / (1 - 0.6).
    assert np.allclose(named.confidence, 0.75, atol=1e-3)
    assert len(read(FixedMiddle(rank_group(3), "c"))) == 0     # four pips: not named


class SureReader:
    """A corner reader that reads every crop as the 5 of clubs at 0.95."""

    def __call__(self, crops):
        p = np.full((len(crops), len(CLASS_NAMES) + 1), 0.05 / 52, np.float32)
        p[:, CLASS_NAMES.index("5c")] = 0.95
        return p


def test_a_sure_corner_reading_is_not_vetoed_by_the_middle():
    canvas, quad = _placed("5c", 20, 5)

    def names(veto_sure):
        return set(CardReaderDetector(FixedFinder(quad), SureReader(), retry=(),
                                      middle=FixedMiddle(rank_group(5), "c"), veto=0.03,
                                      suit_veto=0.01, veto_sure=veto_sure)(canvas).names)

    assert names(2.0) == set()          # six pips veto the 5c read at 0.95
    assert names(0.9) == {"5c"}         # a reading this sure stands
    assert names(0.96) == set()


class BlindReader:
    """A corner reader that sees no index anywhere ("no index" 0.9): a blurred or tiny
    index."""

    def __call__(self, crops):
        p = np.full((len(crops), len(CLASS_NAMES) + 1), 0.1 / 52, np.float32)
        p[:, -1] = 0.9
        return p


def test_a_card_whose_index_reads_nothing_is_named_by_its_pips_alone_only_where_sure():
    canvas, quad = _placed("5c", 20, 5)

    def read(middle, alone=0.8):
        return CardReaderDetector(FixedFinder(quad), BlindReader(), retry=(), middle=middle,
                                  veto=0.03, suit_veto=0.01, confirm=0.8, confirm_conf=0.25,
                                  alone=alone)(canvas)

    named = read(FixedMiddle(rank_group(4), "c"))
    assert set(named.names) == {"5c"}
    assert np.allclose(named.confidence, 0.99)
    # At both ends of the card, as the corner reader's detections are.
    assert len(named) == 2 and all(cv2.pointPolygonTest(quad.reshape(-1, 1, 2), (
        float((x1 + x2) / 2), float((y1 + y2) / 2)), False) >= 0 for x1, y1, x2, y2 in named.xyxy)
    assert len(read(FixedMiddle(rank_group(4), "c"), alone=1.0)) == 0   # the rule off
    assert len(read(FixedMiddle(rank_group(4), "c"), alone=0.995)) == 0  # not sure enough
    assert len(read(None)) == 0
    # An ace's or a court's middle names nothing: art decks draw those as pictures.
    assert len(read(FixedMiddle(0, "c"))) == 0
    assert len(read(FixedMiddle(COURT, "c"))) == 0
    assert names(FixedMiddle(rank_group(9), "h").p, 0.9) == (CLASS_NAMES.index("10h"),
                                                              pytest.approx(0.99))


class TornReader:
    """A corner reader torn between two cards of one rank: the 2 of spades at 0.5, the 2
    of clubs at 0.4 (a blurred index's small suit)."""

    def __call__(self, crops):
        p = np.full((len(crops), len(CLASS_NAMES) + 1), 0.05 / 51, np.float32)
        p[:, CLASS_NAMES.index("2s")] = 0.5
        p[:, CLASS_NAMES.index("2c")] = 0.4
        return p


def _middle(group: int, suits: dict[str, float]) -> FixedMiddle:
    m = FixedMiddle(group, "s")
    m.p[len(GROUPS):] = [suits.get(s, 0.0) for s in SUITS]
    return m


def test_a_close_call_the_middles_suit_turns_is_unclear():
    canvas, quad = _placed("2c", 20, 5)

    def names(middle, fuse=1.0):
        return set(CardReaderDetector(FixedFinder(quad), TornReader(), retry=(), middle=middle,
                                      veto=0.03, suit_veto=0.01, fuse=fuse)(canvas).names)

    clubs = _middle(rank_group(1), {"c": 0.7, "s": 0.3})     # the large pips look like clubs
    assert names(clubs, fuse=0.0) == {"2s"}                  # off: the corner's call stands
    assert names(clubs) == set()                             # 0.5 x 0.3 < 0.4 x 0.7: unclear
    assert names(_middle(rank_group(1), {"c": 0.55, "s": 0.45})) == {"2s"}   # not enough
    assert names(_middle(rank_group(1), {"s": 0.9, "c": 0.1})) == {"2s"}     # agreeing pips
    # A picture says nothing of the suit (a court's middle): the call stands.
    assert names(_middle(COURT, {"c": 0.9, "s": 0.1})) == {"2s"}


def test_the_suit_weighing_rule():
    corner = np.zeros(len(CLASS_NAMES), np.float32)
    corner[CLASS_NAMES.index("10s")], corner[CLASS_NAMES.index("10c")] = 0.6, 0.3
    spades, clubs = CLASS_NAMES.index("10s"), CLASS_NAMES.index("10c")
    pips = _middle(rank_group(9), {"c": 0.8, "s": 0.2}).p
    assert not prefers(pips, corner, spades, 1.0)            # 0.6 x 0.2 < 0.3 x 0.8
    assert prefers(pips, corner, spades, 0.0)                # weighing off
    assert prefers(pips, corner, spades, 0.3)                # weighed lightly it stands
    assert prefers(pips, corner, clubs, 1.0)
    assert prefers(_middle(COURT, {"c": 1.0}).p, corner, spades, 1.0)


def test_the_pip_count_weighs_in_where_the_middle_counts_pips():
    # An index read 9 over 10 of one suit (a blurred "9"), pips counted 10.
    corner = np.zeros(len(CLASS_NAMES), np.float32)
    nine, ten = CLASS_NAMES.index("9s"), CLASS_NAMES.index("10s")
    corner[nine], corner[ten] = 0.6, 0.3
    counted_ten = _middle(rank_group(9), {"s": 1.0}).p
    counted_ten[:len(GROUPS)] = 0.0
    counted_ten[rank_group(9)], counted_ten[rank_group(8)] = 0.8, 0.2
    assert prefers(counted_ten, corner, nine, 1.0)                # the suit alone: it stands
    assert not prefers(counted_ten, corner, nine, 1.0, 1.0)       # 0.6 x 0.2 < 0.3 x 0.8
    assert prefers(counted_ten, corner, ten, 1.0, 1.0)
    assert prefers(counted_ten, corner, nine, 1.0, 0.3)           # weighed lightly it stands
    # A middle that sees an ace or a picture says nothing of the rank.
    ace = counted_ten.copy()
    ace[:len(GROUPS)] = 0.0
    ace[0], ace[rank_group(9)] = 0.7, 0.3
    assert prefers(ace, corner, nine, 1.0, 1.0)
    # The rank weighed on its own, the suit's weight off.
    assert not prefers(counted_ten, corner, nine, 0.0, 1.0)


def test_a_card_the_middles_suit_turned_is_named_by_the_rescue_where_both_agree():
    # The corners are torn between 2s (0.5) and 2c (0.4); the middle counts two clubs.
    canvas, quad = _placed("2c", 20, 5)

    def named(middle, rescue):
        return set(CardReaderDetector(FixedFinder(quad), TornReader(), retry=(), middle=middle,
                                      veto=0.03, suit_veto=0.01, fuse=1.0,
                                      rescue=rescue)(canvas).names)

    sure_clubs = _middle(rank_group(1), {"c": 0.95, "s": 0.05})
    sure_clubs.p[:len(GROUPS)] = 0.0
    sure_clubs.p[rank_group(1)] = 0.95
    assert named(sure_clubs, None) == set()                  # off: the fuse leaves it unclear
    assert named(sure_clubs, (0.9, 0.3)) == {"2c"}           # the corners gave 2c 0.8 pooled
    assert named(sure_clubs, (0.96, 0.3)) == set()           # the middle not sure enough
    assert named(sure_clubs, (0.9, 0.85)) == set()           # the corners too unsure of 2c
    # A middle sure of a card the corners never read names nothing.
    hearts = _middle(rank_group(6), {"h": 0.99})
    hearts.p[:len(GROUPS)] = 0.0
    hearts.p[rank_group(6)] = 0.99
    assert named(hearts, (0.9, 0.3)) == set()


def test_the_rescue_rule():
    corner = np.zeros(len(CLASS_NAMES), np.float32)
    corner[CLASS_NAMES.index("Ac")], corner[CLASS_NAMES.index("As")] = 0.3, 1.2
    ace_clubs = _middle(0, {"c": 0.97, "s": 0.03}).p
    assert rescues(ace_clubs, corner, 0.9, 0.2) == (CLASS_NAMES.index("Ac"), pytest.approx(0.97))
    assert rescues(ace_clubs, corner, 0.9, 0.4) is None           # too little corner support
    assert rescues(ace_clubs, corner, 0.98, 0.2) is None          # the middle not sure enough
    # A picture names nothing (a court's middle cannot tell a jack from a king).
    assert rescues(_middle(COURT, {"c": 1.0}).p, corner, 0.5, 0.0) is None
    # The corners sure of the rank, not the suit: an ace read As (1.2) over clear club pips.
    corner[CLASS_NAMES.index("Ac")] = 0.0
    assert rescues(ace_clubs, corner, 0.9, 0.2) is None           # the card itself: no support
    assert rescues(ace_clubs, corner, 0.9, 0.2, 1.0) == (CLASS_NAMES.index("Ac"),
                                                         pytest.approx(0.97))
    assert rescues(ace_clubs, corner, 0.9, 0.2, 1.3) is None      # the rank too unsure
    assert rescues(_middle(1, {"c": 0.97}).p, corner, 0.9, 0.2, 1.0) is None  # a 2: no ace read


class CourtReader:
    """A corner reader torn between two courts: the king of diamonds at 0.5, the queen at
    0.35 (a small index's letter)."""

    def __call__(self, crops):
        p = np.full((len(crops), len(CLASS_NAMES) + 1), 0.15 / 51, np.float32)
        p[:, CLASS_NAMES.index("Kd")] = 0.5
        p[:, CLASS_NAMES.index("Qd")] = 0.35
        return p


class LetteredMiddle(FixedMiddle):
    """A middle that sees a court of diamonds and reads its letter with these
    probabilities; counts the crops its letters were asked of."""

    def __init__(self, letters: dict[str, float] | None) -> None:
        super().__init__(COURT, "d")
        self.reads_letters = letters is not None
        self.p_letters = np.float32([(letters or {}).get(k, 0.0) for k in LETTERS])
        self.asked = 0

    def letters(self, crops):
        self.asked += len(crops)
        return np.tile(self.p_letters, (len(crops), 1))


def test_the_court_letter_rule():
    corner = np.zeros(len(CLASS_NAMES), np.float32)
    corner[CLASS_NAMES.index("Kd")], corner[CLASS_NAMES.index("Qd")] = 0.9, 0.1
    corner[CLASS_NAMES.index("9d")] = 0.5
    king, queen = CLASS_NAMES.index("Kd"), CLASS_NAMES.index("Qd")
    says_queen = LetteredMiddle({"Q": 0.8, "K": 0.1, "J": 0.1}).p_letters
    assert prefers_court(says_queen, corner, king, 1.0)          # 0.9 x 0.1 > 0.1 x 0.8
    corner[queen] = 0.5
    assert not prefers_court(says_queen, corner, king, 1.0)      # 0.9 x 0.1 < 0.5 x 0.8
    assert prefers_court(says_queen, corner, king, 0.0)          # weighing off
    assert prefers_court(says_queen, corner, queen, 1.0)
    # Only courts are weighed: a number card stands.
    assert prefers_court(says_queen, corner, CLASS_NAMES.index("9d"), 1.0)


def test_a_court_whose_picture_says_another_letter_is_unclear():
    canvas, quad = _placed("Kd", 15, 5)

    def names(middle, court=1.0):
        return set(CardReaderDetector(FixedFinder(quad), CourtReader(), retry=(), middle=middle,
                                      veto=0.03, suit_veto=0.01, court=court)(canvas).names)

    queen = LetteredMiddle({"Q": 0.9, "K": 0.05, "J": 0.05})
    assert names(queen, court=0.0) == {"Kd"} and queen.asked == 0   # off: not even read
    assert names(queen) == set() and queen.asked                    # 0.5 x 0.05 < 0.35 x 0.9
    assert names(LetteredMiddle({"K": 0.9, "Q": 0.05, "J": 0.05})) == {"Kd"}
    assert names(LetteredMiddle({"Q": 0.55, "K": 0.45})) == {"Kd"}  # not enough to turn it
    assert names(LetteredMiddle(None)) == {"Kd"}                    # a middle without letters


def test_the_letters_are_read_only_for_a_named_court():
    canvas, quad = _placed("5c", 20, 5)
    middle = LetteredMiddle({"Q": 1.0})
    det = CardReaderDetector(FixedFinder(quad), CornerReader(MODELS / "corner_reader.onnx"),
                             middle=middle, veto=0.03, suit_veto=0.01, court=1.0)
    middle.p = FixedMiddle(rank_group(4), "c").p       # pips that agree with the 5c
    assert set(det(canvas).names) == {"5c"} and middle.asked == 0


class UnsureCourtReader:
    """A corner reader that rather doubts there is an index at all ("no index" 0.45), and
    would read the king of diamonds (0.3) over the king of hearts and the queen of
    diamonds: an art court's index."""

    def __call__(self, crops):
        p = np.full((len(crops), len(CLASS_NAMES) + 1), 0.05 / 49, np.float32)
        p[:, CLASS_NAMES.index("Kd")] = 0.3
        p[:, CLASS_NAMES.index("Kh")] = p[:, CLASS_NAMES.index("Qd")] = 0.1
        p[:, -1] = 0.45
        return p


def test_an_unread_court_is_named_by_its_picture_and_letter_where_the_corners_agree():
    canvas, quad = _placed("Kd", 15, 5)

    def names(middle, rescue=(0.9, 0.15)):
        return set(CardReaderDetector(FixedFinder(quad), UnsureCourtReader(), retry=(),
                                      middle=middle, veto=0.03, suit_veto=0.01, confirm=0.8,
                                      court_rescue=rescue)(canvas).names)

    king = {"K": 0.95, "Q": 0.03, "J": 0.02}
    assert names(LetteredMiddle(king), rescue=None) == set()      # off: "card unclear"
    assert names(LetteredMiddle(king)) == {"Kd"}                  # the corners' likeliest suit
    assert names(LetteredMiddle({"K": 0.8, "Q": 0.2})) == set()   # the letter not sure enough
    assert names(LetteredMiddle(king), rescue=(0.9, 0.65)) == set()   # the corners too unsure
    assert names(LetteredMiddle(None)) == set()                   # a middle without letters
    # Pips, not a picture: no court is named, and no letter is asked for.
    pips = LetteredMiddle(king)
    pips.p = FixedMiddle(rank_group(6), "d").p
    assert names(pips) == set() and pips.asked == 0


def test_the_court_rescue_rule():
    corner = np.zeros(len(CLASS_NAMES), np.float32)
    corner[CLASS_NAMES.index("Qh")], corner[CLASS_NAMES.index("Qs")] = 0.3, 0.1
    corner[CLASS_NAMES.index("Kd")] = 0.9
    picture = FixedMiddle(COURT, "d").p
    queen = np.float32([0.03, 0.95, 0.02])                        # J, Q, K
    assert rescues_court(picture, queen, corner, 0.9, 0.2) == \
        (CLASS_NAMES.index("Qh"), pytest.approx(0.95))            # the queen the corners favour
    assert rescues_court(picture, queen, corner, 0.9, 0.4) is None   # too little support
    assert rescues_court(picture, queen, corner, 0.96, 0.2) is None  # the letter not sure
    # A middle that counts pips names no court, whatever the letter network says.
    assert rescues_court(FixedMiddle(rank_group(8), "h").p, queen, corner, 0.5, 0.0) is None


def test_the_shipped_court_letters_leave_a_court_whose_picture_shows_no_letter_alone():
    # The renderer draws every court with the same random art (a face, a crown, shapes),
    # so its pictures say nothing of the letter: the network was taught even odds on
    # them, and a clear corner reading of such a court stands.
    if not COURT_LETTERS.is_file():
        pytest.skip("no court-letter network shipped")
    middle = MiddleReader(MIDDLE_READER, letters_path=COURT_LETTERS)
    assert middle.reads_letters
    sure = []
    for style in (4242, 4343, 4444):        # not among its training styles (31000-31059)
        for name in ("Js", "Qh", "Kd", "Jc", "Qs", "Kh"):
            canvas, quad = _placed(name, 10, style)
            letters = middle.letters([middle_crop(canvas, card)
                                      for card in orientations(quad)[:2]]).mean(0)
            cls = CLASS_NAMES.index(name)
            corner = np.zeros(len(CLASS_NAMES), np.float32)
            for k in range(len(LETTERS)):      # the named court read at 0.7, the others 0.15
                corner[cls - cls % 13 + 10 + k] = 0.15
            corner[cls] = 0.7
            assert prefers_court(letters, corner, cls, 1.0), (name, style, letters)
            sure.append(letters.max())
    assert np.mean(sure) < 0.6


def test_a_court_letter_file_of_the_wrong_shape_is_refused(tmp_path):
    with pytest.raises(ModelError, match="court-letter reader"):
        MiddleReader(MIDDLE_READER, letters_path=MIDDLE_READER)


def test_a_network_started_from_the_corner_reader_keeps_its_features_and_takes_new_outputs():
    torch = pytest.importorskip("torch")
    from companion.training.corner_reader import WIDTHS, build_model
    from companion.training.middle_reader import from_corner_reader
    corner = build_model(WIDTHS)
    corner.load_state_dict(torch.load(MODELS / "corner_reader.pt", map_location="cpu"))
    started = from_corner_reader(MODELS / "corner_reader.pt", OUTPUTS)
    x = torch.rand(2, 3, MID_H, MID_W)
    corner.eval(), started.eval()
    with torch.no_grad():
        assert torch.allclose(corner[:-1](x), started[:-1](x))
        assert started(x).shape == (2, OUTPUTS)
