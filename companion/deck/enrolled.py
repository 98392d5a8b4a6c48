"""An enrolled deck: the corner reader's last layer fitted to one deck's cards.

The reader's heads (is there an index, rank, suit, ink colour) are one linear layer on
its pooled features (`CornerReader.read`). Enrolling (enrol.py) cuts many variations of
each card's two corners (box jitter, blur, light, noise) and fits a copy of that layer
to them, starting from the shipped weights (a short fit, so what the reader knows of
cards in general stays); the card read sideways and its middle are fitted as "no
index". Reading
with a deck is the same sum (features x weights) with the deck's weights, so the
detector, the tracker and every command work unchanged, at no cost.

The file is one compressed `.npz` (numpy arrays and a JSON header; no pickles), tied to
the reader it was enrolled with: another reader's features mean nothing to these weights.
"""

from __future__ import annotations

import hashlib
import json
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from ..detector.card_reader import HEADS, NONE_CLASS, card_probabilities
from ..detector.middle_reader import MID_H, MID_W
from ..engine.cards import CLASS_NAMES, RANKS
from ..paths import user_data_dir

FORMAT = "ratscrew-deck/1"
SUFFIX = ".deck"
COURTS = ("J", "Q", "K")
# A court is "unclear" where another court of its suit fits its middle better than it does
# by this much (normalised cross-correlation, -1..1). Chosen on the choice style 555555555
# (20 scenes a card, video settings): of 237 courts the deck names, 3 are wrong (Js->Qs,
# Qh->Jh, Jc->Js; their own picture fits 0.26-0.32 worse than another's) and at 0.2 all
# three are unclear and 2 right ones; comparing with all twelve courts lost 4.
PICTURE_MARGIN = 0.2
# ...and only where some court's picture fits the middle at least this well: a middle cut by
# an outline that misses the card (a box grown round it, turned, on the card below) fits
# every court about alike (0.3-0.55 on the test style's queen, against 0.8-0.95 through a
# snapped outline), and its margins are noise. (Session 35: without it, the held-out style
# 987654321 read 12 fewer cards right in the photo settings.)
PICTURE_FIT = 0.7


def is_court(cls: int) -> bool:
    return RANKS[cls % len(RANKS)] in COURTS


# A loose outline (a box grown round the card, the finder's on a pale table) shows the card
# smaller in its middle crop: the crop is also compared zoomed in by these factors.
PICTURE_ZOOMS = (1.0, 1.1, 1.2)


def _picture_vector(middle: np.ndarray) -> np.ndarray:
    """A middle crop as a unit vector, each colour channel's mean and spread taken away
    (light and a camera's white balance change a picture's level, contrast and cast, not
    its shape)."""
    v = cv2.GaussianBlur(middle, (3, 3), 0).astype(np.float32).reshape(-1, 3)
    v = (v - v.mean(0)) / (v.std(0) + 1.0)
    return (v / (np.linalg.norm(v) + 1e-6)).ravel()


def _zoomed(middle: np.ndarray, zoom: float) -> np.ndarray:
    if zoom == 1.0:
        return middle
    h, w = middle.shape[:2]
    ch, cw = round(h / zoom), round(w / zoom)
    y, x = (h - ch) // 2, (w - cw) // 2
    return cv2.resize(middle[y:y + ch, x:x + cw], (w, h), interpolation=cv2.INTER_LINEAR)


class DeckError(ValueError):
    """A deck file or name that cannot be used; the message names it."""


def reader_id(path: str | Path) -> str:
    """A short fingerprint of a corner reader file: a deck is only valid with its reader.
    An int8 copy (training/quantize.py) carries its float source's fingerprint in its
    metadata ("source_reader") and shares it: its features are that reader's, rounded
    (a deck read through either names the same cards; model card)."""
    data = Path(path).read_bytes()
    try:
        import onnx
        meta = {p.key: p.value for p in onnx.load_from_string(data).metadata_props}
    except Exception:       # not an ONNX file at all: its bytes are its identity
        meta = {}
    return meta.get("source_reader") or hashlib.sha256(data).hexdigest()[:16]


def decks_dir() -> Path:
    return user_data_dir() / "decks"


def deck_path(name_or_path: str | Path, for_writing: bool = False) -> Path:
    """A name without a folder or suffix ("club") is a deck in the user's data directory;
    anything else is a path."""
    text = str(name_or_path)
    p = Path(text)
    if p.parent == Path(".") and not p.suffix and not text.startswith("."):
        p = decks_dir() / f"{text}{SUFFIX}"
        if for_writing:
            p.parent.mkdir(parents=True, exist_ok=True)
    return p


