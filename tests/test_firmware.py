"""The pad's detection core, compiled and run on the host with the system C compiler."""

from __future__ import annotations

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
