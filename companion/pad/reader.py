"""Reading the pad: a thread that survives everything a USB cable can do.

It finds the pad (or takes a port or a pyserial URL such as socket://host:port),
reads protocol lines, maps zones to seats, turns the pad's clock into the
host's, and puts SlapEvents on a queue the moment each line arrives. Hands of
one slap come as separate lines in onset order; each event says which group
it belongs to and how far behind the first hand it landed, so the referee
can take the first at once (no waiting) and the rest as later hands.

Unplugging, garbage, truncated lines, bad checksums, lost lines and a silent
pad are reported as StatusEvents and counted; none of them stops the thread.
"""

from __future__ import annotations

import collections
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from .protocol import VERSION, Cal, Force, Heartbeat, Hello, ProtocolError, Slap, parse_line

# USB IDs of boards the pad is built on (Arduino, CH340/CP210x clones, RP2040, ESP32-S2/S3).
PAD_USB_IDS = {(0x2341, None), (0x2A03, None), (0x1A86, 0x7523), (0x10C4, 0xEA60),
               (0x2E8A, None), (0x303A, None)}


@dataclass(frozen=True)
class SlapEvent:
    seat: int
    zone: int
    t: float                  # host clock (the reader's clock), seconds, of the onset
    t_pad_us: int             # pad clock, unwrapped, microseconds
    peak: int
    group: int                # hands of one slap share a group number
    behind_us: int            # how far after the group's first hand this one landed
    received: float           # host clock when the line arrived


@dataclass(frozen=True)
class GroupEvent:
    """One slap, all its hands: seats ordered by onset (bottom hand first), sent once the
    group window has passed. The referee takes each SlapEvent at once; this is the
    grouped view for logs and the display ("Ben first, by 3.2 ms")."""
    group: int
    seats: tuple[int, ...]
    behind_us: tuple[int, ...]
    t: float


@dataclass(frozen=True)
class StatusEvent:
    kind: str                 # connected, disconnected, silent, lost, bad_line, hello, cal, error
    message: str
    t: float
    data: dict = field(default_factory=dict)


def find_pad() -> str | None:
    """The first serial port that looks like a slap pad, or None."""
    from serial.tools import list_ports
    for p in list_ports.comports():
        text = f"{p.description} {p.product or ''} {p.manufacturer or ''}".lower()
        if "slappad" in text:
            return p.device
        for vid, pid in PAD_USB_IDS:
            if p.vid == vid and (pid is None or p.pid == pid):
                return p.device
    return None


class PadClock:
    """Pad microseconds (32-bit, wrapping) -> host seconds.

    The offset is the smallest (arrival - pad time) over recent heartbeats: the
    line that waited least in buffers is the best estimate of the true offset.
    """

    def __init__(self, window: int = 32) -> None:
        self._last: int | None = None
        self._high = 0
        self._offsets: collections.deque[float] = collections.deque(maxlen=window)

    def reset(self) -> None:
        self._last = None
        self._high = 0
        self._offsets.clear()

    def unwrap(self, t_us: int) -> int:
        if self._last is not None and t_us < self._last and self._last - t_us > (1 << 31):
            self._high += 1 << 32
        self._last = t_us
        return self._high + t_us

    def observe(self, t_pad_us: int, arrival: float) -> None:
        self._offsets.append(arrival - t_pad_us / 1e6)

    def to_host(self, t_pad_us: int, arrival: float) -> float:
        if not self._offsets:
            return arrival
        return t_pad_us / 1e6 + min(self._offsets)


HELLO_EVERY, HELLO_TRIES = 1.0, 5    # seconds between HELLO questions, and how many


