"""Turning the referee's announcements into words people hear and read."""

from .phrases import Verbosity, phrase

__all__ = ["Verbosity", "phrase"]
