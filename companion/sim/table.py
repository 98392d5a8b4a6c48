"""A physical table around the referee: which real card is in which hand.

The referee only counts cards (the camera sees the pile, not the hands). The
table holds the actual cards, turns the next one over when a player flips,
moves penalty cards and won piles as the referee's announcements say, and
checks after every event that the referee's counts match the real cards.
Self-play, the renderer's game videos and the property tests all drive games
through it.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any, Sequence

from ..engine import Announcement, Game, Rules, card_name, deck


class TableError(AssertionError):
    """The referee's counts disagree with the real cards: a referee bug."""


class Table:
    def __init__(self, rules: Rules, players: Sequence[str], rng: random.Random,
                 dealer: int | None = None) -> None:
        self.game = Game(rules)
        self.players = list(players)
        self.rng = rng
        self.events: list[dict[str, Any]] = []     # every event fed, in order
        self.log: list[Announcement] = []          # every announcement, in order
        self.hands: list[deque[int]] = []
        self.pile: list[int] = []                  # face-up, oldest first
        self.under: list[int] = []                 # face-down penalty cards
        self.dealer = dealer
        self.deal()

    # Dealing: shuffle the full deck, one card at a time from the dealer's left (seat 0
    # when no dealer is named: the engine's default dealer is the last seat).
    def deal(self) -> list[Announcement]:
        cards = deck(self.game.rules.jokers)
        self.rng.shuffle(cards)
        n = len(self.players)
        first = 0 if self.dealer is None else (self.dealer + 1) % n
        self.hands = [deque(cards[(i - first) % n::n]) for i in range(n)]
        self.pile, self.under = [], []
        ev: dict[str, Any] = {"type": "start", "players": self.players,
                              "stacks": [len(h) for h in self.hands]}
        if self.dealer is not None:
            ev["dealer"] = self.dealer
        return self._feed(ev)

    def next_hand(self) -> list[Announcement]:
        """The match's next hand (or a new match's first): the deal passes one seat on,
        everyone back in, the whole deck dealt again."""
        n = len(self.players)
        g = self.game
        self.dealer = ((g.dealer if g.dealer is not None else n - 1) + 1) % n
        return self.deal()

    def next_card(self) -> int:
        """The card the player to move will turn over (the top of their stack)."""
        g = self.game
        seat = g.pending[0] if g.pending else g.turn
        if g.pending:
            # They pick up the pile first: it may be all they hold.
            return (list(self.hands[seat]) + self.under + self.pile)[0]
        return self.hands[seat][0]

    def flip(self, t: float | None = None) -> list[Announcement]:
        return self._feed({"type": "flip", "card": card_name(self.next_card()), **_t(t)})

    def slap(self, seats: Sequence[int], t: float | None = None) -> list[Announcement]:
        return self._feed({"type": "slap", "seats": list(seats), **_t(t)})

    def collect(self, t: float | None = None) -> list[Announcement]:
        return self._feed({"type": "collect", **_t(t)})

    def _feed(self, event: dict[str, Any]) -> list[Announcement]:
        anns = self.game.apply(event)
        self.events.append(event)
        for a in anns:
            kind = a["type"]
            if kind == "flip":
                card = self.hands[a["seat"]].popleft()
                if card_name(card) != a["card"]:
                    raise TableError(f"referee says {a['card']} was flipped, table turned "
                                     f"{card_name(card)}")
                self.pile.append(card)
            elif kind == "wrong_slap":
                for _ in range(a["paid"]):
                    self.under.append(self.hands[a["seat"]].popleft())
            elif kind == "award":
                won = self.under + self.pile
                if a["cards"] != len(won):
                    raise TableError(f"award of {a['cards']} cards, pile holds {len(won)}")
                # The pile goes face down under the winner's stack, unsearched.
                self.hands[a["seat"]].extend(won)
                self.pile, self.under = [], []
        self.log.extend(anns)
        self.check()
        return anns

    def check(self) -> None:
        g = self.game
        real = [len(h) for h in self.hands]
        if g.stacks != real:
            raise TableError(f"referee stacks {g.stacks}, real stacks {real}")
        if g.pile_count != len(self.pile) + len(self.under):
            raise TableError(f"referee pile {g.pile_count}, real pile "
                             f"{len(self.pile) + len(self.under)}")
        if sum(real) + g.pile_count != g.deck_size:
            raise TableError("cards not conserved")


def _t(t: float | None) -> dict[str, float]:
    return {} if t is None else {"t": round(t, 4)}
