"""Callouts: the phrasing a table understands, and a voice that never falls behind."""

from __future__ import annotations

import time

import numpy as np
import pytest

from companion.callouts import Verbosity, phrase
from companion.engine import PRESETS, Game

P = ["Ada", "Ben", "Cho"]


@pytest.mark.parametrize("ann,text", [
    ({"type": "flip", "seat": 0, "card": "7h", "pile": 3}, "Seven of hearts."),
    ({"type": "pattern", "patterns": ["double"], "cards": ["7s", "7h"]}, "Double! Sevens."),
    ({"type": "pattern", "patterns": ["sandwich"], "cards": ["Kh", "4s", "Kd"]}, "Sandwich!"),
    ({"type": "challenge", "by": 0, "seat": 1, "count": 3, "card": "Kd"},
     "King — Ben, three chances."),
    ({"type": "flip", "seat": 1, "card": "5h", "pile": 3, "left": 2},
     "Five of hearts. Ben, two left."),
    ({"type": "award", "seat": 0, "reason": "slap", "cards": 12}, "Ada takes the pile, twelve cards."),
    ({"type": "wrong_slap", "seat": 2, "paid": 2, "owed": 2}, "Wrong slap, Cho pays two."),
    ({"type": "out", "seat": 2}, "Cho is out."),
])
def test_phrasing(ann, text):
    assert phrase(ann, P) == text


def test_verbosity_levels():
    flip = {"type": "flip", "seat": 0, "card": "7h", "pile": 3}
    turn = {"type": "turn", "seat": 1}
    assert phrase(flip, P, Verbosity.PATTERNS) is None
    assert phrase({"type": "flip", "seat": 1, "card": "5h", "pile": 2, "left": 1}, P,
                  Verbosity.PATTERNS) == "Ben, one left."
    assert phrase(turn, P, Verbosity.CARDS) is None
    assert phrase(turn, P, Verbosity.TURNS) == "Ben to play."


def test_a_whole_hand_can_be_followed_from_speech_alone():
    """Every state change of a hand is said at the top verbosity."""
    from companion.sim import play_hand
    stats = play_hand(PRESETS["challenge"], P, 11)
    g = Game(PRESETS["challenge"])
    silent = []
    for ev in stats.events:
        for a in g.apply(ev):
            if phrase(a, P, Verbosity.TURNS) is None and a["type"] not in ("late_slap",):
                silent.append(a["type"])
    assert silent == []


espeak = pytest.importorskip("espeakng_loader")

from helpers import SlowOut  # noqa: E402


def test_voice_renders_audio_and_urgent_calls_cut_chatter():
    from companion.callouts.speech import Espeak, Speaker
    e = Espeak()
    audio = e.render("Double! Sevens.")
    assert audio.dtype == np.int16 and len(audio) > e.sample_rate * 0.4
    assert np.abs(audio).max() > 1000
    sp = Speaker(e, record=True, out=SlowOut(e.sample_rate))
    try:
        sp.say({"type": "flip"}, "Seven of hearts, and a long long chatter sentence here.")
        time.sleep(0.01)
        sp.say({"type": "flip"}, "Two of clubs.")          # replaces queued chatter
        sp.say({"type": "flip"}, "Three of clubs.")
        sp.say({"type": "pattern"}, "Double! Sevens.")       # urgent: cuts the speaking one
        assert sp.wait_idle()
        said = [t for t, _ in sp.spoken]
        assert said[0].startswith("Seven of hearts") and said[1] == "Double! Sevens."
        assert sp.cut and sp.cut[0].startswith("Seven of hearts")
        assert "Two of clubs." in sp.dropped
        assert said[-1] == "Three of clubs."
    finally:
        sp.close()


def test_stale_calls_are_dropped_not_spoken_late():
    from companion.callouts.speech import Espeak, Speaker
    now = [0.0]
    sp = Speaker(Espeak(), record=True, clock=lambda: now[0], out=SlowOut(22050))
    try:
        with sp._cond:                       # hold the worker while the clock runs on
            sp.say({"type": "flip"}, "Four of spades.")
            now[0] = 5.0
        assert sp.wait_idle()
        assert sp.spoken == [] and sp.dropped == ["Four of spades."]
    finally:
        sp.close()
