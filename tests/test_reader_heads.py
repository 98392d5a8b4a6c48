"""The corner reader decides "is there an index here" apart from "which card", and the
harvest of real card images cuts the corners the reader is trained on."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.detector.card_reader import (HEADS, NONE_CLASS, CornerReader, card_probabilities,
                                            corner_crop, orientations)
from companion.detector.model import CORNER_READER, load_detector
from companion.engine.cards import CLASS_NAMES
from companion.render.faces import Deck, DeckStyle
from companion.render.scene import card_transform, warp_onto


def heads(index: float, rank: int, suit: int, colour: int, sure: float = 8.0) -> np.ndarray:
    h = np.zeros(sum(HEADS), np.float32)
    h[0] = index
    h[1 + rank] = sure
    h[1 + HEADS[1] + suit] = sure
    h[1 + HEADS[1] + HEADS[2] + colour] = sure
    return h


def test_card_probabilities_combine_the_heads():
    p = card_probabilities(np.stack([
        heads(6, 6, 0, 0),        # a sure 7 of spades, black ink: 7s
        heads(6, 6, 0, 1),        # spade shape, red ink: the cues disagree
        heads(-6, 6, 0, 0),       # no index here, whatever the other heads say
        heads(6, 6, 1, 0, sure=0.0),   # an index, but rank and suit unsure
    ]))
    assert p.shape == (4, NONE_CLASS + 1)
    assert np.allclose(p.sum(1)[[0, 2]], 1, atol=0.02)
    assert CLASS_NAMES[int(p[0].argmax())] == "7s" and p[0].max() > 0.9
    assert p[1, :NONE_CLASS].max() < 0.1 and p[1, NONE_CLASS] < 0.1       # unclear, not "none"
    assert p[2].argmax() == NONE_CLASS
    assert p[3, :NONE_CLASS].max() < 0.1 and p[3, NONE_CLASS] < 0.1


def _card_on_table(name: str, style: int, angle: float = 12.0):
    deck = Deck(DeckStyle.random(style))
    canvas = np.full((480, 640, 3), (70, 80, 90), np.uint8)
    face = deck.face(CLASS_NAMES.index(name))
    H = card_transform(face, (320, 240), 400, angle)
    warp_onto(canvas, face, H)
    fh, fw = face.image.shape[:2]
    quad = cv2.perspectiveTransform(np.float32([[[0, 0], [fw, 0], [fw, fh], [0, fh]]]), H)[0]
    return canvas, quad


@pytest.mark.parametrize("card", ["Qh", "7c", "10s", "Ad", "3h"])
def test_shipped_reader_reads_a_rendered_style_it_was_not_trained_on(card):
    """Style seeds over 10**8 never come up in training (scenes draw theirs below 2**31
    from seeded generators, films take seed * 7919 + 11 for small seeds): a new
    combination of font, index size, place and ink."""
    canvas, _ = _card_on_table(card, style=987_654_321)
    det = load_detector(photo=True)
    names = det(canvas).names
    assert names and set(names) == {card}


def test_a_blank_card_corner_reads_no_index():
    reader = CornerReader(CORNER_READER)
    blank = np.full((300, 220, 3), 235, np.uint8)
    quad = np.float32([[10, 10], [210, 10], [210, 290], [10, 290]])
    crops = [corner_crop(blank, q)[0] for q in orientations(quad)]
    p = reader(crops)
    assert (p.argmax(1) == NONE_CLASS).all()


def test_harvest_cuts_the_index_corner_of_a_known_image(tmp_path):
    """A realdecks-like image (the card filling a square frame, stretched): the harvest
    straightens it back, and the corner crop it gives the reader is the face's printed
    top-left corner; a face whose top index is blanked out is flagged."""
    from companion.detector.card_reader import CORNER_H, CORNER_W, CROP_H, CROP_W
    from companion.training import harvest
    deck = Deck(DeckStyle.random(77))
    face = deck.face(CLASS_NAMES.index("8d")).image
    root = tmp_path / "decks"
    (root / "train" / "8d").mkdir(parents=True)
    cv2.imwrite(str(root / "train" / "8d" / "001.png"), cv2.resize(face, (224, 224)))
    blanked = face.copy()
    blanked[: face.shape[0] // 2] = np.median(face.reshape(-1, 3), 0)   # top half: plain paper
    cv2.imwrite(str(root / "train" / "8d" / "002.png"), cv2.resize(blanked, (224, 224)))
    (root / "labels.csv").write_text("file,split,card\ntrain/8d/001.png,train,8d\n"
                                     "train/8d/002.png,train,8d\n")
    out = tmp_path / "h.npz"
    stats = harvest.harvest(root, ["train"], out, finder_path=None)
    assert stats["cards"] == 2
    d = np.load(out)
    assert list(d["y"]) == [CLASS_NAMES.index("8d")] * 2
    assert d["ends"].tolist() == [[True, True], [False, True]]
    crop, _ = corner_crop(d["cards"][0], harvest.card_rect())
    fh, fw = face.shape[:2]
    want = cv2.resize(face[:int(CORNER_H * fh), :int(CORNER_W * fw)], (CROP_W, CROP_H),
                      interpolation=cv2.INTER_AREA)
    blur = lambda x: cv2.GaussianBlur(x.astype(np.float32), (0, 0), 1.5)
    assert float(np.abs(blur(crop) - blur(want)).mean()) < 14
    # And a crop of the other end is not that corner shifted: the bottom-right index.
    other, _ = corner_crop(d["cards"][0], np.roll(harvest.card_rect(), -2, axis=0))
    br = cv2.rotate(face[fh - int(CORNER_H * fh):, fw - int(CORNER_W * fw):], cv2.ROTATE_180)
    want_br = cv2.resize(br, (CROP_W, CROP_H), interpolation=cv2.INTER_AREA)
    assert float(np.abs(blur(other) - blur(want_br)).mean()) < 14


def test_harvest_leaves_out_an_end_the_reader_sees_no_index_in(tmp_path):
    """A corner that holds ink but no index (here the card's own pips, as an outline that
    is not the card cuts them) is left out of training when a reader cleans the harvest;
    the ends that show the index stay, and without a reader every inked end stays."""
    from companion.training import harvest
    deck = Deck(DeckStyle.random(77))
    face = deck.face(CLASS_NAMES.index("8d")).image
    h, w = face.shape[:2]
    pips = face.copy()
    pips[:h // 2] = cv2.resize(face[h // 4:3 * h // 4, w // 4:3 * w // 4], (w, h // 2))
    root = tmp_path / "decks"
    (root / "train" / "8d").mkdir(parents=True)
    for name, im in (("001", face), ("002", pips)):
        cv2.imwrite(str(root / "train" / "8d" / f"{name}.png"), cv2.resize(im, (224, 224)))
    (root / "labels.csv").write_text("file,split,card\ntrain/8d/001.png,train,8d\n"
                                     "train/8d/002.png,train,8d\n")
    out = tmp_path / "h.npz"
    assert harvest.harvest(root, ["train"], out, finder_path=None)["ends left out"] == 0
    assert np.load(out)["ends"].tolist() == [[True, True], [True, True]]
    stats = harvest.harvest(root, ["train"], out, finder_path=None, reader_path=CORNER_READER)
    assert stats["ends left out"] == 1
    assert np.load(out)["ends"].tolist() == [[True, True], [False, True]]


def test_a_card_on_a_plain_table_is_outlined_without_the_finder():
    """What stands out from a plain table is a card's outline, at its true angle, whatever
    its design; a busy table gives no outline rather than a wrong one."""
    from companion.detector.card_reader import _rotated_iou, table_outlines
    canvas, quad = _card_on_table("9c", style=31, angle=23.0)
    found = table_outlines(canvas)
    assert len(found) == 1
    assert _rotated_iou(found[0], quad) > 0.9
    busy = np.random.default_rng(3).integers(0, 255, canvas.shape, dtype=np.uint8)
    assert table_outlines(busy) == []


def test_webcam_shots_label_each_corner_crop_by_the_end_it_shows():
    """The reader's webcam training crops: a card photographed small by `webcam_shot`, its
    corners cut as a finder's imperfect box reads them; the one end whose index shows (a
    red mark top left; the blue bottom-right end is marked cut off) is the one crop
    labelled with the card, and it is the red corner, upright."""
    from companion.render.photodeck import webcam_shot
    from companion.training.corner_reader import labelled_crops
    face = np.full((180, 128, 3), 235, np.uint8)
    face[8:40, 6:30] = (0, 0, 220)                 # red (BGR), where the top index is
    face[-40:-8, -30:-6] = (220, 0, 0)             # blue, the other end
    rng = np.random.default_rng(5)
    for _ in range(6):
        photo, quad = webcam_shot(face, rng, size=(0.2, 0.32))
        crops, labels = labelled_crops(photo, quad, 7, [True, False], rng)
        assert labels.count(7) == 1 and set(labels) == {7, NONE_CLASS}
        # Red over blue, against the other crops (the light's colour cast tints them all).
        redness = [float((c[..., 2].astype(int) - c[..., 0]).mean()) for c in crops]
        named = labels.index(7)
        assert all(redness[named] > r + 15 for j, r in enumerate(redness) if j != named)
