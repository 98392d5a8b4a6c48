"""The flip tracker on scripted detection sequences."""

from __future__ import annotations

import numpy as np

from companion.detector.detections import Detections
from companion.engine.cards import CLASS_NAMES
from companion.live.tracker import FlipTracker

FPS = 30.0


def dets(*items):
    """items: (card, confidence, (cx, cy)) -> Detections with 20x30 boxes."""
    if not items:
        return Detections.empty()
    xyxy = np.array([[cx - 10, cy - 15, cx + 10, cy + 15] for _, _, (cx, cy) in items], np.float32)
    conf = np.array([c for _, c, _ in items], np.float32)
    cls = np.array([CLASS_NAMES.index(n) for n, _, _ in items])
    return Detections(xyxy, conf, cls)


def run(tracker, frames, start=0):
    events = []
    for i, d in enumerate(frames, start=start):
        events += tracker.update(i, i / FPS, d)
    return events


def flips(events):
    return [(e.card, e.frame) for e in events if e.type == "flip"]


def test_a_card_at_rest_is_confirmed_on_its_second_frame():
    tr = FlipTracker(frame_diag=1000)
    ev = run(tr, [dets(), dets(("Qh", 0.9, (300, 300))), dets(("Qh", 0.92, (300, 300)))])
    assert flips(ev) == [("Qh", 2)]
    assert ev[-1].rest_frame == 1


def test_a_card_in_motion_never_flips_until_it_rests():
    tr = FlipTracker(frame_diag=1000)
    moving = [dets(("7s", 0.9, (100 + 60 * i, 300))) for i in range(6)]
    resting = [dets(("7s", 0.9, (460, 300)))] * 2
    ev = run(tr, moving + resting)
    assert flips(ev) == [("7s", 7)]


def test_peeking_corners_of_older_cards_do_not_flip_again():
    tr = FlipTracker(frame_diag=1000)
    seq = [dets(("2c", 0.9, (300, 300)))] * 3
    seq += [dets(("2c", 0.8, (290, 290)), ("9d", 0.9, (310, 310)))] * 3
    seq += [dets(("2c", 0.6, (280, 280)), ("9d", 0.7, (300, 300)), ("Ks", 0.9, (320, 320)))] * 3
    ev = run(tr, seq)
    assert [c for c, _ in flips(ev)] == ["2c", "9d", "Ks"]


def test_a_one_frame_misread_never_flips():
    tr = FlipTracker(frame_diag=1000)
    seq = [dets(("6h", 0.9, (300, 300)))] * 3
    seq += [dets(("9h", 0.8, (300, 300)))]            # one bad frame
    seq += [dets(("6h", 0.9, (300, 300)))] * 5
    assert [c for c, _ in flips(run(tr, seq))] == ["6h"]


def test_an_alias_read_beside_the_true_card_is_not_a_second_flip():
    tr = FlipTracker(frame_diag=1000)
    both = dets(("6h", 0.9, (300, 300)), ("9h", 0.6, (420, 480)))   # other corner misread
    seq = [both] * 8
    ev = run(tr, seq)
    assert [c for c, _ in flips(ev)] == ["6h"]
    # Later the real 9h lands on top and covers the 6h: now it is a flip.
    ev = run(tr, [dets(("9h", 0.9, (310, 310)))] * 3, start=8)
    assert [c for c, _ in flips(ev)] == ["9h"]


def test_a_hand_over_the_pile_clears_nothing_for_good_and_makes_no_flip():
    tr = FlipTracker(frame_diag=1000)
    seq = [dets(("Ad", 0.9, (300, 300)))] * 3
    seq += [dets()] * 30                                # a hand covers the pile for 1 s
    seq += [dets(("Ad", 0.9, (300, 300)))] * 3          # and lifts: the same pile
    ev = run(tr, seq)
    assert [e.type for e in ev] == ["flip", "pile_cleared", "pile_restored"]
    assert tr.order == ["Ad"]
    # A partial hand that shows only part of a card for a frame: no flip either.
    ev = run(tr, [dets(("Ad", 0.9, (300, 300)), ("4c", 0.5, (250, 250)))] +
             [dets(("Ad", 0.9, (300, 300)))] * 3, start=36)
    assert flips(ev) == []


