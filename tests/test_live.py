"""The live pipeline with a scripted detector: gating, slaps, evidence, logs, a lost camera."""

from __future__ import annotations

import dataclasses
import json

import cv2
import numpy as np

from companion.detector.detections import Detections
from companion.engine import PRESETS, Game
from companion.engine.cards import CLASS_NAMES
from companion.live.capture import Frame, LiveSource
from companion.live.pipeline import LivePipeline, MotionGate, Roi
from companion.live.session import SessionLog, read_log, replay
from helpers import ScriptedDetector


def frames(n, changing=True):
    rng = np.random.default_rng(0)
    base = rng.integers(0, 255, (240, 320, 3), dtype=np.uint8)
    for i in range(n):
        img = base.copy()
        if changing:
            img[:, :] = (i * 7) % 255      # every frame differs: the gate lets all through
        yield Frame(i, i / 30, img)


def run(pipe, det, n, changing=True, slaps=None):
    out = []
    for f in frames(n, changing):
        det.frame = f.index
        for s in (slaps or {}).get(f.index, []):
            out += pipe.slap(s, f.t)
        out += pipe.process(f)
    return out


def test_flips_reach_the_engine_and_slaps_take_the_pile(tmp_path):
    det = ScriptedDetector({0: [], 5: [("7h", 0.9, (100, 100))],
                            12: [("7h", 0.9, (100, 100)), ("7s", 0.9, (110, 110))]})
    calls = []
    pipe = LivePipeline(det, Game(PRESETS["base"]), roi=Roi(0, 0, 320, 240),
                        evidence_dir=tmp_path / "ev", on_output=calls.append)
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [5, 5]})
    out = run(pipe, det, 20, slaps={18: [[1, 0]]})
    flips = [c for c in out if c["type"] == "flip"]
    assert [(f["card"], f["seat"], f["frame"], f["rest_frame"]) for f in flips] == \
        [("7h", 0, 6, 5), ("7s", 1, 13, 12)]
    award = next(c for c in out if c["type"] == "award")
    assert award["seat"] == 1 and award["late"] == [0]
    assert award["evidence"]["top"] == ["7h", "7s"] and award["evidence"]["patterns"] == ["double"]
    assert (tmp_path / "ev").is_dir() and list((tmp_path / "ev").glob("slap_*.jpg"))
    assert calls[-len(out):] == out


def test_a_slap_on_a_card_seen_once_before_the_hands_is_judged_on_that_card():
    """A 7s seen at rest on one look, surely, then hidden by the slapping hands (no-pad
    game 1919's 8d): the slap settles it, so the pair is there and the slap wins."""
    det = ScriptedDetector({0: [], 5: [("7h", 0.9, (100, 100))],
                            12: [("7h", 0.9, (100, 100)), ("7s", 0.93, (110, 110))],
                            13: []})
    pipe = LivePipeline(det, Game(PRESETS["base"]), roi=Roi(0, 0, 320, 240))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [5, 5]})
    out = run(pipe, det, 20, slaps={14: [[1, 0]]})
    assert [(c["card"], c["rest_frame"]) for c in out if c["type"] == "flip"] == \
        [("7h", 5), ("7s", 12)]
    award = next(c for c in out if c["type"] in ("award", "wrong_slap"))
    assert award["type"] == "award" and award["seat"] == 1
    assert award["evidence"]["top"] == ["7h", "7s"]


def test_motion_gate_skips_unchanged_frames():
    det = ScriptedDetector({0: [("Kc", 0.9, (50, 50))]})
    pipe = LivePipeline(det, Game(PRESETS["base"]), roi=Roi(0, 0, 320, 240))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"]})
    out = run(pipe, det, 40, changing=False)
    # The first frame and the two settling frames after it, then once more when forced
    # after 30 unchanged frames (and its two settling frames).
    assert det.calls == 6
    assert [c["card"] for c in out if c["type"] == "flip"] == ["Kc"]
    gate = MotionGate(settle=2)
    a = np.zeros((100, 100, 3), np.uint8)
    assert gate.changed(a) and gate.changed(a + 1) and gate.changed(a + 1)
    assert not gate.changed(a + 1) and not gate.changed(a)
    assert gate.changed(a + 40)


def test_motion_gate_sees_a_pale_card_land_on_a_pale_cloth():
    """A small patch that barely moves the region's mean still counts as a change."""
    gate = MotionGate(settle=0)
    cloth = np.full((200, 200, 3), 215, np.uint8)
    assert gate.changed(cloth) and not gate.changed(cloth)
    card = cloth.copy()
    cv2.rectangle(card, (80, 70), (110, 112), (250, 250, 250), -1)
    assert np.abs(card.astype(int) - cloth).mean() < 1.6
    assert gate.changed(card)
    assert not gate.changed(card)
    noisy = np.clip(card + np.random.default_rng(0).normal(0, 4, card.shape), 0, 255)
    assert not gate.changed(noisy.astype(np.uint8))      # sensor noise is not a change


def test_a_card_missed_while_settling_is_read_at_rest():
    """The last frame of motion reads nothing (the card is still blurred); the frames
    after it are unchanged, but the detector looks again and the flip is called."""
    img = np.zeros((240, 320, 3), np.uint8)
    moving = [img.copy() for _ in range(3)]
    for k, m in enumerate(moving):
        cv2.rectangle(m, (40 + 30 * k, 60), (140 + 30 * k, 200), (255, 255, 255), -1)
    still = moving[-1]
    det = ScriptedDetector({0: [], 3: [("9d", 0.9, (150, 130))]})
    pipe = LivePipeline(det, Game(PRESETS["base"]), roi=Roi(0, 0, 320, 240))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"]})
    out = []
    for i, im in enumerate(moving + [still] * 6):
        det.frame = i
        out += pipe.process(Frame(i, i / 30, im))
    assert [c["card"] for c in out if c["type"] == "flip"] == ["9d"]


