"""Per-frame detections -> flip events.

One deck: a card identity not yet in the current pile is a new flip; older
cards whose corners peek out are already in the pile and never flip again.
A flip is confirmed only when the new card is seen in consecutive frames, in
the same place (at rest, not in flight), at good confidence; a card in
motion, a hand over the pile, glare or a one-frame misread never makes one.
A second identity on the same spot as the new top card (a 6 read as a 9 in
some frames) is an alias of it, not another card.

When no pile card has been seen for a while, the pile was picked up: the
tracker resets, but keeps the old pile's identities for a grace period. If
they come back, it was a hand held over the pile, and the pile is restored.

When the referee gives the pile away (a slap, a challenge won), `pile_won`
starts a new pile at once: the next card can land before the old pile is out
of view, and a card of the old pile, once back in a hand, is a flip again. Under
the hands that slapped it (won it, or slapped it wrongly: `hands_on`), the top
card's index half hidden may read as another card: one seen on its corner, not
flying in, is that card, not a flip. So is a card the reader could take for one of a won
pile's cards, near where that card lay, while the pile is swept away.

An unsure card (the slow path) needs looks the detector made: a gated frame repeats the
last look, and a misreading repeated over a still picture is not more sure for it.

A slap lands on the card it answers, often a few frames after that card came to rest:
the hands then hide it before it was seen enough to call. So when hands land on the pile
(`settle`), a new card seen resting there up to that moment is called on what was seen:
two looks at a fair reading, or one sure one. The slap is then judged on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..detector.detections import Detections


# Seconds a candidate out of view is kept for a slap to settle: the camera says a slap
# once its hand has held still on the pile (up to 12 frames after it landed).
COVERED_KEPT = 1.0
# Seconds a card may first be seen after the camera's landing time of a hand (a guess
# between two frames: game 1919's 8d, found 3 ms after the first hand "landed").
LANDED_SLACK = 0.05


@dataclass
class TrackerConfig:
    confirm_frames: int = 2        # consecutive sightings of a new card, at rest
    confirm_conf: float = 0.55     # ...each at least this confident
    slow_frames: int = 4           # or this many looks the detector made (not gated)...
    slow_conf: float = 0.35        # ...at this mean confidence
    still_conf: float = 0.45       # a look at a still picture the gate did not ask for
                                   # counts for the slow path only at this confidence
    unclear_frames: int = 8        # a new card seen this long but never confident: "unclear"
    min_conf: float = 0.2          # below this a detection is ignored
    still: float = 0.025           # max centre movement between sightings, share of frame diagonal
    same_spot: float = 0.01        # both corners this close to the top card's: a misread of it
                                   # (or within `still` of where it was seen a look before)
    slap_hold: float = 1.0         # seconds a wrong slap's hands may lie over the top card
    clear_after: float = 0.6       # seconds with no pile card seen: the pile was picked up
    ghost_grace: float = 3.0       # seconds the old pile can come back (occlusion, not pick-up)
    settle_within: float = 0.2     # a slap settles a new card seen this long before its hands
    settle_conf: float = 0.45      # ...landed, at this mean confidence on two looks or more...
    settle_once: float = 0.7       # ...or on one look at this


@dataclass
class Candidate:
    card: str
    first_frame: int
    first_t: float
    boxes: np.ndarray              # (k, 4): every box of this card in its last sighting
    box: np.ndarray                # ...the best of them
    flew: bool = False             # seen moving before it came to rest
    seen: int = 0
    conf_sum: float = 0.0
    confident: int = 0             # consecutive sightings above confirm_conf
    last_frame: int = -1
    last_t: float = 0.0
    unclear_said: bool = False
    # Sightings on looks the detector made: a gated frame repeats the last look, and an
    # unsure reading repeated over a still picture adds nothing (seed 62: a 4s read at
    # 0.38 on part of a 10c on 3 looks, repeated on the gated frames after, was called).
    fresh: int = 0
    fresh_conf: float = 0.0
    best: float = 0.0              # its surest reading on a look the detector made
    middles: np.ndarray | None = None   # (k, 2): its outlines' middles, where known

    @property
    def centres(self) -> np.ndarray:
        return _centres(self.boxes)


@dataclass
class TrackEvent:
    type: str                      # flip, unclear, pile_cleared, pile_restored
    frame: int
    t: float
    card: str | None = None
    confidence: float = 0.0
    box: list[float] = field(default_factory=list)
    rest_frame: int | None = None  # the first frame the card was seen where it now rests
    rest_t: float | None = None    # ...and that frame's capture time
    won: bool = False              # pile_cleared: of a pile the referee had given away

    def to_json(self) -> dict:
        d = {"type": self.type, "frame": self.frame, "t": round(self.t, 4)}
        if self.card:
            d.update(card=self.card, confidence=round(self.confidence, 3))
        if self.box:
            d["box"] = [round(v, 1) for v in self.box]
        return d


def _confusable(a: str, b: str | None) -> bool:
    """Whether the reader could take one card for the other: the same suit (a 6d read
    5d as it settles) or the same rank. A card of another rank and suit exactly where the
    top card lay was pushed squarely onto it, under a hand that hid its flight."""
    return b is not None and (a[-1] == b[-1] or a[:-1] == b[:-1])


def _centre(box: np.ndarray) -> np.ndarray:
    return np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2], np.float64)


def _centres(boxes: np.ndarray) -> np.ndarray:
    """The centres (k, 2) of boxes (k, 4)."""
    boxes = np.asarray(boxes, np.float64)
    return (boxes[:, :2] + boxes[:, 2:]) / 2


def _iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Intersection over union of every box (x0, y0, x1, y1) in a with every one in b."""
    a, b = a[:, None], b[None]
    w = np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
    h = np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None)
    area = lambda x: (x[..., 2] - x[..., 0]) * (x[..., 3] - x[..., 1])
    inter = w * h
    return inter / np.maximum(area(a) + area(b) - inter, 1e-9)