def test_pile_picked_up_then_a_new_pile():
    tr = FlipTracker(frame_diag=1000)
    seq = [dets(("Ad", 0.9, (300, 300)))] * 3 + [dets()] * 25 + \
          [dets(("3s", 0.9, (305, 300)))] * 3
    ev = run(tr, seq)
    assert [e.type for e in ev] == ["flip", "pile_cleared", "flip"]
    assert tr.order == ["3s"]


def test_a_card_the_table_added_is_not_a_flip_when_read_later():
    tr = FlipTracker(frame_diag=1000)
    ev = run(tr, [dets(("Ad", 0.9, (300, 300)))] * 3)
    tr.played("7c", 3 / FPS)                # the reader could not name it; the table did
    assert tr.order == ["Ad", "7c"] and tr.top == "7c"
    # Read at last (the light changed): it is the top card, not a new flip.
    ev = run(tr, [dets(("7c", 0.9, (310, 305)))] * 4, start=4)
    assert flips(ev) == [] and tr.order == ["Ad", "7c"]
    ev = run(tr, [dets(("2s", 0.9, (320, 300)))] * 3, start=8)
    assert flips(ev) == [("2s", 9)]


def test_low_confidence_is_unclear_not_guessed():
    tr = FlipTracker(frame_diag=1000)
    ev = run(tr, [dets(("8d", 0.3, (300, 300)))] * 12)
    assert flips(ev) == []
    assert [e.type for e in ev] == ["unclear"]


def test_steady_moderate_confidence_is_enough():
    tr = FlipTracker(frame_diag=1000)
    ev = run(tr, [dets(("8d", 0.45, (300, 300)))] * 5)
    assert flips(ev) == [("8d", 3)]


def test_unsure_looks_do_not_settle_a_card_read_another_way_as_surely_just_before():
    """A Qd lands: read Qd as it comes in (0.42, 0.68, moving), then Kd at rest on four
    looks at 0.45-0.5. The reader is torn between two cards: neither is called on unsure
    looks, nor on one look a shade surer than Qd's best (game 208 looked at on every frame:
    Kd 0.43-0.69 on nine looks after Qd 0.56 and 0.68), since Qd was read surely. Read Kd
    surely twice in a row, or with no rival reading, it is called."""
    landing = [dets(("Qd", 0.42, (200, 300))), dets(("Qd", 0.68, (260, 300)))]
    rest = lambda c: [dets(("Kd", c, (300, 300)))] * 6
    assert flips(run(FlipTracker(frame_diag=1000), landing + rest(0.47))) == []
    assert flips(run(FlipTracker(frame_diag=1000), [dets()] * 2 + rest(0.47))) == [("Kd", 5)]
    assert flips(run(FlipTracker(frame_diag=1000), landing + rest(0.7))) == [("Kd", 3)]
    shade = [dets(("Kd", c, (300, 300))) for c in (0.47, 0.62, 0.5, 0.69, 0.5, 0.45)]
    assert flips(run(FlipTracker(frame_diag=1000), landing + shade)) == []
    once = [dets(), dets(("Qd", 0.68, (260, 300)))]       # one look is no rival
    assert flips(run(FlipTracker(frame_diag=1000), once + rest(0.47))) == [("Kd", 5)]


def test_looks_at_a_still_picture_count_only_where_they_read_the_card_fairly():
    """A card read unsurely as it lands (one look the gate asked for), then looked at on
    frames where the picture did not change (`still`): those looks repeat one reading, so
    they count towards the slow path's four only at 0.45 or more (valid-face game 216: a
    10c read Qc at 0.40 on one end, look after look)."""
    def play(c):
        tr = FlipTracker(frame_diag=1000)
        ev = tr.update(0, 0.0, dets(("6c", c, (300, 300))))
        for i in range(1, 8):
            ev += tr.update(i, i / FPS, dets(("6c", c, (300, 300))), still=True)
        return flips(ev)
    assert play(0.47) == [("6c", 3)]
    assert play(0.40) == []
    # The same looks on a changing picture count.
    assert flips(run(FlipTracker(frame_diag=1000), [dets(("6c", 0.40, (300, 300)))] * 4)) \
        == [("6c", 3)]


