"""Speech: from an announcement to the first audio sample, rendered to a buffer.

    python benchmarks/bench_speech.py [--calls 200]

Where no sound device exists the samples go to a buffer; the time measured is
from `Speaker.say()` (the referee's announcement) to the synthesiser handing
over its first chunk of samples. Target: median <= 50 ms.
"""

from __future__ import annotations

import argparse
import statistics
import time

from companion.callouts.speech import Espeak, Speaker

PHRASES = ["Seven of hearts.", "Double! Sevens.", "Sandwich!", "King — Ben, three chances.",
           "Ben, two left.", "Ada takes the pile, twelve cards.", "Wrong slap, Cho pays two.",
           "Cho is out."]


class Buffer:
    kind = "buffer"

    def write(self, samples) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    engine = Espeak()
    sp = Speaker(engine, out=Buffer())
    for i in range(args.calls):
        sp.say({"type": "pattern"}, PHRASES[i % len(PHRASES)])
        sp.wait_idle()
        time.sleep(0.002)
    sp.close()
    lat = sorted(sp.first_sample_ms)
    t0 = time.perf_counter()
    audio = engine.render("Ada takes the pile, twelve cards.")
    dt = (time.perf_counter() - t0) * 1000
    print(f"speech: announcement -> first audio sample median {statistics.median(lat):.1f} ms, "
          f"p95 {lat[int(len(lat) * 0.95)]:.1f} ms over {len(lat)} calls (target median <= 50)")
    print(f"a whole phrase ({len(audio) / engine.sample_rate:.2f} s of audio) renders in "
          f"{dt:.1f} ms")


if __name__ == "__main__":
    main()
