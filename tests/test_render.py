"""The renderer: labels on the indices, occlusion, determinism, films that agree with the engine."""

from __future__ import annotations

import json
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from companion.engine import PRESETS, Game
from companion.engine.cards import CLASS_NAMES
from companion.render.faces import Deck, DeckStyle
from companion.render.scene import (Placed, SceneRenderer, card_labels, card_transform,
                                    index_labels, warp_onto)


@pytest.fixture(scope="module")
def deck():
    return Deck(DeckStyle.random(12))


def ink_mask(img):
    """Printed ink (black or red) on white stock: dark or strongly red pixels."""
    b, g, r = [img[..., i].astype(int) for i in range(3)]
    return ((b + g + r) < 330) | ((r - g) > 80)


@pytest.mark.parametrize("cls,angle", [(CLASS_NAMES.index("Qh"), 0.0), (CLASS_NAMES.index("7s"), 0.0),
                                       (CLASS_NAMES.index("10d"), 90.0),
                                       (CLASS_NAMES.index("Ac"), 180.0)])
def test_label_boxes_hold_the_index_glyphs(deck, cls, angle):
    face = deck.face(cls)
    canvas = np.full((400, 400, 3), 235, np.uint8)     # plain light table
    H = card_transform(face, (200, 200), 300, angle)
    mask = warp_onto(canvas, face, H)
    labels = index_labels([Placed(face, H, mask)], None, 400, 400)
    assert len(labels) == len(face.index_boxes) >= 2
    ink = ink_mask(canvas)
    for lab_cls, x1, y1, x2, y2 in labels:
        assert lab_cls == cls
        # The ink near the box (the index glyphs) lies inside it...
        inner = ink[int(y1):int(np.ceil(y2)), int(x1):int(np.ceil(x2))]
        assert inner.sum() > 20
        ys, xs = np.nonzero(inner)
        gx1, gy1, gx2, gy2 = x1 + xs.min(), y1 + ys.min(), x1 + xs.max() + 1, y1 + ys.max() + 1
        # ...and the box is tight around it: no more than a few pixels of margin.
        assert max(gx1 - x1, gy1 - y1, x2 - gx2, y2 - gy2) <= 7
        # Nothing of the glyph is cut off: a 1-pixel ring outside the box holds little ink.
        ring = ink[max(0, int(y1) - 2):int(y2) + 3, max(0, int(x1) - 2):int(x2) + 3].sum()
        assert ring - inner.sum() <= 0.08 * inner.sum() + 3


def test_a_fully_covered_corner_gets_no_label(deck):
    under, over = deck.face(0), deck.face(20)
    canvas = np.full((500, 500, 3), 235, np.uint8)
    H1 = card_transform(under, (250, 250), 300, 0)
    m1 = warp_onto(canvas, under, H1)
    # The second card sits up and to the left: it hides the first card's top-left index.
    H2 = card_transform(over, (200, 190), 300, 0)
    m2 = warp_onto(canvas, over, H2)
    labels = index_labels([Placed(under, H1, m1), Placed(over, H2, m2)], None, 500, 500)
    under_boxes = [l for l in labels if l[0] == 0]
    assert len(under_boxes) == 1                       # only its lower-right index shows
    assert under_boxes[0][1] > 300 and under_boxes[0][2] > 300
    assert sum(1 for l in labels if l[0] == 20) == 2


def test_a_hand_over_the_index_removes_its_label(deck):
    face = deck.face(5)
    canvas = np.full((400, 400, 3), 235, np.uint8)
    H = card_transform(face, (200, 200), 300, 0)
    m = warp_onto(canvas, face, H)
    hand = np.zeros((400, 400), np.float32)
    hand[:200, :200] = 1.0                              # covers the top-left corner
    labels = index_labels([Placed(face, H, m)], hand, 400, 400)
    assert len(labels) == 1 and labels[0][1] > 200


def test_a_top_card_under_a_hand_is_outlined_only_when_asked_and_a_card_below_never(deck):
    from companion.training.dataset import card_lines
    under, over = deck.face(3), deck.face(30)
    canvas = np.full((500, 500, 3), 235, np.uint8)
    H1 = card_transform(under, (250, 250), 260, 0)
    m1 = warp_onto(canvas, under, H1)
    H2 = card_transform(over, (215, 230), 260, 0)     # lies over a corner of the first
    m2 = warp_onto(canvas, over, H2)
    hand = np.zeros((500, 500), np.float32)
    hand[:200, :] = 1.0                                 # a hand over the top card's top
    cards = card_labels([Placed(under, H1, m1), Placed(over, H2, m2)], hand, 500, 500)
    top, below = cards
    assert top.cls == 30 and top.uncovered > 0.99 and 0.5 < top.visible < 0.9
    assert below.uncovered < 0.9

    scene = SimpleNamespace(cards=cards)
    assert card_lines(scene, 500) == []                 # hands hide a card as cards do
    lines = card_lines(scene, 500, shown=0.5)           # ...unless it is asked for
    assert len(lines) == 1
    corners = np.float32(lines[0].split()[1:]).reshape(4, 2) * 500
    assert np.allclose(corners, top.quad, atol=0.01)


