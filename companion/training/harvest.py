"""Harvest real card faces from ../shared/realdecks for the corner reader.

    python -m companion.training.harvest --split train valid --out data/realcards

Each image shows one card filling most of a 224 x 224 frame (stretched to the square,
often cut at an edge). Every image gives the card straightened to its true proportions
(`CARD_W` x `CARD_H`, in a `MARGIN` of table around it), from up to two outlines:

- the image bounds (the usual case: the frame is the card);
- the finder's box on the image padded with a table-coloured border, where the finder
  is sure and the box is clearly inside the frame (a card photographed on a table).

The corner reader's crops are then cut from these straightened cards at training time,
with the box jittered hard (real decks put their index in different places and sizes),
by the same `corner_crop` the detector uses. Jokers are kept as "no index". Nothing here
is shipped: only the weights trained on it.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from ..detector.card_reader import NONE_CLASS
from ..engine.cards import CLASS_NAMES

REALDECKS = Path(__file__).resolve().parents[3] / "shared" / "realdecks"
CARD_W, CARD_H, MARGIN = 128, 180, 24     # straightened card and the table around it (px)
PAD = 0.3                                 # border added round a 224 px image for the finder
FINDER_SURE = 0.5
INSIDE = 0.015                            # a finder box's least distance from the frame
CLEAN_INDEX = 0.2                         # an end the shipped reader sees no index in, below


def card_rect() -> np.ndarray:
    """The card's corners (TL, TR, BR, BL) in a straightened image."""
    m = float(MARGIN)
    return np.float32([[m, m], [m + CARD_W, m], [m + CARD_W, m + CARD_H], [m, m + CARD_H]])


def straighten(image: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """The card whose corners are quad (TL, TR, BR, BL) warped upright into
    (CARD_H + 2 MARGIN) x (CARD_W + 2 MARGIN), the picture around it kept as margin."""
    M = cv2.getPerspectiveTransform(np.float32(quad), card_rect())
    return cv2.warpPerspective(image, M, (CARD_W + 2 * MARGIN, CARD_H + 2 * MARGIN),
                               flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)


INK_STEP, MIN_INK = 40, 0.02   # colour step that counts as ink; share of a corner that must be ink


def index_shows(card: np.ndarray) -> list[bool]:
    """Whether each end's corner window (upright, half turned) holds any ink: a card cut
    at the frame's edge can lose an index, and a blank crop labelled with a card would
    teach the reader to see cards in blank corners."""
    from ..detector.card_reader import corner_crop
    rect = card_rect()
    out = []
    for q in (rect, np.roll(rect, -2, axis=0)):
        g = corner_crop(card, q)[0].astype(np.float32)
        med = np.median(g.reshape(-1, 3), 0)
        out.append(bool((np.abs(g - med).max(2) > INK_STEP).mean() >= MIN_INK))
    return out


def upright_order(quad: np.ndarray) -> np.ndarray:
    """A portrait box's corners as TL, TR, BR, BL of the upright card (the images show
    cards upright): the short side nearest the top of the picture comes first."""
    from ..detector.card_reader import orientations
    a, b = orientations(quad)[:2]
    return a if a[:2, 1].mean() <= b[:2, 1].mean() else b


def table_colour(rng: np.random.Generator) -> tuple[int, int, int]:
    """A plain table: grey, felt green, wood brown or dark, with some spread."""
    base = [(120, 120, 120), (60, 110, 50), (40, 80, 130), (45, 45, 45), (170, 170, 165)]
    b = np.float32(base[rng.integers(len(base))]) + rng.normal(0, 15, 3)
    return tuple(int(v) for v in np.clip(b, 0, 255))


def clean_ends(cards: np.ndarray, ends: np.ndarray, reader_path: Path) -> np.ndarray:
    """Ends whose corner window the given reader is sure holds no index (P(index) under
    `CLEAN_INDEX`) are left out too: they are mostly the junk of an outline that is not
    the card (a table, a card's middle, the black beyond a cut frame; session 32 looked
    at them), and a card's label on them teaches the reader to see cards in blank corners.
    The ends kept are those it reads an index in, however unsure of which card."""
    from ..detector.card_reader import NONE_CLASS as NONE, CornerReader, corner_crop
    reader = CornerReader(reader_path)
    rect = card_rect()
    where = np.argwhere(ends)
    crops = [corner_crop(cards[i], rect if j == 0 else np.roll(rect, -2, axis=0))[0]
             for i, j in where]
    index = np.concatenate([1 - reader(crops[k:k + 512])[:, NONE]
                            for k in range(0, len(crops), 512)]) if crops else np.zeros(0)
    out = ends.copy()
    out[tuple(where[index < CLEAN_INDEX].T)] = False
    return out


def harvest(root: Path, splits: list[str], out: Path, finder_path: Path | None,
            seed: int = 0, reader_path: Path | None = None) -> dict:
    with (root / "labels.csv").open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["split"] in splits]
    finder = None
    if finder_path is not None:
        from ..detector.card_reader import CardFinder
        finder = CardFinder(finder_path)
    rng = np.random.default_rng(seed)
    cards, ends, labels, source, split, files = [], [], [], [], [], []
    stats = {"images": 0, "unreadable": 0, "finder": 0}
    for r in tqdm(rows, desc=f"harvesting {'+'.join(splits)}", unit="image"):
        img = cv2.imread(str(root / r["file"]))
        if img is None:
            print(f"{root / r['file']}: unreadable image, skipped")
            stats["unreadable"] += 1
            continue
        stats["images"] += 1
        cls = CLASS_NAMES.index(r["card"]) if r["card"] in CLASS_NAMES else NONE_CLASS
        h, w = img.shape[:2]
        outlines = [("bounds", np.float32([[0, 0], [w, 0], [w, h], [0, h]]))]
        if finder is not None:
            p = int(PAD * max(h, w))
            padded = cv2.copyMakeBorder(img, p, p, p, p, cv2.BORDER_CONSTANT,
                                        value=table_colour(rng))
            quads, conf = finder(padded, max_cards=1)
            if len(conf) and conf[0] >= FINDER_SURE:
                q = quads[0] - p
                # Clearly inside the frame, not touching it: a box that reaches the frame's
                # edge is most often a card cut by the frame, or a part of a card (session
                # 32: 39 % of the ends of such boxes were not read as their card).
                size = np.float32([w, h])
                inside = (q.min(0) >= INSIDE * size).all() and (q.max(0) <= (1 - INSIDE) * size).all()
                area = cv2.contourArea(q) / (w * h)
                if inside and 0.3 < area < 0.85:
                    outlines.append(("finder", upright_order(q + p)))
                    img_for = padded
                    stats["finder"] += 1
        for kind, quad in outlines:
            src = img if kind == "bounds" else img_for
            if kind == "bounds":
                # The frame is the card: what lies beyond it is table.
                p = MARGIN
                src = cv2.copyMakeBorder(img, p, p, p, p, cv2.BORDER_CONSTANT,
                                         value=table_colour(rng))
                quad = quad + p
            cards.append(straighten(src, quad))
            ends.append(index_shows(cards[-1]))
            labels.append(cls)
            source.append(kind)
            split.append(r["split"])
            files.append(r["file"])
    cards, ends = np.stack(cards), np.array(ends, bool)   # (~1 GB for train: stacked once)
    stats["blank ends"] = int((~ends).sum())
    if reader_path is not None:   # (a joker's ends are "no index" whatever they hold)
        ends = clean_ends(cards, ends, reader_path)
    stats["ends left out"] = int((~ends).sum())
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, cards=cards, ends=ends, y=np.int64(labels), source=np.array(source),
             split=np.array(split), files=np.array(files))
    stats["cards"] = len(cards)
    return stats


