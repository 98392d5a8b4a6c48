"""Train the index reader on crops of a rendered dataset (`companion dataset`).

Positives: every labelled index, cropped with the box jittered the way YOLO's
boxes wander. Negatives ("not an index"): boxes of index size elsewhere in the
same scenes (centre pips, court art, table, card edges).

    python -m companion.detector.train_reader DATA_DIR... --out models/index_reader.onnx
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import cv2
import numpy as np

from .index_reader import CROP, NONE_CLASS, build_model, crop, to_blob


def load_split(folder: Path, split: str):
    images, samples = [], []
    for img_path in sorted((folder / "images" / split).glob("*.jpg")):
        lbl = folder / "labels" / split / (img_path.stem + ".txt")
        img = cv2.imread(str(img_path))
        if img is None:
            continue
        H, W = img.shape[:2]
        k = len(images)
        images.append(img)
        boxes = []
        for line in lbl.read_text().splitlines() if lbl.exists() else []:
            c, x, y, w, h = line.split()
            x, y, w, h = float(x) * W, float(y) * H, float(w) * W, float(h) * H
            b = (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
            boxes.append(b)
            samples.append((k, b, int(c)))
        samples += [(k, b, NONE_CLASS) for b in negatives(boxes, W, H, np.random.default_rng(k),
                                                          max(1, len(boxes)))]
    return images, samples


def _iou(a, b) -> float:
    x1, y1, x2, y2 = max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])
    inter = max(0.0, x2 - x1) * max(0.0, y2 - y1)
    ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / ua if ua > 0 else 0.0


def negatives(boxes, W, H, rng, n):
    out = []
    sizes = [(b[2] - b[0], b[3] - b[1]) for b in boxes] or [(W * 0.06, H * 0.09)]
    tries = 0
    while len(out) < n and tries < 50 * n:
        tries += 1
        w, h = sizes[rng.integers(len(sizes))]
        s = rng.uniform(0.7, 1.4)
        w, h = w * s, h * s
        if boxes and rng.random() < 0.6:     # near a labelled index: on the same card
            b = boxes[rng.integers(len(boxes))]
            cx = (b[0] + b[2]) / 2 + rng.normal(0, 3) * w
            cy = (b[1] + b[3]) / 2 + rng.normal(0, 3) * h
        else:
            cx, cy = rng.uniform(0, W), rng.uniform(0, H)
        cand = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
        if cand[0] < 0 or cand[1] < 0 or cand[2] > W or cand[3] > H:
            continue
        if all(_iou(cand, b) < 0.05 for b in boxes):
            out.append(cand)
    return out


def jitter(box, rng):
    """Move and resize a box as YOLO's proposals do."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    cx = (x1 + x2) / 2 + rng.normal(0, 0.08) * w
    cy = (y1 + y2) / 2 + rng.normal(0, 0.08) * h
    s = math.exp(rng.normal(0, 0.12))
    return (cx - w * s / 2, cy - h * s / 2, cx + w * s / 2, cy + h * s / 2)


def make_batch(images, samples, idx, rng, augment: bool):
    crops, ys = [], []
    for i in idx:
        k, b, c = samples[i]
        img = images[k]
        c_img = crop(img, jitter(b, rng) if augment else b)
        if augment:
            if rng.random() < 0.3:
                c_img = cv2.GaussianBlur(c_img, (0, 0), rng.uniform(0.3, 1.2))
            if rng.random() < 0.5:
                c_img = np.clip(c_img * rng.uniform(0.7, 1.25) + rng.uniform(-25, 25), 0,
                                255).astype(np.uint8)
        crops.append(c_img)
        ys.append(c)
    return to_blob(crops), np.array(ys)


def main() -> None:
    ap = argparse.ArgumentParser(description="train the index reader")
    ap.add_argument("data", nargs="+", help="dataset folders from `companion dataset`")
    ap.add_argument("--out", default="models/index_reader.onnx")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--per-epoch", type=int, default=20000, help="crops per epoch")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--init", default=None, help="start from these weights (.pt state dict)")
    ap.add_argument("--lr", type=float, default=3e-3, help="peak learning rate")
    args = ap.parse_args()
    import torch
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    images, train, val_images, val = [], [], [], []
    for d in args.data:
        im, s = load_split(Path(d), "train")
        train += [(k + len(images), b, c) for k, b, c in s]
        images += im
        im, s = load_split(Path(d), "val")
        val += [(k + len(val_images), b, c) for k, b, c in s]
        val_images += im
    print(f"{len(train)} training crops ({sum(c != NONE_CLASS for _, _, c in train)} indices), "
          f"{len(val)} validation", flush=True)
    model = build_model()
    if args.init:
        model.load_state_dict(torch.load(args.init, map_location="cpu"))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    steps = args.epochs * (args.per_epoch // 128)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=steps)
    lossf = torch.nn.CrossEntropyLoss(label_smoothing=0.05)
    vx, vy = make_batch(val_images, val, range(len(val)), rng, augment=False)
    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        order = rng.permutation(len(train))[: args.per_epoch]
        total = 0.0
        for i in range(0, len(order) - 127, 128):
            x, y = make_batch(images, train, order[i:i + 128], rng, augment=True)
            loss = lossf(model(torch.from_numpy(x)), torch.from_numpy(y))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach())
        model.eval()
        with torch.no_grad():
            pred = np.concatenate([model(torch.from_numpy(vx[j:j + 512])).argmax(1).numpy()
                                   for j in range(0, len(vx), 512)])
        pos = vy != NONE_CLASS
        acc = float((pred[pos] == vy[pos]).mean())
        neg = float((pred[~pos] == NONE_CLASS).mean()) if (~pos).any() else 1.0
        print(f"epoch {epoch + 1}/{args.epochs}: loss {total / (len(order) // 128):.3f}, "
              f"val index accuracy {acc:.4f}, not-an-index {neg:.4f} ({time.time() - t0:.0f} s)",
              flush=True)
        if acc >= best:
            best = acc
            out = Path(args.out)
            out.parent.mkdir(parents=True, exist_ok=True)
            torch.save(model.state_dict(), out.with_suffix(".pt"))
            torch.onnx.export(model, torch.zeros(1, 3, CROP, CROP), str(out), input_names=["crops"],
                              output_names=["logits"], dynamic_axes={"crops": {0: "n"},
                                                                     "logits": {0: "n"}},
                              opset_version=17, dynamo=False)
    print(f"best val index accuracy {best:.4f} -> {args.out}")


if __name__ == "__main__":
    main()
