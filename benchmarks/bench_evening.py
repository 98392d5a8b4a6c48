"""A long evening and whole matches, rendered and watched end to end.

    python benchmarks/bench_evening.py --minutes 30            # one film of hand after hand
    python benchmarks/bench_evening.py --match --games 5       # matches of 2-3 hands

Each film is a match of referee self-play (companion.render.video.GameFilm with
`hands`: each hand dealt by the next seat after a pause, a new match after one ends),
written to mp4 and run through `watch`'s own loop (make_pipeline, FileSource,
run_frames) with the rendered slaps standing in for a pad, the next hand started by
its first card as at a table.

Long film (`--minutes`): frames per second of processing (decode, detector, tracker,
referee; the rendering happens before) over the first and the last 5 minutes of video,
split into the detector's looks per frame (what the film shows), CPU ms per look and
CPU ms per frame outside the detector (what drift would show in); then the same two
windows replayed (the pipeline copied as it was when each began, each copy fed its 5
minutes again, a minute of one then a minute of the other, so that a host whose speed
wanders over minutes slows both alike); the process's resident memory after the first
minute and at the end, and flips P and R as bench_live scores them (a call matches a
true flip of the same card from 3 frames before its rest frame to 1 s after).

Matches (`--match`): each hand's winner and the match's winner as called against the
film's own referee, and flips P and R across hands.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import sys
import tempfile
import time
from pathlib import Path

from bench_live import NAMES, answering, precision_recall, score

from companion.detector.model import load_detector
from companion.engine import PRESETS
from companion.live.capture import FileSource
from companion.live.runner import finish, make_pipeline, run_frames
from companion.render.video import GameFilm


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Timed:
    """The detector, its calls counted and timed (CPU seconds of this process), so that
    a change in frames/s can be split into how often the detector looked (what the film
    shows: motion, piles, hands) and how long each look and the rest of a frame took (what
    drift would show in)."""

    def __init__(self, det) -> None:
        self.det, self.calls, self.cpu = det, 0, 0.0

    def __getattr__(self, name):
        return getattr(self.det, name)

    def __call__(self, *args, **kw):
        t0 = time.process_time()
        try:
            return self.det(*args, **kw)
        finally:
            self.cpu += time.process_time() - t0
            self.calls += 1


def watch_film(det, film: GameFilm, path: Path, probe=None, snap_at=None, keep=False):
    """Film -> mp4 -> watch's loop. probe(frame) is called for every frame; snap_at(n):
    given the film's length, the frames before which a copy of the whole pipeline is kept
    (what it knew then), returned as {frame: (pipeline, MB of memory the copy took)};
    keep: the mp4 is left for the caller to delete."""
    info = film.write(path, progress=True)
    at = set(snap_at(FileSource(info["video"]).frames)) if snap_at else set()
    truth = film.timeline.truth
    calls: list[dict] = []
    pipe = make_pipeline(det, film.rules, film.players, calls.append,
                         stacks=truth[0]["stacks"])
    slaps = [x for x in truth if x["type"] == "slap"]
    snaps: dict[int, tuple] = {}

    def frames():
        for f in FileSource(info["video"]):
            if f.index in at:
                before = rss_mb()
                snaps[f.index] = (snapshot(pipe), rss_mb() - before)
            if probe is not None:
                probe(f)
            yield f

    stats = run_frames(pipe, answering(pipe, frames(), truth), slaps)
    finish(pipe)
    if not keep:
        path.unlink()
    return truth, calls, stats, snaps


def snapshot(pipe):
    """A copy of the pipeline that goes on from where it is, sharing only what no frame
    changes: the detector (its ONNX sessions) and the rules."""
    det, rules = pipe.watcher.detector, pipe.game.rules
    return copy.deepcopy(pipe, {id(det): det, id(rules): rules})


def replay(snaps: dict, path: Path, truth: list[dict], window: int, chunk: int):
    """Each snapshot fed the `window` frames it was taken before again, a `chunk` of
    frames of one, then of the next, in turn: a host that is slower or faster for a
    while (a shared machine) is so for all of them alike, so what differs is the
    pipeline's own state. -> {start: (frames, CPU s, wall s, flips called)}."""
    slaps = [x for x in truth if x["type"] == "slap"]
    feeds = {}
    for start, (pipe, _) in snaps.items():
        said: list[dict] = []
        pipe.on_output = said.append
        it = iter(FileSource(str(path), start))
        first = next(it)            # decodes the frames before it, outside the timing
        feeds[start] = (pipe, answering(pipe, itertools.chain([first], it), truth), said)
    took = {start: [0, 0.0, 0.0] for start in snaps}
    for at in range(0, window, chunk):
        for start, (pipe, frames, _) in feeds.items():
            a = start + at
            c0, w0 = time.process_time(), time.perf_counter()
            stats = run_frames(pipe, itertools.islice(frames, min(chunk, window - at)),
                               [x for x in slaps if a <= x["frame"] < a + chunk])
            took[start][0] += stats.frames
            took[start][1] += time.process_time() - c0
            took[start][2] += time.perf_counter() - w0
    return {start: (*took[start], sum(r.get("type") == "flip" for r in feeds[start][2]))
            for start in snaps}


