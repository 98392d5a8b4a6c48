"""--resume: a session log carries the whole referee, and a killed run goes on from it."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from companion.engine import PRESETS, Game
from companion.live.capture import Frame
from companion.live.pipeline import LivePipeline, Roi
from companion.live.runner import finish, make_pipeline, open_resume
from companion.live.session import ReplayError, SessionLog, read_log
from helpers import ScriptedDetector as Scripted

MAIN = [sys.executable, "-m", "companion"]
ENV = dict(os.environ, YOLO_OFFLINE="1", PYTHONUNBUFFERED="1")


def _drive(pipe: LivePipeline, det: Scripted, frames: range) -> list[dict]:
    out = []
    for i in frames:
        det.frame = i
        out += pipe.process(Frame(i, i / 30, np.full((240, 320, 3), i % 7, np.uint8)))
    return out


def _key(ev):
    return None if ev is None else {k: ev.get(k) for k in ("type", "card", "seats", "seat")}


def test_the_whole_referee_comes_back_from_the_log(tmp_path):
    """Stacks, pile, penalty cards, turn, open challenge, hands won: the resumed referee's
    state is the logged one, the tracker knows the pile's cards (seen again, they are no
    flips) and the next card goes on the same pile."""
    rules = PRESETS["challenge"]
    log_path = tmp_path / "s.jsonl"
    det = Scripted({2: [("5s", 0.9, (60, 60))], 8: [("5s", 0.9, (60, 60)), ("Kh", 0.9, (90, 60))],
                    14: [("5s", 0.9, (60, 60)), ("Kh", 0.9, (90, 60)), ("3d", 0.9, (120, 60))]})
    calls: list[dict] = []
    pipe = LivePipeline(det, Game(rules), roi=Roi(0, 0, 320, 240),
                        log=SessionLog(log_path, rules, ["Ada", "Ben"]), on_output=calls.append)
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [10, 10]})
    _drive(pipe, det, range(0, 12))
    pipe.slap([0], 0.4)                      # a wrong slap: two penalty cards under the pile
    _drive(pipe, det, range(12, 18))
    before = pipe.game.snapshot()
    assert before["challenge"] is not None and before["under"] == 2 and before["pile"] == 5

    session = read_log(log_path)
    det2 = Scripted({0: det.script[14]})     # the same pile in view when it resumes
    calls2: list[dict] = []
    pipe2 = make_pipeline(det2, rules, session.players, calls2.append, roi=Roi(0, 0, 320, 240),
                          log_path=str(log_path), resume=session, t=0.6)
    assert pipe2.game.snapshot() == before
    assert calls2[0]["type"] == "resumed" and calls2[0]["challenge"] == before["challenge"]
    assert _drive(pipe2, det2, range(18, 30)) == []      # the pile's cards are no flips
    det2.script[31] = det.script[14] + [("9c", 0.9, (150, 60))]
    out = _drive(pipe2, det2, range(30, 36))
    assert [c["card"] for c in out if c["type"] == "flip"] == ["9c"]
    assert pipe2.game.pile_count == 6
    # One log, both runs: replayed it ends where the resumed referee is.
    finish(pipe2)
    again = read_log(log_path)
    assert [_key(e) for e in again.events][:len(session.events)] == \
        [_key(e) for e in session.events]
    g = Game(rules)
    for ev in again.events:
        g.apply(ev)
    assert g.snapshot() == pipe2.game.snapshot()


def test_an_unanswered_question_is_asked_again(tmp_path):
    rules = PRESETS["base"]
    log_path = tmp_path / "s.jsonl"
    pipe = LivePipeline(Scripted({}), Game(rules), roi=Roi(0, 0, 320, 240),
                        log=SessionLog(log_path, rules, ["Ada", "Ben"]))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [10, 10]})
    pipe.feed({"type": "flip", "card": "4c", "t": 0.1})
    pipe.asking = {"type": "ask", "question": "pile_taken", "t": 0.5, "cards": 1}
    pipe.announce(dict(pipe.asking), 15)
    calls: list[dict] = []
    pipe2 = make_pipeline(Scripted({}), rules, ["Ada", "Ben"], calls.append,
                          log_path=str(log_path), resume=read_log(log_path), t=1.0)
    assert pipe2.asking is not None and [c["type"] for c in calls] == ["resumed", "ask"]
    pipe2.answer(1, 1.2)
    assert pipe2.game.stacks == [9, 11]


def test_every_call_is_in_the_log_before_it_is_said(tmp_path):
    log_path = tmp_path / "s.jsonl"
    said = []

    def say(rec):
        logged = [json.loads(x) for x in log_path.read_text().splitlines()]
        said.append(any(x["log"] == "call" and x["type"] == rec["type"] and
                        x.get("t") == rec.get("t") for x in logged))

    pipe = LivePipeline(Scripted({}), Game(PRESETS["base"]), log=SessionLog(
        log_path, PRESETS["base"], ["Ada", "Ben"]), on_output=say)
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [5, 5]})
    for i, card in enumerate(["7s", "7h"]):
        pipe.feed({"type": "flip", "card": card, "t": i})
    pipe.slap([1], 2.0)
    assert len(said) >= 8 and all(said)


def test_a_half_written_last_line_is_skipped_with_a_warning_and_cut_off(tmp_path, capsys):
    log_path = tmp_path / "s.jsonl"
    pipe = LivePipeline(Scripted({}), Game(PRESETS["base"]),
                        log=SessionLog(log_path, PRESETS["base"], ["Ada", "Ben"]))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [5, 5]})
    pipe.feed({"type": "flip", "card": "7s", "t": 0.1})
    with log_path.open("a") as fh:
        fh.write('{"log": "event", "at": 9, "type": "flip", "ca')      # killed mid-line
    session = read_log(log_path)
    assert session.warning and "half-written last line" in session.warning
    assert [e["type"] for e in session.events] == ["start", "flip"]
    pipe2 = make_pipeline(Scripted({}), PRESETS["base"], ["Ada", "Ben"], lambda r: None,
                          log_path=str(log_path), resume=session)
    pipe2.feed({"type": "flip", "card": "8d", "t": 0.5})
    again = read_log(log_path)             # the half line is gone, the log reads whole
    assert again.warning is None
    assert [e.get("card") for e in again.events] == [None, "7s", "8d"]
    assert pipe2.game.snapshot()["top"] == ["7s", "8d"]


def test_a_corrupt_log_or_one_of_other_rules_or_deck_is_one_clear_error(tmp_path):
    good = tmp_path / "s.jsonl"
    SessionLog(good, PRESETS["base"], ["Ada", "Ben"]).close()
    with pytest.raises(ReplayError, match="rules 'base', other than this run's 'challenge'"):
        open_resume(str(good), PRESETS["challenge"], Scripted({}))

    class DeckReader:
        class reader:
            class deck:
                name, id = "club", "abc123"

    with pytest.raises(ReplayError, match="no enrolled deck, this run has deck 'club'"):
        open_resume(str(good), None, DeckReader())
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text() + "garbage\n" + '{"log": "event", "type": "flip"}\n')
    with pytest.raises(ReplayError, match=r"bad.jsonl:2: not a session log line"):
        read_log(bad)
    other = tmp_path / "notes.txt"
    other.write_text('{"log": "event", "type": "start"}\n')
    with pytest.raises(ReplayError, match="no meta line"):
        read_log(other)
    # Through the command: one line, exit 2.
    res = subprocess.run(MAIN + ["watch", "nothing.mp4", "--resume", str(bad)],
                         capture_output=True, text=True, env=ENV)
    assert res.returncode == 2 and "bad.jsonl:2: not a session log line" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def film(tmp_path_factory):
    from companion.render.video import GameFilm
    d = tmp_path_factory.mktemp("film")
    # 9.8 s of seed 23: eight cards, three slaps, piles won and picked up (the third slap
    # lands at 9.26 s; a film ends at least 0.3 s after its last slap).
    info = GameFilm(PRESETS["base"], ["Ada", "Ben"], seed=23, size=(640, 360),
                    seconds=9.8).write(d / "g.mp4", progress=False)
    return d, info


def _watch(video, truth, *extra):
    return MAIN + ["watch", str(video), "--rules", "base", "--players", "Ada,Ben", "--slaps",
                   str(truth), "--json", *extra]


def _final(stdout: str) -> dict:
    state = [json.loads(x) for x in stdout.splitlines() if x.startswith("{")][-1]
    assert state["type"] == "state"
    return {k: v for k, v in state.items() if k != "t"}


def test_killed_at_20_random_moments_and_resumed_it_ends_as_if_never_stopped(film, tmp_path):
    d, info = film
    full = subprocess.run(_watch(info["video"], info["truth"], "--log", str(tmp_path / "f.jsonl")),
                          capture_output=True, text=True, env=ENV, timeout=120)
    assert full.returncode == 0, full.stderr
    want = _final(full.stdout)
    want_events = [_key(e) for e in read_log(tmp_path / "f.jsonl").events]
    assert len(want_events) >= 12 and sum(e["type"] == "slap" for e in want_events) == 3
    lines = len((tmp_path / "f.jsonl").read_text().splitlines())
    rng = random.Random(17)
    cut = []                   # how many events each killed run had logged
    for k in range(20):
        log = tmp_path / f"k{k}.jsonl"
        # Killed once the log holds a random number of its lines, a random moment later.
        at = rng.randrange(1, lines - 2)
        proc = subprocess.Popen(_watch(info["video"], info["truth"], "--log", str(log)),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        while proc.poll() is None and (not log.exists() or
                                       log.read_bytes().count(b"\n") < at):
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.05))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        cut.append(log.read_bytes().count(b'"log": "event"'))
        res = subprocess.run(_watch(info["video"], info["truth"], "--resume", str(log)),
                             capture_output=True, text=True, env=ENV, timeout=120)
        assert res.returncode == 0, (k, res.stderr)
        assert _final(res.stdout) == want, (k, at)
        assert [_key(e) for e in read_log(log).events] == want_events, (k, at)
        assert b'"log": "resume"' in log.read_bytes()
    # The kills fell all through the game, not after its end.
    assert sum(c < len(want_events) for c in cut) >= 18 and len(set(cut)) >= 8, cut


def test_a_resumed_match_keeps_its_hands_and_goes_on_to_the_same_winner(tmp_path):
    from companion.sim.bots import play_hand
    stats = play_hand(PRESETS["base"], ["Ada", "Ben"], 5, hands=3)
    events = [e for i, e in enumerate(stats.events) if e["type"] != "start" or i == 0]
    cut = next(i for i, e in enumerate(events) if e["type"] == "flip" and i > 0 and
               sum(x["type"] == "flip" for x in events[:i]) == 120)     # in hand two
    log_path = tmp_path / "s.jsonl"
    said: list[dict] = []
    pipe = LivePipeline(Scripted({}), Game(PRESETS["base"]), on_output=said.append,
                        log=SessionLog(log_path, PRESETS["base"], ["Ada", "Ben"]))
    for ev in events[:cut]:
        pipe.feed(ev)
    assert pipe.game.hand_number == 2 and pipe.game.hands_won == [0, 1]
    session = read_log(log_path)
    pipe2 = make_pipeline(Scripted({}), PRESETS["base"], session.players, said.append,
                          log_path=str(log_path), resume=session)
    assert pipe2.game.snapshot() == pipe.game.snapshot() and pipe2.game.dealer == 0
    for ev in events[cut:]:
        pipe2.feed(ev)
    assert [a["winner"] for a in said if a["type"] == "hand_over"] == stats.winners
    assert [a["winner"] for a in said if a["type"] == "match_over"] == [0]
