"""Suit pips drawn as filled shapes, at any size and angle, anti-aliased.

Shapes live in a unit box (height 2, centred on 0) and are scaled at draw
time, so the same code makes a 6 px corner pip and a 120 px ace.
"""

from __future__ import annotations

import functools

import cv2
import numpy as np

_SHIFT = 4                 # cv2 fixed-point bits: sub-pixel outlines
_SCALE = 1 << _SHIFT


def _heart(n: int = 48, plump: float = 1.0) -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    x = 16 * np.sin(t) ** 3 * plump
    y = -(13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
    pts = np.stack([x, y], 1)
    pts -= (pts.max(0) + pts.min(0)) / 2
    return pts / (np.ptp(pts[:, 1]) / 2)


@functools.lru_cache(maxsize=64)
def suit_polygons(suit: str, variant: int = 0) -> tuple[np.ndarray, ...]:
    """Polygons (unit coordinates, y down) whose union is the pip."""
    v = (variant % 4) / 3.0          # small shape differences between decks
    if suit == "h":
        return (_heart(plump=0.95 + 0.1 * v),)
    if suit == "d":
        w = 0.72 + 0.1 * v
        corners = [(0.0, -1.0), (w, 0.0), (0.0, 1.0), (-w, 0.0)]
        pts = []
        for (sx, sy), (ex, ey) in zip(corners, corners[1:] + corners[:1]):
            for s in np.linspace(0, 1, 11)[:-1]:
                bow = 1 - 0.08 * np.sin(np.pi * s)   # slightly concave sides
                pts.append(((sx + (ex - sx) * s) * bow, (sy + (ey - sy) * s) * bow))
        return (np.array(pts),)
    if suit == "s":
        body = _heart(plump=1.0 + 0.08 * v) * np.array([1.0, -1.0]) * 0.78
        body[:, 1] -= 0.2
        stem_w = 0.16 + 0.08 * v
        stem = np.array([[-stem_w * 0.4, 0.3], [stem_w * 0.4, 0.3], [stem_w * 2.4, 1.0],
                         [-stem_w * 2.4, 1.0]])
        return (body, stem)
    if suit == "c":
        r = 0.36 + 0.03 * v
        circles = []
        for cx, cy in ((0.0, -0.56), (-0.45, 0.08), (0.45, 0.08)):
            t = np.linspace(0, 2 * np.pi, 28, endpoint=False)
            circles.append(np.stack([cx + r * np.cos(t), cy + r * np.sin(t)], 1))
        centre = np.array([[0.0, -0.62], [-0.52, 0.12], [0.52, 0.12]])   # fills the gaps
        stem_w = 0.12 + 0.06 * v
        stem = np.array([[-stem_w * 0.5, 0.1], [stem_w * 0.5, 0.1], [stem_w * 2.6, 1.0],
                         [-stem_w * 2.6, 1.0]])
        return (*circles, centre, stem)
    raise ValueError(f"unknown suit {suit!r}")


def pip_extent(suit: str, height: float, variant: int = 0) -> tuple[float, float]:
    """(width, height) in pixels of a pip drawn at this height."""
    pts = np.concatenate(suit_polygons(suit, variant))
    return float(np.ptp(pts[:, 0]) * height / 2), float(np.ptp(pts[:, 1]) * height / 2)


def pip_points(suit: str, cx: float, cy: float, height: float, angle: float = 0.0,
               variant: int = 0) -> list[np.ndarray]:
    """The pip's polygons in image coordinates (float)."""
    a = np.deg2rad(angle)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    return [(p * (height / 2)) @ rot.T + (cx, cy) for p in suit_polygons(suit, variant)]


def draw_pip(img: np.ndarray, suit: str, cx: float, cy: float, height: float,
             color: tuple[int, ...], angle: float = 0.0, variant: int = 0) -> None:
    # One call per polygon: a single fillPoly call fills overlaps even-odd (holes).
    for p in pip_points(suit, cx, cy, height, angle, variant):
        cv2.fillPoly(img, [np.round(p * _SCALE).astype(np.int32)], color,
                     lineType=cv2.LINE_AA, shift=_SHIFT)
