"""`companion simulate`: many hands of self-play, summarised per hand."""

from __future__ import annotations

import json
import statistics

from tqdm import tqdm

from ..engine import Rules
from .bots import HandStats, play_hand

NAMES = ("Ada", "Ben", "Cho", "Dan", "Eve", "Fay", "Gus", "Hal")
STATS = ("flips", "slaps", "wrong_slaps", "challenges", "challenge_wins", "seconds")


def simulate(rules: Rules, players: int, hands: int, seed: int, flip_ms: float = 850.0,
             as_json: bool = False) -> str:
    names = list(NAMES[:players])
    results: list[HandStats] = []
    for h in tqdm(range(hands), desc="hands", unit="hand", disable=hands < 50, leave=False):
        results.append(play_hand(rules, names, seed * 100_003 + h, flip_ms=flip_ms))
    summary = {
        "rules": rules.preset, "players": players, "hands": hands,
        "finished": sum(r.finished for r in results),
        "wins": {n: sum(r.winner == i for r in results) for i, n in enumerate(names)},
    }
    for key in STATS:
        vals = [getattr(r, key) for r in results]
        summary[key] = {"mean": round(statistics.fmean(vals), 2),
                        "median": statistics.median(vals), "min": min(vals), "max": max(vals)}
    if as_json:
        return json.dumps(summary)
    unfinished = hands - summary["finished"]
    lines = [f"{hands} hands, {players} players, rules {rules.preset}: {summary['finished']} "
             f"finished" + (f", {unfinished} stopped at 4000 cards" if unfinished else ""),
             f"{'per hand':<16}{'mean':>10}{'median':>10}{'min':>10}{'max':>10}"]
    for key in STATS:
        s = summary[key]
        label = "game seconds" if key == "seconds" else key.replace("_", " ")
        lines.append(f"{label:<16}{s['mean']:>10}{s['median']:>10.6g}{s['min']:>10.6g}"
                     f"{s['max']:>10.6g}")
    lines.append("hands won: " + ", ".join(f"{n} {w}" for n, w in summary["wins"].items()))
    return "\n".join(lines)
