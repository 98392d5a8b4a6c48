"""Every worked example and stated case in both rule documents, and each edge rule."""

from __future__ import annotations

import pytest

from companion.engine import PRESETS, EventError, Game, rules_from_mapping

BASE, CHALLENGE, INTRO = PRESETS["base"], PRESETS["challenge"], PRESETS["intro"]


def new_game(rules=BASE, players=("Ada", "Ben", "Cho"), stacks=None, dealer=None):
    g = Game(rules)
    g.start(list(players), dealer=dealer, stacks=stacks or [10] * len(players))
    return g


def flips(g, *cards):
    out = []
    for c in cards:
        out += g.flip(c)
    return out


def of_type(anns, kind):
    return [a for a in anns if a["type"] == kind]


def conserved(g):
    return sum(g.stacks) + g.pile_count == g.deck_size


# --- Seed 000: patterns -------------------------------------------------------------

def test_six_queen_six_is_a_sandwich_and_the_moment_passes_with_the_next_card():
    g = new_game()
    anns = flips(g, "6h", "Qs", "6c")
    assert of_type(anns, "pattern")[-1]["patterns"] == ["sandwich"]
    assert of_type(anns, "pattern")[-1]["cards"] == ["6h", "Qs", "6c"]
    g.flip("3d")                        # played before a slap landed: the moment passed
    assert g.top_patterns == ()
    anns = g.slap([1])
    assert of_type(anns, "wrong_slap") == [{"type": "wrong_slap", "seat": 1, "paid": 2, "owed": 2}]


def test_new_card_can_make_a_new_pattern_after_the_moment_passed():
    g = new_game()
    flips(g, "6h", "Qs", "6c", "6d")    # the fourth card makes a double with the third
    assert g.top_patterns == ("double",)


def test_king_four_king_sandwich_king_king_double_queen_four_jack_nothing_but_the_jack():
    g = new_game()
    flips(g, "Kh", "4s", "Kc")
    assert g.top_patterns == ("sandwich",)
    g = new_game()
    flips(g, "Kh", "Kc")
    assert g.top_patterns == ("double",)   # a double, not a sandwich
    g = new_game(rules_from_mapping({"patterns": ["double", "sandwich"]}))
    flips(g, "Qh", "4s", "Jc")
    assert g.top_patterns == ()            # queen, 4, jack is nothing as a sandwich
    g = new_game()
    flips(g, "Qh", "4s", "Jc")
    assert g.top_patterns == ("jack",)     # ...though in the base game any jack is a slap


def test_any_jack_is_a_slap_and_a_jack_double_is_one_slap():
    g = new_game()
    anns = flips(g, "3h", "Jd")
    assert of_type(anns, "pattern")[0]["patterns"] == ["jack"]
    anns = g.flip("Js")
    assert of_type(anns, "pattern")[0]["patterns"] == ["jack", "double"]
    anns = g.slap([0, 2])
    awards = of_type(anns, "award")
    assert len(awards) == 1 and awards[0]["cards"] == 3 and awards[0]["seat"] == 0
    assert not of_type(anns, "wrong_slap")


def test_runs_of_three_ascending_descending_and_wrap_only_when_asked():
    runs = rules_from_mapping({"patterns": ["double", "sandwich", "run3"]})
    for cards, expect in [(("7h", "8s", "9c"), ("run3",)), (("9h", "8s", "7c"), ("run3",)),
                          (("7h", "8s", "8c"), ("double",)), (("Qh", "Ks", "Ac"), ("run3",)),
                          (("Ah", "2s", "3c"), ("run3",)), (("Kh", "As", "2c"), ()),
                          (("7h", "8s", "10c"), ())]:
        g = new_game(runs)
        flips(g, *cards)
        assert g.top_patterns == expect, cards
    wraps = rules_from_mapping({"patterns": ["run3"], "run_wraps": True})
    g = new_game(wraps)
    flips(g, "Kh", "As", "2c")
    assert g.top_patterns == ("run3",)
    g = new_game(wraps)
    flips(g, "2h", "As", "Kc")
    assert g.top_patterns == ("run3",)


def test_only_the_newest_card_completes_a_pattern():
    g = new_game()
    flips(g, "5h", "5s", "9c")            # the double is buried under the 9
    assert g.top_patterns == ()
    assert of_type(g.slap([2]), "wrong_slap")


# --- Seed 000: slaps, ties, penalties -------------------------------------------------

def test_bottom_hand_wins_and_the_upper_hand_owes_nothing():
    g = new_game()
    flips(g, "4h", "4s")
    anns = g.slap([2, 0])
    assert of_type(anns, "award")[0]["seat"] == 2
    assert of_type(anns, "award")[0]["late"] == [0]
    assert not of_type(anns, "wrong_slap")
    assert g.stacks == [9, 9, 12]


