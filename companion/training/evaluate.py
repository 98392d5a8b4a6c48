"""`companion eval`: the detector's figures, measured honestly, in one table.

- Real photos of one deck (default ../shared/realcards, evaluation only, never
  trained on): top-1 card identity per photo (the card with the largest summed
  confidence, as the before-stop hook scores it), and the confusion for each miss.
- Real decks never trained on (default ../shared/realdecks/test: hundreds of
  designs, one card an image): each card put back in its proportions and given a
  plain table border, as a camera over a table would see it; right, wrong card, or
  "card unclear" (nothing named).
  A joker is right when nothing is named. The same images also photographed as a
  cheap webcam over a table would (`webcam_photo`): any angle, smaller, tilted camera,
  the renderer's light and lens chain; the closest stand-in here for other real decks
  on a real table.
- A held-out rendered set (a seed no training set uses): the top card's identity
  (what the referee needs), its per-class recall and its misreads.
- Inference time per 320 px frame on this machine, through ONNX Runtime.
"""

from __future__ import annotations

import collections
import csv
import time
from pathlib import Path

import numpy as np

from ..detector.detections import Detections, Detector
from ..engine.cards import CLASS_NAMES

SHARED = Path(__file__).resolve().parents[3] / "shared"
REAL_DEFAULT = SHARED / "realcards"
REALDECKS_TEST = SHARED / "realdecks" / "test"
TABLE_PAD = 0.3                # share of the image added on each side as a plain table
TABLE_GREY = (118, 118, 118)
# How tall the card stands in a webcam photo, as a share of the frame's height: the default
# set (a card held close over the table), and the small set (a webcam above a pile, or a
# card further off: session 20 found the reader's sharp drop below ~30 %).
WEBCAM_SIZE, WEBCAM_SMALL = (0.45, 0.85), (0.2, 0.32)
# eval's rows of real-deck photos: name -> (webcam photos a card, the card's size in the
# frame, the photos' seed). The small photos have a generator of their own, so the close
# set's photos stay as they were before it.
PHOTO_SETS = {"table": (0, WEBCAM_SIZE, 7), "close": (2, WEBCAM_SIZE, 7),
              "small": (1, WEBCAM_SMALL, 8)}


def canonical(name: str) -> str:
    name = name.strip()
    if name[:1] in "Tt":
        name = "10" + name[1:]
    return name[:-1].upper() + name[-1:].lower()


def top1(det: Detections) -> tuple[str | None, float]:
    score: collections.Counter = collections.Counter()
    for n, c in zip(det.names, det.confidence):
        score[n] += float(c)
    if not score:
        return None, 0.0
    card, s = score.most_common(1)[0]
    return card, s


def eval_real(detector: Detector, folder: Path, conf: float | None = None) -> dict:
    import cv2
    labels_csv = folder / "labels.csv"
    if labels_csv.is_file():
        with labels_csv.open() as fh:
            rows = [(folder / r["file"], canonical(r["card"])) for r in csv.DictReader(fh)]
    else:
        rows = [(p, canonical(p.stem)) for p in sorted(folder.glob("*.jpg"))]
    misses, correct = [], 0
    for path, truth in rows:
        img = cv2.imread(str(path))
        if img is None:
            misses.append((path.name, truth, "unreadable"))
            continue
        got, _ = top1(detector(img, conf))
        if got == truth:
            correct += 1
        else:
            misses.append((path.name, truth, got or "nothing"))
    return {"photos": len(rows), "correct": correct, "misses": misses}


def on_table(image: np.ndarray, pad: float = TABLE_PAD) -> np.ndarray:
    """A realdecks image as a camera would see the card on a plain table: back in a card's
    proportions (the collection stretched every card to fill a square frame), with a
    plain border round it."""
    import cv2
    from ..render.photodeck import ASPECT
    h, w = image.shape[:2]
    if abs(h - w) <= 2:
        image = cv2.resize(image, (w, int(round(w * ASPECT))), interpolation=cv2.INTER_LINEAR)
    p = int(round(pad * max(image.shape[:2])))
    return cv2.copyMakeBorder(image, p, p, p, p, cv2.BORDER_CONSTANT, value=TABLE_GREY)


def eval_realdecks(detector: Detector, folder: Path, conf: float = 0.25,
                   progress: bool = True, webcam: int = 0, seed: int = 7,
                   keep: Path | None = None,
                   size: tuple[float, float] = WEBCAM_SIZE) -> dict:
    """Right, wrong card and "card unclear" on real deck images (`<card>/*.jpg`, joker/
    for jokers), each seen as on a table (`on_table`), or with `webcam` > 0 photographed
    that many times as a webcam over a table would (`webcam_photo`, the card `size` of the
    frame's height, the generator seeded with `seed`: the same photos every run). keep: a
    folder to write the misses into."""
    import cv2
    from tqdm import tqdm
    rows = sorted((p, p.parent.name) for p in folder.glob("*/*.jpg"))
    rng = np.random.default_rng(seed)
    right = wrong = unclear = 0
    jokers = jokers_named = 0
    misreads: collections.Counter = collections.Counter()
    desc = f"{'webcam photos' if webcam else 'real decks'} ({folder.name})"
    for path, truth in tqdm(rows, desc=desc, leave=False, disable=None if progress else True):
        img = cv2.imread(str(path))
        if img is None:
            print(f"{path}: unreadable image, skipped")
            continue
        photos = ([webcam_photo(img, rng, size=size)[0] for _ in range(webcam)] if webcam
                  else [on_table(img)])
        for k, photo in enumerate(photos):
            got, _ = top1(detector(photo, conf))
            if truth not in CLASS_NAMES:              # a joker: "no card" is right
                jokers += 1
                jokers_named += got is not None
                continue
            if got == truth:
                right += 1
                continue
            if got is None:
                unclear += 1
            else:
                wrong += 1
                misreads[(truth, got)] += 1
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                cv2.imwrite(str(keep / f"{truth}-{path.stem}-{k}-as-{got}.jpg"), photo)
    return {"cards": right + wrong + unclear, "right": right, "wrong": wrong,
            "unclear": unclear, "jokers": jokers, "jokers_named": jokers_named,
            "misreads": [(a, b, n) for (a, b), n in misreads.most_common(10)]}