def test_a_card_whose_best_corner_changes_each_frame_is_still_at_rest():
    """Both ends of a resting card are read; which one reads best flickers. That is not
    movement: the card is confirmed as soon as it has been seen twice."""
    tr = FlipTracker(frame_diag=1000)
    a, b = (300, 300), (420, 470)        # its two corners, far apart
    ev = run(tr, [dets(("4s", 0.8, a), ("4s", 0.7, b)),
                  dets(("4s", 0.6, a), ("4s", 0.9, b))])
    assert flips(ev) == [("4s", 1)]
    # One corner in one frame, the other in the next: that is a jump, not rest.
    tr = FlipTracker(frame_diag=1000)
    ev = run(tr, [dets(("5h", 0.9, a)), dets(("5h", 0.9, b))])
    assert flips(ev) == []


def test_the_top_card_read_as_another_card_where_it_lies_is_not_a_flip():
    """As it settles, a 6d is read 5d for good (same image, same reading): both of its
    corners are exactly where the 6d's were, so it is the 6d misread, not a new card.
    The real 5d lands elsewhere later and is a flip."""
    tr = FlipTracker(frame_diag=1000)
    six = dets(("6d", 0.98, (540, 230)), ("6d", 0.97, (636, 445)))
    misread = dets(("5d", 0.6, (543, 226)), ("5d", 0.5, (637, 450)))
    ev = run(tr, [six] * 3 + [misread] * 40)
    assert [c for c, _ in flips(ev)] == ["6d"]
    real = dets(("5d", 0.95, (500, 300)), ("5d", 0.9, (610, 520)))
    ev = run(tr, [real] * 3, start=43)
    assert [c for c, _ in flips(ev)] == ["5d"]


def test_a_card_pushed_squarely_onto_the_top_card_under_a_hand_is_a_flip():
    """A hand hid the 4s's flight and it landed exactly on the 3d: first seen where the
    3d's corners were, but of another rank and suit, so no misread of the 3d."""
    tr = FlipTracker(frame_diag=1000)
    three = dets(("3d", 0.98, (540, 230)), ("3d", 0.97, (636, 445)))
    four = dets(("4s", 0.95, (542, 228)), ("4s", 0.93, (637, 447)))
    ev = run(tr, [three] * 3 + [Detections.empty()] * 4 + [four] * 5)
    assert [c for c, _ in flips(ev)] == ["3d", "4s"]


def test_a_card_landing_squarely_on_the_top_card_between_two_looks_is_a_flip():
    """At 50 ms a look, a 4h's flight fell between looks: the look before saw none of
    the pile (the card and hand passed over it), then the 4h lay exactly on the 10h of
    its own suit (seed 1811). Something passed over the pile, so it is a card put there,
    not the 10h misread; with the 10h seen on the look before, it would be the 10h."""
    ten = dets(("10h", 0.96, (720, 409)), ("10h", 0.91, (536, 251)))
    four = dets(("4h", 0.95, (721, 417)), ("4h", 0.94, (535, 250)))
    tr = FlipTracker(frame_diag=1000)
    ev = run(tr, [ten] * 3 + [Detections.empty()] + [four] * 3)
    assert flips(ev) == [("10h", 1), ("4h", 5)]
    tr = FlipTracker(frame_diag=1000)
    ev = run(tr, [ten] * 3 + [four] * 3)
    assert flips(ev) == [("10h", 1)]


def test_a_new_card_with_one_corner_near_an_old_one_still_flips():
    tr = FlipTracker(frame_diag=1000)
    two = dets(("4s", 0.95, (400, 300)), ("4s", 0.95, (480, 460)))
    ev = run(tr, [two] * 3 + [dets(("Jc", 0.95, (405, 302)))] * 3)
    assert [c for c, _ in flips(ev)] == ["4s", "Jc"]


