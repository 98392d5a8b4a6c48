"""A pad simulator that speaks the real protocol, so the whole path (pyserial
included) is tested without hardware: over TCP (pyserial URL socket://) or a
pseudo-terminal (a real serial device path, POSIX only)."""

from __future__ import annotations

import os
import random
import select
import socket
import threading
import time

from .protocol import VERSION, seal

U32 = 1 << 32


class PadSimulator:
    def __init__(self, zones: int = 4, transport: str = "socket", port: int = 0,
                 heartbeat: float = 0.5, rate: int = 14000, clock_start_us: int = 0) -> None:
        if transport not in ("socket", "pty"):
            raise ValueError("transport: 'socket' or 'pty'")
        self.zones, self.transport, self.heartbeat, self.rate = zones, transport, heartbeat, rate
        self._port = port
        self._t0 = time.monotonic()
        self._clock_start = clock_start_us
        self._seq = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._unplugged_until = 0.0
        self._client: socket.socket | None = None
        self._master: int | None = None
        self.url = ""
        self.streaming = False
        self.forces = [0] * zones
        self.commands: list[str] = []
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ clock & lines
    def now_us(self) -> int:
        return (self._clock_start + int((time.monotonic() - self._t0) * 1e6)) % U32

    def _next_seq(self) -> int:
        s = self._seq
        self._seq = (self._seq + 1) % 65536
        return s

    def send_raw(self, data: bytes) -> bool:
        with self._lock:
            try:
                if self._client is not None:
                    self._client.sendall(data)
                    return True
                if self._master is not None:
                    os.write(self._master, data)
                    return True
            except OSError:
                self._drop_client()
        return False

    def send(self, body: str) -> bool:
        return self.send_raw(seal(body).encode("ascii"))

    def hello(self) -> bool:
        return self.send(f"HELLO slappad {VERSION} {self.zones} {self.rate} {self._next_seq()}")

    def slap(self, zone: int, ago_us: int = 0, peak: int = 500) -> int:
        """Report a hand on `zone` that landed `ago_us` before now; returns its pad time."""
        t = (self.now_us() - ago_us) % U32
        self.send(f"SLAP {zone} {t} {peak} {self._next_seq()}")
        return t

    def slaps(self, hands: list[tuple[int, int]], peak: int = 500) -> list[int]:
        """Several hands of one slap: (zone, microseconds after the first), in onset order."""
        base = self.now_us()
        out = []
        for zone, after in sorted(hands, key=lambda h: h[1]):
            t = (base + after) % U32
            self.send(f"SLAP {zone} {t} {peak} {self._next_seq()}")
            out.append(t)
        return out

    def lose_lines(self, n: int) -> None:
        """The next n sequence numbers never arrive (a noisy cable)."""
        self._seq = (self._seq + n) % 65536

    def unplug(self, seconds: float) -> None:
        """Drop the connection and refuse new ones for a while (socket transport)."""
        self._unplugged_until = time.monotonic() + seconds
        with self._lock:
            self._drop_client()

    def _drop_client(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            except OSError:
                pass
            self._client = None

    # ------------------------------------------------------------ serving
    def start(self) -> "PadSimulator":
        if self.transport == "socket":
            self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._server.bind(("127.0.0.1", self._port))
            self._server.listen(1)
            self._server.settimeout(0.05)
            self.url = f"socket://127.0.0.1:{self._server.getsockname()[1]}"
        else:
            import tty
            master, slave = os.openpty()
            tty.setraw(slave)
            self._master, self._slave = master, slave
            self.url = os.ttyname(slave)
        self._thread = threading.Thread(target=self._serve, name="pad-sim", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=2)
        with self._lock:
            self._drop_client()
        if self.transport == "socket":
            self._server.close()
        elif self._master is not None:
            os.close(self._master)
            os.close(self._slave)
            self._master = None

    def __enter__(self) -> "PadSimulator":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _serve(self) -> None:
        last_hb = last_stream = 0.0
        inbox = b""
        while not self._stop.is_set():
            if self.transport == "socket" and self._client is None:
                try:
                    conn, _ = self._server.accept()
                except (socket.timeout, OSError):
                    continue
                if time.monotonic() < self._unplugged_until:
                    conn.close()
                    continue
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with self._lock:
                    self._client = conn
                self.hello()
            fd = self._client.fileno() if self._client is not None else self._master
            if fd is None or fd < 0:
                time.sleep(0.01)
                continue
            try:
                ready, _, _ = select.select([fd], [], [], 0.01)
            except (OSError, ValueError):
                continue
            if ready:
                try:
                    data = self._client.recv(256) if self._client is not None else \
                        os.read(fd, 256)
                except OSError:
                    data = b""
                if not data and self._client is not None:
                    with self._lock:
                        self._drop_client()
                    continue
                inbox += data
                while b"\n" in inbox:
                    cmd, inbox = inbox.split(b"\n", 1)
                    self._command(cmd.decode("ascii", "replace").strip())
            now = time.monotonic()
            if self.heartbeat and now - last_hb >= self.heartbeat:
                last_hb = now
                self.send(f"HB {self.now_us()} {self._next_seq()}")
            if self.streaming and now - last_stream >= 0.02:
                last_stream = now
                vals = " ".join(str(max(0, v + random.randint(-2, 2))) for v in self.forces)
                self.send(f"F {vals} {self._next_seq()}")

    def _command(self, cmd: str) -> None:
        self.commands.append(cmd)
        if cmd == "HELLO":
            self.hello()
        elif cmd == "CAL":
            for z in range(self.zones):
                self.send(f"CAL {z} {100 + z} 2 {self._next_seq()}")
        elif cmd in ("STREAM 1", "STREAM 0"):
            self.streaming = cmd.endswith("1")
