"""The session log: every event and announcement as JSON Lines, written and flushed
before anything is said, `companion replay` that re-runs a log through the engine, and
what `--resume` reads back.

Lines: {"log": "meta", "rules": {...}, "players": [...], "deck": ...}, then
{"log": "event", "at": FRAME, ...an engine event...} for each input (start, flip, slap,
collect, give; "src": "recorded" on a slap from a recorded slap file, "box" on a flip:
where the tracker saw the card) and {"log": "call", ...an announcement...} for each
output. A correction the table made is {"log": "correction", "index": I, "event": E}:
the I-th event logged (from 0) was E instead (null: it never happened); the original
line stays, and replay applies the correction. A resumed session appends
{"log": "resume", ...} and goes on in the same file.

Each line is flushed as it is written, not fsynced: a crashed or killed process loses
nothing (the data is in the kernel's page cache), and only a power cut or a kernel crash
can lose the last few seconds. An fsync a line costs milliseconds on some disks, on the
path between a card landing and the callout, for a risk the table can recover from (the
last card or two are read again).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable, Iterator

from ..engine import Game, Rules, rules_from_mapping
from ..engine.rules import RulesError


class SessionLog:
    def __init__(self, path: str | Path, rules: Rules, players: list[str],
                 deck: dict | None = None, resume: "Session | None" = None,
                 on_stop: Callable[[str], None] | None = None) -> None:
        """resume: the session read back from this file, appended to; a half-written last
        line is cut off first (it was warned about when read). on_stop: called once with
        one line when the log can no longer be written (disk full): the referee goes on."""
        self.path = Path(path)
        self.on_stop = on_stop or (lambda msg: None)
        self.stopped: str | None = None
        if resume is not None:
            with self.path.open("r+b") as fh:
                fh.truncate(resume.end)
                if resume.end and not resume.ends_with_newline:
                    fh.seek(resume.end)
                    fh.write(b"\n")
            self._fh: IO[str] = self.path.open("a", encoding="utf-8")
            self._write({"log": "resume", "wall": time.strftime("%Y-%m-%dT%H:%M:%S"),
                         "after_frame": resume.last_frame, "events": len(resume.events)})
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.path.open("a", encoding="utf-8")
        self._write({"log": "meta", "rules": rules.to_dict(), "players": players,
                     "deck": deck, "wall": time.strftime("%Y-%m-%dT%H:%M:%S")})

    def _write(self, rec: dict) -> None:
        if self.stopped is not None:
            return
        try:
            self._fh.write(json.dumps(rec) + "\n")
            self._fh.flush()      # a crash or a kill loses nothing already said
        except OSError as exc:
            self.stopped = f"session log {self.path}: {exc.strerror or exc}; the log stopped"
            try:
                self._fh.close()
            except OSError:
                pass              # the buffer it could not write is gone with it
            self.on_stop(self.stopped)

    def event(self, ev: dict, frame: int | None = None, **extra) -> None:
        self._write({"log": "event", "at": frame, **extra, **ev})

    def call(self, ann: dict) -> None:
        self._write({"log": "call", **ann})

    def correction(self, index: int, event: dict | None) -> None:
        self._write({"log": "correction", "index": index, "event": event})

    def close(self) -> None:
        if self.stopped is None:
            self._fh.close()


class ReplayError(ValueError):
    pass


@dataclass
class Session:
    """A session log read back: what replay and --resume need."""
    path: Path
    rules: Rules
    players: list[str]
    deck: dict | None = None
    events: list[dict | None] = field(default_factory=list)   # corrections applied
    frames: list[int | None] = field(default_factory=list)    # the frame of each event
    boxes: list[list[float] | None] = field(default_factory=list)  # a flip's box
    recorded: int = 0          # slaps fed from a recorded slap file
    calls: list[dict] = field(default_factory=list)
    last_frame: int | None = None
    end: int = 0               # bytes up to the end of the last whole line
    ends_with_newline: bool = True
    warning: str | None = None  # a half-written last line, skipped


def _event_fields(rec: dict) -> tuple[dict, int | None, list | None, str | None]:
    frame, box, src = rec.pop("at", None), rec.pop("box", None), rec.pop("src", None)
    return rec, frame if type(frame) is int else None, box, src


def read_log(path: str | Path) -> Session:
    """The session in a log; a bad line is one ReplayError naming it, except a
    half-written last line (a crash while writing it), which is skipped with a warning."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ReplayError(f"{path}: {exc.strerror}") from None
    lines = data.split(b"\n")
    session: Session | None = None
    offset = 0
    for n, raw in enumerate(lines, 1):
        last = n == len(lines)          # the bytes after the final newline (if any)
        offset += len(raw) + (0 if last else 1)
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw.decode("utf-8"))
            kind = rec.pop("log")
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, AttributeError,
                TypeError):
            if last and session is not None:
                # No newline after it: the writer was stopped halfway through this line.
                session.warning = (f"{path}:{n}: a half-written last line ({len(raw)} "
                                   "bytes, the moment of the crash) was skipped")
                break
            raise ReplayError(f"{path}:{n}: not a session log line") from None
        if session is None:
            if kind != "meta":
                raise ReplayError(f"{path}: no meta line first: not a session log")
            try:
                rules = rules_from_mapping(rec["rules"])
            except (RulesError, KeyError, TypeError) as exc:
                raise ReplayError(f"{path}:{n}: bad rules: {exc}") from None
            session = Session(path, rules, list(rec.get("players") or []), rec.get("deck"))
        elif kind == "event":
            ev, frame, box, src = _event_fields(rec)
            session.events.append(ev)
            session.frames.append(frame)
            session.boxes.append(box)
            session.recorded += src == "recorded"
            if frame is not None:
                session.last_frame = max(frame, session.last_frame or frame)
        elif kind == "call":
            session.calls.append(rec)
            f = rec.get("frame")
            if type(f) is int:
                session.last_frame = max(f, session.last_frame or f)
        elif kind == "correction":
            i = rec.get("index")
            if type(i) is not int or not 0 <= i < len(session.events):
                raise ReplayError(f"{path}:{n}: correction of event {i!r}: no such event")
            session.events[i] = rec.get("event")
        session.end = offset
        session.ends_with_newline = not last
    if session is None:
        raise ReplayError(f"{path}: no meta line: not a session log")
    return session


def replay(session: "Session | str | Path") -> Iterator[dict]:
    """Re-run the logged events (a Session, or a log's path) through a fresh engine;
    yields its announcements."""
    if not isinstance(session, Session):
        session = read_log(session)
    game = Game(session.rules)
    for ev in session.events:
        if ev is None:              # corrected away
            continue
        try:
            yield from game.apply(ev)
        except Exception as exc:   # EventError: the log holds what the referee refused too
            yield {"type": "rejected", "reason": str(exc)}