def test_session_log_replays_to_the_same_calls(tmp_path):
    det = ScriptedDetector({3: [("Qd", 0.9, (100, 100))], 9: [("Qs", 0.9, (120, 100))],
                            15: [("Qs", 0.9, (120, 100)), ("4h", 0.9, (140, 100))]})
    log = SessionLog(tmp_path / "s.jsonl", PRESETS["challenge"], ["Ada", "Ben"])
    calls = []
    pipe = LivePipeline(det, Game(PRESETS["challenge"]), roi=Roi(0, 0, 320, 240), log=log,
                        on_output=calls.append)
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [6, 6]})
    run(pipe, det, 24, slaps={20: [[0]]})
    log.close()
    session = read_log(tmp_path / "s.jsonl")
    logged = session.calls
    assert session.players == ["Ada", "Ben"] and session.rules == PRESETS["challenge"]
    strip = lambda a: {k: v for k, v in a.items() if k not in ("frame", "rest_frame", "rest_t",
                                                              "confidence", "evidence")}
    assert [strip(a) for a in replay(tmp_path / "s.jsonl")] == [strip(a) for a in calls]
    assert [strip(a) for a in logged] == [strip(a) for a in calls]
    # Each line was flushed as it happened: the file is complete without close().
    lines = (tmp_path / "s.jsonl").read_text().splitlines()
    assert all(json.loads(x)["log"] in ("meta", "event", "call") for x in lines)


class FlakyCap:
    """A camera that gives `good` frames, then nothing (unplugged)."""

    def __init__(self, good):
        self.good, self.n = good, 0

    def isOpened(self):
        return True

    def get(self, prop):
        return 30.0

    def read(self):
        self.n += 1
        if self.n > self.good:
            return False, None
        return True, np.full((60, 80, 3), self.n % 255, np.uint8)

    def release(self):
        pass


def test_camera_unplugged_mid_game_says_so_and_the_game_goes_on():
    opened = []

    def opener(spec):
        opened.append(spec)
        return FlakyCap(5 if len(opened) == 1 else 10**6)

    messages = []
    src = LiveSource(0, reopen_every=0.05, on_status=messages.append, opener=opener)
    det = ScriptedDetector({0: [("9c", 0.9, (20, 20))]})
    game = Game(PRESETS["base"])
    pipe = LivePipeline(det, game, roi=Roi(0, 0, 80, 60))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"]})
    got = 0
    try:
        for f in src:
            pipe.process(f)
            got += 1
            if got >= 30:
                break
    finally:
        src.stop()
    assert len(opened) >= 2
    assert any("no frames (unplugged?)" in m for m in messages)
    assert any("frames again" in m for m in messages)
    assert game.top_cards(1) == ["9c"] and game.hand_active     # the state survived


def test_table_panel_shows_the_top_card_large_and_by_shape():
    from companion.live.display import render_panel
    g = Game(PRESETS["challenge"])
    g.start(["Ada", "Ben", "Cho"], stacks=[10, 10, 10])
    for c in ("5s", "Qh", "5h"):
        g.flip(c)
    img = render_panel(g, pattern=list(g.top_patterns))
    card = img[20:340, 20:250]
    red = (card[..., 2] > 150) & (card[..., 1] < 100)
    assert red.mean() > 0.05                        # a big red five and heart
    hc = render_panel(g, high_contrast=True)
    assert (hc[400:, 300:] == 0).all(axis=2).mean() > 0.8   # black ground in high contrast
    empty = Game(PRESETS["base"])
    empty.start(["Ada", "Ben"])
    assert render_panel(empty).shape == (720, 560, 3)


def test_a_card_of_a_won_pile_is_called_when_played_again():
    """The winner sweeps the pile and the next card lands 0.15 s later, before the old
    pile was gone long enough to count as picked up; a card of the old pile played
    again later is still a flip."""
    det = ScriptedDetector({0: [], 5: [("7h", 0.9, (100, 100))],
                            12: [("7h", 0.9, (100, 100)), ("7s", 0.9, (110, 110))],
                            21: [], 26: [("2c", 0.9, (160, 120))],
                            60: [("2c", 0.9, (160, 120)), ("7h", 0.9, (200, 150))]})
    pipe = LivePipeline(det, Game(PRESETS["base"]), roi=Roi(0, 0, 320, 240))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [5, 5]})
    out = run(pipe, det, 70, slaps={18: [[1]]})
    assert [c["type"] for c in out if c["type"] in ("award", "rejected")] == ["award"]
    assert [(c["card"], c["frame"]) for c in out if c["type"] == "flip"] == \
        [("7h", 6), ("7s", 13), ("2c", 27), ("7h", 61)]


def test_the_top_card_under_a_wrong_slaps_hand_is_not_called_again_as_another():
    """A wrong slap's hand covers the 5c but a corner, whose index then reads 3c: no flip
    (seed 902's evening called a 3c there, and missed the real 3c later)."""
    det = ScriptedDetector({0: [], 5: [("5c", 0.9, (100, 100)), ("5c", 0.9, (200, 160))],
                            15: [], 17: [("3c", 0.6, (103, 104))]})
    pipe = LivePipeline(det, Game(PRESETS["base"]), roi=Roi(0, 0, 320, 240))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [5, 5]})
    out = run(pipe, det, 35, slaps={16: [[1]]})
    assert [c["type"] for c in out if c["type"] in ("flip", "wrong_slap")] == \
        ["flip", "wrong_slap"]


def _pale_table(cards, cloth=(214, 222, 220)):
    """A pale cloth (or one of another colour) with real rendered faces on it: [(card,
    angle, centre)] bottom up. Returns the picture and the last card's outline."""
    from companion.render.faces import Deck, DeckStyle
    from companion.render.scene import card_transform, warp_onto
    deck = Deck(DeckStyle.random(7))
    img = np.full((480, 480, 3), cloth, np.uint8)
    quad = None
    for name, angle, centre in cards:
        face = deck.face(CLASS_NAMES.index(name))
        H = card_transform(face, centre, 200, angle)
        warp_onto(img, face, H, shadow=0.25)
        fh, fw = face.image.shape[:2]
        quad = cv2.perspectiveTransform(np.float32([[[0, 0], [fw, 0], [fw, fh], [0, fh]]]), H)[0]
    return img, quad