def contact_sheet(npz: Path, out: Path, n: int = 48, seed: int = 0) -> Path:
    """Straightened cards and their upright and half-turned corner crops, side by side."""
    from ..detector.card_reader import corner_crop
    d = np.load(npz)
    rng = np.random.default_rng(seed)
    tiles = []
    for i in rng.choice(len(d["y"]), min(n, len(d["y"])), replace=False):
        card = d["cards"][i]
        rect = card_rect()
        a, _ = corner_crop(card, rect)
        b, _ = corner_crop(card, np.roll(rect, -2, axis=0))
        h = card.shape[0]
        scale = h / a.shape[0] / 2
        a = cv2.resize(a, None, fx=scale, fy=scale, interpolation=cv2.INTER_NEAREST)
        b = cv2.resize(b, None, fx=scale, fy=scale, interpolation=cv2.INTER_NEAREST)
        col = np.vstack([a, b])[:h]
        tile = np.hstack([card, col])
        y = int(d["y"][i])
        cv2.putText(tile, CLASS_NAMES[y] if y < NONE_CLASS else "none", (2, 14),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 255), 1)
        tiles.append(tile)
    width = max(t.shape[1] for t in tiles)
    tiles = [cv2.copyMakeBorder(t, 0, 0, 0, width - t.shape[1], cv2.BORDER_CONSTANT) for t in tiles]
    rows = [np.hstack(tiles[i:i + 8]) for i in range(0, len(tiles) - 7, 8)]
    cv2.imwrite(str(out), np.vstack(rows))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(REALDECKS), help="the realdecks folder")
    ap.add_argument("--split", nargs="+", default=["train"], choices=["train", "valid"],
                    help="splits to harvest (test is for reporting only, never harvested)")
    ap.add_argument("--out", default=None, help="npz to write (default data/realcards-SPLIT.npz)")
    ap.add_argument("--finder", default=None, help="finder model (default: the shipped float one)")
    ap.add_argument("--no-finder", action="store_true", help="image bounds only")
    ap.add_argument("--clean-with", default=None, metavar="READER",
                    help="corner reader that leaves out ends it sees no index in (default: "
                         "the shipped one)")
    ap.add_argument("--no-clean", action="store_true", help="keep every end that holds ink")
    args = ap.parse_args()
    root = Path(args.root)
    if not (root / "labels.csv").is_file():
        raise SystemExit(f"{root}: no realdecks here (labels.csv missing); give --root")
    from ..detector.model import CARD_FINDER, CORNER_READER
    finder = None if args.no_finder else Path(args.finder or CARD_FINDER)
    out = Path(args.out or f"data/realcards-{'+'.join(args.split)}.npz")
    reader = None if args.no_clean else Path(args.clean_with or CORNER_READER)
    stats = harvest(root, args.split, out, finder, reader_path=reader)
    sheet = contact_sheet(out, out.with_suffix(".png"))
    print(f"{out}: {stats['cards']} straightened cards from {stats['images']} images "
          f"({stats['finder']} also by the finder's box, {stats['unreadable']} unreadable, "
          f"{stats['blank ends']} ends without ink and {stats['ends left out'] - stats['blank ends']} "
          "the reader sees no index in left out); "
          f"contact sheet {sheet}")


if __name__ == "__main__":
    main()
