"""JSON Lines events -> announcements, with line numbers for what is refused.

Pure: it takes lines and yields results; the CLI does the reading and writing.
"""

from __future__ import annotations

import json
from typing import Iterable, Iterator, NamedTuple

from .game import Announcement, EventError, Game


class LineResult(NamedTuple):
    line: int
    announcements: list[Announcement]
    error: str | None       # why the line was refused, or None


def run_lines(game: Game, lines: Iterable[str]) -> Iterator[LineResult]:
    """Feed each non-blank line to the game. A bad line yields a `rejected`
    announcement and its reason; the game is left as it was."""
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text:
            continue
        try:
            event = json.loads(text)
            anns = game.apply(event)
        except (json.JSONDecodeError, EventError) as exc:
            reason = f"bad JSON: {exc.msg}" if isinstance(exc, json.JSONDecodeError) else str(exc)
            yield LineResult(number, [{"type": "rejected", "line": number, "reason": reason}],
                             reason)
            continue
        yield LineResult(number, anns, None)