def test_the_landing_outline_is_the_new_card():
    """Still, moving, still again: the outline is where the picture changed (a white card
    on white cards changes in patches), only while the region rests."""
    from companion.live.landing import LandingOutline
    from companion.detector.card_reader import _rotated_iou
    before, _ = _pale_table([("4c", 10, (220, 240)), ("Qs", -25, (250, 230))])
    flying, _ = _pale_table([("4c", 10, (220, 240)), ("Qs", -25, (250, 230)),
                             ("3d", 60, (120, 330))])
    after, quad = _pale_table([("4c", 10, (220, 240)), ("Qs", -25, (250, 230)),
                               ("3d", 75, (235, 250))])
    lo = LandingOutline()
    assert [lo.update(before) for _ in range(3)] == [None] * 3
    assert lo.update(flying) is None                  # in motion
    got = lo.update(after)
    assert got is None                                # still moving: it jumped here
    got = lo.update(after)                            # the first frame at rest
    assert got is not None and _rotated_iou(got, quad) > 0.8
    assert lo.update(after) is got                    # kept while it rests
    assert lo.update(before) is None                  # the pile moves again
    # The camera's exposure jumps: everything changed, which is not a card.
    brighter = cv2.convertScaleAbs(before, alpha=1.0, beta=30)
    assert lo.update(brighter) is None and lo.update(brighter) is None


def test_an_arm_leaving_the_picture_edge_is_not_part_of_the_landing_outline():
    """A hand hovered beside the pile, from the picture's edge, while a card landed; it
    has gone by the time the pile rests: the outline is the card's alone."""
    from companion.live.landing import LandingOutline
    from companion.detector.card_reader import _rotated_iou
    pile = [("4c", 10, (220, 240)), ("Qs", -25, (250, 230))]
    before, _ = _pale_table(pile)
    cv2.fillPoly(before, [np.int32([[0, 0], [150, 0], [190, 60], [120, 110], [0, 90]])],
                 (90, 120, 170))                           # an arm in from the top left
    after, quad = _pale_table(pile + [("3d", 75, (235, 250))])
    lo = LandingOutline()
    assert [lo.update(before) for _ in range(3)] == [None] * 3
    assert lo.update(after) is None                        # it changed: in motion
    got = lo.update(after)
    assert got is not None and _rotated_iou(got, quad) > 0.8


def test_a_card_the_finder_misses_is_read_where_it_landed():
    """A finder that sees nothing: the flip is still called, from the landing outline."""
    from companion.detector.card_reader import CardReaderDetector, CornerReader
    from companion.detector.model import MODELS

    class BlindFinder:
        imgsz = 256

        def __call__(self, img, conf=None):
            return np.zeros((0, 4, 2), np.float32), np.zeros(0, np.float32)

    det = CardReaderDetector(BlindFinder(), CornerReader(MODELS / "corner_reader.onnx"),
                             looks=("found", "snapped"))
    before, _ = _pale_table([("4c", 10, (220, 240))])
    after, _ = _pale_table([("4c", 10, (220, 240)), ("9h", -35, (250, 250))])
    pipe = LivePipeline(det, Game(PRESETS["base"]), roi=Roi(0, 0, 480, 480))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [5, 5]})
    out = []
    for i, img in enumerate([before] * 4 + [after] * 6):
        out += pipe.process(Frame(i, i / 30, img))
    assert [c["card"] for c in out if c["type"] == "flip"] == ["9h"]


class OnceFinder:
    """A card finder that finds its outline on its first look only (an art deck's card
    the finder loses at rest), or every time with `always`."""
    imgsz = 256

    def __init__(self, quad, always=False):
        self.quad, self.always, self.looks = quad, always, 0

    def __call__(self, img, conf=None):
        self.looks += 1
        if self.looks > 1 and not self.always:
            return np.zeros((0, 4, 2), np.float32), np.zeros(0, np.float32)
        return np.float32([self.quad]), np.float32([0.9])


def test_a_card_the_finder_loses_at_rest_is_read_on_its_last_outline():
    """Found once, then lost: the outline that named it is read again on the next look, so
    the tracker sees it twice in a row and calls it."""
    from companion.detector.card_reader import CardReaderDetector, CornerReader
    from companion.detector.model import MODELS
    img, quad = _pale_table([("4c", 10, (220, 240)), ("9h", -35, (250, 250))])
    reader = CornerReader(MODELS / "corner_reader.onnx")

    def flips(keep):
        det = CardReaderDetector(OnceFinder(quad), reader, looks=("found", "snapped"))
        if not keep:        # its detections say no outline: nothing to read again
            seen = det
            det = lambda image, conf=None, **kw: dataclasses.replace(seen(image, conf, **kw),
                                                                     outline=None)
        pipe = LivePipeline(det, Game(PRESETS["base"]), roi=Roi(0, 0, 480, 480))
        pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [5, 5]})
        out = []
        for i in range(8):
            out += pipe.process(Frame(i, i / 30, img))
        return [c["card"] for c in out if c["type"] == "flip"]

    assert flips(keep=True) == ["9h"]
    assert flips(keep=False) == []


