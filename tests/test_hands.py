"""The camera's slap watcher on rendered hands: the seat an arm comes from, the order
hands land in, and hands that come over the table without slapping."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.engine import PRESETS
from companion.live.hands import CameraSlap, HandWatcher, landing_order
from companion.live.seats import default_seats, direction, parse_seats
from companion.render.video import GameFilm


def _table(seats, seed=3):
    """A small rendered table with a pile on it, and the film that draws its hands."""
    players = ["Ada", "Ben", "Cho", "Dan", "Eve", "Fay"][:len(seats)]
    film = GameFilm(PRESETS["base"], players, seed, size=(480, 270), seconds=2,
                    seats=seats, table_hands=False)
    table = film.background.copy()
    for c in film.timeline.cards[:1]:
        from companion.render.scene import warp_onto
        warp_onto(table, c.face, film._card_H(c, c.t_rest), shadow=0.25)
    return film, table


def _watch(film, table, hands, frames=24):
    """hands: [(seat, first frame, frames to come in, frames held, lift)]: each comes in
    from 2.4 card heights at a steady speed (0 frames: first seen on the pile), holds on
    the pile, then leaves."""
    watcher = HandWatcher(film.seats)
    out = []
    for i in range(frames):
        img = table.copy()
        for seat, start, come, hold, lift in hands:
            k = i - start
            if k < 0 or k > come + hold + 3:
                continue
            if come and k <= come:
                dist, speed = 2.4 * (1 - k / come), -2.4 * film.fps / come
            elif k <= come + hold:
                dist, speed = 0.0, 0.0
            else:
                dist, speed = 0.8 * (k - come - hold), 24.0
            film._draw_hand(img, seat, dist, speed, lift)
        out += watcher.look(img, i / film.fps, i, pile=film.centre, card_h=film.card_h)
    return out


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_a_hand_from_each_seat_is_that_seats_slap(n):
    film, table = _table(default_seats(n))
    for seat in range(n):
        got = _watch(film, table, [(seat, 2, 4, 10, 0.0)])
        assert [s.seat for s in got] == [seat], (n, seat, got)
        # Landed at the 6th frame (0.2 s); the watcher says so within 0.1 s of it.
        assert type(got[0].t) is float and abs(got[0].t - 6 / 30) < 0.1
        assert got[0].frame <= 6 + 6


def test_seats_can_be_placed_and_are_checked():
    seats = parse_seats("bottom, right, 135", 3)
    assert seats == [0.0, 270.0, 135.0]
    film, table = _table(seats)
    for seat in range(3):
        assert [s.seat for s in _watch(film, table, [(seat, 2, 4, 10, 0.0)])] == [seat]
    with pytest.raises(ValueError, match="2 positions for 3 players"):
        parse_seats("top,bottom", 3)
    with pytest.raises(ValueError, match="'sideways' is not a position"):
        parse_seats("top,sideways", 2)
    with pytest.raises(ValueError, match="under 20 degrees apart"):
        parse_seats("top,175", 2)


@pytest.mark.parametrize("first,second", [(1, 2), (2, 1), (0, 2)])
def test_two_hands_are_ordered_as_they_landed(first, second):
    film, table = _table(default_seats(3))
    got = _watch(film, table, [(first, 2, 4, 12, 0.0), (second, 4, 4, 10, 0.0)])
    assert [s.seat for s in got] == [first, second]
    assert got[0].t < got[1].t



def test_hands_at_rest_a_frame_apart_are_ordered_by_their_arrival():
    """Rests found a frame apart are within the forearm test's error: the hand whose tip
    reached the pile first landed first (seed 2229). Two frames apart, the rest decides."""
    frame = 1 / 30
    late_rest = CameraSlap(seat=2, t=6 * frame, frame=9, angle=0.0, arrived=3.1 * frame)
    early_rest = CameraSlap(seat=1, t=5 * frame, frame=9, angle=120.0, arrived=4.3 * frame)
    third = CameraSlap(seat=0, t=7 * frame, frame=9, angle=240.0, arrived=5.4 * frame)
    got = landing_order([third, early_rest, late_rest], frame)
    assert [s.seat for s in got] == [2, 1, 0]
    apart = CameraSlap(seat=2, t=7 * frame, frame=9, angle=0.0, arrived=3.1 * frame)
    assert [s.seat for s in landing_order([apart, early_rest], frame)] == [1, 2]
    # With no frame time known yet, by rest alone.
    assert [s.seat for s in landing_order([late_rest, early_rest], None)] == [1, 2]

@pytest.mark.parametrize("seat", [0, 1, 2])
def test_a_hand_that_lands_between_two_frames_is_a_slap(seat):
    """A hand out of view in one frame and stretched out on the pile in the next (a fast
    slap, seed 1408) was never seen coming in: it is a slap all the same, and a second
    hand that lands so on top of another is the second slap."""
    film, table = _table(default_seats(3))
    got = _watch(film, table, [(seat, 4, 0, 12, 0.0)])
    assert [s.seat for s in got] == [seat]
    assert abs(got[0].t - 4 / 30) < 0.1
    other = (seat + 1) % 3
    got = _watch(film, table, [(other, 2, 4, 14, 0.0), (seat, 9, 0, 12, 0.0)], frames=30)
    assert [s.seat for s in got] == [other, seat]


def _along(film, table, seat, path, frames, moving):
    """One hand from `seat` from frame 2 on, at path[k] card heights from the pile's centre
    in frame k + 2 (its last place after the path ends), drawn with motion blur for the
    first `moving` steps. The watcher's slaps, and the watcher."""
    watcher = HandWatcher(film.seats)
    got = []
    for i in range(frames):
        img = table.copy()
        k = i - 2
        if k >= 0:
            speed = (path[k] - path[k - 1]) * film.fps if 0 < k < moving else 0.0
            film._draw_hand(img, seat, path[min(k, len(path) - 1)], speed, 0.0)
        got += watcher.look(img, i / film.fps, i, pile=film.centre, card_h=film.card_h)
    return got, watcher


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_a_long_reach_still_flying_over_the_pile_is_a_slap(seat):
    """A hand that reaches far over the pile crosses its near edge several frames before
    it lands beyond the centre, still fast all the way (seed 2064's miss): it has not yet
    arrived to glide, and once it holds still it is that seat's slap."""
    film, table = _table(default_seats(3))
    path = [2.4, 1.9, 1.4, 0.9, 0.45, 0.0, -0.45, -0.9]   # card heights from the centre
    got, _ = _along(film, table, seat, path, frames=24, moving=len(path))
    assert [s.seat for s in got] == [seat]
    assert abs(got[0].t - 9 / 30) < 0.1          # it landed at frame 9


