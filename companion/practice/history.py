"""Practice history in SQLite: one file under the user's data directory.

Every trial is committed as it happens, so quitting (or a crash) loses none.
A database that cannot be read is moved aside (named in the message) and a
new one is started: history is precious, so nothing is ever deleted.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from ..paths import user_data_dir

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY, player TEXT NOT NULL, started REAL NOT NULL, ended REAL,
    rules TEXT NOT NULL, players TEXT NOT NULL, pace_start REAL, pace_end REAL,
    display_ms REAL, pad_ms REAL, source TEXT
);
CREATE TABLE IF NOT EXISTS trials (
    id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id),
    idx INTEGER NOT NULL, seat INTEGER NOT NULL, player TEXT NOT NULL, shown REAL NOT NULL,
    card TEXT NOT NULL, top TEXT NOT NULL, pattern TEXT, near_miss INTEGER NOT NULL,
    outcome TEXT NOT NULL, rt_ms REAL, first INTEGER, margin_ms REAL, pace REAL
);
CREATE INDEX IF NOT EXISTS trials_player ON trials(player);
"""


def default_path() -> Path:
    return user_data_dir() / "history.sqlite3"


class History:
    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.notice: str | None = None
        try:
            self.db = self._open()
        except sqlite3.DatabaseError as exc:
            aside = self.path.with_name(f"{self.path.name}.unreadable-{int(time.time())}")
            self.path.rename(aside)
            self.notice = (f"history {self.path}: could not be read ({exc}); kept it as "
                           f"{aside.name} and started a new one")
            self.db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path)
        db.execute("PRAGMA journal_mode=WAL")      # a crash mid-write keeps what was committed
        db.executescript(SCHEMA)
        db.execute("SELECT COUNT(*) FROM trials").fetchone()
        return db

    def start_session(self, player: str, rules: str, players: list[str], pace: float,
                      display_ms: float, pad_ms: float, source: str) -> int:
        cur = self.db.execute(
            "INSERT INTO sessions (player, started, rules, players, pace_start, display_ms, "
            "pad_ms, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (player, time.time(), rules, ",".join(players), pace, display_ms, pad_ms, source))
        self.db.commit()
        return int(cur.lastrowid)

    def add_trial(self, session: int, **row) -> None:
        cols = ", ".join(row)
        self.db.execute(f"INSERT INTO trials (session_id, {cols}) VALUES (?, "
                        f"{', '.join('?' for _ in row)})", (session, *row.values()))
        self.db.commit()

    def end_session(self, session: int, pace: float) -> None:
        self.db.execute("UPDATE sessions SET ended = ?, pace_end = ? WHERE id = ?",
                        (time.time(), pace, session))
        self.db.commit()

    def trials(self, player: str | None = None) -> list[sqlite3.Row]:
        self.db.row_factory = sqlite3.Row
        q = "SELECT * FROM trials" + (" WHERE player = ?" if player else "") + " ORDER BY id"
        rows = self.db.execute(q, (player,) if player else ()).fetchall()
        self.db.row_factory = None
        return rows

    def close(self) -> None:
        self.db.close()
