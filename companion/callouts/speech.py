"""Offline speech: eSpeak NG from the espeakng-loader wheel (library and voice
data inside the wheel, nothing downloaded), driven through ctypes.

Why eSpeak NG and this wheel: it installs with pip alone, needs no audio
server to synthesise (samples come back through a callback, so speech can be
rendered to a buffer or file where no sound device exists), and speaks a
short phrase in a few milliseconds. pyttsx3 would need a system espeak and an
audio device; neural voices (piper) need model downloads.

The speaker never blocks the vision loop: `say()` only queues. Urgent calls
(a slap pattern, an award) cut off chatter (a card name) mid-word, and calls
that waited too long are dropped rather than spoken late.
"""

from __future__ import annotations

import ctypes
import heapq
import itertools
import os
import shutil
import subprocess
import threading
import time
import wave
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

URGENT = {"pattern", "award", "wrong_slap", "challenge", "challenge_won", "out", "hand_over",
          "match_over", "unclear"}
MAX_AGE = {True: 3.0, False: 1.2}      # seconds a call may wait before it is stale

_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int,
                             ctypes.c_void_p)


class SpeechError(RuntimeError):
    pass


class Espeak:
    """The eSpeak NG library, synthesising into Python (AUDIO_OUTPUT_SYNCHRONOUS)."""

    _lock = threading.Lock()

    def __init__(self, voice: str = "en-us", rate: int = 190) -> None:
        try:
            import espeakng_loader
        except ImportError:
            raise SpeechError("espeakng-loader is not installed") from None
        lib = ctypes.CDLL(espeakng_loader.get_library_path())
        data = espeakng_loader.get_data_path()
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_Synth.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int,
                                     ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        # The path is the folder that holds espeak-ng-data.
        rate_hz = lib.espeak_Initialize(2, 0, os.path.dirname(data).encode(), 0)
        if rate_hz <= 0:
            raise SpeechError(f"eSpeak NG did not start (data in {data})")
        self.sample_rate = rate_hz
        lib.espeak_SetVoiceByName(voice.encode())
        lib.espeak_SetParameter(1, rate, 0)          # espeakRATE, words per minute
        self.lib = lib
        self._sink: Callable[[np.ndarray], bool] | None = None
        self._cb = _CALLBACK(self._on_samples)       # keep a reference: C holds the pointer
        lib.espeak_SetSynthCallback(self._cb)

    def _on_samples(self, wav, n, events) -> int:
        if n > 0 and self._sink is not None:
            chunk = np.ctypeslib.as_array(wav, shape=(n,)).copy()
            if not self._sink(chunk):
                return 1                              # abort: an urgent call cut in
        return 0

    def synth(self, text: str, sink: Callable[[np.ndarray], bool]) -> None:
        """Speak text, handing each chunk of 16-bit samples to sink (False aborts)."""
        data = text.encode("utf-8") + b"\0"
        with self._lock:
            self._sink = sink
            try:
                self.lib.espeak_Synth(data, len(data), 0, 1, 0, 0, None, None)
            finally:
                self._sink = None

    def render(self, text: str) -> np.ndarray:
        chunks: list[np.ndarray] = []
        self.synth(text, lambda c: chunks.append(c) is None)
        return np.concatenate(chunks) if chunks else np.zeros(0, np.int16)


