"""Train the cover reader (`companion.detector.cover_reader`): does a card lie under another?

    python -m companion.training.harvest --split train          (once: the real faces)
    python -m companion.training.cover_reader --out runs/cover/cover_reader.onnx
    python -m companion.training.cover_reader --init runs/cover/cover_reader.pt --lr 1e-3 \
        --drop-detector-covered --out runs/cover2/cover_reader.onnx

Harvest: rendered piles (seeds 61001 and 61002, 8,000 scenes each, half of them drawing
every card from the harvested `realdecks/train` faces) give each face-up card's outline,
labelled "covered" where cards above it hide at least 8 % of it and "top" for the top card
(a hand over it is no card); each true outline is cut twice, jittered as a finder draws
it, and the video detector's own outlines of the cards it names are cut too. Straightened
real train cards alone on a table are more "top" crops each epoch (real designs: an art
deck's lines are not another card's edge). Train: the corner reader's network, one logit,
binary cross-entropy, the corner reader's camera augmentation, either end up. The figure
after each epoch is on the last tenth of the harvest: covered cards caught and top cards
flagged at 0.5 / 0.8 / 0.9. `realdecks/test` is never read.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from ..detector.cover_reader import COVER_H, COVER_W, cover_crop

COVERED = 0.08          # share of a card under cards above it that makes it "covered"
SEEDS = (61001, 61002)


def jitter(quad: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """An outline as an imperfect finder would draw it: scaled, turned, shifted, skewed."""
    c = quad.mean(0)
    size = float(np.sqrt(abs(cv2.contourArea(quad))))
    ang = np.deg2rad(rng.normal(0, 4))
    rot = np.float32([[np.cos(ang), -np.sin(ang)], [np.sin(ang), np.cos(ang)]])
    p = (quad - c) * np.exp(rng.normal(0, 0.06)) @ rot.T + c + rng.normal(0, 0.04, 2) * size
    return (p + rng.normal(0, 0.015, (4, 2)) * size).astype(np.float32)


def covered_share(cards: list, k: int, side: int) -> float | None:
    """Share of card k's in-frame area under the cards above it (face up or down)."""
    mine = np.zeros((side, side), np.uint8)
    cv2.fillConvexPoly(mine, np.round(cards[k].quad).astype(np.int32), 1)
    area = int(mine.sum())
    if area < 50:
        return None
    above = np.zeros_like(mine)
    for j in range(k):
        cv2.fillConvexPoly(above, np.round(cards[j].quad).astype(np.int32), 1)
    return float((mine & above).sum()) / area


def harvest(path: Path, seed: int, scenes: int, real_faces: Path) -> None:
    """Labelled cover crops of `scenes` rendered piles of `seed`, saved to `path`."""
    from ..detector.model import load_detector
    from ..render.fonts import use_training_fonts
    from ..render.scene import SceneRenderer
    from .dataset import real_face_pool
    use_training_fonts()
    cv2.setNumThreads(1)
    det = load_detector()
    det.cover = None                     # the video detector's outlines as they were
    renderer = SceneRenderer(320, seed, real_faces=real_face_pool(real_faces), real_share=0.5)
    rng = np.random.default_rng(seed)
    xs, ys, src = [], [], []
    for i in tqdm(range(scenes), desc=f"harvesting seed {seed}", unit="scene"):
        s = renderer.render(i)
        side = s.image.shape[0]
        share = {}
        for k, card in enumerate(s.cards):
            if card.back or card.cls is None:
                continue
            f = covered_share(s.cards, k, side)
            if f is None:
                continue
            share[card.cls] = f
            label = 0 if k == 0 else 1 if f >= COVERED else None
            if label is None or card.visible < 0.25:
                continue
            for _ in range(2):
                xs.append(cover_crop(s.image, jitter(card.quad, rng)))
                ys.append(label)
                src.append(0)
        top = s.cards[0].cls if s.cards and not s.cards[0].back else None
        for quad, _, found in det.cards(s.image):
            if not found:
                continue
            cls = found[0][2]
            label = 0 if cls == top else 1 if share.get(cls, 0.0) >= COVERED else None
            if label is not None:
                xs.append(cover_crop(s.image, quad))
                ys.append(label)
                src.append(1)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, x=np.stack(xs), y=np.int64(ys), src=np.int64(src))
    print(f"{path}: {len(ys)} crops, {int(np.sum(ys))} covered, {int(np.sum(src))} from the "
          "detector's outlines")


