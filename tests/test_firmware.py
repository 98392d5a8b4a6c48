"""The pad's detection core, compiled and run on the host with the system C compiler."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

FW = Path(__file__).resolve().parent.parent / "firmware"
pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler")


def test_core_unit_tests_and_order_resolution(tmp_path):
    exe = tmp_path / "test_slapcore"
    subprocess.run(["gcc", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror",
                    f"-I{FW / 'slappad'}", str(FW / "test" / "test_slapcore.c"),
                    str(FW / "slappad" / "slapcore.c"), "-lm", "-o", str(exe)], check=True)
    res = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    print(res.stdout)
    assert res.returncode == 0, res.stdout
    figures = {line.split()[1]: float(line.split()[2]) for line in res.stdout.splitlines()
               if line.startswith("FIGURE")}
    # Two hands 100 us apart are ordered right at the firmware's sample rate.
    assert figures["order_100us_at_70us"] >= 0.99
    assert figures["median_onset_error_us_at_70us"] < 20


def test_sketch_compiles_against_the_arduino_api(tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("no C++ compiler")
    src = tmp_path / "sketch.cpp"
    src.write_text('#include "arduino_stub.h"\n' + (FW / "slappad" / "slappad.ino").read_text())
    subprocess.run(["g++", "-fsyntax-only", "-Wall", "-Werror", f"-I{FW / 'test'}",
                    f"-I{FW / 'slappad'}", str(src)], check=True)


AVR_TOOLCHAIN = shutil.which("avr-gcc") is not None and Path("/usr/share/arduino/Arduino.mk").is_file()
NO_AVR = ("Debian's AVR toolchain is absent (apt install gcc-avr avr-libc arduino-core-avr "
          "arduino-mk; .ci/run installs it)")


@pytest.fixture(scope="module")
def built():
    """firmware/build.sh: the real sketch for the Uno and the Nano, as a user flashes it."""
    if not AVR_TOOLCHAIN:
        pytest.skip(NO_AVR)
    res = subprocess.run([str(FW / "build.sh")], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def test_the_sketch_builds_for_uno_and_nano_and_fits(built):
    for board in ("uno", "nano"):
        line = next(x for x in built.splitlines() if x.startswith(f"firmware: {board}:"))
        (flash, flash_max), (ram, ram_max) = [(int(a), int(b)) for a, b in
                                              re.findall(r"(\d+) of (\d+)", line)]
        assert 0 < flash <= flash_max and 0 < ram <= ram_max


def test_the_built_binary_speaks_the_protocol_in_simavr(built):
    """The Uno binary on a simulated ATmega328P at 16 MHz: its UART lines parse, with
    their checksums, in the host reader's parser."""
    if shutil.which("simavr") is None:
        pytest.skip("simavr is absent (apt install simavr; .ci/run installs it)")
    from companion.pad.protocol import Heartbeat, Hello, parse_line
    elf = next((FW / "build" / "uno").glob("*.elf"))
    try:
        res = subprocess.run(["simavr", "-m", "atmega328p", "-f", "16000000", str(elf)],
                             capture_output=True, text=True, timeout=2)
        out = res.stdout + res.stderr
    except subprocess.TimeoutExpired as exc:   # it runs until stopped
        out = (exc.stdout or b"").decode(errors="replace") + (exc.stderr or b"").decode(
            errors="replace")
    lines = re.findall(r"((?:HELLO|HB|SLAP|F|CAL) [^*\x1b]*\*[0-9A-F]{2})", out)
    parsed = [parse_line(line + "\n") for line in lines]
    assert parsed and isinstance(parsed[0], Hello) and parsed[0].zones == 4
    beats = [p for p in parsed if isinstance(p, Heartbeat)]
    assert len(beats) >= 2 and all(b.t_us > a.t_us for a, b in zip(beats, beats[1:]))


@pytest.fixture(scope="module")
def harness(built):
    from companion.pad.firmware import HARNESS, uno_elf
    if not HARNESS.is_file() or uno_elf() is None:
        pytest.skip("the simavr harness was not built: libsimavr-dev is absent "
                    "(apt install libsimavr-dev; .ci/run installs it)")
    return HARNESS


