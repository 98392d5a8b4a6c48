"""Cards for slap practice: real patterns of the chosen rules at random, near
misses mixed in (K-4-Q beside a real sandwich, a 5 on a 6, 7-8-10 when runs
are on), and plain cards between. Each card is one trial."""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..engine import Rules, card_name, make_detector, rank_of
from ..engine.cards import STANDARD_DECK


@dataclass(frozen=True)
class Trial:
    index: int
    card: str
    top: tuple[str, ...]          # the top three after this card, newest last
    patterns: tuple[str, ...]     # what a slap may claim now (empty: do not slap)
    near_miss: bool               # looks like a pattern, is not

    @property
    def target(self) -> bool:
        return bool(self.patterns)


class TrialDeck:
    """An endless one-deck pile for practice; it reshuffles when the deck runs out."""

    def __init__(self, rules: Rules, rng: random.Random, p_pattern: float = 0.3,
                 p_near: float = 0.25) -> None:
        self.rules, self.rng = rules, rng
        self.detect = make_detector(rules)
        self.p_pattern, self.p_near = p_pattern, p_near
        self.pile: list[int] = []
        self.index = 0

    def _free(self) -> list[int]:
        used = set(self.pile)
        return [c for c in STANDARD_DECK if c not in used]

    def _pick(self, want) -> int | None:
        options = [c for c in self._free() if want(c)]
        return self.rng.choice(options) if options else None

    def _near(self, ranks: list[int]) -> int | None:
        """A card that almost makes a pattern and does not."""
        top = ranks[-1] if ranks else None
        second = ranks[-2] if len(ranks) >= 2 else None
        ideas = []
        if top:
            ideas.append(lambda c: abs(rank_of(c) - top) == 1)                 # a 5 on a 6
        if second:
            ideas.append(lambda c: abs(rank_of(c) - second) == 1)              # K-4-Q
        if second and "run3" in self.rules.patterns and top:
            ideas.append(lambda c: abs(rank_of(c) - top) == 2)                 # 7-8-10
        if "jack" not in self.rules.patterns:
            ideas.append(lambda c: rank_of(c) in (11, 12))
        else:
            ideas.append(lambda c: rank_of(c) in (12, 13))                     # a face, not a J
        self.rng.shuffle(ideas)
        for idea in ideas:
            c = self._pick(lambda c: idea(c) and not self._makes(c))
            if c is not None:
                return c
        return None

    def _makes(self, c: int) -> tuple[str, ...]:
        return self.detect([rank_of(x) for x in self.pile] + [rank_of(c)])

    def next(self) -> Trial:
        if len(self.pile) >= 40 or not self._free():
            self.pile = []                     # the pile was won: start a new one
        r = self.rng.random()
        ranks = [rank_of(x) for x in self.pile]
        card = None
        near = False
        if r < self.p_pattern and self.pile:
            card = self._pick(lambda c: bool(self._makes(c)))
        elif r < self.p_pattern + self.p_near:
            card = self._near(ranks)
            near = card is not None
        if card is None:
            card = self._pick(lambda c: not self._makes(c)) or self._free()[0]
        self.pile.append(card)
        pats = self.detect([rank_of(x) for x in self.pile])
        self.index += 1
        return Trial(self.index, card_name(card), tuple(card_name(c) for c in self.pile[-3:]),
                     pats, near and not pats)
