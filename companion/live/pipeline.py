"""The live referee: frames -> detector -> flip tracker -> engine -> announcements.

Slaps (pad, keyboard or a recorded stream) go into the same engine, stamped
on the same clock as the frames. The detector only sees the pile region, and
only on frames where that region changed (motion gating); between flips the
loop idles cheaply.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import cv2
import numpy as np

from ..detector.card_reader import CORNER_SPAN
from ..detector.detections import Detections, Detector, shrink
from ..engine import EventError, Game, parse_card, rank_of
from ..engine.cards import card_name
from .capture import Frame
from .hands import HandWatcher, shows_table, table_space
from .landing import LandingOutline, changed_within
from .tracker import FlipTracker, TrackerConfig, TrackEvent


NAMED_KEPT = 2       # outlines that named a card, read again while the pile rests
# ...unless this share of the pixels inside one changed since it named its card: what
# lies there now is something else (no-pad game 2308: the last look that named a card
# saw a won pile being swept away; on the bare cloth after it, its outline read a 9d).
KEPT_CHANGED = 0.5
THUMB = 160          # side of the region copy the gate and the landing outline look at
# A camera slap this close (seconds) to a pad's slap of the same player confirms it: the
# camera's time is when the hand came to rest, the pad's when the force rose.
CONFIRM_S = 0.4
# A hand the camera sees on the pile from the player who has just won it, with no
# pattern on top, is that player picking the pile up (it lands and pauses like a slap):
# while the win waits to be collected, or after it until the next card (at most this
# long: the referee may see the pile go before the hand has settled).
PICKUP_S = 1.0


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


def _thumb(region: np.ndarray, roi: Roi) -> np.ndarray:
    """One small copy of the pile region for the gate and the landing outline (each
    shrinking the full region cost ~1.2 ms a frame)."""
    f = THUMB / max(roi.w, roi.h)
    return shrink(region, max(1, round(roi.w * f)), max(1, round(roi.h * f)))


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
        # The outlines that named a card on the last look that named one (region pixels),
        # read again while the region rests: the finder can lose a resting card it found
        # a frame before (an art deck's card at one scale), and the tracker wants two
        # looks in a row.
        self.named: list[np.ndarray] = []
        self.named_thumb: np.ndarray | None = None  # the region's copy when they named
        self.image: np.ndarray | None = None        # the last frame, whole
        self.frame_index = 0
        self._restored: tuple | None = None         # a resumed session's pile (restore)
        # The pile's middle and a card's height there (image pixels), last measured; and
        # since a pile card was last read: whether its place showed bare table, whether a
        # card landed, whether "card unclear" was said. A card the reader cannot name
        # hides the pile's indices, but not the pile: its place still shows a card.
        self.place: tuple[float, float, float] | None = None
        self.bare_since = self.landed_since = self.unclear_said = False
        self.read_t: float | None = None            # when a pile card was last read
        # A card landed (its outline given), is read as a new number card or ace and was
        # not called yet: each frame of its rest is looked at, not only the gate's few.
        self.uncalled = self.landing_given = False

    def restore(self, pile: list[str], boxes: dict[str, list[float]], leaving: list[str],
                won: bool, t: float) -> None:
        """A resumed session: the pile's cards (oldest first) with their last boxes; won:
        the pile is won and on its way out; leaving: the cards of a pile just won (not
        flips while they are swept away). Given to the tracker when it is made (on the
        first frame, which says how large the picture is)."""
        self._restored = (pile, boxes, leaving, won, t)
        if self.tracker is not None:
            self.tracker = FlipTracker(self.tracker_cfg, frame_diag=self.tracker.diag)
            self.tracker.restore(*self._restored)
            self._restored = None

    def pile_geometry(self) -> tuple[tuple[float, float] | None, float | None]:
        """Where the pile is and how tall a card is there (image pixels), from the top
        card's two corner indices once one is known; (None, None) before."""
        spots = None if self.tracker is None else self.tracker.top_spots
        if spots is not None and len(spots) >= 2:
            d = float(np.linalg.norm(spots[0] - spots[-1]))
            # The top card's two read corners (detections) lie CORNER_SPAN card heights
            # apart (0.75; sizing by 0.95 took cards for a fifth smaller than they are,
            # and the camera's slap watcher measures in card heights).
            if d > 8:
                c = spots.mean(0)
                return (float(c[0]), float(c[1])), d / CORNER_SPAN
        if self.roi is not None:
            return (self.roi.x + self.roi.w / 2, self.roi.y + self.roi.h / 2), None
        return None, None

    def region(self) -> tuple[np.ndarray, Roi] | None:
        """The last frame's pile region and where it lies."""
        if self.image is None or self.roi is None:
            return None
        H, W = self.image.shape[:2]
        roi = self.roi.clip(W, H)
        return roi.crop(self.image), roi

    def warm(self, frame: Frame) -> None:
        """A frame before a resumed session's first: only the motion cues (the gate, the
        landing outline) see it, so a card landing as play resumes is outlined as it
        would have been."""
        img = frame.image
        H, W = img.shape[:2]
        roi = (self.roi or Roi.central(W, H)).clip(W, H)
        region = roi.crop(img)
        thumb = _thumb(region, roi)
        if self.landing is not None:
            self.landing.update(thumb)
        if self.gate is not None:
            self.gate.changed(thumb)

    def look(self, frame: Frame) -> list[TrackEvent]:
        img = frame.image
        H, W = img.shape[:2]
        if self.roi is None:
            self.roi = Roi.central(W, H)
        roi = self.roi.clip(W, H)
        if self.tracker is None:
            self.tracker = FlipTracker(self.tracker_cfg, frame_diag=float(np.hypot(roi.w, roi.h)))
            if self._restored is not None:
                self.tracker.restore(*self._restored)
                self._restored = None
        region = roi.crop(img)
        self.frames += 1
        self.image = img
        self.frame_index = frame.index
        thumb = _thumb(region, roi)
        landed = self.landing.update(thumb) if self.landing is not None else None
        if landed is not None:
            landed = landed * np.float32([roi.w / thumb.shape[1], roi.h / thumb.shape[0]])
        if landed is None:
            self.uncalled = False
        elif not self.landing_given:
            self.uncalled = True                  # a new landing
        self.landing_given = landed is not None
        # A card that landed and is read, but not yet called, is looked at on each frame
        # the landing outline is given (its first `LandingOutline.keep` at rest), not
        # only on the gate's: an unsure reading needs `slow_frames` looks in a row, and
        # the gate gives two and then one a second.
        changed = self.gate is None or self.gate.changed(thumb)
        fresh = changed or self.uncalled
        if fresh:
            # Kept outlines are read only while the region rests: read on a moving picture
            # they would make a card being swept away look still.
            resting = self.landing is not None and self.landing.resting
            fallback = self._kept(thumb, roi) if resting else []
            if landed is None and not fallback:
                found = self.detector(region)
            else:
                found = self.detector(region, outlines=[] if landed is None else [landed],
                                      fallback=fallback)
            named = _named_outlines(found)
            if named or resting:
                self.named, self.named_thumb = named, thumb
            self.detections = found.offset(roi.x, roi.y)
            self.inferences += 1
        hidden = self._hidden(img, frame.t, landed is not None)
        # A gated frame repeats the last detections: nothing in the region moved.
        events = self.tracker.update(frame.index, frame.t, self.detections, fresh,
                                     still=not changed)
        # Called, or nothing new read, or only courts: the gate's looks again. A court's
        # letter is its only cue, where a number card's reading has passed the middle
        # reader's pips and suit, and looks at a still picture took an art Qd read Kd at
        # 0.51-0.53 over 0.55 (valid-face game 233).
        if fresh and all(rank_of(parse_card(n)) >= 11 for n in self.tracker.candidates) or \
                any(e.type == "flip" for e in events):
            self.uncalled = False
        tr = self.tracker
        if not tr.pile:
            self.place = None
        elif tr.pile_seen == frame.index:
            self.bare_since = self.landed_since = self.unclear_said = False
            self.read_t = frame.t
            centre, card_h = self.pile_geometry()
            if card_h is not None:
                self.place = (*centre, card_h)
        if any(e.type == "unclear" for e in events):
            self.unclear_said = True          # the tracker said it of a card it half read
        elif hidden and not self.unclear_said and self.landed_since:
            self.unclear_said = True
            events.append(TrackEvent("unclear", frame.index, frame.t))
        return events

    def _hidden(self, img: np.ndarray, t: float, landed: bool) -> bool:
        """Whether the pile, none of whose cards the reader sees, is still there under
        something it cannot read: its place, at rest, shows no bare table, nor did it
        since a pile card was last read. Then the tracker keeps the pile (it would take
        it for picked up after `clear_after` and the referee ask who took it) and says
        True once it would have. A pile swept away shows the table before the next card
        lands, and is taken as before; so is one on a table the colour of cards."""
        tr = self.tracker
        self.landed_since |= landed
        if not tr.pile or self.place is None or tr.last_pile_seen is None or \
                self.read_t is None or self.landing is None or not self.landing.resting:
            return False
        if t - tr.last_pile_seen < 0.1 or self.bare_since:
            return False
        small = table_space(img)
        f = small.shape[1] / img.shape[1]
        cx, cy, ch = self.place
        if shows_table(small, small, cx * f, cy * f, ch * f):
            self.bare_since = True
            return False
        tr.still_there(t)
        return t - self.read_t >= tr.cfg.clear_after

    def _kept(self, thumb: np.ndarray, roi: Roi) -> list[np.ndarray]:
        """The kept outlines whose pixels are (mostly) as they were when they named a card."""
        if not self.named or self.named_thumb is None or self.named_thumb.shape != thumb.shape:
            return []
        f = np.float32([thumb.shape[1] / roi.w, thumb.shape[0] / roi.h])
        return [q for q in self.named
                if changed_within(self.named_thumb, thumb, q * f) < KEPT_CHANGED]


