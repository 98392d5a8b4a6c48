"""Second stage: read each corner index that YOLO found with a small classifier.

YOLO is good at *where* an index is long before it is sure *which* card it
is. This stage takes each box YOLO proposes, crops that spot from the full-
resolution image (a phone photo's index is sharp there, however small it is
after YOLO's resize), and reads it with a small CNN trained on crops of the
same rendered scenes, plus a 53rd class, "not an index" (centre pips, court
art, table), to throw away YOLO's false proposals.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from ..engine.cards import CLASS_NAMES
from .model import Detections, onnx_session

CROP = 48                  # classifier input side
NONE_CLASS = len(CLASS_NAMES)
PAD = 0.18                 # box grown by this share on each side before cropping


def crop(image: np.ndarray, box, pad: float = PAD) -> np.ndarray:
    """A square crop around box (grown by pad), resized to CROP x CROP."""
    x1, y1, x2, y2 = [float(v) for v in box]
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    side = max(x2 - x1, y2 - y1) * (1 + 2 * pad)
    src = np.float32([[cx - side / 2, cy - side / 2], [cx + side / 2, cy - side / 2],
                      [cx - side / 2, cy + side / 2]])
    dst = np.float32([[0, 0], [CROP, 0], [0, CROP]])
    m = cv2.getAffineTransform(src, dst)
    interp = cv2.INTER_AREA if side > CROP * 1.5 else cv2.INTER_LINEAR
    if side > CROP * 1.5:
        # Shrink in one step with area averaging: cut the region, then resize.
        x0, y0 = int(np.floor(cx - side / 2)), int(np.floor(cy - side / 2))
        s = int(np.ceil(side))
        H, W = image.shape[:2]
        region = cv2.copyMakeBorder(image[max(y0, 0):min(y0 + s, H), max(x0, 0):min(x0 + s, W)],
                                    max(0, -y0), max(0, y0 + s - H), max(0, -x0),
                                    max(0, x0 + s - W), cv2.BORDER_REPLICATE)
        return cv2.resize(region, (CROP, CROP), interpolation=interp)
    return cv2.warpAffine(image, m, (CROP, CROP), flags=interp, borderMode=cv2.BORDER_REPLICATE)


def to_blob(crops: list[np.ndarray]) -> np.ndarray:
    arr = np.stack(crops).astype(np.float32) / 255.0            # N, H, W, 3 (BGR)
    return np.ascontiguousarray(arr[..., ::-1].transpose(0, 3, 1, 2))   # N, 3, H, W (RGB)


def small_cnn(widths: tuple[int, int, int, int], classes: int):
    """The crop classifiers' network: a stem, three double-conv blocks, global pooling.
    Small on purpose, so it trains on two CPU cores."""
    import torch.nn as nn

    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True), nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    w0, w1, w2, w3 = widths
    return nn.Sequential(nn.Conv2d(3, w0, 3, padding=1, bias=False), nn.BatchNorm2d(w0),
                         nn.ReLU(inplace=True), nn.MaxPool2d(2),
                         block(w0, w1), nn.MaxPool2d(2), block(w1, w2), nn.MaxPool2d(2),
                         block(w2, w3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
                         nn.Linear(w3, classes))


def build_model():
    return small_cnn((24, 48, 96, 128), NONE_CLASS + 1)      # ~47 M multiply-adds a 48x48 crop


class IndexReader:
    """An exported crop classifier through ONNX Runtime: crops -> (N, 53) probabilities."""

    def __init__(self, path: str | Path, threads: int = 2) -> None:
        self.session = onnx_session(Path(path), threads)
        self.input = self.session.get_inputs()[0].name

    def __call__(self, crops: list[np.ndarray]) -> np.ndarray:
        if not crops:
            return np.zeros((0, NONE_CLASS + 1), np.float32)
        logits = self.session.run(None, {self.input: to_blob(crops)})[0]
        e = np.exp(logits - logits.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)


class TwoStageDetector:
    """YOLO proposes index boxes (any class, low threshold); the reader names them."""

    def __init__(self, yolo, reader: IndexReader, propose_conf: float = 0.005, conf: float = 0.25,
                 max_boxes: int = 40) -> None:
        self.yolo, self.reader = yolo, reader
        self.imgsz = yolo.imgsz
        self.propose_conf, self.conf, self.max_boxes = propose_conf, conf, max_boxes

    def __call__(self, image: np.ndarray, conf: float | None = None) -> Detections:
        conf = self.conf if conf is None else conf
        props = self.yolo.propose(image, self.propose_conf, self.max_boxes)
        if not len(props):
            return Detections.empty()
        probs = self.reader([crop(image, b) for b in props.xyxy])
        cls = probs[:, :NONE_CLASS].argmax(1)
        p = probs[np.arange(len(cls)), cls]
        keep = (p >= conf) & (probs[:, NONE_CLASS] < 0.5)
        return Detections(props.xyxy[keep], p[keep].astype(np.float32), cls[keep]).sorted()
