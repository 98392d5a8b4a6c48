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
- throughput of `watch` at 1280x720, with motion gating and without;
- how often the referee asked "who took the pile?" and how many of those the table
  answered "nobody" (the pile was there: usually under a card the reader could not
  name, which hides it).

A called flip matches a true one of the same card from 3 frames (100 ms) before the true
first resting frame (the renderer's rest frame is when the card stops; the reader can
name it while it settles) to 1 s after; calls before the rest frame show as negative
latencies and are counted apart. A second line scores calls up to 10 frames early as
matches too: with frames dropped, two looks at a card sliding its last pixels span more
time, and such a call names the right card as it settles. Slaps come from the rendered
truth, standing in for a pad.

`--no-pad` gives the referee no slaps at all (and 2-5 players, seated unevenly): the camera sees them (companion.live.hands),
and a pile picked up with no slap seen is answered as the table would (the seat the
truth swept it to, 0.5 s after the question). It scores each true slap's verdict (the
right award, or the wrong slap, for the bottom hand), slaps the camera invented (the
films have hands that deal, pick piles up and hover), how long after the first hand
landed the verdict came, and the questions asked.

`--realtime` plays each film at 30 fps through the camera's newest-frame path (`watch
--realtime`): frames are dropped whenever processing falls behind, and latency is the
wall time from the card's first resting frame being delivered to its call. `--busy`
keeps one core busy with a second process meanwhile; `--slow-ms 50` makes each detector
call take at least 50 ms (a slow laptop).

With `--faces real`, each game's 52 faces are real card photos instead of a drawn
deck (`companion/render/photodeck.py`): one photo a card, chosen by the game's seed
among `../shared/realcards` (one deck, cut out of its table photos) and
`../shared/realdecks/test` (hundreds of decks); evaluation only, never trained on.

With `--enrolled`, each game is read with its own drawn deck enrolled first, from one
rendered photo a card (`companion enrol`'s code): a household's deck, enrolled, then
played.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from companion.detector.model import load_detector
from companion.engine import PRESETS, Game
from companion.live.capture import FileSource, LiveSource
from companion.live.hands import HandWatcher
from companion.live.pipeline import LivePipeline
from companion.live.runner import run_frames
from companion.render.video import GameFilm

NAMES = ["Ada", "Ben", "Cho", "Dan", "Eve"]


SHARED = Path(__file__).resolve().parents[2] / "shared"


class Slowed:
    """The detector, each call taking at least `ms` (a slower machine)."""

    def __init__(self, det, ms: float) -> None:
        self.det, self.s = det, ms / 1000
        self.imgsz = det.imgsz
        self.takes_outlines = getattr(det, "takes_outlines", False)

    def __call__(self, *args, **kw):
        t0 = time.perf_counter()
        out = self.det(*args, **kw)
        rest = self.s - (time.perf_counter() - t0)
        if rest > 0:
            time.sleep(rest)
        return out


def varied_seats(n: int, seed: int) -> list[float]:
    """Seats spread unevenly round the table: the even spread turned by a random amount,
    each seat moved up to a quarter of the gap."""
    import random
    r = random.Random(seed * 31 + 7)
    gap = 360.0 / n
    turn = r.uniform(0, 360)
    return [(turn + k * gap + r.uniform(-gap / 4, gap / 4)) % 360 for k in range(n)]


def answering(pipe, frames, truth):
    """The frames, the table answering "who took the pile?" half a second after the
    referee asks, with the truth (with slaps from the truth too: a pile the tracker lost
    sight of is asked about): the seat that picked the pile up after the last card that
    came to rest before the referee lost sight of the pile (the tracker's clear_after
    before the question: a card dealt quickly after a pick-up can rest before it is
    asked), or nobody (a hand held over the pile, and the next card landed on it before
    it showed again). Until session 25 it named whoever had last picked up a pile, even
    one taken before that card: no table would."""
    collects = [x for x in truth if x["type"] == "collect"]
    rests = [x["frame"] for x in truth if x["type"] == "flip"]
    fps = truth[0]["fps"]
    for f in frames:
        if pipe.asking is not None and f.t - pipe.asking["t"] >= 0.5:
            lost = round((pipe.asking["t"] - pipe.tracker.cfg.clear_after) * fps)
            last = max((r for r in rests if r <= lost), default=-1)
            done = [c for c in collects if last < c["frame"] <= f.index]
            pipe.answer(done[-1]["seat"] if done else None, f.t)
        yield f


def film_of(seed: int, seconds: float, photos=None, finder=None, no_pad: bool = False) -> GameFilm:
    """Game `seed`'s film: its players, seats, rules and deck (a real photo for each card
    where `photos` is given)."""
    players = NAMES[: 2 + seed % 3]
    seats = None
    if no_pad:      # 2-5 players, sitting round the table unevenly
        players = NAMES[: 2 + seed % 4]
        seats = varied_seats(len(players), seed)
    rules = PRESETS["challenge" if seed % 2 else "base"]
    deck = None
    if photos is not None:
        from companion.render.photodeck import PhotoDeck
        deck = PhotoDeck(photos, seed, finder=finder)
    return GameFilm(rules, players, seed, seconds=seconds, deck=deck, seats=seats)


def real_faces(split: str):
    """The real photos a film's faces are chosen from (`realdecks/<split>`, and realcards
    for "test"), and the finder that cuts the table photos out: SystemExit where
    ../shared lacks them."""
    from companion.render.photodeck import real_photos
    # Choosing on valid takes no realcards photo: those are for reporting.
    photos = real_photos(SHARED / "realcards" if split == "test" else None,
                         SHARED / "realdecks" / split)
    if len(photos) < 52:
        raise SystemExit(f"--faces real: real photos of only {len(photos)} cards found "
                         f"under {SHARED} (realcards, realdecks/{split}); they are not "
                         "part of the project")
    return photos, load_detector(photo=True).finder


@functools.lru_cache(maxsize=1)
def photo_detector():
    """The photo detector `companion enrol` reads enrolment photos with (loaded once)."""
    return load_detector(photo=True)


def enrolled_detector(seed: int, tmp: Path, model=None, reader=None):
    """The video detector reading with game `seed`'s own deck enrolled, as a household
    would before playing: one rendered photo a card (render.scene.card_photo) through
    `companion enrol`'s code."""
    import cv2
    import numpy as np
    from companion.deck.enrol import enrol_photos
    from companion.engine.cards import CLASS_NAMES
    from companion.render.scene import card_photo
    deck_faces, rng = film_of(seed, 1.0).deck, np.random.default_rng(seed)
    folder = tmp / f"deck{seed}"
    folder.mkdir(exist_ok=True)
    for c in range(52):
        cv2.imwrite(str(folder / f"{CLASS_NAMES[c]}.png"), card_photo(deck_faces, c, rng))
    deck, report = enrol_photos(folder, photo_detector(), f"game{seed}", progress=False)
    if report.missing:
        print(f"  game {seed}: enrolled without {' '.join(report.missing)}")
    return load_detector(model, reader=reader, deck=deck)


def run_game(det, seed: int, seconds: float, tmp: Path, gate: bool = True, photos=None,
             finder=None, realtime: bool = False, no_pad: bool = False):
    film = film_of(seed, seconds, photos, finder, no_pad)
    rules, players = film.rules, film.players
    info = film.write(tmp / f"g{seed}.mp4", progress=False)
    truth = film.timeline.truth
    calls: list[dict] = []
    source = LiveSource(info["video"], paced=True) if realtime else FileSource(info["video"])

    def output(rec: dict) -> None:
        if realtime:        # when it was said, on the video's clock
            rec["said_t"] = time.monotonic() - source.started
        calls.append(rec)

    hands = HandWatcher(film.seats) if no_pad else None
    pipe = LivePipeline(det, Game(rules), gate=gate, on_output=output, hands=hands)
    pipe.feed({"type": "start", "players": players, "stacks": truth[0]["stacks"]})
    slaps = [] if no_pad else [x for x in truth if x["type"] == "slap"]
    try:
        stats = run_frames(pipe, answering(pipe, source, truth), slaps)
    finally:
        if realtime:
            source.stop()
    if realtime:
        stats.dropped = source.dropped
    return truth, calls, stats, pipe


def precision_recall(s: dict) -> tuple[float, float]:
    """Flips' precision and recall from score()'s counts (matched, called, true)."""
    return (s["matched"] / s["called"] if s["called"] else 0.0,
            s["matched"] / s["true"] if s["true"] else 0.0)


def score(truth, calls, fps: float, early: int = 3):
    true_flips = [x for x in truth if x["type"] == "flip"]
    hands = [x["hands_frames"] for x in truth if x["type"] == "slap"]
    called = [c for c in calls if c.get("type") == "flip"]
    used = set()
    matched, lat_frames, dup, occluded, wall, false = 0, [], 0, 0, [], []
    seen_cards: dict[str, int] = {}
    for c in called:
        best = None
        for i, t in enumerate(true_flips):
            if i in used or t["card"] != c["card"]:
                continue
            if -early <= c["frame"] - t["frame"] <= fps:
                best = i
                break
        if best is not None:
            used.add(best)
            matched += 1
            lat_frames.append(c["frame"] - true_flips[best]["frame"])
            if "said_t" in c:
                wall.append((c["said_t"] - true_flips[best]["frame"] / fps) * 1000)
        else:
            false.append((c["card"], c["frame"]))
            if c["card"] in seen_cards:
                dup += 1
            if any(a <= c["frame"] <= b for a, b in hands):
                occluded += 1
        seen_cards[c["card"]] = c["frame"]
    return {"true": len(true_flips), "called": len(called), "matched": matched,
            "lat_frames": lat_frames, "wall_ms": wall, "duplicates": dup, "occluded": occluded,
            # What to look at: true flips never called, and calls that matched none.
            "missed": [(t["card"], t["frame"]) for i, t in enumerate(true_flips) if i not in used],
            "false": false}


def score_slaps(truth, calls, fps: float) -> dict:
    """Camera slaps against the true ones: each true slap's verdict for its bottom hand
    (an award to it when legal, its wrong slap when not) within 0.5 s, the delay from
    its first hand landing to that verdict, and camera verdicts matching no true slap
    (slaps invented)."""
    true = [x for x in truth if x["type"] == "slap"]
    seen = [c for c in calls if c.get("type") in ("award", "wrong_slap", "late_slap")
            and c.get("evidence", {}).get("source") == "camera"]
    used, right, delays = set(), 0, []
    for x in true:
        want = ("award", x["seats"][0]) if x["legal"] else ("wrong_slap", x["seats"][0])
        for i, c in enumerate(seen):
            if i in used or not x["frame"] - 3 <= c["frame"] <= x["frame"] + fps / 2:
                continue
            if (c["type"], c.get("seat")) == want:
                used.add(i)
                right += 1
                delays.append((c["frame"] - x["frame"]) * 1000 / fps)
                break
    # A later hand of a true slap (a late slap, or its own wrong slap) is no invention.
    near = lambda c: any(x["frame"] - 3 <= c["frame"] <= x["hands_frames"][1] for x in true)
    invented = [c for i, c in enumerate(seen) if i not in used and not near(c)]
    asks = sum(1 for c in calls if c.get("type") == "ask")
    return {"slaps": len(true), "right": right, "delays": delays, "invented": len(invented),
            "asks": asks, "rejected": sum(1 for c in calls if c.get("type") == "rejected")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=40.0)
    ap.add_argument("--first-seed", type=int, default=1,
                    help="seed of the first game (default 1: games 1..N)")
    ap.add_argument("--model", default=None,
                    help="detector model (default: the shipped design, as `watch` uses it)")
    ap.add_argument("--reader", default=None,
                    help="corner reader (default: the shipped one), to choose between readers")
    ap.add_argument("--enrolled", action="store_true",
                    help="read each game with its own deck enrolled first (drawn faces)")
    ap.add_argument("--faces", choices=("drawn", "real"), default="drawn",
                    help="the cards' faces: the renderer's drawn decks (default) or real photos")
    ap.add_argument("--faces-split", choices=("test", "valid"), default="test",
                    help="with --faces real: the realdecks split the faces come from (test, "
                         "held out; valid to choose between models)")
    ap.add_argument("--realtime", action="store_true",
                    help="play each film at its frame rate, dropping frames as a camera would")
    ap.add_argument("--busy", action="store_true",
                    help="keep one core busy with a second process meanwhile")
    ap.add_argument("--slow-ms", type=float, default=0.0,
                    help="make each detector call take at least this long (default 0)")
    ap.add_argument("--no-pad", action="store_true",
                    help="no slap input: the camera sees the slaps")
    args = ap.parse_args()
    if args.enrolled and args.faces == "real":
        ap.error("--enrolled reads the drawn decks (a real-face game mixes many decks)")
    det = load_detector(args.model, reader=args.reader)
    if args.slow_ms > 0:
        det = Slowed(det, args.slow_ms)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
    mode = ", ".join(m for m, on in (("real time", args.realtime), ("one core busy", args.busy),
                                     (f"detector >= {args.slow_ms:.0f} ms", args.slow_ms > 0))
                     if on) or "every frame, as fast as it goes"
    print(f"mode: {mode}")
    photos, finder = real_faces(args.faces_split) if args.faces == "real" else (None, None)
    totals = {"true": 0, "called": 0, "matched": 0, "duplicates": 0, "occluded": 0}
    slap_tot: dict = {}
    slap_delays: list[float] = []
    settling = {"matched": 0, "called": 0}      # calls up to 10 frames early counted too
    lat_ms, frames, secs, frames_ng, secs_ng, dropped = [], 0, 0.0, 0, 0.0, 0
    asked = nobody = 0          # "who took the pile?", and those answered "nobody"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for seed in range(args.first_seed, args.first_seed + args.games):
                game_det = enrolled_detector(seed, Path(tmp), args.model, args.reader) \
                    if args.enrolled else det
                truth, calls, stats, pipe = run_game(game_det, seed, args.seconds, Path(tmp),
                                                     photos=photos, finder=finder,
                                                     realtime=args.realtime,
                                                     no_pad=args.no_pad)
                if args.no_pad:
                    ss = score_slaps(truth, calls, 30.0)
                    for k in ("slaps", "right", "invented", "asks", "rejected"):
                        slap_tot[k] = slap_tot.get(k, 0) + ss[k]
                    slap_delays += ss["delays"]
                    print(f"game {seed}: slaps {ss['right']}/{ss['slaps']} right, "
                          f"{ss['invented']} invented, {ss['asks']} questions, "
                          f"{ss['rejected']} rejected")
                s = score(truth, calls, 30.0)
                asked += sum(c.get("type") == "ask" for c in calls)
                nobody += sum(c.get("type") == "answer" and c.get("seat") is None
                              for c in calls)
                for k in totals:
                    totals[k] += s[k]
                s10 = score(truth, calls, 30.0, early=10)
                for k in settling:
                    settling[k] += s10[k]
                if args.realtime:
                    lat_ms += s["wall_ms"]
                else:
                    proc = pipe.flip_latency_ms
                    lat_ms += [f * 1000 / 30 + (proc[i] if i < len(proc) else 0)
                               for i, f in enumerate(s["lat_frames"])]
                frames += stats.frames
                secs += stats.seconds
                dropped += stats.dropped
                print(f"game {seed}: {s['matched']}/{s['true']} flips found, {s['called']} "
                      f"called, {s['duplicates']} duplicates, {s['occluded']} under hands; "
                      f"{stats.frames / stats.seconds:.0f} frames/s"
                      + (f", {stats.dropped} frames dropped" if args.realtime else ""),
                      flush=True)
                if s["missed"] or s["false"]:
                    print("  missed " + (" ".join(f"{c}@{f}" for c, f in s["missed"]) or "-")
                          + "; called with no flip "
                          + (" ".join(f"{c}@{f}" for c, f in s["false"]) or "-"))
            if not args.realtime and not args.no_pad:   # throughput ungated, on one game
                _, _, stats, _ = run_game(det, args.first_seed, args.seconds, Path(tmp),
                                          gate=False, photos=photos, finder=finder)
                frames_ng, secs_ng = stats.frames, stats.seconds
    finally:
        if busy is not None:
            busy.kill()
    prec, rec = precision_recall(totals)
    lat_ms.sort()
    p10 = settling["matched"] / settling["called"] if settling["called"] else 0.0
    r10 = settling["matched"] / totals["true"] if totals["true"] else 0.0
    print(f"flips: precision {prec:.4f}, recall {rec:.4f} ({totals['matched']} of "
          f"{totals['true']} true, {totals['called']} called); duplicates "
          f"{totals['duplicates']}; flips under hands {totals['occluded']} "
          f"(targets >= 0.999, >= 0.999, 0, 0); a call matches from 3 frames before the "
          "card's rest frame")
    print(f"flips, calls up to 10 frames early (the card settling) matched too: precision "
          f"{p10:.4f}, recall {r10:.4f} ({settling['matched']} of {totals['true']})")
    if lat_ms:
        early = sum(v < 0 for v in lat_ms)
        print(f"latency first resting frame -> call: median {statistics.median(lat_ms):.0f} ms, "
              f"p95 {lat_ms[int(len(lat_ms) * 0.95)]:.0f} ms (targets <= 70, <= 120); "
              f"{early} of {len(lat_ms)} calls came before the card's rest frame (as it "
              "settled), counted as negative")
    print(f"'who took the pile?': {asked} asked, {nobody} answered 'nobody' (the pile "
          "was there all along: most often under a card the reader could not name)")
    if args.no_pad and slap_tot:
        n = slap_tot["slaps"]
        print(f"slaps seen by the camera (no pad): {slap_tot['right']} of {n} right for the "
              f"bottom hand ({slap_tot['right'] / max(n, 1):.1%}; target >= 98 %), "
              f"{slap_tot['invented']} invented (target 0); verdict after the first hand "
              f"landed: median {statistics.median(slap_delays) if slap_delays else 0:.0f} ms "
              f"(target <= 150); {slap_tot['asks']} 'who took the pile?' questions; "
              f"{slap_tot['rejected']} events refused (target 0)")
    if args.realtime:
        print(f"frames processed: {frames} of {frames + dropped} delivered ({dropped} dropped "
              "while processing was behind)")
    elif secs_ng:
        print(f"throughput at 1280x720: {frames / secs:.0f} frames/s with motion gating, "
              f"{frames_ng / secs_ng:.0f} without (target >= 60 with gating)")
    else:
        print(f"throughput at 1280x720: {frames / secs:.0f} frames/s with motion gating and "
              "the camera's slap watcher")


if __name__ == "__main__":
    main()