def test_a_resting_hand_lost_for_a_frame_is_no_new_slap():
    """A hand that eased onto the pile and rests there drops out of the picture for one
    frame (the camera's exposure, a flicker of the foreground): back the next frame,
    already on the pile, it did not just come in."""
    film, table = _table(default_seats(3))
    watcher = HandWatcher(film.seats)
    got = []
    for i in range(36):
        img = table.copy()
        if 2 <= i and i != 22:
            film._draw_hand(img, 1, max(0.0, 2.4 - 0.12 * (i - 2)), 0.0, 0.0)
        got += watcher.look(img, i / 30, i, pile=film.centre, card_h=film.card_h)
    assert got == []
    assert watcher.arms and watcher.arms[0].tips[-1][1] <= watcher.cfg.on_pile


@pytest.mark.parametrize("seat", [1, 2])
def test_a_dealing_hand_lost_for_a_frame_on_the_pile_is_no_slap(seat):
    """A hand pushes a card in and glides on with it (no slap), rests on the pile, and for
    one frame only its forearm is seen (seed 2087: its tip -0.7, 2.2, -0.6 card heights).
    No arm goes back and comes again that fast: it never left, and is still no slap."""
    film, table = _table(default_seats(3))
    path = [3.0, 2.3, 1.6, 0.9, 0.78, 0.66, 0.54, 0.42, 0.3, 0.2, 0.2, 0.2, 3.0] + [0.25] * 14
    got, watcher = _along(film, table, seat, path, frames=len(path) + 2, moving=9)
    assert got == []
    assert watcher.arms[0].decided and watcher.arms[0].tips[-1][1] <= watcher.cfg.on_pile


