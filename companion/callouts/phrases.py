"""Short, consistent phrasing of announcements, the way a table referee talks.

"Seven of hearts." "Double! Sevens." "King — Ben, three chances." "Ben, two left."
"Ada takes the pile, twelve cards." "Wrong slap, Cho pays two." "Cho is out."
"""

from __future__ import annotations

import enum
from typing import Any, Mapping, Sequence

from ..engine import card_words, parse_card

_NUMBERS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen twenty").split()
_TENS = {20: "twenty", 30: "thirty", 40: "forty", 50: "fifty"}
_PLURAL_RANK = {"A": "Aces", "J": "Jacks", "Q": "Queens", "K": "Kings", "6": "Sixes"}
_PATTERN_WORDS = {
    "jack": "Jack", "double": "Double", "sandwich": "Sandwich", "run3": "Run",
    "run4": "Run of four", "top_bottom": "Top and bottom", "tens": "Tens", "ten": "Ten",
    "marriage": "Marriage", "divorce": "Divorce", "big_mac": "Big Mac", "joker": "Joker",
}


class Verbosity(enum.IntEnum):
    PATTERNS = 1   # slap patterns, challenges, awards, penalties, outs
    CARDS = 2      # ... plus every card
    TURNS = 3      # ... plus whose turn and the counts


def number(n: int) -> str:
    if 0 <= n <= 20:
        return _NUMBERS[n]
    if n < 60:
        tens, ones = divmod(n, 10)
        return _TENS[tens * 10] + ("-" + _NUMBERS[ones] if ones else "")
    return str(n)


def _rank_plural(card: str) -> str:
    rank = card[:-1]
    if rank in _PLURAL_RANK:
        return _PLURAL_RANK[rank]
    return number(int(rank)).capitalize() + "s"


_PATTERN_NAMES = {"jack": "jack", "double": "double", "sandwich": "sandwich",
                  "run3": "run", "run4": "run of four", "top_bottom": "top and bottom",
                  "tens": "tens", "ten": "ten", "marriage": "marriage", "divorce": "divorce",
                  "big_mac": "big mac", "joker": "joker"}


def correction_words(ann: Mapping[str, Any], players: Sequence[str]) -> str:
    """"Correction: six of hearts. No sandwich; the pile stays." from a correction's
    announcement (what it now is, and what changed)."""
    who = lambda s: players[s] if isinstance(s, int) and 0 <= s < len(players) else "Nobody"
    now, was = ann.get("now"), ann.get("was") or {}
    if ann.get("what") == "flip":
        head = "no card" if now is None else card_words(parse_card(now["card"]))
    elif ann.get("what") == "slap":
        head = f"no slap by {who((was.get('seats') or [None])[0])}"
    else:
        seat = now.get("seat") if now and "seat" in now else (now or {}).get("seats", [None])[0]
        head = f"the pile is {who(seat)}'s"
    parts = []
    for c in ann.get("changes", []):
        kind, gone = c.get("type"), c.get("change") == "gone"
        if kind == "pattern" and gone:
            parts.append(f"no {_PATTERN_NAMES.get(c['patterns'][0], c['patterns'][0])}")
        elif kind == "pattern":
            parts.append(_PATTERN_NAMES.get(c["patterns"][0], c["patterns"][0]))
        elif kind == "award" and gone:
            parts.append("the pile stays" if ann.get("what") != "award"
                         else f"not {who(c['seat'])}'s")
        elif kind == "award":
            parts.append(f"{who(c['seat'])} takes the pile")
        elif kind == "wrong_slap" and gone:
            parts.append(f"{who(c['seat'])} gets {number(c['paid'])} back")
        elif kind == "wrong_slap":
            parts.append(f"{who(c['seat'])} pays {number(c['paid'])}")
    text = f"Correction: {head}."
    if parts:
        body = "; ".join(parts)
        text += " " + body[0].upper() + body[1:] + "."
    return text


def score_words(won: Sequence[int], players: Sequence[str]) -> str:
    """The match score: "Ada leads, one hand to none", "Ada and Ben level, one hand
    each"."""
    order = sorted(range(len(won)), key=lambda s: -won[s])
    first, second = order[0], order[1]
    hands = lambda n: f"{number(n)} hand" + ("" if n == 1 else "s")
    if won[first] == won[second]:
        level = [players[s] for s in order if won[s] == won[first]]
        names = ", ".join(level[:-1]) + " and " + level[-1]
        return f"{names} level, {hands(won[first])} each."
    rest = "none" if won[second] == 0 else number(won[second])
    return f"{players[first]} leads, {hands(won[first])} to {rest}."


