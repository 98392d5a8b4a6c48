"""The table page: a local web page for a tablet or phone beside the pile.

Starlette (small, well kept, ASGI) served by uvicorn in a background thread;
live updates as server-sent events, which browsers reconnect by themselves
after a server restart. The page is one self-contained HTML file: no script
or font is fetched at run time. Calls land in an aria-live region, so a
player's own screen reader speaks them in the player's own voice.
"""

from __future__ import annotations

import asyncio
import json
import queue
import threading
import time
from pathlib import Path
from typing import Any

from ..callouts import Verbosity, phrase
from ..engine import Game
from ..engine.cards import SUIT_WORDS

PAGE = Path(__file__).with_name("page.html")
SUIT_SYMBOLS = {"s": "\u2660", "h": "\u2665", "d": "\u2666", "c": "\u2663"}


def card_view(name: str) -> dict:
    return {"name": name, "rank": name[:-1], "suit": SUIT_SYMBOLS[name[-1]],
            "suit_word": SUIT_WORDS[name[-1]], "red": name[-1] in "hd"}


def page_state(game: Game, pattern: list[str] | None = None,
               question: dict | None = None) -> dict:
    """What the page shows, from the referee's state (the same content as the window);
    question: one the referee asks the table (the pipeline's `asking`), answered with
    the page's buttons."""
    players = game.players or []
    challenge = None
    if game.chain and game.responder is not None:
        challenge = {"seat": game.responder, "name": players[game.responder],
                     "done": game.count - game.left, "count": game.count}
    return {
        "players": [{"name": p, "cards": game.stacks[i] if i < len(game.stacks) else 0,
                     "out": bool(game.out[i]) if i < len(game.out) else False,
                     "turn": game.turn == i} for i, p in enumerate(players)],
        "top": [card_view(c) for c in game.top_cards(3)][::-1],
        "pile": game.pile_count,
        "pattern": list(pattern if pattern is not None else game.top_patterns),
        "challenge": challenge,
        "pending": players[game.pending[0]] if game.pending else None,
        "question": ({"kind": question.get("question"), "cards": question.get("cards"),
                      "text": "Pile taken: who won it?"} if question else None),
    }


