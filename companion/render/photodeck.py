"""A deck whose faces are real card photos, for films and scenes the renderer makes.

The renderer's own decks are drawn; a `PhotoDeck` answers `face(cls)` with a real
card instead, cut out of a photo: either a picture that is the card (one card filling
its frame, as in `realdecks`: stretched back to a card's proportions) or a photo of a
card lying on a table (found by the shipped finder, snapped to its edges, straightened).
The films then show real indices with the renderer's motion, hands, light and camera.
Evaluation only: the photos are read where they lie, never copied or trained on.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from ..engine.cards import CLASS_NAMES
from .faces import Face

ASPECT = 1.4                     # a standard card: 63 x 88 mm


@dataclass(frozen=True)
class PhotoStyle:
    seed: int                    # films record their deck's style seed


def rounded_alpha(w: int, h: int, radius: float = 0.05) -> np.ndarray:
    a = np.zeros((h, w), np.uint8)
    r = max(1, int(radius * w))
    cv2.rectangle(a, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(a, (0, r), (w - 1, h - 1 - r), 255, -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(a, (cx, cy), r, 255, -1)
    return a


def face_from_frame(image: np.ndarray, width: int) -> np.ndarray:
    """A picture that is the card: stretched to a card's proportions."""
    return cv2.resize(image, (width, int(round(width * ASPECT))), interpolation=cv2.INTER_AREA)


def webcam_shot(image: np.ndarray, rng: np.random.Generator, width: int = 640,
                height: int = 480, *, size: tuple[float, float]
                ) -> tuple[np.ndarray, np.ndarray]:
    """A card face (portrait, in a card's proportions) as a cheap webcam over a plain table
    photographs it: at any angle, `size` (a range) of the frame's height, on a plain, wood,
    felt, cloth or stone table seen from a slightly tilted camera, through the renderer's
    light and lens chain (uneven light, colour cast, blur, noise, JPEG), and at the webcam's
    own resolution (a 640 x 480 sensor, sometimes upscaled from less). Returns the photo
    and the card's true corners (TL, TR, BR, BL of the upright face). `companion eval
    --webcam` photographs real decks with it; the corner reader trains on it too."""
    from .effects import camera
    from .scene import camera_homography, card_transform, warp_onto
    from .textures import table_texture
    fh, fw = image.shape[:2]
    face = Face(image, rounded_alpha(fw, fh), [], None)
    img = table_texture(height, width, rng, kind=str(rng.choice(
        ["plain", "plain", "wood", "felt", "cloth", "stone"])))
    H_cam = camera_homography(width, height, rng, tilt=rng.uniform(0, 0.1))
    card_h = height * rng.uniform(*size)
    centre = (width / 2 + rng.uniform(-0.1, 0.1) * width,
              height / 2 + rng.uniform(-0.05, 0.05) * height)
    H = H_cam @ card_transform(face, centre, card_h, rng.uniform(0, 360))
    warp_onto(img, face, H, shade=rng.uniform(0.85, 1.05), shadow=rng.uniform(0.1, 0.4))
    quad = cv2.perspectiveTransform(np.float32([[[0, 0], [fw, 0], [fw, fh], [0, fh]]]), H)[0]
    if rng.random() < 0.4:        # a cheaper sensor: fewer pixels, scaled up by the driver
        f = rng.uniform(0.5, 0.8)
        small = cv2.resize(img, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
        img = cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR)
    return camera(img, rng), quad


def face_from_table_photo(image: np.ndarray, width: int, finder) -> np.ndarray | None:
    """A photo of one card on a table: its outline found, snapped, straightened (portrait);
    None when no card is found."""
    from ..detector.card_reader import orientations, refine_quad
    quads, conf = finder(image, max_cards=1)
    if not len(conf) or conf[0] < 0.5:
        return None
    quad = orientations(refine_quad(image, quads[0]))[0]
    h = int(round(width * ASPECT))
    M = cv2.getPerspectiveTransform(np.float32(quad),
                                    np.float32([[0, 0], [width, 0], [width, h], [0, h]]))
    return cv2.warpPerspective(image, M, (width, h), flags=cv2.INTER_AREA)


