"""Int8 quantisation for the live loop (ONNX Runtime's static QDQ quantiser): the card
finder (a YOLO export, calibrated on rendered pile scenes, its head's output kept float)
or the corner reader (calibrated on corner crops of rendered piles, its heads kept float).

    python -m companion.training.quantize models/card_finder.onnx models/card_finder-int8.onnx
    python -m companion.training.quantize models/corner_reader.onnx models/corner_reader-int8.onnx

Quantising the whole graph destroys the detector: the head's last convolutions and its
box decoding (distances times strides, angles, sigmoids) mix values of very different
ranges, and int8 rounds the boxes away (index model: mAP50 0 when fully quantised). So
the last layer of each head branch and everything after it stay float; the backbone,
the neck and the inner head convolutions (where nearly all the time goes) are int8.
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path

import cv2

from ..detector.detections import ModelError, letterbox

# Head nodes that may be int8: the inner convolutions of the box, class and angle
# branches (cv2/cv3/cv4 .i.0 and .i.1 in ultralytics' exported names).
INNER_HEAD = re.compile(r"/cv[234]\.\d+/cv[234]\.\d+\.[01]/")


class _Batches:
    """Calibration input for the quantiser, one blob at a time (its CalibrationDataReader)."""

    def __init__(self, input_name: str, blobs: list) -> None:
        self.name, self.blobs, self.i = input_name, blobs, 0

    def get_next(self):
        if self.i >= len(self.blobs):
            return None
        self.i += 1
        return {self.name: self.blobs[self.i - 1]}

    def rewind(self):
        self.i = 0


def _scenes(input_name: str, imgsz: int, n: int, card_range: tuple[float, float]) -> _Batches:
    """Calibration frames for the finder: rendered scenes, letterboxed as at run time."""
    from ..render.scene import SceneRenderer
    r = SceneRenderer(max(imgsz, 320), seed=77_777, card_range=card_range)
    return _Batches(input_name, [cv2.dnn.blobFromImage(letterbox(r.render(i).image, imgsz)[0],
                                                       1 / 255.0, swapRB=True) for i in range(n)])


def _corners(input_name: str, scenes: int, seed: int = 77_777) -> _Batches:
    """Calibration batches for the corner reader: the corner crops of rendered piles, cut
    as the reader sees them in training (a finder's imperfect box, every reading)."""
    import numpy as np
    from ..detector.detections import to_blob
    from ..render.scene import SceneRenderer
    from .corner_reader import labelled_crops
    r = SceneRenderer(384, seed=seed)
    rng = np.random.default_rng(seed)
    crops = []
    for i in range(scenes):
        scene = r.render(i)
        for c in scene.cards:
            if c.visible >= 0.3:
                crops += labelled_crops(scene.image, c.quad, c.cls, c.index_visible, rng)[0]
    return _Batches(input_name, [to_blob(crops[k:k + 32]) for k in range(0, len(crops), 32)])


def is_reader(session) -> bool:
    """A corner reader (its first output the heads' logits), not a card finder."""
    return session.get_outputs()[0].name == "heads"


def float_nodes(graph) -> list[str]:
    """Names of the nodes kept float: the last module (the head) but its inner convs."""
    names = [n.name for n in graph.node if n.name.startswith("/model.")]
    if not names:
        raise ModelError("not an ultralytics export (no /model.N/ nodes): cannot find its head")
    head = max(int(n.split("/")[1].split(".")[1]) for n in names)
    prefix = f"/model.{head}/"
    return [n.name for n in graph.node
            if n.name.startswith(prefix) and not INNER_HEAD.search(n.name)]


def quantize(src: Path, dst: Path, calib: int = 128) -> Path:
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process
    sess = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"])
    meta = sess.get_modelmeta().custom_metadata_map
    inp = sess.get_inputs()[0]
    reader = is_reader(sess)
    if reader:
        data = _corners(inp.name, calib)
    else:
        size = meta.get("imgsz", "").strip("[]").split(",")[0]
        imgsz = int(size) if size else 320
        # The finder (task obb) sees cards down to 18 % of the frame, as it was trained.
        card_range = (0.18, 0.95) if meta.get("task") == "obb" else (0.32, 0.95)
        data = _scenes(inp.name, imgsz, calib, card_range)
    with tempfile.TemporaryDirectory() as tmp:
        pre = Path(tmp) / "pre.onnx"
        quant_pre_process(str(src), str(pre), skip_symbolic_shape=True)
        graph = onnx.load(str(pre)).graph
        # The reader's heads (one small Gemm) stay float: its logits are compared across
        # 20 outputs, and the layer costs nothing.
        keep = [n.name for n in graph.node if n.op_type == "Gemm"] if reader else \
            float_nodes(graph)
        quantize_static(str(pre), str(dst), data,
                        quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=keep,
                        reduce_range=True)
    if reader:
        # The copy reads with its source's features, so a deck enrolled with the float
        # reader is valid on it (deck.enrolled.reader_id).
        from ..deck.enrolled import reader_id
        model = onnx.load(str(dst))
        onnx.helper.set_model_props(model, {**{p.key: p.value for p in model.metadata_props},
                                            "source_reader": reader_id(src)})
        onnx.save(model, str(dst))
    return dst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", help="float ONNX model exported by `companion train --export`")
    ap.add_argument("dst", help="where to write the int8 model")
    ap.add_argument("--calib", type=int, default=128, help="rendered calibration scenes (128)")
    args = ap.parse_args()
    try:
        print(quantize(Path(args.src), Path(args.dst), args.calib))
    except ModelError as exc:
        raise SystemExit(f"error: {args.src}: {exc}")


if __name__ == "__main__":
    main()
