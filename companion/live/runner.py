"""`companion watch`, `companion run` and `companion demo`: the live referee's loops."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from ..callouts import Verbosity, phrase
from ..detector.detections import Detector
from ..engine import Game, Rules
from .capture import Frame
from .controls import HELP, TableKeys, TerminalKeys
from .display import compose
from .pipeline import LivePipeline, Roi
from .session import ReplayError, Session, SessionLog, read_log

WINDOW = "ratscrew companion"


def has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) \
        or sys.platform in ("win32", "darwin")


def load_slaps(path: str | Path) -> tuple[dict | None, list[dict]]:
    """A truth or session file: its start event and its slap events (with frames)."""
    start, slaps = None, []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            raise ValueError(f"{path}:{n}: not JSON") from None
        if rec.get("type") == "start" and start is None:
            start = rec
        elif rec.get("type") == "slap":
            if "frame" not in rec:
                raise ValueError(f"{path}:{n}: slap without a frame number")
            slaps.append(rec)
    return start, sorted(slaps, key=lambda r: r["frame"])


@dataclass
class RunStats:
    frames: int = 0
    inferences: int = 0
    seconds: float = 0.0
    flips: int = 0
    dropped: int = 0          # frames a live source dropped while processing was behind


class Printer:
    """Each record to stdout: JSON Lines, or what a player would hear."""

    def __init__(self, players: list[str], as_json: bool, verbosity: Verbosity = Verbosity.CARDS,
                 out=None, speaker=None, wall_clock: bool = False) -> None:
        """wall_clock: stamp lines with the time of day (a live table), not the video's
        minutes and seconds."""
        # out None: whatever sys.stdout is when a record is printed (a default bound at
        # import kept a stream that had since been replaced, as pytest's capture is).
        self.players, self.as_json, self.verbosity = players, as_json, verbosity
        self._out = out
        self.speaker = speaker
        self.wall_clock = wall_clock

    @property
    def out(self):
        return self._out if self._out is not None else sys.stdout

    def __call__(self, rec: dict) -> None:
        if self.as_json:
            self.out.write(json.dumps(rec) + "\n")
            self.out.flush()
            return
        if rec.get("type") == "unclear":
            text = "Card unclear."
        elif rec.get("type") == "rejected":
            text = f"(refused: {rec.get('reason')})"
        else:
            text = phrase(rec, self.players, self.verbosity)
        if text:
            t = rec.get("t")
            if self.wall_clock:
                stamp = time.strftime("%H:%M:%S  ")
            else:
                stamp = f"{int(t // 60):02d}:{t % 60:05.2f}  " if isinstance(t, (int, float)) \
                    else ""
            self.out.write(stamp + text + "\n")
            self.out.flush()
            if self.speaker is not None:
                self.speaker.say(rec, text)


def run_frames(pipeline: LivePipeline, frames: Iterable[Frame], slaps: list[dict] | None = None,
               show: bool = False, high_contrast: bool = False,
               clock: Callable[[], float] = time.monotonic, live: bool = False, hub=None,
               terminal=None) -> RunStats:
    """The loop shared by watch, run and demo. The table's keys (companion.live.controls)
    come from the window (show), the terminal (a TerminalKeys) and the page's buttons
    (hub.keys); live: stamped with the clock, else with the frame's video time."""
    import cv2
    if hub is not None:
        from ..web.server import page_state
    from .capture import CameraHealth
    stats = RunStats()
    health = CameraHealth()
    blind_from: float | None = None     # since when the camera gave no picture
    pending = list(slaps or [])
    shown_asked = False         # whether the page shows the referee's question
    inputs = {"window": TableKeys(), "terminal": TableKeys(), "page": TableKeys()}
    if hub is not None:                 # the page shows the table from the start
        hub.publish_state(page_state(pipeline.game, question=pipeline.asking))
    t0 = time.perf_counter()
    for frame in frames:
        changed = False
        now = clock() if live else frame.t
        # The table page's answers to the referee's question (who took the pile).
        while hub is not None and not hub.answers.empty():
            seat = hub.answers.get_nowait()
            changed |= bool(pipeline.answer(seat, now))
        typed = [("terminal", terminal.pending() if terminal is not None else "")]
        while hub is not None and not hub.keys.empty():
            typed.append(("page", hub.keys.get_nowait()))
        said = [inputs[where].feed(text, pipeline, now) for where, text in typed if text]
        changed |= bool(said)
        if "quit" in said:
            break
        # Recorded slaps (a pad log, or a rendered game's truth) land at their frames.
        while pending and pending[0]["frame"] <= frame.index:
            s = pending.pop(0)
            changed |= bool(pipeline.slap(s["seats"], s.get("t", frame.t), source="recorded"))
        usable, status = health.check(frame)
        if status is not None:
            pipeline.announce(status, frame.index)
            changed = True
        if not usable and blind_from is None:
            blind_from = frame.t
        elif usable and blind_from is not None:
            pipeline.unseen(frame.t - blind_from)
            blind_from = None
        # A picture all one shade holds nothing: the tracker waits for the next real one
        # rather than take the pile for gone (the hands learn the table from it).
        for rec in pipeline.process(frame, readable=usable):
            stats.flips += rec.get("type") == "flip"
            changed = True
        stats.frames += 1
        if show:
            g = pipeline.game
            ev = pipeline.state.evidence
            img = compose(frame.image, pipeline.state.detections, g, pipeline.roi, high_contrast,
                          list(g.top_patterns), pipeline.state.unclear, ev.top if ev else None)
            cv2.imshow(WINDOW, img)
            k = cv2.waitKey(1) & 0xFF
            if k != 255:
                if inputs["window"].key(chr(k), pipeline, clock() if live else frame.t) == "quit":
                    break
                changed = True
        asked = pipeline.asking is not None
        if hub is not None and (changed or asked != shown_asked):
            hub.publish_state(page_state(pipeline.game, question=pipeline.asking))
            shown_asked = asked
    stats.seconds = time.perf_counter() - t0
    stats.inferences = pipeline.inferences
    if show:
        cv2.destroyAllWindows()
    return stats


