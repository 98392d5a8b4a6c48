"""Train the corner reader of the card-reader design on rendered scenes.

    python -m companion.detector.train_corner_reader --scenes 12000 --seed 21 --epochs 10

Crops are made the way the live design makes them: every card of a rendered
scene is boxed by its minimum-area rectangle (what an oriented-box detector
gives), the box is jittered by a detector's typical error, and each of the four
readings of the box is cropped. The upright reading's label is the card when
the face's top-left index shows, the half-turned reading's when the bottom-
right index shows; sideways readings, hidden corners, backs and jokers are
"no index". Crops are cached in an .npz so later runs start at once.
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

from .card_reader import CROP_H, CROP_W, NONE_CLASS, build_model, corner_crop, orientations

_renderer = None


def _init(size: int, seed: int) -> None:
    global _renderer
    cv2.setNumThreads(1)
    from ..render.scene import SceneRenderer
    _renderer = SceneRenderer(size, seed)


def _box(quad: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The card's minimum-area rectangle with a detector's error, corners in the face's
    order (so the label of each reading is known)."""
    (cx, cy), (w, h), ang = cv2.minAreaRect(quad.astype(np.float32))
    L = max(w, h)
    cx, cy = cx + rng.normal(0, 0.015 * L), cy + rng.normal(0, 0.015 * L)
    w, h = w * rng.normal(1, 0.03), h * rng.normal(1, 0.03)
    box = cv2.boxPoints(((cx, cy), (w, h), ang + rng.normal(0, 1.5)))
    # Match the box's corners to the face's own corners (best cyclic shift, either way round).
    best, order = None, None
    for pts in (box, box[::-1]):
        for k in range(4):
            cand = np.roll(pts, -k, axis=0)
            d = float(np.linalg.norm(cand - quad, axis=1).sum())
            if best is None or d < best:
                best, order = d, cand
    return order


def _work(index: int):
    rng = np.random.default_rng([7, index])
    scene = _renderer.render(index)
    crops, labels = [], []
    for c in scene.cards:
        if c.visible < 0.3 or max(np.linalg.norm(c.quad[1] - c.quad[0]),
                                  np.linalg.norm(c.quad[2] - c.quad[1])) < 40:
            continue
        face_order = _box(c.quad, rng)
        # orientations() re-orders the box itself; find which of its readings starts at the
        # face's top-left corner (upright) and which at its bottom-right (half turned).
        reads = orientations(face_order)
        for j, card in enumerate(reads):
            start = int(np.argmin(np.linalg.norm(face_order - card[0], axis=1)))
            if j >= 2 and rng.random() < 0.5:
                continue                   # one sideways reading in two is plenty
            label = NONE_CLASS
            if c.cls is not None and j < 2:
                if start == 0 and c.index_visible[0]:
                    label = c.cls
                elif start == 2 and c.index_visible[1]:
                    label = c.cls
            crop, _ = corner_crop(scene.image, card)
            crops.append(crop)
            labels.append(label)
    return crops, labels


def build_cache(path: Path, scenes: int, seed: int, size: int, workers: int) -> None:
    crops, labels = [], []
    bar = tqdm(total=scenes, desc=f"rendering crops (seed {seed})", unit="scene")
    ctx = mp.get_context("fork" if hasattr(os, "fork") else "spawn")
    with ctx.Pool(workers, initializer=_init, initargs=(size, seed)) as pool:
        for c, lab in pool.imap(_work, range(scenes), chunksize=16):
            crops += c
            labels += lab
            bar.update()
    bar.close()
    x = np.stack(crops).astype(np.uint8)
    y = np.array(labels, np.int64)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, x=x, y=y)


