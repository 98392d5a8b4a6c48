"""Table surfaces, generated (never downloaded): wood, felt, cloth, plain, stone."""

from __future__ import annotations

import cv2
import numpy as np


def smooth_noise(h: int, w: int, cells: int, rng: np.random.Generator) -> np.ndarray:
    """Low-frequency noise in [-1, 1]: a few random values, upsampled smoothly."""
    small = rng.uniform(-1, 1, (max(2, cells * h // max(h, w)) + 1, max(2, cells * w // max(h, w)) + 1))
    return cv2.resize(small.astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)


def _wood(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    base = np.array(rng.choice([(40, 70, 120), (30, 50, 95), (60, 100, 150), (70, 120, 175),
                                (25, 40, 80), (45, 60, 110)]), np.float32)   # BGR browns
    base *= rng.uniform(0.8, 1.2)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    angle = rng.uniform(0, np.pi)
    u = xx * np.cos(angle) + yy * np.sin(angle)
    warp = smooth_noise(h, w, 4, rng) * rng.uniform(10, 40)
    freq = rng.uniform(0.08, 0.35)
    grain = np.sin((u + warp) * freq) * 0.5 + 0.5
    fine = rng.normal(0, 1, (h, w)).astype(np.float32)
    fine = cv2.GaussianBlur(fine, (0, 0), 1.0) * 0.06
    tone = 0.8 + 0.25 * grain ** rng.uniform(1, 4) + fine + smooth_noise(h, w, 3, rng) * 0.12
    planks = rng.random() < 0.4
    img = base[None, None, :] * tone[..., None]
    if planks:
        v = -xx * np.sin(angle) + yy * np.cos(angle)
        gap = rng.uniform(60, 200)
        seam = (np.mod(v, gap) < 1.5).astype(np.float32)
        img *= (1 - 0.5 * seam)[..., None]
    return img


def _felt(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    base = np.array(rng.choice([(50, 110, 30), (40, 90, 20), (110, 60, 20), (40, 40, 130),
                                (70, 70, 70), (30, 30, 30), (90, 50, 60)]), np.float32)
    base *= rng.uniform(0.7, 1.3)
    fibre = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 0.7)
    tone = 1 + fibre * 0.07 + smooth_noise(h, w, 5, rng) * 0.08
    return base[None, None, :] * tone[..., None]


def _cloth(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    c1 = rng.uniform(40, 230, 3).astype(np.float32)
    c2 = rng.uniform(40, 230, 3).astype(np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    period = rng.uniform(3, 7)
    weave = (np.sin(xx * 2 * np.pi / period) * np.sin(yy * 2 * np.pi / period)) * 0.06
    kind = rng.integers(3)
    # Checks and stripes from fine to coarse, in pixels of whatever size is rendered: a
    # 256 px training scene must also see the fine checks a 720p frame shrinks to (the
    # finder, trained on 15-60 px checks only, missed most cards on a finely checked cloth).
    if kind == 0:      # checks
        s = np.exp(rng.uniform(np.log(4), np.log(60)))
        pat = ((xx // s + yy // s) % 2).astype(np.float32)
    elif kind == 1:    # stripes
        s = np.exp(rng.uniform(np.log(4), np.log(40)))
        pat = ((xx // s) % 2).astype(np.float32)
    else:              # plain weave
        pat = np.zeros((h, w), np.float32)
    img = c1 * (1 - pat[..., None]) + c2 * pat[..., None]
    return img * (1 + weave)[..., None]


def _plain(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    base = rng.choice([rng.uniform(20, 60), rng.uniform(90, 170), rng.uniform(190, 240)])
    col = np.clip(base + rng.normal(0, 12, 3), 0, 255).astype(np.float32)
    tone = 1 + smooth_noise(h, w, 2, rng) * 0.05 + rng.normal(0, 0.01, (h, w)).astype(np.float32)
    return col[None, None, :] * tone[..., None]


def _stone(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    col = rng.uniform(80, 220, 3).astype(np.float32)
    n = smooth_noise(h, w, 12, rng) * 0.12 + smooth_noise(h, w, 40, rng) * 0.08
    veins = np.abs(smooth_noise(h, w, 6, rng))
    tone = 1 + n - 0.25 * (veins < 0.03)
    return col[None, None, :] * tone[..., None]


KINDS = {"wood": _wood, "felt": _felt, "cloth": _cloth, "plain": _plain, "stone": _stone}
_WEIGHTS = {"wood": 0.35, "felt": 0.2, "cloth": 0.15, "plain": 0.2, "stone": 0.1}


def table_texture(h: int, w: int, rng: np.random.Generator, kind: str | None = None) -> np.ndarray:
    """A BGR uint8 table surface."""
    if kind is None:
        kind = str(rng.choice(list(_WEIGHTS), p=list(_WEIGHTS.values())))
    return np.clip(KINDS[kind](h, w, rng), 0, 255).astype(np.uint8)