def test_an_arm_seen_as_two_runs_stays_the_run_nearer_where_it_was():
    """Pushing a card in, an arm at 130 degrees shows as two runs along the edge, at 148
    (the card and its shadow, listed first) and 125 (the arm). The arm it was is the run at
    125, so it did not just appear on the pile (seed 2090: a slap invented)."""
    watcher = HandWatcher(default_seats(3))
    before = watcher._match([130.0])[0]
    before.tips.append((0.0, 0.3))
    far, near = watcher._match([148.0, 125.0])
    assert near is before and near.angle == 125.0
    assert far is not before and len(watcher.arms) == 2


def test_a_hand_easing_in_beside_a_slap_does_not_leap_onto_it():
    """Seat 3 slaps while seat 0's hand eases in towards the pile, poised (3 to 5 card
    heights a second). Their foregrounds join over the pile, and seat 0's tip runs on into
    seat 3's hand within one frame: that is no hand arriving fast (seed 2212 called it a
    slap), so the only slap is seat 3's."""
    film, table = _table(default_seats(4))
    poised = [2.6 - 0.1 * k for k in range(8)]
    while poised[-1] > 1.2:             # on towards a card height short of the pile
        poised.append(max(1.2, poised[-1] - (0.12 if len(poised) < 10 else 0.17)))
    poised += [1.2] * 20
    watcher = HandWatcher(film.seats)
    got = []
    for i in range(len(poised) + 2):
        img = table.copy()
        if 2 <= i:
            film._draw_hand(img, 0, poised[i - 2], 0.0, 0.15)
        k = i - (len(poised) - 22)
        if 0 <= k <= 18:
            film._draw_hand(img, 3, 2.4 * (1 - k / 4) if k <= 4 else 0.0,
                            -18.0 if k < 4 else 0.0, 0.0)
        got += watcher.look(img, i / film.fps, i, pile=film.centre, card_h=film.card_h)
    assert [s.seat for s in got] == [3]


def test_hands_that_do_not_slap_are_not_slaps():
    film, table = _table(default_seats(4))
    # Easing in slowly over the pile (a hand in the air), and stopping short of it.
    assert _watch(film, table, [(1, 2, 16, 8, 0.3)], frames=30) == []
    watcher = HandWatcher(film.seats)
    got = []
    for i in range(24):
        img = table.copy()
        if 2 <= i < 20:
            film._draw_hand(img, 2, max(1.6, 2.4 - 0.4 * (i - 2)), 0.0, 0.15)
        got += watcher.look(img, i / 30, i, pile=film.centre, card_h=film.card_h)
    assert got == []
    # A hand that lands and drags the pile away at once (picks it up) is no slap.
    got = _watch(film, table, [(0, 2, 4, 0, 0.0)])
    assert got == []


def test_a_hand_that_dealt_a_card_and_hovers_at_its_edge_is_no_slap():
    """The dealer's hand brings the card in, lets go, draws back and comes back to hover
    with its fingers at the card's edge, short of the pile. The card, new to the table
    while the hand covered it, must not count as part of the arm (its tip would then run
    on over the card onto the pile, and the hand held there would be a slap)."""
    film, table = _table(default_seats(3))
    bare = film.background.copy()
    watcher = HandWatcher(film.seats)
    got = []
    for i in range(30):
        img = bare.copy() if i < 6 else table.copy()     # the card, from under the hand
        if 2 <= i < 6:                                   # coming in fast with the card
            film._draw_hand(img, 0, 3.0 - 0.45 * (i - 2), -13.5, 0.0)
        elif 6 <= i < 10:                                # letting go, gliding on
            film._draw_hand(img, 0, 0.9 - 0.1 * (i - 6), 0.0, 0.0)
        elif 10 <= i < 13:                               # drawn back off the card
            film._draw_hand(img, 0, 2.0, 0.0, 0.15)
        elif i >= 13:                                    # hovering, fingers at its edge
            film._draw_hand(img, 0, 1.4, 0.0, 0.15)
        got += watcher.look(img, i / 30, i, pile=film.centre, card_h=film.card_h)
    assert got == []
    assert 0.35 < watcher.arms[0].tips[-1][1] < 0.8      # the hand seen, short of the pile


