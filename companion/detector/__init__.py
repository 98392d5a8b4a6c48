"""The card detector: training, export and inference (ONNX Runtime or ultralytics)."""
