"""The card detector, inference only: a card finder and a corner reader through ONNX Runtime
(`model.load_detector`). Training, harvesting, quantisation and evaluation: `companion/training/`."""
