"""The table's keys and questions: in the window, in a terminal (a real pty), by voice."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time

import pytest

from companion.callouts import phrase
from companion.engine import PRESETS, Game
from companion.live.controls import TableKeys, reply
from companion.live.pipeline import LivePipeline, Roi
from companion.live.runner import Printer
from helpers import ScriptedDetector, SlowOut

P = ["Ada", "Ben", "Cho"]


def _fed(events, players=P, rules="base", out=None):
    pipe = LivePipeline(ScriptedDetector({}), Game(PRESETS[rules]), roi=Roi(0, 0, 320, 240),
                        on_output=out)
    pipe.feed({"type": "start", "players": list(players), "stacks": [10] * len(players)})
    for ev in events:
        pipe.feed(ev)
    return pipe


def test_correction_keys_put_the_last_flip_slap_or_pile_right():
    pipe = _fed([{"type": "flip", "card": "5s"}, {"type": "flip", "card": "Qh"},
                 {"type": "flip", "card": "5h"}, {"type": "slap", "seats": [1]}])
    keys = TableKeys()
    assert keys.key("x", pipe, 1.0) is None              # not a key of the table's
    assert keys.feed("g3", pipe, 1.0) is None            # the pile was Cho's
    assert pipe.game.stacks == [9, 9, 12]
    bad = pipe.correct("award", 7)
    assert bad[0]["type"] == "rejected" and "no seat 7" in bad[0]["reason"]
    keys.feed("c6h", pipe, 2.0)                          # the last flip was the six
    assert pipe.game.top_cards(1) == ["6h"] and pipe.game.stacks == [9, 9, 7]  # Cho's slap
    keys.key("u", pipe, 3.0)                             # and nobody slapped
    assert pipe.game.stacks == [9, 9, 9] and pipe.game.pile_count == 3
    keys.feed("czzzz", pipe, 4.0)                        # not a card: nothing changes
    assert pipe.game.top_cards(1) == ["6h"]
    assert keys.key("q", pipe, 5.0) == "quit"


def test_a_card_the_referee_missed_is_added_in_turn_with_what_it_makes():
    said: list[dict] = []
    pipe = _fed([{"type": "flip", "card": "5s", "t": 1.0}], out=said.append)  # Ada's
    keys = TableKeys()
    # Ben's 9h was played and never called (an art deck's): the table adds it.
    assert keys.feed("a9h", pipe, 2.0) is None
    flip = [a for a in said if a["type"] == "flip"][-1]
    assert flip["card"] == "9h" and flip["seat"] == 1 and flip["added"] is True
    assert pipe.game.top_cards(2) == ["5s", "9h"] and pipe.game.turn == 2
    n = len(said)
    pipe.feed({"type": "flip", "card": "9d", "t": 3.0})  # Cho's card: a pair on it
    assert [(a["type"], a.get("seat")) for a in said[n:]][0] == ("flip", 2)
    assert "pattern" in [a["type"] for a in said[n:]]
    # A card already in the pile, or not a card, is refused and changes nothing.
    for bad in ("9h", "zz"):
        out = pipe.missed(bad, t=4.0)
        assert out[0]["type"] == "rejected" and bad in out[0]["reason"]
        assert pipe.game.top_cards(3) == ["5s", "9h", "9d"]
    # The referee asked who took the pile because that card hid it: adding the card
    # answers "nobody" first, and what was held follows it.
    pipe.asking = {"type": "ask", "question": "pile_taken", "t": 5.0}
    keys.feed("aKc", pipe, 5.5)
    answers = [a for a in said if a["type"] == "answer"]
    assert pipe.asking is None and answers[-1]["seat"] is None
    assert pipe.game.top_cards(1) == ["Kc"] and pipe.game.pile_count == 4


def test_seat_keys_slap_and_answer_and_d_deals_the_next_hand():
    said: list[dict] = []
    pipe = _fed([{"type": "flip", "card": "7s"}, {"type": "flip", "card": "7h"}], P[:2],
                out=said.append)
    keys = TableKeys()
    keys.key("2", pipe, 1.0)                             # Ben slaps the pair
    assert pipe.game.stacks == [9, 11]
    keys.key("9", pipe, 1.1)                             # no ninth seat: not a key
    assert pipe.game.stacks == [9, 11]
    keys.key("d", pipe, 1.2)                             # the hand is being played
    assert said[-1]["type"] == "rejected" and "still being played" in said[-1]["reason"]
    pipe.asking = {"type": "ask", "question": "pile_taken", "t": 2.0}
    pipe.feed({"type": "flip", "card": "2c", "t": 2.1})  # held while the table is asked
    keys.key("1", pipe, 2.5)                             # Ada took it
    assert pipe.asking is None and pipe.game.top_cards(1) == ["2c"]
    assert keys.key("0", pipe, 2.6) is None              # nothing asked: 0 is no key
    assert pipe.game.pile_count == 1
    pipe.asking = {"type": "ask", "question": "pile_taken", "t": 3.0}
    pipe.feed({"type": "flip", "card": "2h", "t": 3.1})  # held
    assert keys.key("0", pipe, 3.5) == "done"            # nobody took it: still there
    answers = [a for a in said if a["type"] == "answer"]
    assert pipe.asking is None and answers[-1]["seat"] is None
    assert pipe.game.top_cards(2) == ["2c", "2h"]        # the held card went on that pile
    assert "pattern" in [a["type"] for a in said[-3:]]   # a pair, on the pile not taken


def test_each_question_is_answered_in_words():
    g = Game(PRESETS["challenge"])
    g.start(P, stacks=[10, 10, 10])
    for c in ("4d", "9s", "Kh"):
        g.flip(c)
    words = {q: phrase(reply(g, q), P) for q in ("turn", "pile", "cards", "chances", "score")}
    assert words == {
        "turn": "Ada to play.",
        "pile": "Top: king of hearts, nine of spades, four of diamonds; three cards.",
        "cards": "Ada nine, Ben nine, Cho nine; pile three.",
        "chances": "Ada, three chances left.",
        "score": "No hands won yet.",
    }
    g.flip("2c")
    assert phrase(reply(g, "chances"), P) == "Ada, two chances left."
    with pytest.raises(ValueError, match="one of turn"):
        reply(g, "weather")


def test_a_question_is_printed_and_spoken_and_an_award_cuts_it():
    from companion.callouts.speech import Espeak, Speaker
    e = Espeak()
    sp = Speaker(e, record=True, out=SlowOut(e.sample_rate))
    out = io.StringIO()
    printer = Printer(P, False, out=out, speaker=sp)
    pipe = _fed([{"type": "flip", "card": "5s"}, {"type": "flip", "card": "9h"}], out=printer)
    try:
        TableKeys().key("k", pipe, 1.0)                  # how many cards has each player?
        assert sp.wait_idle()
        assert "Ada nine, Ben nine, Cho ten; pile two." in out.getvalue()
        assert sp.spoken[-1][0] == "Ada nine, Ben nine, Cho ten; pile two."
        assert len(sp.spoken[-1][1]) > e.sample_rate * 0.5     # a second or so of voice
        TableKeys().key("p", pipe, 2.0)                  # a long answer, then a sandwich
        time.sleep(0.05)
        pipe.feed({"type": "flip", "card": "5h", "t": 2.1})
        pipe.slap([2], 2.3)
        assert sp.wait_idle()
        assert any(c.startswith("Top: nine of hearts") for c in sp.cut + sp.dropped)
        assert "Cho takes the pile, three cards." in [t for t, _ in sp.spoken]
    finally:
        sp.close()


@pytest.fixture(scope="module")
def film(tmp_path_factory):
    from companion.render.video import GameFilm
    d = tmp_path_factory.mktemp("film")
    # Seed 23: queen, six, queen (a sandwich at 3.1 s), then the jack of clubs at 4.4 s.
    return GameFilm(PRESETS["base"], P[:2], seed=23, size=(640, 360),
                    seconds=7).write(d / "g.mp4", progress=False)


def test_the_terminal_keyboard_drives_a_game_through_a_pty(film, tmp_path):
    """No window: `run` on a terminal (a pseudo-terminal, as SSH gives) takes the keys."""
    master, slave = pty.openpty()
    log = tmp_path / "s.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion", "run", "--camera", film["video"], "--rules", "base",
         "--players", "Ada,Ben", "--window", "off", "--voice", "off", "--camera-slaps", "off",
         "--log", str(log)], stdin=slave, stdout=slave, stderr=slave,
        env=dict(os.environ, YOLO_OFFLINE="1"), close_fds=True)
    os.close(slave)
    seen = []

    def until(text: str, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if any(text in line for line in seen):
                return
            r, _, _ = select.select([master], [], [], 0.1)
            if r:
                try:
                    data = os.read(master, 4096).decode("utf-8", "replace")
                except OSError:
                    break
                seen.extend(data.replace("\r", "").splitlines())
        raise AssertionError(f"never saw {text!r}; saw {seen[-15:]}")

    try:
        until("keys (terminal)")
        until("Sandwich!")
        os.write(master, b"2")                       # Ben slaps it
        until("Ben takes the pile, three cards.")
        os.write(master, b"t")
        until("Ben to play.")
        os.write(master, b"u")                       # no: nobody slapped
        until("Correction:")
        os.write(master, b"s")
        until("No hands won yet.")
        os.write(master, b"q")
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    from companion.live.session import read_log
    session = read_log(log)
    assert [e["seats"] for e in session.events if e and e["type"] == "slap"] == []  # undone
    assert any(c["type"] == "correction" for c in session.calls)
