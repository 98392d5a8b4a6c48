"""House options from TOML: every key, and one clear error naming a bad key."""

from __future__ import annotations

import pytest

from companion.engine import PRESETS, RulesError, load_rules, rules_from_mapping


def write(tmp_path, text):
    p = tmp_path / "house.toml"
    p.write_text(text)
    return p


def test_presets_follow_their_seeds():
    base, chal, intro = PRESETS["base"], PRESETS["challenge"], PRESETS["intro"]
    assert base.patterns == ("jack", "double", "sandwich") and not base.challenge
    assert base.penalty == 2 and base.lead_after_slap == "seat" and base.slap_back_in
    assert chal.challenge and dict(chal.challenge_counts) == {"A": 4, "K": 3, "Q": 2, "J": 1}
    assert chal.slaps_during_challenge and chal.challenge_winner == "first"
    assert intro.patterns == ("double", "sandwich") and intro.penalty == 1
    assert intro.challenge and intro.challenge_winner == "last"


def test_every_key_from_a_toml_file(tmp_path):
    p = write(tmp_path, """
preset = "challenge"
patterns = ["run3", "jack", "double", "sandwich", "marriage"]
run_wraps = true
challenge = true
challenge_counts = { K = 2 }
slaps_during_challenge = false
penalty = 1
lead_after_slap = "slapper"
slap_back_in = false
hands_to_win = 3
jokers = true
challenge_winner = "last"
""")
    r = load_rules(p)
    assert r.patterns == ("jack", "double", "sandwich", "run3", "marriage")  # canonical order
    assert r.run_wraps and r.challenge and not r.slaps_during_challenge
    assert dict(r.challenge_counts) == {"A": 4, "K": 2, "Q": 2, "J": 1}
    assert (r.penalty, r.lead_after_slap, r.slap_back_in, r.hands_to_win) == (1, "slapper", False, 3)
    assert r.jokers and r.deck_size == 54 and r.challenge_winner == "last"


@pytest.mark.parametrize("text,key", [
    ("penalti = 2", "penalti"),
    ("penalty = 'two'", "penalty"),
    ("penalty = -1", "penalty"),
    ("patterns = ['double', 'flush']", "patterns"),
    ("lead_after_slap = 'left'", "lead_after_slap"),
    ("challenge_counts = { X = 3 }", "challenge_counts"),
    ("challenge_counts = { K = 'three' }", "challenge_counts.K"),
    ("slap_back_in = 1", "slap_back_in"),
    ("preset = 'fast'", "preset"),
    ("challenge_winner = 'middle'", "challenge_winner"),
    ("hands_to_win = 0", "hands_to_win"),
    ("patterns = ['joker']", "patterns"),
])
def test_bad_key_or_value_names_the_key(tmp_path, text, key):
    with pytest.raises(RulesError) as err:
        load_rules(write(tmp_path, text))
    msg = str(err.value)
    assert f"'{key}'" in msg and "house.toml" in msg and "\n" not in msg


def test_broken_toml_and_missing_file(tmp_path):
    with pytest.raises(RulesError, match="house.toml.*line 1"):
        load_rules(write(tmp_path, "penalty = = 2"))
    with pytest.raises(RulesError, match="no such file"):
        load_rules(tmp_path / "nope.toml")


def test_preset_names_load_directly():
    assert load_rules("intro") is PRESETS["intro"]
    assert rules_from_mapping({}) == PRESETS["base"]


def test_rules_round_trip_through_their_keys():
    for name in ("base", "challenge", "intro"):
        r = PRESETS[name]
        assert rules_from_mapping(r.to_dict()) == r