class AudioOut:
    """Where samples go: a sound device (aplay or sounddevice) or nowhere (text only)."""

    def __init__(self, sample_rate: int, kind: str = "auto") -> None:
        self.sample_rate = sample_rate
        self.kind = "none"
        self._proc: subprocess.Popen | None = None
        self._sd = None
        if kind in ("auto", "sounddevice"):
            try:
                import sounddevice as sd
                sd.query_devices(kind="output")
                self._sd = sd.RawOutputStream(samplerate=sample_rate, channels=1, dtype="int16")
                self._sd.start()
                self.kind = "sounddevice"
                return
            except Exception:
                self._sd = None
        if kind in ("auto", "aplay") and shutil.which("aplay") and Path("/dev/snd").exists():
            self.kind = "aplay"

    def write(self, samples: np.ndarray) -> None:
        if self.kind == "sounddevice":
            self._sd.write(samples.tobytes())
        elif self.kind == "aplay":
            if self._proc is None or self._proc.poll() is not None:
                self._proc = subprocess.Popen(
                    ["aplay", "-q", "-t", "raw", "-f", "S16_LE", "-c", "1", "-r",
                     str(self.sample_rate)], stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
            try:
                self._proc.stdin.write(samples.tobytes())
            except (BrokenPipeError, OSError):
                self._proc = None


@dataclass(order=True)
class _Item:
    priority: int
    seq: int
    text: str = field(compare=False)
    urgent: bool = field(compare=False)
    created: float = field(compare=False)


class Speaker:
    """A queue in front of the voice: urgent first, chatter cut off, stale dropped."""

    def __init__(self, engine: Espeak | None = None, audio: str = "auto",
                 clock: Callable[[], float] = time.perf_counter, record: bool = False,
                 out: AudioOut | None = None) -> None:
        self.engine = engine or Espeak()
        self.out = out or AudioOut(self.engine.sample_rate, audio)
        self.clock = clock
        self.record = record
        self.spoken: list[tuple[str, np.ndarray]] = []     # (text, samples) when recording
        self.first_sample_ms: list[float] = []
        self.dropped: list[str] = []
        self.cut: list[str] = []
        self._heap: list[_Item] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._current: _Item | None = None
        self._abort = False
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="speech", daemon=True)
        self._thread.start()

    @property
    def has_audio(self) -> bool:
        return self.out.kind != "none"

    def say(self, ann: dict | str, text: str | None = None) -> None:
        """Queue a call; returns at once."""
        kind = ann.get("type") if isinstance(ann, dict) else "text"
        text = text if text is not None else str(ann)
        urgent = kind in URGENT
        item = _Item(0 if urgent else 1, next(self._seq), text, urgent, self.clock())
        with self._cond:
            if not urgent:
                # Only the newest chatter matters: a card name behind another is stale.
                kept = [i for i in self._heap if i.urgent]
                self.dropped += [i.text for i in self._heap if not i.urgent]
                self._heap = kept
                heapq.heapify(self._heap)
            elif self._current is not None and not self._current.urgent:
                self._abort = True                  # cut the card name off mid-word
            heapq.heappush(self._heap, item)
            self._cond.notify()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        end = time.monotonic() + timeout
        with self._cond:
            while (self._heap or self._current) and time.monotonic() < end:
                self._cond.wait(0.02)
            return not (self._heap or self._current)

    def close(self) -> None:
        with self._cond:
            self._stop = True
            self._abort = True
            self._cond.notify()
        self._thread.join(timeout=3)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
                item = heapq.heappop(self._heap)
                if self.clock() - item.created > MAX_AGE[item.urgent]:
                    self.dropped.append(item.text)
                    continue
                self._current = item
                self._abort = False
            chunks: list[np.ndarray] = []
            first = [True]

            def sink(chunk: np.ndarray) -> bool:
                if first[0]:
                    first[0] = False
                    self.first_sample_ms.append((self.clock() - item.created) * 1000)
                if self._abort:
                    self.cut.append(item.text)
                    return False
                if self.record:
                    chunks.append(chunk)
                self.out.write(chunk)
                return True

            try:
                self.engine.synth(item.text, sink)
            except Exception:       # a voice failure must not stop the referee
                pass
            with self._cond:
                if self.record:
                    self.spoken.append((item.text, np.concatenate(chunks) if chunks else
                                        np.zeros(0, np.int16)))
                self._current = None
                self._cond.notify_all()


def write_wav(path: str | Path, samples: np.ndarray, rate: int) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.astype(np.int16).tobytes())