class PadReader:
    def __init__(self, port: str, seats: dict[int, int] | None = None,
                 group_window_us: int = 40_000, heartbeat_timeout: float = 2.0,
                 reconnect_every: float = 0.5, clock: Callable[[], float] = time.monotonic,
                 on_line: Callable[[object], None] | None = None) -> None:
        self.port = port
        self.seats = dict(seats) if seats else {}
        self.group_window_us = group_window_us
        self.heartbeat_timeout = heartbeat_timeout
        self.reconnect_every = reconnect_every
        self.clock = clock
        self.on_line = on_line
        self.events: queue.Queue[SlapEvent | StatusEvent] = queue.Queue()
        self.stats = collections.Counter()
        self.latencies_us: collections.deque[float] = collections.deque(maxlen=10_000)
        self.pad_clock = PadClock()
        self._serial = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._buf = bytearray()
        self._expected_seq: int | None = None
        self._group = 0
        self._group_start: int | None = None
        self._members: list[SlapEvent] = []
        self._last_line = 0.0
        self._silent = False
        self._was_connected = False
        self._open_error: str | None = None
        self._hello_asks, self._hello_last = 0, 0.0   # HELLOs asked since connecting, last when
        self._hello_heard = False

    # ------------------------------------------------------------ lifecycle
    def start(self) -> "PadReader":
        self._thread = threading.Thread(target=self._run, name="pad-reader", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=2)
        self._close()

    def __enter__(self) -> "PadReader":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def send(self, command: str) -> bool:
        """A command to the pad (HELLO, CAL, STREAM 1); False when it is not connected."""
        ser = self._serial
        if ser is None:
            return False
        try:
            ser.write((command.strip() + "\n").encode("ascii"))
            return True
        except Exception:
            return False

    def _status(self, kind: str, message: str, **data) -> None:
        self.stats[kind] += 1
        self.events.put(StatusEvent(kind, message, self.clock(), data))

    def _close(self) -> None:
        ser, self._serial = self._serial, None
        if ser is not None:
            try:
                ser.close()
            except Exception:
                pass

    # ------------------------------------------------------------ the loop
    def _run(self) -> None:
        import serial
        while not self._stop.is_set():
            if self._serial is None:
                try:
                    self._serial = serial.serial_for_url(self.port, baudrate=115200, timeout=0.02,
                                                         do_not_open=False)
                except (serial.SerialException, OSError, ValueError) as exc:
                    msg = f"pad {self.port}: cannot open ({exc})"
                    if msg != self._open_error:     # say it once, then keep trying quietly
                        self._open_error = msg
                        self._status("error", msg)
                    self._stop.wait(self.reconnect_every)
                    continue
                self._open_error = None
                self._buf.clear()
                self._expected_seq = None
                self._last_line = self.clock()
                self._silent = False
                self._status("connected", f"pad {self.port}: " +
                             ("reconnected" if self._was_connected else "connected"))
                self._was_connected = True
                self._hello_heard = False
                self._hello_asks = 0
            # Ask who is there until the pad answers: a command sent while the board is
            # still starting (a Uno resets when its port opens) or the line settles is lost.
            now = self.clock()
            if (not self._hello_heard and self._hello_asks < HELLO_TRIES
                    and (not self._hello_asks or now - self._hello_last >= HELLO_EVERY)):
                self._hello_asks, self._hello_last = self._hello_asks + 1, now
                self.send("HELLO")
            try:
                chunk = self._serial.read(max(1, self._serial.in_waiting))
            except (serial.SerialException, OSError, TypeError, AttributeError) as exc:
                self._close()
                self._status("disconnected", f"pad {self.port}: disconnected ({exc}); "
                                             "reconnecting")
                continue
            now = self.clock()
            if self._members and now - self._members[0].received > self.group_window_us / 1e6:
                self._close_group()
            if not chunk:
                if not self._silent and now - self._last_line > self.heartbeat_timeout:
                    self._silent = True
                    self._status("silent", f"pad {self.port}: silent for "
                                           f"{self.heartbeat_timeout:.1f} s")
                continue
            self._buf.extend(chunk)
            while True:
                nl = self._buf.find(b"\n")
                if nl < 0:
                    if len(self._buf) > 512:          # a runaway line: drop it
                        self._buf.clear()
                        self._bad("malformed", "line too long")
                    break
                line = bytes(self._buf[:nl])
                del self._buf[:nl + 1]
                try:
                    self.handle_line(line, now)
                except Exception as exc:     # a bug here must not silence the pad
                    self._status("error", f"pad {self.port}: could not handle a line ({exc!r})")

    def _bad(self, kind: str, message: str) -> None:
        self.stats["bad_" + kind] += 1
        # Report the first and then every hundredth, so garbage cannot flood the log.
        n = self.stats["bad_" + kind]
        if n == 1 or n % 100 == 0:
            self._status("bad_line", f"pad {self.port}: {message} ({n} so far)", line_kind=kind)

    def handle_line(self, line: bytes, arrival: float) -> None:
        """One received line (public so tests and benchmarks can drive it directly)."""
        self._last_line = arrival
        if self._silent:
            self._silent = False
            self._status("connected", f"pad {self.port}: talking again")
        try:
            msg = parse_line(line)
        except ProtocolError as exc:
            self._bad(exc.kind, str(exc))
            return
        self.stats["lines"] += 1
        seq = msg.seq
        if isinstance(msg, Hello):
            if msg.version != VERSION:
                self._status("error", f"pad {self.port}: protocol version {msg.version}, this "
                                      f"companion speaks {VERSION}")
            self.pad_clock.reset()
            self._hello_heard = True
            self._status("hello", f"pad {self.port}: {msg.zones} zones, {msg.rate} samples/s "
                                  "per zone", zones=msg.zones, rate=msg.rate)
        elif self._expected_seq is not None and seq != self._expected_seq:
            lost = (seq - self._expected_seq) % 65536
            self.stats["lost_lines"] += lost
            self._status("lost", f"pad {self.port}: {lost} line(s) lost", lost=lost)
        self._expected_seq = (seq + 1) % 65536
        if isinstance(msg, Slap):
            self._slap(msg, arrival)
        elif isinstance(msg, Heartbeat):
            self.pad_clock.observe(self.pad_clock.unwrap(msg.t_us), arrival)
        elif isinstance(msg, Cal):
            self._status("cal", f"zone {msg.zone}: floor {msg.floor}, noise {msg.noise}",
                         zone=msg.zone, floor=msg.floor, noise=msg.noise)
        if self.on_line is not None and isinstance(msg, (Force, Slap)):
            self.on_line(msg)

    def _close_group(self) -> None:
        hands = sorted(self._members, key=lambda e: e.t_pad_us)
        self._members = []
        if hands:
            self.events.put(GroupEvent(hands[0].group, tuple(e.seat for e in hands),
                                       tuple(e.t_pad_us - hands[0].t_pad_us for e in hands),
                                       hands[0].t))

    def _slap(self, msg: Slap, arrival: float) -> None:
        t_pad = self.pad_clock.unwrap(msg.t_us)
        if self._group_start is None or t_pad - self._group_start > self.group_window_us \
                or t_pad < self._group_start - self.group_window_us:
            self._close_group()
            self._group += 1
            self._group_start = t_pad
        seat = self.seats.get(msg.zone, msg.zone)
        event = SlapEvent(seat=seat, zone=msg.zone, t=self.pad_clock.to_host(t_pad, arrival),
                          t_pad_us=t_pad, peak=msg.peak, group=self._group,
                          behind_us=max(0, t_pad - self._group_start), received=arrival)
        self.events.put(event)
        self._members.append(event)
        self.stats["slaps"] += 1
        self.latencies_us.append((self.clock() - arrival) * 1e6)