def deck_info(detector: Detector) -> dict | None:
    """Which enrolled deck the detector reads with (None: the generic reader): kept in
    the session log, so a log is only resumed with the same deck."""
    deck = getattr(getattr(detector, "reader", None), "deck", None)
    return None if deck is None else {"name": deck.name, "id": deck.id}


def open_resume(log_path: str, rules: Rules | None, detector: Detector) -> Session:
    """The session to carry on, checked against this run: the same rules (None: the
    log's) and the same deck. One ReplayError naming the log otherwise."""
    session = read_log(log_path)
    if session.warning:
        print(session.warning, file=sys.stderr, flush=True)
    if rules is not None and rules.to_dict() != session.rules.to_dict():
        raise ReplayError(f"{log_path}: the log was refereed under rules "
                          f"'{session.rules.preset}', other than this run's '{rules.preset}' "
                          "(leave out --rules to carry on under the log's)")
    deck = deck_info(detector)
    if (deck or {}).get("id") != (session.deck or {}).get("id"):
        was = f"deck '{session.deck['name']}'" if session.deck else "no enrolled deck"
        now = f"deck '{deck['name']}'" if deck else "no enrolled deck"
        raise ReplayError(f"{log_path}: the log was refereed with {was}, this run has {now} "
                          "(pass the log's --deck)")
    if len(session.players) < 2:
        raise ReplayError(f"{log_path}: its meta line names no players")
    return session


