"""`companion dataset`: an ultralytics-ready dataset of rendered pile scenes.

    OUT/images/{train,val}/NNNNNN.jpg   OUT/labels/{train,val}/NNNNNN.txt
    OUT/data.yaml                       OUT/contact_sheet.png

One class, an oriented box around each face-up card that is nearly whole (in a
pile, the top card): what the card finder learns. With `shown` below 0.9
(`--under-hands`), a card only a hand lies over is outlined too while that share of it
shows (session 53's finder runs; model card, Training).

Scene i of seed s is the same on every machine and in any worker, so a
dataset can be rebuilt exactly instead of being stored.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from ..render.scene import SceneRenderer

_renderer: SceneRenderer | None = None
WHOLE = 0.9                   # share of a card that must show, but for hands, to be labelled
_shown = WHOLE                # ...and with hands counted (make_dataset's `shown`)
# The card finder also learns small cards: a whole camera frame or a loose pile region
# shows a card at a fifth of its height.
CARD_RANGE = (0.18, 0.95)


def real_face_pool(npz: Path):
    """A maker of `FacePoolDeck`s from harvested real cards (`companion.training.harvest`):
    (rng, rendered deck) -> a deck whose every card is a real face of some real design."""
    from ..detector.card_reader import NONE_CLASS
    from ..render.photodeck import FacePoolDeck
    from .harvest import CARD_H, CARD_W, MARGIN
    d = np.load(npz)
    faces = d["cards"][:, MARGIN:MARGIN + CARD_H, MARGIN:MARGIN + CARD_W]
    y = d["y"]
    pool = {c: faces[y == c] for c in range(NONE_CLASS) if (y == c).any()}
    if len(pool) < NONE_CLASS:
        raise ValueError(f"{npz}: harvested faces of only {len(pool)} of {NONE_CLASS} cards")
    jokers = faces[y == NONE_CLASS]
    return lambda rng, deck: FacePoolDeck(pool, jokers, deck, rng)


def _init(size: int, seed: int, real_faces: str | None = None, real_share: float = 0.0,
          shown: float = WHOLE) -> None:
    global _renderer, _shown
    _shown = shown
    cv2.setNumThreads(1)      # one process per core does better than threads here
    maker = real_face_pool(Path(real_faces)) if real_faces else None
    _renderer = SceneRenderer(size, seed, card_range=CARD_RANGE, real_faces=maker,
                              real_share=real_share)


def labelled(c, shown: float = WHOLE) -> bool:
    """Whether a card (`CardLabel`) gets an outline: face up, no other card over it nor the
    frame's edge across it, and `shown` of it in view with hands counted."""
    return not c.back and c.uncovered >= WHOLE and c.visible >= shown


def card_lines(scene, S: int, shown: float = WHOLE) -> list[str]:
    """OBB labels (ultralytics: class and four corners, normalised) for the cards
    `labelled` outlines."""
    lines = []
    for c in scene.cards:
        if not labelled(c, shown):
            continue
        q = np.clip(c.quad / S, 0, 1)
        lines.append("0 " + " ".join(f"{v:.6f}" for v in q.reshape(-1)))
    return lines


def _work(job: tuple[int, str, str]) -> tuple[int, int]:
    index, img_path, lbl_path = job
    assert _renderer is not None
    scene = _renderer.render(index)
    S = _renderer.size
    cv2.imwrite(img_path, scene.image, [cv2.IMWRITE_JPEG_QUALITY, 93])
    lines = card_lines(scene, S, _shown)
    Path(lbl_path).write_text("\n".join(lines) + ("\n" if lines else ""))
    return index, len(lines)


def write_data_yaml(out: Path) -> Path:
    path = out / "data.yaml"
    path.write_text(f"path: {out.resolve()}\ntrain: images/train\nval: images/val\n"
                    f"names:\n  0: card\n")
    return path


def make_dataset(out: Path, images: int, seed: int, size: int = 320, val: float = 0.1,
                 workers: int | None = None, progress: bool = True,
                 real_faces: str | None = None, real_share: float = 0.5,
                 shown: float = WHOLE) -> dict:
    """real_faces: harvested real cards (an npz of `companion.training.harvest`); that
    share of the scenes then shows real faces of many designs instead of a rendered deck."""
    out = Path(out)
    n_val = max(1, int(round(images * val))) if images > 1 and val > 0 else 0
    jobs = []
    for split in ("train", "val"):
        (out / "images" / split).mkdir(parents=True, exist_ok=True)
        (out / "labels" / split).mkdir(parents=True, exist_ok=True)
    for i in range(images):
        split = "val" if i >= images - n_val else "train"
        jobs.append((i, str(out / "images" / split / f"{i:06d}.jpg"),
                     str(out / "labels" / split / f"{i:06d}.txt")))
    workers = workers or min(os.cpu_count() or 1, 8)
    boxes = 0
    bar = tqdm(total=images, desc="rendering", unit="img", disable=not progress)
    init = (size, seed, real_faces, real_share if real_faces else 0.0, shown)
    _init(*init)              # this process's renderer: the serial path and the contact sheet
    if workers == 1 or images < 8:
        for job in jobs:
            boxes += _work(job)[1]
            bar.update()
    else:
        ctx = mp.get_context("fork" if hasattr(os, "fork") else "spawn")
        with ctx.Pool(workers, initializer=_init, initargs=init) as pool:
            for _, n in pool.imap_unordered(_work, jobs, chunksize=8):
                boxes += n
                bar.update()
    bar.close()
    yaml_path = write_data_yaml(out)
    sheet = contact_sheet(out / "contact_sheet.png", _renderer, range(min(images, 24)))
    return {"images": images, "val": n_val, "boxes": boxes, "data": str(yaml_path),
            "contact_sheet": str(sheet)}


def contact_sheet(path: Path, r: SceneRenderer, indices, cols: int = 6) -> Path:
    """A grid of scenes with their labels drawn (the card's printed top-left corner
    marked), to look at."""
    tiles = []
    for i in indices:
        s = r.render(i)
        img = s.image.copy()
        for c in s.cards:
            if labelled(c, _shown):
                draw_outline(img, c.quad)
        tiles.append(img)
    return save_grid(path, tiles, cols)


def draw_outline(img: np.ndarray, quad: np.ndarray) -> None:
    """A labelled outline on a contact sheet: green, its first (top-left) corner red."""
    cv2.polylines(img, [np.round(quad).astype(np.int32)], True, (0, 255, 0), 1)
    cv2.circle(img, tuple(int(v) for v in quad[0]), 3, (0, 0, 255), -1)


def save_grid(path: Path, tiles: list[np.ndarray], cols: int = 6) -> Path:
    """Equal tiles written as one picture, `cols` to a row."""
    tiles = list(tiles)
    while len(tiles) % cols:
        tiles.append(np.zeros_like(tiles[0]))
    rows = [np.hstack(tiles[i:i + cols]) for i in range(0, len(tiles), cols)]
    cv2.imwrite(str(path), np.vstack(rows))
    return path
