"""Self-play: real cards in real hands around the pure referee, and bot players."""

from .table import Table, TableError
from .bots import BotProfile, HandStats, play_hand

__all__ = ["BotProfile", "HandStats", "Table", "TableError", "play_hand"]
