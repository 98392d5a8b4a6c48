"""The pad's line protocol, version 1 (firmware/PROTOCOL.md).

`BODY*CK\\n`, CK the XOR of BODY's bytes in two hex digits. Parsing is strict:
a line is either exactly right or refused with ProtocolError; a line with a
bad checksum never yields a message.
"""

from __future__ import annotations

from dataclasses import dataclass

VERSION = 1
MAX_LINE = 120
U32 = 1 << 32
U16 = 1 << 16


class ProtocolError(ValueError):
    """A line that is not a valid protocol line (kind: 'checksum' or 'malformed')."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Hello:
    version: int
    zones: int
    rate: int
    seq: int


@dataclass(frozen=True)
class Slap:
    zone: int
    t_us: int
    peak: int
    seq: int


@dataclass(frozen=True)
class Heartbeat:
    t_us: int
    seq: int


@dataclass(frozen=True)
class Cal:
    zone: int
    floor: int
    noise: int
    seq: int


@dataclass(frozen=True)
class Force:
    values: tuple[int, ...]
    seq: int


Message = Hello | Slap | Heartbeat | Cal | Force


def checksum(body: str | bytes) -> int:
    data = body.encode("ascii") if isinstance(body, str) else body
    ck = 0
    for b in data:
        ck ^= b
    return ck


def seal(body: str) -> str:
    """A whole line: body, checksum and newline."""
    return f"{body}*{checksum(body):02X}\n"


def _int(text: str, hi: int, what: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > 10:
        raise ProtocolError("malformed", f"{what}: not a number: {text[:12]!r}")
    v = int(text)
    if v >= hi:
        raise ProtocolError("malformed", f"{what}: {v} out of range")
    return v


def parse_line(raw: str | bytes) -> Message:
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("ascii")
        except UnicodeDecodeError:
            raise ProtocolError("malformed", "not ASCII") from None
    if not raw.isascii():
        raise ProtocolError("malformed", "not ASCII")
    line = raw.rstrip("\r\n")
    if len(line) > MAX_LINE:
        raise ProtocolError("malformed", "line too long")
    star = line.rfind("*")
    if star < 0 or len(line) - star != 3:
        raise ProtocolError("malformed", "no *CK checksum at the end")
    body, ck_text = line[:star], line[star + 1:]
    if not all(c in "0123456789ABCDEFabcdef" for c in ck_text):
        raise ProtocolError("malformed", f"checksum {ck_text!r} is not hex")
    ck = int(ck_text, 16)
    if checksum(body) != ck:
        raise ProtocolError("checksum", "checksum mismatch")
    f = body.split(" ")
    kind, n = f[0], len(f)
    if kind == "SLAP" and n == 5:
        return Slap(_int(f[1], 16, "zone"), _int(f[2], U32, "t_us"), _int(f[3], U16, "peak"),
                    _int(f[4], U16, "seq"))
    if kind == "HB" and n == 3:
        return Heartbeat(_int(f[1], U32, "t_us"), _int(f[2], U16, "seq"))
    if kind == "HELLO" and n == 6 and f[1] == "slappad":
        return Hello(_int(f[2], 1000, "version"), _int(f[3], 17, "zones"),
                     _int(f[4], U16, "rate"), _int(f[5], U16, "seq"))
    if kind == "CAL" and n == 5:
        return Cal(_int(f[1], 16, "zone"), _int(f[2], U16, "floor"), _int(f[3], U16, "noise"),
                   _int(f[4], U16, "seq"))
    if kind == "F" and 3 <= n <= 18:
        return Force(tuple(_int(v, U16, "force") for v in f[1:-1]), _int(f[-1], U16, "seq"))
    raise ProtocolError("malformed", f"unknown line {body[:24]!r}")
