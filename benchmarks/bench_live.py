"""Live referee figures on rendered games (ground truth from the renderer).

    python benchmarks/bench_live.py [--games 10] [--first-seed 1] [--seconds 40] [--model PATH]
    python benchmarks/bench_live.py --faces real      # real card photos as the faces

For each game (a different seed: table, deck style, light, camera, players) it
films the game to mp4, runs the `watch` pipeline on the file with the shipped
model, and matches the called flips to the true ones:

- precision and recall of flips (a called flip matches a true flip of the same card
  whose first resting frame is at most 1 s earlier), duplicates, and flips called
  while hands were over the pile that match no true flip;
- latency from the first frame where the card rests to its announcement: the frames
  waited (at 30 fps) plus the processing time of the frame that confirmed it;
- throughput of `watch` at 1280x720, with motion gating and without.

With `--faces real`, each game's 52 faces are real card photos instead of a drawn
deck (`companion/render/photodeck.py`): one photo a card, chosen by the game's seed
among `../shared/realcards` (one deck, cut out of its table photos) and
`../shared/realdecks/test` (hundreds of decks); evaluation only, never trained on.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from companion.detector.model import load_detector
from companion.engine import PRESETS, Game
from companion.live.capture import FileSource
from companion.live.pipeline import LivePipeline
from companion.live.runner import run_frames
from companion.render.video import GameFilm

NAMES = ["Ada", "Ben", "Cho", "Dan"]


SHARED = Path(__file__).resolve().parents[2] / "shared"


def run_game(det, seed: int, seconds: float, tmp: Path, gate: bool = True, photos=None,
             finder=None):
    players = NAMES[: 2 + seed % 3]
    rules = PRESETS["challenge" if seed % 2 else "base"]
    deck = None
    if photos is not None:
        from companion.render.photodeck import PhotoDeck
        deck = PhotoDeck(photos, seed, finder=finder)
    film = GameFilm(rules, players, seed, seconds=seconds, deck=deck)
    info = film.write(tmp / f"g{seed}.mp4", progress=False)
    truth = film.timeline.truth
    calls: list[dict] = []
    pipe = LivePipeline(det, Game(rules), gate=gate, on_output=calls.append)
    pipe.feed({"type": "start", "players": players, "stacks": truth[0]["stacks"]})
    slaps = [x for x in truth if x["type"] == "slap"]
    stats = run_frames(pipe, FileSource(info["video"]), slaps)
    return truth, calls, stats, pipe


def score(truth, calls, fps: float):
    true_flips = [x for x in truth if x["type"] == "flip"]
    hands = [x["hands_frames"] for x in truth if x["type"] == "slap"]
    called = [c for c in calls if c.get("type") == "flip"]
    used = set()
    matched, lat_frames, dup, occluded = 0, [], 0, 0
    seen_cards: dict[str, int] = {}
    for c in called:
        best = None
        for i, t in enumerate(true_flips):
            if i in used or t["card"] != c["card"]:
                continue
            if -3 <= c["frame"] - t["frame"] <= fps:
                best = i
                break
        if best is not None:
            used.add(best)
            matched += 1
            lat_frames.append(c["frame"] - true_flips[best]["frame"])
        else:
            if c["card"] in seen_cards:
                dup += 1
            if any(a <= c["frame"] <= b for a, b in hands):
                occluded += 1
        seen_cards[c["card"]] = c["frame"]
    return {"true": len(true_flips), "called": len(called), "matched": matched,
            "lat_frames": lat_frames, "duplicates": dup, "occluded": occluded}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=40.0)
    ap.add_argument("--first-seed", type=int, default=1,
                    help="seed of the first game (default 1: games 1..N)")
    ap.add_argument("--model", default=None,
                    help="detector model (default: the shipped design, as `watch` uses it)")
    ap.add_argument("--faces", choices=("drawn", "real"), default="drawn",
                    help="the cards' faces: the renderer's drawn decks (default) or real photos")
    args = ap.parse_args()
    det = load_detector(args.model)
    photos = finder = None
    if args.faces == "real":
        from companion.render.photodeck import real_photos
        photos = real_photos(SHARED / "realcards", SHARED / "realdecks" / "test")
        if len(photos) < 52:
            raise SystemExit(f"--faces real: real photos of only {len(photos)} cards found "
                             f"under {SHARED} (realcards, realdecks/test); they are not part "
                             "of the project")
        finder = load_detector(photo=True).finder
    totals = {"true": 0, "called": 0, "matched": 0, "duplicates": 0, "occluded": 0}
    lat_ms, frames, secs, frames_ng, secs_ng = [], 0, 0.0, 0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.first_seed, args.first_seed + args.games):
            truth, calls, stats, pipe = run_game(det, seed, args.seconds, Path(tmp),
                                                 photos=photos, finder=finder)
            s = score(truth, calls, 30.0)
            for k in totals:
                totals[k] += s[k]
            proc = pipe.flip_latency_ms
            lat_ms += [f * 1000 / 30 + (proc[i] if i < len(proc) else 0)
                       for i, f in enumerate(s["lat_frames"])]
            frames += stats.frames
            secs += stats.seconds
            print(f"game {seed}: {s['matched']}/{s['true']} flips found, {s['called']} called, "
                  f"{s['duplicates']} duplicates, {s['occluded']} under hands; "
                  f"{stats.frames / stats.seconds:.0f} frames/s", flush=True)
        # Throughput without gating, on one game.
        _, _, stats, _ = run_game(det, args.first_seed, args.seconds, Path(tmp), gate=False,
                                  photos=photos, finder=finder)
        frames_ng, secs_ng = stats.frames, stats.seconds
    prec = totals["matched"] / totals["called"] if totals["called"] else 0.0
    rec = totals["matched"] / totals["true"] if totals["true"] else 0.0
    lat_ms.sort()
    print(f"flips: precision {prec:.4f}, recall {rec:.4f} ({totals['matched']} of "
          f"{totals['true']} true, {totals['called']} called); duplicates "
          f"{totals['duplicates']}; flips under hands {totals['occluded']} "
          f"(targets >= 0.999, >= 0.999, 0, 0)")
    if lat_ms:
        print(f"latency rest -> call: median {statistics.median(lat_ms):.0f} ms, p95 "
              f"{lat_ms[int(len(lat_ms) * 0.95)]:.0f} ms (targets <= 70, <= 120)")
    print(f"throughput at 1280x720: {frames / secs:.0f} frames/s with motion gating, "
          f"{frames_ng / secs_ng:.0f} without (target >= 60 with gating)")


if __name__ == "__main__":
    main()
