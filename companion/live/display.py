"""The table display: the pile with boxes beside a panel a whole table can read.

The top card very large (rank, suit drawn as its shape and named in words,
never told by colour alone), the pattern in large type, the challenge
countdown ("Ben: 2 of 3"), each player's stack and whose turn it is.
`render_panel` is a pure function of the referee's state, so the window and
the tests draw the same picture.
"""

from __future__ import annotations

import cv2
import numpy as np

from ..detector.detections import Detections
from ..engine import Game
from ..engine.cards import SUIT_WORDS
from ..render.suits import draw_pip

PATTERN_WORDS = {"jack": "JACK", "double": "DOUBLE", "sandwich": "SANDWICH", "run3": "RUN",
                 "run4": "RUN OF FOUR", "top_bottom": "TOP & BOTTOM", "tens": "TENS",
                 "ten": "TEN", "marriage": "MARRIAGE", "divorce": "DIVORCE",
                 "big_mac": "BIG MAC", "joker": "JOKER"}
FONT = cv2.FONT_HERSHEY_DUPLEX


def _text(img, text, org, scale, colour, thick=2):
    cv2.putText(img, text, org, FONT, scale, colour, thick, cv2.LINE_AA)


def render_panel(game: Game, width: int = 560, height: int = 720, high_contrast: bool = False,
                 pattern: list[str] | None = None, unclear: bool = False,
                 evidence: list[str] | None = None) -> np.ndarray:
    bg, fg, dim = ((0, 0, 0), (255, 255, 255), (200, 200, 200)) if high_contrast else \
        ((40, 32, 24), (245, 245, 245), (170, 170, 170))
    red, black = ((80, 80, 255), (255, 255, 255)) if high_contrast else ((70, 70, 230), (20, 20, 20))
    img = np.full((height, width, 3), bg, np.uint8)
    players = game.players or []
    top = game.pile[-1] if game.pile else None
    # The top card, very large: a white card with the rank and the suit's shape.
    cx0, cy0, cw, ch = 20, 20, 230, 320
    cv2.rectangle(img, (cx0, cy0), (cx0 + cw, cy0 + ch), (250, 250, 250), -1)
    cv2.rectangle(img, (cx0, cy0), (cx0 + cw, cy0 + ch), fg, 3)
    if top is not None:
        name = game.top_cards(1)[0]
        rank, suit = name[:-1], name[-1]
        ink = red if suit in "hd" else black
        if high_contrast:
            ink = (0, 0, 180) if suit in "hd" else (0, 0, 0)
        (tw, th), _ = cv2.getTextSize(rank, FONT, 5.0, 10)
        _text(img, rank, (cx0 + (cw - tw) // 2, cy0 + 20 + th), 5.0, ink, 10)
        draw_pip(img, suit, cx0 + cw / 2, cy0 + 230, 110, ink)
        _text(img, SUIT_WORDS[suit].upper(), (cx0 + 10, cy0 + ch + 45), 1.4, fg, 3)
    else:
        _text(img, "no card", (cx0 + 30, cy0 + 170), 1.5, (120, 120, 120), 3)
    # The two under it, smaller.
    x = cx0 + cw + 25
    _text(img, "under:", (x, cy0 + 35), 0.9, dim, 2)
    for i, n in enumerate(reversed(game.top_cards(3)[:-1])):
        suit = SUIT_WORDS[n[-1]]
        _text(img, f"{n[:-1]} {suit}", (x, cy0 + 80 + 45 * i), 1.0, fg, 2)
    _text(img, f"pile {game.pile_count}", (x, cy0 + 200), 1.1, fg, 2)
    y = cy0 + ch + 135
    if unclear:
        _text(img, "CARD UNCLEAR", (20, y), 1.6, (0, 200, 255), 4)
        y += 60
    if pattern:
        _text(img, PATTERN_WORDS.get(pattern[0], pattern[0].upper()) + "!", (20, y), 2.2,
              (0, 255, 255) if not high_contrast else (255, 255, 255), 5)
        y += 70
    if game.chain and game.responder is not None:
        who = players[game.responder] if game.responder < len(players) else "?"
        done = game.count - game.left
        _text(img, f"{who}: {done} of {game.count}", (20, y), 1.6, fg, 3)
        y += 55
    if game.pending is not None:
        _text(img, f"{players[game.pending[0]]} wins the pile", (20, y), 1.2, fg, 3)
        y += 50
    if evidence:
        _text(img, "at the slap: " + " ".join(evidence), (20, y), 0.8, dim, 2)
        y += 40
    for s, name in enumerate(players):
        mark = ">" if game.turn == s else " "
        status = "out" if game.out and game.out[s] else f"{game.stacks[s]:2d} cards"
        colour = fg if game.turn == s else dim
        _text(img, f"{mark} {name}: {status}", (20, y), 1.0, colour, 2 + (game.turn == s))
        y += 38
    return img


def render_view(frame: np.ndarray, det: Detections, roi=None, height: int = 720) -> np.ndarray:
    """The camera picture with the pile region and every detected index boxed."""
    view = frame.copy()
    if roi is not None:
        cv2.rectangle(view, (roi.x, roi.y), (roi.x + roi.w, roi.y + roi.h), (255, 200, 0), 2)
    for (x1, y1, x2, y2), n, c in zip(det.xyxy, det.names, det.confidence):
        cv2.rectangle(view, (int(x1), int(y1)), (int(x2), int(y2)), (0, 255, 0), 2)
        _text(view, f"{n} {c:.2f}", (int(x1), max(15, int(y1) - 5)), 0.6, (0, 255, 255), 2)
    scale = height / view.shape[0]
    return cv2.resize(view, (int(view.shape[1] * scale), height))


def compose(frame, det, game, roi=None, high_contrast=False, pattern=None, unclear=False,
            evidence=None, height: int = 720) -> np.ndarray:
    left = render_view(frame, det, roi, height)
    right = render_panel(game, 560, height, high_contrast, pattern, unclear, evidence)
    return np.hstack([left, right])
