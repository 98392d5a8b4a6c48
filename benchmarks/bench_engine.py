"""Referee throughput: events per second on one core.

Records real games by self-play (every preset, 2-5 players), then times the
pure engine replaying them: Game.apply on the event dicts, the path the live
loop and `companion referee` use (JSON parsing excluded; reported separately).

    python benchmarks/bench_engine.py [--events 300000]
"""

from __future__ import annotations

import argparse
import json
import os
import time

from companion.engine import PRESETS, Game, run_lines
from companion.sim import play_hand


def record(target: int) -> list[tuple[str, list[dict]]]:
    games, total, seed = [], 0, 0
    while total < target:
        preset = list(PRESETS)[seed % 3]
        names = ["Ada", "Ben", "Cho", "Dan", "Eve"][: 2 + seed % 4]
        events = play_hand(PRESETS[preset], names, seed).events
        games.append((preset, events))
        total += len(events)
        seed += 1
    return games


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=300_000, help="events to replay")
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})   # one core
    games = record(args.events)
    n = sum(len(e) for _, e in games)
    best = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        for preset, events in games:
            g = Game(PRESETS[preset])
            for ev in events:
                g.apply(ev)
        best = min(best, time.perf_counter() - t0)
    lines = [(p, [json.dumps(e) for e in ev]) for p, ev in games]
    t0 = time.perf_counter()
    for preset, text in lines:
        for _ in run_lines(Game(PRESETS[preset]), text):
            pass
    t_json = time.perf_counter() - t0
    print(f"engine: {n} events in {best:.3f} s = {n / best:,.0f} events/s on one core "
          f"(target >= 300,000)")
    print(f"engine + JSON parsing: {n / t_json:,.0f} events/s")


if __name__ == "__main__":
    main()