def test_a_slower_hand_after_the_award_and_before_the_next_card_owes_nothing():
    g = new_game()
    flips(g, "4h", "4s")
    g.slap([2])
    anns = g.slap([0])
    assert of_type(anns, "late_slap") and not of_type(anns, "wrong_slap")
    g.flip("9d")
    anns = g.slap([0])                    # now the top is a plain 9: that one pays
    assert of_type(anns, "wrong_slap")[0]["paid"] == 2


def test_two_wrong_slaps_together_both_pay_and_penalties_go_to_the_next_winner():
    g = new_game()
    flips(g, "8h")
    anns = g.slap([1, 2])
    assert [(a["seat"], a["paid"]) for a in of_type(anns, "wrong_slap")] == [(1, 2), (2, 2)]
    assert g.pile_count == 5 and conserved(g)
    flips(g, "8s")                        # Ben's card: a double
    anns = g.slap([0])
    assert of_type(anns, "award")[0]["cards"] == 6   # two cards played + four penalty
    assert conserved(g)


def test_a_player_who_cannot_pay_pays_what_they_have_and_is_out():
    g = new_game(stacks=[10, 1, 10])
    g.flip("2h")
    anns = g.slap([1])
    assert of_type(anns, "wrong_slap")[0]["paid"] == 1
    assert of_type(anns, "out") == [{"type": "out", "seat": 1}]
    assert 1 in g.snapshot()["out"]
    assert g.turn == 2                    # Ben is skipped: Cho is next
    with pytest.raises(EventError, match="out"):
        g.slap([1])


def test_empty_hand_slaps_back_in_and_reenters_the_turn_order():
    g = new_game(stacks=[10, 1, 10])
    flips(g, "5h", "5s")                  # Ben plays his last card, a double
    assert g.stacks[1] == 0 and g.turn == 2
    g.slap([1])
    assert g.stacks[1] == 2
    assert g.turn == 2                    # lead: left of Ben, who played the 5s
    flips(g, "9c", "3d")                 # Cho, then Ada
    assert g.turn == 1                    # Ben is back in the order


def test_empty_hand_is_out_when_someone_else_wins_a_legal_slap():
    g = new_game(stacks=[10, 1, 10])
    flips(g, "5h", "5s")
    anns = g.slap([0])
    assert of_type(anns, "out") == [{"type": "out", "seat": 1}]


def test_turn_passes_clockwise_skipping_empty_hands():
    g = new_game(stacks=[5, 1, 5])
    flips(g, "2h", "3h")                  # Ada, Ben (his last)
    assert g.turn == 2
    flips(g, "4h")
    assert g.turn == 0                    # Ben (no cards) is skipped


def test_lead_after_slap_seat_versus_slapper():
    g = new_game()
    flips(g, "4h", "4s")                  # Ben completes the double
    g.slap([0])
    assert g.turn == 2                    # left of Ben
    g = new_game(rules_from_mapping({"lead_after_slap": "slapper"}))
    flips(g, "4h", "4s")
    g.slap([0])
    assert g.turn == 0


def test_hand_and_match_end():
    rules = rules_from_mapping({"hands_to_win": 2})
    g = Game(rules)
    g.start(["Ada", "Ben"], stacks=[2, 1])
    g.flip("9h")
    anns = g.flip("9s")                   # Ben's last card makes a double
    anns = g.slap([0])
    assert of_type(anns, "out") == [{"type": "out", "seat": 1}]
    assert of_type(anns, "hand_over") == [{"type": "hand_over", "winner": 0, "hands_won": [1, 0]}]
    assert not of_type(anns, "match_over")
    with pytest.raises(EventError, match="hand is over"):
        g.flip("2c")
    g.start(["Ada", "Ben"], stacks=[2, 1])
    flips(g, "9h", "9s")
    anns = g.slap([0])
    assert of_type(anns, "match_over") == [{"type": "match_over", "winner": 0}]


def test_one_deck_a_card_in_the_pile_cannot_be_flipped_again():
    g = new_game()
    g.flip("Kh")
    before = g.snapshot()
    with pytest.raises(EventError, match="duplicate"):
        g.flip("KH")
    assert g.snapshot() == before


# --- Seed 000: the face-card challenge ----------------------------------------------

