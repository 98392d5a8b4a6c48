"""The cover reader: a card lying under another card is told from the top card, and a named
card it calls covered is "card unclear" on video, never the top card's name."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.detector.card_reader import CardReaderDetector, CornerReader
from companion.detector.cover_reader import COVER_H, COVER_W, CoverReader, cover_crop
from companion.detector.detections import ModelError
from companion.detector.model import (COVER_READER, CORNER_READER, LIVE_COVER, MIDDLE_READER,
                                      load_detector)
from companion.engine.cards import CLASS_NAMES
from companion.render.faces import Deck, DeckStyle
from companion.render.scene import SceneRenderer, card_transform, warp_onto
from companion.training.cover_reader import covered_share
from helpers import FixedFinder


def _piles(n: int):
    """Rendered piles whose top card shows whole, with a face-up card under it at least a
    third covered but half in view: (image, top card's outline, that card's outline)."""
    r = SceneRenderer(320, 777)
    for i in range(400):
        s = r.render(i)
        cards = s.cards
        if len(cards) < 2 or cards[0].back or cards[0].cls is None or cards[0].visible < 0.9:
            continue
        low = next((k for k in range(1, len(cards)) if not cards[k].back and
                    cards[k].cls is not None and cards[k].visible >= 0.4 and
                    covered_share(cards, k, 320) >= 0.3), None)
        if low is not None:
            yield s.image, cards[0].quad, cards[low].quad
            n -= 1
            if n == 0:
                return


def test_the_shipped_cover_reader_tells_a_card_below_from_the_top_card():
    reader = CoverReader(COVER_READER)
    tops, lows = [], []
    for image, top, low in _piles(6):
        p = reader(image, [top, low])
        tops.append(p[0])
        lows.append(p[1])
    assert len(tops) == 6
    assert max(tops) < 0.5                        # a top card is never taken for a covered one
    assert sum(p >= 0.5 for p in lows) >= 5       # a card below shows the edge crossing it


def test_the_crop_is_the_card_with_a_border_of_table():
    canvas = np.zeros((200, 200, 3), np.uint8)
    canvas[50:150, 65:135] = 255                  # a white card, 70 x 100
    quad = np.float32([[65, 50], [135, 50], [135, 150], [65, 150]])
    crop = cover_crop(canvas, quad)
    assert crop.shape == (COVER_H, COVER_W, 3)
    assert crop[COVER_H // 2, COVER_W // 2].min() == 255          # the card inside
    assert crop[1, COVER_W // 2].max() == 0                        # the table round it
    assert crop[COVER_H // 2, 1].max() == 0


class AlwaysCovered:
    """A cover reader sure that every outline lies under another card."""

    def __call__(self, image, quads):
        return np.ones(len(quads), np.float32)


def _one_card(name: str):
    face = Deck(DeckStyle.random(3)).face(CLASS_NAMES.index(name))
    canvas = np.full((480, 480, 3), (40, 70, 30), np.uint8)
    H = card_transform(face, (240, 240), 320, 12)
    warp_onto(canvas, face, H)
    fh, fw = face.image.shape[:2]
    quad = cv2.perspectiveTransform(np.float32([[[0, 0], [fw, 0], [fw, fh], [0, fh]]]), H)[0]
    return canvas, quad


def test_a_named_card_the_cover_reader_calls_covered_is_unclear():
    canvas, quad = _one_card("7h")

    def names(cover, veto=LIVE_COVER):
        return CardReaderDetector(FixedFinder(quad), CornerReader(CORNER_READER), retry=(),
                                  cover=cover, cover_veto=veto)(canvas).names

    assert set(names(None)) == {"7h"}
    assert names(AlwaysCovered()) == []
    assert set(names(CoverReader(COVER_READER))) == {"7h"}   # alone on the table: on top


def test_video_reads_with_the_cover_reader_and_photos_without():
    assert load_detector().cover is not None
    assert load_detector(photo=True).cover is None


def test_a_model_that_is_not_a_cover_reader_is_one_clear_error():
    with pytest.raises(ModelError, match="middle_reader.onnx.*not a cover reader"):
        CoverReader(MIDDLE_READER)
