"""Enrolling a deck from photos named by card, and reading with it."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.deck.enrol import parse_photo_name
from companion.deck.enrolled import DeckError, EnrolledDeck, deck_path
from companion.detector.model import load_detector
from companion.engine.cards import CLASS_NAMES
from companion.render.faces import Deck, DeckStyle
from companion.render.scene import card_photo, card_scene
from companion.training.evaluate import top1

STYLE = 987_600_001          # over 10**8: a style no training set draws
CARDS = ["7h", "Qs", "10d", "Ac", "3c", "Kh"]


@pytest.fixture(scope="module")
def style():
    return Deck(DeckStyle.random(STYLE))


@pytest.fixture(scope="module")
def enrolled(tmp_path_factory, style):
    """A photo folder with six good photos, a joker, and one of each problem; enrolled
    through the command line."""
    rng = np.random.default_rng(1)
    photos = tmp_path_factory.mktemp("photos")
    for name in CARDS:
        cv2.imwrite(str(photos / f"{name}.jpg"), card_photo(style, CLASS_NAMES.index(name), rng))
    cv2.imwrite(str(photos / "Kh_2.png"), card_photo(style, CLASS_NAMES.index("Kh"), rng))
    cv2.imwrite(str(photos / "RJ.png"), card_photo(style, 52, rng))
    cv2.imwrite(str(photos / "7h.png"), card_photo(style, CLASS_NAMES.index("7h"), rng))  # dup
    cv2.imwrite(str(photos / "2s.png"), np.full((640, 480, 3), (90, 110, 80), np.uint8))  # empty
    cv2.imwrite(str(photos / "5d.png"), card_photo(style, CLASS_NAMES.index("9s"), rng))  # wrong
    (photos / "6h.jpg").write_bytes(b"\xff\xd8 not really a jpeg")
    cv2.imwrite(str(photos / "holiday.jpg"), card_photo(style, 0, rng))
    (photos / "notes.txt").write_text("not a photo")
    out = tmp_path_factory.mktemp("decks") / "mine.deck"
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["enrol", "--out", str(out), "--photos", str(photos)])
    return out, code, buf.getvalue()


def test_photo_names():
    assert parse_photo_name("7h.jpg") == ("7h", 1)
    assert parse_photo_name("10S.png") == ("10s", 1)
    assert parse_photo_name("Qd_2.jpg") == ("Qd", 2)
    assert parse_photo_name("rj.png") == ("RJ", 1)
    for bad in ("11h.jpg", "7x.jpg", "holiday.jpg", "7h_.jpg", "1h.jpg"):
        with pytest.raises(ValueError, match=bad.replace(".", r"\.")):
            parse_photo_name(bad)


def test_the_deck_fit_minimises_the_readers_own_training_loss():
    """fit_heads is written out in numpy; it must be the same fit as torch's Adam on the
    reader's training loss (companion.training.corner_reader.head_losses)."""
    torch = pytest.importorskip("torch")
    from companion.deck.enrol import fit_heads
    from companion.training.corner_reader import head_losses
    rng = np.random.default_rng(4)
    x = np.maximum(rng.normal(0, 1, (400, 32)), 0).astype(np.float32)
    y = rng.integers(0, 53, 400)
    y[rng.random(400) < 0.25] = 52                             # "no index" crops too
    W0 = rng.normal(0, 0.1, (20, 32)).astype(np.float32)
    b0 = np.zeros(20, np.float32)
    W, b = torch.tensor(W0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    opt = torch.optim.Adam([W, b], lr=0.01)
    for _ in range(60):
        loss = head_losses(torch.from_numpy(x) @ W.T + b, torch.from_numpy(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
    Wn, bn = fit_heads(x, y, W0, b0, steps=60, lr=0.01)
    assert np.abs(Wn - W.detach().numpy()).max() < 1e-4
    assert np.abs(bn - b.detach().numpy()).max() < 1e-4
    start = float(head_losses(torch.from_numpy(x @ W0.T + b0), torch.from_numpy(y)))
    end = float(head_losses(torch.from_numpy(x @ Wn.T + bn), torch.from_numpy(y)))
    assert end < start - 0.5


def test_enrol_reports_every_photo_and_what_is_missing(enrolled):
    out, code, text = enrolled
    assert code == 1                               # not all 52 cards: exit 1...
    assert out.is_file()                           # ...but the deck is written
    assert "enrolled 6 of 52 cards from 8 photos" in text
    assert "duplicate name 7h: 7h.jpg, 7h.png" in text
    assert "no card found: 2s.png" in text
    assert "check the name: 5d.png is named 5d but reads as 9s" in text
    assert "unreadable: 6h.jpg" in text
    assert "bad name: holiday.jpg" in text
    missing = next(line for line in text.splitlines() if line.startswith("missing"))
    assert "missing 46:" in missing and "5d" in missing and "7h" not in missing.split()
    deck = EnrolledDeck.load(out)
    assert sorted(deck.cards) == sorted(CARDS)
    assert "5d" not in deck.cards                  # the likely mislabel is not enrolled


def test_a_deck_reads_its_cards_in_other_scenes(enrolled, style):
    out, _, _ = enrolled
    det = load_detector(photo=True, deck=out)
    rng = np.random.default_rng(7)
    for name in CARDS:
        scene = card_scene(style, CLASS_NAMES.index(name), rng, min_visible=0.95)
        got, _ = top1(det(scene.image))
        assert got == name, (name, got)


def test_the_court_letter_cue_is_left_to_readings_without_a_deck(enrolled):
    """A deck's reading is fitted on its own court indices: the court-letter cue (fitted on
    other decks' pictures) weighs only readings made without one."""
    from companion.detector.model import COURT_FUSE, COURT_LETTERS
    out, _, _ = enrolled
    for photo in (True, False):
        assert load_detector(photo=photo, deck=out).court == 0.0
        plain = load_detector(photo=photo)
        assert plain.court == COURT_FUSE > 0
        assert plain.middle.reads_letters == COURT_LETTERS.is_file()


def test_video_reads_a_deck_through_the_int8_reader_as_the_float_one_does(enrolled, style):
    """A deck is fitted on the float reader's features; its int8 copy carries that
    reader's id, so video reads the deck through it, and names what the float one names."""
    from companion.deck.enrolled import reader_id
    from companion.detector.model import CORNER_READER, LIVE_READER
    out, _, _ = enrolled
    assert reader_id(LIVE_READER) == reader_id(CORNER_READER)
    live = load_detector(deck=out)
    ref = load_detector(deck=out, reader=CORNER_READER)
    assert live.reader.path == LIVE_READER and live.reader.deck is not None
    rng = np.random.default_rng(11)
    scenes = [(name, card_scene(style, CLASS_NAMES.index(name), rng, min_visible=0.95))
              for name in CARDS for _ in range(2)]
    got = [top1(live(s.image))[0] for _, s in scenes]
    want = [top1(ref(s.image))[0] for _, s in scenes]
    assert sum(g == w for g, w in zip(got, want)) >= len(scenes) - 1, (got, want)
    assert sum(g == name for g, (name, _) in zip(got, scenes)) >= len(scenes) - 2, got


def test_with_a_deck_an_empty_table_and_a_card_back_read_no_card(enrolled, style):
    out, _, _ = enrolled
    det = load_detector(photo=True, deck=out)
    table = np.full((480, 640, 3), (60, 90, 70), np.uint8)
    assert len(det(table)) == 0
    from companion.render.scene import card_transform, warp_onto
    back = style.back()
    warp_onto(table, back, card_transform(back, (320, 240), 380, 15.0))
    assert len(det(table)) == 0


def test_a_named_deck_lives_in_the_data_directory(monkeypatch, tmp_path, enrolled):
    out, _, _ = enrolled
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    target = deck_path("club", for_writing=True)
    assert target == tmp_path / "ratscrew-companion" / "decks" / "club.deck"
    EnrolledDeck.load(out).save(target)
    assert EnrolledDeck.load("club").cards == EnrolledDeck.load(out).cards


def test_detect_json_with_a_deck_keeps_its_contract(enrolled, style, tmp_path, capsys):
    out, _, _ = enrolled
    img = tmp_path / "card.png"
    cv2.imwrite(str(img), card_photo(style, CLASS_NAMES.index("Qs"), np.random.default_rng(3)))
    assert main(["detect", "--json", "--deck", str(out), str(img)]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    assert row["image"] == str(img)
    assert row["cards"] and {c["card"] for c in row["cards"]} == {"Qs"}
    assert set(row["cards"][0]) == {"card", "confidence", "box"}


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 truncated zip", b"\x93NUMPY not a deck"])
def test_a_corrupt_deck_file_is_one_clear_error(tmp_path, capsys, content):
    bad = tmp_path / "bad.deck"
    bad.write_bytes(content)
    with pytest.raises(DeckError, match="bad.deck: not a deck file"):
        EnrolledDeck.load(bad)
    img = tmp_path / "x.png"
    cv2.imwrite(str(img), np.zeros((64, 64, 3), np.uint8))
    assert main(["detect", "--deck", str(bad), str(img)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.deck: not a deck file" in err[0]


def test_a_missing_named_deck_says_where_decks_live(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    img = tmp_path / "x.png"
    cv2.imwrite(str(img), np.zeros((64, 64, 3), np.uint8))
    assert main(["detect", "--deck", "nosuch", str(img)]) == 2
    err = capsys.readouterr().err
    assert "nosuch.deck: no such deck file" in err and "companion enrol" in err


def test_a_deck_of_another_reader_is_refused(enrolled, tmp_path):
    out, _, _ = enrolled
    deck = EnrolledDeck.load(out)
    deck.reader = "0123456789abcdef"
    other = deck.save(tmp_path / "other.deck")
    with pytest.raises(DeckError, match="another corner reader"):
        load_detector(photo=True, deck=other)


def test_enrol_by_dealing_before_the_camera(tmp_path):
    """A rendered film of a game: every card the reader confirms is enrolled under its
    true name; a card it names twice is asked for (here skipped)."""
    from companion.deck.stream import enrol_stream
    from companion.engine import load_rules
    from companion.render.video import GameFilm
    film = GameFilm(load_rules("base"), ["Ada", "Ben"], seed=3, seconds=8)
    info = film.write(tmp_path / "deal.mp4", progress=False)
    truth = [x["card"] for x in film.timeline.truth if x["type"] == "flip"]
    asked = []

    def ask(question, proposal):
        asked.append((question, proposal))
        return proposal or "-" if "not sure" in question else "-"

    deck, report = enrol_stream(str(info["video"]), load_detector(), load_detector(photo=True),
                                "film", variations=4, ask=ask)
    assert deck is not None and report.enrolled
    assert set(report.enrolled) <= set(truth)
    assert len(report.enrolled) >= 0.8 * len(set(truth))
    assert not report.complete and report.lines()[-1].startswith("missing")
    assert all("which card" in q for q, _ in asked)


class _AceMiddle:
    """A middle reader that sees one large pip (an ace, 0.99) and gives its suit `suits`
    (suit letter -> probability)."""

    def __init__(self, **suits):
        self.suits = suits

    def __call__(self, crops):
        from companion.detector.middle_reader import GROUPS, OUTPUTS
        from companion.engine.cards import SUITS
        p = np.full(OUTPUTS, 0.001, np.float32)
        p[0] = 0.99
        for suit, prob in self.suits.items():
            p[len(GROUPS) + SUITS.index(suit)] = prob
        return np.tile(p, (len(crops), 1))


def test_with_a_deck_the_middles_suit_vetoes_more_readily(enrolled, style):
    """A deck's small index suit against its large pips: a middle that gives the named suit
    0.15 leaves the card named without a deck, and makes it unclear with one."""
    from companion.detector.model import DECK_SUIT_VETO, SUIT_VETO
    assert SUIT_VETO < 0.15 < DECK_SUIT_VETO
    out, _, _ = enrolled
    scene = card_scene(style, CLASS_NAMES.index("Ac"), np.random.default_rng(2), min_visible=0.98)
    for deck, want in ((None, "Ac"), (out, None)):
        det = load_detector(photo=True, deck=deck)
        det.veto_sure = 2.0            # however sure the corners
        det.by_picture = False         # the veto alone (the deck's Ac picture would name it)
        assert top1(det(scene.image))[0] == "Ac"
        det.middle = _AceMiddle(c=0.15, s=0.85)   # only fairly sure of the suit
        assert top1(det(scene.image))[0] == want, deck


def test_with_a_deck_the_middles_veto_holds_however_sure_the_corners(enrolled, style):
    """Without a deck a corner reading at VETO_SURE stands against the middle; a deck's
    fitted heads read its look-alikes that surely too (an Ac read As over one large club),
    so with a deck the middle's veto holds however sure the corners."""
    from companion.detector.model import VETO_SURE
    out, _, _ = enrolled
    scene = card_scene(style, CLASS_NAMES.index("Ac"), np.random.default_rng(2), min_visible=0.98)
    det = load_detector(photo=True, deck=out)
    det.by_picture = False             # the veto alone (the deck's Ac picture would name it,
    det.fuse = det.fuse_rank = 0.0     # and the middle's suit would outweigh the corners')
    read = det(scene.image)
    assert top1(read)[0] == "Ac" and float(read.confidence.max()) >= VETO_SURE
    det.middle = _AceMiddle(s=0.99)          # one large spade, surely
    assert top1(det(scene.image))[0] is None
    det.veto_sure = VETO_SURE          # as without a deck: the sure corners would stand
    assert top1(det(scene.image))[0] == "Ac"


def test_a_deck_keeps_its_courts_pictures_and_doubts_a_court_whose_picture_is_another(
        enrolled, style):
    """The enrolled cards' pictures are kept in the file; a card read as Kh whose middle
    is Kh's is named, and unclear once the deck's Kh and Qs pictures are swapped (a Kh
    read as Qs looks just like that)."""
    out, _, _ = enrolled
    deck = EnrolledDeck.load(out)
    kh, qs = CLASS_NAMES.index("Kh"), CLASS_NAMES.index("Qs")
    assert set(deck.pictures) >= {kh, qs}
    scene = card_scene(style, kh, np.random.default_rng(5), min_visible=0.98)
    assert top1(load_detector(photo=True, deck=deck)(scene.image))[0] == "Kh"
    deck.pictures[kh], deck.pictures[qs] = deck.pictures[qs], deck.pictures[kh]
    for photo in (True, False):
        assert top1(load_detector(photo=photo, deck=deck)(scene.image))[0] is None, photo
    # Not a court, or a court not enrolled: nothing to doubt.
    assert not deck.doubts_court([np.zeros((68, 48, 3), np.uint8)], CLASS_NAMES.index("7h"))
    assert not deck.doubts_court([np.zeros((68, 48, 3), np.uint8)], CLASS_NAMES.index("Jd"))


def test_a_deck_names_by_its_picture_a_card_its_corners_only_lean_to(
        enrolled, style):
    """Where no outline names a card (here: every end asked for 0.99), the reader with a
    deck names the card whose picture fits the card's middle clearly best, if its corners
    give it some weight; not with that card's picture swapped for another's, nor where
    the corners give it too little."""
    from companion.deck import enrolled as deck_module
    from companion.detector.middle_reader import middle_crop
    out, _, _ = enrolled
    deck = EnrolledDeck.load(out)
    qs, kh = CLASS_NAMES.index("Qs"), CLASS_NAMES.index("Kh")
    scene = card_scene(style, qs, np.random.default_rng(8), min_visible=0.98)
    video = load_detector(photo=False, deck=deck)
    assert top1(video(scene.image))[0] == "Qs"
    assert top1(video(scene.image, conf=0.99))[0] == "Qs"          # by its picture
    video.by_picture = False
    assert top1(video(scene.image, conf=0.99))[0] is None
    video.by_picture = True
    photo = load_detector(photo=True, deck=deck)
    assert top1(photo(scene.image, conf=0.99))[0] == "Qs"
    photo.by_picture = False
    assert top1(photo(scene.image, conf=0.99))[0] is None
    deck.pictures[kh], deck.pictures[qs] = deck.pictures[qs], deck.pictures[kh]
    assert top1(video(scene.image, conf=0.99))[0] is None          # Kh's picture fits best,
    deck.pictures[kh], deck.pictures[qs] = deck.pictures[qs], deck.pictures[kh]  # corners: Qs
    # The rule itself: support from the corners, and a margin over every other picture.
    middle = middle_crop(scene.image, scene.cards[0].quad)           # the top card's true outline
    lean = np.zeros(52, np.float32)
    lean[qs] = deck_module.PICTURE_SUPPORT
    assert deck.names_by_picture([lean], lambda k: middle)[0] == qs
    assert deck.names_by_picture([lean * 0.5], lambda k: middle) is None
    deck.pictures[kh] = deck.pictures[qs]                            # two alike: no margin
    assert deck.names_by_picture([lean], lambda k: middle) is None


def test_a_deck_file_without_court_pictures_still_reads(enrolled, style, tmp_path):
    """Decks enrolled before the courts' pictures were kept load and read as before, and
    so do those with the small thumbnails of sessions 43-45 (saying so once); a file
    whose pictures are malformed is one clear error."""
    out, _, _ = enrolled
    deck = EnrolledDeck.load(out)
    with np.load(out) as z:
        arrays = {k: z[k] for k in z.files}
    old = tmp_path / "old.deck"
    with old.open("wb") as fh:
        np.savez_compressed(fh, **{k: v for k, v in arrays.items() if "picture" not in k})
    loaded = EnrolledDeck.load(old)
    assert loaded.pictures == {} and loaded.cards == deck.cards and not loaded.load_note
    thumbs = tmp_path / "thumbs.deck"
    with thumbs.open("wb") as fh:
        np.savez_compressed(fh, **{k: v for k, v in arrays.items() if "picture" not in k},
                            middle_cards=arrays["picture_cards"],
                            middles=np.zeros((len(arrays["pictures"]), 28, 18, 3), np.float32))
    loaded = EnrolledDeck.load(thumbs)
    assert loaded.pictures == {} and "thumbs.deck: enrolled by an older version" in loaded.load_note
    scene = card_scene(style, CLASS_NAMES.index("Kh"), np.random.default_rng(5), min_visible=0.98)
    assert top1(load_detector(photo=True, deck=old)(scene.image))[0] == "Kh"
    bad = tmp_path / "bad.deck"
    with bad.open("wb") as fh:
        np.savez_compressed(fh, **{**arrays, "pictures": arrays["pictures"][:, :5]})
    with pytest.raises(DeckError, match="bad.deck: not a deck file"):
        EnrolledDeck.load(bad)


def test_a_deck_tells_the_card_on_top_by_its_picture(enrolled, style):
    """Outlines of one card naming two cards, the better read first (a pile's card below
    whose corner reads better than the top card's): with a deck, photos name the card
    whose own picture fits its outline's middle clearly better; video, a detector without
    a deck, a deck whose Kh picture is the 10d's, or one without a Qs picture, keep the
    better reading."""
    from companion.detector.card_reader import turn_quad
    out, _, _ = enrolled
    deck = EnrolledDeck.load(out)
    qs, kh = CLASS_NAMES.index("Qs"), CLASS_NAMES.index("Kh")
    scene = card_scene(style, kh, np.random.default_rng(5), min_visible=0.98)
    top = np.float32(scene.cards[0].quad)
    below = turn_quad(top, 20.0)             # a lower card's outline, turned under the top one
    group = [(below, 1.6, [([0, 0, 9, 9], 0.9, qs)]), (top, 0.9, [([0, 0, 9, 9], 0.5, kh)])]
    photo = load_detector(photo=True, deck=deck)
    assert photo.on_top is not None
    assert photo._on_top(scene.image, group, group[0])[2][0][2] == kh
    assert photo._one_each(group, scene.image)[0][2][0][2] == kh      # as photos read it
    assert load_detector(photo=False, deck=deck)._on_top(scene.image, group, group[0]) is group[0]
    assert load_detector(photo=True)._on_top(scene.image, group, group[0]) is group[0]
    pictures = dict(deck.pictures)
    deck.pictures[kh] = deck.pictures[CLASS_NAMES.index("10d")]   # Kh's picture fits no more
    assert photo._on_top(scene.image, group, group[0]) is group[0]
    deck.pictures = {c: m for c, m in pictures.items() if c != qs}  # Qs has no picture:
    assert photo._on_top(scene.image, group, group[0]) is group[0]  # nothing to compare


def test_a_deck_doubts_a_card_whose_picture_is_another_cards(enrolled, style):
    """Photos with a deck: a card named on an outline whose middle is plainly another
    enrolled card's picture (a card below, named through the top card's outline) is
    unclear; the card whose picture it is stays named, and so does a card on an outline
    no picture fits (a hand over the card: nothing to tell)."""
    out, _, _ = enrolled
    deck = EnrolledDeck.load(out)
    h7, kh = CLASS_NAMES.index("7h"), CLASS_NAMES.index("Kh")
    scene = card_scene(style, kh, np.random.default_rng(5), min_visible=0.98)
    top = np.float32(scene.cards[0].quad)
    photo = load_detector(photo=True, deck=deck)
    assert photo.doubt is not None
    as_7h = [(top, 1.5, [([0, 0, 9, 9], 0.9, h7)])]
    as_kh = [(top, 1.5, [([0, 0, 9, 9], 0.9, kh)])]
    assert photo._doubted(scene.image, as_7h, as_7h)[0][2] == []
    assert photo._doubted(scene.image, as_kh, as_kh)[0][2] == as_kh[0][2]
    blank = np.full_like(scene.image, 128)
    assert photo._doubted(blank, as_7h, as_7h)[0][2] == as_7h[0][2]
    assert load_detector(photo=False, deck=deck)._doubted(scene.image, as_7h, as_7h) is as_7h


def test_a_deck_finds_the_top_card_its_corners_read_but_do_not_name(enrolled, style,
                                                                   monkeypatch):
    """Photos with a deck: a card named on one outline (the card below, whose corner shows)
    gives way to the card another outline of that place reads without naming it (a hand
    over one index), where that card's picture fits its outline's middle and the named
    card's picture fits its own outline's not. Not where the other outline is a look at
    the named card's own outline (grown about the same centre), not without the corners'
    support, not on video and not without a deck."""
    from companion.detector import card_reader
    from companion.detector.card_reader import orientations, scale_quad
    out, _, _ = enrolled
    deck = EnrolledDeck.load(out)
    qs, kh = CLASS_NAMES.index("Qs"), CLASS_NAMES.index("Kh")
    scene = card_scene(style, kh, np.random.default_rng(5), min_visible=0.98)
    top = np.float32(scene.cards[0].quad)
    diagonal = float(np.linalg.norm(top[0] - top[2]))
    below = top + np.float32([0.15 * diagonal, 0.0])  # the card below, shifted from the top card
    vector = np.zeros(53, np.float32)
    vector[kh] = 0.5                                   # read, but neither end names it
    ends = [[1, 1, 5, 5], [6, 6, 9, 9]]

    def beneath(det, named_at=below, looked_at=top, support=vector):
        kept = [(named_at, 1.6, [([0, 0, 9, 9], 0.9, qs)])]
        det._looked = [(looked_at, orientations(looked_at)[0], support, ends)]
        got = det._beneath(scene.image, kept, kept)
        return None if got[0][0] is named_at else got[0]

    photo = load_detector(photo=True, deck=deck)
    quad, fit, found = beneath(photo)
    assert quad is top and [c for _, _, c in found] == [kh, kh] and 0.3 <= fit <= 1.0
    # The Kh's picture fits a grown look at the Qs's own outline too, but that is one card.
    grown = scale_quad(top, 1.15)
    assert beneath(photo, named_at=top, looked_at=grown) is None
    monkeypatch.setattr(card_reader, "DISTINCT_SHIFT", 0.0)
    assert beneath(photo, named_at=top, looked_at=grown)[2][0][2] == kh
    monkeypatch.undo()
    assert beneath(photo, support=vector * 0.5) is None              # its corners: too unsure
    assert beneath(load_detector(photo=False, deck=deck)) is None
    assert beneath(load_detector(photo=True)) is None