class Hub:
    """Thread-safe fan-out from the referee thread to every open page."""

    def __init__(self, players: list[str] | None = None, verbosity: Verbosity = Verbosity.CARDS):
        self.players = players or []
        self.verbosity = verbosity
        self.state: dict[str, Any] = {"players": [], "top": [], "pile": 0, "pattern": [],
                                      "challenge": None, "pending": None}
        self.calls: list[dict] = []
        # The table's answers from the page (a seat each), for the referee's loop.
        self.answers: queue.Queue = queue.Queue()
        # The page's control buttons, as the table's keys (companion.live.controls).
        self.keys: queue.Queue = queue.Queue()
        self.instance = f"{time.time_ns():x}"      # a restarted server numbers calls afresh
        self._seq = 0
        self._lock = threading.Lock()
        self._subs: list[tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = []

    def publish_call(self, ann: dict) -> None:
        text = phrase(ann, self.players, self.verbosity)
        if ann.get("type") == "unclear":
            text = "Card unclear."
        if not text:
            return
        with self._lock:
            self._seq += 1
            rec = {"id": self._seq, "type": ann.get("type"), "text": text,
                   "instance": self.instance}
            self.calls = (self.calls + [rec])[-50:]
        self._send("call", rec)

    def publish_state(self, state: dict) -> None:
        with self._lock:
            self.state = state
        self._send("state", state)

    def _send(self, event: str, data: dict) -> None:
        with self._lock:
            subs = list(self._subs)
        for loop, q in subs:
            try:
                loop.call_soon_threadsafe(q.put_nowait, (event, data))
            except RuntimeError:        # that page's loop has closed
                pass

    def close(self) -> None:
        """End every open event stream (the server is going away)."""
        self._send("close", {})

    def subscribe(self) -> asyncio.Queue:
        q: asyncio.Queue = asyncio.Queue()
        with self._lock:
            self._subs.append((asyncio.get_running_loop(), q))
        return q

    def unsubscribe(self, q: asyncio.Queue) -> None:
        with self._lock:
            self._subs = [(lp, s) for lp, s in self._subs if s is not q]


def page_keys_problem(text, players: int) -> str | None:
    """Why a page's key string is not one control (None: it is). The page sends whole
    controls: a question or correction key, "c" or "a" and a card, "g" and a seat key."""
    from ..engine import parse_card
    from ..live.controls import QUESTIONS
    if not isinstance(text, str) or not text:
        return f"keys {text!r}: expected a control's keys as text"
    if len(text) == 1 and (text in QUESTIONS or text in "und"):
        return None
    if text[0] == "g" and text[1:].isdigit() and 1 <= int(text[1:]) <= min(players, 9):
        return None
    if text[0] in "ca" and len(text) > 2:
        try:
            parse_card(text[1:])
            return None
        except ValueError as exc:
            return f"keys {text!r}: {exc}"
    return f"keys {text!r}: not a control of the table page"


def create_app(hub: Hub):
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    html = PAGE.read_text(encoding="utf-8")

    async def index(request: Request):
        return HTMLResponse(html)

    async def state(request: Request):
        return JSONResponse({"state": hub.state, "calls": hub.calls, "instance": hub.instance})

    async def events(request: Request):
        q = hub.subscribe()

        async def stream():
            try:
                yield "retry: 500\n\n"      # reconnect quickly after a server restart
                while True:
                    try:
                        event, data = await asyncio.wait_for(q.get(), timeout=10)
                    except asyncio.TimeoutError:
                        yield ": keep-alive\n\n"
                        continue
                    if event == "close":
                        return
                    yield f"event: {event}\ndata: {json.dumps(data)}\n\n"
            finally:
                hub.unsubscribe(q)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    async def favicon(request: Request):
        return Response(status_code=204)

    async def answer(request: Request):
        """POST {"seat": N}: who took the pile, as the page's buttons say ({"seat": null}:
        nobody, it is still there)."""
        try:
            body = await request.json()
            seat = body["seat"]
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": 'expected JSON {"seat": N}'}, status_code=400)
        if seat is not None and (type(seat) is not int or not 0 <= seat < len(hub.players)):
            return JSONResponse({"error": f"seat {seat!r}: not a seat at this table"},
                                status_code=400)
        hub.answers.put(seat)
        return JSONResponse({"ok": True})

    async def keys(request: Request):
        """POST {"keys": K}: a control button, as the table's keys (companion.live.controls:
        a question, a correction, the next deal)."""
        try:
            body = await request.json()
            text = body["keys"]
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": 'expected JSON {"keys": "..."}'}, status_code=400)
        problem = page_keys_problem(text, len(hub.players))
        if problem:
            return JSONResponse({"error": problem}, status_code=400)
        hub.keys.put(text)
        return JSONResponse({"ok": True})

    return Starlette(routes=[Route("/", index), Route("/state", state), Route("/events", events),
                             Route("/answer", answer, methods=["POST"]),
                             Route("/keys", keys, methods=["POST"]),
                             Route("/favicon.ico", favicon)])


class WebServer:
    """uvicorn in a daemon thread; `url` once started."""

    def __init__(self, hub: Hub, host: str = "127.0.0.1", port: int = 8765) -> None:
        import uvicorn
        self.hub = hub
        self.host, self.port = host, port
        config = uvicorn.Config(create_app(hub), host=host, port=port, log_level="warning",
                                lifespan="off", timeout_graceful_shutdown=1)
        self.server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def start(self, timeout: float = 10.0) -> "WebServer":
        self._thread = threading.Thread(target=self.server.run, name="web", daemon=True)
        self._thread.start()
        end = time.monotonic() + timeout
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > end:
                raise OSError(f"web page: could not serve on {self.host}:{self.port} "
                              "(port in use?)")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.hub.close()                  # let each page's stream end cleanly first
        time.sleep(0.05)
        self.server.should_exit = True
        self.server.force_exit = True     # open event streams would hold a graceful exit
        if self._thread:
            self._thread.join(timeout=5)