def test_ada_ben_cho_king_goes_to_ada_with_first():
    g = new_game(CHALLENGE)
    anns = g.flip("Kd")
    assert of_type(anns, "challenge") == [{"type": "challenge", "by": 0, "seat": 1, "count": 3,
                                            "card": "Kd"}]
    anns = flips(g, "5h", "9s")
    assert [a.get("left") for a in of_type(anns, "flip")] == [2, 1]
    anns = g.flip("Qc")                   # Ben's queen passes the challenge to Cho
    assert of_type(anns, "challenge")[0]["seat"] == 2 and of_type(anns, "challenge")[0]["count"] == 2
    anns = flips(g, "3c", "6d")
    won = of_type(anns, "challenge_won")
    assert won[0]["seat"] == 0 and won[0]["chain"] == [0, 1]
    anns = g.collect()
    assert of_type(anns, "award")[0] == {"type": "award", "seat": 0, "reason": "challenge",
                                         "cards": 6}
    assert g.turn == 0 and conserved(g)


def test_same_chain_goes_to_ben_with_last():
    g = new_game(rules_from_mapping({"preset": "challenge", "challenge_winner": "last"}))
    flips(g, "Kd", "5h", "9s", "Qc", "3c", "6d")
    assert of_type(g.collect(), "award")[0]["seat"] == 1


def test_a_king_is_not_an_immediate_win_and_attempts_do_not_carry():
    g = new_game(CHALLENGE)
    anns = g.flip("Kd")
    assert not of_type(anns, "award")
    flips(g, "2h", "Ah")                  # Ben answers on his second attempt with an ace
    assert g.responder == 2 and g.left == 4   # a fresh count of four, nothing carried


def test_challenge_counts_ace_king_queen_jack():
    for card, count in [("As", 4), ("Ks", 3), ("Qs", 2), ("Js", 1)]:
        g = new_game(CHALLENGE)
        assert of_type(g.flip(card), "challenge")[0]["count"] == count


def test_slaps_stay_on_during_a_challenge_and_the_slapper_takes_the_pile():
    g = new_game(CHALLENGE)
    flips(g, "Kd", "7h", "7s")            # a double made by a challenge card
    anns = g.slap([2])
    award = of_type(anns, "award")[0]
    assert award["seat"] == 2 and award["reason"] == "slap" and award["cards"] == 3
    assert g.chain == [] and g.responder is None


def test_slaps_off_during_a_challenge_is_a_house_option():
    g = new_game(rules_from_mapping({"preset": "challenge", "slaps_during_challenge": False}))
    flips(g, "Kd", "7h", "7s")
    assert g.top_patterns == ()
    assert of_type(g.slap([2]), "wrong_slap")


def test_jack_is_a_slap_and_a_one_card_challenge():
    g = new_game(CHALLENGE)
    anns = g.flip("Jd")
    assert of_type(anns, "pattern")[0]["patterns"] == ["jack"]
    assert of_type(anns, "challenge")[0]["count"] == 1
    anns = g.flip("4c")
    assert of_type(anns, "challenge_won")[0]["seat"] == 0


def test_first_when_the_chain_comes_back_round():
    # Two players: Ada's king, Ben's queen, Ada fails. Ada failed to keep her claim,
    # so the pile goes to Ben, not back to the player who just failed.
    g = new_game(CHALLENGE, players=("Ada", "Ben"))
    flips(g, "Kd", "Qh", "3s", "4s")
    assert of_type(g.collect(), "award")[0]["seat"] == 1
    # Three players: Ada K, Ben Q, Cho A, Ada J, Ben fails: the earliest challenge after
    # Ben's own is Cho's ace.
    g = new_game(CHALLENGE)
    flips(g, "Kd", "Qh", "As", "Jc", "2d")
    assert g.pending == (2, "challenge")


def test_responder_out_of_cards_loses_the_challenge():
    g = new_game(CHALLENGE, stacks=[5, 1, 5])
    anns = flips(g, "Kd", "4h")           # Ben's only card
    assert of_type(anns, "challenge_won")[0]["seat"] == 0


# --- Seed 001: the introductory game ---------------------------------------------------

def test_intro_jack_is_not_a_slap_and_false_slap_costs_one():
    g = new_game(INTRO)
    flips(g, "Jd")
    assert g.top_patterns == ()
    anns = g.slap([2])
    assert of_type(anns, "wrong_slap")[0]["paid"] == 1


@pytest.mark.parametrize("rules", [INTRO, CHALLENGE])
def test_alex_bea_seven_four_seven_sandwich_overrides_the_challenge(rules):
    g = new_game(rules, players=("Alex", "Bea", "Cy"))
    flips(g, "Kd", "7h", "4c")
    anns = g.flip("7s")                   # third attempt: a sandwich and the attempts run out
    assert of_type(anns, "pattern")[0]["patterns"] == ["sandwich"]
    assert of_type(anns, "challenge_won")[0]["seat"] == 0
    anns = g.slap([1])                    # Bea herself slaps before the pile is collected
    award = of_type(anns, "award")[0]
    assert award["seat"] == 1 and award["reason"] == "slap" and award["overrides"] == 0
    assert award["cards"] == 4 and conserved(g)


