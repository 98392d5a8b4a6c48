"""Slap patterns, read from the top of the face-up pile only.

Only the newest card can complete a pattern, so every check looks at the top
card and at most three under it (plus the bottom card for ``top_bottom``).
Ranks are ints: 1..13 for A..K, 0 for a joker (which matches nothing but the
``joker`` pattern).
"""

from __future__ import annotations

from typing import Callable, Sequence

from .cards import ACE, JACK, KING, QUEEN
from .rules import PATTERN_NAMES, Rules

Detector = Callable[[Sequence[int]], tuple[str, ...]]
_KQ = {KING, QUEEN}


def _in_order(ranks: Sequence[int], wraps: bool) -> bool:
    """Consecutive ranks, all up or all down; ace high or low, K-A-2 only with wraps."""
    if 0 in ranks:
        return False
    if wraps:
        # Modulo 13 the ranks form a circle: Q-K-A, K-A-2 and A-2-3 all step by one.
        steps = {(b - a) % 13 for a, b in zip(ranks, ranks[1:])}
        return steps == {1} or steps == {12}
    for ace in (1, 14):
        vals = [ace if r == ACE else r for r in ranks]
        steps = {b - a for a, b in zip(vals, vals[1:])}
        if steps == {1} or steps == {-1}:
            return True
    return False


def make_detector(rules: Rules) -> Detector:
    """A function pile_ranks -> the pattern names the top card completes (canonical order)."""
    on = set(rules.patterns)
    wraps = rules.run_wraps
    checks: list[tuple[str, Callable[[Sequence[int]], bool]]] = []
    if "jack" in on:
        checks.append(("jack", lambda r: r[-1] == JACK))
    if "double" in on:
        checks.append(("double", lambda r: len(r) >= 2 and r[-1] == r[-2] and r[-1] != 0))
    if "sandwich" in on:
        checks.append(("sandwich", lambda r: len(r) >= 3 and r[-1] == r[-3] and r[-1] != 0))
    if "run3" in on:
        checks.append(("run3", lambda r: len(r) >= 3 and _in_order(r[-3:], wraps)))
    if "run4" in on:
        checks.append(("run4", lambda r: len(r) >= 4 and _in_order(r[-4:], wraps)))
    if "top_bottom" in on:
        checks.append(("top_bottom", lambda r: len(r) >= 2 and r[-1] == r[0] and r[-1] != 0))
    if "tens" in on:
        checks.append(("tens", lambda r: len(r) >= 2 and 0 < r[-1] <= 10 and 0 < r[-2] <= 10
                       and r[-1] + r[-2] == 10))
    if "ten" in on:
        checks.append(("ten", lambda r: r[-1] == 10))
    if "marriage" in on:
        checks.append(("marriage", lambda r: len(r) >= 2 and {r[-1], r[-2]} == _KQ))
    if "divorce" in on:
        checks.append(("divorce", lambda r: len(r) >= 3 and {r[-1], r[-3]} == _KQ))
    if "big_mac" in on:
        checks.append(("big_mac", lambda r: len(r) >= 4 and r[-1] == r[-4] and r[-1] != 0))
    if "joker" in on:
        checks.append(("joker", lambda r: r[-1] == 0))
    assert [n for n, _ in checks] == [n for n in PATTERN_NAMES if n in on]

    if on == {"jack", "double", "sandwich"} or on == {"double", "sandwich"}:
        # The presets' lists, written out: this runs on every card.
        jack = "jack" in on

        def detect_common(r: Sequence[int]) -> tuple[str, ...]:
            n = len(r)
            if not n:
                return ()
            top = r[-1]
            found = ("jack",) if jack and top == JACK else ()
            if n >= 2 and top == r[-2] and top:
                found += ("double",)
            if n >= 3 and top == r[-3] and top:
                found += ("sandwich",)
            return found

        return detect_common

    def detect(ranks: Sequence[int]) -> tuple[str, ...]:
        if not ranks:
            return ()
        return tuple([name for name, check in checks if check(ranks)])

    return detect


# How many top cards each pattern spans, to show "the cards" of a pattern.
SPAN = {"jack": 1, "double": 2, "sandwich": 3, "run3": 3, "run4": 4, "top_bottom": 0,
        "tens": 2, "ten": 1, "marriage": 2, "divorce": 3, "big_mac": 4, "joker": 1}
