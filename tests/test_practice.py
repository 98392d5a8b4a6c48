"""Practice mode against the pad simulator, with a scripted player of known reaction times."""

from __future__ import annotations

import random
import sqlite3
import threading
import time

import pytest

from companion.engine import PRESETS, rules_from_mapping
from companion.pad import PadReader
from companion.pad.sim import PadSimulator
from companion.practice.history import History
from companion.practice.session import MAX_PACE, MIN_PACE
from companion.practice.session import Calibration, Practice
from companion.practice.tools import pad_poll, run_stats, summarise
from companion.practice.trials import TrialDeck


def test_trial_deck_mixes_patterns_and_near_misses():
    deck = TrialDeck(rules_from_mapping({"patterns": ["jack", "double", "sandwich", "run3"]}),
                     random.Random(1))
    trials = [deck.next() for _ in range(400)]
    targets = sum(t.target for t in trials)
    near = sum(t.near_miss for t in trials)
    assert 0.2 < targets / 400 < 0.45 and near > 40
    assert all(not t.patterns for t in trials if t.near_miss)
    names = [t.card for t in trials[:40]]
    assert len(set(names)) == 40                # one deck: no card twice in a pile


class ScriptedPlayer:
    """Watches the screen; on a pattern, slaps the simulated pad after a known delay."""

    def __init__(self, sim: PadSimulator, rts_ms, display_ms: float, seats=(0,),
                 false_on=(), clock=time.monotonic):
        self.sim, self.rts, self.display_ms = sim, list(rts_ms), display_ms
        self.seats, self.false_on, self.clock = seats, set(false_on), clock
        self.fired: list[tuple[int, int, float, float]] = []   # (trial, seat, shown, onset)

    def show(self, trial) -> float:
        shown = self.clock()
        if trial.target or trial.index in self.false_on:
            rt = self.rts[(trial.index - 1) % len(self.rts)]
            for k, seat in enumerate(self.seats):
                delay = (self.display_ms + rt + 15 * k) / 1000
                threading.Timer(delay, self._fire, (trial.index, seat, shown)).start()
        return shown

    def _fire(self, index, seat, shown):
        t = self.clock()
        self.sim.slap(seat)
        self.fired.append((index, seat, shown, t))


@pytest.fixture
def pad():
    sim = PadSimulator(heartbeat=0.05).start()
    reader = PadReader(sim.url).start()
    time.sleep(0.4)                              # heartbeats fix the clock map
    yield sim, reader
    reader.stop()
    sim.stop()


def poll_reader(reader):
    return pad_poll(reader, None)      # the same poll `companion practice --pad` uses


def test_reaction_times_are_measured_to_two_ms(pad, tmp_path):
    sim, reader = pad
    display_ms = 30.0
    player = ScriptedPlayer(sim, [180, 240, 310, 275], display_ms)
    hist = History(tmp_path / "h.sqlite3")
    p = Practice(PRESETS["base"], ["Ada"], player.show, poll_reader(reader), hist,
                 Calibration(display_ms=display_ms), pace=0.5, adaptive=False, seed=3)
    summary = p.run(cards=24)
    hits = [(t, o[0]) for t, o in p.results if o[0].outcome == "hit"]
    assert len(hits) >= 5
    fired = {i: (shown, onset) for i, _, shown, onset in player.fired}
    for trial, o in hits:
        shown, onset = fired[trial.index]
        truth = (onset - shown) * 1000 - display_ms    # what the player really took
        assert abs(o.rt_ms - truth) <= 2.0, (o.rt_ms, truth)
    assert summary.outcomes.get("miss", 0) == 0 and summary.outcomes.get("false", 0) == 0
    rows = hist.trials("Ada")
    assert len(rows) == 24 and sum(r["outcome"] == "hit" for r in rows) == len(hits)
    hist.close()


