"""`companion train`: ultralytics training with offline-safe settings.

The model is built from a .yaml (no weights can be downloaded); plots and AMP
are off because both reach for the network (fonts, a checkpoint for the AMP
check). Geometric augmentation that would break card indices is off: no
flips (a mirrored 7 is not a card), no rotation (the renderer already turns
cards, and rotating a box loosens it), no mosaic (it cuts indices in half and
keeps the cut box). The renderer provides the variety instead.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

HYPER = dict(
    optimizer="AdamW", lr0=0.002, lrf=0.05, warmup_epochs=1.0, weight_decay=0.0005,
    mosaic=0.0, close_mosaic=0, fliplr=0.0, flipud=0.0, degrees=0.0, shear=0.0,
    perspective=0.0, translate=0.1, scale=0.25, hsv_h=0.015, hsv_s=0.5, hsv_v=0.4,
    erasing=0.0, plots=False, amp=False, pretrained=False, cache=False, patience=100,
)


def offline() -> None:
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_VERBOSE", "False")


def train_settings(model: str, lr0: float | None = None,
                   warmup_epochs: float | None = None) -> dict:
    """The ultralytics settings for a run from `model` (a .yaml or a .pt to fine-tune)."""
    hyper = dict(HYPER)
    if lr0:
        hyper["lr0"] = lr0
    if warmup_epochs is not None:
        hyper["warmup_epochs"] = warmup_epochs
    if str(model).endswith(".pt"):
        # pretrained=False would make ultralytics rebuild the net and drop the checkpoint's
        # weights: a "fine-tune" would start from scratch.
        hyper.pop("pretrained")
    return hyper


def train(data: str, epochs: int, imgsz: int, out: str = "runs/cards", model: str = "yolo11n.yaml",
          batch: int = 32, workers: int = 2, resume: bool = False, device: str = "cpu",
          save_period: int = 1, lr0: float | None = None,
          warmup_epochs: float | None = None) -> Path:
    """Train (or resume) and return the path of best.pt."""
    offline()
    from ultralytics import YOLO

    run = Path(out)
    last = run / "weights" / "last.pt"
    if resume:
        if not last.exists():
            raise FileNotFoundError(f"{last}: nothing to resume")
        YOLO(str(last)).train(resume=True)
    else:
        if run.exists():
            shutil.rmtree(run)
        hyper = train_settings(model, lr0, warmup_epochs)
        YOLO(model).train(data=str(data), epochs=epochs, imgsz=imgsz, batch=batch,
                          workers=workers, device=device, project=str(run.parent.resolve()),
                          name=run.name, exist_ok=True, save_period=save_period, **hyper)
    return run / "weights" / "best.pt"
