"""Card detection: one Detections type, two backends.

`Detections` is the single type passed from the model to the flip tracker and
the annotators (boxes in image pixels, confidences, class ids). The live loop
runs the exported ONNX model through ONNX Runtime (fast on a CPU, no torch
import); the ultralytics backend reads the `.pt` checkpoint and is the
reference the ONNX path is tested against.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np

from ..engine.cards import CLASS_NAMES

MODELS = Path(__file__).resolve().parent.parent.parent / "models"
DEFAULT_MODEL = MODELS / "cards.onnx"            # the index design's YOLO (52 classes)
CARD_FINDER = MODELS / "card_finder.onnx"        # the card-reader design's YOLO-OBB (1 class)
# The same finder with int8 weights and activations but a float head (quantize.py): for
# video, where it must keep up with the camera; still photos take the float one.
LIVE_FINDER = MODELS / "card_finder-int8.onnx"
PHOTO_LOOKS = ("snapped",)                        # which outlines of a card are read (card_reader)
LIVE_LOOKS = ("found", "snapped")
PHOTO_TURNS = (30.0, 60.0)                        # extra angles the finder sees a photo from


class ModelError(RuntimeError):
    """A model file that cannot be used; the message names the file."""


@dataclass
class Detections:
    xyxy: np.ndarray          # (N, 4) float32, image pixels
    confidence: np.ndarray    # (N,) float32
    class_id: np.ndarray      # (N,) int

    @classmethod
    def empty(cls) -> "Detections":
        return cls(np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros(0, int))

    def __len__(self) -> int:
        return len(self.confidence)

    @property
    def names(self) -> list[str]:
        return [CLASS_NAMES[int(c)] for c in self.class_id]

    def sorted(self) -> "Detections":
        order = np.argsort(-self.confidence, kind="stable")
        return Detections(self.xyxy[order], self.confidence[order], self.class_id[order])

    def filter(self, keep: np.ndarray) -> "Detections":
        return Detections(self.xyxy[keep], self.confidence[keep], self.class_id[keep])

    def offset(self, dx: float, dy: float) -> "Detections":
        return Detections(self.xyxy + np.float32([dx, dy, dx, dy]), self.confidence, self.class_id)

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


def nms(boxes: np.ndarray, scores: np.ndarray, classes: np.ndarray, iou: float) -> np.ndarray:
    """Class-aware NMS: boxes of different cards never suppress each other."""
    if len(scores) == 0:
        return np.zeros(0, int)
    shifted = boxes + classes[:, None] * (float(boxes.max()) + 1.0)   # separate classes in space
    xywh = np.concatenate([shifted[:, :2], shifted[:, 2:] - shifted[:, :2]], 1)
    keep = cv2.dnn.NMSBoxes(xywh.tolist(), scores.tolist(), 0.0, iou)
    return np.array(keep, int).reshape(-1)


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


class OnnxDetector:
    """The exported YOLO model through ONNX Runtime, on the CPU."""

    def __init__(self, path: str | Path, imgsz: int | None = None, conf: float = 0.25,
                 iou: float = 0.5, threads: int | None = None, session=None) -> None:
        path = Path(path)
        self.session = session or onnx_session(path, threads or default_threads())
        inp = self.session.get_inputs()[0]
        self.input_name = inp.name
        fixed = inp.shape[2] if isinstance(inp.shape[2], int) else None
        self.dynamic = fixed is None
        self.imgsz = imgsz or fixed or 320
        if fixed and imgsz and imgsz != fixed:
            raise ModelError(f"{path}: exported for {fixed} px, asked for {imgsz}")
        out = self.session.get_outputs()[0].shape
        if len(out) != 3 or (isinstance(out[1], int) and out[1] != 4 + len(CLASS_NAMES)):
            raise ModelError(f"{path}: output {out} is not a 52-card YOLO head")
        self.conf, self.iou = conf, iou

    def _raw(self, image: np.ndarray, conf: float):
        img, r, left, top = letterbox(image, self.imgsz)
        blob = cv2.dnn.blobFromImage(img, 1 / 255.0, swapRB=True)
        pred = self.session.run(None, {self.input_name: blob})[0][0]     # (56, anchors)
        scores = pred[4:]
        cls = scores.argmax(0)
        best = scores[cls, np.arange(scores.shape[1])]
        m = best >= conf
        cx, cy, w, h = pred[0, m], pred[1, m], pred[2, m], pred[3, m]
        boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], 1)
        boxes = (boxes - np.float32([left, top, left, top])) / r
        H, W = image.shape[:2]
        boxes = np.clip(boxes, 0, [W, H, W, H]).astype(np.float32)
        return boxes, best[m].astype(np.float32), cls[m].astype(int)

    def __call__(self, image: np.ndarray, conf: float | None = None) -> Detections:
        boxes, best, cls = self._raw(image, self.conf if conf is None else conf)
        if not len(best):
            return Detections.empty()
        keep = nms(boxes, best, cls, self.iou)
        return Detections(boxes[keep], best[keep], cls[keep]).sorted()

    def propose(self, image: np.ndarray, conf: float, max_boxes: int = 40) -> Detections:
        """Index boxes whatever the card: class-agnostic NMS, strongest first."""
        boxes, best, cls = self._raw(image, conf)
        if not len(best):
            return Detections.empty()
        keep = nms(boxes, best, np.zeros_like(cls), self.iou)[:max_boxes]
        return Detections(boxes[keep], best[keep], cls[keep]).sorted()


class TorchDetector:
    """The `.pt` checkpoint through ultralytics (imports torch: slower to start)."""

    def __init__(self, path: str | Path, imgsz: int | None = None, conf: float = 0.25,
                 iou: float = 0.5) -> None:
        path = Path(path)
        if not path.is_file():
            raise ModelError(f"{path}: no such model file")
        os.environ.setdefault("YOLO_OFFLINE", "1")
        os.environ.setdefault("YOLO_VERBOSE", "False")
        try:
            from ultralytics import YOLO
            self.model = YOLO(str(path), task="detect")
            names = self.model.names
        except Exception as exc:
            raise ModelError(f"{path}: not a usable checkpoint ({str(exc).splitlines()[0][:160]})") \
                from None
        if len(names) != len(CLASS_NAMES):
            raise ModelError(f"{path}: {len(names)} classes, expected 52 cards")
        self.imgsz = imgsz or 320
        self.conf, self.iou = conf, iou

    def __call__(self, image: np.ndarray, conf: float | None = None) -> Detections:
        res = self.model.predict(image, imgsz=self.imgsz, conf=self.conf if conf is None else conf,
                                 iou=self.iou, device="cpu", verbose=False)[0]
        b = res.boxes
        return Detections(b.xyxy.numpy().astype(np.float32), b.conf.numpy().astype(np.float32),
                          b.cls.numpy().astype(int)).sorted()


def default_model(photo: bool = False) -> Path:
    """The shipped model a design starts from: see load_detector."""
    if not photo and LIVE_FINDER.is_file():
        return LIVE_FINDER
    return CARD_FINDER if CARD_FINDER.is_file() else DEFAULT_MODEL


def load_detector(path: str | Path | None = None, imgsz: int | None = None,
                  conf: float = 0.25, reader: str | Path | None = "auto",
                  photo: bool = False) -> Detector:
    """The detector a model file calls for.

    - a card finder (`.onnx` exported from a YOLO-OBB model): the card-reader design,
      with `corner_reader.onnx` beside it (or the reader path given);
    - an index model (`.onnx`): YOLO proposes index boxes and `index_reader.onnx`
      beside it (or the path given) reads them; reader=None keeps YOLO's own classes;
    - a `.pt` checkpoint: ultralytics, YOLO's own classes.
    Without a path: the card finder when it is shipped (its int8 copy for video frames),
    else the index model. Without
    imgsz, each model runs at its own size: the card finder at the size it was trained
    for, the index model at 640 px for photos (`photo`) and 320 px for video frames."""
    if path is None:
        path = default_model(photo)
    path = Path(path)
    if path.suffix == ".pt":
        return TorchDetector(path, imgsz or (640 if photo else 320), conf)
    # One session, read once: its metadata says which design the file is for.
    session = onnx_session(path, default_threads(), spin=True)
    if session.get_modelmeta().custom_metadata_map.get("task") == "obb":
        from .card_reader import CardFinder, CardReaderDetector, CornerReader
        if reader in ("auto", None):
            reader = path.with_name("corner_reader.onnx")
        # Photos: read the outline snapped onto the card's edges (a lone card's edges are
        # clear), found from three angles. Video frames of a pile: one look, the found and
        # the snapped outline pooled (a snapped side can catch the edge of a card below;
        # pooled, 10 rendered games gave precision 1.000 / recall 0.848 against 0.977 /
        # 0.824 from the found box alone).
        return CardReaderDetector(CardFinder(path, imgsz, session=session), CornerReader(reader),
                                  conf=conf,
                                  looks=PHOTO_LOOKS if photo else LIVE_LOOKS,
                                  turns=PHOTO_TURNS if photo else ())
    yolo = OnnxDetector(path, imgsz or (640 if photo else None), conf, session=session)
    if reader == "auto":
        reader = path.with_name("index_reader.onnx")
        if not reader.is_file():
            return yolo
    if reader is None:
        return yolo
    from .index_reader import IndexReader, TwoStageDetector
    return TwoStageDetector(yolo, IndexReader(reader), conf=conf)


class RotationTTA:
    """For still photos: detect on the picture turned by 0/90/180/270 degrees and pool the
    boxes (mapped back). Cards lie at any angle; each turn gives the reader another look."""

    def __init__(self, base: Detector, turns: tuple[int, ...] = (0, 1, 2, 3)) -> None:
        self.base, self.turns = base, turns
        self.imgsz = base.imgsz

    def __call__(self, image: np.ndarray, conf: float | None = None) -> Detections:
        H, W = image.shape[:2]
        parts = []
        for k in self.turns:
            det = self.base(np.ascontiguousarray(np.rot90(image, k)), conf)
            if not len(det):
                continue
            a, b, c, d = det.xyxy.T                      # corners in the turned picture
            # np.rot90 turns counter-clockwise; map both corners back, then re-order.
            if k == 1:
                xs, ys = (W - b, W - d), (a, c)
            elif k == 2:
                xs, ys = (W - a, W - c), (H - b, H - d)
            elif k == 3:
                xs, ys = (b, d), (H - a, H - c)
            else:
                xs, ys = (a, c), (b, d)
            x1, x2 = np.minimum(*xs), np.maximum(*xs)
            y1, y2 = np.minimum(*ys), np.maximum(*ys)
            parts.append(Detections(np.stack([x1, y1, x2, y2], 1).astype(np.float32),
                                    det.confidence / len(self.turns), det.class_id))
        if not parts:
            return Detections.empty()
        return Detections(np.concatenate([p.xyxy for p in parts]),
                          np.concatenate([p.confidence for p in parts]),
                          np.concatenate([p.class_id for p in parts])).sorted()
