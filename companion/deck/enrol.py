"""Enrolling a deck from photos named by card (`companion enrol --photos DIR`).

Each photo holds one face-up card. The shipped detector finds its outline (as `detect`
does) and the generic reader reads it, which catches a photo whose name disagrees with
what it shows. Both of the card's corners are then cut many times, as an imperfect
finder and another camera would cut them (the box a few per cent off, turned, seen
slantwise; blur, light, noise, JPEG), under the card's name; the card read sideways and
its middle as "no index". The reader's heads are fitted to the features of all those
crops (`fit_heads`), and the fitted layer is the deck (enrolled.py), with the picture of
each card's middle (`card_picture`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from ..detector.card_reader import (HEADS, NONE_CLASS, CardReaderDetector, corner_crop,
                                    orientations, refine_quad)
from ..detector.middle_reader import middle_crop
from ..engine.cards import CLASS_NAMES, JOKER_NAMES
from ..render.effects import camera
from .enrolled import EnrolledDeck, reader_id

# The fit starts at the shipped heads and its length is what keeps it near them. Chosen
# on realdecks/valid (one photo of each card enrolled, then read under bench_robustness's
# ten changes, 520 readings): the shipped heads 507 right / 7 wrong; fitted with a pull
# back to them of 1.0 x the squared distance 507 / 7, 0.01: 507 / 5, none: 513 / 2.
FIT_STEPS, FIT_LR = 200, 0.01

PHOTO_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff"}
_CARD = re.compile(r"^(A|[2-9]|10|J|Q|K)([SHDC])(?:_(\d+))?$", re.IGNORECASE)
_JOKER = re.compile(r"^(RJ|BJ)(?:_(\d+))?$", re.IGNORECASE)
VARIATIONS = 24        # cuts of each corner of each photo
# A photo is taken for another card when the generic reader names that other card this
# sure on average over the card's two ends (it is not enrolled unless names are trusted).
MISLABEL_SURE = 0.7


def parse_photo_name(path: str | Path) -> tuple[str, int]:
    """'7h.jpg' -> ('7h', 1); 'Qd_2.png' -> ('Qd', 2); 'RJ.jpg' -> ('RJ', 1). A name that
    names no card raises ValueError saying what a name looks like."""
    stem = Path(path).stem
    m = _CARD.match(stem)
    if m:
        return m.group(1).upper() + m.group(2).lower(), int(m.group(3) or 1)
    m = _JOKER.match(stem)
    if m:
        return m.group(1).upper(), int(m.group(2) or 1)
    raise ValueError(f"{Path(path).name}: not a card name (expected a rank A 2-10 J Q K and a "
                     "suit s h d c, like 7h.jpg, 10s.png or Qd_2.jpg for a second photo; RJ/BJ "
                     "for jokers)")


@dataclass
class EnrolReport:
    enrolled: dict[str, list[str]] = field(default_factory=dict)   # card -> photo files
    jokers: list[str] = field(default_factory=list)
    bad_names: list[str] = field(default_factory=list)     # one line each
    unreadable: list[str] = field(default_factory=list)
    no_card: list[str] = field(default_factory=list)
    duplicates: list[tuple[str, list[str]]] = field(default_factory=list)
    mislabelled: list[tuple[str, str, str, float]] = field(default_factory=list)  # file, name, read, p

    @property
    def missing(self) -> list[str]:
        return [n for n in CLASS_NAMES if n not in self.enrolled]

    @property
    def complete(self) -> bool:
        return not self.missing

    def lines(self) -> list[str]:
        out = [f"enrolled {len(self.enrolled)} of 52 cards"
               f" from {sum(len(v) for v in self.enrolled.values())} photos"
               + (f", {len(self.jokers)} joker photos (read as no card)" if self.jokers else "")]
        out += [f"  bad name: {line}" for line in self.bad_names]
        out += [f"  unreadable: {line}" for line in self.unreadable]
        out += [f"  no card found: {f}" for f in self.no_card]
        out += [f"  duplicate name {name}: {', '.join(files)}" for name, files in self.duplicates]
        out += [f"  check the name: {f} is named {name} but reads as {read} ({p:.2f}); not "
                "enrolled (rename it, or pass --trust-names)" for f, name, read, p in
                self.mislabelled]
        if self.missing:
            out.append(f"missing {len(self.missing)}: {' '.join(self.missing)}")
        else:
            out.append("count 52: every card of the deck is enrolled")
        return out


def _unit_to(quad: np.ndarray) -> np.ndarray:
    """The homography from the unit square (TL, TR, BR, BL) to a card outline."""
    return cv2.getPerspectiveTransform(np.float32([[0, 0], [1, 0], [1, 1], [0, 1]]),
                                       np.float32(quad))


def _through(H: np.ndarray, pts: np.ndarray) -> np.ndarray:
    return cv2.perspectiveTransform(np.float32(pts)[None], H)[0]


def jittered(card: np.ndarray, rng: np.random.Generator, shift: tuple[float, float] = (0, 0)
             ) -> np.ndarray:
    """A card outline (TL, TR, BR, BL) as another finder, camera angle or distance would
    draw it: a few per cent larger or smaller, shifted, turned and slanted, in the card's
    own frame. shift: an extra offset in card widths / heights (a window off the index)."""
    unit = np.float32([[0, 0], [1, 0], [1, 1], [0, 1]]) - 0.5
    scale = np.exp(rng.normal(0, 0.04))
    aspect = np.exp(rng.normal(0, 0.04))
    a = np.deg2rad(np.clip(rng.normal(0, 2.5), -7, 7))
    rot = np.float32([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    p = (unit * np.float32([scale * aspect, scale / aspect])) @ rot.T + 0.5
    p += rng.normal(0, 0.02, 2) + np.float32(shift) + rng.normal(0, 0.012, (4, 2))
    return _through(_unit_to(card), p)


def corner_variations(image: np.ndarray, quad: np.ndarray, rng: np.random.Generator,
                      k: int = VARIATIONS) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Crops of a card's two index corners, k of each (the first as found, the rest
    jittered and changed as another camera would), and "no index" crops of the same card
    (read sideways, and its middle)."""
    reads = orientations(quad)
    index, none = [], []
    for end in (0, 1):
        for i in range(k):
            card = reads[end] if i == 0 else jittered(reads[end], rng)
            crop = corner_crop(image, card)[0]
            index.append(crop if i == 0 else camera(crop, rng))
    for i in range(max(2, k // 4)):
        side = reads[2 + i % 2]
        none.append(camera(corner_crop(image, jittered(side, rng))[0], rng))
        mid = jittered(reads[i % 2], rng, shift=tuple(rng.uniform(0.3, 0.5, 2)))
        none.append(camera(corner_crop(image, mid)[0], rng))
    return index, none


def card_picture(image: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """A card's middle (its pips, or a court's picture), read upright by the outline's
    geometry (which way up does not matter: the deck's comparisons try both)."""
    return middle_crop(image, orientations(quad)[0])


def find_card(detector: CardReaderDetector, image: np.ndarray):
    """The photo's card: (outline as read, the generic reading's class or None, its mean
    probability over the two ends), or None where no card is found."""
    cards = detector.cards(image)
    if not cards:
        return None
    quad, pooled, found = cards[0]
    if detector.pool_looks and "snapped" in detector.looks:
        quad = refine_quad(image, quad)     # pooled looks: cards() gives the found box
    # An outline the reader sees no index in at either end is no card (an empty table,
    # a card face down).
    ends = detector.reader([corner_crop(image, r)[0] for r in orientations(quad)[:2]])
    if ends[:, NONE_CLASS].min() > 0.5 and not found:
        return None
    cls = found[0][2] if found else None
    return quad, cls, pooled / 2


def fit_heads(features: np.ndarray, labels: np.ndarray, weights: np.ndarray, bias: np.ndarray,
              steps: int = FIT_STEPS, lr: float = FIT_LR, smoothing: float = 0.05
              ) -> tuple[np.ndarray, np.ndarray]:
    """The heads' layer fitted to one deck's crops with the reader's own loss (presence
    on every crop; rank, suit and half-weighted ink colour where there is an index; label
    smoothing as in training, companion.training.corner_reader.head_losses), from the
    shipped weights: full-batch Adam (torch's defaults) on a few thousand feature vectors.

    Written out in numpy rather than run through torch: the layer is 20 x 128 and its
    gradient is a few lines, while importing torch alone took 3 s of enrolment's 30 s
    budget, and each of torch's steps 20 ms (here ~2 ms)."""
    x = np.asarray(features, np.float32)
    y = np.asarray(labels, np.int64)
    W, b = weights.astype(np.float32).copy(), bias.astype(np.float32).copy()
    n, pos = len(y), y != NONE_CLASS
    p = max(int(pos.sum()), 1)
    present = pos * (1 - smoothing) + smoothing / 2
    # Smoothed one-hot targets of the three heads, on the rows that show an index.
    a, c, e = 1 + HEADS[1], 1 + HEADS[1] + HEADS[2], sum(HEADS)
    rank, suit = y[pos] % HEADS[1], y[pos] // HEADS[1]
    red = np.isin(suit, [1, 2]).astype(np.int64)             # hearts and diamonds
    targets = [(slice(1, a), rank, 1.0), (slice(a, c), suit, 1.0), (slice(c, e), red, 0.5)]
    targets = [(cols, np.eye(cols.stop - cols.start, dtype=np.float32)[k] * (1 - smoothing)
                + smoothing / (cols.stop - cols.start), w) for cols, k, w in targets]
    m = [np.zeros_like(W), np.zeros_like(b)]
    v = [np.zeros_like(W), np.zeros_like(b)]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    for t in range(1, steps + 1):
        z = x @ W.T + b
        g = np.zeros_like(z)
        g[:, 0] = (1 / (1 + np.exp(-z[:, 0])) - present) / n   # binary cross-entropy
        zp = z[pos]
        for cols, q, w in targets:                            # softmax cross-entropies
            zz = zp[:, cols] - zp[:, cols].max(1, keepdims=True)
            sm = np.exp(zz)
            sm /= sm.sum(1, keepdims=True)
            g[pos, cols] = w * (sm - q) / p
        for k, (param, grad) in enumerate(((W, g.T @ x), (b, g.sum(0)))):
            m[k] = beta1 * m[k] + (1 - beta1) * grad
            v[k] = beta2 * v[k] + (1 - beta2) * grad * grad
            param -= lr * (m[k] / (1 - beta1 ** t)) / (np.sqrt(v[k] / (1 - beta2 ** t)) + eps)
    return W, b


def fit_deck(detector: CardReaderDetector, features: list[np.ndarray], labels: list[int],
             cards: set[str], name: str, info: dict,
             pictures: dict[int, np.ndarray] | None = None) -> EnrolledDeck:
    """The deck from its crops' features (photos or the camera alike): the heads fitted,
    tied to the reader that made the features; pictures: each card's middle."""
    W, b = fit_heads(np.concatenate(features), np.int64(labels), *detector.reader.heads_layer())
    return EnrolledDeck(W, b, [c for c in CLASS_NAMES if c in cards],
                        reader_id(detector.reader.path), name, info, dict(pictures or {}))


def enrol_photos(folder: str | Path, detector: CardReaderDetector, name: str = "deck",
                 variations: int = VARIATIONS, trust_names: bool = False, seed: int = 0,
                 progress: bool = True) -> tuple[EnrolledDeck | None, EnrolReport]:
    """Enrol every photo in `folder` named by card; the deck (None when nothing could be
    enrolled) and what happened to each photo."""
    from tqdm import tqdm
    folder = Path(folder)
    report = EnrolReport()
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder of photos")
    files = sorted(p for p in folder.iterdir() if p.is_file())
    named: dict[tuple[str, int], list[Path]] = {}
    todo: list[tuple[Path, str]] = []
    for p in files:
        if p.suffix.lower() not in PHOTO_SUFFIXES:
            continue                    # not a photo (notes, a contact sheet): not ours
        try:
            card, n = parse_photo_name(p)
        except ValueError as exc:
            report.bad_names.append(str(exc))
            continue
        named.setdefault((card, n), []).append(p)
        todo.append((p, card))
    report.duplicates = [(f"{card}" + (f"_{n}" if n > 1 else ""), [p.name for p in ps])
                         for (card, n), ps in sorted(named.items()) if len(ps) > 1]
    rng = np.random.default_rng(seed)
    feats: list[np.ndarray] = []
    labels: list[int] = []
    pictures: dict[int, np.ndarray] = {}
    for path, card in tqdm(todo, desc="enrolling", unit="photo", disable=None if progress
                           else True, leave=False):
        image = cv2.imread(str(path))
        if image is None:
            report.unreadable.append(f"{path.name}: cannot read the image (not an image, or "
                                     "corrupt)")
            continue
        got = find_card(detector, image)
        if got is None:
            report.no_card.append(path.name)
            continue
        quad, read, sure = got
        joker = card in JOKER_NAMES
        if read is not None and not joker and CLASS_NAMES[read] != card and \
                sure >= MISLABEL_SURE:
            report.mislabelled.append((path.name, card, CLASS_NAMES[read], sure))
            if not trust_names:
                continue
        index, none = corner_variations(image, quad, rng, variations)
        crops = index + none
        _, f = detector.reader.read(crops)
        if f is None:
            raise ValueError(f"{detector.reader.path}: this corner reader has no 'features' "
                             "output; a deck needs one (re-export it: python -m "
                             "companion.training.corner_reader --export-only --init W.pt)")
        feats.append(f)
        label = NONE_CLASS if joker else CLASS_NAMES.index(card)
        labels += [label] * len(index) + [NONE_CLASS] * len(none)
        if joker:
            report.jokers.append(path.name)
        else:
            report.enrolled.setdefault(card, []).append(path.name)
            if label not in pictures:     # its first photo's
                pictures[label] = card_picture(image, quad)
    if not feats:
        return None, report
    info = {"photos": {c: fs for c, fs in sorted(report.enrolled.items())},
            "jokers": report.jokers, "variations": variations, "source": str(folder)}
    return fit_deck(detector, feats, labels, set(report.enrolled), name, info, pictures), report
