"""The card-reader design's geometry and labels: readings of a box, upright corner crops,
oriented-box labels for the card finder."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest

from companion.detector.card_reader import (CORNER_H, CORNER_W, CROP_H, CROP_W,
                                            CardReaderDetector, corner_crop,
                                            orientations)
from companion.engine.cards import CLASS_NAMES
from companion.training.dataset import WHOLE, card_lines
from companion.render.faces import Deck, DeckStyle
from companion.render.scene import SceneRenderer, card_transform, warp_onto
from helpers import FixedFinder, SameCornerReader


def rect(cx, cy, w, h, angle):
    return cv2.boxPoints(((cx, cy), (w, h), angle))


@pytest.mark.parametrize("angle", [0, 17, 90, 133, 180, 251, 300])
@pytest.mark.parametrize("reverse", [False, True])
def test_readings_are_clockwise_portrait_first(angle, reverse):
    pts = rect(200, 150, 63, 88, angle)
    if reverse:
        pts = pts[::-1]
    reads = orientations(pts)
    assert len(reads) == 4
    for k, card in enumerate(reads):
        top = np.linalg.norm(card[1] - card[0])
        side = np.linalg.norm(card[2] - card[1])
        assert (top < side) == (k < 2)            # portrait readings first
        e1, e2 = card[1] - card[0], card[2] - card[1]
        assert e1[0] * e2[1] - e1[1] * e2[0] > 0  # clockwise on screen
        assert {tuple(p) for p in np.round(card, 3)} == {tuple(p) for p in np.round(pts, 3)}
    # The two portrait readings are the same card half turned.
    assert np.allclose(reads[1], np.roll(reads[0], 2, axis=0))


def _diff(a, b) -> float:
    """Mean difference after a light blur: a pixel of placement error is not a wrong crop."""
    blur = lambda x: cv2.GaussianBlur(x.astype(np.float32), (0, 0), 1.5)
    return float(np.abs(blur(a) - blur(b)).mean())


def _placed_card(name: str, angle: float, style: int = 5):
    deck = Deck(DeckStyle.random(style))
    face = deck.face(CLASS_NAMES.index(name))
    canvas = np.full((600, 600, 3), (40, 70, 30), np.uint8)
    H = card_transform(face, (300, 300), 420, angle)
    warp_onto(canvas, face, H)
    fh, fw = face.image.shape[:2]
    quad = cv2.perspectiveTransform(np.float32([[[0, 0], [fw, 0], [fw, fh], [0, fh]]]), H)[0]
    return face, canvas, quad


@pytest.mark.parametrize("angle", [0, 35, 90, 180, 260])
def test_corner_crop_is_the_upright_index_whatever_the_angle(angle):
    """Whichever way the card lies, one portrait reading crops exactly the face's printed
    top-left corner, upright; the other crops its bottom-right corner turned upright."""
    face, canvas, quad = _placed_card("7s", angle)
    fh, fw = face.image.shape[:2]
    a = face.alpha[..., None].astype(float) / 255          # the table shows past the round corners
    flat = (face.image * a + np.float64([40, 70, 30]) * (1 - a)).astype(np.uint8)
    want = cv2.resize(flat[:int(CORNER_H * fh), :int(CORNER_W * fw)], (CROP_W, CROP_H),
                      interpolation=cv2.INTER_AREA)
    reads = orientations(quad)
    scores = []
    for card in reads:
        crop, region = corner_crop(canvas, card)
        assert crop.shape == (CROP_H, CROP_W, 3)
        assert region.shape == (4, 2)
        scores.append(_diff(crop, want))
    # The upright top-left matches the face (a few levels of resampling difference); the
    # sideways readings do not.
    assert min(scores[:2]) < 12
    assert min(scores[2:]) > 2 * min(scores[:2])
    bottom_right = cv2.rotate(flat[fh - int(CORNER_H * fh):, fw - int(CORNER_W * fw):],
                              cv2.ROTATE_180)
    want_br = cv2.resize(bottom_right, (CROP_W, CROP_H), interpolation=cv2.INTER_AREA)
    other = int(np.argmax(scores[:2]))
    crop, _ = corner_crop(canvas, reads[other])
    assert _diff(crop, want_br) < 12


def test_a_large_photo_is_shrunk_before_the_crop():
    """A phone photo's card is several times the crop: the crop must average, not alias."""
    face, canvas, quad = _placed_card("10h", 0)
    big = cv2.resize(canvas, None, fx=4, fy=4, interpolation=cv2.INTER_CUBIC)
    small_crop, _ = corner_crop(canvas, orientations(quad)[0])
    big_crop, _ = corner_crop(big, orientations(quad * 4)[0])
    assert float(np.abs(small_crop.astype(float) - big_crop).mean()) < 10


