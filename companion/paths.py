"""Where the companion keeps what a user made (practice history, enrolled decks)."""

from __future__ import annotations

import os
from pathlib import Path


def user_data_dir() -> Path:
    """$XDG_DATA_HOME/ratscrew-companion (default ~/.local/share/ratscrew-companion)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "ratscrew-companion"
