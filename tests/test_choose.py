"""The rule a new corner reader ships by (companion.training.choose)."""

from companion.training.choose import Figures, ships, verdict

SHIPPED = Figures(photos={"table": (257, 0, 3), "close": (507, 4, 9), "small": (234, 12, 14)},
                        rendered={"31337": (212, 227, 1)},
                        live={"drawn 1-10": (192, 193, 0)})


def with_(**parts) -> Figures:
    fig = Figures(dict(SHIPPED.photos), dict(SHIPPED.rendered), dict(SHIPPED.live))
    for part, values in parts.items():
        getattr(fig, part).update(values)
    return fig


def failed(cand: Figures) -> list[str]:
    return [q.split(":")[0] for q, ok, _ in verdict(SHIPPED, cand) if not ok]


def test_a_reader_that_reads_more_right_and_nothing_worse_ships():
    cand = with_(photos={"small": (240, 12, 8)}, rendered={"31337": (211, 227, 1)})
    assert failed(cand) == [] and ships(verdict(SHIPPED, cand))


def test_more_right_cards_do_not_buy_one_more_wrong_card():
    # Session 20's second reader: as many right in all, two more wrong.
    cand = with_(photos={"table": (258, 0, 2), "close": (504, 6, 10), "small": (236, 12, 12)})
    assert failed(cand) == ["photos (close, small, table)"]
    assert not ships(verdict(SHIPPED, cand))


def test_a_rendered_misread_or_a_false_flip_keeps_the_baseline():
    assert failed(with_(photos={"small": (243, 9, 8)},
                        rendered={"31337": (211, 227, 4)})) == ["rendered 31337"]
    assert failed(with_(photos={"small": (243, 9, 8)},
                        rendered={"31337": (210, 227, 1)})) == ["rendered 31337"]
    assert failed(with_(photos={"small": (243, 9, 8)},
                        live={"drawn 1-10": (192, 193, 1)})) == ["live drawn 1-10"]
    assert failed(with_(photos={"small": (243, 9, 8)},
                        live={"drawn 1-10": (191, 193, 0)})) == ["live drawn 1-10"]


def test_only_parts_both_readers_were_measured_on_are_judged_and_none_is_no_verdict():
    cand = Figures(photos=dict(SHIPPED.photos))
    assert [q.split(" (")[0] for q, _, _ in verdict(SHIPPED, cand)] == ["photos"]
    assert not ships(verdict(SHIPPED, Figures()))


def test_a_finder_that_loses_a_camera_slap_or_invents_one_keeps_the_baseline():
    base = Figures(slaps={"no pad 801-820": (78, 78, 0)})
    assert ships(verdict(base, Figures(slaps={"no pad 801-820": (78, 78, 0)})))
    lost = verdict(base, Figures(slaps={"no pad 801-820": (77, 78, 0)}))
    invented = verdict(base, Figures(slaps={"no pad 801-820": (78, 78, 1)}))
    assert [q.split(":")[0] for q, ok, _ in lost + invented if not ok] == \
        ["slaps no pad 801-820", "slaps no pad 801-820"]
    assert not ships(lost) and not ships(invented)
