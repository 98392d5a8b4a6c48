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

A deck also keeps each enrolled card's picture (its middle, straightened, corners
blanked: middle_reader.middle_crop). A court's picture is its own: a card read as a court
whose middle looks more like another enrolled court's than its own is "unclear"
(`doubts_court`); an index read one letter off (a J for a Q) keeps the suit and the
colours of its corner, so the corner cannot catch it, the picture can. And where no
outline of a picture names a card, a card is named whose picture fits an outline's middle
clearly best while its corners give it some weight (`names_by_picture`). A deck file
without pictures reads as before.
"""

from __future__ import annotations

import hashlib
import json
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from ..detector.card_reader import HEADS, NONE_CLASS, card_probabilities
from ..detector.middle_reader import MID_H, MID_W
from ..engine.cards import CLASS_NAMES, COURT_CLASSES
from ..paths import user_data_dir

FORMAT = "ratscrew-deck/1"
SUFFIX = ".deck"
# A card's picture is compared at the middle crop's full size (48 x 68) less an edge of
# THUMB_EDGE pixels (the card's border and whatever of the table the outline took in),
# against the enrolled picture sharp and blurred by each of PICTURE_BLURS (Gaussian sigma,
# pixels): a scene's motion or focus blur takes a busy picture's detail (a Jd of small
# coloured triangles), which made it fit a plainer court as well as its own when compared
# at 18 x 28 px and sharp only (sessions 43-45). Chosen in session 46 on five styles' court judgements (video) and two
# (photo), replayed: right / wrong 7084 / 24 at 18 x 28 sharp, 7089 / 24 this way.
THUMB_EDGE = 6
PICTURE_BLURS = (0.0, 1.5, 3.0)
PICTURE_SHAPE = (MID_H, MID_W, 3)
COURT_MARGIN = 0.2
# names_by_picture: how much the corners' pooled reading must give the card (SUPPORT) and
# how much better its picture must fit than any other enrolled card's (MARGIN). Chosen in
# session 46 on the choice styles 555555555 and 444444444 (replayed): video 1004 + 1023
# -> 1008 + 1023 right, none wrong (at (0.15, 0.1) one wrong, a 4c named 2c); the same
# constants on photos 1014 + 1029 -> 1022 + 1033, none wrong. Held out, style 173205080:
# video 1016 -> 1018, photos 1033 -> 1037, no wrong card added.
PICTURE_SUPPORT, PICTURE_MARGIN = 0.3, 0.1


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
    pictures: dict[int, np.ndarray] = field(default_factory=dict)   # card class -> its middle
    load_note: str = ""                   # what a user should know of the file, once loaded

    def __post_init__(self) -> None:
        self.weights = np.asarray(self.weights, np.float32)
        self.bias = np.asarray(self.bias, np.float32)
        self._templates: dict[tuple, np.ndarray] = {}
        self._pictures_key: tuple = ()

    def templates(self, among: list[int]) -> np.ndarray:
        """`among`'s pictures as thumbnails (each blur of PICTURE_BLURS, each way up),
        one row each, as (len(among) x 6, pixels): made once for each set of cards asked
        about, again only when the pictures change."""
        key = tuple((c, id(m)) for c, m in sorted(self.pictures.items()))
        if key != self._pictures_key:
            self._templates, self._pictures_key = {}, key
        if tuple(among) not in self._templates:
            rows = []
            for c in among:
                sharp_and_blurred = [middle_thumbnail(self.pictures[c], b) for b in PICTURE_BLURS]
                rows += [t.ravel() for t in sharp_and_blurred]
                rows += [t[::-1, ::-1].ravel() for t in sharp_and_blurred]
            self._templates[tuple(among)] = np.stack(rows)
        return self._templates[tuple(among)]

    def _fits(self, middle: np.ndarray, among: list[int]) -> np.ndarray:
        """How well a middle crop fits each of `among`'s pictures (normalised
        cross-correlation, the best of either way up, sharp or blurred)."""
        scores = self.templates(among) @ middle_thumbnail(middle).ravel()
        return scores.reshape(len(among), -1).max(1)

    def doubts_court(self, middles: list[np.ndarray], cls: int) -> bool:
        """Whether a card read as court `cls` is rather another enrolled court, judged on
        its middle crops (middle_reader.middle_crop, one per outline of the card): on
        the crop that fits some enrolled court's picture best, another court's picture
        fits better than its own by more than COURT_MARGIN. False for other cards and
        unenrolled courts."""
        courts = sorted(c for c in COURT_CLASSES if c in self.pictures)
        if cls not in courts or len(courts) < 2 or not middles:
            return False
        best = max((self._fits(m, courts) for m in middles), key=lambda f: f.max())
        own = best[courts.index(cls)]
        return float(np.delete(best, courts.index(cls)).max()) > own + COURT_MARGIN

    def names_by_picture(self, pooled: list[np.ndarray], middle_of
                         ) -> tuple[int, float, int] | None:
        """A card for outlines that name none: `pooled` holds each outline's corners'
        pooled card probabilities, `middle_of(k)` gives outline k's middle crop (cut only
        for outlines whose corners give some card PICTURE_SUPPORT). The card whose
        picture fits an outline's middle better than every other enrolled card's by more
        than PICTURE_MARGIN, where the corners give it at least PICTURE_SUPPORT; of
        several outlines, the best fit. (card, its picture's fit, which outline), or None."""
        best = None
        for k, vector in enumerate(pooled):
            got = self.supported_fit(vector, lambda k=k: middle_of(k))
            if got is not None and (best is None or got[1] > best[1]):
                best = (got[0], got[1], k)
        return best

    def supported_fit(self, vector: np.ndarray, middle: Callable[[], np.ndarray]
                      ) -> tuple[int, float] | None:
        """The card whose picture fits an outline's middle crop better than every other
        enrolled card's by more than PICTURE_MARGIN, where the outline's corners give it
        at least PICTURE_SUPPORT (`vector`: their pooled card probabilities; `middle()`
        cuts the crop, only once some card has that support): (card, its picture's fit),
        or None. How names_by_picture judges each outline."""
        cards = sorted(self.pictures)
        if len(cards) < 2 or vector[cards].max() < PICTURE_SUPPORT:
            return None
        fits = self._fits(middle(), cards)
        i = int(fits.argmax())
        if vector[cards[i]] < PICTURE_SUPPORT or \
                fits[i] - float(np.partition(fits, -2)[-2]) <= PICTURE_MARGIN:
            return None
        return cards[i], float(fits[i])

    def picture_fits(self, middle: np.ndarray, among: list[int]) -> list[float]:
        """How well a middle crop fits each of `among`'s own pictures (cards the deck has
        pictures of): which of two overlapping readings is the card on top, whose middle
        is in view (CardReaderDetector._on_top)."""
        cards = sorted(self.pictures)
        fits = self._fits(middle, cards)
        return [float(fits[cards.index(c)]) for c in among]

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
                                picture_cards=np.int64(sorted(self.pictures)),
                                pictures=np.uint8([self.pictures[c] for c in sorted(self.pictures)])
                                .reshape(-1, *PICTURE_SHAPE),
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
                # Decks enrolled before session 43 hold no pictures; those of sessions
                # 43-45 hold small thumbnails of the courts ("middles") these comparisons
                # cannot use: both read without them (load_note says so).
                pictures = {int(c): m for c, m in zip(z["picture_cards"], z["pictures"])
                            } if "pictures" in z.files else {}
                old_pictures = "middles" in z.files and not pictures
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
        if any(not 0 <= c < len(CLASS_NAMES) or m.shape != PICTURE_SHAPE or m.dtype != np.uint8
               for c, m in pictures.items()):
            raise DeckError(f"{path}: not a deck file (its card pictures are not "
                            f"{PICTURE_SHAPE} pictures of cards)")
        if reader is not None and header.get("reader") != reader:
            raise DeckError(f"{path}: enrolled with another corner reader "
                            f"({header.get('reader')}, this one is {reader}); enrol the deck "
                            "again with this reader")
        cards = [c for c in header.get("cards", []) if c in CLASS_NAMES]
        deck = cls(weights, bias, cards, header.get("reader", ""), header.get("name", path.stem),
                   header.get("info", {}), pictures)
        if old_pictures:
            deck.load_note = (f"{path}: enrolled by an older version; it is read "
                              "without its cards' pictures (enrol the deck again to use them)")
        return deck


def middle_thumbnail(middle: np.ndarray, blur: float = 0.0) -> np.ndarray:
    """A card's middle crop (middle_reader.middle_crop), blurred by `blur` (sigma, pixels)
    and its edge dropped, with zero mean per colour and unit length: two such pictures'
    dot product is their normalised cross-correlation (light and contrast cancel out)."""
    t = middle.astype(np.float32)
    if blur:
        t = cv2.GaussianBlur(t, (0, 0), blur)
    t = t[THUMB_EDGE:-THUMB_EDGE, THUMB_EDGE:-THUMB_EDGE]
    t -= t.mean((0, 1))
    return t / (np.linalg.norm(t) + 1e-6)