def test_a_new_card_flying_in_squarely_onto_the_last_still_flips():
    tr = FlipTracker(frame_diag=1000)
    three = dets(("3d", 0.95, (620, 251)), ("3d", 0.6, (734, 439)))
    flying = [dets(("4s", 0.96, (670 + 10 * i, 68 + 40 * i)), ("4s", 0.96, (673 + 10 * i, 263 + 40 * i)))
              for i in range(4)]
    landed = dets(("4s", 0.95, (622, 242)), ("4s", 0.7, (736, 439)))
    ev = run(tr, [three] * 3 + flying + [landed] * 3)
    assert [c for c, _ in flips(ev)] == ["3d", "4s"]


def test_a_won_pile_starts_a_new_one_at_once():
    """The referee gave the pile away and the next card lands 0.2 s after the old pile
    left view: it is a flip, and so is a card of the old pile played again later."""
    tr = FlipTracker(frame_diag=1000)
    seq = [dets(("Qh", 0.9, (300, 300)))] * 3
    seq += [dets(("Qh", 0.9, (300, 300)), ("9d", 0.9, (320, 310)))] * 3
    ev = run(tr, seq)
    assert flips(ev) == [("Qh", 1), ("9d", 4)]
    tr.pile_won(6 / FPS)
    seq = [dets(("Qh", 0.9, (300 + 40 * k, 300)), ("9d", 0.9, (320 + 40 * k, 310)))
           for k in range(4)]                             # the winner sweeps it away
    seq += [dets()] * 6                                   # 0.2 s of bare table
    seq += [dets(("4d", 0.9, (310, 300)))] * 30           # the next card
    seq += [dets(("4d", 0.8, (300, 290)), ("Qh", 0.9, (320, 310)))] * 3   # Qh comes back
    ev = run(tr, seq, start=6)
    assert flips(ev) == [("4d", 17), ("Qh", 47)]
    assert tr.order == ["4d", "Qh"]


def test_a_card_of_a_won_pile_played_again_onto_its_old_spot_is_a_flip():
    """Two players: the pile is won and picked up, new cards land on the same spot, and
    a card of the won pile comes back there 3 s after it was last seen (within the time
    a covered pile may reappear): new cards had landed there since, so it was played
    again (seed 602's Js)."""
    tr = FlipTracker(frame_diag=1000)
    run(tr, [dets(("Js", 0.9, (300, 300)))] * 3)
    tr.pile_won(3 / FPS)
    seq = [dets()] * 20                                   # picked up: bare table
    for card in ("7c", "Ad", "6h"):                       # new cards on the same spot
        seq += [dets((card, 0.9, (300, 300)))] * 25
    seq += [dets(("Js", 0.9, (300, 300)))] * 5            # the Js, played again
    ev = run(tr, seq, start=3)
    assert [c for c, _ in flips(ev)] == ["7c", "Ad", "6h", "Js"]
    assert tr.order == ["7c", "Ad", "6h", "Js"]


def test_the_won_top_card_half_hidden_by_the_slapping_hands_is_not_a_new_card():
    """Two hands slap an 8d and win the pile; over it, one corner of the 8d shows with
    its index half covered and reads 3d (seed 820): that is the 8d, not a flip. Once the
    pile is picked up a real 3d is played and called."""
    tr = FlipTracker(frame_diag=1000)
    eight = dets(("8d", 0.95, (580, 390)), ("8d", 0.9, (709, 259)))
    ev = run(tr, [eight] * 5 + [dets()] * 4)          # the hands come down on it
    assert flips(ev) == [("8d", 1)]
    half = dets(("3d", 0.64, (706, 263)))             # its box shrunk by the hand over it
    ev = run(tr, [half], start=9)
    tr.pile_won(10 / FPS)
    ev += run(tr, [half] * 10, start=10)
    assert flips(ev) == []
    ev = run(tr, [dets()] * 25 + [dets(("3d", 0.9, (430, 320)))] * 3, start=20)
    assert flips(ev) == [("3d", 46)]


