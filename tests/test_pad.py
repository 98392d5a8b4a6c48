"""The pad host side through real pyserial, against the simulator."""

from __future__ import annotations

import queue
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.pad import PadReader, ProtocolError, SlapEvent, StatusEvent, parse_line, seal
from companion.pad.protocol import Force, Heartbeat, Hello, Slap, checksum
from companion.pad.reader import PadClock
from companion.pad.sim import PadSimulator


def drain(reader, until=None, timeout=2.0):
    """Collect events until `until(events)` is true or the timeout passes."""
    out, end = [], time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            out.append(reader.events.get(timeout=0.02))
        except queue.Empty:
            pass
        if until and until(out):
            break
    return out


def slaps(events):
    return [e for e in events if isinstance(e, SlapEvent)]


def kinds(events):
    return [e.kind for e in events if isinstance(e, StatusEvent)]


# ---------------------------------------------------------------- protocol

def test_parse_each_line_kind():
    assert parse_line(seal("SLAP 2 123456 812 17")) == Slap(2, 123456, 812, 17)
    assert parse_line(seal("HB 4294967295 65535").encode()) == Heartbeat(4294967295, 65535)
    assert parse_line(seal("HELLO slappad 1 4 14000 0")) == Hello(1, 4, 14000, 0)
    assert parse_line(seal("F 1 2 3 4 9")) == Force((1, 2, 3, 4), 9)
    assert seal("SLAP 2 123456 812 17") == "SLAP 2 123456 812 17*%02X\n" % checksum(
        "SLAP 2 123456 812 17")


def test_a_line_ending_ff_with_a_wrong_checksum_is_refused():
    body = "SLAP 2 123456 812 17"
    assert checksum(body) != 0xFF                 # so *FF is wrong for it
    for tail in ("*FF", "*ff"):
        with pytest.raises(ProtocolError) as err:
            parse_line(body + tail)
        assert err.value.kind == "checksum"


@pytest.mark.parametrize("line,kind", [
    ("SLAP 2 123456 812 17*00", "checksum"),
    ("SLAP 2 123456 812 17", "malformed"),
    ("SLAP 2 123456 812*" + "%02X" % checksum("SLAP 2 123456 812"), "malformed"),
    (seal("SLAP 99 1 1 1"), "malformed"),
    (seal("SLAP 1 4294967296 1 1"), "malformed"),
    (seal("SLAP 1 -5 1 1"), "malformed"),
    ("SLAP 1 \u0661\u0662 1 1*00", "malformed"),
    ("\xff\xfe*00", "malformed"),
    (seal("NOPE 1 2"), "malformed"),
])
def test_bad_lines_are_refused(line, kind):
    with pytest.raises(ProtocolError) as err:
        parse_line(line)
    assert err.value.kind == kind


VALID = [seal(b) for b in ("SLAP 2 123456 812 17", "HB 99 3", "HELLO slappad 1 4 14000 0",
                           "CAL 1 100 2 4", "F 10 20 30 40 5")]


@settings(max_examples=2000, deadline=None)
@given(base=st.sampled_from(VALID), cuts=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 255)),
                                                 max_size=4), junk=st.binary(max_size=8))
def test_fuzzed_lines_never_crash_and_never_pass_a_bad_checksum(base, cuts, junk):
    data = bytearray(base.encode())
    for pos, byte in cuts:
        op = byte % 3
        pos %= len(data) + 1
        if op == 0 and pos < len(data):
            data[pos] = byte
        elif op == 1:
            data.insert(pos, byte)
        elif data:
            del data[min(pos, len(data) - 1)]
    data += junk if cuts and cuts[0][1] % 2 else b""
    try:
        msg = parse_line(bytes(data))
    except ProtocolError:
        return
    body, ck = bytes(data).rstrip(b"\r\n").rsplit(b"*", 1)
    assert checksum(body) == int(ck, 16)   # anything accepted carries a matching checksum
    assert msg is not None


def test_pad_clock_unwraps_and_maps_to_the_host():
    c = PadClock()
    assert c.unwrap(4294967000) == 4294967000
    assert c.unwrap(500) == 4294967296 + 500
    c.observe(1_000_000, arrival=50.004)
    c.observe(2_000_000, arrival=51.001)      # this one waited less: the better offset
    assert c.to_host(3_000_000, arrival=0) == pytest.approx(52.001)


# ---------------------------------------------------------------- reader + simulator

@pytest.fixture
def pad():
    sim = PadSimulator(heartbeat=0.1).start()
    reader = PadReader(sim.url, seats={0: 0, 1: 1, 2: 2, 3: 3}, heartbeat_timeout=0.5,
                       reconnect_every=0.1).start()
    drain(reader, lambda ev: "hello" in kinds(ev))
    yield sim, reader
    reader.stop()
    sim.stop()


def test_hands_of_one_slap_come_in_onset_order_and_share_a_group(pad):
    sim, reader = pad
    reader.seats = {0: 2, 1: 0, 2: 1}
    sim.slaps([(2, 1800), (1, 0), (0, 100)])      # onsets 0, 100 us, 1.8 ms
    ev = slaps(drain(reader, lambda e: len(slaps(e)) == 3))
    assert [e.seat for e in ev] == [0, 2, 1]      # zone 1 -> seat 0 first: the bottom hand
    assert len({e.group for e in ev}) == 1
    assert [e.behind_us for e in ev] == [0, 100, 1800]
    # Once the window has passed, the whole slap comes as one event, bottom hand first.
    group = [e for e in drain(reader, lambda x: any(type(e).__name__ == "GroupEvent" for e in x))
             if type(e).__name__ == "GroupEvent"]
    assert group and group[0].seats == (0, 2, 1) and group[0].behind_us == (0, 100, 1800)
    time.sleep(0.1)
    sim.slap(3)                                   # 100 ms later: a new slap
    (later,) = slaps(drain(reader, lambda e: len(slaps(e)) == 1))
    assert later.group == ev[0].group + 1


