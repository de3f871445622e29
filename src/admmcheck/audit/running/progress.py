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

Layout: slot 0 (float64) the ``time.monotonic()`` at which the worker's current stage started (0.0 while it waits
for a request); slots 1-9 (int64) the stage (:data:`PHASE`), seed, pair, side, block, index, block size, a flag set
by a child of ``os.fork`` that returned from a call, and the bytes printed so far; slots 10 and 11 (int64) the
requests the driving process sent and those the worker took up; slot 12 (float64) since when the driving process
waits for the worker's next answer (0.0: it does not); slot 13 (int64) the worker's process id, as its supervisor
sees it; bytes 1,024 to 4,095 the worker's last words (UTF-8,
NUL-terminated), written where it stops on its own (or the sample of that fork's call); bytes 4,096 on a ring of
the printed bytes (byte i of the output at 4,096 + i mod 65,536).

The stage is written after its start time and read before it (:meth:`Progress.enter`), so a reader never pairs a
stage with the start of an earlier, longer one.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
import tempfile
import time

RECORD, TAIL = 4096, 1 << 16
SIZE = RECORD + TAIL
STARTED, PHASE, SEED, PAIR, SIDE, BLOCK, INDEX, COUNT, FORKED, WRITTEN, REQUESTED, TAKEN, READING, WORKER = range(14)
WORDS_AT, WORDS_SIZE = 1024, RECORD - 1024

#: What the worker is doing (its stage, timed from outside by the supervisor): waiting for a request, loading the
#: mechanism and its neighbours (their import and the neighbours' call run third-party code), a call of the
#: mechanism, a vectorised batch call, encoding a call's output (the output's own methods run: ``__array__``,
#: ``__len__``, ...), putting the exception a call raised into words (its ``__str__`` runs), building or copying a
#: dataset (the neighbours' pair built on demand, unpickling a copy), checking the input dataset for changes
#: (pickling it), counting a block's outputs, its own work between these, sending its answer.
IDLE, LOADING, CALL, BATCH, ENCODING, RAISING, DATASET, CHECKING, COUNTING, OWN, SENDING = range(11)
#: The stages whose sample (seed, pair, side, block, index) is exactly the one at fault
EXACT = (CALL, BATCH, ENCODING, RAISING)
#: Each stage in the words of a fault message ("hangs while ...")
STAGE_WORDS = {
    IDLE: "before taking up the audit's next request (a thread the mechanism started may hold the interpreter, or "
          "read the worker's request pipe)",
    LOADING: "while loading the mechanism and its neighbours",
    CALL: "in a call of the mechanism",
    BATCH: "in a batch call of the mechanism",
    ENCODING: "while its output was encoded (the output's own methods, such as __array__, run then)",
    RAISING: "while the exception it raised was put into words (its __str__ runs then)",
    DATASET: "while its dataset was built or copied (the neighbours' pair, or unpickling a copy)",
    CHECKING: "while its input dataset was checked for changes (pickling it runs the dataset's __reduce__)",
    COUNTING: "while its outputs were counted",
    OWN: "in the worker's own work between calls (a thread the mechanism started may hold the interpreter)",
    SENDING: "while sending its answer (a thread the mechanism started may hold the interpreter)",
}


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

    def start_block(self, seed: int, pair: int, side: int, block: int, count: int) -> None:
        slots = self.slots
        slots[SEED], slots[PAIR], slots[SIDE], slots[BLOCK], slots[COUNT] = seed, pair, side, block, count
        slots[INDEX] = 0

    def enter(self, phase: int) -> None:
        """The worker begins ``phase`` now (its start time written first: see the module docstring)."""
        self.times[STARTED] = time.monotonic()
        self.slots[PHASE] = phase

    def rest(self) -> None:
        """The worker waits for its next request: no stage is timed."""
        self.slots[PHASE] = IDLE
        self.times[STARTED] = 0.0

    def sample(self) -> dict[str, int]:
        """Where the worker is (or was when it stopped): phase, seed, pair, side, block, index, count."""
        slots = self.slots
        return {"phase": slots[PHASE], "seed": slots[SEED], "pair": slots[PAIR], "side": slots[SIDE],
                "block": slots[BLOCK], "index": slots[INDEX], "count": slots[COUNT],
                "in_call": slots[PHASE] in EXACT}

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
