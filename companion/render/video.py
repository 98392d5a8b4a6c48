"""`companion render-game`: a whole game as the table camera would film it.

The game is the referee's own self-play (so the ground truth is a legal
game); this module only films it. Cards slide in from the player's seat and
come to rest on the pile, hands slap it (some late, some wrong), won piles
are swept towards the winner. Every arm comes from its player's seat (`--seats`,
companion.live.seats) and casts a shadow, blurred when it moves fast; besides the
slaps, hands push each card in (a deal), pick a won pile up, and hover over the
table without slapping (`table_hands`), so a camera slap watcher is tested on
hands that must not count. The ground truth file is JSON Lines that the
referee itself accepts: a `start` event (which also lists the hands that are no
slap, under "decoys"), then every flip (with the first frame where the card
rests), every slap (with its frames) and every pile collection, each with its
video time `t`.

Speed: the table and the resting pile are kept as a static layer that only
changes when a card lands or the pile goes; each frame copies it and draws
what moves (a card in flight, hands, a swept pile) into its bounding box.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import cv2
import numpy as np

from ..engine import Game, Rules, parse_card
from ..engine.cards import CLASS_NAMES, card_name
from ..live.seats import default_seats, direction
from ..sim import play_hand
from .effects import uneven_light
from .faces import Deck, DeckStyle, Face
from .hands import hand_layer
from .scene import camera_homography, card_transform, warp_onto
from .textures import table_texture

FLIP_IN = 0.22        # seconds a card is in flight before it rests
HAND_IN, HAND_STAY, HAND_OUT = 0.12, 0.35, 0.15
SWEEP = 0.3           # seconds for a won pile to leave
END_REST = 0.3        # a film cut to length ends at least this long after the last flip rests
                      # or the last slap lands (a slap in its last frames cannot be judged:
                      # no-pad seeds 1905 and 1911 ended 1-3 frames after a hand landed)


def _cls_of(name: str) -> int:
    return CLASS_NAMES.index(card_name(parse_card(name)))


@dataclass
class Card:
    face: Face
    name: str
    seat: int
    centre: tuple[float, float]
    angle: float
    t_rest: float
    t_sweep: float = math.inf          # when the pile it is in starts to leave
    sweep_to: tuple[float, float] = (0.0, 0.0)


@dataclass
class Slap:
    seat: int
    t_land: float
    legal: bool


@dataclass
class Arm:
    """A hand over the table that is not a slap: its distance from the pile centre (in
    card heights) at key times, linear between them, and how high it is (a hand in the
    air is nearer the camera: larger, its shadow further off)."""
    kind: str                          # deal, pickup, hover
    seat: int
    keys: list[tuple[float, float]]    # (t, distance)
    lift: float = 0.0                  # 0 on the table, up to ~0.3 in the air

    @property
    def span(self) -> tuple[float, float]:
        return self.keys[0][0], self.keys[-1][0]

    def at(self, t: float) -> tuple[float, float] | None:
        """(distance, speed in card heights a second) at t, or None when not in view."""
        ks = self.keys
        if not ks[0][0] <= t < ks[-1][0]:
            return None
        for (t0, d0), (t1, d1) in zip(ks, ks[1:]):
            if t0 <= t < t1:
                u = (t - t0) / (t1 - t0)
                return d0 + (d1 - d0) * u, (d1 - d0) / (t1 - t0)
        return ks[-1][1], 0.0


@dataclass
class Timeline:
    cards: list[Card] = field(default_factory=list)
    slaps: list[Slap] = field(default_factory=list)
    arms: list[Arm] = field(default_factory=list)
    truth: list[dict] = field(default_factory=list)
    log: list[dict] = field(default_factory=list, repr=False)   # the referee's calls
    duration: float = 0.0


class GameFilm:
    def __init__(self, rules: Rules, players: list[str], seed: int, size=(1280, 720), fps: int = 30,
                 seconds: float | None = None, deck=None, seats: list[float] | None = None,
                 table_hands: bool = True, hands: int = 1) -> None:
        """deck: anything with face(cls) and style.seed (default: the seed's drawn deck;
        a `photodeck.PhotoDeck` films real card faces). seats: each player's direction
        from the pile (degrees clockwise from the bottom, companion.live.seats; default
        spread evenly). table_hands: also film the hands that are no slap (deals,
        pick-ups, hovers). hands: film that many hands of the match (the next dealt by
        the next seat after a pause; a match over, the next match's), to `seconds`."""
        self.rules, self.players, self.seed = rules, players, seed
        self.W, self.H = size
        self.fps = fps
        rng = np.random.default_rng([seed, 77])
        self.rng = rng
        self.deck = deck or Deck(DeckStyle.random(seed * 7919 + 11), width=260)
        self.card_h = self.H * rng.uniform(0.34, 0.48)
        self.centre = (self.W / 2 + rng.uniform(-0.06, 0.06) * self.W,
                       self.H / 2 + rng.uniform(-0.06, 0.06) * self.H)
        self.H_cam = camera_homography(self.W, self.H, rng, tilt=rng.uniform(0, 0.06))
        n = len(players)
        self.seats = list(seats) if seats is not None else default_seats(n)
        if len(self.seats) != n:
            raise ValueError(f"{len(self.seats)} seats for {n} players")
        # Seat k's direction from the pile as an image angle (radians, y down).
        self.seat_angle = [math.atan2(*direction(a)[::-1]) for a in self.seats]
        self.background = self._background()
        self.hand_sprites = [self._hand_sprite(k) for k in range(n)]
        # What the film adds for a camera slap watcher draws from its own generator, so
        # the rest of a seed's film is what it was before hands had shadows and decoys.
        arng = np.random.default_rng([seed, 91])
        self.arm_rng = arng
        self.shadow = (arng.uniform(-1, 1), arng.uniform(0.3, 1))   # light from above-ish
        self.hand_extras = [self._hand_extras(sp) for sp in self.hand_sprites]
        self.table_hands = table_hands
        self.timeline = self._build(seconds, hands)
        if table_hands:
            self._add_hovers(self.timeline)
        self.timeline.truth[0]["decoys"] = [
            {"kind": a.kind, "seat": a.seat, "frames": [self.frame_of(a.span[0]),
                                                         self.frame_of(a.span[1])]}
            for a in self.timeline.arms]
        # Light and sensor: fixed per film, applied per frame cheaply.
        # The light as a uint8 gain map (128 = 1.0) so each frame is one cv2.multiply.
        self.light = uneven_light(np.full((self.H, self.W, 3), 128, np.uint8), rng, 0.3)
        sigma = rng.uniform(1, 3)
        self.noise = []
        for _ in range(4):   # sensor noise as +/- parts, added with saturating uint8 ops
            n = rng.normal(0, sigma, (self.H, self.W, 1)).repeat(3, 2)
            self.noise.append((np.clip(n, 0, 255).astype(np.uint8),
                               np.clip(-n, 0, 255).astype(np.uint8)))

    # ------------------------------------------------------------ set dressing
    def _background(self) -> np.ndarray:
        return table_texture(self.H, self.W, self.rng)

    def _hand_sprite(self, seat: int) -> Face:
        scale = self.card_h * 0.75
        h, w = int(scale * 2.6), int(max(self.W, self.H) * 1.3)
        img, mask = hand_layer(h, w, self.rng, (scale * 1.1, h / 2), scale, from_angle=0.0)
        return Face(img, (mask * 255).astype(np.uint8), [], None)

    def _hand_extras(self, sprite: Face) -> tuple[Face, Face]:
        """A hand's shadow (its outline, soft and dark) and its motion-blurred copy (the
        arm moves along its own length, the sprite's x axis)."""
        a = sprite.alpha.astype(np.float32) / 255
        strength = self.arm_rng.uniform(0.3, 0.5)
        soft = cv2.GaussianBlur(a, (0, 0), max(2.0, self.card_h * 0.03)) * strength
        shadow = Face(np.zeros_like(sprite.image), (soft * 255).astype(np.uint8), [], None)
        k = max(3, int(self.card_h * 0.25) | 1)
        kernel = np.full((1, k), 1.0 / k, np.float32)
        blurred = Face(cv2.filter2D(sprite.image, -1, kernel),
                       cv2.filter2D(sprite.alpha, -1, kernel), [], None)
        return shadow, blurred

    def _out_dir(self, seat: int) -> tuple[float, float]:
        a = self.seat_angle[seat]
        return math.cos(a), math.sin(a)

    # ------------------------------------------------------------ the game
    def _build(self, seconds: float | None, hands: int = 1) -> Timeline:
        stats = play_hand(self.rules, self.players, self.seed, hands=hands)
        game = Game(self.rules)
        tl = Timeline()
        rng = self.rng
        prev_orig = 0.0
        now = 0.5                 # video time of the previous event
        busy_until = 0.0          # hands or a sweep over the pile until then
        pile: list[Card] = []
        last_rest = 0.0
        # When each seat's slapping hand is off the pile and back at the picture's edge: a
        # player slaps again only after that (the bots may slap twice in 0.2 s, and the film
        # drew the second hand onto the first, from the same seat: no hand can).
        hand_free: dict[int, float] = {}
        for event in stats.events:
            anns = game.apply(event)
            orig = event.get("t", prev_orig)
            gap = max(0.0, orig - prev_orig)
            prev_orig = orig
            kind = event["type"]
            if seconds is not None and now > seconds:
                break
            if kind == "start" and tl.truth:
                # The next hand: what is left of the last pile goes to that hand's winner,
                # then a pause while the deck is gathered and dealt again.
                if pile:
                    now = max(now, busy_until)
                    winner = next((a["winner"] for a in reversed(tl.log) if
                                   a["type"] == "hand_over"), pile[-1].seat)
                    self._sweep(pile, winner, now, tl)
                    busy_until = now + SWEEP
                    pile = []
                now = max(now + gap, busy_until)
                tl.truth.append({"type": "start", "hand": game.hand_number,
                                 "match": game.match_number, "dealer": event.get("dealer"),
                                 "stacks": list(event["stacks"]), "frame": self.frame_of(now),
                                 "t": round(now, 4)})
                continue
            if kind == "start":
                start = dict(event)
                start.update(seed=self.seed, rules=self.rules.preset, fps=self.fps,
                             size=[self.W, self.H], deck_style=self.deck.style.seed)
                tl.truth.append(start)
                continue
            tl.log.extend(anns)
            awards = [a for a in anns if a["type"] == "award"]
            if kind == "flip" and awards:      # the winner picked the pile up, then played
                now = max(now, busy_until)
                self._sweep(pile, awards[0]["seat"], now, tl)
                busy_until = now + SWEEP
                pile = []
            if kind == "flip":
                flip = next(a for a in anns if a["type"] == "flip")
                t_rest = max(now + gap, busy_until + FLIP_IN + 0.1, last_rest + 0.3)
                if seconds is not None and t_rest > seconds - END_REST:
                    break         # it would land after the film ends: not in the film
                a = self.seat_angle[flip["seat"]]
                card = Card(self.deck.face(_cls_of(flip["card"])), flip["card"], flip["seat"],
                            (self.centre[0] + rng.normal(0, 0.05) * self.card_h,
                             self.centre[1] + rng.normal(0, 0.05) * self.card_h),
                            math.degrees(a) - 90 + rng.normal(0, 14), t_rest)
                pile.append(card)
                tl.cards.append(card)
                last_rest = now = t_rest
                tl.truth.append({"type": "flip", "card": flip["card"], "seat": flip["seat"],
                                 "frame": self.frame_of(t_rest), "t": round(t_rest, 4)})
                if self.table_hands:
                    tl.arms.append(self._deal_arm(flip["seat"], t_rest))
            elif kind == "slap":
                seats = event["seats"]
                t_land = max(now + min(gap, 0.6), last_rest + 0.12,
                             *(hand_free.get(s, 0.0) + HAND_IN for s in seats))
                if seconds is not None and t_land > seconds - END_REST:
                    break
                legal = bool(awards)
                for k, seat in enumerate(seats):
                    tl.slaps.append(Slap(seat, t_land + 0.05 * k, legal))
                    hand_free[seat] = t_land + 0.05 * k + HAND_STAY + HAND_OUT
                end = t_land + 0.05 * len(seats) + HAND_STAY + HAND_OUT
                tl.truth.append({"type": "slap", "seats": seats, "frame": self.frame_of(t_land),
                                 "t": round(t_land, 4), "legal": legal,
                                 "hands_frames": [self.frame_of(t_land - HAND_IN),
                                                  self.frame_of(end)]})
                now = t_land
                busy_until = end
                if awards:
                    self._sweep(pile, awards[0]["seat"], t_land + HAND_STAY, tl, hand=False)
                    busy_until = t_land + HAND_STAY + SWEEP
                    pile = []
            elif kind == "collect":
                now = max(now + gap, busy_until)
                if seconds is not None and now > seconds:
                    break
                if awards:
                    self._sweep(pile, awards[0]["seat"], now, tl)
                    busy_until = now + SWEEP
                    pile = []
        tl.duration = max(now, busy_until) + 0.6
        if seconds is not None:
            tl.duration = min(tl.duration, seconds)
        return tl

    def _deal_arm(self, seat: int, t_rest: float) -> Arm:
        """The hand that pushes a card in: its fingers on the card's far edge as it
        flies (the card's distance is 1.6 u^2 card heights), let go as it rests."""
        keys = [(t_rest - FLIP_IN * u, 1.6 * u * u + 1.0) for u in (1.0, 0.75, 0.5, 0.25, 0.0)]
        return Arm("deal", seat, keys + [(t_rest + 0.15, 3.0)], lift=0.05)

    def _pickup_arm(self, seat: int, t: float) -> Arm:
        """The winner's hand comes onto the pile and drags it away with the cards."""
        far = max(self.W, self.H) / self.card_h
        keys = [(t - 0.18, 2.4), (t, 0.0)] + [(t + SWEEP * k / 4, far * (k / 4) ** 2)
                                              for k in range(1, 5)]
        return Arm("pickup", seat, keys, lift=0.02)

    def _add_hovers(self, tl: Timeline) -> None:
        """Hands that come over the table and go without slapping: poised short of the
        pile while play goes on (about one every 4 s), and over the pile in the air in
        the pauses between cards (no longer than the tracker takes a covered pile to be
        gone). None while a hand slaps or a pile is swept."""
        rng = self.arm_rng
        hands = [(s.t_land - HAND_IN - 0.3, s.t_land + HAND_STAY + HAND_OUT + 0.3)
                 for s in tl.slaps]
        hands += [(a.span[0] - 0.3, a.span[1] + 0.3) for a in tl.arms if a.kind == "pickup"]
        hands += [(c.t_sweep - 0.3, c.t_sweep + SWEEP + 0.3) for c in tl.cards
                  if c.t_sweep < math.inf]
        pile = hands + [(c.t_rest - FLIP_IN - 0.1, c.t_rest + 0.4) for c in tl.cards]

        def free(t0: float, t1: float, busy) -> bool:
            return t1 < tl.duration and all(t1 <= b0 or t0 >= b1 for b0, b1 in busy)

        def hover(t: float, stop: float, come: float, stay: float, lift: float) -> Arm:
            # Slowly in, easing to a stop; slowly out.
            keys = [(t, 2.6), (t + 0.6 * come, stop + 0.5), (t + 0.85 * come, stop + 0.12),
                    (t + come, stop), (t + come + stay, stop), (t + 2 * come + stay, 2.6)]
            return Arm("hover", int(rng.integers(len(self.players))), keys, lift)

        t = 1.0
        while t < tl.duration:
            t += rng.exponential(4.0)
            come, stay = rng.uniform(0.35, 0.6), rng.uniform(0.2, 0.8)
            if free(t, t + 2 * come + stay, hands):
                tl.arms.append(hover(t, rng.uniform(1.3, 1.9), come, stay, 0.15))
        for t0, t1 in zip(sorted(p[1] for p in pile), sorted(p[0] for p in pile)[1:]):
            come, stay = rng.uniform(0.3, 0.4), rng.uniform(0.1, 0.3)
            if t1 - t0 >= 2 * come + stay + 0.1 and rng.random() < 0.5 and \
                    free(t0, t0 + 2 * come + stay, pile):
                tl.arms.append(hover(t0 + 0.05, 0.0, come, stay, 0.3))

    def _sweep(self, pile: list[Card], seat: int, t: float, tl: Timeline,
               hand: bool = True) -> None:
        if hand and self.table_hands:
            tl.arms.append(self._pickup_arm(seat, t))
        dx, dy = self._out_dir(seat)
        far = max(self.W, self.H)
        for c in pile:
            c.t_sweep = t
            c.sweep_to = (c.centre[0] + dx * far, c.centre[1] + dy * far)
        tl.truth.append({"type": "collect", "seat": seat, "frame": self.frame_of(t),
                         "gone_frame": self.frame_of(t + SWEEP), "t": round(t, 4),
                         "cards": len(pile)})

    def frame_of(self, t: float) -> int:
        return int(math.ceil(t * self.fps - 1e-9))

    # ------------------------------------------------------------ drawing
    def _card_H(self, c: Card, t: float) -> np.ndarray | None:
        if t < c.t_rest - FLIP_IN or t >= c.t_sweep + SWEEP:
            return None
        cx, cy = c.centre
        ang = c.angle
        if t < c.t_rest:                                  # in flight from the seat
            u = (c.t_rest - t) / FLIP_IN                  # 1 -> 0
            dx, dy = self._out_dir(c.seat)
            dist = self.card_h * 1.6 * u * u
            cx, cy = cx + dx * dist, cy + dy * dist
            ang += 35 * u
        elif t >= c.t_sweep:
            u = (t - c.t_sweep) / SWEEP
            cx += (c.sweep_to[0] - c.centre[0]) * u * u
            cy += (c.sweep_to[1] - c.centre[1]) * u * u
        return self.H_cam @ card_transform(c.face, (cx, cy), self.card_h, ang)

    def _slap_motion(self, s: Slap, t: float) -> tuple[float, float] | None:
        """A slapping hand's (distance from the pile in card heights, speed): straight in,
        a dead stop on the pile, out."""
        t0, t1 = s.t_land - HAND_IN, s.t_land + HAND_STAY + HAND_OUT
        if not t0 <= t < t1:
            return None
        if t < s.t_land:
            return 2.2 * (s.t_land - t) / HAND_IN, -2.2 / HAND_IN
        if t > s.t_land + HAND_STAY:
            return 2.2 * (t - s.t_land - HAND_STAY) / HAND_OUT, 2.2 / HAND_OUT
        return 0.0, 0.0

    def _hand_H(self, seat: int, sprite: Face, dist: float, lift: float = 0.0,
                offset: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
        """A hand of seat's with its palm `dist` card heights from the pile towards the
        seat; `lift` scales it about the palm (a hand in the air is nearer the camera)."""
        dx, dy = self._out_dir(seat)
        reach = self.card_h * dist
        px = self.centre[0] + dx * reach + offset[0]
        py = self.centre[1] + dy * reach + offset[1]
        a = self.seat_angle[seat]
        k = 1.0 + lift
        c, si = math.cos(a) * k, math.sin(a) * k
        ox, oy = self.card_h * 0.75 * 1.1, sprite.image.shape[0] / 2   # palm in the sprite
        M = np.array([[c, -si, px - (c * ox - si * oy)], [si, c, py - (si * ox + c * oy)],
                      [0, 0, 1]])
        return self.H_cam @ M

    def _draw_hand(self, frame: np.ndarray, seat: int, dist: float, speed: float,
                   lift: float) -> None:
        """A hand with its shadow (further off the higher it is) and, moving fast, its
        motion-blurred copy."""
        sprite = self.hand_sprites[seat]
        shadow, blurred = self.hand_extras[seat]
        off = self.card_h * (0.02 + 0.25 * lift)
        warp_onto(frame, shadow, self._hand_H(seat, shadow, dist, lift,
                                              (self.shadow[0] * off, self.shadow[1] * off)))
        fast = abs(speed) > 6.0                          # card heights a second
        warp_onto(frame, blurred if fast else sprite, self._hand_H(seat, sprite, dist, lift))

    def frames(self) -> Iterator[np.ndarray]:
        tl = self.timeline
        static = self.background.copy()
        resting: list[Card] = []
        pending = sorted(tl.cards, key=lambda c: c.t_rest)
        nxt = 0
        n_frames = self.frame_of(tl.duration)
        for f in range(n_frames):
            t = f / self.fps
            # Cards that came to rest join the static layer; a swept pile leaves it.
            rebuild = False
            while nxt < len(pending) and pending[nxt].t_rest <= t:
                resting.append(pending[nxt])
                warp_onto(static, pending[nxt].face, self._card_H(pending[nxt], t), shadow=0.25)
                nxt += 1
            if any(c.t_sweep <= t for c in resting):
                resting = [c for c in resting if c.t_sweep > t]
                rebuild = True
            if rebuild:
                static = self.background.copy()
                for c in resting:
                    warp_onto(static, c.face, self._card_H(c, c.t_rest), shadow=0.25)
            frame = static.copy()
            self.draw_moving(frame, t)
            yield self.through_camera(frame, f)

    def draw_moving(self, frame: np.ndarray, t: float) -> tuple[list, list]:
        """What moves at time t drawn onto `frame` (the table and resting pile): cards in
        flight or being swept, then hands. Returns the cards drawn, as (Card, H), and the
        hands, as (seat, distance, lift)."""
        tl = self.timeline
        cards, hands = [], []
        for c in tl.cards:
            if c.t_rest - FLIP_IN <= t < c.t_rest or c.t_sweep <= t < c.t_sweep + SWEEP:
                H = self._card_H(c, t)
                if H is not None:
                    warp_onto(frame, c.face, H, shadow=0.2)
                    cards.append((c, H))
        moving = [(a.seat, a.at(t), a.lift) for a in tl.arms]
        moving += [(s.seat, self._slap_motion(s, t), 0.0) for s in tl.slaps]
        for seat, m, lift in moving:
            if m is not None:
                self._draw_hand(frame, seat, m[0], m[1], lift)
                hands.append((seat, m[0], lift))
        return cards, hands

    def through_camera(self, frame: np.ndarray, f: int) -> np.ndarray:
        """The film's light and frame f's sensor noise over a drawn frame."""
        frame = cv2.multiply(frame, self.light, scale=1 / 128)
        plus, minus = self.noise[f % len(self.noise)]
        return cv2.subtract(cv2.add(frame, plus), minus)

    def write(self, path: Path, progress: bool = True) -> dict:
        from tqdm import tqdm
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), self.fps,
                                 (self.W, self.H))
        if not writer.isOpened():
            raise OSError(f"{path}: cannot open a video writer (mp4v)")
        n = self.frame_of(self.timeline.duration)
        for frame in tqdm(self.frames(), total=n, desc="filming", unit="frame",
                          disable=not progress):
            writer.write(frame)
        writer.release()
        truth = path.with_suffix(".jsonl")
        with truth.open("w") as fh:
            for line in self.timeline.truth:
                fh.write(json.dumps(line) + "\n")
        return {"video": str(path), "truth": str(truth), "frames": n,
                "flips": sum(1 for x in self.timeline.truth if x["type"] == "flip")}