def _drawn_slap(film, table, seat, draw):
    """A drawn hand from `seat` slaps: from frame 2 it comes in over 4 frames from 2.4
    card heights out and holds on the pile. draw(img, at, ch, dx, dy) draws it, at(r)
    being the point r pixels out from the hand along its arm. The watcher's slaps."""
    cx, cy = film.centre
    ch = film.card_h
    dx, dy = direction(film.seats[seat])
    watcher = HandWatcher(film.seats)
    got = []
    for i in range(20):
        img = table.copy()
        k = i - 2
        if k >= 0:
            d = 2.4 * (1 - min(k, 4) / 4) * ch          # the hand from the pile's centre
            hx, hy = cx + dx * d, cy + dy * d
            draw(img, lambda r: (int(hx + dx * r), int(hy + dy * r)), ch, dx, dy)
        got += watcher.look(img, i / 30, i, pile=film.centre, card_h=film.card_h)
    return got


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_an_arm_of_the_tables_own_colour_slaps_from_its_seat(seat):
    """A sleeve of the tablecloth's own colour (as in a rendered film where one matched
    it): only its two sides and the hand at its end differ from the table. It comes in
    fast and holds on the pile: a slap from its seat."""
    film, table = _table(default_seats(3))
    far = 3 * max(table.shape[:2])

    def draw(img, at, ch, dx, dy):
        hx, hy = at(0)
        for side in (-0.3, 0.3):
            sx, sy = hx - dy * side * ch, hy + dx * side * ch
            cv2.line(img, (int(sx + dx * 0.3 * ch), int(sy + dy * 0.3 * ch)),
                     (int(sx + dx * far), int(sy + dy * far)), (40, 50, 50), 3)
        cv2.ellipse(img, (int(hx), int(hy)), (int(0.3 * ch), int(0.36 * ch)),
                    film.seats[seat], 0, 360, (60, 90, 140), -1)

    got = _drawn_slap(film, table, seat, draw)
    assert [s.seat for s in got] == [seat]
    assert abs(got[0].t - 6 / 30) < 0.1


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_a_dark_arm_on_dark_wood_slaps_from_its_seat(seat):
    """A red sleeve, then a forearm and hand barely darker than the wood they cross (12
    levels: under what counts as changed on its own), the hand plain over the white
    card: the forearm still joins hand to sleeve, and the slap is that seat's."""
    film, _ = _table(default_seats(3))
    cx, cy = film.centre
    ch = film.card_h
    wood = np.full_like(film.background, (30, 48, 80))
    card = ((cx, cy), (0.7 * ch, ch), 10.0)
    cv2.fillPoly(wood, [cv2.boxPoints(card).astype(np.int32)], (235, 240, 240))
    far = 3 * max(wood.shape[:2])

    def draw(img, at, ch, dx, dy):
        cv2.line(img, at(0), at(far), (18, 36, 68), int(0.4 * ch))
        cv2.line(img, at(0.6 * ch), at(far), (60, 60, 200), int(0.45 * ch))
        cv2.ellipse(img, at(0), (int(0.3 * ch), int(0.36 * ch)), film.seats[seat],
                    0, 360, (18, 36, 68), -1)

    got = _drawn_slap(film, wood, seat, draw)
    assert [s.seat for s in got] == [seat]
    assert abs(got[0].t - 6 / 30) < 0.1


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_an_arm_of_the_woods_own_colour_is_seen_by_the_grain_it_hides(seat):
    """Fine-grained dark wood and an arm of exactly its colour: the arm differs from the
    table only in hiding the grain. The grain here is as fine as the rendered films' dark
    woods (pooled |Laplacian| ~3.6 at the watcher's scale, as film 1970's; they measure
    3.2-4.3): the watcher must still see the arm come in and slap (a grain threshold of 4
    saw none of these; session 29)."""
    film, _ = _table(default_seats(3))
    cx, cy = film.centre
    ch = film.card_h
    rng = np.random.default_rng(0)
    h, w = film.background.shape[:2]
    grain = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 1.0)
    brown = np.float32((30, 48, 80))
    wood = brown + 3.0 * (grain / grain.std())[..., None] * np.float32([0.6, 0.8, 1.0])
    wood = np.clip(wood, 0, 255).astype(np.uint8)
    cv2.fillPoly(wood, [cv2.boxPoints(((cx, cy), (0.7 * ch, ch), 10.0)).astype(np.int32)],
                 (235, 240, 240))
    far = 3 * max(wood.shape[:2])

    def draw(img, at, ch, dx, dy):
        cv2.line(img, at(0), at(far), tuple(int(v) for v in brown), int(0.4 * ch))
        cv2.ellipse(img, at(0), (int(0.3 * ch), int(0.36 * ch)), film.seats[seat],
                    0, 360, (60, 90, 140), -1)

    got = _drawn_slap(film, wood, seat, draw)
    assert [s.seat for s in got] == [seat]
    assert abs(got[0].t - 6 / 30) < 0.1


