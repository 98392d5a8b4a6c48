"""`companion practice` and `companion stats`: the window, the slap sources,
calibration, and the plots."""

from __future__ import annotations

import queue
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Iterable

import cv2
import numpy as np

from .history import History, default_path
from .session import Calibration, Practice
from .trials import Trial

CAL_FILE = "calibration.toml"


# ------------------------------------------------------------------ calibration
def load_calibration(folder: Path) -> Calibration:
    import tomllib
    path = folder / CAL_FILE
    if not path.is_file():
        return Calibration()
    try:
        data = tomllib.loads(path.read_text())
        return Calibration(float(data.get("display_ms", 0.0)), float(data.get("pad_ms", 0.0)))
    except (tomllib.TOMLDecodeError, ValueError, TypeError) as exc:
        print(f"calibration {path}: unreadable ({exc}); using zero latencies", file=sys.stderr)
        return Calibration()


def save_calibration(folder: Path, cal: Calibration) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / CAL_FILE
    path.write_text(f"# measured by `companion practice --calibrate`\n"
                    f"display_ms = {cal.display_ms:.2f}\npad_ms = {cal.pad_ms:.2f}\n")
    return path


def measure_display_latency(show_flash, reader, light_zone: int, flashes: int = 10,
                            clock=time.monotonic) -> float | None:
    """Flash the screen under a light sensor wired as a pad zone; median flash -> onset."""
    from ..pad import SlapEvent
    lat = []
    for _ in range(flashes):
        shown = show_flash(True)
        end = clock() + 1.0
        while clock() < end:
            try:
                ev = reader.events.get(timeout=0.02)
            except queue.Empty:
                continue
            if isinstance(ev, SlapEvent) and ev.zone == light_zone:
                lat.append((ev.t - shown) * 1000)
                break
        show_flash(False)
        time.sleep(0.3)
    return statistics.median(lat) if lat else None


# ------------------------------------------------------------------ the window
class PileWindow:
    """The virtual pile, large: the top three cards fanned, the newest on top."""

    NAME = "slap practice"

    def __init__(self, players: list[str], keyboard: bool) -> None:
        from ..render.faces import Deck, DeckStyle
        self.deck = Deck(DeckStyle.random(3), width=240)
        self.players = players
        self.keyboard = keyboard
        self.keys: list[tuple[int, float]] = []
        self.keymap = {ord(" "): 0, **{ord(str(i + 1)): i for i in range(min(9, len(players)))}}

    def frame(self, trial: Trial | None, flash: bool = False) -> np.ndarray:
        from ..engine.cards import CLASS_NAMES
        img = np.full((640, 960, 3), 255 if flash else 45, np.uint8)
        if trial is None or flash:
            return img
        for i, name in enumerate(trial.top):
            face = self.deck.face(CLASS_NAMES.index(name))
            h, w = face.image.shape[:2]
            x, y = 300 + i * 70, 90 + i * 25
            a = face.alpha[..., None].astype(np.float32) / 255
            roi = img[y:y + h, x:x + w].astype(np.float32)
            img[y:y + h, x:x + w] = (roi * (1 - a) + face.image * a).astype(np.uint8)
        hint = "space or 1-%d to slap, q to stop" % len(self.players) if self.keyboard else \
            "slap the pad; q to stop"
        cv2.putText(img, hint, (20, 620), cv2.FONT_HERSHEY_SIMPLEX, 0.7, (200, 200, 200), 2)
        return img

    def show(self, trial: Trial | None, flash: bool = False) -> float:
        cv2.imshow(self.NAME, self.frame(trial, flash))
        self._pump(1)
        return time.monotonic()

    def _pump(self, ms: int) -> None:
        k = cv2.waitKey(ms) & 0xFF
        t = time.monotonic()
        if k in (ord("q"), 27):
            raise KeyboardInterrupt
        if self.keyboard and k in self.keymap:
            self.keys.append((self.keymap[k], t))

    def poll_keys(self, deadline: float) -> Iterable[tuple[int, float]]:
        while time.monotonic() < deadline:
            self._pump(2)
        keys, self.keys = self.keys, []
        return keys


def pad_poll(reader, window: PileWindow | None):
    from ..pad import SlapEvent, StatusEvent

    def poll(deadline: float) -> Iterable[tuple[int, float]]:
        got = []
        while time.monotonic() < deadline:
            if window is not None:
                window._pump(1)
            try:
                ev = reader.events.get(timeout=0.002)
            except queue.Empty:
                continue
            if isinstance(ev, SlapEvent):
                got.append((ev.seat, ev.t))
            elif isinstance(ev, StatusEvent):
                print(ev.message, file=sys.stderr)
        return got
    return poll