def test_scenes_are_deterministic_by_seed():
    a, b, c = SceneRenderer(320, seed=5), SceneRenderer(320, seed=5), SceneRenderer(320, seed=6)
    for i in (0, 7, 31):
        sa, sb, sc = a.render(i), b.render(i), c.render(i)
        assert np.array_equal(sa.image, sb.image) and sa.labels == sb.labels
        assert not np.array_equal(sa.image, sc.image)


def test_scene_labels_are_inside_the_frame_and_name_pile_cards():
    r = SceneRenderer(320, seed=2)
    seen = whole_tops = 0
    for i in range(30):
        s = r.render(i)
        assert s.image.shape == (320, 320, 3)
        for cls, x1, y1, x2, y2 in s.labels:
            assert cls in s.pile
            assert 0 <= x1 < x2 <= 320 and 0 <= y1 < y2 <= 320
            seen += 1
        top = s.cards[0] if s.cards else None
        if top is not None and top.cls is not None and top.visible >= 0.9:
            # A top card nearly whole in view: at least one of its indices is labelled.
            whole_tops += 1
            assert any(label[0] == top.cls for label in s.labels), i
    assert seen > 30 and whole_tops >= 10


def test_dataset_command_writes_an_ultralytics_obb_dataset(tmp_path):
    from companion.training.dataset import make_dataset
    info = make_dataset(tmp_path / "ds", images=10, seed=3, workers=1, progress=False)
    assert info["images"] == 10 and info["val"] == 1
    yaml = (tmp_path / "ds" / "data.yaml").read_text()
    assert "train: images/train" in yaml and yaml.rstrip().endswith("0: card")
    labels = sorted((tmp_path / "ds" / "labels" / "train").glob("*.txt"))
    assert len(labels) == 9
    lines = [line.split() for f in labels for line in f.read_text().splitlines()]
    assert lines                                  # some whole cards were labelled
    for cls, *corners in lines:
        assert cls == "0" and len(corners) == 8 and all(0 <= float(v) <= 1 for v in corners)
    assert (tmp_path / "ds" / "contact_sheet.png").stat().st_size > 10_000


def test_game_film_truth_is_a_legal_game_the_engine_agrees_with(tmp_path):
    from companion.render.video import GameFilm
    from companion.sim import play_hand
    rules = PRESETS["challenge"]
    film = GameFilm(rules, ["Ada", "Ben", "Cho"], seed=4, size=(320, 180), seconds=25)
    truth = film.timeline.truth
    assert truth[0]["type"] == "start"
    # The truth file is itself a referee event stream; it replays the self-played game.
    g = Game(rules)
    replayed = [a for ev in truth for a in g.apply(ev)]
    original = play_hand(rules, ["Ada", "Ben", "Cho"], 4)
    g2 = Game(rules)
    played = [a for ev in original.events for a in g2.apply(ev)]
    strip = lambda anns: [{k: v for k, v in a.items() if k != "t"} for a in anns]
    assert strip(replayed) == strip(played)[:len(replayed)]
    flips = [x for x in truth if x["type"] == "flip"]
    frames = [x["frame"] for x in flips]
    assert frames == sorted(frames) and len(set(frames)) == len(frames) and len(flips) >= 10
    # Films are deterministic too, and the first resting frame shows the card still.
    info = film.write(tmp_path / "g.mp4", progress=False)
    cap = cv2.VideoCapture(info["video"])
    n = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
    assert n == info["frames"] == film.frame_of(film.timeline.duration)
    lines = [json.loads(x) for x in open(info["truth"])]
    assert lines == truth
    # Cut to length, the truth holds only what the film shows: every flip rests for the
    # last END_REST seconds at least, and every slap lands that long before the end.
    from companion.render.video import END_REST
    for x in truth[1:]:
        t = x.get("t", 0)
        assert t <= 25 - (END_REST if x["type"] in ("flip", "slap") else 0), x
    assert max(x["frame"] for x in flips) < n
    # A game whose next flip would land just after the cut (it used to be listed at 20.6 s).
    cut = GameFilm(PRESETS["challenge"], ["Ada", "Ben", "Cho", "Dan"][:3], seed=1, seconds=20)
    assert max(x["t"] for x in cut.timeline.truth if x["type"] == "flip") <= 20 - END_REST
    # ...and one whose last slap landed at 19.95 s, a frame before the cut (no referee
    # could have judged it).
    cut = GameFilm(PRESETS["challenge"], ["Ada", "Ben", "Cho"], seed=1905, seconds=20)
    assert max(x["t"] for x in cut.timeline.truth if x["type"] == "slap") <= 20 - END_REST


