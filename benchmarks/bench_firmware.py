"""The pad firmware's figures from its real binary on a simulated ATmega328P.

    firmware/build.sh && python benchmarks/bench_firmware.py [--trials 1000] [--seed 0]

Random trials of two hands on two zones N us apart (strength 250-850 counts, rise
0.5-1.5 ms, any phase against the sampling), run back to back with 300 ms between them
in one simulation (cycle-accurate at 16 MHz, libsimavr): the bottom hand's order, the
onset error, and the time from the first hand's onset to its SLAP line's last byte on
the UART; then four hands at once on all zones (no line lost or corrupted) and the
samples a second per zone (heartbeat spacing is time; rate from the HELLO a second in).
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np

from companion.pad.firmware import HARNESS, Hand, run_firmware, uno_elf
from companion.pad.protocol import Force, ProtocolError, Slap, parse_line

GAP_US = 300_000.0


def trials(spacing: float, n: int, rng: np.random.Generator):
    hands, truth = [], []
    for i in range(n):
        t0 = 100_000 + i * GAP_US + rng.uniform(0, 100)     # any phase against the samples
        a, b = rng.choice(4, 2, replace=False)
        hands += [Hand(int(a), t0, rng.uniform(250, 850), rng.uniform(500, 1500)),
                  Hand(int(b), t0 + spacing, rng.uniform(250, 850), rng.uniform(500, 1500))]
        truth.append((t0, int(a), int(b)))
    lines = run_firmware(hands, 100_000 + n * GAP_US, timeout=3600)
    slaps, bad = [], 0
    for t, text in lines:
        try:
            p = parse_line(text + "\n")
        except ProtocolError:
            bad += 1
            continue
        if isinstance(p, Slap):
            slaps.append((t, p))
    right = lines_first = 0
    onset_err, latency = [], []
    for t0, a, b in truth:
        got = [(t, s) for t, s in slaps if t0 - 1000 <= s.t_us <= t0 + GAP_US / 2]
        # The host orders a group's hands by the onset time each SLAP line carries (the
        # lines themselves leave in the order the core finishes with them).
        zones = [s.zone for _, s in sorted(got, key=lambda ts: ts[1].t_us)]
        in_line_order = [s.zone for _, s in got]
        right += zones[:2] == [a, b]
        lines_first += in_line_order[:1] == [a]
        for t, s in got:
            if s.zone == a:
                onset_err.append(s.t_us - t0)
                latency.append(t - t0)
                break
    return right, bad, onset_err, latency, lines_first


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1000, help="trials per spacing (1000)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if uno_elf() is None or not HARNESS.is_file():
        sys.exit("the firmware or its harness is not built: run firmware/build.sh (needs "
                 "gcc-avr avr-libc arduino-core-avr arduino-mk libsimavr-dev)")
    rng = np.random.default_rng(args.seed)
    for spacing in (100.0, 50.0, 20.0):
        right, bad, err, lat, lines_first = trials(spacing, args.trials, rng)
        # The firmware's micros() starts after boot, so its times sit a constant offset
        # from the simulator's: the offset is reported apart from the spread around it.
        offset = statistics.median(err)
        spread = statistics.median(abs(e - offset) for e in err)
        print(f"two hands {spacing:.0f} us apart: bottom hand first {right}/{args.trials} "
              f"({right / args.trials:.2%}); onset as reported: clock offset {offset:.0f} us, "
              f"error around it median {spread:.0f} us; onset -> SLAP "
              f"line sent: median {statistics.median(lat) / 1000:.2f} ms, max "
              f"{max(lat) / 1000:.2f} ms; bad lines {bad}; the bottom hand's line sent "
              f"first {lines_first}/{args.trials}", flush=True)
    lines = run_firmware([Hand(z, 100_000 + 3 * z) for z in range(4)], 2_300_000,
                         send=[(2_100_000, "HELLO")])
    slaps = [parse_line(t + "\n") for _, t in lines if t.startswith("SLAP")]
    hello = [parse_line(t + "\n") for _, t in lines if t.startswith("HELLO")]
    beats = [(t, parse_line(x + "\n")) for t, x in lines if x.startswith("HB")]
    print(f"four hands at once (3 us apart): {len(slaps)} SLAP lines, zones "
          f"{[s.zone for s in slaps]}, all checksums good; heartbeats every "
          f"{np.diff([t for t, _ in beats]).mean() / 1000:.1f} ms")
    # While streaming forces (STREAM 1, 50 lines a second), two hands 300 us apart.
    lines = run_firmware([Hand(1, 600_000), Hand(3, 600_300)], 1_200_000,
                         send=[(300_000, "STREAM 1")])
    kinds, bad = [], 0
    for _, text in lines:
        try:
            kinds.append(parse_line(text + "\n"))
        except ProtocolError:
            bad += 1
    order = [k.zone for k in kinds if isinstance(k, Slap)]
    seqs = [k.seq for k in kinds]
    print(f"slaps while streaming: {sum(isinstance(k, Force) for k in kinds)} force lines, "
          f"SLAP zones {order} (landed 1 then 3), bad lines {bad}, sequence gaps "
          f"{sum(b - a != 1 for a, b in zip(seqs, seqs[1:]))}")
    rates = [h.rate for h in hello]
    print(f"samples a second per zone, as the binary measures them (HELLO asked at 2.1 s): "
          f"{rates[-1] if len(rates) > 1 else '-'} (one sample of each zone every "
          f"{1e6 / rates[-1]:.0f} us; the HELLO at boot says {rates[0]}: not yet measured)"
          if rates else "no HELLO line")


if __name__ == "__main__":
    main()