class PhotoDeck:
    """52 real faces, one photo each, chosen by seed among the photos given per card."""

    def __init__(self, photos: dict[int, list[tuple[Path, str]]], seed: int, width: int = 260,
                 finder=None) -> None:
        """photos: card class -> [(path, "frame" | "table")]. A card with no usable photo
        raises ValueError naming it (a film needs every card)."""
        self.style = PhotoStyle(seed)
        self.w, self.h = width, int(round(width * ASPECT))
        self._alpha = rounded_alpha(self.w, self.h)
        self._faces: dict[int, Face] = {}
        self.sources: dict[int, Path] = {}
        rng = np.random.default_rng(seed)
        for cls in range(len(CLASS_NAMES)):
            options = list(photos.get(cls, []))
            rng.shuffle(options)
            for path, kind in options:
                img = cv2.imread(str(path))
                if img is None:
                    continue
                face = (face_from_frame(img, self.w) if kind == "frame"
                        else face_from_table_photo(img, self.w, finder))
                if face is not None:
                    # Either end up: a real pile shows both.
                    if rng.random() < 0.5:
                        face = np.ascontiguousarray(face[::-1, ::-1])
                    self._faces[cls] = Face(face, self._alpha, [], cls)
                    self.sources[cls] = path
                    break
            if cls not in self._faces:
                raise ValueError(f"{CLASS_NAMES[cls]}: no usable photo among {len(options)}")

    def face(self, cls: int) -> Face:
        return self._faces[cls]


def real_photos(realcards: Path | None, realdecks_split: Path | None) -> dict[int, list]:
    """The evaluation photos per card: `realcards` (photos on a table, labels.csv) and a
    `realdecks` split (`<card>/*.jpg`, each picture the card)."""
    out: dict[int, list[tuple[Path, str]]] = {}
    if realcards is not None and (realcards / "labels.csv").is_file():
        with (realcards / "labels.csv").open() as fh:
            for r in csv.DictReader(fh):
                card = r["card"].strip()
                if card in CLASS_NAMES:
                    out.setdefault(CLASS_NAMES.index(card), []).append(
                        (realcards / r["file"], "table"))
    if realdecks_split is not None and realdecks_split.is_dir():
        for d in sorted(realdecks_split.iterdir()):
            if d.name in CLASS_NAMES:
                out.setdefault(CLASS_NAMES.index(d.name), []).extend(
                    (p, "frame") for p in sorted(d.glob("*.jpg")))
    return out


class FacePoolDeck:
    """A deck drawn from a pool of real faces, a different real design for each card: a
    scene of real indices without needing one whole real deck. `faces[cls]` holds the
    straightened faces (portrait, H x W x 3) of that card, `jokers` those of jokers; each
    card's face is drawn once per deck from its pool, either end up. Backs come from
    `backs` (a rendered deck). Training scenes only (the pool is harvested training
    material, never shipped)."""

    def __init__(self, faces: dict[int, np.ndarray], jokers: np.ndarray, backs,
                 rng: np.random.Generator) -> None:
        self._pool, self._jokers, self._backs, self._rng = faces, jokers, backs, rng
        self._faces: dict[object, Face] = {}
        h, w = next(iter(faces.values()))[0].shape[:2]
        self._alpha = rounded_alpha(w, h)
        # Where a real deck's index lies (its design is unknown: the usual corner area, a
        # little inside the reader's window), so a hand over it hides it from the labels.
        self._boxes = [(0.0, 0.0, 0.3 * w, 0.33 * h), (0.7 * w, 0.67 * h, float(w), float(h))]

    def _draw(self, pool: np.ndarray) -> np.ndarray:
        img = pool[int(self._rng.integers(len(pool)))]
        return np.ascontiguousarray(img[::-1, ::-1]) if self._rng.random() < 0.5 else img

    def face(self, cls: int) -> Face:
        if cls not in self._faces:
            self._faces[cls] = Face(self._draw(self._pool[cls]), self._alpha, self._boxes, cls)
        return self._faces[cls]

    def joker(self, which: int = 0) -> Face:
        key = ("joker", which)
        if key not in self._faces:
            self._faces[key] = (Face(self._draw(self._jokers), self._alpha, [], None)
                                if len(self._jokers) else self._backs.joker(which))
        return self._faces[key]

    def back(self) -> Face:
        return self._backs.back()
