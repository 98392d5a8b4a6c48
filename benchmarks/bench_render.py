"""Renderer speed: scene images/s (dataset generation, all cores) and video frames/s.

    python benchmarks/bench_render.py [--images 600] [--seconds 20]

Targets on the 2-core machine: >= 50 scene images/s, >= 60 video frames/s
(1280x720, 30 fps, encoded to mp4).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import cv2

from companion.engine import PRESETS
from companion.training.dataset import make_dataset
from companion.render.video import GameFilm


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=600)
    ap.add_argument("--seconds", type=float, default=20.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        make_dataset(Path(tmp) / "ds", args.images, seed=0, progress=False)
        dt = time.perf_counter() - t0
        print(f"scenes: {args.images} images (320x320, labels, JPEG) in {dt:.1f} s = "
              f"{args.images / dt:.1f} images/s (target >= 50)")
        t0 = time.perf_counter()
        film = GameFilm(PRESETS["challenge"], ["Ada", "Ben", "Cho"], seed=1, seconds=args.seconds)
        setup = time.perf_counter() - t0
        t0 = time.perf_counter()
        n = sum(1 for _ in film.frames())
        raw = n / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        info = film.write(Path(tmp) / "g.mp4", progress=False)
        enc = info["frames"] / (time.perf_counter() - t0)
        print(f"video: {n} frames 1280x720 rendered at {raw:.0f} frames/s, "
              f"{enc:.0f} frames/s with mp4 encoding (target >= 60); setup {setup:.1f} s")
        print(f"20-second sample video + 200-image sample dataset: see `companion render-game "
              f"--seconds 20` and `companion dataset --images 200` (cv2 threads: "
              f"{cv2.getNumThreads()})")


if __name__ == "__main__":
    main()
