"""What every part of the detector shares: the `Detections` type passed from the model to
the flip tracker and the annotators (boxes in image pixels, confidences, class ids), the
one clear error a bad model file gives, and the image and ONNX Runtime helpers."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np

from ..engine.cards import CLASS_NAMES


class ModelError(RuntimeError):
    """A model file that cannot be used; the message names the file."""


@dataclass
class Detections:
    xyxy: np.ndarray          # (N, 4) float32, image pixels
    confidence: np.ndarray    # (N,) float32
    class_id: np.ndarray      # (N,) int
    # (N, 4, 2) float32: the outline of the card each index was read on (image pixels),
    # where the detector knows it; the live loop reads those outlines again next frame.
    outline: np.ndarray | None = None

    @classmethod
    def empty(cls) -> "Detections":
        return cls(np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros(0, int))

    def __len__(self) -> int:
        return len(self.confidence)

    @property
    def names(self) -> list[str]:
        return [CLASS_NAMES[int(c)] for c in self.class_id]

    def sorted(self) -> "Detections":
        return self.filter(np.argsort(-self.confidence, kind="stable"))

    def filter(self, keep: np.ndarray) -> "Detections":
        return Detections(self.xyxy[keep], self.confidence[keep], self.class_id[keep],
                          None if self.outline is None else self.outline[keep])

    def offset(self, dx: float, dy: float) -> "Detections":
        return Detections(self.xyxy + np.float32([dx, dy, dx, dy]), self.confidence,
                          self.class_id,
                          None if self.outline is None else self.outline + np.float32([dx, dy]))

    def to_json(self) -> list[dict]:
        return [{"card": n, "confidence": round(float(c), 4),
                 "box": [round(float(v), 1) for v in b]}
                for n, c, b in zip(self.names, self.confidence, self.xyxy)]


class Detector(Protocol):
    imgsz: int

    def __call__(self, image: np.ndarray, conf: float | None = None) -> Detections: ...


def shrink(image: np.ndarray, w: int, h: int) -> np.ndarray:
    """Resize to w x h, fast: area averaging only by a whole factor (OpenCV's fast path;
    a 720 px region straight to 256 px by INTER_AREA takes ~2 ms, this ~0.4 ms), then
    bilinear for the rest (under 2x, so little aliasing)."""
    k = int(min(image.shape[1] / w, image.shape[0] / h))
    if k >= 2:
        image = cv2.resize(image, (image.shape[1] // k, image.shape[0] // k),
                           interpolation=cv2.INTER_AREA)
    if image.shape[1] == w and image.shape[0] == h:
        return image
    return cv2.resize(image, (w, h), interpolation=cv2.INTER_LINEAR)


def to_blob(crops: list[np.ndarray]) -> np.ndarray:
    """BGR crops of one size as a network's input: N x 3 x H x W, RGB, 0-1."""
    arr = np.stack(crops).astype(np.float32) / 255.0            # N, H, W, 3 (BGR)
    return np.ascontiguousarray(arr[..., ::-1].transpose(0, 3, 1, 2))   # N, 3, H, W (RGB)


def warp_quad(image: np.ndarray, quad: np.ndarray, w: int, h: int) -> np.ndarray:
    """The region inside quad (TL, TR, BR, BL) warped upright to h x w. Large regions are
    first shrunk with area averaging (a straight warp of a phone photo would alias the
    thin strokes of an index)."""
    dst = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    side = float(np.linalg.norm(quad[3] - quad[0]))
    factor = side / (h * 1.25)
    src, img = quad, image
    if factor > 1.5:
        H, W = image.shape[:2]
        x0, y0 = np.floor(quad.min(0)).astype(int) - 2
        x1, y1 = np.ceil(quad.max(0)).astype(int) + 2
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, W), min(y1, H)
        if x1 - x0 >= 2 and y1 - y0 >= 2:
            region = image[y0:y1, x0:x1]
            nw, nh = max(1, int(round((x1 - x0) / factor))), max(1, int(round((y1 - y0) / factor)))
            img = cv2.resize(region, (nw, nh), interpolation=cv2.INTER_AREA)
            src = (quad - np.float32([x0, y0])) * np.float32([nw / (x1 - x0), nh / (y1 - y0)])
    M = cv2.getPerspectiveTransform(np.asarray(src, np.float32), dst)
    return cv2.warpPerspective(img, M, (w, h), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)


def letterbox(image: np.ndarray, size: int) -> tuple[np.ndarray, float, float, float]:
    """Fit into size x size keeping the aspect ratio, grey padding (as ultralytics trains)."""
    h, w = image.shape[:2]
    r = min(size / h, size / w)
    nh, nw = int(round(h * r)), int(round(w * r))
    resized = shrink(image, nw, nh)
    top, left = (size - nh) // 2, (size - nw) // 2
    out = np.full((size, size, 3), 114, np.uint8)
    out[top:top + nh, left:left + nw] = resized
    return out, r, left, top


def onnx_session(path: Path, threads: int, spin: bool = False):
    """An ONNX Runtime CPU session, or one clear ModelError naming the file. spin: its
    threads wait for work busily (faster; for the one big model of a detector only)."""
    if not path.is_file():
        raise ModelError(f"{path}: no such model file")
    try:
        import onnxruntime as ort
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Several sessions (and the capture thread) share two cores: only the detector's
        # big model may spin (two spinning sessions fought each other: 29 ms a frame).
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
        return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types
        raise ModelError(f"{path}: not a usable ONNX model ({str(exc).splitlines()[0][:160]})") \
            from None


def default_threads() -> int:
    return min(os.cpu_count() or 1, 4)
