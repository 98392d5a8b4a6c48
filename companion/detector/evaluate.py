"""`companion eval`: the detector's figures, measured honestly.

- Real photos (default ../shared/realcards, evaluation only, never trained on):
  top-1 card identity per photo, the way the before-stop hook scores it (the
  card with the largest summed confidence), and the confusion for each miss.
- A held-out rendered set (a seed never used for training): the top card's
  identity (what the referee needs, and the one figure both designs share), its
  per-class recall and the 6/9 and suit confusions; and for the index design,
  mAP50 of the index boxes.
- Inference time per frame on this machine: ONNX Runtime and torch, one run.
"""

from __future__ import annotations

import collections
import csv
import time
from pathlib import Path

import numpy as np

from ..engine.cards import CLASS_NAMES
from .model import Detections, Detector

REAL_DEFAULT = Path(__file__).resolve().parents[3] / "shared" / "realcards"


def canonical(name: str) -> str:
    name = name.strip()
    if name[:1] in "Tt":
        name = "10" + name[1:]
    return name[:-1].upper() + name[-1:].lower()


def top1(det: Detections) -> tuple[str | None, float]:
    score: collections.Counter = collections.Counter()
    for n, c in zip(det.names, det.confidence):
        score[n] += float(c)
    if not score:
        return None, 0.0
    card, s = score.most_common(1)[0]
    return card, s


def eval_real(detector: Detector, folder: Path, conf: float = 0.1) -> dict:
    import cv2
    labels_csv = folder / "labels.csv"
    if labels_csv.is_file():
        with labels_csv.open() as fh:
            rows = [(folder / r["file"], canonical(r["card"])) for r in csv.DictReader(fh)]
    else:
        rows = [(p, canonical(p.stem)) for p in sorted(folder.glob("*.jpg"))]
    misses, correct = [], 0
    for path, truth in rows:
        img = cv2.imread(str(path))
        if img is None:
            misses.append((path.name, truth, "unreadable"))
            continue
        got, _ = top1(detector(img, conf))
        if got == truth:
            correct += 1
        else:
            misses.append((path.name, truth, got or "nothing"))
    return {"photos": len(rows), "correct": correct, "misses": misses}


