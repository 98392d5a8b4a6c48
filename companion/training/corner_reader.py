"""Train the corner reader on real card faces and rendered scenes.

    python -m companion.training.harvest --split train
    python -m companion.training.harvest --split valid
    python -m companion.training.corner_reader --epochs 8

Two sources, cut by the detector's own `corner_crop`:

- **Real** (`data/realcards-train.npz`, from `../shared/realdecks/train`): straightened
  card faces of hundreds of real decks. Each crop is cut at training time from a box
  jittered hard (shift, scale, aspect, turn, perspective), as a finder's box on a real
  deck would be, and shrunk to webcam resolution now and then. The upright and the
  half-turned reading show an index; the sideways readings, a window in the middle of the
  card and every joker read "no index".
- **Rendered** (cached crops of `SceneRenderer` scenes, indices drawn in every installed
  text font): piles, partly covered corners, backs, hands, tilted cameras, blur.
- **Webcam shots** (`--webcam-shots N`, cached): every harvested card photographed N times
  by `webcam_shot`, small in a 640 x 480 frame, through the webcam's light and lens chain
  (session 20: small indices; two such runs were measured and not shipped, see the model
  card).

The network has separate heads (`build_model`): "is there an index here" (one logit),
rank (13), suit (4) and ink colour (2). The identity heads learn only from crops that
show an index, so a new deck's unfamiliar index is not pushed towards "no index"; the
reader (`CornerReader`) combines them. Choices are made on `realdecks/valid` crops (a
fixed, seeded set) and a held-out share of rendered crops; `realdecks/test` is never
read here.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from ..detector.card_reader import (CROP_H, CROP_W, HEADS, NONE_CLASS, corner_crop,
                                    orientations)
from .harvest import CARD_H, CARD_W, MARGIN, card_rect

_renderer = None


# ---------------------------------------------------------------- rendered crops
def _init(size: int, seed: int, real_faces: str | None = None) -> None:
    global _renderer
    cv2.setNumThreads(1)
    from ..render.fonts import use_training_fonts
    from ..render.scene import SceneRenderer
    use_training_fonts()
    maker = None
    if real_faces:
        from .dataset import real_face_pool
        maker = real_face_pool(Path(real_faces))
    _renderer = SceneRenderer(size, seed, real_faces=maker, real_share=1.0 if maker else 0.0)


def _box(quad: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The card's minimum-area rectangle with a detector's error, corners in the face's
    order (so the label of each reading is known)."""
    (cx, cy), (w, h), ang = cv2.minAreaRect(quad.astype(np.float32))
    L = max(w, h)
    cx, cy = cx + rng.normal(0, 0.02 * L), cy + rng.normal(0, 0.02 * L)
    w, h = w * rng.normal(1, 0.04), h * rng.normal(1, 0.04)
    box = cv2.boxPoints(((cx, cy), (w, h), ang + rng.normal(0, 2.5)))
    # Match the box's corners to the face's own corners (best cyclic shift, either way round).
    best, order = None, None
    for pts in (box, box[::-1]):
        for k in range(4):
            cand = np.roll(pts, -k, axis=0)
            d = float(np.linalg.norm(cand - quad, axis=1).sum())
            if best is None or d < best:
                best, order = d, cand
    return order


def labelled_crops(image: np.ndarray, quad: np.ndarray, cls: int | None,
                   index_visible, rng: np.random.Generator):
    """The corner crops of one card lying at `quad` (its face's TL, TR, BR, BL) as a
    finder's imperfect box reads them, each labelled: the upright and the half-turned
    reading with the card where that end's index shows, else "no index"; one sideways
    reading in two, "no index"."""
    crops, labels = [], []
    face_order = _box(quad, rng)
    # orientations() re-orders the box itself; find which of its readings starts at the
    # face's top-left corner (upright) and which at its bottom-right (half turned).
    for j, card in enumerate(orientations(face_order)):
        start = int(np.argmin(np.linalg.norm(face_order - card[0], axis=1)))
        if j >= 2 and rng.random() < 0.5:
            continue                   # one sideways reading in two is plenty
        label = NONE_CLASS
        if cls is not None and j < 2:
            if (start == 0 and index_visible[0]) or (start == 2 and index_visible[1]):
                label = cls
        crops.append(corner_crop(image, card)[0])
        labels.append(label)
    return crops, labels