def test_card_finder_labels_only_whole_face_up_cards():
    r = SceneRenderer(256, seed=3)
    seen = 0
    for i in range(40):
        scene = r.render(i)
        lines = card_lines(scene, 256)
        whole = [c for c in scene.cards if not c.back and c.visible >= WHOLE]
        assert len(lines) == len(whole)
        for line, c in zip(lines, whole):
            vals = [float(v) for v in line.split()]
            assert vals[0] == 0 and len(vals) == 9
            assert all(0 <= v <= 1 for v in vals[1:])
            assert np.allclose(np.float32(vals[1:]).reshape(4, 2) * 256,
                               np.clip(c.quad, 0, 256), atol=0.01)
        # A pile's top card is the first listed, and only it (or loose cards) can be whole.
        if len(scene.pile) >= 2 and scene.cards and scene.cards[0].visible >= WHOLE:
            seen += 1
            assert scene.cards[0].cls == scene.pile[-1] or scene.cards[0].cls is None
    assert seen > 0


@pytest.mark.parametrize("angle,turn,grow,shift", [(0, 7, 1.06, (8, -5)), (33, -6, 0.95, (-6, 4)),
                                                   (95, 4, 1.08, (0, 9)), (200, -8, 1.0, (5, 5))])
def test_a_box_a_few_degrees_off_snaps_onto_the_card(angle, turn, grow, shift):
    from companion.detector.card_reader import refine_quad
    _, canvas, quad = _placed_card("Kd", angle)
    c = quad.mean(0)
    a = np.deg2rad(turn)
    R = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    off = ((quad - c) * grow) @ R.T + c + np.float32(shift)
    before = np.linalg.norm(off - quad, axis=1).max()
    snapped = refine_quad(canvas, off)
    after = np.linalg.norm(snapped - quad, axis=1).max()
    assert before > 12 and after < 4, (before, after)


def test_snapping_keeps_the_box_where_there_is_no_edge():
    from companion.detector.card_reader import refine_quad
    flat = np.full((400, 400, 3), 128, np.uint8)
    box = rect(200, 200, 120, 170, 20)
    assert np.allclose(refine_quad(flat, box), box)


def test_a_look_from_another_angle_maps_the_outline_back():
    from companion.detector.card_reader import CardReaderDetector

    class WhiteFinder:               # finds the one white rectangle, whatever the picture
        imgsz = 256

        def __call__(self, img, conf=None):
            m = (img[..., 0] > 200).astype(np.uint8)
            cs, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            q = cv2.boxPoints(cv2.minAreaRect(max(cs, key=cv2.contourArea)))
            return np.float32([q]), np.float32([0.9])

    img = np.zeros((300, 500, 3), np.uint8)
    box = rect(320, 140, 60, 90, 12)
    cv2.fillConvexPoly(img, np.round(box).astype(np.int32), (255, 255, 255))
    det = CardReaderDetector(WhiteFinder(), reader=None)
    for ang in (30, 60, -45):
        back = det._turned(img, ang)[0]
        d = np.linalg.norm(back[:, None] - box[None], axis=2).min(1)
        assert d.max() < 2.5, (ang, d)


