"""The session log: every event and announcement as JSON Lines, flushed as it
happens, and `companion replay` that re-runs a log through the engine.

Lines: {"log": "meta", "rules": {...}, "players": [...]}, then
{"log": "event", ...an engine event...} for each input (start, flip, slap,
collect, give) and {"log": "call", ...an announcement...} for each output. A
correction the table made is {"log": "correction", "index": I, "event": E}: the
I-th event logged (from 0) was E instead (null: it never happened); the original
line stays, and replay applies the correction.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Iterator

from ..engine import Game, Rules, rules_from_mapping
from ..engine.rules import RulesError


class SessionLog:
    def __init__(self, path: str | Path, rules: Rules, players: list[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] = self.path.open("a", encoding="utf-8")
        self._write({"log": "meta", "rules": rules.to_dict(), "players": players})

    def _write(self, rec: dict) -> None:
        self._fh.write(json.dumps(rec) + "\n")
        self._fh.flush()          # a crash or a pulled plug loses nothing already said

    def event(self, ev: dict) -> None:
        self._write({"log": "event", **ev})

    def call(self, ann: dict) -> None:
        self._write({"log": "call", **ann})

    def correction(self, index: int, event: dict | None, ann: dict) -> None:
        self._write({"log": "correction", "index": index, "event": event})
        self.call(ann)

    def close(self) -> None:
        self._fh.close()


class ReplayError(ValueError):
    pass


def read_log(path: str | Path) -> tuple[Rules, list[str], list[dict], list[dict]]:
    """(rules, players, events, calls) from a session log; bad lines are named."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ReplayError(f"{path}: {exc.strerror}") from None
    rules = players = None
    events, calls = [], []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            kind = rec.pop("log")
        except (json.JSONDecodeError, KeyError, AttributeError, TypeError):
            raise ReplayError(f"{path}:{n}: not a session log line") from None
        if kind == "meta" and rules is None:
            try:
                rules = rules_from_mapping(rec["rules"])
            except (RulesError, KeyError, TypeError) as exc:
                raise ReplayError(f"{path}:{n}: bad rules: {exc}") from None
            players = rec.get("players", [])
        elif kind == "event":
            events.append(rec)
        elif kind == "call":
            calls.append(rec)
        elif kind == "correction":
            i = rec.get("index")
            if type(i) is not int or not 0 <= i < len(events):
                raise ReplayError(f"{path}:{n}: correction of event {i!r}: no such event")
            events[i] = rec.get("event")
    if rules is None:
        raise ReplayError(f"{path}: no meta line: not a session log")
    return rules, players, events, calls


def replay(path: str | Path) -> Iterator[dict]:
    """Re-run the logged events through a fresh engine; yields its announcements."""
    rules, _, events, _ = read_log(path)
    game = Game(rules)
    for ev in events:
        if ev is None:              # corrected away
            continue
        try:
            yield from game.apply(ev)
        except Exception as exc:   # EventError: the log holds what the referee refused too
            yield {"type": "rejected", "reason": str(exc)}
