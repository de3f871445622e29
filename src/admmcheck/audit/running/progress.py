"""The record an audit worker keeps of where it is, in memory it shares with its supervisor and the process
that drives it: which sample it is on and since when its current call of third-party code runs.

The worker writes it before and after every call (two numbers, ~0.1 µs); the supervisor's watchdog reads it
to stop a call that overruns its time (:mod:`admmcheck.audit.running.supervisor`), and the driving process reads it
to name the sample of any fault, a death included (:mod:`admmcheck.audit.running.worker_process`). It lives in a
memory file (``memfd``) whose descriptor the three processes share; the worker maps it and closes the
descriptor (mapped with the C library's ``mmap``: Python's ``mmap`` keeps a duplicate descriptor, into which code
that writes to every descriptor would write), so code that closes or writes into every descriptor cannot take
the record away. Standard library only: the supervisor imports it.

It also holds the tail of what the worker's code printed: the supervisor reads the worker's stdout and
stderr (one pipe) and keeps their last 64 KiB here, so a fault can show it (:meth:`Progress.tail`).

Layout: slot 0 (float64) the ``time.monotonic()`` at which the current call of third-party code started, 0.0
outside such calls; slots 1-9 (int64) the phase, seed, pair, side, block, index, block size, a flag set by a child
of ``os.fork`` that returned from a call, and the bytes printed so far; bytes 1,024 to 4,095 the worker's last
words (UTF-8, NUL-terminated), written where it stops on its own (or the sample of that fork's call); bytes 4,096
on a ring of the printed bytes (byte i of the output at 4,096 + i mod 65,536).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
import tempfile

RECORD, TAIL = 4096, 1 << 16
SIZE = RECORD + TAIL
STARTED, PHASE, SEED, PAIR, SIDE, BLOCK, INDEX, COUNT, FORKED, WRITTEN = range(10)
WORDS_AT, WORDS_SIZE = 1024, RECORD - 1024

#: What the worker is doing: its own code (between calls), loading the mechanism and its neighbours (their
#: import and the neighbours' call run third-party code), a call of the mechanism, a vectorised batch call.
IDLE, LOADING, CALL, BATCH = 0, 1, 2, 3


def create_file() -> int:
    """A new zeroed shared-memory file of :data:`SIZE` bytes: its descriptor (not inheritable)."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("admmcheck-progress", os.MFD_CLOEXEC)
    else:  # pragma: no cover - platforms without memfd
        handle = tempfile.TemporaryFile()
        fd = os.dup(handle.fileno())
        handle.close()
    os.ftruncate(fd, SIZE)
    return fd


def _mapped(fd: int):
    """The file ``fd`` mapped shared and writable, holding no descriptor of its own (a ctypes array); Python's
    ``mmap`` (which keeps a duplicate descriptor) where the C library cannot be reached."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                              ctypes.c_long)
        address = libc.mmap(None, SIZE, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, 0)
    except (OSError, AttributeError):  # pragma: no cover - no C library to call
        address = None
    if address is None or address == ctypes.c_void_p(-1).value or not sys.platform.startswith(("linux", "darwin")):
        return mmap.mmap(fd, SIZE)
    return (ctypes.c_char * SIZE).from_address(address)  # unmapped when the process ends


class Progress:
    """The shared record over the file ``fd`` (mapped; the descriptor may be closed afterwards). ``bare``: mapped
    without a descriptor of its own, for the worker (:func:`_mapped`; never unmapped, it lives as long as the
    worker), else with Python's ``mmap`` (freed with the object)."""

    def __init__(self, fd: int, bare: bool = False) -> None:
        self._map = _mapped(fd) if bare else mmap.mmap(fd, SIZE)
        view = memoryview(self._map).cast("B")
        self._bytes = view
        self.times = view.cast("d")  # slot STARTED
        self.slots = view.cast("q")  # the other slots

    def start_block(self, seed: int, pair: int, side: int, block: int, count: int, phase: int) -> None:
        slots = self.slots
        slots[SEED], slots[PAIR], slots[SIDE], slots[BLOCK], slots[COUNT] = seed, pair, side, block, count
        slots[INDEX] = 0
        slots[PHASE] = phase

    def sample(self) -> dict[str, int]:
        """Where the worker is (or was when it stopped): phase, seed, pair, side, block, index, count."""
        slots = self.slots
        return {"phase": slots[PHASE], "seed": slots[SEED], "pair": slots[PAIR], "side": slots[SIDE],
                "block": slots[BLOCK], "index": slots[INDEX], "count": slots[COUNT],
                "in_call": self.times[STARTED] > 0.0}

    def say(self, text: str) -> None:
        """Leave ``text`` as the worker's last words (cut to fit)."""
        data = text.encode("utf-8", "replace")[:WORDS_SIZE - 1] + b"\0"
        self._bytes[WORDS_AT:WORDS_AT + len(data)] = data

    def record_output(self, data: bytes) -> None:
        """Append ``data`` (printed by the worker) to the ring (the supervisor's job)."""
        written = self.slots[WRITTEN]
        data = data[-TAIL:]
        start = written % TAIL
        first = min(len(data), TAIL - start)
        self._bytes[RECORD + start:RECORD + start + first] = data[:first]
        self._bytes[RECORD:RECORD + len(data) - first] = data[first:]
        self.slots[WRITTEN] = written + len(data)

    def tail(self, most: int = TAIL) -> bytes:
        """The last ``most`` bytes the worker printed (at most 64 KiB are kept)."""
        written = self.slots[WRITTEN]
        size = min(written, TAIL, most)
        end = written % TAIL
        ring = bytes(self._bytes[RECORD:SIZE])
        return (ring[end - size:end] if size <= end else ring[TAIL - (size - end):] + ring[:end])

    def last_words(self) -> str:
        raw = bytes(self._bytes[WORDS_AT:RECORD])
        return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def where(sample: dict[str, int], exact: bool = True) -> str:
    """The sample in the words every fault message uses: ``seed=0, pair=0, side=1, block=3, index=7``, or the
    phase where the worker was not drawing. Where the fault was noticed after the fact (the worker was between
    calls, or ``exact`` is False: a broken protocol is read some time after it was broken), it says so."""
    if sample["phase"] == LOADING:
        return "while loading the mechanism and its neighbours"
    if sample["count"] == 0:
        return "before its first sample"
    text = f"seed={sample['seed']}, pair={sample['pair']}, side={sample['side']}, block={sample['block']}"
    text += "" if sample["phase"] == BATCH else f", index={sample['index']}"
    if exact and sample["in_call"]:
        return text
    return f"{text}, where it was noticed: the cause may lie in an earlier call of the block"