@pytest.mark.parametrize("card,angle,style,off", [("8h", 40, 9, 22), ("Kd", 20, 5, -22),
                                                   ("5c", 70, 3, 23)])
def test_a_box_too_far_off_to_snap_is_turned_and_read_again(card, angle, style, off):
    """The finder's angle is sometimes well over 10 degrees off: snapping cannot turn that
    far and the crops show the index at one end at best; the turned retries read both."""
    from companion.detector.card_reader import CardReaderDetector, CornerReader, turn_quad
    from companion.detector.model import MODELS
    _, canvas, quad = _placed_card(card, angle, style=style)

    finder = FixedFinder(turn_quad(quad, off))
    reader = CornerReader(MODELS / "corner_reader.onnx")
    plain = CardReaderDetector(finder, reader, looks=("found", "snapped"), retry=())
    assert len(plain(canvas)) <= 1
    det = CardReaderDetector(finder, reader, looks=("found", "snapped"))
    found = det(canvas)
    assert len(found) == 2 and set(found.names) == {card}


@pytest.mark.parametrize("style,off", [(3, -24), (5, 14), (5, 20)])
def test_a_box_that_reads_one_end_only_is_turned_and_read_again(style, off):
    """A box between the top card and the pile (the finder's angle 14-24 degrees off)
    reads one end only, the top card or the card below; the turned retries read the top
    card at both."""
    from companion.detector.card_reader import CardReaderDetector, CornerReader, turn_quad
    from companion.detector.model import MODELS
    deck = Deck(DeckStyle.random(style))
    canvas = np.full((600, 600, 3), (40, 70, 30), np.uint8)
    for name, ang, centre in (("7d", 0, (260, 250)), ("7h", -20, (300, 300))):
        face = deck.face(CLASS_NAMES.index(name))
        H = card_transform(face, centre, 420, ang)
        warp_onto(canvas, face, H)
    fh, fw = face.image.shape[:2]
    quad = cv2.perspectiveTransform(np.float32([[[0, 0], [fw, 0], [fw, fh], [0, fh]]]), H)[0]
    box = turn_quad(quad, off)

    finder = FixedFinder(box)
    reader = CornerReader(MODELS / "corner_reader.onnx")
    plain = CardReaderDetector(finder, reader, looks=("found", "snapped"), retry=())
    assert len(plain(canvas)) == 1
    found = CardReaderDetector(finder, reader, looks=("found", "snapped"))(canvas)
    assert len(found) == 2 and set(found.names) == {"7h"}


def _dark_card(card: str, style: int):
    """A card of black paper (its ink kept) on a grey table, and its true outline."""
    face = Deck(DeckStyle.random(style)).face(CLASS_NAMES.index(card))
    img = face.image.copy()
    img[img.min(2) > 180] = (25, 25, 25)                 # black paper, the red ink kept
    canvas = np.full((600, 600, 3), (120, 120, 120), np.uint8)
    H = card_transform(face, (300, 300), 420, 10)
    warp_onto(canvas, dataclasses.replace(face, image=img), H)
    fh, fw = img.shape[:2]
    return canvas, cv2.perspectiveTransform(np.float32([[[0, 0], [fw, 0], [fw, fh], [0, fh]]]),
                                            H)[0]