def test_a_card_flying_in_onto_the_won_top_cards_corner_is_a_flip():
    tr = FlipTracker(frame_diag=1000)
    run(tr, [dets(("8d", 0.95, (580, 390)), ("8d", 0.9, (709, 259)))] * 5)
    tr.pile_won(5 / FPS)
    flying = [dets(("3d", 0.9, (600 + 30 * i, 60 + 50 * i))) for i in range(4)]
    ev = run(tr, flying + [dets(("3d", 0.9, (705, 262)))] * 3, start=5)
    assert flips(ev) == [("3d", 10)]


def test_the_top_card_under_a_wrong_slaps_hands_is_not_a_new_card():
    """A wrong slap's hand lies over a 5c; one corner shows, half covered, and reads 3c
    (seed 902): the 5c, while the hands may be there. A 3c played later is called."""
    tr = FlipTracker(frame_diag=1000)
    five = dets(("5c", 0.9, (730, 378)), ("5c", 0.8, (497, 361)))
    ev = run(tr, [five] * 5 + [dets()] * 3)
    tr.hands_on(8 / FPS + tr.cfg.slap_hold)
    ev += run(tr, [dets(("3c", 0.6, (727, 375)))] * 12, start=8)
    assert flips(ev) == [("5c", 1)]
    flying = [dets(("3c", 0.9, (300 + 60 * i, 100 + 40 * i))) for i in range(4)]
    ev = run(tr, [five] * 30 + flying + [dets(("3c", 0.9, (540, 300)))] * 3, start=20)
    assert flips(ev) == [("3c", 55)]


def test_the_won_top_card_under_the_winners_hands_read_as_any_card_is_not_a_new_card():
    """A slap wins the pile; the winner's hands lie over its 5c and its corner, half
    hidden, reads 3s (another rank and suit; valid-face game 212): the 5c, while the won
    pile is in view. A 3s seen flying in meanwhile is played."""
    five = dets(("5c", 0.9, (730, 378)), ("5c", 0.8, (497, 361)))
    tr = FlipTracker(frame_diag=1000)
    run(tr, [five] * 5)
    tr.pile_won(5 / FPS)
    ev = run(tr, [dets(("3s", 0.62, (727, 375)))] * 12, start=5)
    assert flips(ev) == [] and tr.order == []
    # A later hand of the slap, landing on the won pile (the camera says each hand
    # apart): the won top card stays what it was (no-pad games 817, 820).
    tr = FlipTracker(frame_diag=1000)
    run(tr, [five] * 5)
    tr.pile_won(5 / FPS)
    ev = run(tr, [dets(("3s", 0.62, (727, 375)))] * 2, start=5)
    tr.hands_on(7 / FPS + 1.0)
    ev += run(tr, [dets(("3s", 0.62, (727, 375)))] * 10, start=7)
    assert flips(ev) == [] and tr.order == []
    tr = FlipTracker(frame_diag=1000)
    run(tr, [five] * 5)
    tr.pile_won(5 / FPS)
    flying = [dets(("3s", 0.9, (500 + 60 * i, 100 + 70 * i))) for i in range(4)]
    ev = run(tr, flying + [dets(("3s", 0.9, (727, 375)))] * 3, start=5)
    assert flips(ev) == [("3s", 10)]