@pytest.mark.parametrize("brighter", [8, 14])
def test_the_light_changing_a_little_while_a_hand_waits_does_not_blind_the_watcher(brighter):
    """The room's light steps up by a little (less than what counts as changed on its
    own) while one player's hand hovers: the table is learnt anew, not taken for part
    of the waiting arm, and another player's slap is seen as before."""
    film, table = _table(default_seats(3))
    watcher = HandWatcher(film.seats)
    got = []
    for i in range(40):
        img = table.copy()
        if i >= 3:                                      # comes to hover short of the pile
            film._draw_hand(img, 1, 1.6, 0.0, 0.15)
        k = i - 20
        if 0 <= k <= 14:
            film._draw_hand(img, 2, 2.4 * (1 - min(k, 4) / 4), 0.0 if k >= 4 else -18.0, 0.0)
        if i >= 10:
            img = cv2.add(img, (brighter, brighter, brighter, 0))
        got += watcher.look(img, i / 30, i, pile=film.centre, card_h=film.card_h)
    assert [s.seat for s in got] == [2]
    assert abs(got[0].t - 24 / 30) < 0.1


def test_rendered_films_list_the_hands_that_are_no_slap():
    film = GameFilm(PRESETS["challenge"], ["Ada", "Ben", "Cho"], 5, size=(320, 180),
                    seconds=20)
    decoys = film.timeline.truth[0]["decoys"]
    kinds = {d["kind"] for d in decoys}
    assert {"deal", "hover", "pickup"} <= kinds
    flips = [x for x in film.timeline.truth if x["type"] == "flip"]
    assert sum(d["kind"] == "deal" for d in decoys) == len(flips)
    slaps = [x for x in film.timeline.truth if x["type"] == "slap"]
    for d in decoys:
        if d["kind"] == "hover":          # never while a hand slaps
            assert all(d["frames"][1] < s["hands_frames"][0] or
                       d["frames"][0] > s["hands_frames"][1] for s in slaps)


def test_a_camera_slap_reaches_the_referee_with_its_evidence(tmp_path):
    """The pipeline with the camera's watcher and no pad: a hand lands from Cho's side on
    a pile with no pattern; Cho pays, and the evidence is the frame the hand landed in,
    not the later one that confirmed it."""
    from companion.detector.detections import Detections
    from companion.engine import Game
    from companion.live.capture import Frame
    from companion.live.pipeline import LivePipeline

    film, table = _table(default_seats(3))
    game = Game(PRESETS["base"])
    game.start(["Ada", "Ben", "Cho"], stacks=[5, 5, 5])
    game.flip("7h")
    pipe = LivePipeline(lambda img, conf=None: Detections.empty(), game,
                        evidence_dir=tmp_path / "ev", hands=HandWatcher(film.seats))
    out = []
    for i in range(20):
        img = table.copy()
        k = i - 2
        if 0 <= k <= 14:
            dist = 2.4 * (1 - k / 4) if k <= 4 else 0.0
            film._draw_hand(img, 2, dist, -18.0 if k < 4 else 0.0, 0.0)
        out += pipe.process(Frame(i, i / 30, img))
    wrong = [c for c in out if c["type"] == "wrong_slap"]
    assert len(wrong) == 1 and wrong[0]["seat"] == 2 and wrong[0]["paid"] == 2
    ev = wrong[0]["evidence"]
    assert ev["source"] == "camera" and ev["top"] == ["7h"]
    assert 5 <= ev["frame"] <= 7 < wrong[0]["frame"]
    assert (tmp_path / "ev").joinpath(ev["image"].split("/")[-1]).is_file()
    assert game.stacks[2] == 3


