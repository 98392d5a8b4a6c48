"""The pure referee core: cards, rules, patterns and the game state machine."""

from .cards import CLASS_NAMES, CardError, card_name, card_words, deck, parse_card, rank_of
from .game import Announcement, EventError, Game
from .patterns import make_detector
from .rules import PATTERN_NAMES, PRESETS, Rules, RulesError, load_rules, rules_from_mapping
from .stream import LineResult, run_lines

__all__ = [
    "Announcement", "CLASS_NAMES", "CardError", "EventError", "Game", "LineResult",
    "PATTERN_NAMES", "PRESETS", "Rules", "RulesError", "card_name", "card_words", "deck",
    "load_rules", "make_detector", "parse_card", "rank_of", "rules_from_mapping", "run_lines",
]