def _slaps(lines):
    from companion.pad.protocol import Slap, parse_line
    parsed = [(t, parse_line(text + "\n")) for t, text in lines]   # checksums checked here
    return [(t, p) for t, p in parsed if isinstance(p, Slap)]


def test_the_real_binary_orders_two_hands_100_us_apart_bottom_first(harness):
    from companion.pad.firmware import Hand, run_firmware
    lines = run_firmware([Hand(2, 200_000, peak=650), Hand(0, 200_100, peak=800)], 500_000)
    slaps = sorted((s for _, s in _slaps(lines)), key=lambda s: s.t_us)   # as the host orders
    assert [s.zone for s in slaps] == [2, 0]                # both, the bottom hand first
    first, second = slaps
    assert 50 <= second.t_us - first.t_us <= 150            # ~100 us apart, as landed


def test_the_real_binary_gives_a_resting_hand_one_slap(harness):
    from companion.pad.firmware import Hand, run_firmware
    slaps = _slaps(run_firmware([Hand(1, 100_000, hold_us=600_000)], 900_000))
    assert [s.zone for _, s in slaps] == [1]


def test_slaps_while_streaming_forces_lose_no_line(harness):
    from companion.pad.firmware import Hand, run_firmware
    from companion.pad.protocol import Force, Slap, parse_line
    lines = run_firmware([Hand(1, 400_000), Hand(3, 400_300)], 800_000,
                         send=[(200_000, "STREAM 1")])
    parsed = [parse_line(text + "\n") for _, text in lines]      # every line's checksum
    assert sum(isinstance(p, Force) for p in parsed) >= 20        # 50 a second while streaming
    assert [p.zone for p in parsed if isinstance(p, Slap)] == [1, 3]
    seqs = [p.seq for p in parsed]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))      # no line lost


def test_the_real_firmware_behind_a_pty_reaches_the_host_reader(harness):
    """`companion pad-sim --firmware`: the binary at wall-clock speed behind a
    pseudo-terminal; the host reader connects, hears its HELLO and its slaps."""
    import queue
    import time

    from companion.pad import PadReader
    from companion.pad.firmware import start_live
    from companion.pad.reader import SlapEvent, StatusEvent
    proc, path = start_live(every=0.3, seconds=15)
    reader = PadReader(path).start()
    got = []
    try:
        # Until both are heard (a second or so); the simulator runs at wall-clock speed,
        # so a busy machine can make it slower.
        end = time.monotonic() + 12
        while time.monotonic() < end and not (
                any(isinstance(e, SlapEvent) for e in got) and
                any(isinstance(e, StatusEvent) and e.kind == "hello" for e in got)):
            try:
                got.append(reader.events.get(timeout=0.2))
            except queue.Empty:
                pass
    finally:
        reader.stop()
        proc.kill()
        proc.wait()
    assert any(isinstance(e, StatusEvent) and e.kind == "hello" for e in got)
    slaps = [e for e in got if isinstance(e, SlapEvent)]
    assert slaps and all(0 <= s.zone < 4 for s in slaps)


def test_a_bouncing_hand_on_a_noisy_pad_is_one_slap(harness):
    from companion.pad.firmware import Hand, run_firmware
    # One hand that lands, lifts a little and lands again 6 ms later, on +-8 counts of noise.
    hands = [Hand(0, 200_000, peak=700, hold_us=4_000), Hand(0, 206_000, peak=600)]
    slaps = _slaps(run_firmware(hands, 600_000, noise=8.0))
    assert [s.zone for _, s in slaps] == [0]


def test_a_zone_reading_high_at_rest_invents_no_slap(harness):
    from companion.pad.firmware import Hand, run_firmware
    # Zone 2 wired wrong: it reads 900 counts from power-up; a real hand lands on zone 1.
    slaps = _slaps(run_firmware([Hand(1, 600_000)], 1_200_000, noise=4.0, base={2: 900}))
    assert [s.zone for _, s in slaps] == [1]
