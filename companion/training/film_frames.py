"""Finder training frames cut from rendered game films, as the live loop sees them.

    python -m companion.training.film_frames --out data/film-obb --films 200

The card finder learnt on still scenes. On video it reads the pile region of a film
(`companion.render.video`): cards thrown in from the seats at any angle onto a messy
pile, hands and their shadows, the film's light and noise. There, with real card
faces, its box was at IoU >= 0.9 with the true outline on only 64 of 407 cards just
come to rest (session 28: a box on the card's inner frame, a box turned between the
top card and the one below, no box on a dark card), while the true outline read 396
of them right. These frames teach it that picture: the pile region of a film frame
(the live loop's central square), labelled with the oriented outline of each face-up
card that shows whole (>= 90 %, as `dataset.WHOLE`), moving or at rest.

Half the films play a rendered deck, half real faces: one photo per card from
`realdecks/train` (a different real design for each card; never `valid` or `test`,
which are how the reader is measured). Same ultralytics layout as `dataset.py`:
OUT/images/{train,val}, OUT/labels/{train,val}, OUT/data.yaml, OUT/contact_sheet.png.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from ..engine import PRESETS
from ..render.video import GameFilm
from ..render.scene import warp_onto
from .dataset import WHOLE, draw_outline, save_grid, write_data_yaml

REALDECKS = Path(__file__).resolve().parents[3] / "shared" / "realdecks"
NAMES = ["Ada", "Ben", "Cho", "Dan", "Eve"]
SEED0 = 500_000       # film seeds far from every benchmark's (they use < 100,000)


def film_for(seed: int, photos: dict | None) -> GameFilm:
    """A film as the benchmarks make them (2-5 players, base or challenge rules), with a
    real-face deck where `photos` is given."""
    deck = None
    if photos is not None:
        from ..render.photodeck import PhotoDeck
        deck = PhotoDeck(photos, seed)
    players = NAMES[: 2 + seed % 4]
    rules = PRESETS["challenge" if seed % 2 else "base"]
    return GameFilm(rules, players, seed, seconds=20, deck=deck)


def frame_at(film: GameFilm, t: float, noise: int = 0):
    """The film's frame at time t (drawn as `GameFilm.frames` draws it, with frame
    `noise`'s sensor noise) and each card's (outline in the frame, share of it that
    shows), bottom card first."""
    frame = film.background.copy()
    layers: list[tuple[np.ndarray | None, np.ndarray]] = []     # (card outline or None, mask)
    resting = sorted((c for c in film.timeline.cards if c.t_rest <= t < c.t_sweep),
                     key=lambda c: c.t_rest)
    for c in resting:
        H = film._card_H(c, c.t_rest)
        layers.append((face_outline(c.face, H), warp_onto(frame, c.face, H, shadow=0.25)))
    moving, hands = film.draw_moving(frame, t)
    # What each moving thing covers, drawn again alone (the frame has them drawn already).
    blank = np.zeros_like(frame)
    layers += [(face_outline(c.face, H), warp_onto(blank, c.face, H)) for c, H in moving]
    for seat, dist, lift in hands:
        sprite = film.hand_sprites[seat]
        layers.append((None, warp_onto(blank, sprite, film._hand_H(seat, sprite, dist, lift))))
    # What shows of each card: its mask less everything drawn over it.
    cards, above = [], np.zeros(frame.shape[:2], np.float32)
    for quad, mask in reversed(layers):
        if quad is not None:
            area = float(mask.sum())
            cards.append((quad, float((mask * (1 - above)).sum()) / area if area else 0.0))
        np.maximum(above, mask, out=above)
    return film.through_camera(frame, noise), cards[::-1]


def face_outline(face, H: np.ndarray) -> np.ndarray:
    """A face's corners through H."""
    fh, fw = face.image.shape[:2]
    return cv2.perspectiveTransform(np.float32([[[0, 0], [fw, 0], [fw, fh], [0, fh]]]), H)[0]


def film_frames(film: GameFilm, rng: np.random.Generator, n: int, size: int):
    """n frames of the film's pile region (shrunk to `size`) with their label lines: half
    at random times, half just after a card came to rest (what the live loop reads)."""
    tl = film.timeline
    rests = [c.t_rest for c in tl.cards if c.t_rest < tl.duration]
    x0 = (film.W - min(film.W, film.H)) // 2
    y0 = (film.H - min(film.W, film.H)) // 2
    side = min(film.W, film.H)
    out = []
    for k in range(n):
        if k % 2 and rests:
            t = float(rng.choice(rests)) + rng.uniform(0, 0.5)
        else:
            t = rng.uniform(0, tl.duration)
        t = min(t, tl.duration - 1e-3)
        frame, cards = frame_at(film, t, int(rng.integers(4)))
        region = frame[y0:y0 + side, x0:x0 + side]
        lines = []
        for quad, shows in cards:
            q = (quad - (x0, y0)) / side
            # Whole, and inside the region (a card still flying in from a seat is not).
            if shows < WHOLE or q.min() < -0.01 or q.max() > 1.01:
                continue
            q = np.clip(q, 0, 1)
            lines.append("0 " + " ".join(f"{v:.6f}" for v in q.reshape(-1)))
        out.append((cv2.resize(region, (size, size), interpolation=cv2.INTER_AREA), lines))
    return out


