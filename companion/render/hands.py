"""Hands and arms reaching over the table: skin-toned shapes with shading."""

from __future__ import annotations

import cv2
import numpy as np

SKIN = [(190, 210, 245), (160, 190, 230), (120, 160, 215), (90, 130, 185), (60, 90, 140),
        (45, 65, 100)]   # BGR, light to dark


def hand_layer(h: int, w: int, rng: np.random.Generator, target: tuple[float, float],
               scale: float, from_angle: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A hand whose palm is near target, arm running off the image edge.

    Returns (BGR image, float mask 0..1) of the whole frame.
    """
    colour = np.array(SKIN[int(rng.integers(len(SKIN)))], np.float32) * rng.uniform(0.85, 1.1)
    mask = np.zeros((h, w), np.uint8)
    a = rng.uniform(0, 2 * np.pi) if from_angle is None else from_angle
    tx, ty = target
    far = 2.0 * max(h, w)
    ex, ey = tx + np.cos(a) * far, ty + np.sin(a) * far
    arm_w = int(scale * rng.uniform(0.45, 0.6))
    cv2.line(mask, (int(tx), int(ty)), (int(ex), int(ey)), 255, arm_w, cv2.LINE_AA)
    palm = (int(scale * 0.42), int(scale * 0.5))
    # The palm's long axis points away from the arm, fingers beyond it.
    ang = np.rad2deg(a) + 90
    cv2.ellipse(mask, (int(tx), int(ty)), palm, ang, 0, 360, 255, -1, cv2.LINE_AA)
    spread = rng.uniform(0.1, 0.35)
    for i, off in enumerate(np.linspace(-1, 1, 4)):
        fa = a + np.pi + off * spread
        base = (tx - np.cos(a) * palm[1] * 0.6 + off * np.cos(a + np.pi / 2) * palm[0] * 0.6,
                ty - np.sin(a) * palm[1] * 0.6 + off * np.sin(a + np.pi / 2) * palm[0] * 0.6)
        length = scale * rng.uniform(0.45, 0.7) * (0.8 if i in (0, 3) else 1.0)
        tip = (base[0] + np.cos(fa) * length, base[1] + np.sin(fa) * length)
        cv2.line(mask, (int(base[0]), int(base[1])), (int(tip[0]), int(tip[1])), 255,
                 max(2, int(scale * 0.14)), cv2.LINE_AA)
    thumb_a = a + np.pi + (np.pi / 2.2) * rng.choice([-1, 1])
    cv2.line(mask, (int(tx), int(ty)), (int(tx + np.cos(thumb_a) * scale * 0.6),
                                        int(ty + np.sin(thumb_a) * scale * 0.6)), 255,
             max(2, int(scale * 0.16)), cv2.LINE_AA)
    m = mask.astype(np.float32) / 255
    # Shading: rounder towards the edges of the shape, a little noise.
    inner = cv2.GaussianBlur(m, (0, 0), max(1.0, scale * 0.08))
    shade = 0.7 + 0.35 * inner + rng.normal(0, 0.02, (h, w)).astype(np.float32)
    img = np.clip(colour[None, None, :] * shade[..., None], 0, 255).astype(np.uint8)
    if rng.random() < 0.5:   # a sleeve on the arm, away from the hand
        sleeve = np.zeros((h, w), np.uint8)
        sx, sy = tx + np.cos(a) * scale * 1.4, ty + np.sin(a) * scale * 1.4
        cv2.line(sleeve, (int(sx), int(sy)), (int(ex), int(ey)), 255, int(arm_w * 1.3), cv2.LINE_AA)
        s = sleeve.astype(np.float32)[..., None] / 255
        cloth = np.array(rng.uniform(20, 230, 3), np.float32)
        img = (img * (1 - s) + cloth * s).astype(np.uint8)
        m = np.maximum(m, s[..., 0])
    return img, m