def test_onset_time_maps_to_the_host_clock(pad):
    sim, reader = pad
    time.sleep(0.35)                              # a few heartbeats to fix the offset
    t_before = time.monotonic()
    sim.slap(0, ago_us=5000)
    (e,) = slaps(drain(reader, lambda ev: len(slaps(ev)) == 1))
    assert t_before - 0.02 < e.t + 0.005 < time.monotonic() + 0.02


def test_garbage_truncated_and_bad_checksums_invent_no_slap(pad):
    sim, reader = pad
    sim.send_raw(b"\x00\xff garbage \n")
    sim.send_raw(b"SLAP 1 123 500 7*00\n")                     # bad checksum
    sim.send_raw(b"SLAP 1 12")                                 # truncated...
    sim.send_raw(seal("HB 1 1").encode())                      # ...runs into the next line
    sim.send_raw(("x" * 700).encode())                         # a runaway line
    sim.send_raw(b"\n")
    time.sleep(0.3)
    sim.slap(2)
    ev = drain(reader, lambda e: len(slaps(e)) >= 1)
    assert [e.zone for e in slaps(ev)] == [2]
    assert reader.stats["bad_checksum"] >= 1 and reader.stats["bad_malformed"] >= 2


def test_lost_lines_are_counted_and_reported(pad):
    sim, reader = pad
    sim.lose_lines(3)
    sim.slap(1)
    ev = drain(reader, lambda e: len(slaps(e)) == 1)
    assert "lost" in kinds(ev) and reader.stats["lost_lines"] == 3
    assert len(slaps(ev)) == 1


def test_silent_pad_is_reported():
    sim = PadSimulator(heartbeat=0).start()
    reader = PadReader(sim.url, heartbeat_timeout=0.3).start()
    try:
        ev = drain(reader, lambda e: "silent" in kinds(e), timeout=3)
        assert "silent" in kinds(ev)
        sim.slap(0)
        ev = drain(reader, lambda e: len(slaps(e)) == 1)
        assert len(slaps(ev)) == 1
    finally:
        reader.stop()
        sim.stop()


def test_unplug_and_replug_reconnects_and_loses_no_later_slap(pad):
    sim, reader = pad
    sim.unplug(0.4)
    ev = drain(reader, lambda e: "connected" in kinds(e)[1:] or
               ("disconnected" in kinds(e) and kinds(e)[-1] == "connected"), timeout=4)
    ks = kinds(ev)
    assert "disconnected" in ks and ks.index("connected", ks.index("disconnected")) > 0
    assert any("reconnected" in e.message for e in ev if isinstance(e, StatusEvent))
    drain(reader, lambda e: "hello" in kinds(e), timeout=1)
    for zone in (0, 1, 2):
        sim.slap(zone)
        time.sleep(0.05)
    got = slaps(drain(reader, lambda e: len(slaps(e)) == 3))
    assert [e.zone for e in got] == [0, 1, 2]


def test_a_port_that_does_not_exist_is_one_clear_message():
    reader = PadReader("/dev/does-not-exist-pad", reconnect_every=0.05).start()
    try:
        ev = drain(reader, lambda e: len(e) >= 1, timeout=2)
        time.sleep(0.3)
        assert reader.events.qsize() == 0          # said once, not every retry
        (status,) = ev
        assert status.kind == "error" and "/dev/does-not-exist-pad" in status.message
    finally:
        reader.stop()


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_pty_transport_is_a_real_serial_device():
    sim = PadSimulator(transport="pty", heartbeat=0.1).start()
    reader = PadReader(sim.url).start()
    try:
        drain(reader, lambda e: "hello" in kinds(e))
        reader.send("CAL")
        sim.slap(3, peak=640)
        ev = drain(reader, lambda e: len(slaps(e)) == 1 and kinds(e).count("cal") == 4)
        (s,) = slaps(ev)
        assert s.zone == 3 and s.peak == 640
        assert kinds(ev).count("cal") == 4 and "CAL" in sim.commands
    finally:
        reader.stop()
        sim.stop()


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_the_reader_asks_hello_again_until_the_pad_answers():
    """A HELLO sent while the board is still starting is lost (a Uno resets when its port
    opens; the simulated firmware may not have booted): the reader asks again each second
    until the pad answers, then stops asking."""
    import os
    import pty
    import select

    from companion.pad.reader import HELLO_EVERY
    master, slave = pty.openpty()
    reader = PadReader(os.ttyname(slave)).start()
    asked = []

    def read_for(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if select.select([master], [], [], 0.05)[0]:
                asked.extend(ln for ln in os.read(master, 1024).split(b"\n") if ln.strip())
    try:
        read_for(2.5 * HELLO_EVERY)
        assert asked.count(b"HELLO") >= 2           # unanswered: asked again
        os.write(master, seal("HELLO slappad 1 4 0 0").encode())
        drain(reader, lambda e: "hello" in kinds(e), timeout=2)
        n = asked.count(b"HELLO")
        read_for(2.5 * HELLO_EVERY)
        assert asked.count(b"HELLO") <= n + 1       # answered: no more questions
    finally:
        reader.stop()
        os.close(master)
        os.close(slave)