def webcam_photo(card: np.ndarray, rng: np.random.Generator, width: int = 640,
                 height: int = 480, size: tuple[float, float] = WEBCAM_SIZE
                 ) -> tuple[np.ndarray, np.ndarray]:
    """A realdecks image as a cheap webcam over a plain table would photograph the card:
    back in a card's proportions, then `webcam_shot` (any angle, `size` of the frame's
    height, a table, the light and lens chain, a 640 x 480 sensor). Returns the photo and
    the card's true corners (TL, TR, BR, BL of the upright face)."""
    from ..render.photodeck import face_from_frame, webcam_shot
    return webcam_shot(face_from_frame(card, 240), rng, width, height, size=size)


def eval_rendered(detector: Detector, images: int = 300, seed: int = 90_210, size: int = 320,
                  progress: bool = True) -> dict:
    """The top card's identity on scenes from a seed no training set uses."""
    from tqdm import tqdm

    from ..render.scene import SceneRenderer
    r = SceneRenderer(size, seed)
    top_n, top_hit = collections.Counter(), collections.Counter()
    confusion: collections.Counter = collections.Counter()
    whole = [0, 0]                        # top cards at least 90 % visible: seen, named
    for i in tqdm(range(images), desc="rendered eval", disable=None if progress else True,
                  leave=False):
        scene = r.render(i)
        # The top card, when it is face up and one of its indices can be read.
        top = scene.cards[0] if scene.cards else None
        if top is None or top.cls is None or not any(top.index_visible):
            continue
        got, _ = top1(detector(scene.image, 0.25))
        got_cls = CLASS_NAMES.index(got) if got else -1
        top_n[top.cls] += 1
        top_hit[top.cls] += got_cls == top.cls
        confusion[(top.cls, got_cls)] += 1
        if top.visible >= 0.9:            # whole: no hand over it, nothing out of frame
            whole[0] += 1
            whole[1] += got_cls == top.cls
    named = {k: v for k, v in confusion.items() if k[1] >= 0}
    sixnine = sum(v for (a, b), v in named.items()
                  if {CLASS_NAMES[a][:-1], CLASS_NAMES[b][:-1]} == {"6", "9"})
    suit = sum(v for (a, b), v in named.items()
               if CLASS_NAMES[a][:-1] == CLASS_NAMES[b][:-1] and a != b)
    other = sum(v for (a, b), v in named.items() if a != b) - sixnine - suit
    missed = sum(v for (a, b), v in confusion.items() if b < 0)
    name = lambda c: CLASS_NAMES[c] if c >= 0 else "nothing"
    return {"images": images,
            "top_cards": sum(top_n.values()), "top_correct": sum(top_hit.values()),
            "top_whole": whole[0], "top_whole_correct": whole[1],
            "top_recall": {CLASS_NAMES[c]: top_hit[c] / n for c, n in top_n.items()},
            "top_6_9": sixnine, "top_suit": suit, "top_other": other, "top_missed": missed,
            "top_misreads": [(name(a), name(b), v) for (a, b), v in
                             confusion.most_common() if a != b][:10]}


def time_detectors(detectors: dict[str, Detector], imgsz: int = 320, runs: int = 100,
                   readers: dict[str, Path] | None = None) -> dict:
    """Median time per frame of each detector, over 20 different rendered scenes (a
    frame's cost depends on how many cards it finds and reads again), interleaved so a
    busy moment of this machine hits them alike; and each corner reader file's time for
    one call on the crops of those frames (the old and the new reader side by side)."""
    from ..detector.detections import onnx_session
    from ..render.scene import SceneRenderer
    r = SceneRenderer(imgsz, 4242)
    frames = [r.render(i).image for i in range(20)]
    for det in detectors.values():
        for frame in frames[:5]:
            det(frame)
    times: dict[str, list[float]] = {name: [] for name in detectors}
    for i in range(runs):
        frame = frames[i % len(frames)]
        for name, det in detectors.items():
            t0 = time.perf_counter()
            det(frame)
            times[name].append((time.perf_counter() - t0) * 1000)
    out = {name: float(np.median(t)) for name, t in times.items()}
    for name, path in (readers or {}).items():
        sess = onnx_session(Path(path), 2)
        inp = sess.get_inputs()[0]
        h, w = inp.shape[2], inp.shape[3]
        blob = np.random.default_rng(0).random((8, 3, h, w), np.float32)  # 2 cards, 4 ends
        for _ in range(10):
            sess.run(None, {inp.name: blob})
        t = []
        for _ in range(runs):
            t0 = time.perf_counter()
            sess.run(None, {inp.name: blob})
            t.append((time.perf_counter() - t0) * 1000)
        out[f"{name} ({w}x{h}, 8 crops a call)"] = float(np.median(t))
    return out

