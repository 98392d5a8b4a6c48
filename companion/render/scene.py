"""Scenes of the centre pile seen from above, with exact labels.

A pile of 1-10 overlapping cards (newest on top) on a generated table, seen
by a camera that may be tilted, with hands, face-down cards, light and lens
effects. Every corner index that stays visible enough to read gets a box:
the index's outline in face pixels is carried through the same homography
that placed the face, and its visible share is measured against the masks of
everything drawn above it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import cv2
import numpy as np

from .effects import camera, colour_temperature, sensor_noise, uneven_light
from .faces import Deck, DeckStyle, Face
from .hands import hand_layer
from .textures import table_texture

VISIBLE_TO_LABEL = 0.7      # share of an index that must be visible (and in frame) to be labelled


@dataclass
class Placed:
    face: Face
    H: np.ndarray            # 3x3: face pixels -> image pixels
    mask: np.ndarray         # float32 coverage of the frame, 0..1
    back: bool = False       # a face-down card: never labelled


@dataclass
class Scene:
    image: np.ndarray                                   # BGR uint8
    labels: list[tuple[int, float, float, float, float]]  # class, x1, y1, x2, y2 (pixels)
    pile: list[int] = field(default_factory=list)       # classes, bottom -> top
    cards: list["CardLabel"] = field(default_factory=list)  # face-up cards, top first


@dataclass
class CardLabel:
    """A face-up card's outline: corners in the face's own order (printed top-left,
    top-right, bottom-right, bottom-left), so a reader knows which corner is which."""
    cls: int | None          # None for a joker
    quad: np.ndarray         # 4 x 2 float32, image pixels
    visible: float           # share of the card neither covered nor out of frame
    index_visible: list[bool]  # per index box of the face: readable (>= VISIBLE_TO_LABEL)
    back: bool = False       # face down
    uncovered: float = 1.0   # share neither under another card nor out of frame (hands allowed)


def camera_homography(w: int, h: int, rng: np.random.Generator, tilt: float) -> np.ndarray:
    """Table plane -> image: the frame's corners pulled in by up to `tilt` of its size."""
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    j = rng.uniform(0, tilt, (4, 2)) * (w, h)
    sign = np.float32([[1, 1], [-1, 1], [-1, -1], [1, -1]])
    dst = src + sign * j
    if rng.random() < 0.5:
        # Keep the far edge narrower than the near one, like a real oblique camera.
        dst[:2, 0] += np.float32([1, -1]) * rng.uniform(0, tilt) * w
    return cv2.getPerspectiveTransform(src, dst.astype(np.float32))


def card_transform(face: Face, centre: tuple[float, float], height: float, angle_deg: float,
                   ) -> np.ndarray:
    """Face pixels -> table plane: scale to `height`, rotate, move to `centre`."""
    fh, fw = face.image.shape[:2]
    s = height / fh
    a = np.deg2rad(angle_deg)
    c, si = np.cos(a) * s, np.sin(a) * s
    tx = centre[0] - (c * fw / 2 - si * fh / 2)
    ty = centre[1] - (si * fw / 2 + c * fh / 2)
    return np.array([[c, -si, tx], [si, c, ty], [0, 0, 1]], np.float64)


