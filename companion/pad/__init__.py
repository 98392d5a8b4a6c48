"""The slap pad: its line protocol, a reader thread, and a simulator that speaks it."""

from .protocol import Cal, Force, Heartbeat, Hello, ProtocolError, Slap, parse_line, seal
from .reader import GroupEvent, PadReader, SlapEvent, StatusEvent, find_pad

__all__ = ["Cal", "Force", "GroupEvent", "Heartbeat", "Hello", "PadReader", "ProtocolError", "Slap",
           "SlapEvent", "StatusEvent", "find_pad", "parse_line", "seal"]