@pytest.mark.parametrize("card,style", [("Kh", 5), ("Kh", 9), ("4d", 5)])
def test_snapping_finds_a_dark_cards_edges(card, style):
    """Snapping seeks where the picture steps from the card to the ground round it. A dark
    card on a paler ground steps the other way (dark inside, brighter outside): seeking a
    bright card, snapping pulled its sides onto the card's inner frame, and video, which
    averages the found and the snapped look, read no card (session 51: dark faces in the
    valid-face films). Now a box a little off snaps onto the card's own edges, and the
    video detector names the card from both ends."""
    from companion.detector.card_reader import refine_quad, scale_quad, turn_quad
    from companion.detector.model import load_detector
    canvas, quad = _dark_card(card, style)
    off = scale_quad(turn_quad(quad, 4.0), 1.05)
    assert np.linalg.norm(off - quad, axis=1).max() > 15
    assert np.linalg.norm(refine_quad(canvas, off) - quad, axis=1).max() < 5
    live = load_detector()
    live.finder = FixedFinder(off)
    assert list(live(canvas).names) == [card, card]


def test_photos_keep_the_better_of_the_found_and_the_snapped_look(monkeypatch):
    """A snap can still land on a wrong edge (a court's frame, the card below): photos read
    the found and the snapped box as outlines of their own and keep the better reading, so
    both ends name the card from the found box."""
    from companion.detector import card_reader
    from companion.detector.card_reader import CardReaderDetector, CornerReader, scale_quad
    from companion.detector.model import MODELS
    canvas, quad = _dark_card("Kh", 5)
    monkeypatch.setattr(card_reader, "refine_quad", lambda image, q: scale_quad(q, 0.7))
    finder = FixedFinder(quad)
    reader = CornerReader(MODELS / "corner_reader.onnx")
    snapped = CardReaderDetector(finder, reader, conf=0.45, looks=("snapped",))
    assert "Kh" not in snapped(canvas).names
    both = CardReaderDetector(finder, reader, conf=0.45, looks=("found", "snapped"),
                              pool_looks=False)
    assert list(both(canvas).names) == ["Kh", "Kh"]
    outline = both.cards(canvas)[0][0]
    assert np.abs(outline - quad).max() < 1e-3          # the outline read is the found one


@pytest.mark.parametrize("card,angle,style", [("Jd", 25, 5), ("Kc", 110, 9), ("6h", 200, 3)])
def test_photos_read_a_card_whose_box_sits_on_its_inner_frame(card, angle, style):
    """On webcam photos the finder can box a card's inner frame (a court's border, a frame
    of pips), whose corners hold no index: photos also read the finder's best boxes grown
    and snapped onto the card's edges, and name the card from both ends."""
    from companion.detector.card_reader import CardReaderDetector, CornerReader, scale_quad
    from companion.detector.model import MODELS, PHOTO_GROW
    _, canvas, quad = _placed_card(card, angle, style=style)
    finder = FixedFinder(scale_quad(quad, 0.7))
    reader = CornerReader(MODELS / "corner_reader.onnx")
    plain = CardReaderDetector(finder, reader, conf=0.45, looks=("found", "snapped"),
                               pool_looks=False)
    assert card not in plain(canvas).names
    det = CardReaderDetector(finder, reader, conf=0.45, looks=("found", "snapped"),
                             pool_looks=False, grow=PHOTO_GROW)
    assert list(det(canvas).names) == [card, card]
    outline = det.cards(canvas)[0][0]
    d = np.linalg.norm(outline[:, None] - quad[None], axis=2).min(1)
    assert d.max() < 5, d


