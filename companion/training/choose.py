"""The rule a new corner reader or live card finder is shipped by, fixed before any
candidate runs.

Reader runs since session 10 and finder runs since session 26 were judged on the choice
sets (never on `realdecks/test`, the 51 real photos or the held-out seeds) by these
questions, and each session wrote the comparison again by hand. This module is that
rule, once:

- real decks in photos (`realdecks/valid` on a table, close in a webcam's frame, small
  in it): more cards named right, summed over the three, and no more wrong cards;
- rendered piles in the video settings (each choosing seed): no more misread top cards,
  and at most one fewer whole top card named;
- live games (each choosing set of films): no fewer flips called right, and no more
  false flips (a false flip is the worst error a referee makes);
- slaps the camera sees with no pad (each choosing set of films; the finder's boxes give
  the watcher the pile's place and size): no fewer slaps judged right, no more invented.

`benchmarks/choose_reader.py` and `benchmarks/choose_finder.py` measure a candidate and
the shipped model on those sets and print this verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Figures:
    """One model's figures on the choice sets."""
    photos: dict[str, tuple[int, int, int]] = field(default_factory=dict)   # right, wrong, unclear
    # whole top cards named, whole top cards, misreads
    rendered: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    live: dict[str, tuple[int, int, int]] = field(default_factory=dict)     # matched, true, false
    slaps: dict[str, tuple[int, int, int]] = field(default_factory=dict)    # right, slaps, invented


def verdict(base: Figures, cand: Figures) -> list[tuple[str, bool, str]]:
    """(question, passed, why) for each part both models were measured on; a candidate
    ships only when every line passes."""
    out = []
    sets = sorted(set(base.photos) & set(cand.photos))
    if sets:
        br = sum(base.photos[s][0] for s in sets)
        bw = sum(base.photos[s][1] for s in sets)
        cr = sum(cand.photos[s][0] for s in sets)
        cw = sum(cand.photos[s][1] for s in sets)
        out.append((f"photos ({', '.join(sets)}): more right, no more wrong",
                    cr > br and cw <= bw, f"right {br} -> {cr}, wrong {bw} -> {cw}"))
    for s in sorted(set(base.rendered) & set(cand.rendered)):
        (bn, _, bm), (cn, _, cm) = base.rendered[s], cand.rendered[s]
        out.append((f"rendered {s}: no more misreads, at most 1 fewer whole top card",
                    cm <= bm and cn >= bn - 1, f"whole {bn} -> {cn}, misreads {bm} -> {cm}"))
    for s in sorted(set(base.live) & set(cand.live)):
        (bm, _, bf), (cm, _, cf) = base.live[s], cand.live[s]
        out.append((f"live {s}: no fewer flips, no more false flips",
                    cm >= bm and cf <= bf, f"flips {bm} -> {cm}, false {bf} -> {cf}"))
    for s in sorted(set(base.slaps) & set(cand.slaps)):
        (br, _, bi), (cr, _, ci) = base.slaps[s], cand.slaps[s]
        out.append((f"slaps {s}: no fewer judged right, no more invented",
                    cr >= br and ci <= bi, f"right {br} -> {cr}, invented {bi} -> {ci}"))
    return out


def ships(lines: list[tuple[str, bool, str]]) -> bool:
    return bool(lines) and all(ok for _, ok, _ in lines)
