"""The live referee: frames -> detector -> flip tracker -> engine -> announcements.

Slaps (pad, keyboard or a recorded stream) go into the same engine, stamped
on the same clock as the frames. The detector only sees the pile region, and
only on frames where that region changed (motion gating); between flips the
loop idles cheaply.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import cv2
import numpy as np

from ..detector.detections import Detections, Detector, shrink
from ..engine import EventError, Game
from .capture import Frame
from .landing import LandingOutline
from .tracker import FlipTracker, TrackerConfig, TrackEvent


THUMB = 160          # side of the region copy the gate and the landing outline look at


@dataclass
class Roi:
    x: int
    y: int
    w: int
    h: int

    @classmethod
    def central(cls, width: int, height: int) -> "Roi":
        side = min(width, height)
        return cls((width - side) // 2, (height - side) // 2, side, side)

    @classmethod
    def parse(cls, text: str) -> "Roi":
        try:
            x, y, w, h = (int(v) for v in text.split(","))
        except ValueError:
            raise ValueError(f"roi {text!r}: expected x,y,w,h in pixels") from None
        if w <= 0 or h <= 0 or x < 0 or y < 0:
            raise ValueError(f"roi {text!r}: width and height must be positive")
        return cls(x, y, w, h)

    def clip(self, width: int, height: int) -> "Roi":
        x, y = min(self.x, width - 1), min(self.y, height - 1)
        return Roi(x, y, min(self.w, width - x), min(self.h, height - y))

    def crop(self, img: np.ndarray) -> np.ndarray:
        return img[self.y:self.y + self.h, self.x:self.x + self.w]

    def __str__(self) -> str:
        return f"{self.x},{self.y},{self.w},{self.h}"


class MotionGate:
    """Run the detector only when the pile region changed since it last ran, and on the
    first `settle` frames after it stops changing: the frame that last triggered it may
    show the card still settling (blurred, half a pixel from rest), and a resting card
    must be looked at at rest, or a card the detector missed in flight is never seen
    (10 rendered games: 1 flip in 6 of the misses).

    Changed means a mean step over `threshold` grey levels, or a patch: over `spot_share`
    of the (area-averaged) pixels stepping more than `spot`. A white card landing on a
    pale cloth moves the mean by less than 1.6, and was never looked at."""

    def __init__(self, threshold: float = 1.6, size: tuple[int, int] = (64, 64),
                 force_every: int = 30, settle: int = 2, spot: float = 10.0,
                 spot_share: float = 0.004) -> None:
        self.threshold, self.size, self.force_every = threshold, size, force_every
        self.settle, self.spot, self.spot_share = settle, spot, spot_share
        self._ref: np.ndarray | None = None
        self._since = 0
        self._settling = 0

    def changed(self, region: np.ndarray) -> bool:
        small = cv2.resize(cv2.cvtColor(region, cv2.COLOR_BGR2GRAY), self.size,
                           interpolation=cv2.INTER_AREA).astype(np.int16)
        self._since += 1
        step = None if self._ref is None else np.abs(small - self._ref)
        if step is None or self._since >= self.force_every or \
                float(step.mean()) > self.threshold or \
                np.count_nonzero(step > self.spot) > self.spot_share * step.size:
            self._settling = self.settle
        elif self._settling > 0:
            self._settling -= 1
        else:
            return False
        self._ref = small
        self._since = 0
        return True


@dataclass
class Evidence:
    """What the pile showed when a slap landed: for "what was the pattern?"."""
    t: float
    frame: int
    seats: list[int]
    top: list[str]
    patterns: list[str]
    image_path: str | None = None


@dataclass
class LiveState:
    detections: Detections = field(default_factory=Detections.empty)
    evidence: Evidence | None = None
    unclear: bool = False


class PileWatcher:
    """Frames of the pile -> the detector (only where the region changed, with the outline
    of where a card just landed) -> the flip tracker's events. What the referee and
    deck enrolment (companion.deck.stream) both watch the pile with."""

    def __init__(self, detector: Detector, roi: Roi | None = None, gate: bool = True,
                 tracker: TrackerConfig | None = None) -> None:
        self.detector = detector
        self.roi = roi
        self.gate = MotionGate() if gate else None
        # Where the last card landed: an outline the card finder can miss (pale cloths).
        self.landing = LandingOutline() if getattr(detector, "takes_outlines", False) else None
        self.tracker_cfg = tracker
        self.tracker: FlipTracker | None = None
        self.frames = 0
        self.inferences = 0
        self.detections = Detections.empty()
        self.image: np.ndarray | None = None        # the last frame, whole
        self.frame_index = 0

    def region(self) -> tuple[np.ndarray, Roi] | None:
        """The last frame's pile region and where it lies."""
        if self.image is None or self.roi is None:
            return None
        H, W = self.image.shape[:2]
        roi = self.roi.clip(W, H)
        return roi.crop(self.image), roi

    def look(self, frame: Frame) -> list[TrackEvent]:
        img = frame.image
        H, W = img.shape[:2]
        if self.roi is None:
            self.roi = Roi.central(W, H)
        roi = self.roi.clip(W, H)
        if self.tracker is None:
            self.tracker = FlipTracker(self.tracker_cfg, frame_diag=float(np.hypot(roi.w, roi.h)))
        region = roi.crop(img)
        self.frames += 1
        self.image = img
        self.frame_index = frame.index
        # One small copy of the region for the gate and the landing outline (each
        # shrinking the full region cost ~1.2 ms a frame).
        f = THUMB / max(roi.w, roi.h)
        thumb = shrink(region, max(1, round(roi.w * f)), max(1, round(roi.h * f)))
        landed = self.landing.update(thumb) if self.landing is not None else None
        if landed is not None:
            landed = landed * np.float32([roi.w / thumb.shape[1], roi.h / thumb.shape[0]])
        if self.gate is None or self.gate.changed(thumb):
            found = self.detector(region) if landed is None else \
                self.detector(region, outlines=[landed])
            self.detections = found.offset(roi.x, roi.y)
            self.inferences += 1
        # A gated frame repeats the last detections: nothing in the region moved.
        return self.tracker.update(frame.index, frame.t, self.detections)