@pytest.mark.parametrize("card,angle,style", [("7c", 30, 5), ("Qh", 100, 9), ("4d", 200, 3)])
def test_photos_look_again_with_the_light_evened_out_where_nothing_reads(card, angle, style):
    """A dark card on a dark table: evening the picture's light out makes the card stand
    out from the table more, and where no outline names a card, photos ask the finder
    again on that picture; its box is read on the picture as taken."""
    from companion.detector.card_reader import CardReaderDetector, CornerReader, even_light
    from companion.detector.model import MODELS
    _, canvas, quad = _placed_card(card, angle, style=style)
    dim = (canvas * 0.45).astype(np.uint8)
    inside = np.zeros(dim.shape[:2], bool)
    cv2.fillConvexPoly(inside.view(np.uint8), np.round(quad).astype(np.int32), 1)

    def stands_out(img):             # the card's lightness above the table's
        L = cv2.cvtColor(img, cv2.COLOR_BGR2LAB)[..., 0].astype(float)
        return L[inside].mean() - L[~inside].mean()

    plain, evened = stands_out(dim), stands_out(even_light(dim))
    assert evened > plain + 3, (plain, evened)
    seen = []

    class ContrastFinder:            # finds the card only where it stands out enough
        imgsz = 256

        def __call__(self, img, conf=None):
            seen.append(img.shape)
            if img.shape == dim.shape and stands_out(img) > (plain + evened) / 2:
                return np.float32([quad]), np.float32([0.9])
            return np.zeros((0, 4, 2), np.float32), np.zeros(0, np.float32)

    reader = CornerReader(MODELS / "corner_reader.onnx")
    args = dict(conf=0.45, looks=("found", "snapped"), pool_looks=False)
    assert len(CardReaderDetector(ContrastFinder(), reader, **args)(dim)) == 0
    assert len(seen) == 1
    found = CardReaderDetector(ContrastFinder(), reader, even_light=True, **args)(dim)
    assert list(found.names) == [card, card]


@pytest.mark.parametrize("card,angle", [("5c", 80), ("Jd", 200)])
def test_video_looks_again_with_a_border_where_nothing_reads(card, angle):
    """The finder can box a card badly at one scale, across its middle, frame after frame
    (no-pad game 2256's 5c); where no outline names a card, video asks it again on the
    picture with a border round it, and reads its boxes there on the picture as taken."""
    from companion.detector.card_reader import CardReaderDetector, CornerReader, scale_quad
    from companion.detector.model import LIVE_WIDER, MODELS
    _, canvas, quad = _placed_card(card, angle)
    seen = []

    class ScaleFinder:               # boxes the card's middle unless the picture is wider
        imgsz = 256

        def __call__(self, img, conf=None):
            seen.append(img.shape[:2])
            if img.shape == canvas.shape:
                return np.float32([scale_quad(quad, 0.5)]), np.float32([0.9])
            b = (img.shape[0] - canvas.shape[0]) / 2
            return np.float32([quad + b]), np.float32([0.9])

    reader = CornerReader(MODELS / "corner_reader.onnx")
    args = dict(conf=0.25, looks=("found", "snapped"), retry=())
    assert len(CardReaderDetector(ScaleFinder(), reader, **args)(canvas)) == 0
    assert seen == [canvas.shape[:2]]
    found = CardReaderDetector(ScaleFinder(), reader, wider=LIVE_WIDER, **args)(canvas)
    assert set(found.names) == {card}
    assert seen[-1] == tuple(s + 2 * round(LIVE_WIDER * 600) for s in canvas.shape[:2])
    outline = found.outline[0]
    assert np.abs(outline - quad).max() < 1.0


class _TwoOutlines:
    """A finder that finds one card twice: its outline, and the same a few pixels over."""
    imgsz = 256

    def __init__(self, quad: np.ndarray) -> None:
        self.quads = np.float32([quad, quad + 6])

    def __call__(self, img, conf=None):
        return self.quads, np.float32([0.9, 0.8])


class _SplitReader:
    """Reads the first outline's crops as the 5 of clubs at 0.9, the second's as
    `second` at `p` (both crops of an outline come in one call, outline by outline)."""

    def __init__(self, second: str, p: float) -> None:
        self.second, self.p = second, p

    def __call__(self, crops):
        out = np.full((len(crops), len(CLASS_NAMES) + 1), 0.01 / 52, np.float32)
        half = len(crops) // 2
        out[:half, CLASS_NAMES.index("5c")] = 0.9
        out[half:, CLASS_NAMES.index(self.second)] = self.p
        return out