@pytest.mark.parametrize("rules", [INTRO, CHALLENGE])
def test_alex_bea_seven_four_six_alex_collects(rules):
    g = new_game(rules, players=("Alex", "Bea", "Cy"))
    flips(g, "Kd", "7h", "4c", "6s")
    anns = g.collect()
    assert of_type(anns, "award")[0]["seat"] == 0
    assert g.turn == 0                    # the winner starts again


def test_intro_last_challenger_takes_it():
    g = new_game(INTRO)
    flips(g, "Kd", "5h", "9s", "Qc", "3c", "6d")
    assert of_type(g.collect(), "award")[0]["seat"] == 1


def test_next_flip_by_the_winner_collects_a_won_pile():
    g = new_game(CHALLENGE)
    flips(g, "Jd", "4c")
    anns = g.flip("9h")                   # Ada, the winner, plays on: she picked it up
    assert [a["type"] for a in anns][:3] == ["award", "turn", "flip"]
    assert anns[2]["seat"] == 0 and g.pile_count == 1 and conserved(g)


def test_collect_without_a_winner_is_refused():
    g = new_game()
    g.flip("9h")
    with pytest.raises(EventError, match="not been won"):
        g.collect()


# --- Variants -----------------------------------------------------------------------

@pytest.mark.parametrize("pattern,cards,hit", [
    ("tens", ("3h", "7s"), True), ("tens", ("Ah", "9s"), True), ("tens", ("5h", "6s"), False),
    ("ten", ("3h", "10s"), True), ("ten", ("3h", "9s"), False),
    ("marriage", ("Kh", "Qs"), True), ("marriage", ("Qh", "Ks"), True),
    ("marriage", ("Kh", "4s", "Qd"), False),
    ("divorce", ("Kh", "4s", "Qd"), True), ("divorce", ("Kh", "Qs"), False),
    ("big_mac", ("5h", "2s", "3d", "5c"), True), ("big_mac", ("5h", "2s", "5c"), False),
    ("top_bottom", ("5h", "2s", "3d", "5c"), True), ("top_bottom", ("5h", "2s", "3d"), False),
    ("run4", ("5h", "6s", "7d", "8c"), True), ("run4", ("5h", "6s", "7d", "9c"), False),
])
def test_variant_patterns(pattern, cards, hit):
    g = new_game(rules_from_mapping({"patterns": [pattern]}))
    flips(g, *cards)
    assert (pattern in g.top_patterns) is hit


def test_joker_pattern_and_jokers_in_the_deck():
    g = new_game(rules_from_mapping({"patterns": ["joker", "double"], "jokers": True}))
    flips(g, "RJ", "BJ")
    assert g.top_patterns == ("joker",)   # two jokers are not a double
    with pytest.raises(EventError, match="jokers are not in play"):
        new_game().flip("RJ")


# --- House option: slap_back_in = false -------------------------------------------

NO_BACK_IN = rules_from_mapping({"slap_back_in": False})


def test_without_slap_back_in_an_empty_hand_slapping_a_real_pattern_wins_nothing():
    g = new_game(NO_BACK_IN, stacks=[10, 0, 10])
    flips(g, "6h", "6c")
    assert g.slap([1]) == []                    # no award, no penalty: nothing happens
    assert g.pile_count == 2 and g.stacks[1] == 0 and not g.out[1]
    anns = g.slap([2])                          # a hand with cards still takes it...
    assert of_type(anns, "award")[0]["seat"] == 2
    assert of_type(anns, "out") == [{"type": "out", "seat": 1}]   # ...and the empty hand is out


def test_without_slap_back_in_the_first_hand_with_cards_wins_a_shared_slap():
    g = new_game(NO_BACK_IN, stacks=[10, 0, 10])
    flips(g, "6h", "6c")
    anns = g.slap([1, 2])                        # the empty hand landed first
    assert of_type(anns, "award")[0]["seat"] == 2 and g.out[1]


def test_without_slap_back_in_an_empty_hands_wrong_slap_cannot_be_paid_so_it_is_out():
    g = new_game(NO_BACK_IN, stacks=[10, 0, 10])
    g.flip("6h")
    anns = g.slap([1])
    assert of_type(anns, "wrong_slap") == [{"type": "wrong_slap", "seat": 1, "paid": 0, "owed": 2}]
    assert of_type(anns, "out") == [{"type": "out", "seat": 1}]
    assert conserved(g)


def test_with_slap_back_in_the_same_slap_wins_the_empty_hand_a_new_stack():
    g = new_game(BASE, stacks=[10, 0, 10])
    flips(g, "6h", "6c")
    anns = g.slap([1])
    assert of_type(anns, "award")[0]["seat"] == 1 and g.stacks[1] == 2 and not g.out[1]
