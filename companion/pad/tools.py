"""`companion pad-sim` and `companion pad-test`: a pad without hardware, and a live view
of a real one while building it."""

from __future__ import annotations

import queue
import random
import sys
import time
from pathlib import Path

from .protocol import Force
from .reader import PadReader, SlapEvent, StatusEvent, find_pad
from .sim import PadSimulator


def run_firmware_sim(elf: str | None, every: float, seconds: float | None,
                     out=sys.stdout) -> int:
    """The pad's real firmware in simavr behind a pseudo-terminal (companion.pad.firmware)."""
    from .firmware import start_live
    proc, path = start_live(every, seconds, Path(elf) if elf else None)
    print(f"pad firmware (simulated ATmega328P) on {path}; connect with: companion pad-test "
          f"{path}", file=out, flush=True)
    try:
        for line in proc.stdout:
            if line.startswith("HAND "):
                _, zone, behind = line.split()
                print(f"hand: zone {zone} {behind} ms", file=out, flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        proc.kill()
        proc.wait()
    return 0


def run_pad_sim(transport: str, port: int, zones: int, every: float, seconds: float | None,
                out=sys.stdout) -> int:
    sim = PadSimulator(zones=zones, transport=transport, port=port).start()
    print(f"pad simulator on {sim.url} ({zones} zones); "
          f"connect with: companion pad-test {sim.url}", file=out, flush=True)
    end = time.monotonic() + seconds if seconds else None
    rng = random.Random(0)
    try:
        while end is None or time.monotonic() < end:
            time.sleep(every)
            hands = [(rng.randrange(zones), 0)]
            if rng.random() < 0.4:   # a second hand a few milliseconds behind
                other = rng.choice([z for z in range(zones) if z != hands[0][0]] or [0])
                hands.append((other, rng.randint(200, 30_000)))
            sim.forces = [rng.randint(300, 900) if any(z == h[0] for h in hands) else 100
                          for z in range(zones)]
            sim.slaps(hands, peak=rng.randint(300, 900))
            print("slap: " + ", ".join(f"zone {z} +{d / 1000:.1f} ms" for z, d in hands),
                  file=out, flush=True)
            sim.forces = [100] * zones
    except KeyboardInterrupt:
        pass
    finally:
        sim.stop()
    return 0


def run_pad_test(port: str | None, seconds: float | None, out=sys.stdout) -> int:
    port = port or find_pad()
    if port is None:
        print("companion pad-test: no pad found on any serial port; name one "
              "(e.g. /dev/ttyACM0 or socket://127.0.0.1:7777)", file=sys.stderr)
        return 2
    forces: list[int] = []
    lines: queue.Queue = queue.Queue()

    def on_line(msg) -> None:
        lines.put(msg)

    reader = PadReader(port, on_line=on_line).start()
    tty = out.isatty()
    end = time.monotonic() + seconds if seconds else None
    sent = False
    last_draw = 0.0
    try:
        while end is None or time.monotonic() < end:
            if not sent and reader.send("STREAM 1"):
                reader.send("CAL")
                sent = True
            try:
                ev = reader.events.get(timeout=0.05)
            except queue.Empty:
                ev = None
            if isinstance(ev, StatusEvent):
                print(("\n" if tty else "") + ev.message, file=out, flush=True)
            elif isinstance(ev, SlapEvent):
                print(("\n" if tty else "") + f"onset: zone {ev.zone} peak {ev.peak} "
                      f"(group {ev.group}, +{ev.behind_us / 1000:.2f} ms)", file=out, flush=True)
            while not lines.empty():
                msg = lines.get()
                if isinstance(msg, Force):
                    forces = list(msg.values)
            now = time.monotonic()
            if forces and now - last_draw > (0.1 if tty else 1.0):
                last_draw = now
                bars = "  ".join(f"{z}:{'#' * (v * 20 // 1024):<20}{v:>5}"
                                 for z, v in enumerate(forces))
                print(("\r" if tty else "") + bars, end="" if tty else "\n", file=out, flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        reader.send("STREAM 0")
        reader.stop()
    print(("\n" if tty else "") + f"lines {reader.stats['lines']}, slaps {reader.stats['slaps']}, "
          f"bad {reader.stats['bad_checksum'] + reader.stats['bad_malformed']}, "
          f"lost {reader.stats['lost_lines']}", file=out)
    return 0
