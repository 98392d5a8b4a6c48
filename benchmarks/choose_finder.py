"""Choose between live card finders (video's int8 copy) on the choice sets, by the rule
fixed before they ran.

    python benchmarks/choose_finder.py --candidate runs/finder/weights/best-int8.onnx
        [--baseline models/card_finder-int8.onnx] [--scenes 1500] [--skip rendered live slaps]

Measures both finders, one after the other, with the shipped readers, on the choice sets
only (never on `realdecks/test`, the real photos or a held-out seed):

- rendered: `--scenes` rendered piles of each choosing seed (31337, 31338), video
  settings. 1,500 each, not 300 as for readers: one int8 copy of a finder differs from
  another of the same float weights by up to ~20 whole top cards and ~8 misreads in
  2,179 (session 29, nine copies), so 300 piles tell finders apart by chance;
- live: drawn games 1-30 (20 s) and games whose faces are `realdecks/valid` cards,
  206-215 (40 s), through the `watch` pipeline (bench_live's films);
- slaps: no-pad games 801-820 (20 s): the camera's slap watcher takes the pile's place
  and size from the finder's boxes.

Then prints, part by part, both finders' figures and the verdict of
`companion.training.choose` (sessions 28 and 29 judged finder runs 7a-7c and their int8
copies by these sets by hand). About 20 minutes a finder on two cores; a part whose
folder is absent says so and is skipped. `benchmarks/bench_finder_boxes.py` is the
one-minute look to take first.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from choose_reader import VALID, live_part, rendered_part, report  # noqa: E402

from companion.detector.detections import ModelError  # noqa: E402
from companion.detector.model import LIVE_FINDER, load_detector  # noqa: E402
from companion.training.choose import Figures  # noqa: E402

RENDERED_SEEDS = (31337, 31338)
# (name, first seed, games, seconds, real faces from valid)
GAMES = (("drawn 1-30", 1, 30, 20.0, False), ("valid faces 206-215", 206, 10, 40.0, True))
NO_PAD = (("no pad 801-820", 801, 20, 20.0, False),)


def measure(det, parts: set[str], scenes: int) -> Figures:
    fig = Figures()
    if "rendered" in parts:
        rendered_part(fig, det, RENDERED_SEEDS, scenes)
    if "live" in parts:
        live_part(fig, det, GAMES)
    if "slaps" in parts:
        live_part(fig, det, NO_PAD, no_pad=True)
    return fig


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidate", type=Path, required=True,
                    help="the new live finder (.onnx, usually an int8 copy)")
    ap.add_argument("--baseline", type=Path, default=LIVE_FINDER,
                    help="the finder to beat (default: the shipped live one)")
    ap.add_argument("--scenes", type=int, default=1500,
                    help="rendered piles of each choosing seed (default 1500)")
    ap.add_argument("--skip", nargs="*", default=[], choices=["rendered", "live", "slaps"],
                    help="parts to leave out")
    args = ap.parse_args()
    for p in (args.candidate, args.baseline):
        if not p.is_file():
            raise SystemExit(f"{p}: no such finder file")
    if args.scenes < 1:
        raise SystemExit("--scenes must be at least 1")
    parts = {"rendered", "live", "slaps"} - set(args.skip)
    if not VALID.is_dir() and "live" in parts:
        print(f"{VALID}: not found (the real sets live outside the repository); the "
              "real-face games are skipped")
    try:        # both loaded first: a wrong file stops it before twenty minutes of work
        dets = {"baseline": load_detector(args.baseline),
                "candidate": load_detector(args.candidate)}
    except ModelError as exc:
        raise SystemExit(f"error: {exc}")
    figures = {}
    for label, path in (("baseline", args.baseline), ("candidate", args.candidate)):
        print(f"{label}: {path}", flush=True)
        figures[label] = measure(dets[label], parts, args.scenes)
    report(figures)


if __name__ == "__main__":
    main()