def make_pipeline(detector: Detector, rules: Rules, players: list[str], printer: Printer,
                  roi: Roi | None = None, gate: bool = True, log_path: str | None = None,
                  evidence_dir: Path | None = None, stacks: list[int] | None = None,
                  hub=None, seats: list[float] | None = None,
                  camera_referees: bool = True, resume: Session | None = None,
                  t: float = 0.0) -> LivePipeline:
    """seats: watch for slaps with the camera, players sitting there (companion.live.seats);
    camera_referees: its slaps referee (False: a pad does, the camera's are shown).
    resume: carry on this session (its log is appended to), play going on at time t."""
    from .hands import HandWatcher
    pipe: LivePipeline | None = None

    def output(rec: dict) -> None:
        printer(rec)
        if hub is not None:
            hub.publish_call(rec)

    def log_stopped(reason: str) -> None:
        print(reason, file=sys.stderr, flush=True)
        if pipe is not None:
            pipe.log_stopped(reason)

    log = SessionLog(log_path, rules, players, deck=deck_info(detector), resume=resume,
                     on_stop=log_stopped) if log_path else None
    pipe = LivePipeline(detector, Game(rules), roi=roi, gate=gate, evidence_dir=evidence_dir,
                        on_output=output, log=log,
                        hands=HandWatcher(seats) if seats is not None else None,
                        camera_referees=camera_referees)
    if log is not None and log.stopped:       # the meta line could not be written
        pipe.log_stopped(log.stopped)
    if resume is not None:
        pipe.restore(resume, t)
        pipe.announce(dict(pipe.game.snapshot(), type="resumed", events=len(resume.events),
                           t=t))
        if pipe.asking is not None:
            pipe.announce(dict(pipe.asking))
        return pipe
    start = {"type": "start", "players": players}
    if stacks:
        start["stacks"] = stacks
    pipe.feed(start)
    return pipe


def finish(pipe: LivePipeline, t: float | None = None) -> dict:
    """The referee's state at the end of a run, said and logged last."""
    state = pipe.game.snapshot()
    if t is not None:
        state["t"] = t
    pipe.announce(state)
    if pipe.log is not None:
        pipe.log.close()
    return state


def _summary(stats: RunStats, truth_flips: int | None, out) -> None:
    fps = stats.frames / stats.seconds if stats.seconds else 0.0
    line = (f"{stats.frames} frames in {stats.seconds:.1f} s ({fps:.0f} frames/s), detector on "
            f"{stats.inferences} of them; {stats.flips} flips called")
    if truth_flips is not None:
        line += f" ({truth_flips} in the ground truth)"
    print(line, file=out)


WARM_FRAMES = 10     # frames before a resumed video's first that the motion cues look at


def run_watch(video: str, detector: Detector, rules: Rules | None, players: list[str],
              as_json: bool, slaps_path: str | None, gate: bool, roi: Roi | None,
              log_path: str | None, realtime: bool = False, seats: list[float] | None = None,
              resume: str | None = None) -> int:
    """realtime: the video plays at its own frame rate through the camera's newest-frame
    path, so frames are dropped when processing is slower (as a camera would). seats:
    the camera sees the slaps, players sitting there. A question the referee asks (who
    took a pile) is printed; a recorded video has nobody to answer it, so play after it
    is held. resume: a session log of this video to carry on (rules None: the log's);
    play goes on after the last frame it recorded, appended to the same log. rules None
    without resume: the challenge preset."""
    from ..engine import PRESETS
    from .capture import FileSource, LiveSource
    session = None
    if resume is not None:
        if realtime:
            raise ValueError("--resume plays the video from where the log stopped; "
                             "leave out --realtime")
        if log_path is not None and Path(log_path).resolve() != Path(resume).resolve():
            raise ValueError("--resume carries on in the resumed log; leave out --log")
        session = open_resume(resume, rules, detector)
        rules, players, log_path = session.rules, session.players, resume
    rules = rules or PRESETS["challenge"]
    start, slaps = load_slaps(slaps_path) if slaps_path else (None, [])
    if session is None and start is not None and start.get("players") and \
            len(start["players"]) != len(players):
        players = list(start["players"])
    printer = Printer(players, as_json)
    first = 0 if session is None or session.last_frame is None else session.last_frame + 1
    if session is not None:
        slaps = slaps[session.recorded:]          # those already refereed are in the log
    source = LiveSource(video, paced=True) if realtime else \
        FileSource(video, start=max(0, first - WARM_FRAMES))
    pipe = make_pipeline(detector, rules, players, printer, roi, gate, log_path,
                         stacks=start.get("stacks") if start else None, seats=seats,
                         resume=session, t=first / source.fps)

    def frames():
        for f in source:
            if f.index < first:
                pipe.warm(f)         # what moved just before: a card landing as it resumes
            else:
                yield f

    try:
        stats = run_frames(pipe, frames(), slaps)
    finally:
        if realtime:
            source.stop()
    finish(pipe, round(pipe.watcher.frame_index / source.fps, 4))
    _summary(stats, None, sys.stderr)
    if realtime:
        print(f"frames dropped (processing slower than the video): {source.dropped}",
              file=sys.stderr)
    if pipe.asking is not None:
        print(f"the referee asked who took the pile at {pipe.asking['t']:.2f} s and nobody "
              f"answered: {len(pipe.held)} events after it were not refereed", file=sys.stderr)
    return 0