def misses(truth: list[dict], calls: list[dict], fps: float) -> list[str]:
    """The true flips no call matched and the calls no true flip did (bench_live's rule:
    the same card, from 3 frames before its rest frame to 1 s after)."""
    true = [x for x in truth if x["type"] == "flip"]
    said = [c for c in calls if c.get("type") == "flip"]
    used: set[int] = set()
    false = []
    for c in said:
        i = next((i for i, t in enumerate(true) if i not in used and t["card"] == c["card"]
                  and -3 <= c["frame"] - t["frame"] <= fps), None)
        if i is None:
            false.append(f"called {c['card']} at frame {c['frame']}, no such flip then")
        else:
            used.add(i)
    return [f"missed {t['card']} resting at frame {t['frame']}" for i, t in enumerate(true)
            if i not in used] + false


def winners(anns: list[dict], kind: str) -> list[int]:
    return [a["winner"] for a in anns if a.get("type") == kind]


def hand_ends(hands: list[int], dealt: list[int], over: list[tuple[int, int]],
              frames: int) -> tuple[int, int]:
    """Called hand ends against the film's: (hands played out whose end was called with
    the right winner, hand ends called early). hands: the film's winners; dealt: the
    frames it deals each next hand at; over: the referee's (frame, winner) hand ends.
    Each called end belongs to the film's hand it fell in; the last of them is that
    hand's end, any before it came early (a missed flip gives every later card to the
    wrong seat, so the referee's counts drift). The film's last hand may run on past it."""
    bounds = [0, *dealt, frames + 1]
    right = early = 0
    for k in range(len(bounds) - 1):
        inside = [w for f, w in over if bounds[k] <= f < bounds[k + 1]]
        played = k < len(hands) and bool(inside)
        right += played and inside[-1] == hands[k]
        early += len(inside) - played
    return right, early