@dataclass
class EnrolledDeck:
    weights: np.ndarray                   # (20, D): the heads' weights fitted to this deck
    bias: np.ndarray                      # (20,)
    cards: list[str]                      # the cards enrolled
    reader: str                           # reader_id of the reader the weights belong to
    name: str = "deck"
    info: dict = field(default_factory=dict)   # photos, variations, when enrolled
    # Court class -> its enrolled middle (MID_H x MID_W x 3, corners blanked): the picture.
    pictures: dict[int, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.weights = np.asarray(self.weights, np.float32)
        self.bias = np.asarray(self.bias, np.float32)
        # Each picture either end up: a court is read from whichever end is up.
        self._vectors = {c: (_picture_vector(m), _picture_vector(np.ascontiguousarray(m[::-1, ::-1])))
                         for c, m in self.pictures.items()}

    def picture_agrees(self, middle: np.ndarray, cls: int) -> bool:
        """Whether a card named `cls` may stand, given its middle (middle_reader.middle_crop):
        a court does not where another enrolled court of its suit fits that middle better
        by PICTURE_MARGIN (and fits it at PICTURE_FIT at least). Numbers, and courts whose
        suit has no other picture enrolled, always may."""
        if not is_court(cls) or cls not in self._vectors:
            return True
        suit = cls - cls % len(RANKS)
        others = [c for c in self._vectors if c != cls and c - c % len(RANKS) == suit]
        if not others:
            return True
        # Compared at the zoom where some court's picture fits best: the card's alignment.
        best = (-2.0, 0.0)
        for zoom in PICTURE_ZOOMS:
            v = _picture_vector(_zoomed(middle, zoom))
            fit = {c: max(float(t @ v) for t in self._vectors[c]) for c in others + [cls]}
            other = max(fit[c] for c in others)
            best = max(best, (max(other, fit[cls]), other - fit[cls]))
        return best[0] < PICTURE_FIT or best[1] <= PICTURE_MARGIN

    @property
    def id(self) -> str:
        """A short fingerprint of the fitted weights: which deck a session log was kept with."""
        return hashlib.sha1(self.weights.tobytes() + self.bias.tobytes()).hexdigest()[:12]

    @property
    def missing(self) -> list[str]:
        return [n for n in CLASS_NAMES if n not in set(self.cards)]

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """(N, 53) probabilities of corner crops' features: 52 cards, then "no index"."""
        if len(features) == 0:
            return np.zeros((0, NONE_CLASS + 1), np.float32)
        return card_probabilities(np.asarray(features, np.float32) @ self.weights.T + self.bias)

    # ------------------------------------------------------------ file
    def save(self, path: str | Path) -> Path:
        path = Path(path)
        header = {"format": FORMAT, "name": self.name, "reader": self.reader,
                  "cards": self.cards, "missing": self.missing, "info": self.info,
                  "saved": time.strftime("%Y-%m-%dT%H:%M:%S")}
        tmp = path.with_name(path.name + ".tmp")
        with tmp.open("wb") as fh:   # written aside, then moved: a crash never leaves half a deck
            order = sorted(self.pictures)
            np.savez_compressed(fh, weights=self.weights, bias=self.bias,
                                header=np.frombuffer(json.dumps(header).encode(), np.uint8),
                                picture_cards=np.int64(order),
                                pictures=np.zeros((0, MID_H, MID_W, 3), np.uint8) if not order
                                else np.stack([self.pictures[c] for c in order]).astype(np.uint8))
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, name_or_path: str | Path, reader: str | None = None) -> "EnrolledDeck":
        """The deck, or one DeckError naming the file. reader: the reader_id the deck must
        have been enrolled with."""
        path = deck_path(name_or_path)
        if not path.is_file():
            where = f" (named decks live in {decks_dir()})" if path.parent == decks_dir() else ""
            raise DeckError(f"{path}: no such deck file{where}; make one with `companion enrol`")
        try:
            with np.load(path, allow_pickle=False) as z:
                header = json.loads(bytes(z["header"]).decode())
                weights, bias = z["weights"].astype(np.float32), z["bias"].astype(np.float32)
                # Decks enrolled before session 35 keep no pictures: their courts go unchecked.
                pictures = {}
                if "pictures" in z.files and "picture_cards" in z.files:
                    pics, which = z["pictures"], z["picture_cards"]
                    if pics.shape[1:] != (MID_H, MID_W, 3) or len(pics) != len(which):
                        raise ValueError(f"pictures {pics.shape} for {len(which)} cards")
                    pictures = {int(c): p for c, p in zip(which, pics)
                                if 0 <= int(c) < len(CLASS_NAMES)}
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile,
                UnicodeDecodeError) as exc:
            raise DeckError(f"{path}: not a deck file (unreadable or corrupt: "
                            f"{str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__})"
                            ) from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            got = header.get("format") if isinstance(header, dict) else None
            raise DeckError(f"{path}: not a deck file (format {got!r}, expected {FORMAT!r})")
        if weights.ndim != 2 or weights.shape[0] != sum(HEADS) or bias.shape != (sum(HEADS),):
            raise DeckError(f"{path}: not a deck file (weights {weights.shape}, expected "
                            f"({sum(HEADS)}, features))")
        if reader is not None and header.get("reader") != reader:
            raise DeckError(f"{path}: enrolled with another corner reader "
                            f"({header.get('reader')}, this one is {reader}); enrol the deck "
                            "again with this reader")
        cards = [c for c in header.get("cards", []) if c in CLASS_NAMES]
        return cls(weights, bias, cards, header.get("reader", ""), header.get("name", path.stem),
                   header.get("info", {}), pictures)
