"""What several test files share."""

import time

import numpy as np

from companion.detector.detections import Detections
from companion.engine.cards import CLASS_NAMES


class SameCornerReader:
    """A corner reader that reads every crop alike: `card` at `p`, "no index" at `none`,
    the rest spread evenly over the other cards."""

    def __init__(self, card: str, p: float, none: float):
        self.card, self.p, self.none = card, p, none

    def __call__(self, crops):
        out = np.full((len(crops), len(CLASS_NAMES) + 1),
                      (1 - self.p - self.none) / (len(CLASS_NAMES) - 1), np.float32)
        out[:, CLASS_NAMES.index(self.card)] = self.p
        out[:, -1] = self.none
        return out


class ScriptedDetector:
    """Detections by frame: {frame: [(card, conf, (cx, cy))]}; the last script holds."""
    imgsz = 320

    def __init__(self, script):
        self.script = script
        self.frame = 0
        self.calls = 0

    def __call__(self, image, conf=None):
        self.calls += 1
        keys = [k for k in self.script if k <= self.frame]
        items = self.script[max(keys)] if keys else []
        if not items:
            return Detections.empty()
        xyxy = np.array([[x - 10, y - 15, x + 10, y + 15] for _, _, (x, y) in items], np.float32)
        return Detections(xyxy, np.array([c for _, c, _ in items], np.float32),
                          np.array([CLASS_NAMES.index(n) for n, _, _ in items]))


class SlowOut:
    """Plays samples in real time, as a sound card would (at 20x speed)."""
    kind = "test"

    def __init__(self, rate):
        self.rate = rate

    def write(self, samples):
        time.sleep(len(samples) / self.rate / 20)


class FixedFinder:
    """A card finder that finds the one outline it was given, in any picture, as sure as
    a clear card."""
    imgsz = 256

    def __init__(self, quad: np.ndarray) -> None:
        self.quad = quad

    def __call__(self, img, conf=None):
        return np.float32([self.quad]), np.float32([0.9])
