"""Camera and light: uneven light, colour temperature, shadows, glare, blur,
motion blur, sensor noise and JPEG artefacts. All take and return BGR uint8."""

from __future__ import annotations

import cv2
import numpy as np

from .textures import smooth_noise


def uneven_light(img: np.ndarray, rng: np.random.Generator, strength: float = 0.35) -> np.ndarray:
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    a = rng.uniform(0, 2 * np.pi)
    ramp = ((xx / w - 0.5) * np.cos(a) + (yy / h - 0.5) * np.sin(a))
    cx, cy = rng.uniform(0, w), rng.uniform(0, h)
    spot = np.exp(-(((xx - cx) / w) ** 2 + ((yy - cy) / h) ** 2) / rng.uniform(0.1, 0.6))
    field = (rng.uniform(0.6, 1.15) + strength * rng.uniform(-1, 1) * ramp
             + strength * rng.uniform(0, 0.8) * spot + 0.05 * smooth_noise(h, w, 3, rng))
    return np.clip(img * field[..., None], 0, 255).astype(np.uint8)


def colour_temperature(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    warm = rng.uniform(-1, 1)            # -1 bluish daylight .. +1 tungsten
    gains = np.array([1 - 0.22 * warm, 1 + rng.uniform(-0.05, 0.05), 1 + 0.2 * warm], np.float32)
    return np.clip(img * gains, 0, 255).astype(np.uint8)


def shadow(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    h, w = img.shape[:2]
    n = int(rng.integers(3, 7))
    pts = np.stack([rng.uniform(-0.3, 1.3, n) * w, rng.uniform(-0.3, 1.3, n) * h], 1)
    mask = np.zeros((h, w), np.float32)
    cv2.fillPoly(mask, [cv2.convexHull(pts.astype(np.int32))], 1.0)
    mask = cv2.GaussianBlur(mask, (0, 0), rng.uniform(3, 0.08 * max(h, w)))
    dark = rng.uniform(0.35, 0.75)
    return (img * (1 - (1 - dark) * mask)[..., None]).astype(np.uint8)


def glare(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Specular highlights: soft white blobs, some elongated."""
    h, w = img.shape[:2]
    out = img.astype(np.float32)
    for _ in range(int(rng.integers(1, 3))):
        mask = np.zeros((h, w), np.float32)
        c = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
        axes = (int(rng.uniform(0.03, 0.25) * w), int(rng.uniform(0.02, 0.12) * h))
        cv2.ellipse(mask, c, axes, rng.uniform(0, 180), 0, 360, 1.0, -1)
        mask = cv2.GaussianBlur(mask, (0, 0), max(1.0, axes[1] * 0.6))
        out += mask[..., None] * rng.uniform(60, 200)
    return np.clip(out, 0, 255).astype(np.uint8)


def defocus(img: np.ndarray, rng: np.random.Generator, max_sigma: float = 1.6) -> np.ndarray:
    return cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, max_sigma))


def motion_blur(img: np.ndarray, rng: np.random.Generator, max_len: int = 9) -> np.ndarray:
    n = int(rng.integers(3, max_len + 1))
    k = np.zeros((n, n), np.float32)
    k[n // 2, :] = 1.0
    rot = cv2.getRotationMatrix2D((n / 2 - 0.5, n / 2 - 0.5), rng.uniform(0, 180), 1.0)
    k = cv2.warpAffine(k, rot, (n, n))
    return cv2.filter2D(img, -1, k / max(k.sum(), 1e-6))


def sensor_noise(img: np.ndarray, rng: np.random.Generator, max_sigma: float = 9.0) -> np.ndarray:
    sigma = rng.uniform(1, max_sigma)
    noise = rng.normal(0, sigma, img.shape[:2] + (1,)).astype(np.float32)
    if rng.random() < 0.5:   # chroma noise of cheap sensors
        noise = noise + rng.normal(0, sigma * 0.5, img.shape).astype(np.float32)
    return np.clip(img + noise, 0, 255).astype(np.uint8)


def jpeg(img: np.ndarray, rng: np.random.Generator, lo: int = 25, hi: int = 95) -> np.ndarray:
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(lo, hi))])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else img


def contrast_gamma(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    gamma = rng.uniform(0.7, 1.4)
    lut = np.clip(((np.arange(256) / 255.0) ** gamma) * 255 * rng.uniform(0.85, 1.1)
                  + rng.uniform(-15, 15), 0, 255).astype(np.uint8)
    return cv2.LUT(img, lut)


def camera(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random chain of light and camera effects, as a scene would see them."""
    if rng.random() < 0.8:
        img = uneven_light(img, rng)
    if rng.random() < 0.7:
        img = colour_temperature(img, rng)
    if rng.random() < 0.3:
        img = shadow(img, rng)
    if rng.random() < 0.25:
        img = glare(img, rng)
    if rng.random() < 0.5:
        img = contrast_gamma(img, rng)
    r = rng.random()
    if r < 0.35:
        img = defocus(img, rng)
    elif r < 0.5:
        img = motion_blur(img, rng)
    if rng.random() < 0.8:
        img = sensor_noise(img, rng)
    if rng.random() < 0.6:
        img = jpeg(img, rng)
    return img