def long_run(det, minutes: float, seed: int, tmp: Path) -> None:
    players = NAMES[:3]
    film = GameFilm(PRESETS["challenge"], players, seed, seconds=minutes * 60, hands=200)
    fps = film.fps
    # (frame, wall time, CPU time, rss, detector looks, their CPU time) every 30 s of
    # video. CPU time (all threads of this process) is what drift shows in even on a
    # machine doing other work meanwhile.
    marks: list[tuple[int, float, float, float, int, float]] = []
    det = Timed(det)

    def mark(frame: int) -> None:
        marks.append((frame, time.perf_counter(), time.process_time(), rss_mb(), det.calls,
                      det.cpu))

    def probe(f) -> None:
        if f.index % int(30 * fps) == 0:
            mark(f.index)

    t0 = time.perf_counter()
    last5 = int(5 * 60 * fps)
    truth, calls, stats, snaps = watch_film(det, film, tmp / "long.mp4", probe,
                                            snap_at=lambda n: (0, max(n - last5, 0)),
                                            keep=True)
    mark(stats.frames)
    s = score(truth, calls, fps)
    window = int(5 * 60 * fps / (30 * fps))          # marks in 5 minutes

    def rate(a, b, clock) -> float:
        return (marks[b][0] - marks[a][0]) / (marks[b][clock] - marks[a][clock])

    ends = [(0, min(window, len(marks) - 1)), (max(0, len(marks) - 1 - window), len(marks) - 1)]
    hands = winners(film.timeline.log, "hand_over")
    print(f"film: seed {seed}, {stats.frames} frames ({stats.frames / fps / 60:.1f} min), "
          f"{len(hands)} hands played out, {s['true']} true flips; "
          f"{time.perf_counter() - t0:.0f} s in all")
    for name, clock in (("wall", 1), ("CPU", 2)):
        first, last = (rate(a, b, clock) for a, b in ends)
        print(f"frames/s of processing ({name} time): first 5 min {first:.1f}, last 5 min "
              f"{last:.1f} ({(last - first) / first * 100:+.1f} %)")
    # The same two windows split: how often the detector looked (the gate lets a frame
    # through when the pile's region changed), CPU ms per look, and CPU ms of a frame
    # spent elsewhere (decoding, tracker, referee, log).
    split = []
    for a, b in ends:
        frames, looks = marks[b][0] - marks[a][0], marks[b][4] - marks[a][4]
        look_cpu = marks[b][5] - marks[a][5]
        split.append((looks / frames, 1000 * look_cpu / max(looks, 1),
                      1000 * (marks[b][2] - marks[a][2] - look_cpu) / frames))
    print("  first vs last 5 min: detector looks per frame {:.2f} -> {:.2f}; CPU ms per look "
          "{:.1f} -> {:.1f}; CPU ms per frame outside the detector {:.1f} -> {:.1f}".format(
              *(v for pair in zip(*split) for v in pair)))
    # Drift told apart from the host: the pipeline as it was at the start and as it was 5
    # minutes before the end, each fed its 5 minutes again, a minute of one then a minute
    # of the other (the host's speed wanders by 15 % over minutes here: the same film's
    # first 5 minutes ran at 44.4 CPU frames/s in session 22, 36.2 in session 24).
    n = stats.frames
    if len(snaps) < 2:          # a film of 5 minutes or less: one window, nothing to compare
        print("replayed: not done, the film is no longer than one 5-minute window")
    else:
        done = replay(snaps, tmp / "long.mp4", truth, last5, int(60 * fps))
        (fa, ca, wa, na), (fb, cb, wb, nb) = (done[k] for k in sorted(done))

        def called(a, b):
            return sum(1 for c in calls if c.get("type") == "flip" and a <= c["frame"] < b)
        print(f"replayed, a minute of each in turn: CPU frames/s first 5 min {fa / ca:.1f}, "
              f"last 5 min {fb / cb:.1f} ({(fb / cb - fa / ca) / (fa / ca) * 100:+.1f} %); "
              f"wall {fa / wa:.1f} -> {fb / wb:.1f} "
              f"({(fb / wb - fa / wa) / (fa / wa) * 100:+.1f} %); flips called {na} and {nb} "
              f"(the run itself: {called(0, last5)} and {called(n - last5, n)})")
    (tmp / "long.mp4").unlink()
    # The copy kept for the replay at the last 5 minutes' start is counted out of the
    # memory figures from then on.
    kept_at, kept_mb = max((at, mb) for at, (_, mb) in snaps.items())
    rss = [m[3] - (kept_mb if m[0] >= kept_at else 0.0) for m in marks]
    print(f"resident memory: after 1 min {rss[min(2, len(rss) - 1)]:.1f} MB, at the end "
          f"{rss[-1]:.1f} MB ({rss[-1] - rss[min(2, len(rss) - 1)]:+.1f} MB; the replay's "
          f"copy of the pipeline, {kept_mb:.1f} MB, counted out), peak {max(rss):.1f}")
    for miss in misses(truth, calls, fps):
        print(f"  {miss}")
    p, r = precision_recall(s)
    print(f"flips: {s['matched']} of {s['true']} (R {r:.4f}), {s['called']} called "
          f"(P {p:.4f}), {s['duplicates']} duplicates")
    dealt = [x["frame"] for x in truth if x["type"] == "start" and "hand" in x]
    over = [(c["frame"], c["winner"]) for c in calls if c.get("type") == "hand_over"]
    right, early = hand_ends(hands, dealt, over, stats.frames)
    print(f"hands: {right} of {len(hands)} played out called over with the right winner, "
          f"{early} hand ends called early; called at frames {[f for f, _ in over]}, the "
          f"film deals again at {dealt}")


