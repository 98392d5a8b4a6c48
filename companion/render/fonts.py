"""Fonts for card indices: only what is already on the machine.

The DejaVu family (system-wide on Debian, and bundled inside matplotlib) and
matplotlib's own STIX and Computer Modern fonts. Nothing is downloaded; when
the system copy is missing, matplotlib's copy still gives a working set.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

_SYSTEM_DIRS = [Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/truetype"),
                Path("/usr/share/fonts")]

# (file name, family kind). Kinds let a deck style ask for serif/sans/condensed/bold.
_WANTED = [
    ("DejaVuSans.ttf", "sans"), ("DejaVuSans-Bold.ttf", "sans-bold"),
    ("DejaVuSansCondensed.ttf", "condensed"), ("DejaVuSansCondensed-Bold.ttf", "condensed-bold"),
    ("DejaVuSerif.ttf", "serif"), ("DejaVuSerif-Bold.ttf", "serif-bold"),
    ("DejaVuSerifCondensed.ttf", "serif-condensed"),
    ("DejaVuSerifCondensed-Bold.ttf", "serif-condensed-bold"),
    ("DejaVuSansMono.ttf", "mono"), ("DejaVuSansMono-Bold.ttf", "mono-bold"),
    ("STIXGeneral.ttf", "serif"), ("STIXGeneralBol.ttf", "serif-bold"),
    ("cmr10.ttf", "serif"), ("cmb10.ttf", "serif-bold"), ("cmss10.ttf", "sans"),
]


def _matplotlib_dir() -> Path | None:
    try:
        import matplotlib
    except ImportError:
        return None
    return Path(matplotlib.get_data_path()) / "fonts" / "ttf"


def _draws_indices(path: str) -> bool:
    """Some font files hold only a few glyphs; keep those that draw every rank."""
    from PIL import ImageFont
    try:
        font = ImageFont.truetype(path, 40)
    except OSError:
        return False
    for text in ("A", "10", "J", "Q", "K", "7"):
        x0, y0, x1, y1 = font.getbbox(text)
        if y1 - y0 < 10 or x1 - x0 < 4:
            return False
    return True


# Training may use every text face of Debian's font packages (fonts-urw-base35,
# fonts-liberation, fonts-freefont-ttf, fonts-noto-core): more deck styles to learn from.
# The demo and the tests never do: they render with what ships with the project.
_TRAINING_FAMILIES = re.compile(
    r"^(Liberation(Sans|Serif|Mono)|Free(Sans|Serif|Mono)|Noto(Sans|Serif)(Mono|Display)?"
    r"|NimbusSans|NimbusRoman|NimbusMonoPS|C059|P052|URWBookman|URWGothic)"
    r"-(Regular|Bold|Condensed|SemiCondensed|Medium|Book|Demi|Roman)?[A-Za-z]*\.(ttf|otf)$")
_training = False


def use_training_fonts(on: bool = True) -> None:
    """Let rendered decks draw their indices in every installed text font (training only)."""
    global _training
    _training = on
    available_fonts.cache_clear()


@functools.lru_cache(maxsize=1)
def available_fonts() -> tuple[tuple[str, str], ...]:
    """(path, kind) for every wanted font found; system copies first."""
    dirs = [d for d in _SYSTEM_DIRS if d.is_dir()]
    mpl = _matplotlib_dir()
    if mpl and mpl.is_dir():
        dirs.append(mpl)
    found: list[tuple[str, str]] = []
    for name, kind in _WANTED:
        for d in dirs:
            hits = [d / name] if (d / name).is_file() else list(d.rglob(name))[:1]
            if hits and _draws_indices(str(hits[0])):
                found.append((str(hits[0]), kind))
                break
    if _training:
        for path in sorted(Path("/usr/share/fonts").rglob("*")):
            if _TRAINING_FAMILIES.match(path.name) and _draws_indices(str(path)):
                bold = "Bold" in path.name or "Demi" in path.name
                found.append((str(path), "sans-bold" if bold else "sans"))
    if not found:
        raise RuntimeError("no usable font: install fonts-dejavu-core or matplotlib")
    return tuple(found)
