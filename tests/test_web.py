"""The table page in a real headless Chromium: live calls, reconnection, a large top card."""

from __future__ import annotations

import shutil
import socket
import time

import pytest

from companion.engine import PRESETS, Game
from companion.web.server import Hub, WebServer, page_state

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
sync_api = pytest.importorskip("playwright.sync_api")

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def play(hub: Hub, game: Game, events):
    for ev in events:
        for a in game.apply(ev):
            hub.publish_call(a)
        hub.publish_state(page_state(game))


def open_page(browser, hub):
    """The table page served for hub, open and live in a browser page."""
    server = WebServer(hub, port=free_port()).start()
    page = browser.new_page(viewport={"width": 1100, "height": 800})
    page.goto(server.url)
    page.wait_for_function("document.getElementById('status').textContent === 'live'")
    return server, page


@pytest.fixture
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def test_calls_arrive_in_order_and_the_page_reconnects(browser, tmp_path):
    port = free_port()
    players = ["Ada", "Ben", "Cho"]
    game = Game(PRESETS["challenge"])
    hub = Hub(players)
    server = WebServer(hub, port=port).start()
    page = browser.new_page(viewport={"width": 1100, "height": 800})
    try:
        page.goto(server.url)
        page.wait_for_function("document.getElementById('status').textContent === 'live'")
        play(hub, game, [{"type": "start", "players": players, "stacks": [10, 10, 10]},
                         {"type": "flip", "card": "7h"}, {"type": "flip", "card": "7s"},
                         {"type": "slap", "seats": [2]}, {"type": "flip", "card": "Kd"}])
        live = page.locator("#calls[aria-live]")
        expected = ["New hand: Ada, Ben, Cho.", "Seven of hearts.", "Seven of spades.",
                    "Double! Sevens.", "Cho takes the pile, two cards.", "King of diamonds.",
                    "King — Ada, three chances."]
        page.wait_for_function(f"document.querySelectorAll('#calls p').length >= {len(expected)}",
                               timeout=5000)
        assert live.locator("p").all_inner_texts() == expected
        assert "Ada: 3 of 3" not in page.inner_text("#challenge")
        assert page.inner_text("#challenge") == "Ada: 0 of 3"
        # The top card: large, named in words, its suit as a shape.
        card = page.locator("#topcard")
        box = card.bounding_box()
        assert box["height"] >= 250 and box["width"] >= 250
        assert card.get_attribute("aria-label") == "top card: K of diamonds"
        assert "DIAMONDS" in card.inner_text().upper() and "\u2666" in card.inner_text()
        shot = tmp_path / "page.png"
        page.screenshot(path=str(shot))
        import cv2
        img = cv2.imread(str(shot))
        x, y, w, h = (int(v) for v in (box["x"], box["y"], box["width"], box["height"]))
        region = img[y + 10:y + h - 10, x + 10:x + w - 10]
        # Mostly card stock, with a big block of red ink for the king of diamonds.
        white = (region.min(axis=2) > 230).mean()
        red = ((region[..., 2] > 150) & (region[..., 1] < 90)).mean()
        assert white > 0.5 and red > 0.03

        # The server restarts (a new process, same port): the page comes back by itself.
        server.stop()
        page.wait_for_function("document.getElementById('status').textContent !== 'live'",
                               timeout=5000)
        hub2 = Hub(players)
        server = WebServer(hub2, port=port).start()
        page.wait_for_function("document.getElementById('status').textContent === 'live'",
                               timeout=10000)
        time.sleep(0.3)
        play(hub2, game, [{"type": "flip", "card": "3c"}])
        page.wait_for_function("[...document.querySelectorAll('#calls p')].some("
                               "p => p.textContent === 'Three of clubs. Ada, two left.')",
                               timeout=5000)
    finally:
        page.close()
        server.stop()


