"""Rules presets and house options.

Three presets come from the two rule documents (see README "Rules presets"):
``base`` and ``challenge`` follow the full rules page, ``intro`` the
introductory how-to. A TOML file picks a preset and overrides single keys.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

# Canonical order: announcements list patterns in this order.
PATTERN_NAMES = (
    "jack", "double", "sandwich", "run3", "run4", "top_bottom", "tens", "ten",
    "marriage", "divorce", "big_mac", "joker",
)
CHALLENGE_RANKS = ("A", "K", "Q", "J")


class RulesError(ValueError):
    """A bad rules file or option; the message names the key."""


@dataclass(frozen=True)
class Rules:
    preset: str = "base"
    patterns: tuple[str, ...] = ("jack", "double", "sandwich")
    run_wraps: bool = False
    challenge: bool = False
    challenge_counts: Mapping[str, int] = field(
        default_factory=lambda: MappingProxyType({"A": 4, "K": 3, "Q": 2, "J": 1}))
    slaps_during_challenge: bool = True
    penalty: int = 2
    lead_after_slap: str = "seat"
    slap_back_in: bool = True
    hands_to_win: int = 2
    jokers: bool = False
    challenge_winner: str = "first"

    @property
    def deck_size(self) -> int:
        return 54 if self.jokers else 52

    def to_dict(self) -> dict[str, Any]:
        """The TOML keys and values (a house file that reproduces these rules)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["patterns"] = list(self.patterns)
        d["challenge_counts"] = dict(self.challenge_counts)
        return d


PRESETS: dict[str, Rules] = {
    # Seed 000's base game: jack, double, sandwich; two-card penalty; lead in seat order.
    "base": Rules(),
    # Seed 000 plus its face-card challenge; the worked example gives the pile to
    # the player who opened the chain.
    "challenge": Rules(preset="challenge", challenge=True),
    # Seed 001: doubles and sandwiches only, one-card false-slap penalty, the
    # last challenger collects, "collecting every card wins" (one hand).
    "intro": Rules(preset="intro", patterns=("double", "sandwich"), challenge=True,
                   penalty=1, challenge_winner="last", hands_to_win=1),
}

_KEYS = tuple(f.name for f in dataclasses.fields(Rules))


def _expect(key: str, ok: bool, what: str, value: Any) -> None:
    if not ok:
        raise RulesError(f"key '{key}': expected {what}, got {value!r}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def rules_from_mapping(data: Mapping[str, Any]) -> Rules:
    """Build Rules from a preset name plus overrides; every key checked."""
    unknown = [k for k in data if k not in _KEYS]
    if unknown:
        raise RulesError(f"unknown key '{unknown[0]}' (known keys: {', '.join(_KEYS)})")
    preset = data.get("preset", "base")
    _expect("preset", isinstance(preset, str) and preset in PRESETS,
            f"one of {', '.join(PRESETS)}", preset)
    base = PRESETS[preset]
    changes: dict[str, Any] = {}
    for key, value in data.items():
        if key == "preset":
            continue
        if key == "patterns":
            _expect(key, isinstance(value, list) and all(isinstance(p, str) for p in value),
                    "a list of pattern names", value)
            bad = [p for p in value if p not in PATTERN_NAMES]
            _expect(key, not bad, f"pattern names from {', '.join(PATTERN_NAMES)}",
                    bad[0] if bad else value)
            # Canonical order and no repeats, so announcements are stable.
            value = tuple(p for p in PATTERN_NAMES if p in value)
        elif key == "challenge_counts":
            _expect(key, isinstance(value, Mapping), "a table like {A = 4, K = 3, Q = 2, J = 1}",
                    value)
            bad = [k for k in value if k not in CHALLENGE_RANKS]
            _expect(key, not bad, "keys A, K, Q, J", bad[0] if bad else value)
            for rank, count in value.items():
                _expect(f"challenge_counts.{rank}", _is_int(count) and 0 <= count <= 52,
                        "an integer 0-52 (0: that rank does not challenge)", count)
            merged = dict(base.challenge_counts)
            merged.update(value)
            value = MappingProxyType(merged)
        elif key in ("run_wraps", "challenge", "slaps_during_challenge", "slap_back_in", "jokers"):
            _expect(key, isinstance(value, bool), "true or false", value)
        elif key == "penalty":
            _expect(key, _is_int(value) and 0 <= value <= 52, "an integer 0-52", value)
        elif key == "hands_to_win":
            _expect(key, _is_int(value) and 1 <= value <= 99, "an integer 1-99", value)
        elif key == "lead_after_slap":
            _expect(key, value in ("seat", "slapper"), "'seat' or 'slapper'", value)
        elif key == "challenge_winner":
            _expect(key, value in ("first", "last"), "'first' or 'last'", value)
        changes[key] = value
    rules = dataclasses.replace(base, **changes)
    if "joker" in rules.patterns and not rules.jokers:
        raise RulesError("key 'patterns': the 'joker' pattern needs jokers = true")
    return rules


def load_rules(spec: str | Path) -> Rules:
    """A preset name (``base``, ``challenge``, ``intro``) or a path to a TOML file."""
    text = str(spec)
    if text in PRESETS:
        return PRESETS[text]
    path = Path(text)
    if not path.exists():
        raise RulesError(f"{text}: not a preset ({', '.join(PRESETS)}) and no such file")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RulesError(f"{path}: {exc}") from None
    except OSError as exc:
        raise RulesError(f"{path}: {exc.strerror}") from None
    try:
        return rules_from_mapping(data)
    except RulesError as exc:
        raise RulesError(f"{path}: {exc}") from None
