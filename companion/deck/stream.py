"""Enrolling a deck by dealing it before the camera (`companion enrol --camera N` or
`--video FILE`).

The pile is watched as the referee watches it (`PileWatcher`: motion gate, landing
outline, flip tracker). Each card the generic reader names surely is enrolled from the
frame it was confirmed on; a card it is not sure of ("unclear"), or one it names a
second time (a deck holds each card once, so one of the two readings is wrong), is asked
for: spoken and printed, answered by typing the card (`7h`), Enter to take the proposal,
or `-` to skip it. Dealing ends when 52 distinct cards are in ("count 52") or the video
ends (the missing cards are named).
"""

from __future__ import annotations

import sys
from typing import Callable

import numpy as np

from ..detector.card_reader import NONE_CLASS, CardReaderDetector
from ..engine.cards import CLASS_NAMES
from .enrol import (VARIATIONS, EnrolReport, corner_variations, card_picture, fit_deck,
                    parse_photo_name)
from .enrolled import EnrolledDeck

# What `ask` is given: the question's text and the proposal (a card name or None); it
# returns the card typed, "" to take the proposal, or "-" to skip the card.
Ask = Callable[[str, str | None], str]


def ask_terminal(question: str, proposal: str | None) -> str:
    hint = f" [Enter: {proposal}, - to skip]" if proposal else " [- to skip]"
    try:
        return input(f"{question}{hint} ").strip()
    except EOFError:
        return "-"


class StreamEnrolment:
    """Cards confirmed on the pile -> enrolled crops; the asking and the counting."""

    def __init__(self, photo_detector: CardReaderDetector, variations: int = VARIATIONS,
                 ask: Ask | None = ask_terminal, say: Callable[[str], None] | None = None,
                 seed: int = 0) -> None:
        self.det = photo_detector
        self.variations = variations
        self.ask, self.say = ask, say or (lambda text: None)
        self.rng = np.random.default_rng(seed)
        self.report = EnrolReport()
        self.features: list[np.ndarray] = []
        self.labels: list[int] = []
        self.pictures: dict[int, np.ndarray] = {}

    def _outline(self, region: np.ndarray, card: str | None):
        """The outline of `card` in the pile region (the best-read one where the reading
        names it, else the best-read outline: the top card)."""
        cards = self.det.cards(region)
        for quad, _, found in cards:
            if card is not None and found and CLASS_NAMES[found[0][2]] == card:
                return quad
        return cards[0][0] if cards else None

    def _answer(self, question: str, proposal: str | None) -> str | None:
        """The card the player names, or None (skipped, or no one to ask)."""
        if self.ask is None:
            return None
        self.say(question)
        while True:
            text = self.ask(question, proposal)
            if text == "" and proposal:
                return proposal
            if text in ("", "-"):
                return None
            try:
                name, _ = parse_photo_name(text)
            except ValueError:
                question = f"{text!r} is not a card; type it like 7h, 10s or Qd"
                continue
            if name in CLASS_NAMES:
                return name
            question = "a joker is not enrolled; type the card, or - to skip"

    def card(self, region: np.ndarray, card: str | None, frame: int, sure: bool = True) -> None:
        """A card came to rest on the pile, read as `card` (surely, or as a guess)."""
        seen = card is not None and card in self.report.enrolled
        if not sure or card is None or seen:
            what = f"{card} again" if seen else "a card I am not sure of"
            card = self._answer(f"frame {frame}: {what}; which card is it?",
                                None if seen else card)
            if card is None or card in self.report.enrolled:
                if card is not None:
                    print(f"  {card} is already enrolled; this card is skipped")
                return
        quad = self._outline(region, card)
        if quad is None:
            self.report.no_card.append(f"frame {frame}")
            return
        index, none = corner_variations(region, quad, self.rng, self.variations)
        _, f = self.det.reader.read(index + none)
        self.features.append(f)
        cls = CLASS_NAMES.index(card)
        self.labels += [cls] * len(index) + [NONE_CLASS] * len(none)
        self.pictures[cls] = card_picture(region, quad)
        self.report.enrolled[card] = [f"frame {frame}"]
        n = len(self.report.enrolled)
        print(f"  {card} ({n} of 52)", flush=True)
        if n == 52:
            self.say("count 52")

    def deck(self, name: str, source: str) -> EnrolledDeck | None:
        if not self.features:
            return None
        return fit_deck(self.det, self.features, self.labels, set(self.report.enrolled), name,
                        {"source": source, "variations": self.variations}, self.pictures)


def enrol_stream(source: str, live_detector, photo_detector: CardReaderDetector,
                 name: str = "deck", variations: int = VARIATIONS, ask: bool | Ask = True,
                 say: Callable[[str], None] | None = None
                 ) -> tuple[EnrolledDeck | None, EnrolReport]:
    """Watch `source` (a camera index, stream URL or video file) while the deck is dealt.
    ask: True asks on the terminal, False skips unsure cards, or a function (tests)."""
    from ..live.capture import SourceError, open_source
    from ..live.pipeline import PileWatcher
    asker = ask_terminal if ask is True else (ask or None)
    job = StreamEnrolment(photo_detector, variations, asker, say)
    watcher = PileWatcher(live_detector)
    try:
        # A video file: every frame in order (a question waits for its answer).
        frames = open_source(source, as_camera=False)
    except SourceError as exc:
        raise ValueError(str(exc)) from None
    print(f"deal the deck onto the pile, one card at a time ({source})", file=sys.stderr)
    for frame in frames:
        for ev in watcher.look(frame):
            if ev.type in ("flip", "unclear"):
                region, _ = watcher.region()
                job.card(region, ev.card, frame.index, sure=ev.type == "flip")
        if job.report.complete:
            break
    if hasattr(frames, "stop"):
        frames.stop()
    return job.deck(name, source), job.report
