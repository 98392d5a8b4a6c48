"""The live finder's boxes against the films' true card outlines, card by card.

    python benchmarks/bench_finder_boxes.py --faces real --faces-split valid --first-seed 206
    python benchmarks/bench_finder_boxes.py --model runs/finder/weights/best-int8.onnx

For each card played in `--games` rendered games (the films of `bench_live.py`, same
seeds), the pile region `--after` frames after the card came to rest is read two ways
through the live settings: as the live detector reads it (the finder's boxes), and with
the film's true outline of that card alone. It prints how many are named right and
wrong each way, and how many of the finder's best boxes lie at IoU >= 0.9 with the true
outline. The gap between the two readings is what a better finder can win; a minute
where the games through the whole live loop take ten (session 28, valid-face games
206-215, 407 cards: the shipped finder's boxes 318 right / 4 wrong, 65 of them at IoU >=
0.9; the true outline 396 / 3).

Frames are drawn straight from the film (no video compression), so they differ from
`bench_live.py`'s by its codec.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_live import film_of, real_faces  # noqa: E402

from companion.detector.card_reader import _rotated_iou  # noqa: E402
from companion.detector.model import load_detector  # noqa: E402
from companion.engine.cards import CLASS_NAMES  # noqa: E402
from companion.live.pipeline import Roi  # noqa: E402
from companion.render.video import _cls_of  # noqa: E402
from companion.training.evaluate import top1  # noqa: E402
from companion.training.film_frames import face_outline, frame_at  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=10, help="games (default 10)")
    ap.add_argument("--first-seed", type=int, default=206, help="first game's seed (206)")
    ap.add_argument("--seconds", type=float, default=40.0, help="film length (40)")
    ap.add_argument("--after", type=int, default=4,
                    help="frames after a card's rest frame it is read at (default 4)")
    ap.add_argument("--model", default=None, help="live finder (.onnx; default the shipped)")
    ap.add_argument("--faces", choices=("drawn", "real"), default="real",
                    help="the films' faces: a drawn deck, or real photos (default)")
    ap.add_argument("--faces-split", choices=("test", "valid"), default="valid",
                    help="with --faces real: the realdecks split (valid: a choice set)")
    args = ap.parse_args()
    if args.games < 1 or args.after < 0:
        raise SystemExit("--games must be at least 1 and --after at least 0")
    det = load_detector(args.model)
    photos, finder = real_faces(args.faces_split) if args.faces == "real" else (None, None)
    live = {"right": 0, "wrong": 0, "none": 0}
    true = dict(live)
    tight, wrong = 0, []
    for seed in range(args.first_seed, args.first_seed + args.games):
        film = film_of(seed, args.seconds, photos, finder)
        roi = Roi.central(film.W, film.H).clip(film.W, film.H)
        end = film.timeline.duration - (args.after + 1) / film.fps
        cards = [c for c in film.timeline.cards if c.t_rest < end]
        for c in tqdm(cards, desc=f"game {seed}", unit="card", leave=False):
            name = CLASS_NAMES[_cls_of(c.name)]
            f = film.frame_of(c.t_rest) + args.after
            frame, _ = frame_at(film, f / film.fps, noise=f)
            region = roi.crop(frame)
            outline = (face_outline(c.face, film._card_H(c, c.t_rest))
                       - (roi.x, roi.y)).astype(np.float32)
            got, _ = top1(det(region))
            live[_verdict(got, name)] += 1
            if got and got != name:
                wrong.append(f"{seed}@{f}: {name} read {got}")
            # The true outline alone, read as the detector reads each outline.
            _, _, found = det._read_all(region, [outline], det.conf)[0]
            true[_verdict(CLASS_NAMES[found[0][2]] if found else None, name)] += 1
            boxes = det._find(region)
            tight += bool(boxes) and max(_rotated_iou(outline, b) for b in boxes) >= 0.9
    n = sum(live.values())
    print(f"{n} cards, {args.after} frames after each came to rest "
          f"(games {args.first_seed}-{args.first_seed + args.games - 1}, "
          f"{args.faces} faces{' of ' + args.faces_split if args.faces == 'real' else ''})")
    print(f"  the finder's boxes (live): {live['right']} right, {live['wrong']} wrong, "
          f"{live['none']} named nothing")
    print(f"  the true outline alone:    {true['right']} right, {true['wrong']} wrong, "
          f"{true['none']} named nothing")
    print(f"  finder's best box at IoU >= 0.9 with the true outline: {tight} of {n}")
    if wrong:
        print("  wrong (live): " + "; ".join(wrong))


def _verdict(got: str | None, card: str) -> str:
    return "none" if got is None else "right" if got == card else "wrong"


if __name__ == "__main__":
    main()
