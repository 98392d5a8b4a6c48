"""The cover reader: does this outline's card lie under another card?

In a pile the card that matters is the one on top. Where the top card's index cannot be
read (a hand over it, half of it out of the frame) the corner of a card below it still
can, and its outline, found on its own, names a card that is not the top one. A card
under another shows that card's edge running across its face; the top card shows its own
whole border (a hand over it is not a card). This small CNN reads the card straightened
with a little of the table round it and answers one logit: covered by a card. A named card
it calls covered is "card unclear" (`CardReaderDetector`), never the top card's name.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .detections import ModelError, onnx_session, to_blob, warp_quad

COVER_W, COVER_H = 48, 68          # reader input: the whole card (pixels)
COVER_GROW = 1.15                  # ...and a border of table round it (the outline grown)


def cover_crop(image: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """The card inside quad (TL, TR, BR, BL, image pixels) grown by COVER_GROW about its
    centre and straightened to COVER_H x COVER_W: a card crossing its border shows."""
    q = np.asarray(quad, np.float32)
    c = q.mean(0)
    return warp_quad(image, (q - c) * np.float32(COVER_GROW) + c, COVER_W, COVER_H)


class CoverReader:
    """The cover reader through ONNX Runtime: outlines -> the probability that each one's
    card lies under another card."""

    def __init__(self, path: str | Path, threads: int = 2) -> None:
        self.path = Path(path)
        self.session = onnx_session(self.path, threads)
        self.input = self.session.get_inputs()[0].name
        inp = self.session.get_inputs()[0].shape
        out = self.session.get_outputs()[0].shape
        if inp[2:] != [COVER_H, COVER_W] or len(out) != 2 or out[1] != 1:
            raise ModelError(f"{path}: reads {inp[2:]} -> {out}, not a cover reader's "
                             f"[{COVER_H}, {COVER_W}] -> 1")

    def __call__(self, image: np.ndarray, quads: list[np.ndarray]) -> np.ndarray:
        if not quads:
            return np.zeros(0, np.float32)
        z = self.session.run(None, {self.input: to_blob([cover_crop(image, q)
                                                         for q in quads])})[0][:, 0]
        return (1.0 / (1.0 + np.exp(-z))).astype(np.float32)