def warp_onto(canvas: np.ndarray, face: Face, H: np.ndarray, shade: float = 1.0,
              shadow: float = 0.0) -> np.ndarray:
    """Draw a face through H onto canvas (in place); returns its coverage mask."""
    ch, cw = canvas.shape[:2]
    fh, fw = face.image.shape[:2]
    corners = cv2.perspectiveTransform(np.float32([[[0, 0], [fw, 0], [fw, fh], [0, fh]]]), H)[0]
    pad = 6
    x0, y0 = np.floor(corners.min(0)).astype(int) - pad
    x1, y1 = np.ceil(corners.max(0)).astype(int) + pad
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, cw), min(y1, ch)
    mask = np.zeros((ch, cw), np.float32)
    if x1 <= x0 or y1 <= y0:
        return mask
    # Warp only into the card's bounding box: most of the frame is untouched.
    T = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64) @ H
    size = (int(x1 - x0), int(y1 - y0))
    img = cv2.warpPerspective(face.image, T, size, flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REPLICATE)
    a = cv2.warpPerspective(face.alpha, T, size, flags=cv2.INTER_LINEAR).astype(np.float32) / 255
    roi = canvas[y0:y1, x0:x1]
    if shadow > 0:
        sh = cv2.GaussianBlur(a, (0, 0), 2.5)
        sh = np.roll(sh, (2, 2), (0, 1))
        roi = (roi * (1 - shadow * sh)[..., None]).astype(np.uint8)
    if shade != 1.0:
        img = cv2.convertScaleAbs(img, alpha=shade)
    # blendLinear does the alpha blend in one SIMD pass on uint8 (no float copies).
    canvas[y0:y1, x0:x1] = cv2.blendLinear(img, roi, a, 1.0 - a)
    mask[y0:y1, x0:x1] = a
    return mask


def index_labels(placed: list[Placed], cover: np.ndarray | None, w: int, h: int,
                 ) -> list[tuple[int, float, float, float, float]]:
    """Boxes for the indices visible enough to read, from the top card down."""
    above = np.zeros((h, w), np.float32) if cover is None else cover.copy()
    labels = []
    for p in reversed(placed):
        if p.face.cls is not None:
            for x1, y1, x2, y2 in p.face.index_boxes:
                quad = cv2.perspectiveTransform(
                    np.float32([[[x1, y1], [x2, y1], [x2, y2], [x1, y2]]]), p.H)[0]
                area = cv2.contourArea(quad)
                if area < 4:
                    continue
                qmask = np.zeros((h, w), np.uint8)
                cv2.fillConvexPoly(qmask, np.round(quad).astype(np.int32), 1)
                inside = float(qmask.sum())
                # In-frame share: the part of the quad the frame shows.
                if inside < 0.85 * area:
                    continue
                visible = float((qmask * (1 - above)).sum()) / max(inside, 1.0)
                if visible < VISIBLE_TO_LABEL:
                    continue
                bx1, by1 = np.clip(quad.min(0), 0, (w, h))
                bx2, by2 = np.clip(quad.max(0), 0, (w, h))
                labels.append((p.face.cls, float(bx1), float(by1), float(bx2), float(by2)))
        above = np.maximum(above, p.mask)
    return labels


def card_labels(placed: list[Placed], cover: np.ndarray | None, w: int, h: int,
                ) -> list[CardLabel]:
    """Every card's outline and how much of it (and of each index) shows."""
    above = np.zeros((h, w), np.float32) if cover is None else cover.copy()
    cards_above = np.zeros((h, w), np.float32)
    out = []
    for p in reversed(placed):
        fh, fw = p.face.image.shape[:2]
        quad = cv2.perspectiveTransform(
            np.float32([[[0, 0], [fw, 0], [fw, fh], [0, fh]]]), p.H)[0]
        area = max(cv2.contourArea(quad), 1.0)
        visible = float((p.mask * (1 - above)).sum()) / area
        uncovered = float((p.mask * (1 - cards_above)).sum()) / area
        flags = []
        for x1, y1, x2, y2 in ([] if p.back else p.face.index_boxes):
            iq = cv2.perspectiveTransform(
                np.float32([[[x1, y1], [x2, y1], [x2, y2], [x1, y2]]]), p.H)[0]
            ia = cv2.contourArea(iq)
            qmask = np.zeros((h, w), np.uint8)
            cv2.fillConvexPoly(qmask, np.round(iq).astype(np.int32), 1)
            inside = float(qmask.sum())
            ok = ia >= 4 and inside >= 0.85 * ia and \
                float((qmask * (1 - above)).sum()) / max(inside, 1.0) >= VISIBLE_TO_LABEL
            flags.append(ok)
        out.append(CardLabel(None if p.back else p.face.cls, quad.astype(np.float32),
                             min(visible, 1.0), [] if p.back else flags, p.back,
                             min(uncovered, 1.0)))
        above = np.maximum(above, p.mask)
        cards_above = np.maximum(cards_above, p.mask)
    return out


