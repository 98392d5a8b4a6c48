"""Train the middle reader (`companion.detector.middle_reader`) on real card faces.

    python -m companion.training.harvest --split train      (once; also --split valid)
    python -m companion.training.middle_reader --epochs 14
    python -m companion.training.middle_reader --letters --epochs 80 \
        --out models/court_letters.onnx

The straightened cards harvested from `../shared/realdecks/train` (hundreds of real
designs), plus faces of the renderer's own deck styles (so the decks of the rendered
films are known too), each cut anew every epoch from an outline jittered as a finder
would draw it, either end up, through the corner reader's camera augmentation, corners
blanked. Labels: the rank group (the ace, 2-10 or "court") and the suit (jokers are left
out). Figures on
`realdecks/valid` cards (a fixed, seeded cut) after each epoch: right, and how often the
true group falls under each veto threshold (a right card the veto would make unclear).
`realdecks/test` is never read here.

`--letters` trains the court-letter network instead (`MiddleReader.letters`: jack, queen
or king from a court's picture, corners blanked as above), from the corner reader's
weights with its last layer made anew: about 1,900 real courts are too few to learn a
picture from nothing (from nothing, 40 epochs read 59 % of valid's courts; from the corner
reader's weights, 80 epochs read 93 %). The renderer draws every court with the same
random art, so its courts are taught even odds (a picture that shows no letter weighs
nothing). `--from-corner-reader` starts the middle reader from those weights too (session
57: its suit read better on valid, the photos no better; measured, not shipped).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from ..detector.card_reader import NONE_CLASS
from ..detector.middle_reader import (FIRST_COURT, GROUPS, LETTERS, MID_H, MID_W, OUTPUTS,
                                      middle_crop, probabilities, rank_group, softmax)
from .corner_reader import augment, blob, jitter_rect
from .harvest import CARD_H, CARD_W, MARGIN

VETOES = (0.01, 0.03, 0.1)


def rendered_cards(path: Path, styles: int, seed: int = 31):
    """Faces of `styles` rendered deck styles in the harvested cards' layout (CARD_W x
    CARD_H in a MARGIN of plain table), cached in `path`."""
    if not path.is_file():
        from ..render.faces import Deck, DeckStyle
        from ..render.fonts import use_training_fonts
        use_training_fonts()
        rng = np.random.default_rng(seed)
        cards, ys = [], []
        for s in tqdm(range(styles), desc="rendering deck styles", unit="style"):
            deck = Deck(DeckStyle.random(seed * 1000 + s))
            for cls in range(NONE_CLASS):
                face = deck.face(cls)
                img = cv2.resize(face.image, (CARD_W, CARD_H), interpolation=cv2.INTER_AREA)
                a = cv2.resize(face.alpha, (CARD_W, CARD_H))[..., None] / 255.0
                out = np.empty((CARD_H + 2 * MARGIN, CARD_W + 2 * MARGIN, 3), np.uint8)
                out[:] = rng.integers(30, 200, 3)
                roi = out[MARGIN:MARGIN + CARD_H, MARGIN:MARGIN + CARD_W]
                roi[:] = (img * a + roi * (1 - a)).astype(np.uint8)
                cards.append(out)
                ys.append(cls)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, cards=np.stack(cards), y=np.int64(ys))
    d = np.load(path)
    return d["cards"], d["y"]


def crops(cards: np.ndarray, y: np.ndarray, rng: np.random.Generator, hard: bool = True):
    """One middle crop per card from a jittered outline, either end up; labels are the
    card classes (`loss` and `figures` split them into group and suit)."""
    xs = []
    for img in cards:
        rect = jitter_rect(rng, hard)
        if rng.random() < 0.5:
            rect = np.roll(rect, 2, axis=0)            # read from the other end
        xs.append(middle_crop(img, rect))
    return np.stack(xs), np.int64(y)


def targets(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rank groups and suits of card classes."""
    return np.int64([rank_group(int(c) % 13) for c in y]), np.int64(y) // 13


