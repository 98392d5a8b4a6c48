"""Export a trained checkpoint to ONNX for the live loop (ultralytics' exporter)."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..detector.detections import ModelError
from .train_finder import offline


def export_onnx(weights: str | Path, out: str | Path, imgsz: int = 320, dynamic: bool = True) -> Path:
    """Write `out` (.onnx). Dynamic shapes let stills run larger than the live loop's size."""
    offline()
    from ultralytics import YOLO
    weights, out = Path(weights), Path(out)
    if not weights.is_file():
        raise ModelError(f"{weights}: no such checkpoint")
    # simplify needs onnxslim, which ultralytics would try to pip-install: keep it off.
    made = YOLO(str(weights)).export(format="onnx", imgsz=imgsz, dynamic=dynamic, simplify=False,
                                     opset=17, device="cpu")
    out.parent.mkdir(parents=True, exist_ok=True)
    if Path(made).resolve() != out.resolve():
        shutil.move(str(made), out)
    return out