_photos: dict | None = None


def _init(photos_root: str | None) -> None:
    global _photos
    cv2.setNumThreads(1)
    if photos_root:
        from ..render.photodeck import real_photos
        _photos = real_photos(None, Path(photos_root))


def _work(job):
    film_no, real, per_film, size, out, split, first = job
    seed = SEED0 + film_no
    film = film_for(seed, _photos if real else None)
    rng = np.random.default_rng([seed, 28])
    for k, (img, lines) in enumerate(film_frames(film, rng, per_film, size)):
        name = f"{first + k:06d}"
        cv2.imwrite(str(Path(out) / "images" / split / f"{name}.jpg"), img,
                    [cv2.IMWRITE_JPEG_QUALITY, 93])
        (Path(out) / "labels" / split / f"{name}.txt").write_text(
            "\n".join(lines) + ("\n" if lines else ""))
    return per_film


def make(out: Path, films: int = 600, per_film: int = 6, size: int = 320,
         real_share: float = 0.5, val: float = 0.1, photos_root: Path = REALDECKS / "train",
         workers: int | None = None, first: int = 0) -> dict:
    """Film frames for the finder: films `first` on (seeds SEED0 + first ...); the last
    `val` of them are its validation split."""
    out = Path(out)
    if films < 1 or per_film < 1 or size < 32:
        raise SystemExit(f"--films {films}, --per-film {per_film}, --size {size}: need at "
                         "least one film, one frame a film and 32 px")
    if real_share > 0 and not photos_root.is_dir():
        raise SystemExit(f"{photos_root}: no real photos for the real-face films "
                         "(use --real-share 0 without ../shared/realdecks)")
    n_val = max(1, round(films * val)) if films > 1 and val > 0 else 0
    for split in ("train", "val"):
        for sub in ("images", "labels"):
            (out / sub / split).mkdir(parents=True, exist_ok=True)
    jobs = []
    for i in range(first, first + films):
        split = "val" if i >= first + films - n_val else "train"
        real = bool(np.random.default_rng([SEED0 + i, 29]).random() < real_share)
        jobs.append((i, real, per_film, size, str(out), split, i * per_film))
    workers = workers or min(os.cpu_count() or 1, 8)
    init = (str(photos_root) if real_share > 0 else None,)
    bar = tqdm(total=films * per_film, desc="film frames", unit="img")
    if workers == 1:
        _init(*init)
        for job in jobs:
            bar.update(_work(job))
    else:
        ctx = mp.get_context("fork" if hasattr(os, "fork") else "spawn")
        with ctx.Pool(workers, initializer=_init, initargs=init) as pool:
            for n in pool.imap_unordered(_work, jobs):
                bar.update(n)
    bar.close()
    yaml_path = write_data_yaml(out)
    sheet = contact_sheet(out, out / "contact_sheet.png")
    return {"films": films, "frames": films * per_film, "val_films": n_val,
            "data": str(yaml_path), "contact_sheet": str(sheet)}


def contact_sheet(out: Path, path: Path, n: int = 24, cols: int = 6) -> Path:
    """The first frames with their labels drawn, to look at."""
    tiles = []
    for img_path in sorted((out / "images" / "train").glob("*.jpg"))[:n]:
        img = cv2.imread(str(img_path))
        S = img.shape[0]
        lbl = out / "labels" / "train" / (img_path.stem + ".txt")
        for line in lbl.read_text().split("\n"):
            if line.strip():
                draw_outline(img, np.float32(line.split()[1:]).reshape(4, 2) * S)
        tiles.append(img)
    return save_grid(path, tiles, cols)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="dataset folder to write")
    ap.add_argument("--films", type=int, default=600, help="films to cut frames from (600)")
    ap.add_argument("--per-film", type=int, default=6, help="frames cut from each film (6)")
    ap.add_argument("--size", type=int, default=320, help="side of each saved frame (px)")
    ap.add_argument("--real-share", type=float, default=0.5,
                    help="share of films whose faces are realdecks/train photos")
    ap.add_argument("--first", type=int, default=0,
                    help="first film number (a second set: after the first set's films)")
    ap.add_argument("--workers", type=int, default=None)
    a = ap.parse_args()
    print(make(a.out, a.films, a.per_film, a.size, a.real_share, workers=a.workers,
               first=a.first))


if __name__ == "__main__":
    main()
