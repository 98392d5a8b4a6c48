"""An enrolled deck: the corner reader's last layer fitted to one deck's cards.

The reader's heads (is there an index, rank, suit, ink colour) are one linear layer on
its pooled features (`CornerReader.read`). Enrolling (enrol.py) cuts many variations of
each card's two corners (box jitter, blur, light, noise) and fits a copy of that layer
to them, starting from the shipped weights (a short fit, so what the reader knows of
cards in general stays); the card read sideways and its middle are fitted as "no
index". Reading
with a deck is the same sum (features x weights) with the deck's weights, so the
detector, the tracker and every command work unchanged, at next to no cost.

The file is one compressed `.npz` (numpy arrays and a JSON header; no pickles), tied to
the reader it was enrolled with: another reader's features mean nothing to these weights.

A deck also keeps a thumbnail of each enrolled court card's middle (its picture, which
no other card of the deck shares): a card read as a court whose middle looks more like
another enrolled court's than its own is "unclear" (`doubts_court`). An index read one
letter off (a J for a Q) keeps the suit and the colours of its corner, so the corner
cannot catch it; the picture can. A deck file without thumbnails reads as before.
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
from ..engine.cards import CLASS_NAMES
from ..paths import user_data_dir

FORMAT = "ratscrew-deck/1"
SUFFIX = ".deck"
COURTS = [i for i, n in enumerate(CLASS_NAMES) if n[:-1] in ("J", "Q", "K")]
# A court's middle, straightened and corners blanked (middle_reader.middle_crop), shrunk
# to this (width, height) and its edge of THUMB_EDGE pixels dropped (the card's border
# and whatever of the table the outline took in).
THUMB_SIZE, THUMB_EDGE = (24, 34), 3
THUMB_SHAPE = (THUMB_SIZE[1] - 2 * THUMB_EDGE, THUMB_SIZE[0] - 2 * THUMB_EDGE, 3)
# How much better another court's middle must match (normalised cross-correlation) for a
# court reading to be doubted. Chosen in session 43 on the choice styles 555555555 and
# 444444444 (rendered scenes, 20 a card, video settings): at 0.1 it doubted 2 right
# courts of each; at 0.15 and 0.2 none, and all 4 wrong courts (Js->Qs, Qh->Jh, Jc->Js,
# Ks->Kc: margins 0.24 to 0.70); at 0.3 Ks->Kc was kept. The middle of that safe range.
COURT_MARGIN = 0.2


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
    middles: dict[int, np.ndarray] = field(default_factory=dict)   # court class -> thumbnail

    def __post_init__(self) -> None:
        self.weights = np.asarray(self.weights, np.float32)
        self.bias = np.asarray(self.bias, np.float32)

    def doubts_court(self, middles: list[np.ndarray], cls: int) -> bool:
        """Whether a card read as court `cls` is rather another enrolled court, judged on
        its middle crops (middle_reader.middle_crop, one per outline of the card): on
        the crop that fits some enrolled picture best (either way up), another court's
        picture fits better than its own by more than COURT_MARGIN. False for other
        cards and unenrolled courts."""
        if cls not in self.middles or len(self.middles) < 2 or not middles:
            return False
        best = None
        for middle in middles:
            t = middle_thumbnail(middle)
            sim = {c: max(float((t * m).sum()), float((t * m[::-1, ::-1]).sum()))
                   for c, m in self.middles.items()}
            if best is None or max(sim.values()) > max(best.values()):
                best = sim
        own = best.pop(cls)
        return max(best.values()) > own + COURT_MARGIN

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
            np.savez_compressed(fh, weights=self.weights, bias=self.bias,
                                middle_cards=np.int64(sorted(self.middles)),
                                middles=np.float32([self.middles[c] for c in sorted(self.middles)])
                                .reshape(-1, *THUMB_SHAPE),
                                header=np.frombuffer(json.dumps(header).encode(), np.uint8))
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
                # Decks enrolled before session 43 hold no court middles.
                middles = {int(c): m for c, m in zip(z["middle_cards"], z["middles"].astype(
                    np.float32))} if "middles" in z.files else {}
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
        if any(c not in COURTS or m.shape != THUMB_SHAPE for c, m in middles.items()):
            raise DeckError(f"{path}: not a deck file (its court middles are not "
                            f"{len(COURTS)} courts' {THUMB_SHAPE} thumbnails)")
        if reader is not None and header.get("reader") != reader:
            raise DeckError(f"{path}: enrolled with another corner reader "
                            f"({header.get('reader')}, this one is {reader}); enrol the deck "
                            "again with this reader")
        cards = [c for c in header.get("cards", []) if c in CLASS_NAMES]
        return cls(weights, bias, cards, header.get("reader", ""), header.get("name", path.stem),
                   header.get("info", {}), middles)


def middle_thumbnail(middle: np.ndarray) -> np.ndarray:
    """A card's middle crop (middle_reader.middle_crop) as a small colour picture with
    zero mean per colour and unit length: two such pictures' dot product is their
    normalised cross-correlation (light and contrast cancel out)."""
    t = cv2.resize(middle, THUMB_SIZE, interpolation=cv2.INTER_AREA).astype(np.float32)
    t = t[THUMB_EDGE:-THUMB_EDGE, THUMB_EDGE:-THUMB_EDGE]
    t -= t.mean((0, 1))
    return t / (np.linalg.norm(t) + 1e-6)
