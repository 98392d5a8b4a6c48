"""Faults of a long evening: the camera freezes, goes dark, jumps in exposure; the pad is
unplugged mid-hand; the disk fills. The game survives each one intact."""

from __future__ import annotations

import queue
import time

import cv2
import numpy as np
import pytest

from companion.detector.model import load_detector
from companion.engine import PRESETS, Game
from companion.live.capture import CameraHealth, Frame, FileSource
from companion.live.pipeline import LivePipeline
from companion.live.runner import make_pipeline, run_frames
from companion.live.session import SessionLog, read_log


@pytest.fixture(scope="module")
def film(tmp_path_factory):
    from companion.render.video import GameFilm
    film = GameFilm(PRESETS["base"], ["Ada", "Ben"], seed=23, size=(640, 360), seconds=9.5)
    info = film.write(tmp_path_factory.mktemp("film") / "g.mp4", progress=False)
    return film.timeline.truth, [f for f in FileSource(info["video"])]


def _referee(truth, frames):
    calls: list[dict] = []
    pipe = make_pipeline(load_detector(), PRESETS["base"], ["Ada", "Ben"], calls.append,
                         stacks=truth[0]["stacks"])
    run_frames(pipe, frames, [x for x in truth if x["type"] == "slap"])
    return pipe, calls


def test_the_camera_freezes_goes_dark_and_jumps_in_exposure_and_the_game_is_intact(film):
    truth, frames = film
    clean, clean_calls = _referee(truth, frames)
    want = [x["card"] for x in truth if x["type"] == "flip"]
    assert [c["card"] for c in clean_calls if c["type"] == "flip"] == want
    faulty = []
    for f in frames:
        img = f.image
        if f.index >= 100:                    # the light jumps mid-pile and stays so
            img = cv2.convertScaleAbs(img, alpha=1.35, beta=10)
        if 150 <= f.index < 190:              # frozen: a card lands meanwhile (rests 182)
            img = faulty[149].image
        if 198 <= f.index < 214:              # dark: another lands unseen (rests 210)
            img = np.zeros_like(img)
        faulty.append(Frame(f.index, f.t, img))
    pipe, calls = _referee(truth, faulty)
    assert [c["card"] for c in calls if c["type"] == "flip"] == want
    said = [(c["status"], c["frame"]) for c in calls if c["type"] == "camera"]
    assert [s for s, _ in said] == ["frozen", "ok", "no picture", "ok"]
    assert 175 <= said[0][1] < 190 and said[1][1] == 190 and 205 <= said[2][1] < 214
    assert not [c for c in calls if c["type"] in ("ask", "rejected", "unclear")]
    assert pipe.game.snapshot() == clean.game.snapshot()


def test_camera_health_says_each_trouble_once():
    h = CameraHealth()
    rng = np.random.default_rng(0)
    live = lambda: rng.integers(0, 255, (48, 64, 3), dtype=np.uint8)
    still = live()
    said = []
    for i in range(120):
        img = still if 20 <= i < 60 else np.zeros((48, 64, 3), np.uint8) if 80 <= i < 100 \
            else live()
        usable, status = h.check(Frame(i, i / 30, img))
        assert usable == (not 80 <= i < 100)
        if status:
            said.append((i, status["status"]))
    assert said == [(51, "frozen"), (60, "ok"), (89, "no picture"), (100, "ok")]


def test_an_empty_even_table_is_a_picture_and_a_covered_lens_is_not():
    """A dark cloth with no cards on it is as even as a covered lens (a rendered one: std
    1.9 over the frame), but it is the table, and hands come in over it; a covered lens
    is near black, with a sensor's noise."""
    rng = np.random.default_rng(1)
    h = CameraHealth()
    cloth = np.clip(rng.normal(27, 1.4, (48, 64, 3)), 0, 255).astype(np.uint8)
    assert cloth[::8, ::8].std() < 2.0          # as even as the check's threshold
    assert h.check(Frame(0, 0.0, cloth))[0]
    lens = np.clip(rng.normal(5, 1.5, (48, 64, 3)), 0, 255).astype(np.uint8)
    assert not h.check(Frame(1, 1 / 30, lens))[0]
    # One exact shade of any brightness (a dead feed's placeholder) is no picture either.
    assert not h.check(Frame(2, 2 / 30, np.full((48, 64, 3), 120, np.uint8)))[0]


def test_the_pad_unplugged_mid_hand_comes_back_and_referees_the_rest():
    from companion.pad import PadReader, SlapEvent, StatusEvent
    from companion.pad.sim import PadSimulator
    sim = PadSimulator(heartbeat=0.1).start()
    reader = PadReader(sim.url, seats={0: 0, 1: 1}, heartbeat_timeout=0.5,
                       reconnect_every=0.1).start()
    said: list[dict] = []
    pipe = LivePipeline(None, Game(PRESETS["base"]), on_output=said.append)
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [26, 26]})

    def wait_for(want) -> object:
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            try:
                ev = reader.events.get(timeout=0.05)
            except queue.Empty:
                continue
            if want(ev):
                return ev
        raise AssertionError("the pad said nothing of the kind")

    def pair_slapped_on(cards, zone: int) -> None:
        for card in cards:
            pipe.feed({"type": "flip", "card": card})
        sim.slap(zone)
        ev = wait_for(lambda e: isinstance(e, SlapEvent))
        pipe.slap([ev.seat], ev.t)

    hello = lambda ev: isinstance(ev, StatusEvent) and ev.kind == "hello"
    try:
        wait_for(hello)
        pair_slapped_on(("7s", "7h"), 1)
        assert pipe.game.stacks == [25, 27]              # Ben took the pair
        sim.unplug(0.4)                                   # mid-hand, cable out and back
        wait_for(lambda e: isinstance(e, StatusEvent) and e.kind == "disconnected")
        wait_for(hello)
        pair_slapped_on(("3c", "3d"), 0)
    finally:
        reader.stop()
        sim.stop()
    # Ben played the 3c, Ada the 3d and took the pair back by the pad after its replug.
    assert [(a["seat"], a["cards"]) for a in said if a["type"] == "award"] == [(1, 2), (0, 2)]
    assert pipe.game.stacks == [26, 26] and pipe.game.hand_active


def test_the_disk_fills_mid_game_the_log_stops_and_the_referee_goes_on(tmp_path):
    said = []
    path = tmp_path / "s.jsonl"
    pipe = LivePipeline(None, Game(PRESETS["base"]), on_output=said.append)
    pipe.log = SessionLog(path, PRESETS["base"], ["Ada", "Ben"], on_stop=pipe.log_stopped)
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [5, 5]})
    pipe.feed({"type": "flip", "card": "7s", "t": 0.0})
    pipe.log._fh.close()
    pipe.log._fh = open("/dev/full", "a")               # the disk is full from here on
    pipe.feed({"type": "flip", "card": "7h", "t": 1.0})
    pipe.slap([1], 2.0)
    stopped = [r for r in said if r["type"] == "log_stopped"]
    assert len(stopped) == 1 and "No space left on device" in stopped[0]["reason"]
    assert str(path) in stopped[0]["reason"]
    assert pipe.game.stacks == [4, 6]                    # the pair was refereed all the same
    # What was written before stays readable, and resumes.
    assert [e.get("card") for e in read_log(path).events] == [None, "7s"]