def test_a_kept_outline_is_not_read_where_its_card_has_gone():
    """Found once, then lost: its outline is read again while the picture inside it is as
    it was; once the card is swept away and the pile rests again, that outline holds bare
    cloth, and is not read there (no-pad game 2308 read a 9d on a checked cloth so). On a
    pale cloth little inside it changes, but a bare pale cloth reads as no card anyway."""
    from companion.detector.card_reader import CardReaderDetector, CornerReader
    from companion.detector.model import MODELS
    from companion.live.pipeline import PileWatcher
    felt = (40, 90, 30)
    card, quad = _pale_table([("9h", -35, (250, 250))], felt)
    gone, _ = _pale_table([], felt)
    det = CardReaderDetector(OnceFinder(quad), CornerReader(MODELS / "corner_reader.onnx"),
                             looks=("found", "snapped"))
    offered = []

    def spy(image, conf=None, **kw):
        offered.append(len(kw.get("fallback", [])))
        return det(image, conf, **kw)

    spy.takes_outlines = True
    watcher = PileWatcher(spy, roi=Roi(0, 0, 480, 480), gate=False)
    for i, img in enumerate([card] * 4 + [gone] * 4):
        watcher.look(Frame(i, i / 30, img))
    assert offered[:4] == [0, 1, 1, 1]          # found, then kept while the card rests
    assert offered[4:] == [0, 0, 0, 0]          # swept away: moving, then bare cloth


class ByOrderReader:
    """A corner reader that reads the first `n` crops as `first` at 0.6 and the rest as
    `then` at 0.95 (the finder's outlines are read first, kept ones after)."""

    def __init__(self, n, first, then):
        self.n, self.first, self.then = n, CLASS_NAMES.index(first), CLASS_NAMES.index(then)

    def __call__(self, crops):
        p = np.full((len(crops), len(CLASS_NAMES) + 1), 0.001, np.float32)
        p[:self.n, self.first] = 0.6
        p[self.n:, self.then] = 0.95
        return p


def test_a_kept_outline_gives_way_to_a_new_card_found_on_its_spot():
    """A kept outline can still read the old card's corner where a new card now lies over
    most of it, and read it surer: the card found there is the one named."""
    from companion.detector.card_reader import CardReaderDetector
    _, old = _pale_table([("4c", 10, (240, 240))])
    img, new = _pale_table([("4c", 10, (240, 240)), ("9h", -8, (252, 262))])

    def names(**outlines):
        det = CardReaderDetector(OnceFinder(new, always=True), ByOrderReader(2, "9h", "4c"),
                                 retry=())
        return set(det(img, **outlines).names)

    assert names(fallback=[old]) == {"9h"}
    assert names(outlines=[old]) == {"4c"}      # as an outline of its own it would win
    det = CardReaderDetector(OnceFinder(new, always=True), ByOrderReader(2, "9h", "4c"))
    assert det(img).outline.shape[1:] == (4, 2)     # each index carries its card's outline


def test_a_video_played_in_real_time_drops_frames_for_a_slow_consumer_and_ends(tmp_path):
    import time as _time
    path = tmp_path / "clip.avi"
    out = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (64, 48))
    for i in range(30):
        out.write(np.full((48, 64, 3), i * 8, np.uint8))
    out.release()
    src = LiveSource(str(path), paced=True)
    got = []
    t0 = _time.monotonic()
    for f in src:                       # a consumer at ~10 frames/s against a 30 fps video
        got.append(f.index)
        _time.sleep(0.1)
    took = _time.monotonic() - t0
    src.stop()
    assert 0.8 <= took < 5              # played at its own pace (1 s), then ended
    assert got == sorted(got) and len(got) < 30 and src.dropped > 0
    assert got[-1] >= 25                # the newest frames, not the first ones


def test_a_pile_taken_with_no_slap_seen_asks_who_won_and_its_cards_are_read_again():
    """No pad and no slap seen: the pile goes. The referee asks who took it and holds
    the next cards until the table answers; then the pile is the winner's, the held card
    is fed, and a card of the taken pile played again is read as a flip."""
    det = ScriptedDetector({0: [], 5: [("7h", 0.9, (100, 100))],
                            12: [("7h", 0.9, (100, 100)), ("7s", 0.9, (110, 110))],
                            21: [], 50: [("2c", 0.9, (160, 120))],
                            80: [("2c", 0.9, (160, 120)), ("7h", 0.9, (200, 150))]})
    game = Game(PRESETS["base"])
    pipe = LivePipeline(det, game, roi=Roi(0, 0, 320, 240))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [5, 5]})
    out = run(pipe, det, 60)
    asks = [c for c in out if c["type"] == "ask"]
    assert len(asks) == 1 and asks[0]["question"] == "pile_taken" and asks[0]["cards"] == 2
    assert 21 < asks[0]["frame"] < 50
    # The 2c landed while the question was open: held, not yet refereed.
    assert [c["card"] for c in out if c["type"] == "flip"] == ["7h", "7s"]
    answered = pipe.answer(1, 2.0)
    assert [c["type"] for c in answered][:2] == ["answer", "award"]
    award = next(c for c in answered if c["type"] == "award")
    assert award["seat"] == 1 and award["reason"] == "ruling" and award["cards"] == 2
    assert [(c["card"], c["seat"]) for c in answered if c["type"] == "flip"] == [("2c", 1)]
    later = []
    for f in frames(100):
        if f.index < 60:
            continue
        det.frame = f.index
        later += pipe.process(f)
    assert [c["card"] for c in later if c["type"] == "flip"] == ["7h"]
    assert not [c for c in later if c["type"] == "rejected"]


class UnsureReader:
    """Reads `card` at `conf` at the 7h's two corners (unsure: under the 0.55 of two looks
    in a row) from frame `first` on, and notes which frames it was asked to look at."""
    imgsz = 320
    takes_outlines = True

    def __init__(self, first, conf, card="7h"):
        self.first, self.conf, self.card, self.frame, self.looked = first, conf, card, 0, []

    def __call__(self, image, conf=None, **kw):
        self.looked.append(self.frame)
        if self.frame < self.first:
            return Detections.empty()
        xyxy = np.float32([[175, 150, 195, 175], [285, 305, 305, 330]])
        return Detections(xyxy, np.float32([self.conf] * 2),
                          np.array([CLASS_NAMES.index(self.card)] * 2))