def test_a_scripted_session_gives_the_expected_statistics_and_plots(pad, tmp_path):
    sim, reader = pad
    # Two seats on one pad: Ada always first, Ben 15 ms behind her; Ada slaps one plain card.
    player = ScriptedPlayer(sim, [200], 0.0, seats=(0, 1), false_on={2})
    db = tmp_path / "h.sqlite3"
    hist = History(db)
    p = Practice(PRESETS["base"], ["Ada", "Ben"], player.show, poll_reader(reader), hist,
                 pace=0.45, adaptive=True, seed=5)
    summary = p.run(cards=20)
    hist.close()
    ada = [o[0] for _, o in p.results]
    hits = [o for o in ada if o.outcome == "hit"]
    assert hits and all(o.first and 10 <= o.margin_ms <= 25 for o in hits)
    assert all(abs(o.rt_ms - 200) < 25 for o in hits)
    trial2 = p.results[1][0]
    assert ada[1].outcome == ("hit" if trial2.target else "false")
    # The pace adapts after every trial: 6 % faster after a hit in under half the pace,
    # 8 % slower after a miss, a false or a late slap (within its bounds).
    assert summary.outcomes.get("false") and hits        # both kinds happened
    pace = summary.pace_start
    for o in ada:
        if o.outcome in ("miss", "false", "late"):
            pace = min(MAX_PACE, pace * 1.08)
        elif o.outcome == "hit" and o.rt_ms < pace * 500:
            pace = max(MIN_PACE, pace * 0.94)
    assert summary.pace_end == pytest.approx(pace)
    out = tmp_path / "plots"
    assert run_stats("Ada", str(out), str(db)) == 0
    for name in ("reaction_times.png", "progress.png", "accuracy_by_pattern.png"):
        assert (out / name).stat().st_size > 5000
    s = summarise(History(db).trials("Ada"))
    assert s["trials"] == 20 and s["hit_rate"] == 1.0 and abs(s["median_rt_ms"] - 200) < 25


def test_a_corrupt_history_is_kept_aside_and_a_new_one_started(tmp_path):
    db = tmp_path / "h.sqlite3"
    db.write_bytes(b"this is not a database at all" * 100)
    h = History(db)
    assert h.notice and "could not be read" in h.notice
    sid = h.start_session("Ada", "base", ["Ada"], 1.0, 0, 0, "test")
    h.add_trial(sid, idx=1, seat=0, player="Ada", shown=0.0, card="Kh", top="Kh", pattern=None,
                near_miss=0, outcome="pass", rt_ms=None, first=None, margin_ms=None, pace=1.0)
    h.close()
    assert list(tmp_path.glob("h.sqlite3.unreadable-*"))
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM trials").fetchone()[0] == 1


def test_trials_survive_an_interrupted_session(tmp_path):
    db = tmp_path / "h.sqlite3"
    hist = History(db)
    shown = iter(range(100))

    def display(trial):
        if trial.index == 6:
            raise KeyboardInterrupt          # the player quits mid-session
        return float(next(shown))

    p = Practice(PRESETS["base"], ["Ada"], display, lambda deadline: [], hist, seed=1,
                 clock=lambda: 0.0)
    p.run(cards=50)
    hist.close()
    rows = sqlite3.connect(db).execute("SELECT COUNT(*), MAX(idx) FROM trials").fetchone()
    assert rows == (5, 5)
    ended = sqlite3.connect(db).execute("SELECT ended FROM sessions").fetchone()[0]
    assert ended is not None


def test_display_latency_calibration_with_a_light_sensor(pad):
    """The screen flash is seen by a light sensor on zone 3, 40 ms after the frame is sent."""
    from companion.practice.tools import measure_display_latency
    sim, reader = pad

    def flash(on):
        t = time.monotonic()
        if on:
            threading.Timer(0.040, lambda: sim.slap(3)).start()
        return t

    ms = measure_display_latency(flash, reader, light_zone=3, flashes=5)
    assert ms is not None and 38 <= ms <= 48