class LivePipeline:
    def __init__(self, detector: Detector, game: Game, roi: Roi | None = None, gate: bool = True,
                 tracker: TrackerConfig | None = None, evidence_dir: Path | None = None,
                 on_output: Callable[[dict], None] | None = None,
                 clock: Callable[[], float] = time.perf_counter, log=None) -> None:
        self.watcher = PileWatcher(detector, roi, gate, tracker)
        self.game = game
        self.evidence_dir = evidence_dir
        self.on_output = on_output or (lambda rec: None)
        self.clock = clock
        self.log = log
        self.state = LiveState()
        self.flip_latency_ms: list[float] = []     # processing time of each confirming frame

    @property
    def roi(self) -> Roi | None:
        return self.watcher.roi

    @property
    def inferences(self) -> int:
        return self.watcher.inferences

    @property
    def tracker(self) -> FlipTracker | None:
        return self.watcher.tracker

    # ------------------------------------------------------------ outputs
    def _out(self, rec: dict, frame: int | None = None) -> dict:
        if frame is not None:
            rec.setdefault("frame", frame)
        self.on_output(rec)
        return rec

    def feed(self, event: dict, frame: int | None = None, extra: dict | None = None,
             extra_types: tuple[str, ...] = ()) -> list[dict]:
        """One engine event (start, flip, slap, collect), logged with what it caused.
        `extra` keys join the announcements of `extra_types` (a flip's frame numbers,
        a slap's evidence)."""
        if self.log is not None:
            self.log.event(event)
        was_pending = self.game.pending
        try:
            anns = self.game.apply(event)
        except EventError as exc:
            anns = [{"type": "rejected", "reason": f"{event.get('type')}: {exc}"}]
        # The pile was given away (a challenge won, a slap): the tracker starts a new one.
        # An award a flip makes is of a pile already won (the winner played on).
        won = (self.game.pending is not None and was_pending is None) or (
            event.get("type") != "flip" and any(a.get("type") == "award" for a in anns))
        if won and self.tracker is not None:
            self.tracker.pile_won(event.get("t"))
        for a in anns:
            if extra and a.get("type") in extra_types:
                a.update(extra)
        out = [self._out(a, frame) for a in anns]
        if self.log is not None:
            for a in out:
                self.log.call(a)
        return out

    # ------------------------------------------------------------ frames
    def process(self, frame: Frame) -> list[dict]:
        start = self.clock()
        events = self.watcher.look(frame)
        self.state.detections = self.watcher.detections
        out: list[dict] = []
        for ev in events:
            if ev.type == "flip":
                self.state.unclear = False
                # One record per flip: the engine's seat and pile, the tracker's frames.
                out += self.feed({"type": "flip", "card": ev.card, "t": frame.t}, frame.index,
                                 {"rest_frame": ev.rest_frame, "rest_t": round(ev.rest_t, 4),
                                  "confidence": round(ev.confidence, 3)}, ("flip",))
                self.flip_latency_ms.append((self.clock() - start) * 1000)
            elif ev.type == "unclear":
                self.state.unclear = True
                out.append(self._out({"type": "unclear", "t": frame.t}, frame.index))
            elif ev.type == "pile_cleared" and self.game.pending is not None:
                out += self.feed({"type": "collect", "t": frame.t}, frame.index)
        return out

    # ------------------------------------------------------------ slaps
    def slap(self, seats: list[int], t: float) -> list[dict]:
        g = self.game
        w = self.watcher
        ev = Evidence(t, w.frame_index, list(seats), g.top_cards(3), list(g.top_patterns))
        if self.evidence_dir is not None and w.image is not None:
            self.evidence_dir.mkdir(parents=True, exist_ok=True)
            path = self.evidence_dir / f"slap_{w.frame_index:06d}_{'-'.join(map(str, seats))}.jpg"
            cv2.imwrite(str(path), w.image, [cv2.IMWRITE_JPEG_QUALITY, 85])
            ev.image_path = str(path)
        self.state.evidence = ev
        return self.feed({"type": "slap", "seats": list(seats), "t": t}, w.frame_index,
                         {"evidence": {"top": ev.top, "patterns": ev.patterns,
                                       "image": ev.image_path}},
                         ("award", "wrong_slap", "late_slap"))