def test_a_card_read_unsurely_is_looked_at_while_it_rests_until_it_is_called():
    """A card lands and rests, read at 0.47 on every look: the slow path calls it on its
    fourth look. The motion gate alone looks at it as it lands and on two frames after,
    then once a second (valid-face games 203 and 204: a 6c and a 5d read at 0.46-0.5 were
    missed as the next card came); each resting frame is looked at until it is called,
    and no more once it is. Read at 0.4, those looks at a still picture repeat one unsure
    reading and do not call it. A court (its letter its only cue) gets the gate's looks
    only: an art Qd read Kd at 0.51-0.53 on each still look was once read at 0.55."""
    cloth = (40, 110, 40)
    bare = np.full((480, 480, 3), cloth, np.uint8)
    pile, _ = _pale_table([("7h", 0, (240, 240))], cloth)

    def play(conf, card="7h"):
        det = UnsureReader(5, conf, card)
        pipe = LivePipeline(det, Game(PRESETS["base"]), roi=Roi(0, 0, 480, 480))
        pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [5, 5]})
        out = []
        for i, img in enumerate([bare] * 5 + [pile] * 50):
            det.frame = i
            out += [dict(c, frame=i) for c in pipe.process(Frame(i, i / 30, img))]
        return [c for c in out if c["type"] == "flip"], det.looked

    flips, looked = play(0.47)
    assert [c["card"] for c in flips] == ["7h"] and flips[0]["frame"] <= 10
    called = flips[0]["frame"]
    assert [f for f in looked if 5 <= f <= called] == list(range(5, called + 1))
    # Then only the gate's: none until its look of once a second.
    assert not [f for f in looked if called < f < called + 20]
    flips, looked = play(0.4)
    assert not [c for c in flips if c["frame"] < 30]
    flips, looked = play(0.47, "Kd")
    assert not [c for c in flips if c["frame"] < 30]
    assert not [f for f in looked if 8 <= f < 30]


def test_a_covered_pile_that_comes_back_was_not_taken():
    det = ScriptedDetector({0: [], 5: [("7h", 0.9, (100, 100))], 12: [],
                            40: [("7h", 0.9, (100, 100))]})
    pipe = LivePipeline(det, Game(PRESETS["base"]), roi=Roi(0, 0, 320, 240))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [5, 5]})
    out = run(pipe, det, 60)
    kinds = [c["type"] for c in out]
    assert "ask" in kinds and kinds.index("ask") < kinds.index("answer")
    answer = next(c for c in out if c["type"] == "answer")
    assert answer["seat"] is None and pipe.asking is None and pipe.game.pile_count == 1


class PileReader:
    """Reads the 7h's two corners on pictures where `readable(i)` says so, else nothing:
    a card on it of a deck the reader cannot read hides it from the reader."""
    imgsz = 320
    takes_outlines = True

    def __init__(self, readable):
        self.readable, self.frame = readable, 0

    def __call__(self, image, conf=None, **kw):
        if not self.readable(self.frame):
            return Detections.empty()
        xyxy = np.float32([[175, 150, 195, 175], [285, 305, 305, 330]])
        return Detections(xyxy, np.float32([0.9, 0.9]), np.array([CLASS_NAMES.index("7h")] * 2))


def test_a_card_the_reader_cannot_name_hides_the_pile_but_does_not_take_it():
    """A 7h called, then a card the reader cannot name lands on it and rests: none of
    the pile's cards is read any more, but its place still shows a card, not the table.
    The pile was not taken: the referee says "card unclear" once and asks nobody who took
    it. Then the pile is swept away: its place shows the cloth, and the referee asks."""
    cloth = (40, 110, 40)
    bare = np.full((480, 480, 3), cloth, np.uint8)
    pile, _ = _pale_table([("7h", 0, (240, 240))], cloth)
    hidden, _ = _pale_table([("7h", 0, (240, 240)), ("9s", 20, (245, 235))], cloth)
    pictures = [bare] * 5 + [pile] * 15 + [hidden] * 60 + [bare] * 40
    det = PileReader(lambda i: 5 <= i < 20)
    pipe = LivePipeline(det, Game(PRESETS["base"]), roi=Roi(0, 0, 480, 480))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [5, 5]})
    out = []
    for i, img in enumerate(pictures):
        det.frame = i
        out += [dict(c, frame=i) for c in pipe.process(Frame(i, i / 30, img))]
        if i == 79:
            assert [c["card"] for c in out if c["type"] == "flip"] == ["7h"]
            assert not [c for c in out if c["type"] == "ask"]
            unclear = [c for c in out if c["type"] == "unclear"]
            assert len(unclear) == 1 and 20 + 0.6 * 30 <= unclear[0]["frame"] < 80
            assert pipe.tracker.pile and pipe.game.pile_count == 1
    asks = [c for c in out if c["type"] == "ask"]
    assert len(asks) == 1 and 80 < asks[0]["frame"] < 120
    # Swept away while the reader still saw it: asked as before, however it looks.
    det = PileReader(lambda i: 5 <= i < 20)
    pipe = LivePipeline(det, Game(PRESETS["base"]), roi=Roi(0, 0, 480, 480))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [5, 5]})
    out = []
    for i, img in enumerate([bare] * 5 + [pile] * 15 + [bare] * 40):
        det.frame = i
        out += pipe.process(Frame(i, i / 30, img))
    assert [c["type"] for c in out].count("ask") == 1


