"""The table's controls: one set of keys for the window, the terminal (no window, over
SSH too) and the table page's buttons.

    1-9        that seat slaps (when the referee asks who took a pile: that seat did)
    0          (when asked who took a pile) nobody: it is still there
    u          the last slap never happened          n   the last flip was no card
    c + card   the last flip was that card (c6h)     g + seat key   the last pile was theirs
    a + card   a card played that the referee missed (a6h): it is on top now
    d          deal the next hand now (the hand is over)
    t  whose turn     p  what is on the pile     k  how many cards each player has
    l  how many chances are left                 s  the score
    q  quit (window and terminal)

A question's answer is a `reply` announcement: said like any call, and as chatter, so a
pattern or an award cuts it off (companion.callouts.speech)."""

from __future__ import annotations

import os
import queue
import sys
import threading

from ..engine import Game, parse_card

QUESTIONS = {"t": "turn", "p": "pile", "k": "cards", "l": "chances", "s": "score"}

HELP = ("1-9: that seat slaps (or took the pile, when asked); 0: nobody took it; u: the "
        "last slap never happened; n: the last flip was no card; c then a card (c6h): the "
        "last flip was that card; a then a card (a6h): a card played that the referee missed; "
        "g then a seat key: the last pile was theirs; d: deal the "
        "next hand; t: whose turn; p: the pile; k: cards each; l: chances left; s: the "
        "score; q: quit")


def reply(game: Game, question: str, t: float | None = None) -> dict:
    """The referee's answer to a question from the table, as an announcement."""
    rec: dict = {"type": "reply", "question": question, "t": t}
    if question == "turn":
        rec.update(seat=game.turn, hand_over=not game.hand_active,
                   pending=game.pending[0] if game.pending else None)
    elif question == "pile":
        rec.update(top=game.top_cards(3), cards=game.pile_count)
    elif question == "cards":
        rec.update(stacks=list(game.stacks), pile=game.pile_count,
                   out=[s for s in range(game.n) if game.out[s]])
    elif question == "chances":
        rec.update(seat=game.responder if game.chain else None,
                   left=game.left if game.chain else None)
    elif question == "score":
        rec.update(hands_won=list(game.hands_won), hand=game.hand_number,
                   match_over=game.match_over)
    else:
        raise ValueError(f"question {question!r}: one of {', '.join(QUESTIONS.values())}")
    return rec


class TableKeys:
    """Keys (or a page button's key string) -> what the referee does. One instance per
    input, since a correction's card or seat follows its letter."""

    def __init__(self) -> None:
        self.typed: str | None = None       # a "c", "a" or "g" started, and what followed

    def feed(self, text: str, pipeline, t: float) -> str | None:
        """Every key of text in turn; "quit" when one was q, else None."""
        for ch in text:
            if self.key(ch, pipeline, t) == "quit":
                return "quit"
        return None

    def key(self, ch: str, pipeline, t: float) -> str | None:
        """One key: "quit", "done" (it did something or began a correction) or None (not a
        key of the table's)."""
        if self.typed is not None:
            return self._typing(ch.lower(), pipeline, t)
        n = len(pipeline.game.players)
        if ch.isdigit() and 1 <= int(ch) <= min(n, 9):
            seat = int(ch) - 1
            if pipeline.asking is not None:      # "pile taken: who won it?"
                pipeline.answer(seat, t)
            else:
                pipeline.slap([seat], t)
        elif ch == "0" and pipeline.asking is not None:
            pipeline.answer(None, t)                # nobody took it: it is still there
        elif ch == "u":
            pipeline.correct("slap", t=t)
        elif ch == "n":
            pipeline.correct("flip", None, t=t)
        elif ch in ("c", "a", "g"):
            self.typed = ch
        elif ch == "d":
            pipeline.deal(t)
        elif ch in QUESTIONS:
            pipeline.announce(reply(pipeline.game, QUESTIONS[ch], t), pipeline.watcher.frame_index)
        elif ch in ("q", "\x1b"):
            return "quit"
        else:
            return None
        return "done"

    def _typing(self, ch: str, pipeline, t: float) -> str:
        self.typed += ch
        if self.typed[0] == "g":
            self.typed, seat = None, self.typed[1:]
            if seat.isdigit() and 1 <= int(seat) <= 9:
                pipeline.correct("award", int(seat) - 1, t=t)
            return "done"
        started, card = self.typed[0], self.typed[1:]
        if len(card) >= 2 and card[-1] in "shdc":
            self.typed = None
            try:
                parse_card(card)
            except ValueError:
                return "done"                  # not a card: the correction is dropped
            if started == "a":
                pipeline.missed(card, t=t)
            else:
                pipeline.correct("flip", card, t=t)
        elif len(card) > 3:
            self.typed = None
        return "done"


class TerminalKeys:
    """Single key presses from the terminal the program runs in (a local console or an
    SSH session: no window needed). The terminal is put in cbreak mode (keys arrive as
    typed, not echoed; Ctrl-C still interrupts) and restored on close. Not a terminal
    (stdin piped or closed): nothing is read, `active` is False."""

    def __init__(self, stream=None) -> None:
        self.stream = stream if stream is not None else sys.stdin
        self.keys: queue.Queue[str] = queue.Queue()
        self._saved = None
        self._stop = threading.Event()
        self.active = False
        try:
            self.fd = self.stream.fileno()
            self.active = os.isatty(self.fd)
        except (AttributeError, OSError, ValueError):
            self.fd = None
        if not self.active:
            return
        import termios
        import tty
        self._saved = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd)
        self._thread = threading.Thread(target=self._run, name="terminal keys", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import select
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.1)
                if not ready:
                    continue
                data = os.read(self.fd, 32)
            except OSError:
                return                          # the terminal went away (SSH dropped)
            if not data:
                return
            for ch in data.decode("utf-8", "ignore"):
                self.keys.put(ch)

    def pending(self) -> str:
        """Every key typed since the last call."""
        out = []
        while True:
            try:
                out.append(self.keys.get_nowait())
            except queue.Empty:
                return "".join(out)

    def close(self) -> None:
        self._stop.set()
        if self._saved is not None:
            import termios
            try:
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
            except (OSError, termios.error):
                pass
            self._saved = None

    def __enter__(self) -> "TerminalKeys":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
