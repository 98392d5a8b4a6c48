"""`companion render-game`: a whole game as the table camera would film it.

The game is the referee's own self-play (so the ground truth is a legal
game); this module only films it. Cards slide in from the player's seat and
come to rest on the pile, hands slap it (some late, some wrong), won piles
are swept towards the winner. The ground truth file is JSON Lines that the
referee itself accepts: a `start` event, then every flip (with the first
frame where the card rests), every slap (with its frames) and every pile
collection, each with its video time `t`.

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
    sprite: Face
    legal: bool


@dataclass
class Timeline:
    cards: list[Card] = field(default_factory=list)
    slaps: list[Slap] = field(default_factory=list)
    truth: list[dict] = field(default_factory=list)
    duration: float = 0.0


class GameFilm:
    def __init__(self, rules: Rules, players: list[str], seed: int, size=(1280, 720), fps: int = 30,
                 seconds: float | None = None, deck=None) -> None:
        """deck: anything with face(cls) and style.seed (default: the seed's drawn deck;
        a `photodeck.PhotoDeck` films real card faces)."""
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
        # Seat k sits at this angle around the pile (image coordinates, clockwise).
        self.seat_angle = [math.pi / 2 + 2 * math.pi * k / n for k in range(n)]
        self.background = self._background()
        self.hand_sprites = [self._hand_sprite(k) for k in range(n)]
        self.timeline = self._build(seconds)
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

    def _out_dir(self, seat: int) -> tuple[float, float]:
        a = self.seat_angle[seat]
        return math.cos(a), math.sin(a)

    # ------------------------------------------------------------ the game
    def _build(self, seconds: float | None) -> Timeline:
        stats = play_hand(self.rules, self.players, self.seed)
        game = Game(self.rules)
        tl = Timeline()
        rng = self.rng
        prev_orig = 0.0
        now = 0.5                 # video time of the previous event
        busy_until = 0.0          # hands or a sweep over the pile until then
        pile: list[Card] = []
        last_rest = 0.0
        for event in stats.events:
            anns = game.apply(event)
            orig = event.get("t", prev_orig)
            gap = max(0.0, orig - prev_orig)
            prev_orig = orig
            kind = event["type"]
            if seconds is not None and now > seconds:
                break
            if kind == "start":
                start = dict(event)
                start.update(seed=self.seed, rules=self.rules.preset, fps=self.fps,
                             size=[self.W, self.H], deck_style=self.deck.style.seed)
                tl.truth.append(start)
                continue
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
            elif kind == "slap":
                t_land = max(now + min(gap, 0.6), last_rest + 0.12)
                if seconds is not None and t_land > seconds:
                    break
                seats = event["seats"]
                legal = bool(awards)
                for k, seat in enumerate(seats):
                    tl.slaps.append(Slap(seat, t_land + 0.05 * k, self.hand_sprites[seat], legal))
                end = t_land + 0.05 * len(seats) + HAND_STAY + HAND_OUT
                tl.truth.append({"type": "slap", "seats": seats, "frame": self.frame_of(t_land),
                                 "t": round(t_land, 4), "legal": legal,
                                 "hands_frames": [self.frame_of(t_land - HAND_IN),
                                                  self.frame_of(end)]})
                now = t_land
                busy_until = end
                if awards:
                    self._sweep(pile, awards[0]["seat"], t_land + HAND_STAY, tl)
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

    def _sweep(self, pile: list[Card], seat: int, t: float, tl: Timeline) -> None:
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

    def _hand_H(self, s: Slap, t: float) -> np.ndarray | None:
        t0, t1 = s.t_land - HAND_IN, s.t_land + HAND_STAY + HAND_OUT
        if not t0 <= t < t1:
            return None
        if t < s.t_land:
            u = (s.t_land - t) / HAND_IN
        elif t > s.t_land + HAND_STAY:
            u = (t - s.t_land - HAND_STAY) / HAND_OUT
        else:
            u = 0.0
        dx, dy = self._out_dir(s.seat)
        reach = self.card_h * 2.2 * u
        px, py = self.centre[0] + dx * reach, self.centre[1] + dy * reach
        a = self.seat_angle[s.seat]
        c, si = math.cos(a), math.sin(a)
        ox, oy = self.card_h * 0.75 * 1.1, s.sprite.image.shape[0] / 2   # palm in the sprite
        M = np.array([[c, -si, px - (c * ox - si * oy)], [si, c, py - (si * ox + c * oy)],
                      [0, 0, 1]])
        return self.H_cam @ M

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
            for c in tl.cards:                           # what moves
                if c.t_rest - FLIP_IN <= t < c.t_rest or c.t_sweep <= t < c.t_sweep + SWEEP:
                    H = self._card_H(c, t)
                    if H is not None:
                        warp_onto(frame, c.face, H, shadow=0.2)
            for s in tl.slaps:
                H = self._hand_H(s, t)
                if H is not None:
                    warp_onto(frame, s.sprite, H)
            frame = cv2.multiply(frame, self.light, scale=1 / 128)
            plus, minus = self.noise[f % len(self.noise)]
            yield cv2.subtract(cv2.add(frame, plus), minus)

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