def test_a_pile_covered_until_the_next_card_landed_on_it_was_not_taken_when_the_table_says_so():
    """A hand held over the pile until the next card landed on it: the pile never showed
    again, so the referee asks who took it. The table answers "nobody" (key 0, the page's
    button): the pile is the same pile, the held card goes on it (a pair here), and the
    tracker knows both cards, so neither is read as a new flip."""
    det = ScriptedDetector({0: [], 5: [("7h", 0.9, (100, 100))], 12: [],
                            50: [("7s", 0.9, (104, 104))]})
    pipe = LivePipeline(det, Game(PRESETS["base"]), roi=Roi(0, 0, 320, 240))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [5, 5]})
    out = run(pipe, det, 60)
    assert [c["type"] for c in out].count("ask") == 1
    assert [c["card"] for c in out if c["type"] == "flip"] == ["7h"]     # the 7s is held
    answered = pipe.answer(None, 2.0)
    assert answered[0]["type"] == "answer" and answered[0]["seat"] is None
    assert not [c for c in answered if c["type"] in ("award", "rejected")]
    assert [c["card"] for c in answered if c["type"] == "flip"] == ["7s"]
    assert any(c["type"] == "pattern" for c in answered)                # the pair is on
    assert pipe.game.pile_count == 2 and pipe.tracker.order == ["7h", "7s"]
    det.script[60] = [("7s", 0.9, (104, 104)), ("7h", 0.6, (96, 96))]  # its corner shows
    later = []
    for f in frames(90):
        if f.index >= 60:
            det.frame = f.index
            later += pipe.process(f)
    assert not [c for c in later if c["type"] in ("flip", "ask", "rejected")]


def test_the_next_deal_starts_the_next_hand_and_the_score_is_said():
    """After a hand ends the table deals again and flips: the referee starts the next
    hand itself (the deal one seat on, everyone back in) instead of refusing the card,
    and says the match score."""
    from companion.callouts import phrase
    det = ScriptedDetector({0: [], 5: [("7h", 0.9, (100, 100))],
                            12: [("7h", 0.9, (100, 100)), ("7s", 0.9, (110, 110))],
                            21: [], 40: [("Kd", 0.9, (160, 120))]})
    game = Game(PRESETS["base"])
    pipe = LivePipeline(det, game, roi=Roi(0, 0, 320, 240))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [1, 1]})
    out = run(pipe, det, 60, slaps={18: [[0]]})
    over = next(c for c in out if c["type"] == "hand_over")
    assert over["winner"] == 0
    assert phrase(over, ["Ada", "Ben"]) == "Ada wins the hand. Ada leads, one hand to none."
    start = next(c for c in out if c["type"] == "start")
    assert start["hand"] == 2 and start["dealer"] == 0 and start["stacks"] == [26, 26]
    assert phrase(start, ["Ada", "Ben"]) == "Hand two: Ada dealt."
    flip = [c for c in out if c["type"] == "flip"][-1]
    assert flip["card"] == "Kd" and flip["seat"] == 1          # left of the dealer
    assert not [c for c in out if c["type"] == "rejected"]
    assert game.hand_active and game.hands_won == [1, 0]


def test_a_card_whose_pick_up_ends_the_hand_is_called_as_the_next_hands_first(tmp_path):
    """A challenge won is the winner's once the next card shows it was picked up. When
    that pick-up gives the winner every card the hand is over, and the card that showed
    it is the next hand's first: called, logged, and replayed the same, never dropped."""
    log = SessionLog(tmp_path / "s.jsonl", PRESETS["challenge"], ["Ada", "Ben"])
    pipe = LivePipeline(ScriptedDetector({}), Game(PRESETS["challenge"]),
                        roi=Roi(0, 0, 320, 240), log=log)
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [2, 1]})
    pipe.feed({"type": "flip", "card": "Jh"})
    won = pipe.feed({"type": "flip", "card": "5c"})
    assert [a["seat"] for a in won if a["type"] == "challenge_won"] == [0]
    out = pipe.feed({"type": "flip", "card": "9d", "t": 3.0}, frame=90,
                    extra={"frames": [88, 90]}, extra_types=("flip",))
    kinds = [a["type"] for a in out]
    assert kinds.index("award") < kinds.index("hand_over") < kinds.index("start")
    flip = next(a for a in out if a["type"] == "flip")
    assert flip["card"] == "9d" and flip["frames"] == [88, 90]
    assert flip["seat"] == 1                      # left of the new dealer, Ada
    assert not [a for a in out if a["type"] == "rejected"]
    assert pipe.game.hand_number == 2 and pipe.game.pile_count == 1
    log.close()
    replayed = Game(PRESETS["challenge"])
    for rec in read_log(tmp_path / "s.jsonl").events:
        replayed.apply(rec)
    assert replayed.state() == pipe.game.state()


def _fed(events, players=("Ada", "Ben", "Cho"), log=None):
    pipe = LivePipeline(ScriptedDetector({}), Game(PRESETS["base"]), roi=Roi(0, 0, 320, 240),
                        log=log)
    pipe.feed({"type": "start", "players": list(players), "stacks": [10, 10, 10]})
    for ev in events:
        pipe.feed(ev)
    return pipe