def loss(logits, y: np.ndarray):
    """Cross-entropy of the rank group plus that of the suit."""
    import torch
    import torch.nn.functional as F
    g, s = (torch.from_numpy(t) for t in targets(y))
    k = len(GROUPS)
    return F.cross_entropy(logits[:, :k], g, label_smoothing=0.05) \
        + F.cross_entropy(logits[:, k:], s, label_smoothing=0.05)


def build_model(widths=(16, 32, 64, 96)):
    """The corner reader's network (a stem, three double-conv blocks, global pooling), its
    last layer over the rank groups and suits."""
    from .corner_reader import build_model as network
    return network(widths, outputs=OUTPUTS)


def predict(model, x: np.ndarray, post=probabilities) -> np.ndarray:
    """The model's logits on crops `x`, through `post` (the middle reader's probabilities)."""
    import torch
    model.eval()
    with torch.no_grad():
        z = torch.cat([model(blob(x[i:i + 512].astype(np.float32)))
                       for i in range(0, len(x), 512)])
    model.train()
    return post(z.numpy())


def figures(probs: np.ndarray, y: np.ndarray) -> str:
    """Right group and suit, and how often the truth falls under each veto threshold."""
    out = []
    for name, p, t in (("group", probs[:, :len(GROUPS)], targets(y)[0]),
                       ("suit", probs[:, len(GROUPS):], targets(y)[1])):
        truth = p[np.arange(len(t)), t]
        vetoed = ", ".join(f"< {v}: {float((truth < v).mean()):.4f}" for v in VETOES)
        out.append(f"{name} right {float((p.argmax(1) == t).mean()):.4f} (true {vetoed})")
    return "; ".join(out)


