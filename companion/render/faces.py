"""Procedural card faces in many deck styles.

A DeckStyle fixes what a real deck fixes (index font and size, where the index
sits, stock colour, inks, pip shapes, court art palette, corner radius); a
Deck renders faces in that style on demand and knows, for every face, the
exact box around each corner index (rank and pip together) in face pixels.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..engine.cards import CLASS_NAMES, RANKS
from .fonts import available_fonts
from .suits import draw_pip, pip_extent

FACE_WIDTH = 200

# Pip centres for 2-10: (column -1/0/1, row 0..1 from top of the pip area).
_LAYOUTS = {
    2: [(0, 0), (0, 1)],
    3: [(0, 0), (0, .5), (0, 1)],
    4: [(-1, 0), (1, 0), (-1, 1), (1, 1)],
    5: [(-1, 0), (1, 0), (0, .5), (-1, 1), (1, 1)],
    6: [(-1, 0), (1, 0), (-1, .5), (1, .5), (-1, 1), (1, 1)],
    7: [(-1, 0), (1, 0), (0, .25), (-1, .5), (1, .5), (-1, 1), (1, 1)],
    8: [(-1, 0), (1, 0), (0, .25), (-1, .5), (1, .5), (0, .75), (-1, 1), (1, 1)],
    9: [(-1, 0), (1, 0), (-1, 1 / 3), (1, 1 / 3), (0, .5), (-1, 2 / 3), (1, 2 / 3), (-1, 1),
        (1, 1)],
    10: [(-1, 0), (1, 0), (0, 1 / 6), (-1, 1 / 3), (1, 1 / 3), (-1, 2 / 3), (1, 2 / 3),
         (0, 5 / 6), (-1, 1), (1, 1)],
}


@dataclass
class Face:
    image: np.ndarray                 # H x W x 3, BGR
    alpha: np.ndarray                 # H x W, 255 inside the card (rounded corners)
    index_boxes: list[tuple[float, float, float, float]]   # x1, y1, x2, y2 in face pixels
    cls: int | None                   # detector class, None for jokers and backs


@dataclass(frozen=True)
class DeckStyle:
    seed: int
    aspect: float             # height / width: poker 1.40, bridge 1.55
    font: str
    rank_frac: float          # rank glyph height / card height
    margin_x: float           # index left edge / card width
    margin_y: float           # index top edge / card height
    pip_frac: float           # corner pip height / rank height
    pip_gap: float            # gap between rank and pip / rank height
    side_by_side: bool        # corner pip beside the rank instead of under it
    four_corners: bool
    ten_squeeze: float        # "10" drawn narrower in many decks
    paper: tuple[int, int, int]
    black: tuple[int, int, int]
    red: tuple[int, int, int]
    four_colour: bool
    corner_radius: float
    border: bool
    pip_variant: int
    centre_pip_frac: float
    court_palette: tuple[tuple[int, int, int], ...] = field(default=())
    back_colour: tuple[int, int, int] = (40, 40, 160)

    @classmethod
    def random(cls, seed: int) -> "DeckStyle":
        rng = np.random.default_rng(seed)
        fonts = available_fonts()
        font = fonts[rng.integers(len(fonts))][0]
        tint = rng.normal(0, 4, 3)
        base = rng.uniform(228, 252)
        paper = tuple(int(np.clip(base + tint[i] + (4 if i == 2 else 0) * rng.random(), 200, 255))
                      for i in range(3))
        k = rng.uniform(10, 60)
        black = tuple(int(np.clip(k + rng.normal(0, 6), 0, 90)) for _ in range(3))
        red = (int(rng.uniform(15, 70)), int(rng.uniform(10, 55)), int(rng.uniform(165, 235)))
        palette = []
        for _ in range(6):
            hue = rng.choice(["red", "blue", "yellow", "green", "black", "skin"])
            palette.append({
                "red": (int(rng.uniform(20, 60)), int(rng.uniform(20, 60)), int(rng.uniform(170, 230))),
                "blue": (int(rng.uniform(140, 220)), int(rng.uniform(60, 120)), int(rng.uniform(10, 60))),
                "yellow": (int(rng.uniform(20, 80)), int(rng.uniform(170, 220)), int(rng.uniform(200, 250))),
                "green": (int(rng.uniform(40, 90)), int(rng.uniform(120, 170)), int(rng.uniform(30, 80))),
                "black": (30, 30, 30),
                "skin": (int(rng.uniform(150, 200)), int(rng.uniform(180, 215)), int(rng.uniform(220, 250))),
            }[hue])
        return cls(
            seed=seed,
            aspect=1.40 if rng.random() < 0.75 else 1.55,
            font=font,
            rank_frac=float(rng.uniform(0.075, 0.13)),
            margin_x=float(rng.uniform(0.035, 0.09)),
            margin_y=float(rng.uniform(0.03, 0.07)),
            pip_frac=float(rng.uniform(0.55, 0.95)),
            pip_gap=float(rng.uniform(0.03, 0.22)),
            side_by_side=bool(rng.random() < 0.07),
            four_corners=bool(rng.random() < 0.12),
            ten_squeeze=float(rng.uniform(0.68, 1.0)),
            paper=paper, black=black, red=red,
            four_colour=bool(rng.random() < 0.05),
            corner_radius=float(rng.uniform(0.03, 0.08)),
            border=bool(rng.random() < 0.25),
            pip_variant=int(rng.integers(4)),
            centre_pip_frac=float(rng.uniform(0.115, 0.165)),
            court_palette=tuple(palette),
            back_colour=tuple(int(c) for c in rng.choice(
                [(40, 40, 170), (150, 70, 30), (40, 110, 40), (30, 30, 30), (120, 40, 120)])),
        )


@functools.lru_cache(maxsize=64)
def _font(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size)


@functools.lru_cache(maxsize=32)
def _cap_ratio(path: str) -> float:
    """Glyph height of capitals and digits per point of font size."""
    f = _font(path, 200)
    x0, y0, x1, y1 = f.getbbox("KQJA1")
    return (y1 - y0) / 200


def _text_mask(text: str, font_path: str, glyph_h: float, squeeze: float = 1.0) -> np.ndarray:
    """A tight alpha mask of text whose capitals are glyph_h pixels tall."""
    size = max(6, int(round(glyph_h / _cap_ratio(font_path))))
    f = _font(font_path, size)
    x0, y0, x1, y1 = f.getbbox(text)
    im = Image.new("L", (x1 - x0 + 4, y1 - y0 + 4), 0)
    ImageDraw.Draw(im).text((2 - x0, 2 - y0), text, fill=255, font=f)
    mask = np.asarray(im)
    ys, xs = np.nonzero(mask > 20)
    mask = mask[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    if squeeze < 0.999:
        mask = cv2.resize(mask, (max(2, int(mask.shape[1] * squeeze)), mask.shape[0]),
                          interpolation=cv2.INTER_AREA)
    return mask


def _paint(img: np.ndarray, mask: np.ndarray, x: int, y: int, colour) -> None:
    """Composite an alpha mask of ink onto img at (x, y), clipped."""
    h, w = mask.shape
    H, W = img.shape[:2]
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, W), min(y + h, H)
    if x1 <= x0 or y1 <= y0:
        return
    a = mask[y0 - y:y1 - y, x0 - x:x1 - x].astype(np.float32)[..., None] / 255
    roi = img[y0:y1, x0:x1].astype(np.float32)
    img[y0:y1, x0:x1] = (roi * (1 - a) + np.array(colour, np.float32) * a).astype(np.uint8)


class Deck:
    """Faces of one deck style, rendered once and kept."""

    def __init__(self, style: DeckStyle, width: int = FACE_WIDTH) -> None:
        self.style = style
        self.w = width
        self.h = int(round(width * style.aspect))
        self._cache: dict[object, Face] = {}
        rng = np.random.default_rng(style.seed + 1)
        # Card stock: the paper colour with a faint fibre texture.
        grain = rng.normal(0, 1.6, (self.h, self.w, 1)).astype(np.float32)
        grain = cv2.GaussianBlur(grain, (0, 0), 0.8)[..., None]
        self._paper = np.clip(np.array(style.paper, np.float32) + grain, 0, 255).astype(np.uint8)
        self._alpha = self._rounded_alpha()

    def _rounded_alpha(self) -> np.ndarray:
        s = 4
        r = int(self.style.corner_radius * self.w * s)
        a = np.zeros((self.h * s, self.w * s), np.uint8)
        W, H = self.w * s, self.h * s
        cv2.rectangle(a, (r, 0), (W - 1 - r, H - 1), 255, -1)
        cv2.rectangle(a, (0, r), (W - 1, H - 1 - r), 255, -1)
        for cx, cy in ((r, r), (W - 1 - r, r), (r, H - 1 - r), (W - 1 - r, H - 1 - r)):
            cv2.circle(a, (cx, cy), r, 255, -1)
        return cv2.resize(a, (self.w, self.h), interpolation=cv2.INTER_AREA)

    def ink(self, suit: str) -> tuple[int, int, int]:
        st = self.style
        if st.four_colour and suit == "d":
            return (170, 90, 20)
        if st.four_colour and suit == "c":
            return (40, 120, 30)
        return st.red if suit in "hd" else st.black

    # ----------------------------------------------------------------- faces
    def face(self, cls: int) -> Face:
        """The face of detector class cls (0..51, CLASS_NAMES order)."""
        if cls not in self._cache:
            self._cache[cls] = self._render_face(cls)
        return self._cache[cls]

    def _blank(self) -> np.ndarray:
        img = self._paper.copy()
        st = self.style
        if st.border:
            inset = int(self.w * 0.025)
            cv2.rectangle(img, (inset, inset), (self.w - 1 - inset, self.h - 1 - inset),
                          st.black, 1, cv2.LINE_AA)
        return img

    def _index(self, rank: str, suit: str) -> tuple[np.ndarray, float, float]:
        """Alpha mask of one corner index (rank + pip), and its pip height and offset."""
        st = self.style
        rank_h = st.rank_frac * self.h
        text = _text_mask(rank, st.font, rank_h, st.ten_squeeze if rank == "10" else 1.0)
        pip_h = rank_h * st.pip_frac
        pw, ph = pip_extent(suit, pip_h, st.pip_variant)
        gap = rank_h * st.pip_gap
        th, tw = text.shape
        if st.side_by_side:
            W = int(tw + gap + pw + 3)
            H = int(max(th, ph) + 3)
            canvas = np.zeros((H, W), np.uint8)
            canvas[:th, :tw] = text
            draw_pip(canvas, suit, tw + gap + pw / 2, th / 2, pip_h, (255,), 0, st.pip_variant)
        else:
            W = int(max(tw, pw) + 3)
            H = int(th + gap + ph + 3)
            canvas = np.zeros((H, W), np.uint8)
            x = int((W - tw) / 2)
            canvas[:th, x:x + tw] = text
            draw_pip(canvas, suit, W / 2, th + gap + ph / 2, pip_h, (255,), 0, st.pip_variant)
        return canvas, pip_h, gap

    def _render_face(self, cls: int) -> Face:
        name = CLASS_NAMES[cls]
        rank, suit = name[:-1], name[-1]
        st = self.style
        img = self._blank()
        ink = self.ink(suit)
        idx, _, _ = self._index(rank, suit)
        ih, iw = idx.shape
        x = int(st.margin_x * self.w)
        y = int(st.margin_y * self.h)
        boxes = []
        corners = [(x, y, False), (self.w - x - iw, self.h - y - ih, True)]
        if st.four_corners:
            corners += [(self.w - x - iw, y, False), (x, self.h - y - ih, True)]
        for cx, cy, flip in corners:
            _paint(img, idx[::-1, ::-1] if flip else idx, cx, cy, ink)
            ys, xs = np.nonzero(idx > 40)
            if flip:
                x1, y1 = cx + iw - 1 - xs.max(), cy + ih - 1 - ys.max()
                x2, y2 = cx + iw - xs.min(), cy + ih - ys.min()
            else:
                x1, y1, x2, y2 = cx + xs.min(), cy + ys.min(), cx + xs.max() + 1, cy + ys.max() + 1
            pad = 0.06 * (y2 - y1)
            boxes.append((x1 - pad, y1 - pad, x2 + pad, y2 + pad))
        rng = np.random.default_rng((st.seed, cls))
        value = RANKS.index(rank) + 1
        # The centre keeps clear of the indices: a column wide enough for the index plus margin.
        clear_x = x + iw + 0.02 * self.w
        if value == 1:
            h = self.h * rng.uniform(0.24, 0.36) * (1.25 if suit == "s" else 1.0)
            draw_pip(img, suit, self.w / 2, self.h / 2, h, ink, 0, st.pip_variant)
            if suit == "s" and rng.random() < 0.6:   # the ornate ace of spades
                cv2.ellipse(img, (self.w // 2, self.h // 2), (int(h * 0.7), int(h * 0.75)), 0, 0,
                            360, ink, max(1, int(h * 0.03)), cv2.LINE_AA)
        elif value <= 10:
            pip_h = st.centre_pip_frac * self.h * (0.88 if value >= 9 else 1.0)
            pw, _ = pip_extent(suit, pip_h, st.pip_variant)
            col = max(self.w * 0.2, self.w / 2 - clear_x - pw / 2 - 2)
            col = min(col, self.w * 0.24)
            top, bottom = 0.15 * self.h + pip_h / 2, 0.85 * self.h - pip_h / 2
            for cx, ry in _LAYOUTS[value]:
                px = self.w / 2 + cx * col
                py = top + (bottom - top) * ry
                draw_pip(img, suit, px, py, pip_h, ink, 180 if ry > 0.5 else 0, st.pip_variant)
        else:
            self._court(img, rank, suit, ink, clear_x, rng)
        return Face(img, self._alpha, boxes, cls)

    def _court(self, img, rank, suit, ink, clear_x, rng) -> None:
        """Busy coloured court art in a frame, double-ended like a real court card."""
        st = self.style
        x0 = int(max(clear_x, 0.16 * self.w))
        x1 = self.w - x0
        y0 = int(0.1 * self.h)
        y1 = self.h - y0
        mid = (y0 + y1) // 2
        art = img[y0:mid, x0:x1].copy()
        ah, aw = art.shape[:2]
        pal = [tuple(int(c) for c in p) for p in st.court_palette] or [ink]
        for _ in range(int(rng.integers(10, 22))):
            n = int(rng.integers(3, 6))
            pts = np.stack([rng.uniform(-0.1, 1.1, n) * aw, rng.uniform(0, 1.1, n) * ah], 1)
            colour = pal[int(rng.integers(len(pal)))]
            cv2.fillPoly(art, [pts.astype(np.int32)], colour, cv2.LINE_AA)
            cv2.polylines(art, [pts.astype(np.int32)], True, st.black, 1, cv2.LINE_AA)
        for _ in range(int(rng.integers(3, 8))):   # stripes and robe lines
            p = rng.uniform(0, 1, 4) * (aw, ah, aw, ah)
            cv2.line(art, (int(p[0]), int(p[1])), (int(p[2]), int(p[3])),
                     pal[int(rng.integers(len(pal)))], int(rng.integers(1, 4)), cv2.LINE_AA)
        # A face: skin ellipse, eyes, hair or crown.
        fx, fy = int(aw * rng.uniform(0.35, 0.65)), int(ah * rng.uniform(0.3, 0.5))
        fr = int(aw * rng.uniform(0.12, 0.18))
        cv2.ellipse(art, (fx, fy), (fr, int(fr * 1.25)), 0, 0, 360, (170, 200, 240), -1, cv2.LINE_AA)
        cv2.ellipse(art, (fx, fy), (fr, int(fr * 1.25)), 0, 0, 360, st.black, 1, cv2.LINE_AA)
        for ex in (-0.4, 0.4):
            cv2.circle(art, (int(fx + ex * fr), int(fy - 0.15 * fr)), max(1, fr // 7), st.black, -1)
        crown_y = fy - int(fr * 1.3)
        teeth = np.array([[fx - fr + i * fr // 2, crown_y - (fr // 2 if i % 2 else 0)]
                          for i in range(5)], np.int32)
        cv2.polylines(art, [teeth], False, (40, 190, 230), max(2, fr // 4), cv2.LINE_AA)
        draw_pip(art, suit, aw * 0.14, ah * 0.14, ah * rng.uniform(0.12, 0.2), ink, 0, st.pip_variant)
        img[y0:mid, x0:x1] = art
        img[mid:mid + ah, x0:x1] = art[::-1, ::-1][: self.h - mid]
        cv2.rectangle(img, (x0, y0), (x1 - 1, y1 - 1), st.black, 1, cv2.LINE_AA)

    # ----------------------------------------------------------------- others
    def joker(self, which: int = 0) -> Face:
        key = ("joker", which)
        if key not in self._cache:
            img = self._blank()
            st = self.style
            ink = st.red if which == 0 else st.black
            y = int(st.margin_y * self.h)
            for ch in "JOKER":
                m = _text_mask(ch, st.font, st.rank_frac * self.h * 0.6)
                _paint(img, m, int(st.margin_x * self.w), y, ink)
                y += m.shape[0] + 2
            rng = np.random.default_rng((st.seed, 99, which))
            self._court(img, "J", "s", ink, 0.2 * self.w, rng)
            self._cache[key] = Face(img, self._alpha, [], None)
        return self._cache[key]

    def back(self) -> Face:
        if "back" not in self._cache:
            st = self.style
            img = np.empty((self.h, self.w, 3), np.uint8)
            img[:] = st.paper
            inset = int(0.06 * self.w)
            img[inset:self.h - inset, inset:self.w - inset] = st.back_colour
            step = max(6, self.w // 14)
            light = tuple(min(255, c + 70) for c in st.back_colour)
            for d in range(-self.h, self.w + self.h, step):
                cv2.line(img, (d, inset), (d + self.h, self.h + inset), light, 1, cv2.LINE_AA)
                cv2.line(img, (d, inset), (d - self.h, self.h + inset), light, 1, cv2.LINE_AA)
            img[:inset] = st.paper
            img[self.h - inset:] = st.paper
            img[:, :inset] = st.paper
            img[:, self.w - inset:] = st.paper
            self._cache["back"] = Face(img, self._alpha, [], None)
        return self._cache["back"]


def contact_sheet_of_deck(deck: Deck, cols: int = 13) -> np.ndarray:
    """All 52 faces of a deck in a grid, index boxes drawn: for looking at styles."""
    faces = [deck.face(c) for c in range(52)]
    h, w = deck.h, deck.w
    sheet = np.full(((52 // cols) * (h + 4), cols * (w + 4), 3), 90, np.uint8)
    for i, f in enumerate(faces):
        r, c = divmod(i, cols)
        tile = f.image.copy()
        for x1, y1, x2, y2 in f.index_boxes:
            cv2.rectangle(tile, (int(x1), int(y1)), (int(x2), int(y2)), (0, 200, 0), 1)
        tile[f.alpha < 128] = 90
        sheet[r * (h + 4):r * (h + 4) + h, c * (w + 4):c * (w + 4) + w] = tile
    return sheet