def test_a_won_pile_card_read_another_way_as_it_is_swept_away_is_not_a_new_card():
    """A slap wins a 3c under a Jd; as the winner's hands sweep the pile, the 3c, turned
    and half hidden, reads 3d a little from where it lay (seed 60): that is the 3c.
    A 3d seen flying in meanwhile is played; so is one landing there after the won pile
    has left view."""
    pile = dets(("3c", 0.9, (672, 247)), ("Jd", 0.9, (779, 483)))
    swept = dets(("3d", 0.69, (655, 262)))      # 23 px off; the 3c's box is 30 tall
    tr = FlipTracker(frame_diag=1000)
    run(tr, [dets(("3c", 0.9, (672, 247)))] * 3 + [pile] * 3)
    tr.pile_won(6 / FPS)
    ev = run(tr, [dets()] * 2 + [swept] * 8, start=6)
    assert flips(ev) == [] and tr.order == []
    flying = [dets(("3d", 0.9, (500 + 40 * i, 100 + 40 * i))) for i in range(4)]
    tr = FlipTracker(frame_diag=1000)
    run(tr, [dets(("3c", 0.9, (672, 247)))] * 3 + [pile] * 3)
    tr.pile_won(6 / FPS)
    ev = run(tr, flying + [swept] * 3, start=6)
    assert flips(ev) == [("3d", 11)]
    # Not confusable with the 3c or the Jd (another rank and suit): a card.
    tr = FlipTracker(frame_diag=1000)
    run(tr, [dets(("3c", 0.9, (672, 247)))] * 3 + [pile] * 3)
    tr.pile_won(6 / FPS)
    ev = run(tr, [dets(("8s", 0.9, (655, 262)))] * 3, start=6)
    assert flips(ev) == [("8s", 7)]
    # The won pile out of view for clear_after: a 3d there is a card played.
    tr = FlipTracker(frame_diag=1000)
    run(tr, [dets(("3c", 0.9, (672, 247)))] * 3 + [pile] * 3)
    tr.pile_won(6 / FPS)
    ev = run(tr, [dets()] * 25 + [swept] * 3, start=6)
    assert [e.type for e in ev] == ["pile_cleared", "flip"] and flips(ev) == [("3d", 32)]


def test_an_unsure_reading_counts_looks_the_detector_made_not_repeated_frames():
    """A still picture: the gate repeats the last look on frame after frame. A 4s read
    at 0.38 on three looks, on part of another card, and then repeated (seed 62) is
    not a card; the same reading on four looks of a changing picture is one (the slow
    path), and a sure card still confirms on a repeated look."""
    unsure = dets(("4s", 0.38, (530, 230)))
    tr = FlipTracker(frame_diag=1000)
    ev = []
    for i in range(9):
        ev += tr.update(i, i / FPS, unsure, fresh=i < 3)
    assert flips(ev) == []
    tr = FlipTracker(frame_diag=1000)
    ev = []
    for i in range(9):
        ev += tr.update(i, i / FPS, unsure, fresh=i % 2 == 0)
    assert flips(ev) == [("4s", 6)]
    tr = FlipTracker(frame_diag=1000)
    ev = tr.update(0, 0.0, dets(("Qh", 0.9, (300, 300)))) + \
        tr.update(1, 1 / FPS, dets(("Qh", 0.9, (300, 300))), fresh=False)
    assert flips(ev) == [("Qh", 1)]


def test_a_card_read_another_way_as_it_settles_is_not_a_new_card():
    """A 6s is called as it glides to rest; a look later, a few pixels on, both its
    corners read 5s and go on doing so (seed 902): that is the 6s. The same 5s first
    seen there after the 6s was out of view (a hand over the pile) is a new card."""
    six = dets(("6s", 0.9, (468, 348)), ("6s", 0.8, (685, 366)))
    five = dets(("5s", 0.7, (474, 360)), ("5s", 0.6, (692, 360)))
    tr = FlipTracker(frame_diag=860)
    ev = run(tr, [six] * 3 + [five] * 20)
    assert flips(ev) == [("6s", 1)]
    tr = FlipTracker(frame_diag=860)
    ev = run(tr, [six] * 3 + [dets()] * 3 + [five] * 5)
    assert flips(ev) == [("6s", 1), ("5s", 7)]


def test_a_won_pile_still_in_view_is_not_flipped_and_its_pick_up_is_said_once():
    tr = FlipTracker(frame_diag=1000)
    run(tr, [dets(("2s", 0.9, (300, 300)))] * 3)
    tr.pile_won()
    # Nobody picked it up yet: the next card lands on it.
    seq = [dets(("2s", 0.9, (300, 300)))] * 3
    seq += [dets(("2s", 0.9, (300, 300)), ("Jc", 0.9, (330, 330)))] * 3
    ev = run(tr, seq, start=3)
    assert flips(ev) == [("Jc", 7)] and tr.order == ["Jc"]
    # The old pile leaves view; the new one stays: one pile_cleared, nothing reset.
    ev = run(tr, [dets(("Jc", 0.9, (330, 330)))] * 30, start=9)
    assert [e.type for e in ev] == ["pile_cleared"]
    assert tr.order == ["Jc"]


