"""Where the players sit around the camera's picture.

A seat is a direction from the pile, as the picture shows it: "bottom" is the edge of
the picture nearest the camera's foot, then clockwise on screen: left, top, right.
The renderer films arms coming from these directions and the camera's slap watcher
(`companion.live.hands`) names a hand's seat by the edge its arm comes in from, so
both take their seats from here.
"""

from __future__ import annotations

import math

# Degrees clockwise on screen from the bottom of the picture.
NAMED = {"bottom": 0.0, "bottom-left": 45.0, "left": 90.0, "top-left": 135.0, "top": 180.0,
         "top-right": 225.0, "right": 270.0, "bottom-right": 315.0}


def default_seats(n: int) -> list[float]:
    """n players spread evenly round the pile, the first at the bottom, then clockwise
    (two players face each other: bottom and top)."""
    return [360.0 * k / n for k in range(n)]


def parse_seats(text: str | None, n: int) -> list[float]:
    """`--seats`: a comma list of positions, one a player in seat order, each a name
    (bottom, left, top, right, top-left, ...) or degrees clockwise from the bottom; empty
    or None for the default. ValueError names what is wrong."""
    if not text:
        return default_seats(n)
    parts = [p.strip().lower() for p in text.split(",")]
    if len(parts) != n:
        raise ValueError(f"--seats {text!r}: {len(parts)} positions for {n} players")
    out = []
    for p in parts:
        if p in NAMED:
            out.append(NAMED[p])
            continue
        try:
            out.append(float(p.removesuffix("deg")) % 360.0)
        except ValueError:
            raise ValueError(f"--seats: {p!r} is not a position (one of "
                             f"{', '.join(NAMED)}, or degrees clockwise from the bottom)") from None
    for i in range(n):
        for j in range(i):
            if degrees_apart(out[i], out[j]) < 20:
                raise ValueError(f"--seats {text!r}: seats {j + 1} and {i + 1} are under "
                                 "20 degrees apart")
    return out


def direction(degrees: float) -> tuple[float, float]:
    """The unit vector from the pile towards a seat, in image coordinates (y down)."""
    a = math.radians(degrees)
    return -math.sin(a), math.cos(a)


def angle_of(dx: float, dy: float) -> float:
    """The seat angle (degrees clockwise from the bottom) of an image direction."""
    return math.degrees(math.atan2(-dx, dy)) % 360.0


def degrees_apart(a: float, b: float) -> float:
    """How far apart two directions are, the short way round (0-180 degrees)."""
    return abs((a - b + 180) % 360 - 180)


def nearest_seat(seats: list[float], degrees: float) -> tuple[int, float]:
    """The seat nearest a direction, and how far off it is (degrees)."""
    diffs = [degrees_apart(degrees, s) for s in seats]
    k = min(range(len(seats)), key=diffs.__getitem__)
    return k, diffs[k]
