"""One practice session: show a card, take the slaps, score, adapt the pace.

The display and the slap source are passed in: a window and the pad (or the
keyboard) at a real table, a scripted player and the pad simulator in tests.
Reaction time = slap onset (pad clock mapped to the host) - the moment the
card was on screen, less the display's and the pad's measured latencies.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..engine import Rules
from .history import History
from .trials import Trial, TrialDeck

MIN_PACE, MAX_PACE = 0.45, 2.5


@dataclass
class Calibration:
    display_ms: float = 0.0      # frame sent -> light on the screen
    pad_ms: float = 0.0          # hand on the pad -> onset the host sees, beyond the clock map


@dataclass
class Outcome:
    seat: int
    outcome: str                 # hit, miss, false, late, pass
    rt_ms: float | None = None
    first: bool | None = None
    margin_ms: float | None = None


@dataclass
class Summary:
    trials: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    rts: list[float] = field(default_factory=list)
    pace_start: float = 0.0
    pace_end: float = 0.0

    def line(self) -> str:
        o = self.outcomes
        targets = o.get("hit", 0) + o.get("miss", 0)
        med = f"{statistics.median(self.rts):.0f} ms" if self.rts else "-"
        return (f"{self.trials} cards: {o.get('hit', 0)}/{targets} patterns hit, median reaction "
                f"{med}, {o.get('false', 0)} false slaps, {o.get('late', 0)} late; pace "
                f"{self.pace_start:.2f} s -> {self.pace_end:.2f} s a card")


Display = Callable[[Trial], float]                       # shows a trial, returns when it appeared
SlapPoll = Callable[[float], Iterable[tuple[int, float]]]  # (seat, onset) until a deadline


class Practice:
    def __init__(self, rules: Rules, players: list[str], display: Display, poll: SlapPoll,
                 history: History | None = None, calibration: Calibration | None = None,
                 pace: float = 1.4, adaptive: bool = True, seed: int | None = None,
                 clock: Callable[[], float] = time.monotonic, source: str = "pad") -> None:
        self.rules, self.players = rules, players
        self.display, self.poll = display, poll
        self.history = history
        self.cal = calibration or Calibration()
        self.pace = pace
        self.adaptive = adaptive
        self.clock = clock
        self.deck = TrialDeck(rules, random.Random(seed))
        self.source = source
        self.session: int | None = None
        self.results: list[tuple[Trial, list[Outcome]]] = []

    def run(self, cards: int | None = None, seconds: float | None = None) -> Summary:
        summary = Summary(pace_start=self.pace)
        if self.history is not None:
            self.session = self.history.start_session(
                self.players[0], self.rules.preset, self.players, self.pace,
                self.cal.display_ms, self.cal.pad_ms, self.source)
        end = self.clock() + seconds if seconds else None
        prev: Trial | None = None
        prev_hit: set[int] = set()
        try:
            while (cards is None or summary.trials < cards) and (end is None or self.clock() < end):
                trial = self.deck.next()
                shown = self.display(trial)
                seen = shown + self.cal.display_ms / 1000
                slaps: dict[int, float] = {}
                for seat, t in self.poll(shown + self.pace):
                    if seat not in slaps and 0 <= seat < len(self.players):
                        slaps[seat] = t - self.cal.pad_ms / 1000
                outcomes = self._score(trial, prev, prev_hit, seen, slaps)
                self._record(trial, shown, outcomes)
                summary.trials += 1
                for o in outcomes:
                    summary.outcomes[o.outcome] = summary.outcomes.get(o.outcome, 0) + 1
                    if o.outcome == "hit" and o.seat == 0:
                        summary.rts.append(o.rt_ms)
                self._adapt(trial, outcomes)
                prev = trial
                prev_hit = {o.seat for o in outcomes if o.outcome == "hit"}
        except KeyboardInterrupt:
            pass
        finally:
            summary.pace_end = self.pace
            if self.history is not None and self.session is not None:
                self.history.end_session(self.session, self.pace)
        return summary

    def _score(self, trial: Trial, prev: Trial | None, prev_hit: set[int], seen: float,
               slaps: dict[int, float]) -> list[Outcome]:
        out = []
        order = sorted(slaps, key=slaps.get)
        for seat in range(len(self.players)):
            if seat in slaps:
                rt = (slaps[seat] - seen) * 1000
                if trial.target:
                    o = Outcome(seat, "hit", rt)
                    if len(order) > 1:
                        o.first = order[0] == seat
                        other = order[1] if order[0] == seat else order[0]
                        o.margin_ms = (slaps[other] - slaps[seat]) * 1000
                elif prev is not None and prev.target and seat not in prev_hit:
                    o = Outcome(seat, "late", rt)      # slapped the last card's pattern, too late
                else:
                    o = Outcome(seat, "false", rt)
            else:
                o = Outcome(seat, "miss" if trial.target else "pass")
            out.append(o)
        return out

    def _record(self, trial: Trial, shown: float, outcomes: list[Outcome]) -> None:
        self.results.append((trial, outcomes))
        if self.history is None or self.session is None:
            return
        for o in outcomes:
            self.history.add_trial(
                self.session, idx=trial.index, seat=o.seat, player=self.players[o.seat],
                shown=shown, card=trial.card, top=" ".join(trial.top),
                pattern=trial.patterns[0] if trial.patterns else None,
                near_miss=int(trial.near_miss), outcome=o.outcome, rt_ms=o.rt_ms,
                first=None if o.first is None else int(o.first), margin_ms=o.margin_ms,
                pace=self.pace)

    def _adapt(self, trial: Trial, outcomes: list[Outcome]) -> None:
        """Faster while the player is quick and right; slower after a mistake."""
        if not self.adaptive:
            return
        me = outcomes[0]
        if me.outcome in ("miss", "false", "late"):
            self.pace = min(MAX_PACE, self.pace * 1.08)
        elif me.outcome == "hit" and me.rt_ms is not None and me.rt_ms < self.pace * 1000 * 0.5:
            self.pace = max(MIN_PACE, self.pace * 0.94)