def _dealt(cards):
    """Frame by frame: each card flies in over 3 frames, then rests 12 frames on top of
    the earlier ones (their corners still peeking)."""
    frames, rest = [], []
    for k, card in enumerate(cards):
        spot = (200 + 40 * k, 300)
        for i in range(3):
            frames.append(dets(*rest, (card, 0.9, (spot[0] - 150 + 50 * i, 100 + 60 * i))))
        rest = [(c, 0.5, p) for c, _, p in rest] + [(card, 0.9, spot)]
        frames += [dets(*rest)] * 12
    return frames


def _looks(tracker, frames, kept):
    """The tracker on the frames a slow consumer got: `kept` frame indices only."""
    events = []
    for i in kept:
        events += tracker.update(i, i / FPS, frames[i])
    return events


CARDS = ["Qh", "7s", "2d", "Kc", "9h"]


def test_every_other_frame_dropped_still_gives_every_flip_once():
    frames = _dealt(CARDS)
    ev = _looks(FlipTracker(frame_diag=1000), frames, range(0, len(frames), 2))
    assert [c for c, _ in flips(ev)] == CARDS


def test_bursts_of_five_dropped_frames_still_give_every_flip_once():
    frames = _dealt(CARDS)
    kept = [i for i in range(len(frames)) if i % 7 in (0, 1)]    # 2 looks, then 5 dropped
    ev = _looks(FlipTracker(frame_diag=1000), frames, kept)
    assert [c for c, _ in flips(ev)] == CARDS


def test_a_frozen_frame_repeated_gives_one_flip():
    tr = FlipTracker(frame_diag=1000)
    ev = []
    for _ in range(10):                     # the camera froze: the same frame again and again
        ev += tr.update(5, 5 / FPS, dets(("Qh", 0.9, (300, 300))))
    ev += run(tr, [dets(("Qh", 0.9, (300, 300)))] * 5, start=6)
    assert flips(ev) == [("Qh", 5)]


def test_a_flip_says_when_its_card_first_rested():
    frames = _dealt(["Qh"])
    ev = _looks(FlipTracker(frame_diag=1000), frames, range(0, len(frames), 2))
    flip = next(e for e in ev if e.type == "flip")
    assert flip.rest_frame == 4 and flip.rest_t == 4 / FPS    # first look at rest (frame 3 dropped)


def test_a_resting_card_named_by_one_end_then_the_other_is_one_card_at_rest():
    """Which end of a resting card names it can change from look to look (a hand coming
    near, the light): its corners are a card's length apart, but its outline has not
    moved, so the sightings add up. Without outlines each look would start afresh."""
    card = np.float32([[250, 250], [470, 250], [470, 530], [250, 530]])    # its outline
    ends = [(300, 300), (420, 480)]

    def look(i, with_outline=True):
        d = dets(("5c", 0.45 if i % 2 else 0.5, ends[i % 2]))
        if with_outline:
            d.outline = card[None].copy()
        return d

    tr = FlipTracker(frame_diag=1000)
    assert flips(run(tr, [look(i) for i in range(6)])) == [("5c", 3)]       # the slow path
    tr = FlipTracker(frame_diag=1000)
    assert flips(run(tr, [look(i, with_outline=False) for i in range(6)])) == []
    # A card that truly moved (its outline too) is counted afresh.
    tr = FlipTracker(frame_diag=1000)
    moving = [look(i) for i in range(6)]
    for i, d in enumerate(moving):
        d.outline = d.outline + np.float32([60 * i, 0])
        d.xyxy = d.xyxy + np.float32([60 * i, 0, 60 * i, 0])
    assert flips(run(tr, moving)) == []


