"""Slaps seen by the camera: hands landing on the pile, each named by its seat.

No pad on most tables, so the camera has to see the slaps. Method (chosen over a
trained hand model: nothing here has real hands to train or check one on, and a
hand model inside a wheel that loads offline was not found; see the README): a
hand reaches the pile on an arm, and an arm comes in over the edge of the
picture from where its player sits. So, on a small copy of the whole frame:

1. What differs from the table as it was (a background that learns everything
   not joined to the picture's edge: a card that lands, a pile that goes) is the
   foreground; arms are the stretches of it along the picture's edge. A sleeve of
   the table's own colour differs only along its sides: two thin runs close
   together along the edge are one sleeve, and what its sides, the edge between
   them and the hand they end in enclose is arm.
2. Each arm is followed along the line from where it comes in towards the pile:
   how far its contiguous foreground reaches is its tip.
3. A slap is an arm whose tip comes onto the pile fast (or is first seen already
   there: it came in between two frames) and stops there: its forearm is still
   over three frames. A hand that hovers eases in slowly; a hand that pushes a
   card in lets go and leaves at once; a hand that picks the pile up drags it
   away: none of them is a slap.

The seat is the one whose direction (companion.live.seats) is nearest the edge
point the arm comes in from; the order of two hands is the order in which they
came to rest on the pile, the bottom hand first (not when their tips reached it:
two hands from facing seats touch fingertips before either lands), but for two found
at rest within a frame of each other, whose tips' arrival decides (`landing_order`).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

import cv2
import numpy as np

from .seats import angle_of, degrees_apart, nearest_seat

WIDTH = 160                 # the small copy's width (pixels)
GEOMETRY_LOOKS = 45         # frames of measured card heights the median is taken over
GEOMETRY_STEP = 0.1         # share of the way the steadied pile centre moves a frame
CHROMA = 2.5                # weight of colour against brightness in what differs
ONE_ARM = 20.0              # degrees: edge runs or sightings closer than this are one arm
LOST_LOOKS = 3              # looks an arm out of view is remembered (it may flicker out)


@dataclass
class HandConfig:
    diff: float = 18.0        # levels (brightness, or weighted colour) from the table: foreground
    weak: float = 9.0         # ...and, joined to an arm, what differs this much is arm too
    weak_most: float = 0.2    # ...unless that adds more than this share of the picture to it
    learn: float = 0.5        # how fast the table learns what is not an arm, per frame
    settle: float = 1.0       # ...and what changed but is no arm (a card that landed): at once
    min_run: int = 3          # pixels of picture edge an arm covers at least
    on_pile: float = 0.35     # tip within this many card heights of the pile centre
    fast: float = 5.0         # card heights a second the tip comes in at, at least
    flying: float = 10.0      # ...and, having reached it, still comes on this fast: not yet
                              # landed (a card pushed in slows down gradually under it)
    still_frames: int = 5     # frames the hand holds still on the pile...
    stop_within: int = 2      # ...from at most this many frames after the one it arrived in
    crowded_within: int = 4   # ...or this many while other hands land too (their shadows
                              # and arms cross its forearm as it settles)
    tip_still: float = 0.12   # card heights the tip may still advance in a frame held still (a
                              # dealing hand gliding on at 0.15 a frame is not still)
    give_up: int = 12         # frames after arriving by which a hand must have held still
    moved: float = 12.0       # levels a pixel of the forearm's patch steps in a frame: moved
    still: float = 0.03       # share of that patch that may move in a frame held still
    leave: float = 1.0        # card heights a slapped arm must go back before it slaps again
    flicker: float = 45.0     # card heights a second no arm goes back at: its hand dropped
                              # out of the foreground for a frame
    max_seat_off: float = 40.0  # degrees an arm may come in off its seat's direction
    grain: float = 3.0        # change in local texture (|Laplacian|, blurred) that is foreground
                              # (4.0 lost a dark arm on dark wood, which hides the grain
                              # more than it differs in colour: 1962 and 1970, session 29)
    reset_share: float = 0.6  # foreground over this share of the picture: the light changed
    gone_frames: int = 4      # frames the pile's place is bare table before the pile went
    close: float = 0.1        # card heights: gaps in the foreground closed before arms are found
    sleeve: float = 0.8       # card heights: the widest sleeve, the gap between its sides
    sleeve_degrees: float = 15.0  # along the edge (or one spanning this much from the pile)
    side: float = 0.25        # card heights: the longest run along the edge a sleeve's side makes


@dataclass
class CameraSlap:
    seat: int
    t: float                  # when the hand came to rest on the pile
    frame: int                # the frame that confirmed it
    angle: float              # where the arm came in (degrees clockwise from the bottom)
    arrived: float = 0.0      # when its tip reached the pile (breaks a tie of t)


@dataclass
class _Arm:
    angle: float
    tips: list[tuple[float, float]] = field(default_factory=list)   # (t, tip distance)
    arrived: float | None = None        # time the tip reached the pile
    since: int = 0                      # frames since then
    still: int = 0
    rest: float = 0.0                   # when the hand came to rest on the pile
    stopped: bool = False
    line: tuple[float, float] | None = None   # where the forearm is looked along
    band: np.ndarray | None = None      # last frame's forearm pixels
    decided: bool = False               # slapped, or no slap: not again until it goes back
    slapped: bool = False               # ...and which of the two
    drew_back: int = -99                # frame counter when it last went back off the pile
    seen: int = 0                       # frame counter of the last sighting
    new: bool = False                   # first seen this look, with none near it lately


def landing_order(ready: list[CameraSlap], frame_time: float | None) -> list[CameraSlap]:
    """Hands in the order they landed, the bottom hand first: by when each came to rest,
    but two whose rests were found within one frame of each other by when their tips
    reached the pile. Whether a forearm holds still is judged frame by frame, so a
    forearm shaken by the hands landing beside it is found at rest a frame late, while
    the tip's arrival is placed between frames (no-pad seed 2229: seat 2's tip arrived
    1.2 frames before seat 1's, its rest was found a frame after, and seat 1 was
    awarded the pile). Wider apart, the rest decides: two hands from facing seats touch
    fingertips, which puts a tip on the pile, before either lands."""
    out = sorted(ready, key=lambda s: (s.t, s.arrived))
    if not frame_time:
        return out
    swapped = True
    while swapped:          # a few hands at most: swap neighbours until none is left
        swapped = False
        for i in range(len(out) - 1):
            a, b = out[i], out[i + 1]
            # within one frame (1 % over it: times are sums of floats)
            if b.t - a.t <= frame_time * 1.01 and b.arrived < a.arrived:
                out[i], out[i + 1] = b, a
                swapped = True
    return out


def table_space(image: np.ndarray, width: int = WIDTH, height: int | None = None
                ) -> np.ndarray:
    """A small copy of a picture to compare with the table: brightness and colour apart,
    colour weighted up (a pale hand over white cards differs from them less in
    brightness than in hue)."""
    H, W = image.shape[:2]
    height = height or max(8, round(H * width / W))
    small = cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)
    small = cv2.cvtColor(cv2.GaussianBlur(small, (3, 3), 0), cv2.COLOR_BGR2YCrCb)
    return small.astype(np.float32) * np.float32([1.0, CHROMA, CHROMA])


def _place(shape: tuple, cx: float, cy: float, ch: float) -> tuple[int, int, int, int]:
    """The middle of the pile: a square 0.4 card heights across at (cx, cy), clipped."""
    h, w = shape[:2]
    r = max(2, int(0.2 * ch))
    return (max(int(cx) - r, 0), max(int(cy) - r, 0),
            min(int(cx) + r + 1, w), min(int(cy) + r + 1, h))


def shows_table(small: np.ndarray, table: np.ndarray, cx: float, cy: float, ch: float,
                diff: float = 18.0) -> bool:
    """Whether the middle of the pile at (cx, cy) (`table_space` pixels, ch a card's
    height there) looks like the table: its mean within `diff` levels of the median of
    `table`'s border (the picture itself, or a learnt background without arms)."""
    x0, y0, x1, y1 = _place(small.shape, cx, cy, ch)
    if x1 <= x0 or y1 <= y0:
        return False
    border = np.concatenate([table[0], table[-1], table[:, 0], table[:, -1]])
    mean = small[y0:y1, x0:x1].reshape(-1, small.shape[2]).mean(0)
    return bool(np.abs(mean - np.median(border, 0)).max() < diff)


