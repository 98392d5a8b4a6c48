"""Choose between corner readers on the choice sets, by the rule fixed before they ran.

    python benchmarks/choose_reader.py --candidate runs/reader/corner_reader.onnx
        [--baseline models/corner_reader.onnx] [--skip photos rendered live]

Measures both readers, one after the other, on the choice sets only (never on
`realdecks/test`, the real photos or a held-out seed):

- photos: `../shared/realdecks/valid` on a plain table, photographed twice close in a
  webcam's frame (seed 7) and once small in it (20-32 % of its height, seed 8), in the
  photo settings (`companion eval`'s rows on the valid split);
- rendered: 300 rendered piles of each choosing seed (31337, 31338), video settings;
- live: drawn games 1-10 and 11-20 (20 s), and games whose faces are `realdecks/valid`
  cards, 201-205 (30 s), through the `watch` pipeline (bench_live's films).

Then prints, part by part, both readers' figures and the verdict of
`companion.training.choose`:
more right and no more wrong in photos, no more misreads and at most one fewer whole top
card on each rendered seed, no fewer flips and no more false flips in each set of games.
Takes about 40 minutes on two cores; a part whose folder is absent says so and is
skipped.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_live import SHARED, run_game, score, score_slaps  # noqa: E402

from companion.detector.model import CORNER_READER, load_detector  # noqa: E402
from companion.training import evaluate as ev  # noqa: E402
from companion.training.choose import Figures, ships, verdict  # noqa: E402

VALID = SHARED / "realdecks" / "valid"
RENDERED_SEEDS = (31337, 31338)
# (name, first seed, games, seconds, real faces from valid)
GAMES = (("drawn 1-10", 1, 10, 20.0, False), ("drawn 11-20", 11, 10, 20.0, False),
         ("valid faces 201-205", 201, 5, 30.0, True))


def measure(reader: Path, parts: set[str]) -> Figures:
    fig = Figures()
    if "photos" in parts:
        det = load_detector(photo=True, reader=reader)
        for name, (times, size, seed) in ev.PHOTO_SETS.items():   # eval's rows, on valid
            r = ev.eval_realdecks(det, VALID, conf=det.conf, webcam=times, seed=seed, size=size)
            fig.photos[name] = (r["right"], r["wrong"], r["unclear"])
            print(f"  photos, {name}: {r['right']} right, {r['wrong']} wrong, {r['unclear']} "
                  "unclear", flush=True)
    if "rendered" in parts:
        rendered_part(fig, load_detector(reader=reader), RENDERED_SEEDS, 300)
    if "live" in parts:
        live_part(fig, load_detector(reader=reader), GAMES)
    return fig


def rendered_part(fig: Figures, det, seeds, scenes: int) -> None:
    """Whole top cards named and misreads on `scenes` rendered piles of each seed (video
    settings)."""
    for seed in seeds:
        r = ev.eval_rendered(det, scenes, seed=seed, size=320)
        misreads = r["top_6_9"] + r["top_suit"] + r["top_other"]
        fig.rendered[str(seed)] = (r["top_whole_correct"], r["top_whole"], misreads)
        print(f"  rendered {seed}: whole top cards {r['top_whole_correct']} of "
              f"{r['top_whole']}, {misreads} misread", flush=True)


def live_part(fig: Figures, det, games, no_pad: bool = False) -> None:
    """Each set of games through the `watch` pipeline (bench_live's films): flips matched
    and false, and with no_pad the camera's slaps too. A set of real-face games is
    skipped when `realdecks/valid` is absent."""
    photos = finder = None
    with tempfile.TemporaryDirectory() as tmp:
        for name, first, n, seconds, real in games:
            if real and not VALID.is_dir():
                print(f"  live, {name}: skipped ({VALID} not found)")
                continue
            if real and photos is None:
                from companion.render.photodeck import real_photos
                photos = real_photos(None, VALID)
                finder = load_detector(photo=True).finder
            matched = true = called = right = slaps = invented = 0
            for seed in range(first, first + n):
                truth, calls, _, _ = run_game(det, seed, seconds, Path(tmp),
                                              photos=photos if real else None,
                                              finder=finder if real else None, no_pad=no_pad)
                s = score(truth, calls, 30.0)
                matched, true, called = matched + s["matched"], true + s["true"], \
                    called + s["called"]
                if no_pad:
                    ss = score_slaps(truth, calls, 30.0)
                    right, slaps, invented = right + ss["right"], slaps + ss["slaps"], \
                        invented + ss["invented"]
            fig.live[name] = (matched, true, called - matched)
            print(f"  live, {name}: {matched} of {true} flips, {called - matched} false",
                  flush=True)
            if no_pad:
                fig.slaps[name] = (right, slaps, invented)
                print(f"  slaps, {name}: {right} of {slaps} judged right, {invented} invented",
                      flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidate", type=Path, required=True, help="the new reader (.onnx)")
    ap.add_argument("--baseline", type=Path, default=CORNER_READER,
                    help="the reader to beat (default: the shipped one)")
    ap.add_argument("--skip", nargs="*", default=[], choices=["photos", "rendered", "live"],
                    help="parts to leave out")
    args = ap.parse_args()
    for p in (args.candidate, args.baseline):
        if not p.is_file():
            raise SystemExit(f"{p}: no such reader file")
    parts = {"photos", "rendered", "live"} - set(args.skip)
    if not VALID.is_dir() and parts & {"photos", "live"}:
        print(f"{VALID}: not found (the real sets live outside the repository); the photos "
              "and the real-face games are skipped")
        parts -= {"photos"}
    figures = {}
    for label, path in (("baseline", args.baseline), ("candidate", args.candidate)):
        print(f"{label}: {path}", flush=True)
        figures[label] = measure(path, parts)
    report(figures)


def report(figures: dict[str, Figures]) -> None:
    """Print the rule's verdict on the baseline's and the candidate's figures, line by line."""
    lines = verdict(figures["baseline"], figures["candidate"])
    for question, ok, why in lines:
        print(f"{'pass' if ok else 'FAIL'}  {question}: {why}")
    print("verdict: ship the candidate" if ships(lines) else "verdict: keep the baseline")


if __name__ == "__main__":
    main()
