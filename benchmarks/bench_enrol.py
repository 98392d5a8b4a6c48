"""Enrolled decks: how well a deck reads once enrolled, and what enrolling costs.

    python benchmarks/bench_enrol.py [--per-card 20] [--style 987654321] [--real DIR]
                                     [--other DIR] [--skip rendered real other timing]

1. rendered: a deck style no training set draws (style seed over 10**8) enrolled from
   one rendered photo per card (a plain table, roughly straight), then `--per-card`
   other scenes of each card of that style (any angle and size, a tilted camera, cards
   below it, sometimes a hand over part of it, light and lens effects): the top card's
   identity, in the video settings (`watch`) and the photo settings (`detect`).
2. real: `../shared/realcards` enrolled from its photos, then read under the changes of
   bench_robustness.py (another camera or room), both settings.
3. other: real cards of other decks (`../shared/realdecks/valid`) read with that deck:
   named right, named wrong, or no card.
4. timing: a 320 px frame in the video settings with and without the deck.
Enrolment time is printed for each enrolment. The real sets live outside the repository;
a part whose folder is absent says so and is skipped.
"""

from __future__ import annotations

import argparse
import collections
import csv
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_robustness import CONDITIONS  # noqa: E402

from companion.deck.enrol import enrol_photos  # noqa: E402
from companion.detector.model import default_model, load_detector  # noqa: E402
from companion.engine.cards import CLASS_NAMES  # noqa: E402
from companion.render.faces import Deck, DeckStyle  # noqa: E402
from companion.render.scene import card_photo, card_scene  # noqa: E402
from companion.training.evaluate import SHARED, canonical, on_table, time_detectors, top1  # noqa: E402


def enrol(folder: Path, name: str):
    det = load_detector(default_model(photo=True), photo=True)
    t0 = time.perf_counter()
    deck, report = enrol_photos(folder, det, name, progress=False)
    took = time.perf_counter() - t0
    n = sum(len(v) for v in report.enrolled.values())
    print(f"  enrolled {len(report.enrolled)} cards from {n} photos in {took:.1f} s "
          f"({took / max(n, 1):.2f} s a photo); missing: {' '.join(report.missing) or '-'}")
    return deck


def settings(deck) -> dict:
    return {"video": load_detector(default_model(photo=False), deck=deck),
            "photo": load_detector(default_model(photo=True), photo=True, deck=deck)}


def rendered(args) -> None:
    style = Deck(DeckStyle.random(args.style))
    rng = np.random.default_rng(args.style % 2**32)
    with tempfile.TemporaryDirectory() as tmp:
        for c in range(52):
            cv2.imwrite(str(Path(tmp) / f"{CLASS_NAMES[c]}.png"), card_photo(style, c, rng))
        print(f"rendered style {args.style}: 52 photos")
        deck = enrol(Path(tmp), f"style-{args.style}")
    scenes = [card_scene(style, c, rng) for c in range(52) for _ in range(args.per_card)]
    generic = {"video": load_detector(default_model(photo=False)),
               "photo": load_detector(default_model(photo=True), photo=True)}
    for label, det in settings(deck).items():
        right = wrong = below = 0
        misreads = collections.Counter()
        base = 0
        for scene in tqdm(scenes, desc=f"rendered, {label}", leave=False):
            truth = CLASS_NAMES[scene.pile[-1]]
            got, _ = top1(det(scene.image))
            base += top1(generic[label](scene.image))[0] == truth
            right += got == truth
            if got is not None and got != truth:
                wrong += 1
                below += CLASS_NAMES.index(got) in scene.pile
                misreads[(truth, got)] += 1
        n = len(scenes)
        print(f"  {label} settings: {right}/{n} top-1 ({right / n:.2%}), wrong card {wrong} "
              f"({below} of them a card below it), no card {n - right - wrong}; without the "
              f"deck {base}/{n} ({base / n:.2%})"
              + (f"; wrong: {', '.join(f'{a}->{b} x{k}' for (a, b), k in misreads.items())}"
                 if misreads else ""))


def real_rows(folder: Path):
    with (folder / "labels.csv").open() as fh:
        return [(folder / r["file"], canonical(r["card"])) for r in csv.DictReader(fh)]


def real(args, deck) -> None:
    rows = real_rows(args.real)
    photos = [(cv2.imread(str(p)), t) for p, t in rows]
    total = collections.Counter()
    for label, det in settings(deck).items():
        line = []
        for cond, change in CONDITIONS.items():
            if cond == "as taken":
                continue          # the photos enrolled: the ten changes are what counts
            ok = sum(top1(det(change(img)))[0] == t for img, t in photos)
            total[label] += ok
            line.append(f"{cond} {ok}")
        n = len(photos) * (len(CONDITIONS) - 1)
        print(f"  {label} settings: {total[label]}/{n} ({total[label] / n:.2%}); "
              + ", ".join(line), flush=True)


def other(args, deck) -> None:
    rows = sorted((p, p.parent.name) for p in args.other.glob("*/*.jpg")
                  if p.parent.name in CLASS_NAMES)
    det = settings(deck)["photo"]
    right = wrong = 0
    for p, truth in tqdm(rows, desc="other decks", leave=False):
        got, _ = top1(det(on_table(cv2.imread(str(p)))))
        right += got == truth
        wrong += got is not None and got != truth
    n = len(rows)
    print(f"  {n} cards of other decks ({args.other}) read with the {deck.name} deck: named "
          f"right {right} ({right / n:.1%}), named wrong {wrong} ({wrong / n:.1%}), no card "
          f"{n - right - wrong}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-card", type=int, default=20, help="rendered scenes per card (20)")
    ap.add_argument("--style", type=int, default=987_654_321,
                    help="rendered deck style seed (over 10**8: never trained on)")
    ap.add_argument("--real", type=Path, default=SHARED / "realcards",
                    help="real photos of one deck, named by card, with labels.csv")
    ap.add_argument("--other", type=Path, default=SHARED / "realdecks" / "valid",
                    help="real cards of other decks (<card>/*.jpg)")
    ap.add_argument("--skip", nargs="*", default=[],
                    choices=["rendered", "real", "other", "timing"], help="parts to leave out")
    args = ap.parse_args()
    if "rendered" not in args.skip:
        rendered(args)
    deck = None
    if {"real", "other", "timing"} - set(args.skip):
        if (args.real / "labels.csv").is_file():
            print(f"real photos ({args.real}):")
            deck = enrol(args.real, args.real.name)
        else:
            print(f"{args.real}/labels.csv: not found; the real parts are skipped (the photos "
                  "live outside the repository)")
    if deck is not None and "real" not in args.skip:
        real(args, deck)
    if deck is not None and "other" not in args.skip:
        if args.other.is_dir():
            other(args, deck)
        else:
            print(f"{args.other}: not found; other decks skipped")
    if deck is not None and "timing" not in args.skip:
        plain = load_detector(default_model(photo=False))
        with_deck = load_detector(default_model(photo=False), deck=deck)
        # One finder session for both (two spinning sessions slow each other): what is
        # timed apart is the reading with and without the deck.
        with_deck.finder = plain.finder
        t = time_detectors({"without deck": plain, "with deck": with_deck})
        print(f"  per 320 px frame (video settings, median): without deck "
              f"{t['without deck']:.2f} ms, with the deck {t['with deck']:.2f} ms "
              f"(+{t['with deck'] - t['without deck']:.2f} ms)")


if __name__ == "__main__":
    main()
