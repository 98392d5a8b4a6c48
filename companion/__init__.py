"""The ratscrew table companion: a pure referee core with camera, pad, speech and
screen adapters around it."""

__version__ = "0.1.0"
