"""Pad host figures: latency from a received line to its slap event, and a fuzz run.

    python benchmarks/bench_pad.py [--slaps 2000] [--fuzz 1000000]

Latency is measured inside the reader thread, from the moment the bytes of a line
were read from the port (pyserial, socket:// to the simulator) to the moment the
SlapEvent is on the queue. The fuzz feeds random and mutated lines to the parser:
it must never raise anything but ProtocolError, and never accept a line whose
checksum does not match.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from companion.pad import PadReader, ProtocolError, parse_line, seal
from companion.pad.protocol import Slap, checksum
from companion.pad.sim import PadSimulator


def latency(n: int) -> None:
    sim = PadSimulator(heartbeat=0.2).start()
    reader = PadReader(sim.url).start()
    time.sleep(0.5)
    for i in range(n):
        sim.slap(i % 4)
        if i % 50 == 0:
            time.sleep(0.002)
    deadline = time.monotonic() + 10
    while reader.stats["slaps"] < n and time.monotonic() < deadline:
        time.sleep(0.01)
    lat = sorted(reader.latencies_us)
    reader.stop()
    sim.stop()
    print(f"pad latency, line received -> slap event: median {statistics.median(lat):.1f} us, "
          f"p95 {lat[int(len(lat) * 0.95)]:.1f} us over {len(lat)} slaps (target median <= 1 ms)")


def fuzz(n: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    bases = [seal(b).encode() for b in ("SLAP 2 123456 812 17", "HB 99 3",
                                        "HELLO slappad 1 4 14000 0", "CAL 1 100 2 4",
                                        "F 10 20 30 40 5")]
    crashes = invented = accepted = 0
    t0 = time.perf_counter()
    for i in range(n):
        if i % 4 == 0:
            data = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 40)))
        else:
            data = bytearray(rng.choice(bases))
            for _ in range(rng.randint(1, 3)):
                op, pos = rng.randrange(4), rng.randrange(len(data) + 1)
                if op == 0 and pos < len(data):
                    data[pos] = rng.getrandbits(8)
                elif op == 1:
                    data.insert(pos, rng.getrandbits(8))
                elif op == 2 and data:
                    del data[min(pos, len(data) - 1)]
                else:
                    data = data[:pos]
            data = bytes(data)
        try:
            msg = parse_line(data)
        except ProtocolError:
            continue
        except Exception:
            crashes += 1
            continue
        accepted += 1
        body, ck = data.rstrip(b"\r\n").rsplit(b"*", 1)
        if checksum(body) != int(ck, 16) and isinstance(msg, Slap):
            invented += 1
    dt = time.perf_counter() - t0
    print(f"fuzz: {n:,} lines in {dt:.1f} s; crashes {crashes}, slaps from bad checksums "
          f"{invented}, accepted (valid after mutation) {accepted}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slaps", type=int, default=2000)
    ap.add_argument("--fuzz", type=int, default=1_000_000)
    args = ap.parse_args()
    latency(args.slaps)
    fuzz(args.fuzz)


if __name__ == "__main__":
    main()