def run_practice(rules, players: list[str], pad: str | None, keyboard: bool, minutes: float,
                 pace: float, db: str | None, calibrate: bool, light_zone: int,
                 zones: dict[int, int] | None = None) -> int:
    history = History(db)
    if history.notice:
        print(history.notice, file=sys.stderr)
    data_dir = history.path.parent
    cal = load_calibration(data_dir)
    window = PileWindow(players, keyboard or not pad)
    reader = None
    if pad:
        from ..pad import PadReader
        reader = PadReader(pad, seats=zones).start()
    try:
        if calibrate:
            if reader is None:
                print("companion practice: --calibrate needs --pad (with a light sensor zone)",
                      file=sys.stderr)
                return 2
            ms = measure_display_latency(lambda on: window.show(None, flash=on), reader,
                                         light_zone)
            if ms is None:
                print(f"no onset on light zone {light_zone}: is the sensor on the screen?",
                      file=sys.stderr)
                return 2
            cal.display_ms = ms
            print(f"display latency {ms:.1f} ms -> {save_calibration(data_dir, cal)}")
            return 0
        poll = pad_poll(reader, window) if reader is not None else window.poll_keys
        p = Practice(rules, players, window.show, poll, history, cal, pace=pace,
                     source="pad" if reader else "keyboard")
        summary = p.run(seconds=minutes * 60)
        print(summary.line())
        print(f"history: {history.path}; `companion stats --player {players[0]}` for plots")
    finally:
        if reader is not None:
            reader.stop()
        cv2.destroyAllWindows()
        history.close()
    return 0


# ------------------------------------------------------------------ stats
def summarise(rows) -> dict:
    by_session: dict[int, list] = defaultdict(list)
    for r in rows:
        by_session[r["session_id"]].append(r)
    hits = [r["rt_ms"] for r in rows if r["outcome"] == "hit"]
    targets = sum(1 for r in rows if r["outcome"] in ("hit", "miss"))
    plain = sum(1 for r in rows if r["outcome"] in ("pass", "false", "late"))
    by_pattern: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        if r["pattern"]:
            by_pattern[r["pattern"]][1] += 1
            by_pattern[r["pattern"]][0] += r["outcome"] == "hit"
    near = [r for r in rows if r["near_miss"]]
    return {
        "sessions": len(by_session), "trials": len(rows),
        "hit_rate": (len(hits) / targets) if targets else None,
        "median_rt_ms": statistics.median(hits) if hits else None,
        "false_rate": (sum(1 for r in rows if r["outcome"] == "false") / plain) if plain else None,
        "near_miss_false": sum(1 for r in near if r["outcome"] == "false"),
        "near_misses": len(near),
        "late": sum(1 for r in rows if r["outcome"] == "late"),
        "session_medians": [statistics.median(v) for v in
                            ([r["rt_ms"] for r in s if r["outcome"] == "hit"]
                             for _, s in sorted(by_session.items())) if v],
        "by_pattern": {k: v[0] / v[1] for k, v in sorted(by_pattern.items())},
        "rts": hits,
    }


def plot_stats(s: dict, out: Path, player: str | None) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    out.mkdir(parents=True, exist_ok=True)
    who = player or "all players"
    paths = []
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.hist(s["rts"], bins=30, color="#3b6ea5")
    ax.set(xlabel="reaction time (ms)", ylabel="slaps", title=f"Reaction times: {who}")
    paths.append(out / "reaction_times.png")
    fig.tight_layout(); fig.savefig(paths[-1], dpi=100); plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(range(1, len(s["session_medians"]) + 1), s["session_medians"], "o-", color="#a53b3b")
    ax.set(xlabel="session", ylabel="median reaction (ms)", title=f"Progress: {who}")
    ax.xaxis.get_major_locator().set_params(integer=True)
    paths.append(out / "progress.png")
    fig.tight_layout(); fig.savefig(paths[-1], dpi=100); plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 4))
    names = list(s["by_pattern"])
    ax.bar(names, [100 * s["by_pattern"][n] for n in names], color="#3ba55c")
    ax.set(ylabel="patterns hit (%)", ylim=(0, 100), title=f"Accuracy by pattern: {who}")
    paths.append(out / "accuracy_by_pattern.png")
    fig.tight_layout(); fig.savefig(paths[-1], dpi=100); plt.close(fig)
    return paths


def run_stats(player: str | None, out: str, db: str | None) -> int:
    path = Path(db) if db else default_path()
    if not path.exists():
        print(f"companion stats: no history yet at {path} (play `companion practice` first)",
              file=sys.stderr)
        return 2
    history = History(path)
    if history.notice:
        print(history.notice, file=sys.stderr)
    rows = history.trials(player)
    history.close()
    if not rows:
        print(f"companion stats: no trials{' for ' + player if player else ''} in {path}",
              file=sys.stderr)
        return 2
    s = summarise(rows)
    fmt = lambda v, f: "-" if v is None else f.format(v)
    print(f"{player or 'all players'}: {s['sessions']} sessions, {s['trials']} trials; patterns hit "
          f"{fmt(s['hit_rate'], '{:.0%}')}, median reaction {fmt(s['median_rt_ms'], '{:.0f} ms')}, "
          f"false slaps {fmt(s['false_rate'], '{:.1%}')} of plain cards "
          f"({s['near_miss_false']} of {s['near_misses']} near misses), late {s['late']}")
    for name, rate in s["by_pattern"].items():
        print(f"  {name}: {rate:.0%} hit")
    for p in plot_stats(s, Path(out), player):
        print(f"plot: {p}")
    return 0
