"""Finder training frames cut from game films (companion.training.film_frames)."""

from __future__ import annotations

import numpy as np

from companion.engine import PRESETS
from companion.render.video import GameFilm
from companion.training.film_frames import frame_at, make


def small_film(seed: int = 3, table_hands: bool = True) -> GameFilm:
    return GameFilm(PRESETS["base"], ["Ada", "Ben", "Cho"], seed, size=(480, 270), seconds=8,
                    table_hands=table_hands)


def test_a_cut_frame_is_the_frame_the_film_itself_shows():
    film = small_film()
    wanted = {40, 95, 150}
    seen = 0
    for f, frame in enumerate(film.frames()):
        if f in wanted:
            cut, _ = frame_at(film, f / film.fps, noise=f)
            assert np.array_equal(cut, frame), f"frame {f} differs from the film's"
            seen += 1
        if f >= max(wanted):
            break
    assert seen == len(wanted)


def test_the_card_at_rest_on_top_shows_whole_and_one_under_a_slapping_hand_does_not():
    film = small_film(table_hands=False)     # no dealing hands: a card lies bare on top
    tl = film.timeline
    busy = [(s.t_land - 0.2, s.t_land + 0.7) for s in tl.slaps]
    quiet = next(c for c in tl.cards
                 if not any(a <= c.t_rest + 0.1 <= b for a, b in busy)
                 and not any(c.t_rest < o.t_rest <= c.t_rest + 0.1 for o in tl.cards))
    _, cards = frame_at(film, quiet.t_rest + 0.1)
    top_outline, top_shows = cards[-1]
    true = film._card_H(quiet, quiet.t_rest)
    fh, fw = quiet.face.image.shape[:2]
    centre = true @ np.array([fw / 2, fh / 2, 1.0])
    assert np.allclose(top_outline.mean(0), centre[:2] / centre[2], atol=0.5)
    assert top_shows > 0.99
    assert all(shows < 0.99 for _, shows in cards[:-1]), "a card under the top one shows whole"
    slap = tl.slaps[0]
    _, cards = frame_at(film, slap.t_land + 0.1)
    assert cards and cards[-1][1] < 0.9, "the top card under a slapping hand counted as whole"


def test_make_writes_an_ultralytics_obb_dataset_without_real_faces(tmp_path):
    info = make(tmp_path / "ff", films=3, per_film=2, size=128, real_share=0.0, workers=1)
    assert info["frames"] == 6
    images = sorted((tmp_path / "ff" / "images").rglob("*.jpg"))
    labels = sorted((tmp_path / "ff" / "labels").rglob("*.txt"))
    assert len(images) == len(labels) == 6
    assert {p.parent.name for p in images} == {"train", "val"}
    values = [float(v) for p in labels for line in p.read_text().splitlines()
              for v in line.split()[1:]]
    assert values and all(0.0 <= v <= 1.0 for v in values)
    assert (tmp_path / "ff" / "data.yaml").is_file()
