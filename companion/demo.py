"""`companion demo`: the referee calling a built-in game, no camera needed.

The game comes from self-play on a shuffled deck, so every call is a real
referee decision; each line shows the table clock and what a player hears.
"""

from __future__ import annotations

import argparse

from .callouts import Verbosity, phrase
from .engine import load_rules
from .sim import play_hand


def run_demo(args: argparse.Namespace) -> int:
    rules = load_rules(args.rules)
    players = [p.strip() for p in args.players.split(",") if p.strip()]
    if len(players) < 2:
        print("companion demo: --players needs at least two names")
        return 2
    stats = play_hand(rules, players, args.seed)
    # Re-run the recorded events so each call is printed with the event's time.
    from .engine import Game
    game = Game(rules)
    shown = 0
    print(f"Built-in game {args.seed}: {', '.join(players)}; rules '{rules.preset}'.")
    for event in stats.events:
        for ann in game.apply(event):
            text = phrase(ann, players, Verbosity(args.verbosity))
            if text is None:
                continue
            if args.limit and shown >= args.limit:
                continue
            t = ann.get("t", 0.0)
            print(f"{int(t // 60):02d}:{t % 60:05.2f}  {text}")
            shown += 1
    if args.limit and shown >= args.limit:
        print(f"... (stopped after {args.limit} calls; --limit 0 shows them all)")
    winner = players[stats.winner] if stats.winner is not None else "nobody"
    print(f"Hand over after {stats.flips} cards: {stats.slaps} slaps won, "
          f"{stats.wrong_slaps} wrong slaps, {stats.challenges} challenges. Winner: {winner}.")
    return 0
