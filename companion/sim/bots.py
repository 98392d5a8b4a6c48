"""Bot players for self-play: reaction times, misses and false alarms.

Each bot's reaction to a real pattern is log-normal around its own median
(people are skewed: a few very slow hands, none faster than ~150 ms); each bot
sometimes misses a pattern and sometimes slaps a plain card. Cards are turned
at a human pace, so a slow hand can lose the moment to the next card.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Sequence

from ..engine import Rules
from .table import Table


@dataclass(frozen=True)
class BotProfile:
    median_ms: float = 420.0     # median reaction to a real pattern
    sigma: float = 0.30          # log-normal spread
    miss: float = 0.08           # chance of not noticing a pattern at all
    false_alarm: float = 0.01    # chance of slapping a plain card
    floor_ms: float = 150.0      # nobody is faster than this

    def reaction(self, rng: random.Random) -> float:
        return max(self.floor_ms, self.median_ms * math.exp(rng.gauss(0.0, self.sigma))) / 1000


@dataclass
class HandStats:
    flips: int = 0
    slaps: int = 0               # piles won by a legal slap
    wrong_slaps: int = 0
    challenges: int = 0          # face cards that opened or passed a challenge
    challenge_wins: int = 0
    winner: int | None = None
    winners: list = field(default_factory=list)    # each hand's winner, in order
    finished: bool = False
    seconds: float = 0.0
    events: list[dict] = field(default_factory=list, repr=False)


def default_bots(n: int, rng: random.Random) -> list[BotProfile]:
    """A mixed table: medians spread between quick and slow players."""
    return [BotProfile(median_ms=rng.uniform(330, 620), miss=rng.uniform(0.03, 0.15),
                       false_alarm=rng.uniform(0.003, 0.02)) for _ in range(n)]


def play_hand(rules: Rules, players: Sequence[str], seed: int,
              bots: Sequence[BotProfile] | None = None, flip_ms: float = 850.0,
              max_flips: int = 4000, hands: int = 1, pause_s: float = 4.0) -> HandStats:
    """One hand of self-play (hands > 1: that many, each dealt by the next seat, a match
    going on to the next after it ends, `pause_s` between them); the referee is checked
    against the real cards throughout. The stats of all hands together; `winners` says
    who won each."""
    rng = random.Random(seed)
    bots = list(bots) if bots else default_bots(len(players), rng)
    table = Table(rules, players, rng)
    stats = HandStats()
    t = 0.0
    for h in range(hands):
        if h:
            t += pause_s
            table.next_hand()
            table.events[-1]["t"] = round(t, 4)
        t = _play(table, bots, rng, stats, t, flip_ms, max_flips)
        stats.winners.append(stats.winner)
    stats.seconds = t
    stats.events = table.events
    return stats


def _play(table: Table, bots: list[BotProfile], rng: random.Random, stats: HandStats,
          t: float, flip_ms: float, max_flips: int) -> float:
    """Play the hand in progress to its end; returns the clock."""
    game, rules = table.game, table.game.rules
    stats.finished = False
    while game.hand_active and stats.flips < max_flips:
        # The window until the next card: a human pace with some jitter.
        window = max(0.35, rng.gauss(flip_ms, flip_ms * 0.2) / 1000)
        real = bool(game.top_patterns)
        hands = []
        for seat, bot in enumerate(bots):
            if game.out[seat] or (game.stacks[seat] == 0 and not rules.slap_back_in):
                continue
            if real and rng.random() > bot.miss:
                rt = bot.reaction(rng)
            elif not real and game.pile_count and rng.random() < bot.false_alarm:
                rt = rng.uniform(0.15, window)
            else:
                continue
            if rt < window:
                hands.append((rt, seat))
        if hands:
            hands.sort()
            anns = table.slap([s for _, s in hands], t + hands[0][0])
        elif game.pending:
            anns = table.collect(t + window * 0.5)
        else:
            t += window
            anns = table.flip(t)
        for a in anns:
            kind = a["type"]
            stats.flips += kind == "flip"
            stats.slaps += kind == "award" and a["reason"] == "slap"
            stats.wrong_slaps += kind == "wrong_slap"
            stats.challenges += kind == "challenge"
            stats.challenge_wins += kind == "award" and a["reason"] == "challenge"
            if kind == "hand_over":
                stats.winner = a["winner"]
                stats.finished = True
        if hands:
            t += hands[-1][0]
    return t