class HandWatcher:
    """Frames of the whole table -> CameraSlap, one per hand that lands on the pile."""

    def __init__(self, seats: list[float], config: HandConfig | None = None) -> None:
        self.seats = list(seats)
        self.cfg = config or HandConfig()
        self.background: np.ndarray | None = None
        self.grain: np.ndarray | None = None        # the table's texture, learnt alike
        self.arms: list[_Arm] = []
        self.count = 0
        self.prev_t: float | None = None            # the time of the look before
        # Arms out of view lately: angle -> the look it was last seen in. An arm that
        # drops out of the foreground for a look and comes back is not a new arm.
        self.lost: dict[float, int] = {}
        self.mask: np.ndarray | None = None         # the last foreground (for the display)
        self.ready: list[CameraSlap] = []           # decided, waiting for earlier hands
        # The pile's place: cards there once, bare table for how many frames since.
        self.pile_there = False
        self.empty_frames = 0
        self.pile_gone: float | None = None         # set by look(): when the pile went
        # Where the pile is and how tall a card is there, steadied: each new card lands a
        # little off the last, and between cards the pile's place is only guessed; a jump
        # in either would move every arm's tip at once, which reads as a hand coming in.
        self.centre: tuple[float, float] | None = None
        self.sizes: deque = deque(maxlen=GEOMETRY_LOOKS)

    def reset(self) -> None:
        self.background = None
        self.arms = []
        self.ready = []
        self.lost = {}

    def look(self, image: np.ndarray, t: float, frame: int,
             pile: tuple[float, float] | None = None,
             card_h: float | None = None) -> list[CameraSlap]:
        """One frame (BGR, whole). pile: the pile's centre in image pixels (default the
        picture's centre); card_h: a card's height there (default 0.4 of the shorter
        side)."""
        cfg = self.cfg
        H, W = image.shape[:2]
        f = WIDTH / W
        h = max(8, round(H * f))
        # The grain from a copy twice as fine (the table's weave or wood is gone at the
        # small size), pooled down to it.
        fine = cv2.cvtColor(cv2.resize(image, (2 * WIDTH, 2 * h), interpolation=cv2.INTER_AREA),
                            cv2.COLOR_BGR2GRAY)
        lap = np.abs(cv2.Laplacian(fine, cv2.CV_32F))
        grain = cv2.resize(cv2.GaussianBlur(lap, (5, 5), 0), (WIDTH, h),
                           interpolation=cv2.INTER_AREA)
        small = table_space(image, WIDTH, h)
        self.count += 1
        self.pile_gone = None
        prev_t, self.prev_t = self.prev_t, t
        if self.background is None or self.background.shape != small.shape:
            self.background = small.copy()
            self.grain = None
            self.arms = []
            return []
        differs = np.abs(small - self.background).max(2)
        fg = differs > cfg.diff
        # Texture too: an arm the table's own colour still hides the table's grain.
        if self.grain is not None:
            fg |= np.abs(grain - self.grain) > cfg.grain
        fg = fg.astype(np.uint8)
        fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
        if fg.mean() > cfg.reset_share:          # exposure jump or a camera knocked
            self.background = small.copy()
            self.grain = None
            self._forget(self.arms)
            self.arms = []
            return []
        cx, cy, ch = self._geometry(W, H, pile, card_h)
        cx, cy, ch = cx * f, cy * f, ch * f
        # A sleeve of the table's own colour shows only as its two sides: small gaps
        # closed (a tenth of a card height; wider joined a fresh card to the hand that
        # dealt it, whose tip then ran on over it), its sides join the hand they end in.
        k = max(3, int(cfg.close * ch) | 1)
        fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE,
                              cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
        # Only what is joined to the picture's edge can be an arm; everything else that
        # changed (a card that landed, a pile taken away) is learnt as table.
        _, labels = cv2.connectedComponents(fg)
        edge_labels = np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0],
                                                labels[:, -1]]))
        edge_labels = edge_labels[edge_labels > 0]
        armmask = np.isin(labels, edge_labels)
        # A sleeve wider than the closing comes in over the edge as its two sides: the
        # edge between them is closed, and what is then enclosed inside the arm is arm.
        _close_edge_gaps(armmask, (cx, cy), cfg.sleeve * ch, cfg.sleeve_degrees, cfg.side * ch)
        _, inside = cv2.connectedComponents((~armmask).astype(np.uint8))
        open_ = np.unique(np.concatenate([inside[0], inside[-1], inside[:, 0], inside[:, -1]]))
        armmask |= ~np.isin(inside, open_) & (inside > 0)
        # A dark arm on dark wood differs from it by less than `diff` along much of its
        # length: what differs by `weak` and is joined to a found arm is arm too (the
        # hysteresis of an edge detector), so its tip reaches the pile it reaches. Not
        # where that adds much of the picture to it: the light changing a little all
        # over the table, which the table must go on learning.
        weak = cv2.morphologyEx((differs > cfg.weak).astype(np.uint8) | armmask.astype(np.uint8),
                                cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
        n, wl = cv2.connectedComponents(weak)
        seed = np.bincount(wl[armmask], minlength=n)
        whole = np.bincount(wl.ravel(), minlength=n)
        grows = (seed > 0) & (whole - seed <= cfg.weak_most * wl.size)
        grows[0] = False
        armmask = grows[wl] | armmask
        keep = cv2.dilate(armmask.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
        # What changed but is no arm is table from then on, at once. Learnt by halves, a
        # card just dealt still stood out when its dealer's hand hovered back to its
        # edge, joined the hand, and the hand's tip ran over it onto the pile (seed 1201:
        # a slap invented).
        learn = np.where(keep, 0.0, np.where(fg > 0, cfg.settle, cfg.learn))
        learn = learn[..., None].astype(np.float32)
        self.background += (small - self.background) * learn
        self.grain = grain if self.grain is None else \
            self.grain + (grain - self.grain) * learn[..., 0]
        self.mask = armmask
        out: list[CameraSlap] = []
        entries: list[tuple[float, float, float, int]] = []
        for ex, ey, n_run in _edge_runs(armmask, cfg.min_run):
            ang = angle_of(ex - cx, ey - cy)
            near = [k for k, e in enumerate(entries) if degrees_apart(e[2], ang) < ONE_ARM]
            if near:            # two runs of one arm (a sleeve and a hand): the longer
                if entries[near[0]][3] >= n_run:
                    continue
                entries.pop(near[0])
            entries.append((ex, ey, ang, n_run))
        for (ex, ey, ang, _), arm in zip(entries, self._match([e[2] for e in entries])):
            arm.seen = self.count
            tip = _tip_distance(armmask, (ex, ey), (cx, cy), ch)
            arm.tips.append((t, tip))
            del arm.tips[:-4]
            # The forearm is looked at along one line while the hand is on the pile (the
            # point it comes in at wavers by a pixel from frame to frame).
            if arm.arrived is None or arm.line is None:
                arm.line = (ex, ey)
            band = _forearm(armmask, small, arm.line, (cx, cy), ch)
            self._follow(arm, tip, band, t, frame, prev_t)
            arm.band = band
            arm.new = False
        # Arms no longer in view are forgotten.
        self._forget([a for a in self.arms if a.seen != self.count])
        self.arms = [a for a in self.arms if a.seen == self.count]
        # A hand is said once every hand that reached the pile before it is decided: two
        # hands coming to rest in one frame, or the later one first, keep their order.
        waiting = [a.arrived for a in self.arms if a.arrived is not None and not a.decided]
        self.ready = landing_order(self.ready, None if prev_t is None else t - prev_t)
        while self.ready and all(self.ready[0].arrived <= w for w in waiting):
            s = self.ready.pop(0)
            out.append(CameraSlap(s.seat, s.t, frame, s.angle, s.arrived))
        self.pile_gone = self._pile_left(small, armmask, cx, cy, ch, t)
        return out

    def _geometry(self, W: int, H: int, pile, card_h) -> tuple[float, float, float]:
        """The pile's centre and a card's height (image pixels), steadied: a measured
        pile (one with a card height) moves the centre a little at a time and the height
        is the median of the last looks; a guessed one counts only until one is measured.
        Held while a hand is on the pile: each arm's forearm is watched at a place worked
        out from the centre, and the place moving would read as the arm moving."""
        on_pile = any(a.arrived is not None for a in self.arms)
        if pile is not None and card_h is not None and not (on_pile and self.centre):
            self.sizes.append(float(card_h))
            c = np.float64(pile)
            self.centre = tuple(c if self.centre is None else
                                np.float64(self.centre) + (c - self.centre) * GEOMETRY_STEP)
        if self.centre is not None:
            return (*self.centre, float(np.median(self.sizes)))
        cx, cy = (W / 2, H / 2) if pile is None else pile
        return cx, cy, 0.4 * min(W, H)

    def _pile_left(self, small: np.ndarray, armmask: np.ndarray, cx: float, cy: float,
                   ch: float, t: float) -> float | None:
        """When the pile's place turned to bare table (the pile was taken away), else
        None: the middle of the pile looks like the picture's border (the table) for
        `gone_frames` frames with no arm over it, after it looked like cards."""
        x0, y0, x1, y1 = _place(armmask.shape, cx, cy, ch)
        if x1 <= x0 or y1 <= y0:
            return None
        if armmask[y0:y1, x0:x1].mean() > 0.05:
            return None                   # a hand over it: nothing to say
        if not shows_table(small, self.background, cx, cy, ch, self.cfg.diff):
            self.pile_there, self.empty_frames = True, 0
            return None
        self.empty_frames += 1
        if self.pile_there and self.empty_frames >= self.cfg.gone_frames:
            self.pile_there = False
            return t
        return None

    def _moved(self, a: np.ndarray | None, b: np.ndarray | None) -> bool | None:
        """Whether the forearm's patch changed since the last frame (None: unknown)."""
        if a is None or b is None or a.shape != b.shape:
            return None
        return bool((np.abs(a - b).max(-1) > self.cfg.moved).mean() >= self.cfg.still)

    def _follow(self, arm: _Arm, tip: float, band, t: float, frame: int,
                prev_t: float | None = None) -> None:
        """One frame of one arm: has it come onto the pile, and is it holding still?"""
        cfg = self.cfg
        if arm.new and tip <= cfg.on_pile and prev_t is not None:
            # First seen already on the pile, with no arm there a look before: it came
            # in faster than a frame (seed 1408: a second hand from the side, fully
            # stretched out onto the pile in the frame after it was out of view).
            arm.arrived = (prev_t + t) / 2
            arm.still = arm.since = 0
            arm.stopped = False
        if arm.decided:
            # Gone back, it may slap again: a hand that slapped must withdraw well clear
            # of the pile; one that only dealt a card (and may slap on it at once) just
            # off it. Not by a leap no arm makes: its hand lost for a frame (seed 2087: a
            # dealing hand's tip -0.7, 2.2, -0.6 card heights became a slap).
            if len(arm.tips) >= 2 and (tip - arm.tips[-2][1]) / \
                    max(t - arm.tips[-2][0], 1e-3) > cfg.flicker:
                arm.tips.pop()
                return
            if tip > (cfg.leave if arm.slapped else cfg.on_pile):
                arm.decided, arm.arrived, arm.still = False, None, 0
                arm.drew_back = self.count
            return
        if tip > cfg.on_pile:
            arm.arrived, arm.still = None, 0
            return
        if arm.arrived is None and len(arm.tips) >= 2:
            (t0, d0), (t1, d1) = arm.tips[-2], arm.tips[-1]
            speed = (d0 - d1) / max(t1 - t0, 1e-3)
            if len(arm.tips) >= 3 and self.count - arm.drew_back > 3:
                # Fast over the frame before too: a hand easing in slowly (or poised) can
                # leap onto a card that just landed under its fingers. Not one that has
                # just drawn back off the pile, having dealt: it comes down afresh.
                tp, dp = arm.tips[-3]
                speed = min(speed, (dp - d0) / max(t0 - tp, 1e-3))
                if len(arm.tips) >= 4 and self._crowded(arm):
                    # With another hand on the pile their foregrounds join there, and a
                    # hand easing in beside it leaps onto it (2212: a hover at 3-5 card
                    # heights a second "arrived"): fast over the frame before that too.
                    tq, dq = arm.tips[-4]
                    speed = min(speed, (dq - dp) / max(tp - tq, 1e-3))
            # The arm itself must be moving in: a hand held still short of the pile
            # "reaches" it at once when a card lands under its fingers.
            moving = self._moved(band, arm.band) is not False
            if d0 > cfg.on_pile and speed >= cfg.fast and moving:
                # When the tip crossed onto the pile, between the two frames.
                u = (d0 - cfg.on_pile) / max(d0 - d1, 1e-6)
                arm.arrived = t0 + u * (t1 - t0)
                arm.still = arm.since = 0
                arm.stopped = False
        if arm.arrived is None:
            return
        arm.since += 1
        prev_tip = arm.tips[-2][1] if len(arm.tips) >= 2 else math.inf
        if len(arm.tips) >= 2 and arm.since > 1 and \
                (prev_tip - tip) / max(t - arm.tips[-2][0], 1e-3) >= cfg.flying:
            # Still flying in fast: a long reach crosses the pile's near edge frames before
            # its hand lands beyond the centre (seed 2064). Counted from when it slows.
            arm.since = 1
        # With another hand on the pile too, the arms' foreground joins there and the
        # tip runs on into the other hand: only the forearm can say this one is still.
        crowded = self._crowded(arm)
        if (crowded or prev_tip - tip <= cfg.tip_still) and self._moved(band, arm.band) is False:
            if not arm.stopped:             # at rest since the frame before this one
                arm.rest = arm.tips[-2][0] if len(arm.tips) >= 2 else t
                arm.stopped = True
            arm.still += 1
        else:
            # Moving again (another hand landing over it can shake its forearm's
            # picture): count the stillness again.
            arm.still = 0
        if arm.still >= cfg.still_frames - 1:
            seat, off = nearest_seat(self.seats, arm.angle)
            arm.decided = arm.slapped = True
            if off <= cfg.max_seat_off:
                self.ready.append(CameraSlap(seat, float(arm.rest), frame,
                                             round(float(arm.angle), 1), float(arm.arrived)))
        elif (not arm.stopped and arm.since > (cfg.crowded_within if crowded else
                                               cfg.stop_within) + 1) or arm.since > cfg.give_up:
            # Still moving after it reached the pile: a card pushed in and gliding to rest,
            # a pile dragged away. Not a slap; it must go back before it can slap.
            arm.decided, arm.slapped = True, False

    def _crowded(self, arm: _Arm) -> bool:
        """Whether another arm's hand is on the pile too (as last seen)."""
        return any(a is not arm and a.tips and a.tips[-1][1] <= self.cfg.on_pile
                   for a in self.arms)

    def _forget(self, arms: list[_Arm]) -> None:
        """Arms out of view: where they were is kept a few looks, so one that drops out of
        the foreground for a look (or the table relearnt under it) is no new arm."""
        self.lost.update({a.angle: self.count for a in arms})
        self.lost = {a: k for a, k in self.lost.items() if self.count - k <= LOST_LOOKS}

    def _match(self, angles: list[float]) -> list[_Arm]:
        """The arm each sighting is, the closest pairs first: an arm seen as two runs this
        look (its hand and the card it pushes) stays the arm nearer its last angle (seed
        2090: taken by the other run, it came back as an arm new on the pile)."""
        pairs = sorted((degrees_apart(a.angle, ang), i, k) for i, ang in enumerate(angles)
                       for k, a in enumerate(self.arms) if degrees_apart(a.angle, ang) < ONE_ARM)
        got: list[_Arm | None] = [None] * len(angles)
        taken = set()
        for _, i, k in pairs:
            if got[i] is None and k not in taken:
                got[i] = self.arms[k]
                taken.add(k)
        for i, ang in enumerate(angles):
            if got[i] is None:
                lately = any(degrees_apart(a, ang) < ONE_ARM for a in self.lost)
                got[i] = _Arm(ang, new=not lately)
                self.arms.append(got[i])
            got[i].angle = ang
        return got


def _edge_runs(mask: np.ndarray, min_run: int) -> list[tuple[float, float, int]]:
    """The middle point and length of each run of foreground along the picture's edge,
    going round it clockwise (an arm covering a corner is one run)."""
    xs, ys, runs = _border_runs(mask)
    return [(float(xs[(a + b - 1) // 2]), float(ys[(a + b - 1) // 2]), int(b - a))
            for a, b in runs if b - a >= min_run]


def _border_runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """The picture's edge pixels going round it clockwise, from one off the foreground (so
    no run wraps round), and the runs of foreground along them as (start, end) indices;
    no runs where the whole edge is foreground or none of it is."""
    h, w = mask.shape
    xs = np.r_[np.arange(w), np.full(h - 2, w - 1), np.arange(w - 1, -1, -1), np.zeros(h - 2, int)]
    ys = np.r_[np.zeros(w, int), np.arange(1, h - 1), np.full(w, h - 1), np.arange(h - 2, 0, -1)]
    on = mask[ys, xs]
    if on.all() or not on.any():
        return xs, ys, []
    start = int(np.argmin(on))
    on, xs, ys = np.roll(on, -start), np.roll(xs, -start), np.roll(ys, -start)
    d = np.diff(np.r_[0, on.astype(np.int8), 0])
    return xs, ys, list(zip(np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]))


def _close_edge_gaps(mask: np.ndarray, centre: tuple[float, float], across: float,
                     degrees: float, thin: float) -> None:
    """Gaps along the picture's edge between two thin runs of foreground (at most `thin`
    pixels each) are filled, in place, where their ends lie at most `across` pixels apart
    or the gap spans at most `degrees` as seen from the pile: the two sides of one sleeve
    (crossing a corner, or far from the pile). Never two arms (thick runs: closing the
    edge between them merged neighbouring seats), nor the rest of the edge round one
    short run."""
    xs, ys, runs = _border_runs(mask)
    n = len(xs)
    cx, cy = centre
    for i, (a, b) in enumerate(runs):
        a2, b2 = runs[(i + 1) % len(runs)]          # the next run round the edge
        gap = (a2 - b) % n
        if 2 * gap > n or max(b - a, b2 - a2) > thin:
            continue
        (x0, y0), (x1, y1) = (xs[b - 1], ys[b - 1]), (xs[a2], ys[a2])
        span = degrees_apart(angle_of(x1 - cx, y1 - cy), angle_of(x0 - cx, y0 - cy))
        if math.hypot(x1 - x0, y1 - y0) <= across or span <= degrees:
            k = np.arange(b, b + gap) % n
            mask[ys[k], xs[k]] = True


def _ray(start, end, step: float = 1.0):
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0)
    n = max(2, int(length / step))
    s = np.linspace(0, 1, n)
    return x0 + (x1 - x0) * s, y0 + (y1 - y0) * s, length


def _tip_distance(mask: np.ndarray, entry, centre, card_h: float) -> float:
    """How far from the pile centre (card heights; negative: beyond it) the arm's
    foreground reaches, followed from where it comes in along the line to the pile and
    a card height past it; three parallel lines, the longest reach counts."""
    (ex, ey), (cx, cy) = entry, centre
    dx, dy = cx - ex, cy - ey
    L = math.hypot(dx, dy) or 1.0
    ux, uy = dx / L, dy / L
    end = (cx + ux * card_h, cy + uy * card_h)
    h, w = mask.shape
    best = 0.0
    for off in (-0.1, 0.0, 0.1):
        ox, oy = -uy * off * card_h, ux * off * card_h
        xs, ys, length = _ray((ex + ox, ey + oy), (end[0] + ox, end[1] + oy))
        xi, yi = np.clip(np.round(xs).astype(int), 0, w - 1), np.clip(np.round(ys).astype(int), 0, h - 1)
        on = mask[yi, xi]
        # The contiguous run from the edge, bridging gaps of up to 2 samples.
        gaps = np.nonzero(~on)[0]
        reach = len(on)
        for i in gaps:
            if i + 2 < len(on) and on[i + 1:i + 3].any():
                continue
            reach = i
            break
        best = max(best, reach / (len(on) - 1) * length if len(on) > 1 else 0.0)
    return (L - best) / card_h


def _forearm(mask: np.ndarray, small: np.ndarray, entry, centre, card_h: float):
    """The picture round the arm 0.9 to 1.9 card heights out from the pile (a square
    patch; beyond the fingers of a hand from the facing seat): still when the hand rests
    on the pile, changing along its outline when it pushes a card or drags the pile."""
    (ex, ey), (cx, cy) = entry, centre
    dx, dy = ex - cx, ey - cy
    L = math.hypot(dx, dy) or 1.0
    r = max(3, int(0.3 * card_h))
    d = max(0.9 * card_h + r, min(1.4 * card_h, L - r))   # never nearer the pile than 0.9
    px, py = cx + dx / L * d, cy + dy / L * d
    h, w = mask.shape
    x0, x1 = max(int(round(px)) - r, 0), min(int(round(px)) + r, w)
    y0, y1 = max(int(round(py)) - r, 0), min(int(round(py)) + r, h)
    patch = small[y0:y1, x0:x1]
    return patch if patch.size else None