@pytest.mark.parametrize("second, p, disagree, want", [
    ("6c", 0.88, 0.0, {"5c"}),       # off: the best outline wins
    ("6c", 0.88, 0.95, set()),       # two outlines, nearly as sure, two cards: unclear
    ("6c", 0.6, 0.95, {"5c"}),       # the other outline much less sure: the best stands
    ("5c", 0.88, 0.95, {"5c"}),      # outlines that agree
])
def test_a_card_whose_outlines_name_two_cards_is_unclear(second, p, disagree, want):
    quad = np.float32([[200, 150], [400, 150], [400, 430], [200, 430]])
    canvas = np.full((600, 600, 3), 90, np.uint8)
    det = CardReaderDetector(_TwoOutlines(quad), _SplitReader(second, p), conf=0.45, retry=(),
                             disagree=disagree)
    assert set(det(canvas).names) == want


class FaintFinder:
    """A card finder that boxes each given outline at its given confidence, and answers
    only those at or above the threshold it is asked for (its own, 0.15, by default)."""
    imgsz = 256
    conf = 0.15

    def __init__(self, *boxes: tuple[np.ndarray, float]) -> None:
        self.boxes = sorted(boxes, key=lambda b: -b[1])

    def __call__(self, img, conf=None):
        kept = [(q, s) for q, s in self.boxes if s >= (self.conf if conf is None else conf)]
        return (np.float32([q for q, _ in kept]).reshape(-1, 4, 2),
                np.float32([s for _, s in kept]))


def _two_cards():
    """A 5c and a 9h side by side on a cloth, and their outlines."""
    deck = Deck(DeckStyle.random(5))
    canvas = np.full((500, 800, 3), (40, 70, 30), np.uint8)
    quads = []
    for name, centre in (("5c", (220, 250)), ("9h", (580, 250))):
        face = deck.face(CLASS_NAMES.index(name))
        H = card_transform(face, centre, 330, 10)
        warp_onto(canvas, face, H)
        fh, fw = face.image.shape[:2]
        quads.append(cv2.perspectiveTransform(
            np.float32([[[0, 0], [fw, 0], [fw, fh], [0, fh]]]), H)[0])
    return canvas, quads


def test_a_faintly_boxed_card_is_read_only_where_no_other_outline_names_one():
    from companion.detector.card_reader import CornerReader
    from companion.detector.model import CORNER_READER
    reader = CornerReader(CORNER_READER)
    canvas, (five, nine) = _two_cards()

    def names(*boxes, faint=0.0, wider=0.0):
        return set(CardReaderDetector(FaintFinder(*boxes), reader, retry=(), faint=faint,
                                      wider=wider)(canvas).names)

    assert names((five, 0.08)) == set()                        # under the finder's threshold
    assert names((five, 0.08), faint=0.05) == {"5c"}           # a faint box, read last
    assert names((five, 0.08), faint=0.1) == set()             # ...not that faint
    assert names((five, 0.08), faint=0.05, wider=0.15) == {"5c"}   # after the wider look
    # Where a surely boxed card names itself, a faint box is not read at all.
    assert names((nine, 0.9), (five, 0.08), faint=0.05) == {"9h"}
    assert names((nine, 0.9), (five, 0.2)) == {"9h", "5c"}     # both boxed surely: both read


def test_a_faint_box_names_a_card_only_surely():
    canvas, (five, _) = _two_cards()

    def names(score, wider=0.0):
        reader = SameCornerReader("5c", 0.5, 0.1)          # the 5c at 0.5 in any corner
        return set(CardReaderDetector(FaintFinder((five, score)), reader, retry=(),
                                      faint=0.05, wider=wider)(canvas).names)

    assert names(0.2) == {"5c"}                   # boxed surely: 0.5 names it
    assert names(0.08) == set()                   # boxed faintly: 0.5 is not sure enough
    assert names(0.08, wider=0.15) == set()       # nor on the wider look