def test_a_correction_that_removes_a_sandwich_takes_back_its_award(tmp_path):
    from companion.callouts import phrase
    log = SessionLog(tmp_path / "s.jsonl", PRESETS["base"], ["Ada", "Ben", "Cho"])
    pipe = _fed([{"type": "flip", "card": "5s"}, {"type": "flip", "card": "Qh"},
                 {"type": "flip", "card": "5h"}, {"type": "slap", "seats": [1]}], log=log)
    assert pipe.game.stacks == [9, 12, 9] and pipe.game.pile_count == 0
    out = pipe.correct("flip", "6h")
    rec = out[0]
    assert rec["type"] == "correction" and rec["now"]["card"] == "6h"
    # The sandwich and Ben's award are gone; his slap on a plain six is a wrong slap.
    assert phrase(rec, ["Ada", "Ben", "Cho"]) == \
        "Correction: six of hearts. No sandwich; the pile stays; Ben pays two."
    assert pipe.game.pile_count == 5 and pipe.game.stacks == [9, 7, 9]   # 3 + 2 paid under
    assert pipe.game.top_cards(1) == ["6h"]
    # The log keeps the original flip and the correction; replay follows the correction.
    lines = [json.loads(x) for x in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert any(x.get("card") == "5h" and x["log"] == "event" for x in lines)
    assert any(x["log"] == "correction" and x["event"]["card"] == "6h" for x in lines)
    replayed = list(replay(tmp_path / "s.jsonl"))
    assert [a["seat"] for a in replayed if a["type"] == "wrong_slap"] == [1]
    assert not [a for a in replayed if a["type"] == "award"]


def test_undoing_a_wrong_slap_returns_the_penalty_cards():
    from companion.callouts import phrase
    pipe = _fed([{"type": "flip", "card": "5s"}, {"type": "flip", "card": "9h"},
                 {"type": "slap", "seats": [2]}, {"type": "flip", "card": "3c"}])
    assert pipe.game.stacks[2] == 7 and pipe.game.pile_count == 5
    rec = pipe.correct("slap")[0]
    assert phrase(rec, ["Ada", "Ben", "Cho"]) == \
        "Correction: no slap by Cho. Cho gets two back."
    assert pipe.game.stacks[2] == 9 and pipe.game.pile_count == 3
    # Nothing left to undo is one clear refusal, and the game is untouched.
    again = pipe.correct("slap")
    assert again[0]["type"] == "rejected" and "no slap" in again[0]["reason"]
    assert pipe.game.pile_count == 3


def test_a_pile_given_to_the_wrong_player_is_put_right():
    from companion.callouts import phrase
    pipe = _fed([{"type": "flip", "card": "7s"}, {"type": "flip", "card": "7h"},
                 {"type": "slap", "seats": [0]}])
    assert pipe.game.stacks == [11, 9, 10]
    rec = pipe.correct("award", 2)[0]
    assert pipe.game.stacks == [9, 9, 12] and pipe.game.turn == 2
    assert phrase(rec, ["Ada", "Ben", "Cho"]).startswith("Correction: the pile is Cho's.")


def test_a_late_hand_of_a_player_the_slap_put_out_is_said_not_refused():
    """Hands reach the referee one at a time (pad or camera): Ben, with no cards, slaps
    just after Ada won the pile and is out by then; his hand is noted, not an error."""
    pipe = LivePipeline(ScriptedDetector({}), Game(PRESETS["base"]), roi=Roi(0, 0, 320, 240))
    pipe.feed({"type": "start", "players": ["Ada", "Ben", "Cho"], "stacks": [5, 0, 5]})
    pipe.feed({"type": "flip", "card": "7h"})
    pipe.feed({"type": "flip", "card": "7s"})
    won = pipe.slap([0], 1.0)
    assert any(c["type"] == "award" and c["seat"] == 0 for c in won)
    assert any(c["type"] == "out" and c["seat"] == 1 for c in won)
    late = pipe.slap([1], 1.05, source="camera")
    assert [c["type"] for c in late] == ["slap_ignored"] and late[0]["seats"] == [1]
    assert pipe.game.stacks == [6, 0, 4]


def test_the_winner_picking_the_pile_up_is_no_slap_to_the_camera():
    """No pad: the hand of the player who just won the pile comes down on it and pauses,
    as a slap does, then takes it. That is the pick-up, noted, not a wrong slap; another
    player's hand there, or the winner's on a new pattern, is still refereed."""
    pipe = LivePipeline(ScriptedDetector({}), Game(PRESETS["base"]), roi=Roi(0, 0, 320, 240))
    pipe.feed({"type": "start", "players": ["Ada", "Ben", "Cho"], "stacks": [10, 10, 10]})
    pipe.feed({"type": "flip", "card": "7h", "t": 1.0})
    pipe.feed({"type": "flip", "card": "7s", "t": 1.5})
    won = pipe.slap([1], 2.0, source="camera")
    assert any(c["type"] == "award" and c["seat"] == 1 for c in won)
    stacks = list(pipe.game.stacks)
    took = pipe.slap([1], 2.6, source="camera")
    assert [c["type"] for c in took] == ["slap_ignored"]
    assert took[0]["reason"] == "picking up the pile" and pipe.game.stacks == stacks
    # Another player's hand then is refereed as before (a late hand on a won pattern).
    assert [c["type"] for c in pipe.slap([2], 2.7, source="camera")] == ["late_slap"]
    # Once a card has come since the win, the winner's hand is on that card: refereed
    # (a wrong slap here), even within the second.
    pipe.feed({"type": "flip", "card": "2d", "t": 2.8})
    assert any(c["type"] == "wrong_slap" for c in pipe.slap([1], 2.9, source="camera"))
    # A pad's slap is never taken for a pick-up: the pad only feels slaps.
    pipe.feed({"type": "flip", "card": "9c", "t": 8.0})
    pipe.feed({"type": "flip", "card": "9d", "t": 8.5})
    assert any(c["type"] == "award" for c in pipe.slap([0], 9.0))
    assert "slap_ignored" not in [c["type"] for c in pipe.slap([0], 9.3)]


def test_a_pile_won_by_a_challenge_is_picked_up_by_its_winner_not_slapped():
    """A challenge won waits for its winner to collect the pile: that player's hand on
    it, however late, is the pick-up; another player's is still a slap."""
    pipe = LivePipeline(ScriptedDetector({}), Game(PRESETS["challenge"]),
                        roi=Roi(0, 0, 320, 240))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [10, 10]})
    pipe.feed({"type": "flip", "card": "Jc", "t": 1.0})
    pipe.feed({"type": "flip", "card": "5s", "t": 1.5})
    assert pipe.game.pending is not None and pipe.game.pending[0] == 0
    assert [c["type"] for c in pipe.slap([0], 4.0, source="camera")] == ["slap_ignored"]
    assert [c["type"] for c in pipe.slap([1], 4.2, source="camera")] == ["wrong_slap"]


