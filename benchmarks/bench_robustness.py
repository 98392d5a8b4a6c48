"""The real photos under other cameras and light: a proxy for decks and cameras never seen.

    python benchmarks/bench_robustness.py [--real ../shared/realcards] [--only NAME ...]

Each photo of `../shared/realcards` (evaluation only: nothing here trains on them) is
changed the way another camera or room would change it (smaller, out of focus, motion
blur, sensor noise, heavy JPEG, warm or dim light, an oblique camera, turned a quarter)
and read again, in the photo settings (`companion detect`) and in the video settings
(`watch`: one look, int8 finder). Top-1 identity per condition, printed as counts.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from companion.training.evaluate import canonical, top1
from companion.detector.model import default_model, load_detector


def _resize(im: np.ndarray, side: int) -> np.ndarray:
    f = side / max(im.shape[:2])
    return cv2.resize(im, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)


def _motion(im: np.ndarray, k: int = 15) -> np.ndarray:
    ker = np.zeros((k, k), np.float32)
    ker[k // 2] = 1.0 / k                   # a horizontal smear of k pixels
    return cv2.filter2D(im, -1, ker)


def _jpeg(im: np.ndarray, quality: int) -> np.ndarray:
    return cv2.imdecode(cv2.imencode(".jpg", im, [cv2.IMWRITE_JPEG_QUALITY, quality])[1], 1)


def _oblique(im: np.ndarray, a: float = 0.12) -> np.ndarray:
    """The far edge narrowed by 2a of the width: a camera looking at the table slantwise."""
    h, w = im.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = np.float32([[w * a, 0], [w * (1 - a), 0], [w, h], [0, h]])
    return cv2.warpPerspective(im, cv2.getPerspectiveTransform(src, dst), (w, h),
                               borderMode=cv2.BORDER_REPLICATE)


def _noise(im: np.ndarray, sigma: float = 15.0) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.clip(im + rng.normal(0, sigma, im.shape), 0, 255).astype(np.uint8)


CONDITIONS = {
    "as taken": lambda im: im,
    "640 px": lambda im: _resize(im, 640),
    "320 px": lambda im: _resize(im, 320),
    "out of focus": lambda im: cv2.GaussianBlur(im, (0, 0), 2.5),
    "motion blur": _motion,
    "sensor noise": _noise,
    "jpeg q15": lambda im: _jpeg(im, 15),
    "warm light": lambda im: np.clip(im * np.float32([0.6, 0.9, 1.15]), 0, 255).astype(np.uint8),
    "dim light": lambda im: np.clip(255 * (im / 255.0) ** 1.8 * 0.6, 0, 255).astype(np.uint8),
    "oblique": _oblique,
    "quarter turn": lambda im: np.ascontiguousarray(np.rot90(im)),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--real", default="../shared/realcards",
                    help="folder of real photos named by card, with labels.csv")
    ap.add_argument("--only", nargs="+", choices=list(CONDITIONS), metavar="NAME",
                    help="these conditions only (default: all)")
    args = ap.parse_args()
    folder = Path(args.real)
    labels = folder / "labels.csv"
    if not labels.is_file():
        sys.exit(f"{labels}: not found; the real photos live outside the repository "
                 "(../shared/realcards), so this benchmark needs them beside it")
    with labels.open() as fh:
        rows = [(folder / r["file"], canonical(r["card"])) for r in csv.DictReader(fh)]
    photos = [(cv2.imread(str(p)), truth, p.name) for p, truth in rows]
    for img, _, name in photos:
        if img is None:
            sys.exit(f"{folder / name}: not a readable image")
    settings = {"photo": load_detector(default_model(photo=True), photo=True),
                "video": load_detector(default_model(photo=False))}
    conditions = args.only or list(CONDITIONS)
    print(f"{len(photos)} photos; top-1 identity (photo settings / video settings)")
    bar = tqdm(total=len(conditions) * len(settings) * len(photos), unit="photo")
    for cond in conditions:
        bar.set_description(cond)
        changed = [(CONDITIONS[cond](img), truth) for img, truth, _ in photos]
        counts, misses = {}, {}
        for label, det in settings.items():
            ok, miss = 0, []
            for img, truth in changed:
                got, _ = top1(det(img))        # at the threshold the product uses
                ok += got == truth
                if got != truth:
                    miss.append(f"{truth}->{got or 'nothing'}")
                bar.update()
            counts[label], misses[label] = ok, miss
        bar.write(f"{cond:13s} {counts['photo']:3d} / {counts['video']:3d}   photo misses: "
                  f"{' '.join(misses['photo']) or '-'}; video misses: "
                  f"{' '.join(misses['video'][:6]) or '-'}"
                  f"{' ...' if len(misses['video']) > 6 else ''}")
    bar.close()

if __name__ == "__main__":
    main()
