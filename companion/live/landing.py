"""Where the pile changed between two rests: after a flip, the new card's outline.

The camera is still and a flip adds one card on top of the pile, so what differs
between the pile region at rest before a flip and at rest after it is that card
(and its shadow). Its minimum-area rectangle is an outline the card finder can
miss: a white card on a pale cloth, or a finder box that merges the new card with
the pile below. The reader reads it like any found outline, so a wrong outline
(a hand's shadow, a swept pile) reads nothing and costs only a few crops.
"""

from __future__ import annotations

import cv2
import numpy as np

from ..detector.detections import shrink


class LandingOutline:
    def __init__(self, side: int = 160, spot: float = 12.0, spot_share: float = 0.002,
                 step: float = 22.0, min_share: float = 0.01, max_share: float = 0.45,
                 aspect: tuple[float, float] = (1.15, 2.0), speck: int = 6,
                 keep: int = 10) -> None:
        """side: the region is compared at this size. A frame moved from the last when
        over `spot_share` of its pixels step more than `spot` in any colour. The change
        between rests is the pixels stepping more than `step` in any colour; it is a
        card when its rectangle covers `min_share`-`max_share` of the region, is
        `aspect` long to wide; patches under `speck` pixels are noise. The outline is
        given for the first `keep` frames at rest (the tracker has called the card by
        then, or the outline does not read)."""
        self.side, self.spot, self.spot_share = side, spot, spot_share
        self.step, self.min_share, self.max_share = step, min_share, max_share
        self.aspect, self.speck, self.keep = aspect, speck, keep
        self._age = 0
        self._prev: np.ndarray | None = None
        self._rest: np.ndarray | None = None
        self._moved = False
        self.quad: np.ndarray | None = None
        self.resting = False        # the last frame fed did not move from the one before

    def update(self, region: np.ndarray) -> np.ndarray | None:
        """Feed every frame of the pile region; the new card's outline (4 x 2, region
        pixels) while the region rests after a change, else None."""
        H, W = region.shape[:2]
        f = min(1.0, self.side / max(H, W))
        w, h = max(1, round(W * f)), max(1, round(H * f))
        small = region if f == 1.0 else shrink(region, w, h)
        small = cv2.blur(small, (3, 3))
        prev, self._prev = self._prev, small
        self.resting = False
        if prev is None or prev.shape != small.shape:
            self._rest, self._moved, self.quad = small, False, None
            return None
        pixels = small.shape[0] * small.shape[1]
        if np.count_nonzero(_step(small, prev) > self.spot) > self.spot_share * pixels:
            self._moved, self.quad = True, None          # in motion: wait for rest
            return None
        self.resting = True
        if self._moved:
            self._moved, self._age = False, 0
            self.quad = self._outline(self._rest, small, (W / w, H / h))
        self._rest = small
        self._age += 1
        return self.quad if self._age <= self.keep else None

    def _outline(self, before: np.ndarray, after: np.ndarray,
                 scale: tuple[float, float]) -> np.ndarray | None:
        mask = (_step(after, before) > self.step).astype(np.uint8)
        k = max(3, round(self.side * 0.04)) | 1
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
        n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        # What changed is the new card (and at most an arm, below), but a white card over
        # white cards changes in patches (pips, indices, edges): take every patch but
        # specks of noise.
        keep = np.nonzero(stats[1:, cv2.CC_STAT_AREA] >= self.speck)[0] + 1
        if not len(keep):
            return None
        # What changed at the region's edge is an arm that came or went (a hand hovering
        # beside the pile while the card landed), not the card on the pile: left out,
        # unless nothing else changed.
        H, W = mask.shape
        x, y = stats[keep, cv2.CC_STAT_LEFT], stats[keep, cv2.CC_STAT_TOP]
        edge = (x == 0) | (y == 0) | (x + stats[keep, cv2.CC_STAT_WIDTH] == W) | \
            (y + stats[keep, cv2.CC_STAT_HEIGHT] == H)
        if not edge.all():
            keep = keep[~edge]
        pts = np.column_stack(np.nonzero(np.isin(labels, keep))[::-1]).astype(np.float32)
        (cx, cy), (rw, rh), ang = cv2.minAreaRect(pts)
        area = H * W
        long, short = max(rw, rh), min(rw, rh)
        if short < 2 or not self.min_share <= rw * rh / area <= self.max_share:
            return None
        if not self.aspect[0] <= long / short <= self.aspect[1]:
            return None
        quad = cv2.boxPoints(((cx + 0.5, cy + 0.5), (rw, rh), ang))
        return (quad * np.float32(scale)).astype(np.float32)


def changed_within(before: np.ndarray, after: np.ndarray, quad: np.ndarray,
                   step: float = 22.0) -> float:
    """The share of the pixels inside quad (4 x 2, pixels of both pictures) that step
    more than `step` in any colour from before to after (1.0: quad holds no pixel)."""
    mask = np.zeros(before.shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, np.round(quad).astype(np.int32), 1)
    inside = mask.astype(bool)
    if not inside.any():
        return 1.0
    return float(np.count_nonzero(_step(before, after)[inside] > step) / np.count_nonzero(inside))


def _step(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per pixel, the largest absolute step of any colour channel."""
    d = cv2.absdiff(a, b)
    return d if d.ndim == 2 else np.maximum(np.maximum(d[..., 0], d[..., 1]), d[..., 2])