def _work(index: int):
    rng = np.random.default_rng([7, index])
    scene = _renderer.render(index)
    crops, labels = [], []
    for c in scene.cards:
        if c.visible < 0.3 or max(np.linalg.norm(c.quad[1] - c.quad[0]),
                                  np.linalg.norm(c.quad[2] - c.quad[1])) < 40:
            continue
        x, lab = labelled_crops(scene.image, c.quad, c.cls, c.index_visible, rng)
        crops += x
        labels += lab
    return crops, labels


def rendered_crops(path: Path, scenes: int, seed: int, size: int, workers: int,
                   real_faces: str | None = None):
    """Crops of `scenes` rendered scenes (cached in `path`); with real_faces (harvested
    train cards), every card of a scene is a real face of some real design, so real
    indices are seen at the scenes' angles, sizes, piles, hands, light and blur."""
    return cached_crops(path, _work, list(range(scenes)), workers, _init,
                        (size, seed, real_faces), f"rendering crops (seed {seed}, {size} px)",
                        "scene", chunksize=16)


def cached_crops(path: Path, work, jobs: list, workers: int, init, initargs: tuple, desc: str,
                 unit: str, chunksize: int):
    """Labelled crops cut by `work` from each job in a pool of `workers` (each started by
    `init(*initargs)`), kept in `path` and read from it next time."""
    if not path.is_file():
        crops, labels = [], []
        ctx = mp.get_context("fork" if hasattr(os, "fork") else "spawn")
        with ctx.Pool(workers, initializer=init, initargs=initargs) as pool:
            for c, lab in tqdm(pool.imap(work, jobs, chunksize=chunksize), total=len(jobs),
                               desc=desc, unit=unit):
                crops += c
                labels += lab
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, x=np.stack(crops).astype(np.uint8), y=np.array(labels, np.int64))
    d = np.load(path)
    return d["x"], d["y"]


# ---------------------------------------------------------------- webcam shots
# Session 20: on realdecks/valid photographed as a webcam would, the reader named 97 % of
# cards standing 32-45 % of the frame's height but 90 % (and 4.6 % wrong) at 20-32 %, and
# given the true outline no more: small indices through a webcam's blur, noise and JPEG,
# which the real crops (cut from a 180 px card, shrunk now and then) show too rarely.
WEBCAM_TRAIN_SIZE = (0.15, 0.6)      # card height / frame height of the training shots
_faces = None


def _init_faces(cards, ends, y) -> None:
    global _faces
    cv2.setNumThreads(1)
    _faces = (cards, ends, y)


def _shoot(job: tuple[int, int]):
    """One harvested card photographed once by `webcam_shot`, cut as a finder would."""
    from ..render.photodeck import webcam_shot
    index, seed = job
    rng = np.random.default_rng([seed, index])
    cards, ends, y = _faces
    face = np.ascontiguousarray(cards[index][MARGIN:MARGIN + CARD_H, MARGIN:MARGIN + CARD_W])
    if rng.random() < 0.5:
        face = np.ascontiguousarray(face[::-1, ::-1])
        shows = ends[index][::-1]
    else:
        shows = ends[index]
    photo, quad = webcam_shot(face, rng, size=WEBCAM_TRAIN_SIZE)
    cls = None if y[index] == NONE_CLASS else int(y[index])
    return labelled_crops(photo, quad, cls, shows, rng)


def webcam_crops(path: Path, cards: np.ndarray, ends: np.ndarray, y: np.ndarray, shots: int,
                 seed: int, workers: int):
    """Crops of every harvested card photographed `shots` times as a webcam over a table
    would (`webcam_shot`, the card 15-60 % of the frame's height), cached in `path`."""
    jobs = [(i, seed + k) for k in range(shots) for i in range(len(cards))]
    return cached_crops(path, _shoot, jobs, workers, _init_faces, (cards, ends, y),
                        f"webcam shots (seed {seed})", "shot", chunksize=32)