def augment(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """What a camera and an imperfect box add: light, colour, blur or over-sharpening,
    noise, and a box a few per cent off (shift, scale, turn)."""
    x = x.astype(np.float32)
    n = len(x)
    gain = rng.uniform(0.6, 1.3, (n, 1, 1, 1)) * rng.uniform(0.88, 1.12, (n, 1, 1, 3))
    x = x * gain + rng.uniform(-30, 30, (n, 1, 1, 1))
    mean = x.mean((1, 2, 3), keepdims=True)
    x = (x - mean) * rng.uniform(0.7, 1.35, (n, 1, 1, 1)) + mean
    kind = rng.random(n)
    for i in np.nonzero(kind < 0.3)[0]:
        x[i] = cv2.GaussianBlur(x[i], (0, 0), float(rng.uniform(0.4, 1.4)))
    for i in np.nonzero(kind > 0.75)[0]:     # phone photos are sharpened: crisp strokes, halos
        soft = cv2.GaussianBlur(x[i], (0, 0), float(rng.uniform(0.8, 1.6)))
        x[i] = x[i] + float(rng.uniform(0.5, 1.5)) * (x[i] - soft)
    x += rng.normal(0, 1, (n, 1, 1, 1)) * rng.uniform(0, 8) * rng.standard_normal(x.shape)
    out = np.empty_like(x)
    centre = (CROP_W / 2, CROP_H / 2)
    for i in range(n):
        M = cv2.getRotationMatrix2D(centre, float(rng.normal(0, 2.5)),
                                    float(np.exp(rng.normal(0, 0.06))))
        M[:, 2] += rng.normal(0, 2.0, 2)
        out[i] = cv2.warpAffine(x[i], M, (CROP_W, CROP_H), borderMode=cv2.BORDER_REPLICATE)
    return np.clip(out, 0, 255)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", type=int, default=12000, help="rendered scenes per seed")
    ap.add_argument("--seed", type=int, nargs="+", default=[21], help="scene seeds")
    ap.add_argument("--size", type=int, default=384, help="scene side in pixels")
    ap.add_argument("--cache", default="data/corners", help="folder for crop caches")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--npz", nargs="*", default=[], help="more crop caches to train on")
    ap.add_argument("--init", default=None, help="start from these weights (.pt)")
    ap.add_argument("--out", default="models/corner_reader.onnx")
    args = ap.parse_args()

    import torch
    torch.set_num_threads(args.threads)
    xs, ys = [], []
    for seed in args.seed:
        path = Path(args.cache) / f"corners-s{seed}-{args.scenes}-{args.size}.npz"
        if not path.is_file():
            build_cache(path, args.scenes, seed, args.size, args.workers)
        d = np.load(path)
        xs.append(d["x"])
        ys.append(d["y"])
    for path in args.npz:
        d = np.load(path)
        xs.append(d["x"])
        ys.append(d["y"])
    x, y = np.concatenate(xs), np.concatenate(ys)
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(x))
    n_val = max(1, len(x) // 20)
    val, tr = perm[:n_val], perm[n_val:]
    print(f"{len(x)} crops ({(y != NONE_CLASS).mean():.0%} with an index), "
          f"{len(tr)} train / {len(val)} val")

    model = build_model()
    if args.init:
        model.load_state_dict(torch.load(args.init, map_location="cpu"))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    steps = args.epochs * (len(tr) // args.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=max(steps, 1),
                                                pct_start=0.15)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.05)

    def blob(a):
        return torch.from_numpy(np.ascontiguousarray(
            (a[..., ::-1] / 255.0).transpose(0, 3, 1, 2)).astype(np.float32))

    def evaluate() -> tuple[float, float]:
        model.eval()
        pred = []
        with torch.no_grad():
            for i in range(0, len(val), 512):
                pred.append(model(blob(x[val[i:i + 512]].astype(np.float32))).argmax(1).numpy())
        model.train()
        p, t = np.concatenate(pred), y[val]
        pos = t != NONE_CLASS
        return float((p == t).mean()), float((p[pos] == t[pos]).mean())

    out = Path(args.out)
    pt = out.with_suffix(".pt")
    for epoch in range(args.epochs):
        t0 = time.time()
        order = rng.permutation(tr)
        bar = tqdm(range(0, len(order) - args.batch + 1, args.batch), desc=f"epoch {epoch + 1}",
                   unit="batch", leave=False)
        total = 0.0
        for k, i in enumerate(bar):
            idx = order[i:i + args.batch]
            xb = blob(augment(x[idx], rng))
            loss = loss_fn(model(xb), torch.from_numpy(y[idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss)
            bar.set_postfix(loss=f"{total / (k + 1):.3f}")
        acc, acc_pos = evaluate()
        print(f"epoch {epoch + 1}: loss {total / max(len(bar), 1):.3f}, val accuracy {acc:.4f} "
              f"(indices {acc_pos:.4f}), {time.time() - t0:.0f} s", flush=True)
        pt.parent.mkdir(parents=True, exist_ok=True)
        torch.save(model.state_dict(), pt)
    model.eval()
    torch.onnx.export(model, torch.zeros(1, 3, CROP_H, CROP_W), str(out), input_names=["crops"],
                      output_names=["logits"], dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}},
                      opset_version=17, dynamo=False)
    print(f"wrote {out} and {pt}")


if __name__ == "__main__":
    main()