def matches(det, games: int, first_seed: int, tmp: Path) -> None:
    tot = {"true": 0, "called": 0, "matched": 0, "hands": 0, "hands_right": 0,
           "matches": 0, "matches_right": 0, "settling": 0}
    for seed in range(first_seed, first_seed + games):
        players = NAMES[: 2 + seed % 2]
        rules = PRESETS["challenge" if seed % 2 else "base"]
        film = GameFilm(rules, players, seed, hands=3)
        truth, calls, stats, _ = watch_film(det, film, tmp / f"m{seed}.mp4")
        s = score(truth, calls, film.fps)
        tot["settling"] += score(truth, calls, film.fps, early=10)["matched"]
        hands, said = winners(film.timeline.log, "hand_over"), winners(calls, "hand_over")
        match, said_match = winners(film.timeline.log, "match_over"), winners(calls,
                                                                               "match_over")
        right = sum(a == b for a, b in zip(said, hands)) if len(said) == len(hands) else 0
        ok_match = bool(match) and said_match[:1] == match[:1]
        for k, v in (("true", s["true"]), ("called", s["called"]), ("matched", s["matched"]),
                     ("hands", len(hands)), ("hands_right", right), ("matches", len(match[:1])),
                     ("matches_right", int(ok_match))):
            tot[k] += v
        for miss in misses(truth, calls, film.fps):
            print(f"  seed {seed}: {miss}")
        print(f"seed {seed}: {len(players)} players, {rules.preset}, {len(hands)} hands "
              f"({stats.frames / film.fps / 60:.1f} min): winners {hands}, called {said}; "
              f"match {match[:1]}, called {said_match[:1]}; flips {s['matched']}/{s['true']}, "
              f"{s['called']} called", flush=True)
    p, r = precision_recall(tot)
    print(f"hands: {tot['hands_right']} of {tot['hands']} winners right; matches: "
          f"{tot['matches_right']} of {tot['matches']} winners right; flips across hands "
          f"P {p:.4f} R {r:.4f} ({tot['matched']} of {tot['true']}, {tot['called']} called); "
          f"calls up to 10 frames early (the card settling) matched too: "
          f"{tot['settling']} of {tot['true']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=30.0, help="length of the long film")
    ap.add_argument("--seed", type=int, default=901, help="the long film's seed")
    ap.add_argument("--match", action="store_true", help="matches of 2-3 hands instead")
    ap.add_argument("--games", type=int, default=5, help="--match: how many films")
    ap.add_argument("--first-seed", type=int, default=601, help="--match: the first seed")
    ap.add_argument("--model", default=None)
    args = ap.parse_args()
    det = load_detector(args.model)
    with tempfile.TemporaryDirectory() as tmp:
        if args.match:
            matches(det, args.games, args.first_seed, Path(tmp))
        else:
            long_run(det, args.minutes, args.seed, Path(tmp))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
