"""Int8 quantisation of the exported detector for the live loop (ONNX Runtime's
static QDQ quantiser, calibrated on rendered pile scenes).

    python -m companion.detector.quantize models/cards.onnx models/cards-int8.onnx
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2

from .model import letterbox


class _Scenes:
    """Calibration frames for the quantiser: rendered scenes, letterboxed as at run time."""

    def __init__(self, input_name: str, imgsz: int, n: int) -> None:
        from ..render.scene import SceneRenderer
        r = SceneRenderer(imgsz, seed=77_777)
        self.blobs = [cv2.dnn.blobFromImage(letterbox(r.render(i).image, imgsz)[0], 1 / 255.0,
                                            swapRB=True) for i in range(n)]
        self.name = input_name
        self.i = 0

    def get_next(self):
        if self.i >= len(self.blobs):
            return None
        self.i += 1
        return {self.name: self.blobs[self.i - 1]}

    def rewind(self):
        self.i = 0


def quantize(src: Path, dst: Path, imgsz: int = 320, calib: int = 64) -> Path:
    import onnxruntime as ort
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process
    name = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).get_inputs()[0].name
    pre = dst.with_suffix(".pre.onnx")
    quant_pre_process(str(src), str(pre), skip_symbolic_shape=True)
    quantize_static(str(pre), str(dst), _Scenes(name, imgsz, calib), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    per_channel=True)
    pre.unlink(missing_ok=True)
    return dst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--imgsz", type=int, default=320)
    args = ap.parse_args()
    print(quantize(Path(args.src), Path(args.dst), args.imgsz))


if __name__ == "__main__":
    main()