def courts_only(cards: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The court cards among harvested or rendered cards, and their letters (LETTERS)."""
    keep = (y < NONE_CLASS) & (y % 13 >= FIRST_COURT)
    return cards[keep], np.int64(y[keep] % 13 - FIRST_COURT)


def letter_loss(logits, letters: np.ndarray, smoothing: float = 0.05):
    """Cross-entropy of the court letter; a letter of -1 (a rendered court, whose picture
    is the same random art whatever the court) is taught even odds, so a picture that
    shows no letter says so and weighs no reading."""
    import torch
    k = len(LETTERS)
    t = np.full((len(letters), k), 1.0 / k, np.float32)
    real = letters >= 0
    t[real] = smoothing / k
    t[np.flatnonzero(real), letters[real]] += 1.0 - smoothing
    return -(torch.from_numpy(t) * torch.log_softmax(logits, 1)).sum(1).mean()


def letter_figures(probs: np.ndarray, letters: np.ndarray) -> str:
    """Right letters, and how many wrong ones are read at 0.9 or more."""
    right = probs.argmax(1) == letters
    return (f"letter right {float(right.mean()):.4f}, wrong at 0.9+ "
            f"{int(((probs.max(1) >= 0.9) & ~right).sum())} of {len(letters)}")


def fit(model, cards, labels, loss_fn, epochs: int, lr: float, batch: int, report,
        checkpoint: Path | None = None):
    """Train `model` on middle crops cut anew each epoch from `cards` (`crops`, then the
    corner reader's camera augmentation): AdamW, one-cycle lr; after each epoch print
    `report(model)` (a figure on valid) and save the weights to `checkpoint`."""
    import torch
    rng = np.random.default_rng(0)
    steps = epochs * (len(cards) // batch)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps,
                                                pct_start=0.15)
    for epoch in range(epochs):
        t0 = time.time()
        x, y = crops(cards, labels, rng)
        order = rng.permutation(len(x))
        bar = tqdm(range(0, len(order) - batch + 1, batch), desc=f"epoch {epoch + 1}",
                   unit="batch", leave=False)
        total = 0.0
        for k, i in enumerate(bar):
            idx = order[i:i + batch]
            batch_loss = loss_fn(model(blob(augment(x[idx], rng))), y[idx])
            opt.zero_grad()
            batch_loss.backward()
            opt.step()
            sched.step()
            total += float(batch_loss.detach())
            bar.set_postfix(loss=f"{total / (k + 1):.3f}")
        print(f"epoch {epoch + 1}: loss {total / max(len(bar), 1):.3f}; valid "
              f"{report(model)}; {time.time() - t0:.0f} s", flush=True)
        if checkpoint is not None:
            torch.save(model.state_dict(), checkpoint)
    return model.eval()


def from_corner_reader(init: Path, outputs: int):
    """The corner reader's network with its weights (`init`) and a new last layer of
    `outputs`: its features, learnt from far more crops than there are real cards, are a
    better start than nothing for a picture's letter or a middle's pips."""
    import torch
    import torch.nn as nn
    from .corner_reader import WIDTHS
    from .corner_reader import build_model as network
    model = network(WIDTHS)
    model.load_state_dict(torch.load(init, map_location="cpu"))
    model[-1] = nn.Linear(WIDTHS[-1], outputs)
    return model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--real", default="data/realcards-train.npz", help="harvested train cards")
    ap.add_argument("--real-valid", default="data/realcards-valid.npz",
                    help="harvested valid cards (figures only)")
    ap.add_argument("--styles", type=int, default=60, help="rendered deck styles")
    ap.add_argument("--cache", default="data/middle", help="folder for the rendered faces")
    ap.add_argument("--epochs", type=int, default=14)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default="models/middle_reader.onnx")
    ap.add_argument("--letters", action="store_true",
                    help="train the court-letter network instead (to --out)")
    ap.add_argument("--init", default="models/corner_reader.pt",
                    help="the corner reader's weights the letter network starts from (and the "
                    "middle reader with --from-corner-reader)")
    ap.add_argument("--from-corner-reader", action="store_true",
                    help="start the middle reader from --init's weights, not from nothing")
    args = ap.parse_args()

    import torch
    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)
    for p in (args.real, args.real_valid):
        if not Path(p).is_file():
            raise SystemExit(f"{p}: no harvested cards; run python -m companion.training.harvest "
                             "first (it needs ../shared/realdecks)")
    real = np.load(args.real)
    keep = real["y"] != NONE_CLASS                      # jokers have no rank
    rc, ry = real["cards"][keep], real["y"][keep]
    gc, gy = rendered_cards(Path(args.cache) / f"rendered-{args.styles}.npz", args.styles)
    cards, labels = np.concatenate([rc, gc]), np.concatenate([ry, gy])
    valid = np.load(args.real_valid)
    vk = valid["y"] != NONE_CLASS
    vx, vy = crops(valid["cards"][vk], valid["y"][vk], np.random.default_rng(1234), hard=False)
    print(f"train: {len(rc)} real + {len(gc)} rendered cards; valid: {len(vx)} real cards")
    out = Path(args.out)
    pt = Path("runs") / "middle" / out.with_suffix(".pt").name if out.parent.name == "models" \
        else out.with_suffix(".pt")
    pt.parent.mkdir(parents=True, exist_ok=True)
    if args.letters:
        cc, cl = courts_only(cards, labels)
        cl[len(courts_only(rc, ry)[0]):] = -1          # the rendered courts: no letter shown
        vc, vl = courts_only(valid["cards"][vk], valid["y"][vk])
        vcx, _ = crops(vc, vl, np.random.default_rng(1234), hard=False)
        print(f"letters: {len(cc)} courts; valid {len(vcx)}")
        model = fit(from_corner_reader(Path(args.init), len(LETTERS)), cc, cl, letter_loss,
                    args.epochs, args.lr, 64,
                    lambda m: letter_figures(predict(m, vcx, softmax), vl), pt)
    else:
        start = from_corner_reader(Path(args.init), OUTPUTS) if args.from_corner_reader \
            else build_model()
        model = fit(start, cards, labels, loss, args.epochs, args.lr, args.batch,
                    lambda m: figures(predict(m, vx), vy), pt)
    export(model, out)
    print(f"wrote {out} and {pt}")


def export(model, out: Path) -> None:
    """The network as ONNX: middle crops ("cards") -> logits."""
    import torch
    model.eval()
    torch.onnx.export(model, torch.zeros(1, 3, MID_H, MID_W), str(out), input_names=["cards"],
                      output_names=["logits"], dynamic_axes={"cards": {0: "n"}, "logits": {0: "n"}},
                      opset_version=17, dynamo=False)


if __name__ == "__main__":
    main()