# ---------------------------------------------------------------- real crops
def _readings(rect: np.ndarray) -> list[np.ndarray]:
    """Upright, half-turned, and the two sideways readings of a TL, TR, BR, BL card."""
    return [np.roll(rect, -k, axis=0) for k in (0, 2, 1, 3)]


def jitter_rect(rng: np.random.Generator, hard: bool = True) -> np.ndarray:
    """The straightened card's outline as an imperfect finder would draw it."""
    rect = card_rect()
    c = rect.mean(0)
    s = 1.0 if hard else 0.5
    scale = np.exp(rng.normal(0, 0.06 * s))
    aspect = np.exp(rng.normal(0, 0.05 * s))
    ang = np.deg2rad(np.clip(rng.normal(0, 3.0 * s), -9, 9))
    rot = np.float32([[np.cos(ang), -np.sin(ang)], [np.sin(ang), np.cos(ang)]])
    p = (rect - c) * np.float32([scale * aspect, scale / aspect])
    p = p @ rot.T + c + rng.normal(0, 0.03 * s, 2) * (CARD_W, CARD_H)
    p += rng.normal(0, 0.012 * s, (4, 2)) * CARD_W            # perspective
    return p.astype(np.float32)


def real_crops(cards: np.ndarray, ends: np.ndarray, y: np.ndarray, rng: np.random.Generator,
               hard: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """One epoch's real crops: per card both ends (its label; an end whose index was cut
    off by the frame is left out), one sideways reading and, one card in three, a window
    in the card's middle ("no index")."""
    xs, ys = [], []
    for img, shows, label in zip(cards, ends, y):
        if rng.random() < 0.5:
            img, shows = img[::-1, ::-1], shows[::-1]   # the other end first, as a pile shows it
        rect = jitter_rect(rng, hard)
        reads = _readings(rect)
        for j in (0, 1):
            if shows[j] or label == NONE_CLASS:
                xs.append(corner_crop(img, reads[j])[0])
                ys.append(label)
        xs.append(corner_crop(img, reads[2 + int(rng.integers(2))])[0])
        ys.append(NONE_CLASS)
        if rng.random() < 0.33:
            shift = rng.uniform(0.3, 0.5, 2) * (CARD_W, CARD_H)
            xs.append(corner_crop(img, reads[0] + shift.astype(np.float32))[0])
            ys.append(NONE_CLASS)
    return np.stack(xs), np.int64(ys)


def real_valid(cards: np.ndarray, ends: np.ndarray, y: np.ndarray):
    """The fixed real validation crops: both ends and one sideways reading, a mild jitter."""
    return real_crops(cards, ends, y, np.random.default_rng(1234), hard=False)


# ---------------------------------------------------------------- augmentation
def augment(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """What a camera and an imperfect box add: light, white balance, blur or
    over-sharpening, a webcam's low resolution, noise, JPEG, and a box a few per cent off."""
    x = x.astype(np.float32)
    n, h, w = x.shape[:3]
    gain = rng.uniform(0.55, 1.3, (n, 1, 1, 1)) * rng.uniform(0.85, 1.15, (n, 1, 1, 3))
    x = x * gain + rng.uniform(-35, 30, (n, 1, 1, 1))
    mean = x.mean((1, 2, 3), keepdims=True)
    x = (x - mean) * rng.uniform(0.6, 1.35, (n, 1, 1, 1)) + mean
    kind = rng.random(n)
    for i in np.nonzero(kind < 0.25)[0]:
        x[i] = cv2.GaussianBlur(x[i], (0, 0), float(rng.uniform(0.4, 1.5)))
    for i in np.nonzero(kind > 0.8)[0]:     # phone photos are sharpened: crisp strokes, halos
        soft = cv2.GaussianBlur(x[i], (0, 0), float(rng.uniform(0.8, 1.6)))
        x[i] = x[i] + float(rng.uniform(0.5, 1.5)) * (x[i] - soft)
    for i in np.nonzero(rng.random(n) < 0.35)[0]:      # a far or cheap camera: fewer pixels
        f = float(rng.uniform(0.4, 0.85))
        small = cv2.resize(x[i], (max(8, int(w * f)), max(8, int(h * f))),
                           interpolation=cv2.INTER_AREA)
        x[i] = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    x += rng.normal(0, 1, (n, 1, 1, 1)) * rng.uniform(0, 8) * rng.standard_normal(x.shape)
    out = np.empty_like(x)
    centre = (w / 2, h / 2)
    for i in range(n):
        M = cv2.getRotationMatrix2D(centre, float(rng.normal(0, 2.5)),
                                    float(np.exp(rng.normal(0, 0.06))))
        M[:, 2] += rng.normal(0, 2.0, 2)
        out[i] = cv2.warpAffine(x[i], M, (w, h), borderMode=cv2.BORDER_REPLICATE)
    out = np.clip(out, 0, 255)
    for i in np.nonzero(rng.random(n) < 0.2)[0]:
        q = int(rng.integers(25, 80))
        ok, buf = cv2.imencode(".jpg", out[i].astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, q])
        out[i] = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


# ---------------------------------------------------------------- the network
WIDTHS = (16, 32, 64, 128)      # the shipped reader's channels


def build_model(widths: tuple[int, int, int, int] = WIDTHS, outputs: int = sum(HEADS)):
    """A stem, three double-conv blocks, global pooling, then one linear layer: by default
    the heads of HEADS, [index?, 13 ranks, 4 suits, 2 ink colours], as one logit vector
    (the middle reader uses the same network with its own outputs)."""
    import torch.nn as nn

    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True), nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    w0, w1, w2, w3 = widths
    return nn.Sequential(nn.Conv2d(3, w0, 3, padding=1, bias=False), nn.BatchNorm2d(w0),
                         nn.ReLU(inplace=True), nn.MaxPool2d(2),
                         block(w0, w1), nn.MaxPool2d(2), block(w1, w2), nn.MaxPool2d(2),
                         block(w2, w3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
                         nn.Linear(w3, outputs))


def head_losses(logits, y, smoothing: float = 0.05):
    """Presence on every crop; rank, suit and colour only where there is an index."""
    import torch.nn.functional as F
    pos = y != NONE_CLASS
    target = pos.float() * (1 - smoothing) + smoothing / 2
    loss = F.binary_cross_entropy_with_logits(logits[:, 0], target)
    if pos.any():
        lp, yp = logits[pos], y[pos]
        rank, suit = yp % 13, yp // 13
        colour = ((suit == 1) | (suit == 2)).long()          # hearts and diamonds are red
        a, b, c = 1 + HEADS[1], 1 + HEADS[1] + HEADS[2], sum(HEADS)
        loss = loss + F.cross_entropy(lp[:, 1:a], rank, label_smoothing=smoothing) \
            + F.cross_entropy(lp[:, a:b], suit, label_smoothing=smoothing) \
            + 0.5 * F.cross_entropy(lp[:, b:c], colour, label_smoothing=smoothing)
    return loss


def blob(a: np.ndarray):
    import torch
    return torch.from_numpy(np.ascontiguousarray(
        (a[..., ::-1] / 255.0).transpose(0, 3, 1, 2)).astype(np.float32))


def scores(model, x: np.ndarray, y: np.ndarray, conf: float = 0.5) -> dict:
    """Per-crop figures as the detector would decide: right, wrong card, or no call."""
    import torch
    from ..detector.card_reader import card_probabilities
    model.eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(x), 512):
            out.append(model(blob(x[i:i + 512].astype(np.float32))).numpy())
    model.train()
    probs = card_probabilities(np.concatenate(out))
    cls = probs[:, :NONE_CLASS].argmax(1)
    p = probs[np.arange(len(cls)), cls]
    called = (p >= conf) & (p >= probs[:, NONE_CLASS])
    pos = y != NONE_CLASS
    return {"right": float((called & (cls == y))[pos].mean()),
            "wrong": float((called & (cls != y))[pos].mean()),
            "false index": float(called[~pos].mean())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--real", default="data/realcards-train.npz", help="harvested train cards")
    ap.add_argument("--real-valid", default="data/realcards-valid.npz",
                    help="harvested valid cards (choices only)")
    ap.add_argument("--scenes", type=int, nargs="+", default=[5000, 2500],
                    help="rendered scenes per (seed, size) pair")
    ap.add_argument("--seed", type=int, nargs="+", default=[21, 22], help="scene seeds")
    ap.add_argument("--size", type=int, nargs="+", default=[384, 512], help="scene sides (px)")
    ap.add_argument("--real-scenes", type=int, default=0, metavar="N",
                    help="also N scenes (seed 23, the first --size) whose cards are the "
                         "harvested real faces of --real, at the scenes' angles, piles and light")
    ap.add_argument("--webcam-shots", type=int, default=0, metavar="N",
                    help="also every harvested card photographed N times as a webcam over a "
                         "table would, small in the frame (webcam_shot; seed 31)")
    ap.add_argument("--cache", default="data/corners", help="folder for rendered crop caches")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--init", default=None, help="start from these weights (.pt)")
    ap.add_argument("--widths", type=int, nargs=4, default=list(WIDTHS), metavar="W",
                    help="channels of the stem and the three blocks (default %(default)s)")
    ap.add_argument("--keep-epochs", action="store_true",
                    help="also keep each epoch's weights (OUT-epochN.pt), to choose one by "
                         "its figures afterwards rather than take the last")
    ap.add_argument("--out", default="models/corner_reader.onnx")
    ap.add_argument("--export-only", action="store_true",
                    help="write the ONNX of the --init weights and stop (no training)")
    args = ap.parse_args()

    import torch
    torch.set_num_threads(args.threads)
    if args.export_only:
        if not args.init:
            raise SystemExit("--export-only: give the weights with --init PATH.pt")
        model = build_model(tuple(args.widths))
        model.load_state_dict(torch.load(args.init, map_location="cpu"))
        export(model, Path(args.out))
        print(f"wrote {args.out}")
        return
    for p in (args.real, args.real_valid):
        if not Path(p).is_file():
            raise SystemExit(f"{p}: no harvested cards; run python -m companion.training.harvest "
                             "first (it needs ../shared/realdecks)")
    xs, ys = [], []
    for scenes, seed, size in zip(args.scenes, args.seed, args.size):
        x, y = rendered_crops(Path(args.cache) / f"corners-s{seed}-{scenes}-{size}-"
                              f"{CROP_W}x{CROP_H}.npz", scenes, seed, size, args.workers)
        xs.append(x)
        ys.append(y)
    if args.real_scenes:
        x, y = rendered_crops(Path(args.cache) / f"corners-real-s23-{args.real_scenes}-"
                              f"{args.size[0]}-{CROP_W}x{CROP_H}.npz", args.real_scenes, 23,
                              args.size[0], args.workers, real_faces=args.real)
        xs.append(x)
        ys.append(y)
    rx, ry = np.concatenate(xs), np.concatenate(ys)
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(rx))
    n_val = max(1, len(rx) // 20)
    r_val, r_tr = perm[:n_val], perm[n_val:]
    real = np.load(args.real)
    cards, ends, cy = real["cards"], real["ends"], real["y"]
    valid = np.load(args.real_valid)
    vx, vy = real_valid(valid["cards"], valid["ends"], valid["y"])
    wx = wy = wvx = wvy = None
    if args.webcam_shots:
        wx, wy = webcam_crops(Path(args.cache) / f"corners-webcam-s31-{args.webcam_shots}-"
                              f"{len(cards)}-{CROP_W}x{CROP_H}.npz", cards, ends, cy,
                              args.webcam_shots, 31, args.workers)
        # The valid cards shot once (a fixed seed): a per-epoch figure, for choices only.
        wvx, wvy = webcam_crops(Path(args.cache) / f"corners-webcam-valid-s97-"
                                f"{len(valid['cards'])}-{CROP_W}x{CROP_H}.npz", valid["cards"],
                                valid["ends"], valid["y"], 1, 97, args.workers)
        print(f"webcam shots: {len(wx)} train crops, {len(wvx)} valid crops")
    print(f"rendered: {len(rx)} crops ({(ry != NONE_CLASS).mean():.0%} with an index), "
          f"{len(r_tr)} train / {len(r_val)} val; real: {len(cards)} train cards "
          f"(~{len(cards) * 3.3:.0f} crops an epoch), {len(vx)} valid crops")

    model = build_model(tuple(args.widths))
    if args.init:
        model.load_state_dict(torch.load(args.init, map_location="cpu"))
    per_epoch = len(r_tr) + int(len(cards) * 3.33) + (0 if wx is None else len(wx))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    steps = args.epochs * (per_epoch // args.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=max(steps, 1),
                                                pct_start=0.15)
    out = Path(args.out)
    pt = out.with_suffix(".pt")
    step = 0
    for epoch in range(args.epochs):
        t0 = time.time()
        qx, qy = real_crops(cards, ends, cy, rng)
        x = np.concatenate([rx[r_tr], qx] + ([] if wx is None else [wx]))
        y = np.concatenate([ry[r_tr], qy] + ([] if wy is None else [wy]))
        order = rng.permutation(len(x))
        bar = tqdm(range(0, len(order) - args.batch + 1, args.batch), desc=f"epoch {epoch + 1}",
                   unit="batch", leave=False)
        total = 0.0
        for k, i in enumerate(bar):
            if step >= steps:
                break
            idx = order[i:i + args.batch]
            loss = head_losses(model(blob(augment(x[idx], rng))), torch.from_numpy(y[idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            total += float(loss.detach())
            bar.set_postfix(loss=f"{total / (k + 1):.3f}")
        sv, sr = scores(model, vx, vy), scores(model, rx[r_val], ry[r_val])
        webcam = "" if wvx is None else \
            "; webcam valid right {right:.4f} wrong {wrong:.4f}".format(**scores(model, wvx, wvy))
        print(f"epoch {epoch + 1}: loss {total / max(len(bar), 1):.3f}; real valid right "
              f"{sv['right']:.4f} wrong {sv['wrong']:.4f} false index {sv['false index']:.4f}; "
              f"rendered val right {sr['right']:.4f} wrong {sr['wrong']:.4f} false index "
              f"{sr['false index']:.4f}{webcam}; {time.time() - t0:.0f} s", flush=True)
        pt.parent.mkdir(parents=True, exist_ok=True)
        torch.save(model.state_dict(), pt)
        if args.keep_epochs:
            torch.save(model.state_dict(), pt.with_name(f"{pt.stem}-epoch{epoch + 1}.pt"))
    export(model, out)
    print(f"wrote {out} and {pt}")


def export(model, out: Path) -> None:
    """Two outputs: the heads' logits, and the pooled features they are computed from
    (what an enrolled deck is matched on, companion.deck)."""
    import torch
    import torch.nn as nn

    class WithFeatures(nn.Module):
        def __init__(self, net):
            super().__init__()
            pool = next(i for i, m in enumerate(net) if isinstance(m, nn.AdaptiveAvgPool2d))
            self.body, self.head = net[:pool + 2], net[pool + 2:]   # ...pool, flatten | heads

        def forward(self, x):
            features = self.body(x)
            return self.head(features), features

    model.eval()
    torch.onnx.export(WithFeatures(model).eval(), torch.zeros(1, 3, CROP_H, CROP_W), str(out),
                      input_names=["crops"], output_names=["heads", "features"],
                      dynamic_axes={"crops": {0: "n"}, "heads": {0: "n"}, "features": {0: "n"}},
                      opset_version=17, dynamo=False)


if __name__ == "__main__":
    main()