def test_a_photo_deck_films_its_own_faces(tmp_path):
    """Films can show real card photos: a PhotoDeck cuts each card's face out of its
    photo (here, pictures that are the card), and the film draws that face."""
    from companion.render.photodeck import PhotoDeck
    from companion.render.video import GameFilm
    drawn = Deck(DeckStyle.random(5))
    photos = {}
    for cls in range(52):
        path = tmp_path / f"{CLASS_NAMES[cls]}.png"
        cv2.imwrite(str(path), cv2.resize(drawn.face(cls).image, (224, 224)))   # stretched
        photos[cls] = [(tmp_path / "missing.png", "frame"), (path, "frame")]
    deck = PhotoDeck(photos, seed=1, width=100)
    face = deck.face(CLASS_NAMES.index("Qh")).image
    assert face.shape == (140, 100, 3)                  # back to a card's proportions
    want = cv2.resize(drawn.face(CLASS_NAMES.index("Qh")).image, (100, 140))
    assert min(np.abs(face.astype(int) - w).mean() for w in (want, want[::-1, ::-1])) < 8
    film = GameFilm(PRESETS["base"], ["Ada", "Ben"], seed=2, size=(320, 180), seconds=3,
                    deck=deck)
    cards = film.timeline.cards
    assert cards and all(c.face is deck.face(CLASS_NAMES.index(c.name)) for c in cards)
    with pytest.raises(ValueError, match="As: no usable photo"):
        PhotoDeck({}, seed=1)



def test_a_film_of_several_hands_deals_again_between_them():
    from companion.render.video import GameFilm
    film = GameFilm(PRESETS["base"], ["Ada", "Ben"], seed=5, size=(320, 180), hands=2)
    truth = film.timeline.truth
    starts = [i for i, x in enumerate(truth) if x["type"] == "start"]
    assert len(starts) == 2 and truth[starts[1]]["dealer"] == 0 and truth[starts[1]]["hand"] == 2
    over = [a for a in film.timeline.log if a["type"] == "hand_over"]
    assert len(over) == 2
    second = truth[starts[1]]
    before = [x for x in truth[:starts[1]] if "frame" in x]
    # The last pile is swept away before the pause, and the first card of the next hand
    # lands after it.
    assert max(x.get("gone_frame", x["frame"]) for x in before) < second["frame"]
    first_flip = next(x for x in truth[starts[1]:] if x["type"] == "flip")
    assert first_flip["frame"] > second["frame"]
    frames = [x["frame"] for x in truth if x["type"] == "flip"]
    assert frames == sorted(frames)


def test_training_scenes_can_show_real_faces_from_a_harvested_pool(tmp_path):
    """The finder's training scenes can draw each card from a pool of harvested real
    faces (here: flat green faces standing in for them): the scene shows a pool face
    where its label puts the top card, and a renderer without a pool renders exactly the
    scenes it always did."""
    from companion.render.photodeck import FacePoolDeck
    pool = {c: np.broadcast_to(np.uint8([20, 200, 20]), (2, 180, 128, 3)).copy()
            for c in range(52)}
    maker = lambda rng, deck: FacePoolDeck(pool, np.zeros((0, 180, 128, 3), np.uint8), deck, rng)
    real = SceneRenderer(256, seed=5, real_faces=maker, real_share=1.0)
    plain = SceneRenderer(256, seed=5)

    def middle(scene):
        top = next((c for c in scene.cards if c.cls is not None and c.visible > 0.95), None)
        if top is None:
            return None
        inner = (top.quad - top.quad.mean(0)) * 0.3 + top.quad.mean(0)
        mask = np.zeros(scene.image.shape[:2], np.uint8)
        cv2.fillConvexPoly(mask, np.round(inner).astype(np.int32), 1)
        b, g, r = np.median(scene.image[mask > 0], 0)
        return bool(g > 1.4 * max(b, r, 1))       # green, through light and lens effects

    seen = [middle(real.render(i)) for i in range(12)]
    assert sum(v is True for v in seen) >= 4 and not any(v is False for v in seen)
    assert not any(middle(plain.render(i)) for i in range(12))
    half = SceneRenderer(256, seed=5, real_faces=maker, real_share=0.0)
    assert all(np.array_equal(half.render(i).image, plain.render(i).image) for i in range(3))


def test_a_player_slaps_again_only_once_their_hand_is_off_the_pile():
    """The bots may slap twice in 0.2 s (seed 1946: three wrong slaps by one seat); the
    film drew the second hand onto the first, from the same seat, which no player can do
    and no camera or pad could tell apart. Each seat's hands follow one another."""
    from companion.render.video import HAND_IN, HAND_OUT, HAND_STAY, GameFilm
    film = GameFilm(PRESETS["base"], ["Ada", "Ben", "Cho", "Dan"], seed=1946, seconds=20)
    by_seat: dict[int, list[float]] = {}
    for slap in film.timeline.slaps:
        by_seat.setdefault(slap.seat, []).append(slap.t_land)
    assert max(len(v) for v in by_seat.values()) >= 3      # one seat slaps three times
    for times in by_seat.values():
        for t0, t1 in zip(times, times[1:]):
            # in from the edge only once the last hand has gone back out
            assert t1 - HAND_IN >= t0 + HAND_STAY + HAND_OUT - 1e-9, times
