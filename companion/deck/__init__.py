"""Enrolled decks: a deck's own cards, read exactly (enrol.py, stream.py, enrolled.py)."""