def test_a_card_flying_in_whose_corner_lands_where_its_other_was_is_not_at_rest():
    """No-pad game 805: an 8h flying in, its outline's middle 84 px on between two looks,
    had one corner land within a few pixels of where its other corner had been, and was
    called 4 frames before it rested. The middle says it moved."""
    def look(middle, corners):
        d = dets(*[("8h", 0.9, c) for c in corners])
        x, y = middle
        d.outline = np.float32([[[x - 100, y - 140], [x + 100, y - 140], [x + 100, y + 140],
                                 [x - 100, y + 140]]] * len(corners))
        return d
    flying = [look((520, 300), [(440, 200), (600, 400)]),
              look((436, 320), [(444, 205), (360, 440)]),      # a corner where the other was
              look((380, 340), [(300, 230), (460, 450)])]
    resting = [look((380, 340), [(300, 230), (460, 450)])] * 2
    tr = FlipTracker(frame_diag=1000)
    assert flips(run(tr, flying + resting)) == [("8h", 3)]


def test_a_slap_settles_the_card_it_lands_on_before_it_was_seen_enough():
    """Game 1860: a Qd read 0.45-0.46 on three looks, with a look missing between, and
    then the slapping hands hid it. Without the slap it is never called; the slap's hands
    landing settles it (and it is the card the slap is judged on)."""
    seq = [dets(("Qh", 0.9, (300, 300)))] * 3
    seq += [dets(("Qh", 0.9, (300, 300)), ("Qd", 0.45, (320, 310))),
            dets(("Qh", 0.9, (300, 300)), ("Qd", 0.46, (320, 310))),
            dets(("Qh", 0.9, (300, 300))),
            dets(("Qh", 0.9, (300, 300)), ("Qd", 0.45, (320, 310))),
            dets(), dets()]                       # the hands cover the pile
    tr = FlipTracker(frame_diag=1000)
    ev = run(tr, seq)
    assert flips(ev) == [("Qh", 1)]               # not enough to call on its own
    settled = tr.settle(landed=8 / FPS)
    assert [(e.card, e.rest_frame) for e in settled] == [("Qd", 6)] and tr.top == "Qd"
    assert tr.settle(landed=8 / FPS) == []        # once


def test_a_slap_settles_one_sure_look_but_not_a_faint_one_or_one_after_the_hands():
    base = [dets(("5c", 0.9, (300, 300)))] * 3
    # One sure look a frame before the hands (no-pad game 1919's 8d at 0.95): settled.
    tr = FlipTracker(frame_diag=1000)
    run(tr, base + [dets(("5c", 0.9, (300, 300)), ("8d", 0.95, (320, 310))), dets()])
    assert [e.card for e in tr.settle(landed=4.5 / FPS)] == ["8d"]
    # One faint look: nothing (card unclear, as without a slap).
    tr = FlipTracker(frame_diag=1000)
    run(tr, base + [dets(("5c", 0.9, (300, 300)), ("8d", 0.5, (320, 310))), dets()])
    assert tr.settle(landed=4.5 / FPS) == []
    # A card first seen well after the hands landed is no card they slapped.
    tr = FlipTracker(frame_diag=1000)
    run(tr, base + [dets(), dets(), dets(), dets(("5c", 0.9, (300, 300)), ("8d", 0.95, (320, 310)))])
    assert tr.settle(landed=3 / FPS) == []
    # ...nor one last seen long before.
    tr = FlipTracker(frame_diag=1000)
    run(tr, base + [dets(("5c", 0.9, (300, 300)), ("8d", 0.95, (320, 310)))] + [dets()] * 12)
    assert tr.settle(landed=15 / FPS) == []


def test_a_card_landing_where_a_pile_said_taken_lay_is_a_flip_when_its_winner_is_named():
    """The pile vanished with no slap seen: cleared, and the table is asked who won it.
    The answer comes just as the next card lands where the pile's top card lay (game 4's
    Jc, on the spot of a Jd): that pile left when it was last seen, so the new card is
    a flip, not a card of it being swept away."""
    tr = FlipTracker(frame_diag=1000)
    ev = run(tr, [dets(("Jd", 0.9, (300, 300)))] * 3 + [dets()] * 25)
    assert [e.type for e in ev if e.type != "flip"] == ["pile_cleared"]
    seq = [dets(("Jc", 0.9, (302, 301)))] * 4
    tr.pile_won(29 / FPS)                                  # "Ada won it", as the Jc lands
    ev = run(tr, seq, start=29)
    assert flips(ev) == [("Jc", 30)]