def run_demo(detector: Detector | None, rules: Rules, players: list[str], seed: int,
             seconds: float, verbosity: Verbosity, show: bool | None, speaker=None) -> int:
    from ..render.video import GameFilm
    from .capture import SyntheticSource
    film = GameFilm(rules, players, seed, seconds=seconds)
    truth = film.timeline.truth
    slaps = [x for x in truth if x["type"] == "slap"]
    show = has_display() if show is None else show
    print(f"Demo: a rendered table, {', '.join(players)}, rules '{rules.preset}', "
          f"{seconds:.0f} s of play; the detector reads every card from the pictures.")
    printer = Printer(players, False, verbosity, speaker=speaker)
    pipe = make_pipeline(detector, rules, players, printer, stacks=truth[0]["stacks"])
    stats = run_frames(pipe, SyntheticSource(film, realtime=show), slaps, show=show)
    _summary(stats, sum(1 for x in truth if x["type"] == "flip"), sys.stdout)
    return 0


def run_live(source_spec: str, detector: Detector, rules: Rules, players: list[str],
             pad: str | None, show: bool | None, high_contrast: bool, roi: Roi | None,
             log_path: str | None, evidence_dir: Path | None, speaker=None, hub=None,
             zones: dict[int, int] | None = None, seats: list[float] | None = None,
             resume: Session | None = None) -> int:
    """resume: a session read back from its log (open_resume): the game goes on from it,
    appended to that log."""
    import queue

    from ..pad import GroupEvent, PadReader, SlapEvent, StatusEvent
    from .capture import open_source
    show = has_display() if show is None else show
    printer = Printer(players, False, speaker=speaker, wall_clock=True)
    source = open_source(source_spec, on_status=lambda m: print(m, file=sys.stderr, flush=True))
    pipe = make_pipeline(detector, rules, players, printer, roi, True, log_path, evidence_dir,
                         hub=hub, seats=seats, camera_referees=pad is None, resume=resume,
                         t=time.monotonic())
    reader = PadReader(pad, seats=zones).start() if pad else None
    terminal = TerminalKeys()
    if show or terminal.active:
        print("keys (" + " and ".join(w for w, on in (("window", show), ("terminal",
                                                                         terminal.active)) if on)
              + "): " + ", ".join(f"{i + 1} = {p}" for i, p in enumerate(players[:9])) +
              "; " + HELP, flush=True)

    def frames():
        for f in source:
            while reader is not None:
                try:
                    ev = reader.events.get_nowait()
                except queue.Empty:
                    break
                if isinstance(ev, SlapEvent):
                    pipe.slap([ev.seat], ev.t)
                elif isinstance(ev, GroupEvent) and len(ev.seats) > 1:
                    first, second = ev.seats[0], ev.seats[1]
                    print(f"{players[first] if first < len(players) else first} first, by "
                          f"{ev.behind_us[1] / 1000:.1f} ms over "
                          f"{players[second] if second < len(players) else second}", flush=True)
                elif isinstance(ev, StatusEvent):
                    print(ev.message, file=sys.stderr, flush=True)
            yield f

    try:
        stats = run_frames(pipe, frames(), show=show, high_contrast=high_contrast,
                           live=True, hub=hub, terminal=terminal)
    except KeyboardInterrupt:
        stats = None
    finally:
        terminal.close()
        if reader is not None:
            reader.stop()
        if hasattr(source, "stop"):
            source.stop()
    finish(pipe, round(time.monotonic(), 4))
    if stats:
        _summary(stats, None, sys.stderr)
    return 0