def test_the_pile_is_sized_by_the_top_cards_two_read_corners():
    """The camera's slap watcher measures in card heights: the pile's size comes from
    where the reader's two corner windows of the top card lie."""
    from companion.detector.card_reader import corner_quad, orientations
    from companion.live.pipeline import PileWatcher
    from companion.live.tracker import FlipTracker
    watcher = PileWatcher(ScriptedDetector({}), Roi(0, 0, 640, 480))
    watcher.tracker = FlipTracker()
    h = 300.0
    card = np.float32([[200, 100], [200 + h * 63 / 88, 100], [200 + h * 63 / 88, 100 + h],
                       [200, 100 + h]])
    turned = cv2.transform(card[None], cv2.getRotationMatrix2D((320, 240), 33, 1.0))[0]
    spots = np.float32([corner_quad(q).mean(0) for q in orientations(turned)[:2]])
    watcher.tracker.top_boxes = np.hstack([spots - 12, spots + 12])   # the corners' boxes
    (cx, cy), card_h = watcher.pile_geometry()
    assert abs(card_h - h) < 0.02 * h
    assert np.hypot(cx - turned[:, 0].mean(), cy - turned[:, 1].mean()) < 0.02 * h


def test_a_match_of_three_hands_is_refereed_hand_after_hand():
    """A self-played match (each hand dealt by the next seat) fed as the camera would: no
    start events after the first; each hand begins with its first card."""
    from companion.callouts import phrase
    from companion.sim.bots import play_hand
    stats = play_hand(PRESETS["base"], ["Ada", "Ben"], 5, hands=3)
    assert len(stats.winners) == 3
    said: list[dict] = []
    pipe = LivePipeline(ScriptedDetector({}), Game(PRESETS["base"]), on_output=said.append)
    starts = 0
    for ev in stats.events:
        if ev["type"] == "start":
            starts += 1
            if starts > 1:
                continue                 # the table just deals; the referee follows
        pipe.feed(ev)
    assert not [a for a in said if a["type"] == "rejected"]
    assert [a["winner"] for a in said if a["type"] == "hand_over"] == stats.winners
    assert [a["dealer"] for a in said if a["type"] == "start"] == [1, 0, 1]
    over = [a for a in said if a["type"] == "match_over"]
    assert len(over) == 1 and over[0]["winner"] == max(set(stats.winners),
                                                       key=stats.winners.count)
    assert phrase(over[0], ["Ada", "Ben"]).endswith("Deal again for a new match.")


def test_an_unsure_card_on_a_still_picture_waits_for_looks_the_detector_made():
    """The gate repeats the last look while the picture is still: an unsure reading (a
    4s at 0.38) is not confirmed by those repeats, only by looks the detector made (the
    gate's forced look a second later). On a changing picture it is confirmed at once."""
    flip_frames = []
    for changing in (False, True):
        det = ScriptedDetector({0: [("4s", 0.38, (100, 100))]})
        pipe = LivePipeline(det, Game(PRESETS["base"]), roi=Roi(0, 0, 320, 240))
        pipe.feed({"type": "start", "players": ["Ada", "Ben"]})
        out = run(pipe, det, 40, changing=changing)
        flip_frames.append([c["frame"] for c in out if c["type"] == "flip"])
    assert flip_frames[1] == [3]
    # Still: looks on frames 0-2 (the change and its two settling frames), the fourth
    # forced force_every frames after the last of them.
    assert flip_frames[0] == [2 + MotionGate().force_every]


def test_camera_slaps_reach_the_referee_in_the_hand_watchers_order():
    """The hand watcher may put first a hand found at rest a frame after another (its tip
    arrived first: landing_order). The referee must be told in that order, not re-sorted
    by the rest times: the first hand told wins the pile (no-pad seed 2229)."""
    from companion.live.hands import CameraSlap

    class Hands:
        pile_gone = None

        def look(self, image, t, frame, pile, card_h):
            if frame != 3:
                return []
            return [CameraSlap(seat=2, t=t - 1 / 30, frame=frame, angle=0.0, arrived=t - 0.2),
                    CameraSlap(seat=1, t=t - 2 / 30, frame=frame, angle=120.0, arrived=t - 0.15)]

    pipe = LivePipeline(ScriptedDetector({}), Game(PRESETS["base"]), roi=Roi(0, 0, 320, 240),
                        hands=Hands())
    pipe.feed({"type": "start", "players": ["Ada", "Ben", "Cho"], "stacks": [10, 10, 10]})
    pipe.feed({"type": "flip", "card": "7h", "t": 0.0})
    pipe.feed({"type": "flip", "card": "7s", "t": 0.01})
    out = []
    for f in frames(5):
        out += pipe.process(f)
    verdicts = [(c["type"], c.get("seat")) for c in out
                if c["type"] in ("award", "wrong_slap", "late_slap")]
    assert verdicts[0] == ("award", 2)
    assert ("award", 1) not in verdicts


def test_the_hand_that_played_the_top_card_and_held_on_it_is_no_slap_to_the_camera():
    """No pad: the player whose turn it was pushes a card in and holds it a moment; the
    camera sees a hand come fast onto the pile and hold still (no-pad game 2279). It
    reached the pile before its card came to rest, so it brought the card: noted, not a
    wrong slap. Another player's hand then, or the same player's once the card lay
    there, is refereed."""
    det = ScriptedDetector({0: [], 5: [("7h", 0.9, (100, 100))]})
    pipe = LivePipeline(det, Game(PRESETS["base"]), roi=Roi(0, 0, 320, 240))
    pipe.feed({"type": "start", "players": ["Ada", "Ben"], "stacks": [10, 10]})
    flips = [c for c in run(pipe, det, 10) if c["type"] == "flip"]
    assert [(c["card"], c["seat"], c["rest_frame"]) for c in flips] == [("7h", 0, 5)]
    rest = flips[0]["rest_t"]
    held = pipe.slap([0], rest + 0.1, source="camera", landed=rest - 0.05)
    assert [(c["type"], c.get("reason")) for c in held] == [("slap_ignored", "playing a card")]
    assert pipe.game.stacks == [9, 10]
    other = pipe.slap([1], rest + 0.1, source="camera", landed=rest - 0.05)
    assert [c["type"] for c in other] == ["wrong_slap"]
    own = pipe.slap([0], rest + 0.4, source="camera", landed=rest + 0.2)
    assert [c["type"] for c in own] == ["wrong_slap"]