def reply_words(ann: Mapping[str, Any], players: Sequence[str], who) -> str | None:
    """The answer to a question the table asked (companion.live.controls.reply)."""
    q = ann.get("question")
    if q == "turn":
        if ann.get("hand_over"):
            return "The hand is over."
        if ann.get("pending") is not None:
            return f"{who(ann['pending'])} takes the pile, then plays."
        return f"{who(ann['seat'])} to play." if ann.get("seat") is not None else \
            "Nobody to play."
    if q == "pile":
        if not ann.get("cards"):
            return "The pile is empty."
        top = [card_words(parse_card(c)) for c in reversed(ann.get("top") or [])]
        cards = ann["cards"]
        return ("Top: " + ", ".join(top) + "; " if top else "") + \
            f"{number(cards)} card{'' if cards == 1 else 's'}."
    if q == "cards":
        counts = ", ".join(f"{p} {number(c)}" for p, c in zip(players, ann["stacks"]))
        return f"{counts}; pile {number(ann['pile'])}."
    if q == "chances":
        if ann.get("seat") is None:
            return "No challenge."
        left = ann["left"]
        return f"{who(ann['seat'])}, {number(left)} chance{'' if left == 1 else 's'} left."
    if q == "score":
        won = ann.get("hands_won") or []
        if not sum(won) or len(won) != len(players):
            return "No hands won yet."
        return score_words(won, players)
    return None


def phrase(ann: Mapping[str, Any], players: Sequence[str],
           verbosity: Verbosity = Verbosity.CARDS) -> str | None:
    """The words for one announcement, or None when this verbosity keeps quiet."""
    kind = ann.get("type")

    def who(seat: Any) -> str:
        return players[seat] if isinstance(seat, int) and 0 <= seat < len(players) else "Nobody"

    if kind == "flip":
        if verbosity < Verbosity.CARDS:
            if "left" in ann:
                return f"{who(ann['seat'])}, {number(ann['left'])} left."
            return None
        words = card_words(parse_card(ann["card"])).capitalize()
        if "left" in ann:
            return f"{words}. {who(ann['seat'])}, {number(ann['left'])} left."
        return f"{words}."
    if kind == "pattern":
        pats = ann["patterns"]
        main = _PATTERN_WORDS[pats[0]] + "!"
        if pats[0] == "double" and ann.get("cards"):
            main += f" {_rank_plural(ann['cards'][-1])}."
        return main
    if kind == "challenge":
        rank = card_words(parse_card(ann["card"])).split(" of ")[0].capitalize()
        if ann.get("seat") is None:
            return f"{rank} — nobody can answer."
        chances = "chance" if ann["count"] == 1 else "chances"
        return f"{rank} — {who(ann['seat'])}, {number(ann['count'])} {chances}."
    if kind == "challenge_won":
        return f"{who(ann['seat'])} wins the challenge."
    if kind == "award":
        cards = ann["cards"]
        noun = "card" if cards == 1 else "cards"
        return f"{who(ann['seat'])} takes the pile, {number(cards)} {noun}."
    if kind == "wrong_slap":
        return f"Wrong slap, {who(ann['seat'])} pays {number(ann['paid'])}."
    if kind == "late_slap":
        return None if verbosity < Verbosity.TURNS else "Too late, no penalty."
    if kind == "out":
        return f"{who(ann['seat'])} is out."
    if kind == "turn":
        return f"{who(ann['seat'])} to play." if verbosity >= Verbosity.TURNS else None
    if kind == "correction":
        return correction_words(ann, players)
    if kind == "camera_slap" and not ann.get("confirms", True):
        return f"(camera: {who(ann['seat'])}'s hand, no pad slap)"
    if kind == "ask" and ann.get("question") == "pile_taken":
        return "Pile taken: who won it?"
    if kind == "answer" and ann.get("question") == "pile_taken":
        return None if ann.get("seat") is not None else "The pile is still there."
    if kind == "hand_over":
        text = f"{who(ann['winner'])} wins the hand."
        won = ann.get("hands_won")
        if won and sum(won) > 0 and len(won) == len(players):
            text += " " + score_words(won, players)
        return text
    if kind == "match_over":
        # At a live table the next deal starts a new match (or d on the keys).
        return f"{who(ann['winner'])} wins the match. Deal again for a new match."
    if kind == "start":
        if ann.get("hand", 1) > 1 and ann.get("dealer") is not None:
            return f"Hand {number(ann['hand'])}: {who(ann['dealer'])} dealt."
        if ann.get("hand", 1) == 1 and ann.get("match", 1) > 1:
            return f"New match: {', '.join(ann['players'])}."
        return f"New hand: {', '.join(ann['players'])}."
    if kind == "resumed":
        counts = ", ".join(f"{p} {number(c)}" for p, c in zip(players, ann["stacks"]))
        text = f"Carrying on: hand {number(ann.get('hand', 1))}, pile {number(ann['pile'])}. " \
               f"{counts}."
        if ann.get("turn") is not None and not ann.get("hand_over"):
            text += f" {who(ann['turn'])} to play."
        return text
    if kind == "reply":
        return reply_words(ann, players, who)
    if kind == "camera":
        return {"no picture": "Camera: no picture.", "frozen": "Camera: the picture is stuck.",
                "ok": "Camera: picture back."}.get(ann.get("status"))
    if kind == "log_stopped":
        return "The session log stopped; play goes on."
    if kind == "state" and verbosity >= Verbosity.TURNS:
        counts = ", ".join(f"{p} {number(c)}" for p, c in zip(players, ann["stacks"]))
        return f"Pile {number(ann['pile'])}. {counts}."
    return None