@pytest.mark.parametrize("seat", [0, 2])
def test_a_dark_table_taken_for_no_picture_still_teaches_the_hands_the_table(seat):
    """A dark cloth in dim light is one shade (the camera's check takes it for no picture)
    until the first hand comes over it. The hands learn the table from those frames all
    the same: learnt with that hand on it, the shape the hand left stayed an arm all game
    and hid that seat's slaps (seed 2087)."""
    from companion.detector.detections import Detections
    from companion.engine import Game
    from companion.live.capture import Frame
    from companion.live.pipeline import LivePipeline
    from companion.live.runner import run_frames

    film, _ = _table(default_seats(3))
    dark = (film.background.astype(np.float32) * 0.04).astype(np.uint8)
    assert dark[::8, ::8].std() < 2.0 and dark.mean() < 16     # what the camera calls flat
    game = Game(PRESETS["base"])
    game.start(["Ada", "Ben", "Cho"], stacks=[5, 5, 5])
    game.flip("7h")
    calls = []
    pipe = LivePipeline(lambda img, conf=None: Detections.empty(), game,
                        hands=HandWatcher(film.seats), on_output=calls.append)
    # Dark frames, then a hand easing onto the pile (the first picture with anything in
    # it) and going, then two seconds on, a slap.
    path = [None] * 10 + [2.4 - 0.1 * k for k in range(25)] + [0.8, 1.6, 2.4, 3.2, 4.0] + \
        [None] * 60 + [2.4, 1.6, 0.8] + [0.0] * 12 + [0.8, 1.6, 2.4, 3.2]
    frames = []
    for i, dist in enumerate(path):
        img = dark.copy()
        if dist is not None:
            film._draw_hand(img, seat, dist, 0.0, 0.0)
        frames.append(Frame(i, i / 30, img))
    run_frames(pipe, frames)
    slaps = [c for c in calls if c["type"] in ("wrong_slap", "award")]
    assert [(c["type"], c["seat"]) for c in slaps] == [("wrong_slap", seat)]
    assert abs(slaps[0]["t"] * 30 - 103) <= 2                # the hand that landed at 103


@pytest.mark.parametrize("pad_seat,confirms", [(2, True), (0, False)])
def test_with_a_pad_the_pad_referees_and_the_camera_confirms_who(pad_seat, confirms):
    from companion.detector.detections import Detections
    from companion.engine import Game
    from companion.live.capture import Frame
    from companion.live.pipeline import LivePipeline

    film, table = _table(default_seats(3))
    game = Game(PRESETS["base"])
    game.start(["Ada", "Ben", "Cho"], stacks=[5, 5, 5])
    game.flip("7h")
    pipe = LivePipeline(lambda img, conf=None: Detections.empty(), game,
                        hands=HandWatcher(film.seats), camera_referees=False)
    out = []
    for i in range(20):
        img = table.copy()
        k = i - 2
        if 0 <= k <= 14:
            film._draw_hand(img, 2, 2.4 * (1 - k / 4) if k <= 4 else 0.0, 0.0, 0.0)
        if i == 6:                                  # the pad felt a hand as it landed
            out += pipe.slap([pad_seat], i / 30)
        out += pipe.process(Frame(i, i / 30, img))
    seen = [c for c in out if c["type"] == "camera_slap"]
    assert len(seen) == 1 and seen[0]["seat"] == 2 and seen[0]["confirms"] is confirms
    # Only the pad's slap reached the referee.
    assert [c["seat"] for c in out if c["type"] == "wrong_slap"] == [pad_seat]


def test_the_pile_taken_away_is_seen_as_bare_table():
    """A pile on the table, then bare table where it lay (no hand over it): the watcher
    says when the pile went, once."""
    film, table = _table(default_seats(3))
    watcher = HandWatcher(film.seats)
    gone = []
    for i in range(16):
        img = table if i < 6 else film.background
        watcher.look(img, i / 30, i, pile=film.centre, card_h=film.card_h)
        if watcher.pile_gone is not None:
            gone.append(i)
    assert gone == [9]                  # four frames of bare table: 6, 7, 8, 9