def real_tops(cards: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
    """Cover crops of n straightened real cards alone on a table (jittered outlines)."""
    from .corner_reader import jitter_rect
    out = []
    for i in rng.choice(len(cards), min(n, len(cards)), replace=False):
        rect = jitter_rect(rng, True)
        if rng.random() < 0.5:
            rect = np.roll(rect, 2, axis=0)
        out.append(cover_crop(cards[i], rect))
    return np.stack(out)


def figures(p: np.ndarray, y: np.ndarray) -> str:
    return "; ".join(f"at {t}: covered caught {np.mean(p[y == 1] >= t):.3f}, top flagged "
                     f"{np.mean(p[y == 0] >= t):.4f}" for t in (0.5, 0.8, 0.9))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--real", type=Path, default=Path("data/realcards-train.npz"),
                    help="harvested train cards (companion.training.harvest)")
    ap.add_argument("--cache", type=Path, default=Path("data"),
                    help="folder for the harvested cover crops")
    ap.add_argument("--scenes", type=int, default=8000, help="rendered piles per seed")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--init", type=Path, help="start from these weights (.pt)")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--drop-detector-covered", action="store_true",
                    help="leave out the detector's outlines labelled covered (an outline "
                         "naming a card below may be the top card's own outline)")
    ap.add_argument("--out", type=Path, default=Path("runs/cover/cover_reader.onnx"))
    args = ap.parse_args()
    if not args.real.is_file():
        raise SystemExit(f"{args.real}: no harvested cards; run python -m "
                         "companion.training.harvest first (it needs ../shared/realdecks)")
    import torch
    import torch.nn.functional as F

    from .corner_reader import augment, blob, build_model
    torch.set_num_threads(2)
    cv2.setNumThreads(1)
    files = [args.cache / f"cover-{seed}.npz" for seed in SEEDS]
    for seed, f in zip(SEEDS, files):
        if not f.is_file():
            harvest(f, seed, args.scenes, args.real)
    data = [np.load(f) for f in files]
    x = np.concatenate([d["x"] for d in data])
    y = np.concatenate([d["y"] for d in data])
    if args.drop_detector_covered:
        keep = ~((np.concatenate([d["src"] for d in data]) == 1) & (y == 1))
        x, y = x[keep], y[keep]
    n_check = len(x) // 10
    vx, vy, x, y = x[-n_check:], y[-n_check:], x[:-n_check], y[:-n_check]
    real = np.load(args.real)["cards"]
    print(f"train: {len(x)} crops ({int(y.sum())} covered) + real cards; check: {n_check}")

    model = build_model((16, 32, 64, 96), outputs=1)
    if args.init:
        model.load_state_dict(torch.load(args.init))
    rng = np.random.default_rng(0)
    steps = (len(x) + 8000) // args.batch
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr,
                                                total_steps=args.epochs * steps, pct_start=0.15)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for epoch in range(args.epochs):
        t0 = time.time()
        ex = np.concatenate([x, real_tops(real, rng, 8000)])
        ey = np.concatenate([y, np.zeros(len(ex) - len(x), np.int64)])
        order = rng.permutation(len(ex))
        model.train()
        total = 0.0
        bar = tqdm(range(steps), desc=f"epoch {epoch + 1}", unit="batch", leave=False)
        for k in bar:
            idx = order[k * args.batch:(k + 1) * args.batch]
            xb = ex[idx]
            turn = rng.random(len(idx)) < 0.5             # either end up
            xb[turn] = xb[turn][:, ::-1, ::-1]
            z = model(blob(augment(xb, rng)))[:, 0]
            loss = F.binary_cross_entropy_with_logits(z, torch.from_numpy(ey[idx]).float())
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach())
        model.eval()
        with torch.no_grad():
            z = torch.cat([model(blob(vx[i:i + 512].astype(np.float32)))[:, 0]
                           for i in range(0, len(vx), 512)])
        check = figures(torch.sigmoid(z).numpy(), vy)
        print(f"epoch {epoch + 1}: loss {total / steps:.4f}; check {check}; "
              f"{time.time() - t0:.0f} s", flush=True)
        torch.save(model.state_dict(), args.out.with_suffix(".pt"))
    torch.onnx.export(model, torch.zeros(1, 3, COVER_H, COVER_W), str(args.out),
                      input_names=["cards"], output_names=["logits"],
                      dynamic_axes={"cards": {0: "n"}, "logits": {0: "n"}}, opset_version=17,
                      dynamo=False)
    print(f"wrote {args.out} and {args.out.with_suffix('.pt')}")


if __name__ == "__main__":
    main()