class FlipTracker:
    def __init__(self, config: TrackerConfig | None = None, frame_diag: float = 1000.0) -> None:
        self.cfg = config or TrackerConfig()
        self.diag = frame_diag
        self.pile: dict[str, np.ndarray] = {}       # card -> last box seen (frame pixels)
        self.top_boxes: np.ndarray | None = None    # the top card's corners' boxes, last seen
        self.top_seen: int | None = None            # ...in this frame number
        self.pile_seen: int | None = None           # the last look that saw a pile card
        # Where the top card under slapping hands lies (its corners' boxes), and until
        # when: its index half hidden reads as another card (an 8d as a 3d, a 5c as a 3s).
        self.slapped_top: tuple[np.ndarray, float] | None = None
        self.order: list[str] = []                  # flips in order
        self.candidates: dict[str, Candidate] = {}
        # Candidates lately out of view (covered by a hand, perhaps), each card's in
        # turn: a slap settles them.
        self.covered: dict[str, list[Candidate]] = {}
        self.last_pile_seen: float | None = None
        self.ghosts: dict[str, np.ndarray] = {}
        self.ghost_until = 0.0
        self.ghost_order: list[str] = []
        self.ghost_seen = 0.0             # when the pile said cleared was last in view
        # The last pile said cleared while the table had not said who took it: put back
        # under what was played since if the table says it was never taken.
        self.cleared: tuple[dict[str, np.ndarray], list[str]] | None = None
        self.aliases: dict[str, str] = {}           # misread identity -> the pile card it is
        # New identities' readings (t, confidence) on looks the detector made, the last
        # COVERED_KEPT seconds: which cards the reader has lately taken a new card for.
        self.readings: dict[str, list[tuple[float, float]]] = {}
        self.leaving: dict[str, tuple[float, np.ndarray]] = {}  # won pile: card -> when, where
        self.leaving_size: dict[str, float] = {}    # ...and how large its corner's box was
        self.leaving_said = False
        self.t = 0.0
        # The frame index of the previous look. Sightings count as consecutive by looks,
        # not by frame numbers: a live camera drops frames when processing falls behind
        # (0, 2, 4, ...), and a card seen on every look must still be called.
        self.prev_frame: int | None = None

    def reset(self) -> None:
        self.pile.clear()
        self.order.clear()
        self.top_boxes = None
        self.slapped_top = None
        self.candidates.clear()
        self.covered.clear()
        self.readings.clear()
        self.ghosts.clear()
        self.cleared = None
        self.aliases.clear()
        self.leaving.clear()
        self.leaving_size.clear()
        self.last_pile_seen = None

    def restore(self, pile: list[str], boxes: dict[str, list[float]], leaving: list[str],
                won: bool, t: float) -> None:
        """Start from a resumed session's pile: its cards in order (with the boxes they
        were last seen in, where known), as if just seen; won: that pile is on its way to
        its winner; leaving: the cards of a pile just won, not flips until they are out
        of view (where they lie is learnt when next seen)."""
        self.reset()
        self.t = t
        nowhere = np.full(4, np.nan)
        for card in pile:
            self.pile[card] = np.asarray(boxes.get(card, nowhere), np.float64)
            self.order.append(card)
        if pile:
            self.last_pile_seen = t
        for card in leaving:
            if card not in self.pile:
                self._leave(card, boxes.get(card, nowhere), t)
        if won:
            self.pile_won(t)

    def unseen(self, seconds: float) -> None:
        """The camera gave no picture for this long (companion.live.capture.CameraHealth):
        that time does not count as the pile out of view. A card that landed meanwhile
        may hide the one below it, and the pile must not be taken for picked up."""
        if self.last_pile_seen is not None:
            self.last_pile_seen += seconds
        self.ghost_until += seconds
        self.leaving = {n: (w + seconds, c) for n, (w, c) in self.leaving.items()}

    def pile_won(self, t: float | None = None) -> None:
        """The referee gave the pile away: its cards are on their way to the winner's
        hand. While they are in view they are not flips; the pile starts again empty.
        (Waiting for them to vanish for `clear_after` missed a card that landed 0.23 s
        after a pick-up, and every later flip of an old pile card.)"""
        t = self.t if t is None else t
        if self.pile:
            self.leaving_said = False
        self.hands_on(math.inf)
        for n, b in self.pile.items():
            self._leave(n, b, t)
        # A pile already out of view (its cards kept as ghosts) was said cleared: its
        # cards left when it was last seen, not now. Left now, for clear_after a card
        # landing where one of them lay was taken for it being swept away (game 4: the
        # question "who won?" answered just as a Jc landed there, which was never called).
        for n, b in self.ghosts.items():
            self._leave(n, b, self.ghost_seen)
        self.ghosts.clear()
        self.cleared = None
        self.pile.clear()
        self.order.clear()
        self.top_boxes = None
        self.last_pile_seen = None

    def not_taken(self, t: float | None = None) -> None:
        """The table says the pile last said cleared was never taken (a hand held over
        it, and the next card landed on it before it showed again): its cards are the
        pile again, under any played since."""
        if self.cleared is None:
            return
        pile, order = self.cleared
        since = [c for c in self.order if c not in pile]
        self.cleared = None
        self.ghosts = {}
        self.order = order + since
        self.pile = {**pile, **self.pile}
        if not since:
            self.top_boxes = None       # the old top card: where it lies is learnt when seen
        self.last_pile_seen = self.t if t is None else t

    def still_there(self, t: float) -> None:
        """The pile is in view though none of its cards is read (a card the reader
        cannot name lies on it): not picked up."""
        if self.pile:
            self.last_pile_seen = t

    def played(self, card: str, t: float | None = None) -> None:
        """The table says `card` was played and not called (the reader could not name
        it): it is the top card now, where it lies learnt when it is next seen; read
        later, it is that card, not a flip."""
        self.candidates.pop(card, None)
        self.covered.pop(card, None)
        self.pile[card] = np.full(4, np.nan)
        if card in self.order:
            self.order.remove(card)
        self.order.append(card)
        self.top_boxes = None
        self.last_pile_seen = self.t if t is None else t

    def _leave(self, card: str, box, t: float) -> None:
        """card is of a won pile, on its way out: last seen at t in box (NaN: unknown)."""
        box = np.asarray(box, np.float64)
        self.leaving[card] = (t, _centre(box))
        self.leaving_size[card] = float(max(box[2] - box[0], box[3] - box[1])) \
            if np.isfinite(box).all() else 0.0

    def hands_on(self, until: float) -> None:
        """Slapping hands lie on the top card (until `until`; a pile won: until the next
        card): its index half hidden may read as another card. With no pile (a late hand
        landing on one just won) the won pile's top card stays as it was: no-pad games
        817 and 820 called a 5h and an 8d under the winner's hands as 3h and 3d once the
        camera's later hands had ended that."""
        if self.top and self.top_boxes is not None:
            self.slapped_top = (self.top_boxes, until)

    def _on_slapped_top(self, boxes: np.ndarray) -> bool:
        """Whether a card seen is the slapped top card misread: any card on one of its
        corners (boxes overlapping by half). One corner is enough here, unlike elsewhere
        on the pile: the hands hide the other, and a card played meanwhile is seen flying
        in. Any card, not only one the reader could take it for (_confusable): under the
        winner's hands a 5c's half-hidden index read 3s at 0.59-0.62 (valid-face game 212)."""
        if self.slapped_top is None or self.t > self.slapped_top[1]:
            return False
        return _iou(boxes, self.slapped_top[0]).max() >= 0.5

    def _swept_card(self, card: str, centres: np.ndarray) -> bool:
        """Whether a card seen is a card of the won pile misread as it is swept away (the
        hands turn its cards, half hide their indices: seed 60's 3c read 3d): one the
        reader could take it for (_confusable), while that pile is still in view, within
        one corner's size of where that card was last seen. A card played meanwhile is
        seen flying in, and is judged apart."""
        if self.leaving_said:
            return False
        for n, (when, where) in self.leaving.items():
            if self.t - when < self.cfg.clear_after and _confusable(card, n) and \
                    np.linalg.norm(centres - where, axis=1).min() <= self.leaving_size.get(n, 0.0):
                return True
        return False

    @property
    def top_spots(self) -> np.ndarray | None:
        """The centres of the top card's corners, last seen."""
        return None if self.top_boxes is None else _centres(self.top_boxes)

    def _on_top_spot(self, centres: np.ndarray) -> bool:
        # Both ends must match: one corner can land near an old one by chance. Exactly
        # where the top card lies, or, if it was seen on the look before, as near as a
        # card at rest moves in a look (seed 902: a 6s still settling, read 5s once at
        # rest 13 px on).
        spots = self.top_spots
        if spots is None or len(spots) < 2 or len(centres) < 2:
            return False
        if self.top_seen == self.prev_frame:
            near = self.cfg.still
        elif self.pile_seen == self.prev_frame:
            near = self.cfg.same_spot
        else:
            # The look before saw none of the pile: something passed over it, and may
            # have put a card there (seed 1811 at 50 ms a look: a 4h landed squarely on
            # the 10h, its flight between two looks).
            return False
        d = np.linalg.norm(centres[:, None] - spots[None], axis=2).min(1)
        return bool((d <= near * self.diag).all())

    @property
    def top(self) -> str | None:
        return self.order[-1] if self.order else None

    def update(self, frame: int, t: float, det: Detections,
               fresh: bool = True, still: bool = False) -> list[TrackEvent]:
        """One look: det, what the detector saw (fresh False: a gated frame repeating the
        last look's detections, the picture unchanged; still: a look made though the
        picture did not change, at a card not yet called)."""
        cfg = self.cfg
        self.t = t
        events: list[TrackEvent] = []
        keep = det.confidence >= cfg.min_conf
        names = [n for n, k in zip(det.names, keep) if k]
        boxes = det.xyxy[keep]
        confs = det.confidence[keep]
        outlines = None if det.outline is None else det.outline[keep]
        # The best sighting of each identity this frame (a card may show two corners),
        # and where all its corners are: which corner reads best can change from frame
        # to frame, and that is not the card moving. Where the detector knows the card's
        # outline, where its middle is too (one end named it a look ago, the other now).
        best: dict[str, tuple[float, np.ndarray]] = {}
        corners: dict[str, list[np.ndarray]] = {}
        middles: dict[str, list[np.ndarray]] = {}
        for i, (n, b, c) in enumerate(zip(names, boxes, confs)):
            if n not in best or c > best[n][0]:
                best[n] = (float(c), b)
            corners.setdefault(n, []).append(b)
            if outlines is not None:
                middles.setdefault(n, []).append(outlines[i].mean(0))
        # Old pile back within the grace period: it was covered, not picked up.
        if self.ghosts and t <= self.ghost_until:
            back = [n for n in best if n in self.ghosts]
            if back:
                self.pile.update(self.ghosts)
                self.order = self.ghost_order + [c for c in self.order if c not in self.ghosts]
                self.top_boxes = None     # where the top card is: known when next seen
                self.ghosts = {}
                self.cleared = None
                self.last_pile_seen = t
                events.append(TrackEvent("pile_restored", frame, t, card=back[0]))
        elif self.ghosts:
            self.ghosts = {}
        seen_pile = False
        for n, (c, b) in best.items():
            if n in self.pile:
                self.pile[n] = b
                seen_pile = True
                self.pile_seen = frame
                if n == self.top:
                    self.top_boxes, self.top_seen = np.stack(corners[n]), frame
        if seen_pile:
            self.last_pile_seen = t
        elif self.pile and self.last_pile_seen is not None and \
                t - self.last_pile_seen >= cfg.clear_after:
            self.ghosts = dict(self.pile)
            self.ghost_order = list(self.order)
            self.ghost_until = t + cfg.ghost_grace
            self.ghost_seen = self.last_pile_seen
            self.cleared = (dict(self.pile), list(self.order))
            self.pile.clear()
            self.order.clear()
            self.top_boxes = None
            self.candidates.clear()
            self.covered.clear()
            self.aliases.clear()
            self.last_pile_seen = None
            events.append(TrackEvent("pile_cleared", frame, t))
        # A won pile on its way out: gone from view for clear_after, it was picked up
        # (said once). A card of it seen again where it was last seen is still the old
        # pile (a hand had covered it); seen elsewhere after that, it was played again.
        for n, (c, b) in best.items():
            if n in self.leaving:
                when, where = self.leaving[n]
                here = _centre(b)
                if t - when < cfg.clear_after or \
                        np.linalg.norm(here - where) <= cfg.still * self.diag:
                    self.leaving[n] = (t, here)
                else:
                    del self.leaving[n]
        if self.leaving:
            gone = t - max(w for w, _ in self.leaving.values())
            if gone >= cfg.clear_after and not self.leaving_said:
                self.leaving_said = True
                self.slapped_top = None
                events.append(TrackEvent("pile_cleared", frame, t, won=True))
            if gone > cfg.clear_after + cfg.ghost_grace:
                self.leaving.clear()
        # New identities: candidates until confirmed.
        for n, (c, b) in best.items():
            if n in self.pile or n in self.ghosts or n in self.leaving:
                continue
            if self.aliases.get(n) in best:
                continue        # a misread of a pile card that is in view right now
            cand = self.candidates.get(n)
            seen_at = np.stack(corners[n])
            if (self._on_slapped_top(seen_at) or self._swept_card(n, _centres(seen_at))) \
                    and not (cand and cand.flew):
                # The top card, half hidden by the hands that slapped it, or a card of
                # a won pile being swept away, read as another card. (One seen flying
                # in that landed there was played.)
                self.candidates.pop(n, None)
                continue
            centres = _centres(seen_at)
            if n not in self.candidates and self._on_top_spot(centres) and \
                    _confusable(n, self.top):
                # First seen with both corners where the top card's are: the top card
                # read another way (a 6d read 5d as it settles), and seen there. A new
                # card is seen flying in first, even one that lands squarely on the last.
                self.aliases[n] = self.top
                self.top_boxes, self.top_seen = seen_at, frame
                self.pile_seen = frame
                self.last_pile_seen = t
                continue
            # Moved: no corner seen now is where one of its corners was last frame, nor
            # is the card's middle where it was (game 1834: a resting 5c named by one end
            # on one look and by the other on the next, read 0.88, 0.41, 0.88, 0.48, was
            # counted afresh on each look and never called between frames dropped).
            # Where both looks know the card's middle, the middle says (no-pad game 805: an
            # 8h flying in, its middle 84 px on between two looks, had a corner land where
            # its other corner had been, and was called 4 frames before it rested).
            middle = np.stack(middles[n]) if n in middles else None
            near = cfg.still * self.diag
            if cand is None:
                moved = False
            elif middle is not None and cand.middles is not None:
                moved = np.linalg.norm(middle[:, None] - cand.middles[None], axis=2).min() > near
            else:
                moved = np.linalg.norm(centres[:, None] - cand.centres[None], axis=2).min() > near
            if cand is None or cand.last_frame != self.prev_frame or moved:
                # Not seen on the previous look, or it moved: start counting again.
                cand = Candidate(n, frame, t, seen_at, b,
                                 flew=moved or (cand is not None and cand.flew))
                self.candidates[n] = cand
            cand.seen += 1
            # Another look at a still picture mostly repeats the last one's reading: it
            # adds to an unsure card's count only where it reads the card fairly (valid-face
            # game 216: a 10c read Qc at 0.40 on one end, look after look).
            counts = fresh and (not still or c >= cfg.still_conf)
            cand.fresh += counts
            cand.fresh_conf += c * counts
            cand.best = max(cand.best, c * fresh)
            if fresh:
                self.readings.setdefault(n, []).append((t, c))
            cand.conf_sum += c
            cand.confident = cand.confident + 1 if c >= cfg.confirm_conf else 0
            cand.last_frame = frame
            cand.last_t = t
            cand.boxes, cand.box, cand.middles = seen_at, b, middle
        # Forget candidates that vanished (a slap landing soon after may settle them).
        for n in [n for n, k in self.candidates.items() if k.last_frame != frame]:
            self.covered.setdefault(n, []).append(self.candidates.pop(n))
        self.covered = {n: kept for n, ks in self.covered.items()
                        if (kept := [k for k in ks if t - k.last_t <= COVERED_KEPT])}
        self.readings = {n: kept for n, r in self.readings.items()
                         if (kept := [x for x in r if t - x[0] <= COVERED_KEPT])}
        ready = [k for k in self.candidates.values()
                 if k.confident >= cfg.confirm_frames or
                 (k.fresh >= cfg.slow_frames and k.fresh_conf / k.fresh >= cfg.slow_conf
                  and not self._rivalled(k))]
        if ready:
            # One card lands at a time: the strongest wins (_confirm makes the others
            # its aliases).
            events.append(self._confirm(max(ready, key=lambda k: (k.conf_sum / k.seen, k.seen)),
                                        frame, t))
        else:
            for k in self.candidates.values():
                if k.seen >= cfg.unclear_frames and not k.unclear_said:
                    k.unclear_said = True
                    events.append(TrackEvent("unclear", frame, t, card=k.card,
                                             confidence=k.conf_sum / k.seen,
                                             box=[float(v) for v in k.box]))
        self.prev_frame = frame
        return events

    def _rivalled(self, k: Candidate) -> bool:
        """Whether another new card was read lately, on two looks or more, at least once
        as surely as k ever was: one card lands at a time, so the reader is torn between
        two readings of it, and looks that are each unsure do not settle which
        (valid-face game 208: a Qd read Qd 0.31-0.68 as it landed, then Kd 0.43-0.5 on
        four looks at rest). A rival read once at confirm_conf is one too: looked at on
        every frame of its rest, that Kd was read 0.69 once, a shade over Qd's best."""
        bar = min(k.best, self.cfg.confirm_conf)
        return any(len(r) >= 2 and max(c for _, c in r) >= bar
                   for n, r in self.readings.items() if n != k.card)

    def _confirm(self, win: Candidate, frame: int, t: float) -> TrackEvent:
        """win is the new top card: a flip."""
        self.pile[win.card] = win.box
        self.order.append(win.card)
        self.top_boxes, self.top_seen = win.boxes, frame
        self.pile_seen = frame
        self.slapped_top = None
        self.last_pile_seen = t
        # One card lands at a time: the other identities seen lately, in view or just
        # covered (kept for `settle`), are taken for misreads of it.
        for n in [*self.candidates, *self.covered]:
            if n != win.card:
                self.aliases[n] = win.card
        self.candidates.clear()
        self.covered.clear()
        self.readings.clear()
        # A card landed where a won pile lay: what of that pile was already out of
        # view was picked up, so seen there again it was played again (two players:
        # a won Js replayed 3 s later onto the same spot was taken for the old pile).
        self.leaving = {n: v for n, v in self.leaving.items()
                        if t - v[0] < self.cfg.clear_after}
        return TrackEvent("flip", frame, t, card=win.card, confidence=win.conf_sum / win.seen,
                          box=[float(v) for v in win.box], rest_frame=win.first_frame,
                          rest_t=win.first_t)

    def settle(self, landed: float) -> list[TrackEvent]:
        """Hands landed on the pile at `landed` (a slap): a new card seen resting there
        when they came is called now on what was seen of it, since they hide it from now
        on (drawn game 1860: a Qd read 0.45-0.46 on three of the five looks before a pair
        was slapped on it; no-pad game 1919: an 8d found once, read 0.95, a frame before
        the hands). Its looks since it was first seen, gaps and all: two at
        `settle_conf` on average, or one at `settle_once`; the first before the hands
        landed, the last at most `settle_within` before."""
        cfg = self.cfg
        ready = []
        for n in {*self.candidates, *self.covered}:
            ks = self.covered.get(n, []) + ([self.candidates[n]] if n in self.candidates else [])
            seen = sum(k.seen for k in ks)
            mean = sum(k.conf_sum for k in ks) / seen
            if min(k.first_t for k in ks) <= landed + LANDED_SLACK and \
                    max(k.last_t for k in ks) >= landed - cfg.settle_within and \
                    mean >= (cfg.settle_conf if seen >= 2 else cfg.settle_once):
                ready.append((mean, seen, ks[-1]))
        if not ready:
            return []
        frame = self.prev_frame if self.prev_frame is not None else 0
        return [self._confirm(max(ready, key=lambda r: r[:2])[2], frame, self.t)]