def _named_outlines(found: Detections, most: int = NAMED_KEPT) -> list[np.ndarray]:
    """The distinct card outlines that named a card, the surest first (`most` of them)."""
    if found.outline is None:
        return []
    out: list[np.ndarray] = []
    for q in found.sorted().outline:
        if not any(np.abs(q - o).max() < 1.0 for o in out):
            out.append(q)
    return out[:most]


def _short(ev: dict | None) -> dict | None:
    if ev is None:
        return None
    return {k: v for k, v in ev.items() if k in ("type", "card", "seats", "seat")}


def _changes(old: list[dict], new: list[dict]) -> list[dict]:
    """What a corrected event caused that the original did not, and the reverse: the
    patterns, awards and penalties (the rest follows from them)."""
    keep = ("pattern", "award", "wrong_slap", "late_slap", "challenge", "challenge_won",
            "out", "hand_over")
    pick = lambda anns: [{k: v for k, v in a.items() if k != "t"} for a in anns
                         if a.get("type") in keep]
    a, b = pick(old), pick(new)
    return ([dict(x, change="gone") for x in a if x not in b] +
            [dict(x, change="new") for x in b if x not in a])


class LivePipeline:
    def __init__(self, detector: Detector, game: Game, roi: Roi | None = None, gate: bool = True,
                 tracker: TrackerConfig | None = None, evidence_dir: Path | None = None,
                 on_output: Callable[[dict], None] | None = None,
                 clock: Callable[[], float] = time.perf_counter, log=None,
                 hands: HandWatcher | None = None, camera_referees: bool = True) -> None:
        """hands: the camera's slap watcher (companion.live.hands). camera_referees: its
        slaps go to the referee (no pad); False where a pad decides, and the camera's
        slaps are only reported beside the pad's ("camera_slap")."""
        self.watcher = PileWatcher(detector, roi, gate, tracker)
        self.hands = hands
        self.camera_referees = camera_referees
        # Recent frames, for a camera slap's evidence: the frame its hand landed in.
        self.recent: deque = deque(maxlen=12)
        # An open question to the table ("pile taken: who won it?") and what happened
        # meanwhile, held until it is answered: the referee cannot say whose turn it is.
        self.asking: dict | None = None
        self.held: list[tuple] = []
        self.pad_slaps: deque = deque(maxlen=16)    # (t, seats) of recent slaps not the camera's
        self.last_win: tuple[int, float] | None = None  # (seat, t) of the last award
        self.last_flip: tuple[int, float] | None = None  # (seat, rest t) of the last flip
        # Every engine event fed, in order: a correction edits this and replays it.
        self.events: list[dict | None] = []
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
    def announce(self, rec: dict, frame: int | None = None) -> dict:
        """One announcement: logged first, then shown, spoken or printed, so that what
        the table heard is always in the log."""
        if frame is not None:
            rec.setdefault("frame", frame)
        if self.log is not None:
            self.log.call(rec)
        self.on_output(rec)
        return rec

    def log_stopped(self, reason: str) -> None:
        """The session log could not be written (disk full): said once; the referee goes
        on without it."""
        self.announce({"type": "log_stopped", "reason": reason}, self.watcher.frame_index)

    def feed(self, event: dict, frame: int | None = None, extra: dict | None = None,
             extra_types: tuple[str, ...] = (), source: str | None = None,
             box: list[float] | None = None) -> list[dict]:
        """One engine event (start, flip, slap, collect, give), logged with what it
        caused. `extra` keys join the announcements of `extra_types` (a flip's frame
        numbers, a slap's evidence). While a question to the table is open, flips and
        slaps are held and fed once it is answered. source "recorded": a slap from a
        recorded slap file; box: where the tracker saw a flipped card (both logged, for
        --resume)."""
        if self.asking is not None and event.get("type") in ("flip", "slap"):
            self.held.append((event, frame, extra, extra_types, source, box))
            return []
        g = self.game
        if event.get("type") == "flip" and not g.hand_active and g.hand_number > 0:
            # The table dealt again and plays on: the next hand.
            return self.deal(event.get("t"), frame) + self.feed(event, frame, extra,
                                                                extra_types)
        if self.log is not None:
            extra_log = {}
            if source == "recorded":
                extra_log["src"] = source
            if box is not None:
                extra_log["box"] = [round(float(v), 1) for v in box]
            self.log.event(event, frame, **extra_log)
        self.events.append(dict(event))
        was_pending, was_active = self.game.pending, self.game.hand_active
        try:
            anns = self.game.apply(event)
        except EventError as exc:
            anns = [{"type": "rejected", "reason": f"{event.get('type')}: {exc}"}]
        if (event.get("type") == "flip" and was_active and not g.hand_active
                and not any(a.get("type") == "flip" for a in anns)):
            # The card showed the won pile was picked up, and that pick-up ended the
            # hand: the card itself is the next hand's first (the table dealt again),
            # or, where the referee's counts were wrong, play going on. Either way it
            # is called, not lost.
            return [self.announce(a, frame) for a in anns] + self.feed(
                event, frame, extra, extra_types, source, box)
        # The pile was given away (a challenge won, a slap): the tracker starts a new one.
        # An award a flip makes is of a pile already won (the winner played on).
        won = (self.game.pending is not None and was_pending is None) or (
            event.get("type") != "flip" and any(a.get("type") == "award" for a in anns))
        if won and self.tracker is not None:
            self.tracker.pile_won(event.get("t"))
        elif event.get("type") == "slap" and self.tracker is not None:
            # A slap that won nothing: its hands lie on the top card for a moment.
            t = self.tracker.t if event.get("t") is None else float(event["t"])
            self.tracker.hands_on(t + self.tracker.cfg.slap_hold)
        for a in anns:
            if extra and a.get("type") in extra_types:
                a.update(extra)
            if a.get("type") == "award" and event.get("t") is not None:
                self.last_win = (a["seat"], float(event["t"]))
        if event.get("type") == "flip":
            self.last_win = None        # a new card: a hand now is on it, no pick-up
        return [self.announce(a, frame) for a in anns]

    def deal(self, t: float | None = None, frame: int | None = None) -> list[dict]:
        """The next hand (a new match after the last one's end): the deal one seat on,
        the deck dealt from the new dealer's left, every player back in. Refused while a
        hand is being played."""
        g = self.game
        if g.hand_active or g.hand_number == 0:
            why = "the hand is still being played" if g.hand_active else "no hand was dealt yet"
            return [self.announce({"type": "rejected", "t": t, "reason": f"deal: {why}"},
                                  frame)]
        n = len(g.players)
        dealer = ((g.dealer if g.dealer is not None else n - 1) + 1) % n
        return self.feed({"type": "start", "players": list(g.players), "dealer": dealer,
                          "t": t}, frame)

    # ------------------------------------------------------------ frames
    def warm(self, frame: Frame) -> None:
        self.watcher.warm(frame)

    def unseen(self, seconds: float) -> None:
        """No picture for this long (a covered lens, a dark camera): not the pile gone."""
        if self.tracker is not None:
            self.tracker.unseen(seconds)

    def process(self, frame: Frame, readable: bool = True) -> list[dict]:
        """One frame: flips, slaps and a pile taken, to the referee. readable=False: a
        picture all one shade (companion.live.capture.CameraHealth), nothing to read; the
        hand watcher still learns the table from it, or a dark cloth in dim light (one
        shade until the first hand comes) is learnt with that hand on it, and the shape the
        hand leaves is an arm all game (seed 2087 lost that seat's every slap)."""
        start = self.clock()
        events = self.watcher.look(frame) if readable else []
        self.state.detections = self.watcher.detections
        out: list[dict] = []
        slaps = []
        if self.hands is not None:
            self.recent.append(frame)
            pile, card_h = self.watcher.pile_geometry()
            slaps = self.hands.look(frame.image, frame.t, frame.index, pile, card_h)
            # The camera saw the pile's place turn to bare table, and the tracker sees
            # none of its cards: it was taken, as the tracker would say after 0.6 s.
            tr = self.tracker
            if readable and self.hands.pile_gone is not None and tr is not None and tr.pile and (
                    tr.last_pile_seen is None or frame.t - tr.last_pile_seen >= 0.15):
                events = events + [TrackEvent("pile_cleared", frame.index, frame.t)]
        # What the camera saw, in the order it happened: a flip when its card came to
        # rest, a slap when its hand reached the pile. The slaps keep the hand watcher's
        # order (it may put a hand found at rest a frame later first: landing_order).
        keys, latest = {}, -math.inf
        for s in slaps:
            latest = keys[id(s)] = max(latest, s.t)
        when = lambda x: keys[id(x)] if not isinstance(x, TrackEvent) else (
            x.rest_t if x.type == "flip" and x.rest_t is not None else x.t)
        for ev in sorted([*events, *slaps], key=when):
            if not isinstance(ev, TrackEvent):
                if self.camera_referees:
                    out += self.slap([ev.seat], ev.t, seen_at=ev.t, source="camera",
                                 landed=ev.arrived)
                else:
                    # The pad decides; the camera says whether it saw that player's hand.
                    pad = [s for s in self.pad_slaps if abs(s[0] - ev.t) <= CONFIRM_S]
                    out.append(self.announce({"type": "camera_slap", "seat": ev.seat,
                                              "t": round(ev.t, 4), "angle": ev.angle,
                                              "confirms": any(ev.seat in s[1] for s in pad)},
                                             frame.index))
            elif ev.type == "flip":
                out += self._flip(ev, frame.t, frame.index)
                self.flip_latency_ms.append((self.clock() - start) * 1000)
            elif ev.type == "unclear":
                self.state.unclear = True
                out.append(self.announce({"type": "unclear", "t": frame.t}, frame.index))
            elif ev.type == "pile_cleared" and self.game.pending is not None:
                out += self.feed({"type": "collect", "t": frame.t}, frame.index)
            elif ev.type == "pile_cleared" and not ev.won and self.asking is None and \
                    self.game.pile_count and self.game.hand_active:
                # Picked up, and no slap or challenge won it: the table must say who.
                self.asking = {"type": "ask", "question": "pile_taken", "t": frame.t,
                               "cards": self.game.pile_count}
                out.append(self.announce(dict(self.asking), frame.index))
            elif ev.type == "pile_restored" and self.asking is not None:
                out += self._answered(None, frame.t, frame.index)
        return out

    def _flip(self, ev: TrackEvent, t: float, frame: int) -> list[dict]:
        """The tracker's flip to the engine: one record per flip, the engine's seat and
        pile, the tracker's frames."""
        self.state.unclear = False
        out = self.feed({"type": "flip", "card": ev.card, "t": t}, frame,
                        {"rest_frame": ev.rest_frame, "rest_t": round(ev.rest_t, 4),
                         "confidence": round(ev.confidence, 3)}, ("flip",),
                        box=ev.box or None)
        seat = next((a.get("seat") for a in out if a.get("type") == "flip"), None)
        if seat is not None and ev.rest_t is not None:
            self.last_flip = (seat, float(ev.rest_t))
        return out

    def answer(self, seat: int | None, t: float) -> list[dict]:
        """The table's answer to "pile taken: who won it?": seat took the pile, and the
        referee gives it them; None: nobody did (a hand held over it, and the next card
        landed on it before it showed again), so it is the pile still, under any card
        played since. Then what was held meanwhile is fed in order."""
        if self.asking is None:
            return []
        if seat is None and self.tracker is not None:
            self.tracker.not_taken(t)
        return self._answered(seat, t, self.watcher.frame_index)

    def _answered(self, seat: int | None, t: float, frame: int) -> list[dict]:
        """seat None: the pile was not taken (it came back into view, or the table
        said so)."""
        self.asking = None
        out = [self.announce({"type": "answer", "question": "pile_taken", "seat": seat,
                              "t": t}, frame)]
        if seat is not None:
            out += self.feed({"type": "give", "seat": seat, "t": t}, frame)
            if self.tracker is not None:
                # Its cards are on their way to the winner: the same cards seen again
                # elsewhere are played again.
                self.tracker.pile_won(t)
        held, self.held = self.held, []
        for event, f, extra, types, source, box in held:
            out += self.feed(event, f, extra, types, source, box)
        return out

    # ------------------------------------------------------------ resume
    def restore(self, session, t: float) -> None:
        """Carry on a session from its log (companion.live.session.Session): the engine's
        state is the logged events replayed (the engine is pure), the tracker knows the
        pile's cards and where they lay, a won pile still on its way out is not played
        again, and a question the table had not answered is asked again. t: the clock
        where play goes on."""
        game = Game(self.game.rules)
        boxes: dict[str, list[float]] = {}
        leaving: list[str] = []
        for ev, box in zip(session.events, session.boxes):
            if ev is None:
                continue
            before = game.top_cards(game.deck_size)
            was_pending = game.pending
            anns = self._apply_quiet(game, ev)
            if ev.get("type") == "flip" and box is not None:
                boxes[str(ev.get("card"))] = box
            won = (game.pending is not None and was_pending is None) or (
                ev.get("type") != "flip" and any(a.get("type") == "award" for a in anns))
            if won:
                after = game.top_cards(game.deck_size)
                leaving = before + [c for c in after if c not in before]
        self.game = game
        self.events = [None if ev is None else dict(ev) for ev in session.events]
        self.watcher.restore(game.top_cards(game.deck_size), boxes,
                             [] if game.pending else leaving, game.pending is not None, t)
        asked = [c for c in session.calls if c.get("type") in ("ask", "answer")]
        if asked and asked[-1]["type"] == "ask" and game.hand_active:
            self.asking = {k: v for k, v in asked[-1].items() if k != "frame"}

    # ------------------------------------------------------------ corrections
    def correct(self, what: str, value=None, t: float | None = None) -> list[dict]:
        """The table puts the referee right: what = "flip" (the last flip was value, a
        card; None: it was no card), "slap" (the last slap never happened) or "award"
        (the last pile given went to seat value). The engine is pure, so the corrected
        event stream is replayed from the start, not patched; the log keeps the original
        events and the correction. Returns the correction's announcement (what changed),
        or a "rejected" one when there is nothing to correct."""
        kinds = {"flip": ("flip",), "slap": ("slap",), "award": ("slap", "give", "collect")}
        if what not in kinds:
            raise ValueError(f"correct {what!r}: one of flip, slap, award")
        index = None
        for i in range(len(self.events) - 1, -1, -1):
            ev = self.events[i]
            if ev is None or ev["type"] not in kinds[what]:
                continue
            if what == "award" and not self._gave(i):
                continue
            index = i
            break
        if index is None:
            return [self.announce({"type": "rejected", "reason": f"correction: no {what} to "
                                   "correct", "t": t})]
        if what == "flip" and value is not None:
            try:
                parse_card(str(value))
            except ValueError as exc:
                return [self.announce({"type": "rejected", "reason": f"correction: {exc}",
                                       "t": t})]
        if what == "award" and not (type(value) is int and 0 <= value < len(self.game.players)):
            return [self.announce({"type": "rejected", "t": t,
                                   "reason": f"correction: no seat {value!r} at this table"})]
        old = self.events[index]
        if what == "flip":
            new = None if value is None else dict(old, card=str(value))
        elif what == "slap":
            new = None
        elif old["type"] == "slap":
            new = dict(old, seats=[int(value)])
        else:
            new = {"type": "give", "seat": int(value), "t": old.get("t")}
        events = self.events[:index] + [new] + self.events[index + 1:]
        # What the stream caused from the corrected event on, before and after.
        before = self._replay(self.events[:index])
        old_anns = [a for ev in self.events[index:] if ev is not None
                    for a in self._apply_quiet(before, ev)]
        game = self._replay(events[:index])
        new_anns = [a for ev in events[index:] if ev is not None
                    for a in self._apply_quiet(game, ev)]
        self.events = events
        self.game = game
        rec = {"type": "correction", "what": what, "was": _short(old), "now": _short(new),
               "changes": _changes(old_anns, new_anns), "t": t}
        if self.log is not None:
            self.log.correction(index, new)
        return [self.announce(rec, self.watcher.frame_index)]

    def missed(self, card: str, t: float | None = None) -> list[dict]:
        """The table adds a card the referee did not call (one the reader could not name:
        an art deck's): it was played just now and lies on top, so the referee calls it as
        it would have, in turn, with whatever it makes (a pattern, a challenge). A
        question "who took the pile?" still open is answered "nobody" first: the pile
        was there, under that card. A card already in the pile, or not a card, is
        refused."""
        try:
            cid = parse_card(str(card))
        except ValueError as exc:
            return [self.announce({"type": "rejected", "reason": f"missed card: {exc}",
                                   "t": t})]
        card = card_name(cid)
        if cid in self.game.pile:       # refused before the tracker is told of it
            return [self.announce({"type": "rejected", "t": t,
                                   "reason": f"missed card: {card} is already in the pile"})]
        out = self.answer(None, t)      # nothing when no question is open
        if self.tracker is not None:
            self.tracker.played(card, t)
        return out + self.feed({"type": "flip", "card": card, "t": t},
                               self.watcher.frame_index, {"added": True}, ("flip",))

    def _gave(self, i: int) -> bool:
        """Whether event i gave a pile away (replayed to see)."""
        g = self._replay(self.events[:i])
        return any(a.get("type") == "award" for a in self._apply_quiet(g, self.events[i]))

    def _replay(self, events) -> Game:
        g = Game(self.game.rules)
        for ev in events:
            if ev is not None:
                self._apply_quiet(g, ev)
        return g

    @staticmethod
    def _apply_quiet(game: Game, event: dict) -> list[dict]:
        try:
            return game.apply(event)
        except EventError:
            return []

    # ------------------------------------------------------------ slaps
    def slap(self, seats: list[int], t: float, seen_at: float | None = None,
             source: str | None = None, landed: float | None = None) -> list[dict]:
        """A slap (pad, key, or the camera: source "camera"), with its evidence: the top
        cards, and the frame at `seen_at` (when the camera saw the hand land; default
        the newest frame). landed: when the first hand reached the pile (default t)."""
        g = self.game
        w = self.watcher
        out: list[dict] = []
        if self.tracker is not None:
            # The hands now hide the card they slap: one seen resting there is called
            # on what was seen of it, before the slap is judged.
            for ev in self.tracker.settle(t if landed is None else landed):
                out += self._flip(ev, self.tracker.t, w.frame_index)
        if source != "camera":
            self.pad_slaps.append((t, list(seats)))
        # A hand of a player who is out of the hand (a later hand of a slap that just put
        # them out, each hand sent as it lands) is nothing to referee: said, not refused.
        if g.hand_active and g.out:
            gone = [s for s in seats if 0 <= s < len(g.out) and g.out[s]]
            seats = [s for s in seats if s not in gone]
            if gone and not seats:
                return out + [self.announce({"type": "slap_ignored", "seats": gone, "t": t,
                                             "reason": "out of this hand"}, w.frame_index)]
        if source == "camera" and len(seats) == 1 and not g.top_patterns:
            won = g.pending[0] if g.pending is not None else (
                self.last_win[0] if self.last_win and abs(t - self.last_win[1]) <= PICKUP_S
                else None)
            if won == seats[0]:
                return out + [self.announce({"type": "slap_ignored", "seats": list(seats),
                                             "t": t, "reason": "picking up the pile"},
                                            w.frame_index)]
        if source == "camera" and len(seats) == 1 and landed is not None and \
                self.last_flip is not None and self.last_flip[0] == seats[0] and \
                landed < self.last_flip[1]:
            # The hand of the player who played the top card reached the pile before that
            # card came to rest: it brought the card, and held on it (no-pad game 2279:
            # a dealer pushed an Ac in fast and held it for 5 frames, which the camera
            # saw as a slap). A slap on one's own card comes once it lies there.
            return out + [self.announce({"type": "slap_ignored", "seats": list(seats),
                                         "t": t, "reason": "playing a card"},
                                        w.frame_index)]
        index, image = w.frame_index, w.image
        if seen_at is not None and self.recent:
            f = min(self.recent, key=lambda f: abs(f.t - seen_at))
            index, image = f.index, f.image
        ev = Evidence(t, index, list(seats), g.top_cards(3), list(g.top_patterns))
        if self.evidence_dir is not None and image is not None:
            self.evidence_dir.mkdir(parents=True, exist_ok=True)
            path = self.evidence_dir / f"slap_{index:06d}_{'-'.join(map(str, seats))}.jpg"
            cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, 85])
            ev.image_path = str(path)
        self.state.evidence = ev
        evidence = {"top": ev.top, "patterns": ev.patterns, "image": ev.image_path,
                    "frame": index}
        if source:
            evidence["source"] = source
        return out + self.feed({"type": "slap", "seats": list(seats), "t": t}, w.frame_index,
                               {"evidence": evidence}, ("award", "wrong_slap", "late_slap"),
                               source=source)