def test_the_page_asks_who_took_the_pile_and_its_buttons_answer(browser):
    players = ["Ada", "Ben", "Cho"]
    game = Game(PRESETS["base"])
    game.start(players, stacks=[5, 5, 5])
    game.flip("7h")
    server, page = open_page(browser, Hub(players))
    hub = server.hub
    try:
        assert page.locator("#question").is_hidden()
        hub.publish_state(page_state(game, question={"type": "ask", "question": "pile_taken",
                                                     "cards": 1}))
        page.wait_for_selector("#question button", timeout=5000)
        assert page.inner_text("#asked") == "Pile taken: who won it?"
        assert page.locator("#choices button").all_inner_texts() == [
            *players, "Nobody: it is still there", "Add it"]
        page.fill("#missedcard", "9h")              # a card it missed hid the pile
        page.click("#choices button:has-text('Add it')")
        assert hub.keys.get(timeout=5) == "a9h"
        page.click("#choices button:has-text('Ben')")
        assert hub.answers.get(timeout=5) == 1
        page.click("#choices button:has-text('Nobody')")
        assert hub.answers.get(timeout=5) is None
        hub.publish_state(page_state(game))
        page.wait_for_function("document.getElementById('question').hidden", timeout=5000)
        # A bad answer is one clear error, not a crash.
        bad = page.request.post(server.url + "answer", data={"seat": 7})
        assert bad.status == 400 and "not a seat" in bad.json()["error"]
    finally:
        page.close()
        server.stop()


def test_the_pages_control_buttons_ask_and_correct_through_the_referees_loop(browser):
    """Buttons -> /keys -> the referee's own loop (run_frames) -> calls back on the page."""
    import threading

    import numpy as np

    from companion.live.capture import Frame
    from companion.live.runner import make_pipeline, run_frames
    from helpers import ScriptedDetector
    players = ["Ada", "Ben"]
    hub = Hub(players)
    server, page = open_page(browser, hub)
    pipe = make_pipeline(ScriptedDetector({}), PRESETS["base"], players, lambda rec: None,
                         stacks=[5, 5], hub=hub)
    for card in ("7s", "7h"):
        pipe.feed({"type": "flip", "card": card})
    pipe.slap([0], 1.0)                                   # Ada takes the pair
    stop = threading.Event()
    rng = np.random.default_rng(0)

    def frames():
        i = 0
        while not stop.is_set():
            yield Frame(i, i / 30, rng.integers(0, 255, (60, 80, 3), dtype=np.uint8))
            i += 1
            time.sleep(0.02)

    loop = threading.Thread(target=run_frames, args=(pipe, frames()), kwargs={"hub": hub},
                            daemon=True)
    loop.start()
    said = ("[...document.querySelectorAll('#calls p')].some(p => p.textContent.includes(%r))")
    try:
        page.wait_for_selector("#give button", timeout=5000)
        page.click("#controls button:has-text('Whose turn?')")
        page.wait_for_function(said % "Ada to play.", timeout=5000)
        page.click("#controls button:has-text('Cards each')")
        page.wait_for_function(said % "Ada six, Ben four; pile zero.", timeout=5000)
        page.click("#give button:has-text(\"Ben's\")")       # no: the pile was Ben's
        page.wait_for_function(said % "Correction:", timeout=5000)
        deadline = time.monotonic() + 5
        while pipe.game.stacks != [4, 6] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pipe.game.stacks == [4, 6]
        page.fill("#card", "zz")
        page.click("#setcard")                                # not a card: said on the page
        page.wait_for_function("document.getElementById('said').textContent.includes('zz')",
                               timeout=5000)
        page.fill("#card", "Kd")
        page.click("#addcard")                                # a card the referee missed
        deadline = time.monotonic() + 5
        while pipe.game.top_cards(1) != ["Kd"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pipe.game.top_cards(1) == ["Kd"] and pipe.game.stacks == [3, 6]
        bad = page.request.post(server.url + "keys", data={"keys": "rm -rf"})
        assert bad.status == 400 and "not a control" in bad.json()["error"]
    finally:
        stop.set()
        loop.join(timeout=5)
        page.close()
        server.stop()
