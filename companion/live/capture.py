"""Frame sources: a webcam, a video file, a stream URL, or the renderer's table.

Live sources are read by a capture thread that keeps only the newest frame,
so slow work downstream drops stale frames instead of falling behind. Files
are read in order, every frame, as fast as the consumer takes them. A camera
that stops giving frames is reported once and reopened; the game state lives
elsewhere and is untouched.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator

import cv2
import numpy as np


@dataclass
class Frame:
    index: int
    t: float                  # seconds: video time for files, host clock for live sources
    image: np.ndarray


class SourceError(RuntimeError):
    """A source that cannot be opened; the message names it."""


def _open(spec: str | int) -> cv2.VideoCapture:
    # OpenCV logs its own errors for a missing camera; ours below says it in one line.
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    cap = cv2.VideoCapture(spec)
    if not cap.isOpened():
        raise SourceError(f"{spec}: cannot open (no such camera, file or stream)")
    return cap


class FileSource:
    """Every frame of a video file, in order; t is the frame's time in the video."""

    def __init__(self, path: str, start: int = 0) -> None:
        """start: the first frame given (those before are decoded and dropped: seeking
        in a compressed video can land on another frame)."""
        self.path = path
        self.cap = _open(path)
        self.fps = self.cap.get(cv2.CAP_PROP_FPS) or 30.0
        self.frames = int(self.cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        self.start = start

    def __iter__(self) -> Iterator[Frame]:
        i = 0
        while i < self.start and self.cap.grab():
            i += 1
        while True:
            ok, img = self.cap.read()
            if not ok:
                break
            yield Frame(i, i / self.fps, img)
            i += 1
        self.cap.release()


class LiveSource:
    """A camera index or stream URL, read by its own thread; the newest frame wins.

    paced: a video file played as a camera would deliver it (`watch --realtime`): one
    frame every 1/fps seconds whatever the consumer does, the newest winning, t the
    frame's time in the video; the source ends with the file."""

    def __init__(self, spec: str | int, clock: Callable[[], float] = time.monotonic,
                 reopen_every: float = 1.0, on_status: Callable[[str], None] | None = None,
                 opener: Callable[[str | int], cv2.VideoCapture] = _open,
                 paced: bool = False, video_time: bool = True) -> None:
        """video_time: a paced file's frames are stamped with their time in the video
        (watch --realtime); False: with the clock, as a camera's are (run on a file)."""
        self.spec = spec
        self.paced = paced
        self.video_time = video_time
        self._ended = False
        self.clock = clock
        self.reopen_every = reopen_every
        self.on_status = on_status or (lambda msg: None)
        self.opener = opener
        self.cap = opener(spec)
        self.fps = self.cap.get(cv2.CAP_PROP_FPS) or 30.0
        self._latest: Frame | None = None
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self.dropped = 0
        self._thread = threading.Thread(target=self._run, name="capture", daemon=True)
        self.started = time.monotonic()      # a paced file's frame i is due at started + i/fps
        self._thread.start()

    def _run(self) -> None:
        i = 0
        lost = False
        start = self.started
        while not self._stop.is_set():
            ok, img = (self.cap.read() if self.cap is not None else (False, None))
            if not ok and self.paced:
                with self._cond:
                    self._ended = True
                    self._cond.notify()
                return
            if not ok:
                if not lost:
                    lost = True
                    self.on_status(f"camera {self.spec}: no frames (unplugged?); retrying")
                if self.cap is not None:
                    self.cap.release()
                self.cap = None
                self._stop.wait(self.reopen_every)
                try:
                    self.cap = self.opener(self.spec)
                except SourceError:
                    self.cap = None
                continue
            if lost:
                lost = False
                self.on_status(f"camera {self.spec}: frames again; the game goes on")
            if self.paced:
                delay = start + i / self.fps - time.monotonic()
                if delay > 0:
                    self._stop.wait(delay)
            with self._cond:
                if self._latest is not None:
                    self.dropped += 1          # the consumer did not take the last one
                self._latest = Frame(i, i / self.fps if self.paced and self.video_time
                                     else self.clock(), img)
                self._cond.notify()
            i += 1

    def __iter__(self) -> Iterator[Frame]:
        while not self._stop.is_set():
            with self._cond:
                if self._latest is None and not self._ended:
                    self._cond.wait(0.5)
                frame, self._latest = self._latest, None
                ended = self._ended and frame is None
            if frame is not None:
                yield frame
            elif ended:
                break

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        if self.cap is not None:
            self.cap.release()


class CameraHealth:
    """What a camera's frames say about the camera: a picture all one shade (a covered or
    dead lens, a black frame) holds nothing to read and is skipped; the very same frame
    again and again is a frozen driver (a real sensor's noise changes every frame), which
    is said, since nothing that happens at the table is seen meanwhile. Each trouble is
    said once when it starts (after `after` seconds) and once when it ends."""

    def __init__(self, after: float = 0.3, frozen_after: float = 1.0, flat_std: float = 2.0,
                 dark: float = 16.0):
        self.after, self.frozen_after, self.flat_std = after, frozen_after, flat_std
        self.dark = dark
        self._flat_since: float | None = None
        self._same_since: float | None = None
        self._prev: np.ndarray | None = None
        self.trouble: str | None = None        # "no picture" or "frozen", while said

    def check(self, frame: Frame) -> tuple[bool, dict | None]:
        """(whether the frame can be read, a status record to say or None)."""
        img = frame.image
        sample = img[::8, ::8]                 # ~1/64 of the pixels: exact and cheap
        std = float(sample.std())
        # A covered lens is near black; a dead feed is one exact shade with no sensor
        # noise at all. An empty plain table is neither, though it can be as even (a dark
        # cloth: std 1.9), and its frames are still pictures.
        flat = std < self.flat_std and (float(sample.mean()) < self.dark or std < 0.5)
        same = self._prev is not None and self._prev.shape == sample.shape and \
            np.array_equal(self._prev, sample)
        self._prev = sample.copy()
        same = same and not flat                # a dark picture is no picture, not a freeze
        if not flat:
            self._flat_since = None
        elif self._flat_since is None:
            self._flat_since = frame.t
        if not same:
            self._same_since = None
        elif self._same_since is None:
            self._same_since = frame.t
        status = None
        if flat and frame.t - self._flat_since >= self.after and self.trouble != "no picture":
            self.trouble = "no picture"
            status = {"type": "camera", "status": "no picture", "t": frame.t,
                      "detail": f"the picture is all one shade (mean {float(sample.mean()):.0f}): "
                                "lens covered, or the camera dark"}
        elif same and frame.t - self._same_since >= self.frozen_after and \
                self.trouble != "frozen":
            self.trouble = "frozen"
            status = {"type": "camera", "status": "frozen", "t": frame.t,
                      "detail": "the same frame for "
                                f"{frame.t - self._same_since:.1f} s: the camera is stuck"}
        elif self.trouble is not None and not flat and not same:
            self.trouble = None
            status = {"type": "camera", "status": "ok", "t": frame.t,
                      "detail": "the picture is back"}
        return not flat, status


class SyntheticSource:
    """The renderer's table: a self-played game filmed live (no camera needed)."""

    def __init__(self, film, realtime: bool = False) -> None:
        self.film = film
        self.fps = float(film.fps)
        self.realtime = realtime

    def __iter__(self) -> Iterator[Frame]:
        t0 = time.monotonic()
        for i, img in enumerate(self.film.frames()):
            t = i / self.fps
            if self.realtime:
                delay = t0 + t - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            yield Frame(i, t, img)


def open_source(spec: str, on_status: Callable[[str], None] | None = None,
                as_camera: bool = True):
    """'0' or another number: a camera; a URL: a stream; otherwise a video file: played
    as a camera would show it (at its own frame rate, the newest frame winning, stamped
    with the clock), or with as_camera False every frame in order."""
    if spec.isdigit():
        return LiveSource(int(spec), on_status=on_status)
    if "://" in spec:
        return LiveSource(spec, on_status=on_status)
    if not as_camera:
        return FileSource(spec)
    return LiveSource(spec, on_status=on_status, paced=True, video_time=False)