def _iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of each box in a (N,4) with each in b (M,4)."""
    x1 = np.maximum(a[:, None, 0], b[None, :, 0])
    y1 = np.maximum(a[:, None, 1], b[None, :, 1])
    x2 = np.minimum(a[:, None, 2], b[None, :, 2])
    y2 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area = lambda x: (x[:, 2] - x[:, 0]) * (x[:, 3] - x[:, 1])
    return inter / (area(a)[:, None] + area(b)[None, :] - inter + 1e-9)


def eval_rendered(detector: Detector, images: int = 300, seed: int = 90_210, size: int = 320,
                  progress: bool = True) -> dict:
    """mAP50 and confusions on scenes from a seed no training set uses."""
    from tqdm import tqdm

    from ..render.scene import SceneRenderer
    r = SceneRenderer(size, seed)
    per_class: dict[int, list[tuple[float, bool]]] = collections.defaultdict(list)
    n_gt = collections.Counter()
    hit = collections.Counter()
    confusion: collections.Counter = collections.Counter()
    top_n, top_hit = collections.Counter(), collections.Counter()
    top_confusion: collections.Counter = collections.Counter()
    whole = [0, 0]                        # top cards at least 90 % visible: seen, named
    for i in tqdm(range(images), desc="rendered eval", disable=None if progress else True,
                  leave=False):
        scene = r.render(i)
        det = detector(scene.image, 0.01)
        # The top card, when it is face up and one of its indices can be read.
        top = scene.cards[0] if scene.cards else None
        if top is not None and top.cls is not None and any(top.index_visible):
            got, _ = top1(det.filter(det.confidence >= 0.25))
            got_cls = CLASS_NAMES.index(got) if got else -1
            top_n[top.cls] += 1
            top_hit[top.cls] += got_cls == top.cls
            top_confusion[(top.cls, got_cls)] += 1
            if top.visible >= 0.9:        # whole: no hand over it, nothing out of frame
                whole[0] += 1
                whole[1] += got_cls == top.cls
        gt = np.array([l[1:] for l in scene.labels], np.float32).reshape(-1, 4)
        gcls = np.array([l[0] for l in scene.labels], int)
        for c in gcls:
            n_gt[int(c)] += 1
        used = np.zeros(len(gt), bool)
        ious = _iou(det.xyxy, gt) if len(gt) and len(det) else np.zeros((len(det), len(gt)))
        for k in range(len(det)):           # detections come sorted by confidence
            c = int(det.class_id[k])
            tp = False
            if len(gt):
                same = (gcls == c) & ~used
                cand = np.where(same, ious[k], 0)
                j = int(cand.argmax())
                if cand[j] >= 0.5:
                    used[j] = True
                    tp = True
            per_class[c].append((float(det.confidence[k]), tp))
        # Confusions: each labelled index against the detection that overlaps it most.
        if len(gt) and len(det):
            keep = det.confidence >= 0.25
            if keep.any():
                iou_k = ious[keep]
                for j in range(len(gt)):
                    k = int(iou_k[:, j].argmax())
                    if iou_k[k, j] >= 0.5:
                        got = int(det.class_id[keep][k])
                        confusion[(int(gcls[j]), got)] += 1
                        hit[int(gcls[j])] += got == gcls[j]
    aps = {}
    for c, total in n_gt.items():
        dets = sorted(per_class.get(c, []), key=lambda x: -x[0])
        tps = np.array([d[1] for d in dets], float)
        if not len(tps):
            aps[c] = 0.0
            continue
        ctp, cfp = np.cumsum(tps), np.cumsum(1 - tps)
        rec, prec = ctp / total, ctp / np.maximum(ctp + cfp, 1e-9)
        mrec = np.concatenate([[0], rec, [1]])
        mpre = np.concatenate([[1], prec, [0]])
        mpre = np.maximum.accumulate(mpre[::-1])[::-1]
        aps[c] = float(np.sum((mrec[1:] - mrec[:-1]) * mpre[1:]))
    def kinds(conf: collections.Counter) -> tuple[int, int, int, int]:
        named = {k: v for k, v in conf.items() if k[1] >= 0}
        sixnine = sum(v for (a, b), v in named.items()
                      if {CLASS_NAMES[a][:-1], CLASS_NAMES[b][:-1]} == {"6", "9"})
        suit = sum(v for (a, b), v in named.items()
                   if CLASS_NAMES[a][:-1] == CLASS_NAMES[b][:-1] and a != b)
        other = sum(v for (a, b), v in named.items() if a != b) - sixnine - suit
        missed = sum(v for (a, b), v in conf.items() if b < 0)
        return sixnine, suit, other, missed

    sixnine, suit, other, _ = kinds(confusion)
    t69, tsuit, tother, tmissed = kinds(top_confusion)
    name = lambda c: CLASS_NAMES[c] if c >= 0 else "nothing"
    return {"images": images, "boxes": sum(n_gt.values()),
            "map50": float(np.mean(list(aps.values()))) if aps else 0.0,
            "recall": {CLASS_NAMES[c]: hit[c] / n for c, n in n_gt.items()},
            "confusion_6_9": sixnine, "confusion_suit": suit, "confusion_other": other,
            "top_confusions": [(CLASS_NAMES[a], CLASS_NAMES[b], v) for (a, b), v in
                               confusion.most_common() if a != b][:10],
            "top_cards": sum(top_n.values()), "top_correct": sum(top_hit.values()),
            "top_whole": whole[0], "top_whole_correct": whole[1],
            "top_recall": {CLASS_NAMES[c]: top_hit[c] / n for c, n in top_n.items()},
            "top_6_9": t69, "top_suit": tsuit, "top_other": tother, "top_missed": tmissed,
            "top_misreads": [(name(a), name(b), v) for (a, b), v in
                             top_confusion.most_common() if a != b][:10]}


def time_backends(onnx_path: Path, pt_path: Path | None, imgsz: int, runs: int = 100,
                  finder: Path | None = None, live_finder: Path | None = None) -> dict:
    """Median time per 320 px frame of each design and backend, measured in one run, over
    20 different rendered scenes (a design's cost depends on how many cards it finds and
    how many it must read again)."""
    from ..render.scene import SceneRenderer
    from .model import OnnxDetector, TorchDetector, load_detector
    r = SceneRenderer(imgsz, 4242)
    frames = [r.render(i).image for i in range(20)]
    out = {}
    backends = []
    if live_finder and live_finder.is_file():
        backends.append(("card finder int8+corner reader (onnx, video)",
                         lambda: load_detector(live_finder)))
    if finder and finder.is_file():
        backends.append(("card finder+corner reader (onnx)", lambda: load_detector(finder)))
    backends.append(("index yolo (onnx)", lambda: OnnxDetector(onnx_path, imgsz)))
    reader = onnx_path.with_name("index_reader.onnx")
    if reader.is_file():
        from .index_reader import IndexReader, TwoStageDetector
        backends.append(("index yolo+reader (onnx)", lambda: TwoStageDetector(
            OnnxDetector(onnx_path, imgsz), IndexReader(reader))))
    if pt_path and pt_path.is_file():
        backends.append(("index yolo (torch)", lambda: TorchDetector(pt_path, imgsz)))
    ft = finder.with_suffix(".pt") if finder else None
    if ft and ft.is_file():
        backends.append(("card finder alone (torch)", lambda: _TorchFinder(ft)))
    for name, make in backends:
        det = make()
        for frame in frames[:10]:
            det(frame)
        times = []
        for i in range(runs):
            frame = frames[i % len(frames)]
            t0 = time.perf_counter()
            det(frame)
            times.append((time.perf_counter() - t0) * 1000)
        out[name] = sorted(times)[len(times) // 2]       # median: robust to a busy moment
    return out


class _TorchFinder:
    """The card finder's checkpoint through ultralytics, for the torch timing only."""

    def __init__(self, path: Path) -> None:
        from .train import offline
        offline()
        from ultralytics import YOLO
        self.model = YOLO(str(path))

    def __call__(self, image):
        return self.model.predict(image, imgsz=256, device="cpu", verbose=False)
