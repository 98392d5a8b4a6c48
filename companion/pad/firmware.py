"""The pad's real firmware on a simulated ATmega328P: hands in, UART lines out.

`firmware/build.sh` builds the Uno binary and `firmware/build/pad_harness` (libsimavr),
which runs the binary cycle-accurately at 16 MHz with its ADC inputs driven by force
curves. This module writes the harness's script and reads back each UART line with the
simulated time its last byte left the chip.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

FIRMWARE = Path(__file__).resolve().parents[2] / "firmware"
HARNESS = FIRMWARE / "build" / "pad_harness"
UNO_BUILD = FIRMWARE / "build" / "uno"


@dataclass
class Hand:
    zone: int
    onset_us: float
    peak: float = 700.0          # ADC counts at full press
    rise_us: float = 1000.0      # from touch to full press (and back at release)
    hold_us: float = 40_000.0    # pressed this long


def uno_elf() -> Path | None:
    found = sorted(UNO_BUILD.glob("*.elf"))
    return found[0] if found else None


def _built(elf: Path | None, harness: Path) -> Path:
    elf = elf or uno_elf()
    if elf is None or not harness.is_file():
        raise FileNotFoundError("the firmware or its harness is not built (run firmware/build.sh)")
    return elf


def run_firmware(hands: list[Hand], end_us: float, elf: Path | None = None,
                 harness: Path = HARNESS, timeout: float = 120.0,
                 send: list[tuple[float, str]] = (), noise: float = 0.0,
                 base: dict[int, float] | None = None) -> list[tuple[float, str]]:
    """(simulated us, line) for each line the firmware sent while `hands` pressed; `send`:
    (us, command) lines written to the pad's UART (HELLO, CAL, STREAM 1); `noise`: +- ADC
    counts on every input; `base`: zone -> what it reads at rest (a zone wired wrong)."""
    elf = _built(elf, harness)
    script = "".join(f"{h.zone} {h.onset_us} {h.peak} {h.rise_us} {h.hold_us}\n" for h in hands)
    script += "".join(f"SEND {t} {word.replace(' ', '_')}\n" for t, word in send)
    script += f"NOISE {noise}\n" + "".join(f"BASE {z} {v}\n" for z, v in (base or {}).items())
    script += f"END {end_us}\n"
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write(script)
        path = Path(fh.name)
    try:
        res = subprocess.run([str(harness), str(elf), str(path)], capture_output=True, text=True,
                             timeout=timeout, check=True)
    finally:
        path.unlink(missing_ok=True)
    out = []
    for line in res.stdout.splitlines():
        if line.startswith("UART "):
            _, t, text = line.split(" ", 2)
            out.append((float(t), text))
    return out


def start_live(every: float, seconds: float | None = None, elf: Path | None = None,
               harness: Path = HARNESS) -> tuple[subprocess.Popen, str]:
    """The firmware as a serial device: the harness at wall-clock speed behind a
    pseudo-terminal, a random hand every `every` seconds. The process (its stdout says
    each hand as "HAND zone +ms") and the terminal's path."""
    elf = _built(elf, harness)
    cmd = [str(harness), str(elf), "--live", str(every)] + ([str(seconds)] if seconds else [])
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in proc.stdout:              # simavr says what it loaded first
        if line.startswith("PTY "):
            return proc, line.split(" ", 1)[1].strip()
    proc.wait()
    raise RuntimeError(f"{harness}: no pseudo-terminal opened (exit {proc.returncode})")