class SceneRenderer:
    """Deterministic scenes: scene i of seed s is always the same image and labels."""

    def __init__(self, size: int = 320, seed: int = 0, images_per_deck: int = 48,
                 card_range: tuple[float, float] = (0.32, 0.95), real_faces=None,
                 real_share: float = 0.0) -> None:
        """real_faces: a callable (rng, rendered deck) -> a deck of real faces
        (`photodeck.FacePoolDeck`), used for `real_share` of the scenes."""
        self.size = size
        self.seed = seed
        self.images_per_deck = images_per_deck
        self.card_range = card_range      # card height / frame side, drawn log-uniform
        self.real_faces, self.real_share = real_faces, real_share

    @functools.lru_cache(maxsize=8)
    def deck(self, style_seed: int) -> Deck:
        return Deck(DeckStyle.random(style_seed))

    def render(self, index: int) -> Scene:
        rng = np.random.default_rng([self.seed, index])
        deck = self.deck(self.seed * 1_000_003 + index // self.images_per_deck)
        if self.real_faces is not None:
            # Its own generator: scenes without real faces stay as they always were.
            pick = np.random.default_rng([self.seed, index, 7])
            if pick.random() < self.real_share:
                deck = self.real_faces(pick, deck)
        S = self.size
        img = table_texture(S, S, rng)
        H_cam = camera_homography(S, S, rng, tilt=rng.uniform(0, 0.14))
        # Card size in the frame, log-uniform: far cameras to close-ups.
        lo, hi = self.card_range
        card_h = S * float(np.exp(rng.uniform(np.log(lo), np.log(hi))))
        r = rng.random()
        n = 0 if r < 0.04 else 1 if r < 0.3 else int(rng.integers(2, 5)) if r < 0.65 else \
            int(rng.integers(5, 11))
        classes = [int(c) for c in rng.choice(52, size=n, replace=False)]
        if rng.random() < 0.5:
            base = rng.uniform(0, 360)
        else:
            base = float(rng.choice([0, 90, 180, 270])) + rng.normal(0, 6)
        spread = rng.uniform(0.03, 0.18) * card_h
        turn = rng.uniform(3, 25)
        cx, cy = S / 2 + rng.uniform(-0.18, 0.18) * S, S / 2 + rng.uniform(-0.18, 0.18) * S
        stack: list[Face] = [deck.face(c) for c in classes]
        if n and rng.random() < 0.05:       # a joker in the pile: no label, still a card
            stack.insert(int(rng.integers(0, len(stack))), deck.joker(int(rng.integers(2))))
        placed: list[Placed] = []
        if rng.random() < 0.12:             # face-down cards on the table
            for _ in range(int(rng.integers(1, 3))):
                back = deck.back()
                c = (rng.uniform(0, S), rng.uniform(0, S))
                H = H_cam @ card_transform(back, c, card_h, rng.uniform(0, 360))
                placed.append(Placed(back, H, warp_onto(img, back, H, shadow=0.3), back=True))
        for i, face in enumerate(stack):
            last = i == len(stack) - 1
            off = (0.0, 0.0) if last and rng.random() < 0.5 else tuple(rng.normal(0, spread, 2))
            ang = base + rng.normal(0, turn)
            H = H_cam @ card_transform(face, (cx + off[0], cy + off[1]), card_h, ang)
            mask = warp_onto(img, face, H, shade=rng.uniform(0.9, 1.04),
                             shadow=rng.uniform(0.1, 0.4))
            placed.append(Placed(face, H, mask))
        cover = None
        if rng.random() < 0.3:              # a hand over or beside the pile
            target = (cx + rng.normal(0, 0.4) * card_h, cy + rng.normal(0, 0.4) * card_h)
            hand, hmask = hand_layer(S, S, rng, target, card_h * rng.uniform(0.5, 0.9))
            img = (img * (1 - hmask[..., None]) + hand * hmask[..., None]).astype(np.uint8)
            cover = hmask
        labels = index_labels(placed, cover, S, S)
        cards = card_labels(placed, cover, S, S)
        img = camera(img, rng)
        return Scene(img, labels, classes, cards)


def card_scene(deck: Deck, cls: int, rng: np.random.Generator, size: int = 320,
               min_visible: float = 0.75, tries: int = 50) -> Scene:
    """One card of `deck` on top of 0-3 others of the same deck, at any angle and size
    from a tilted camera, maybe a hand over its edge, with light and lens effects. At
    least `min_visible` of it and one of its index corners stay in view (the scene is
    redrawn up to `tries` times): a card a hand splits in two is no card to read yet."""
    for _ in range(tries):
        S = size
        img = table_texture(S, S, rng)
        H_cam = camera_homography(S, S, rng, tilt=rng.uniform(0, 0.14))
        card_h = S * float(np.exp(rng.uniform(np.log(0.4), np.log(0.9))))
        cx, cy = S / 2 + rng.uniform(-0.12, 0.12) * S, S / 2 + rng.uniform(-0.12, 0.12) * S
        others = [int(c) for c in rng.choice([c for c in range(52) if c != cls],
                                              size=int(rng.integers(0, 4)), replace=False)]
        placed = []
        for c in others + [cls]:
            face = deck.face(c)
            off = (0.0, 0.0) if c == cls else tuple(rng.normal(0, 0.12 * card_h, 2))
            H = H_cam @ card_transform(face, (cx + off[0], cy + off[1]), card_h,
                                       rng.uniform(0, 360))
            placed.append(Placed(face, H, warp_onto(img, face, H, shade=rng.uniform(0.9, 1.04),
                                                    shadow=rng.uniform(0.1, 0.4))))
        cover = None
        if rng.random() < 0.3:
            a = rng.uniform(0, 2 * np.pi)            # reaching in from beside the card
            r = card_h * rng.uniform(0.55, 0.9)
            target = (cx + r * np.cos(a), cy + r * np.sin(a))
            hand, hmask = hand_layer(S, S, rng, target, card_h * rng.uniform(0.5, 0.8))
            img = (img * (1 - hmask[..., None]) + hand * hmask[..., None]).astype(np.uint8)
            cover = hmask
        cards = card_labels(placed, cover, S, S)
        if cards and cards[0].cls == cls and any(cards[0].index_visible) \
                and cards[0].visible >= min_visible:
            return Scene(camera(img, rng), index_labels(placed, cover, S, S), others + [cls],
                         cards)
    raise RuntimeError(f"no scene with a readable {cls} in {tries} tries")


def card_photo(deck: Deck, cls: int, rng: np.random.Generator, width: int = 480,
               height: int = 640) -> np.ndarray:
    """A photo of one face-up card (or joker: cls 52, 53) on a plain table, roughly
    straight, as a phone would take it for enrolment."""
    img = table_texture(height, width, rng, kind="plain")
    face = deck.face(cls) if cls < 52 else deck.joker(cls - 52)
    H = card_transform(face, (width / 2 + rng.normal(0, 8), height / 2 + rng.normal(0, 8)),
                       height * rng.uniform(0.6, 0.75), rng.normal(0, 6))
    warp_onto(img, face, H, shadow=0.25)
    img = colour_temperature(uneven_light(img, rng, 0.2), rng)
    return sensor_noise(img, rng, 4.0)
