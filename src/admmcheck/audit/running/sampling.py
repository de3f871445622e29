"""The sampling engine: outputs of a mechanism on neighbouring datasets, drawn in worker
processes, reproducibly, with every fault turned into a :class:`MechanismError`.

Seeds. Sample ``j`` of block ``b`` on side ``s`` (0: d0, 1: d1) of neighbour pair ``p``
runs with a PCG64 generator whose increment is word 0 and whose 128-bit state is words
``2j+1, 2j+2`` of ``SeedSequence(seed, spawn_key=(p, s, b)).generate_state(...)``
(prefix-stable, so the block size does not change a sample), and with numpy's and Python's global generators
seeded from the same words before the call (from the first call seen drawing from them:
:class:`_GlobalGenerators`), so code that ignores ``rng`` is reproducible too. :func:`sample_generator` rebuilds exactly that generator, which is how a
:class:`MechanismError` tells the user to reproduce a failure. A vectorised mechanism
(``mechanism.batch``) gets one generator per block, ``PCG64(SeedSequence(seed,
spawn_key=(p, s, b)))``. Code that draws its own randomness (``secrets``, ``os.urandom``) cannot
be seeded: :func:`judge_randomness` decides from three draws of the same seeds whether the audit
is seeded (reproducible) or unseeded (independent draws, not reproducible), or must be refused.

Isolation. Mechanisms and neighbours given as ``FILE.py:NAME`` are imported and called
only in worker processes (``python -m admmcheck.audit.running.worker``, started fresh, so they
inherit nothing and import nothing of the caller's script, with BLAS and OpenMP limited to
one thread); the main process receives blocks of encoded outputs
(:class:`~admmcheck.audit.inputs.outputs.Block`) as ``.npz`` bytes and JSON, or only a block's counts
(:meth:`Sampler.count`), never pickles. Each worker runs under a supervisor of its own
(:mod:`admmcheck.audit.running.supervisor`) that kills it when a call overruns the ``timeout``, whatever the code does to
signals and timers, and kills whatever it started when it ends; the worker limits its own memory, open files and
CPU time (:mod:`admmcheck.audit.running.limits`) and refuses an output larger than ``max_output``. Before each call the
worker writes which sample it is on into a record shared with the driving process
(:mod:`admmcheck.audit.running.progress`), so every fault names its sample, a death's included.

Inputs as given. Every call must see the neighbouring dataset as the neighbours gave it, as a call on the
real dataset would. Research code often writes into its input (centring, clipping, shuffling in place), which
on a shared dataset object would change what every later call sees: an audit of other datasets, which can hide a
leak. So each worker pickles every dataset before any call and compares after each block; where a block changed
it, every later call of that side gets its own copy (unpickled from the one taken before any call) and the block
is drawn again (:func:`_input_written`): with seeded randomness, the very samples of a mechanism that copies its
input first. The main process is told (:attr:`Sampler.input_changed`) and the audit says so in a finding. The
comparison is of what the dataset holds (:func:`_unchanged`): a cache an object fills on first use is not a write. A
dataset that cannot be pickled, or pickles two ways, is not checked.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import random
import sys
import time
import zipfile
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from admmcheck.audit.running import progress as record
from admmcheck.audit.inputs.contract import neighbour_pairs
from admmcheck.audit.running.limits import MIB, available_cores, cpu_backstop
from admmcheck.audit.inputs.datafiles import is_data_file
from admmcheck.audit.running.loading import as_mechanism, load_callable
from admmcheck.audit.running.settings import AuditSettings
from admmcheck.audit.running.supervisor import answer_deadline
from admmcheck.audit.inputs.outputs import Block, Kind, Layout, NotAnOutput, encode_output, raised_kind
from admmcheck.audit.running.worker_process import WorkerDied, WorkerProcess
from admmcheck.foundations.errors import AdmmcheckError, InvalidConfiguration, MechanismError, UnseededRandomness
from admmcheck.foundations.output import printable


@dataclass(frozen=True)
class Source:
    """Where workers get a callable: ``spec`` text (imported in the worker) or a picklable object."""

    spec: str | None = None
    obj: Any = None

    def load(self, role: str = "mechanism") -> Any:
        return load_callable(self.spec, role) if self.spec is not None else self.obj

    def describe(self) -> str:
        return self.spec if self.spec is not None else getattr(self.obj, "__name__", type(self.obj).__name__)

    def files(self) -> tuple[str, ...]:
        """The files the workers load (a sandbox shows them, :func:`~admmcheck.audit.running.sandbox.readable_paths`):
        a spec's (``FILE.py:NAME``, ``.m``, data files), the module's of an object's function or class, and those of
        the specs an object names (``specs``)."""
        if self.spec is not None:
            return _spec_files(self.spec)
        found: list[str] = []
        for spec in getattr(self.obj, "specs", ()):
            found += _spec_files(spec)
        for owner in (self.obj, type(self.obj)):
            module = sys.modules.get(getattr(owner, "__module__", None) or "")
            if getattr(module, "__file__", None):
                found.append(os.path.abspath(module.__file__))
        return tuple(dict.fromkeys(found))

    def fingerprint(self) -> str:
        """SHA-256 of what the workers will run: the file's bytes for FILE.py:NAME, the pickle of an
        object (read, never executed, here), so a checkpoint is never resumed with changed code."""
        if self.spec is None:
            payload = pickle.dumps(self.obj, protocol=pickle.HIGHEST_PROTOCOL)
        else:
            path, _, name = self.spec.rpartition(":")
            if is_data_file(self.spec):
                files = [Path(part) for part in self.spec.split(",")]
            elif path.endswith(".m"):
                files = [Path(path), Path(path).with_name(f"{name}_batch.m")]
            else:
                files = [Path(path)] if path.endswith(".py") else []
            payload = self.spec.encode() + b"".join(f.read_bytes() for f in files if f.is_file())
        return hashlib.sha256(payload).hexdigest()


def _spec_files(spec: str) -> list[str]:
    path, _, name = spec.rpartition(":")
    if is_data_file(spec):
        files = spec.split(",")
    elif path.endswith(".m"):
        files = [path, os.path.join(os.path.dirname(path), f"{name}_batch.m")]
    else:
        files = [path] if path.endswith(".py") else []
    return [os.path.abspath(file) for file in files]


@dataclass(frozen=True)
class Task:
    """One block of samples: ``count`` draws on side ``side`` of pair ``pair``."""

    pair: int
    side: int
    block: int
    count: int


def _block_words(seed: int, task: Task) -> np.ndarray:
    return np.random.SeedSequence(seed, spawn_key=(task.pair, task.side, task.block)).generate_state(
        2 * task.count + 1, dtype=np.uint64)


def _set_state(bit_generator: np.random.PCG64, words: np.ndarray, j: int) -> None:
    """Word 0 is the block's stream increment; words 2j+1, 2j+2 are sample j's 128-bit state."""
    state = (int(words[2 * j + 1]) << 64) | int(words[2 * j + 2])
    increment = int(words[0]) | 1
    bit_generator.state = {"bit_generator": "PCG64", "state": {"state": state, "inc": increment},
                           "has_uint32": 0, "uinteger": 0}


class _SampleStates:
    """Puts sample j's state into a PCG64 (what :func:`_set_state` does) by writing its four 64-bit words
    in place: the ``state`` setter costs ~1.7 µs a sample, more than a Laplace draw. Used only where a
    check at start-up shows the in-place words to be the generator's state (numpy's layout on a
    platform with 128-bit integers: state low, state high, increment low, increment high); elsewhere
    the setter is used."""

    def __init__(self, bit_generator: np.random.PCG64) -> None:
        self.bit_generator = bit_generator
        self.words = self.flags = None
        try:
            import ctypes

            address = bit_generator.ctypes.state_address  # pcg64_state {pcg64_random_t *; int has_uint32; ...}
            words = (ctypes.c_uint64 * 4).from_address(ctypes.c_void_p.from_address(address).value)
            flags = ctypes.c_int.from_address(address + ctypes.sizeof(ctypes.c_void_p))
        except Exception:  # pragma: no cover - numpy without ctypes access
            return
        test = np.array([0, 0x0123456789ABCDEF, 0xFEDCBA9876543210, 0x0F1E2D3C4B5A6978, 0x8796A5B4C3D2E1F0],
                        dtype=np.uint64)
        _set_state(bit_generator, test, 1)
        expected = [int(test[4]), int(test[3]), int(test[0]) | 1, 0]
        if list(words) == expected and flags.value == 0:
            self._write(words, flags, test, 0)
            state = bit_generator.state
            if (state["state"]["state"], state["state"]["inc"]) == ((int(test[1]) << 64) | int(test[2]), 1):
                self.words, self.flags = words, flags

    @staticmethod
    def _write(words, flags, block, j: int) -> None:
        words[0], words[1], words[2], words[3] = int(block[2 * j + 2]), int(block[2 * j + 1]), int(block[0]) | 1, 0
        flags.value = 0

    def set(self, block: list[int] | np.ndarray, j: int) -> None:
        """Sample j's state from the block's words (a list of Python ints is fastest)."""
        if self.words is None:
            _set_state(self.bit_generator, block, j)
        else:
            self._write(self.words, self.flags, block, j)


def _seed_globals(words: np.ndarray, j: int) -> None:
    low = int(words[2 * j + 2])
    np.random.seed(low & 0xFFFFFFFF)
    random.seed(low)


class _GlobalGenerators:
    """Numpy's and Python's global generators, seeded with sample j's words before its call as the
    module docstring says, but only once this worker has seen the mechanism draw from them: seeding
    both costs ~5 µs a call, more than a Laplace draw. Until then their states are compared before and
    after each call (read in place: numpy's MT19937 ``pos`` and first key word, Python's ``index`` and
    first state word). A draw that does not reach the end of the 624-word key moves the position; one
    that does regenerates the key (a position alone would miss a call drawing a multiple of 624 words,
    after which it is back where it was). A call that changed them is run again with the globals seeded
    for its sample (:meth:`moved`), so every output is the one per-call seeding gives. Where the states
    cannot be read (checked at start-up: another Python or numpy), every call is seeded."""

    def __init__(self) -> None:
        self.words = None
        try:
            import ctypes

            mt = np.random.mtrand._rand._bit_generator.ctypes.state_address  # mt19937_state {key[624]; int pos}
            python = id(random._inst) + object.__basicsize__  # RandomObject {int index; uint32_t state[624]}
            words = (ctypes.c_int.from_address(mt + 624 * 4), ctypes.c_uint32.from_address(mt),
                     ctypes.c_int.from_address(python), ctypes.c_uint32.from_address(python + 4))
            np.random.seed(1)
            random.seed(1)
            fresh = tuple(w.value for w in words)
            np.random.random()
            random.random()
            first = tuple(w.value for w in words)
            np.random.random(311)  # 624 words in all since seeding: the positions are back at 624
            for _ in range(311):
                random.random()
            cycled = tuple(w.value for w in words)
            np.random.seed(1)
            random.seed(1)
            if (fresh[0], fresh[2], first[0], first[2]) == (624, 624, 2, 2) and tuple(w.value for w in words) == fresh \
                    and (cycled[0], cycled[2]) == (624, 624) and cycled[1] != fresh[1] and cycled[3] != fresh[3]:
                self.words = words
        except Exception:  # pragma: no cover - another implementation
            pass
        self.seeded = self.words is None  # seed every call from now on
        self.before: tuple[int, ...] = ()

    def _state(self) -> tuple[int, int, int, int]:
        pos, key, index, state = self.words
        return pos.value, key.value, index.value, state.value

    def prepare(self, words, j: int) -> None:
        """Before sample j's call."""
        if self.seeded:
            _seed_globals(words, j)
        else:
            self.before = self._state()

    def moved(self, words, j: int) -> bool:
        """After sample j's call: True when it drew from a global generator not yet seeded for it; from
        then on every call (this one again first) is seeded by :meth:`prepare`."""
        if self.seeded or self._state() == self.before:
            return False
        self.seeded = True
        return True


def sample_generator(seed: int, pair: int, side: int, block: int, index: int) -> np.random.Generator:
    """The generator sample ``index`` of ``block`` got (and seed the global generators as it did)."""
    task = Task(pair, side, block, index + 1)
    words = _block_words(seed, task)
    bit_generator = np.random.PCG64(0)
    _set_state(bit_generator, words, index)
    _seed_globals(words, index)
    return np.random.Generator(bit_generator)


PROBE_SAMPLES = 8  # samples 0-7 of block 0 (pair 0, side 0), drawn three times by the probe


@dataclass(frozen=True)
class Randomness:
    """How the mechanism's randomness was treated: ``requested`` ("auto", "seeded", "unseeded"), the
    ``mode`` used ("seeded": every output is a function of the sample's seed; "unseeded": the mechanism
    draws its own randomness, each call an independent draw), whether the result is reproducible from
    the seed, and why."""

    requested: str
    mode: str
    reproducible: bool
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {"requested": self.requested, "mode": self.mode, "reason": self.reason}


def judge_randomness(requested: str, first: Block, again: Block, other: Block | None,
                     name: str, where: str) -> Randomness:
    """The randomness mode from three draws of the same seeds: ``first`` and ``again`` in one worker
    process, ``other`` in a process that had drawn nothing before (None: not available).

    * all three equal: seeded (the outputs are functions of our seeds);
    * ``first`` != ``again``: the mechanism draws randomness we do not control. With "seeded" asked
      for, that is a fault; with "auto" the audit goes on unseeded, unless ``other`` repeats
      ``first``: then the randomness restarts identically in every process (a generator seeded with a
      constant when the module loads), samples of different workers would repeat each other, and the
      draws would not be independent, so it is refused;
    * ``first`` == ``again`` but != ``other``: the outputs are fixed within a process and differ
      between processes (seeded from the process), so samples of one worker would not be independent:
      refused.
    """
    seen = _outputs(first)
    same_process = seen == _outputs(again)
    same_elsewhere = other is not None and seen == _outputs(other)
    checked = "twice in one worker process" + ("" if other is None else " and once in another")
    if same_process and (other is None or same_elsewhere):
        return Randomness(requested, "seeded", True,
                          f"the same seeds gave the same {len(first)} outputs {checked}")
    if not same_process:
        index = next((j for j, (a, b) in enumerate(zip(seen, _outputs(again))) if a != b), 0)
        if requested == "seeded":
            raise MechanismError(
                f"{name} gives different outputs for the same seed ({where}, index={index}): it draws randomness "
                "admmcheck does not control (secrets, os.urandom, an unseeded generator, the clock); audit it with "
                "randomness='auto' or 'unseeded': the samples are still independent draws")
        varied = len(set(seen)) > 1
        if same_elsewhere and varied:
            raise MechanismError(
                f"{name} repeats the same outputs in every worker process ({where}): its randomness restarts from "
                "the same state in each process (a generator seeded with a constant when its module loads), so "
                "samples drawn by different workers would repeat each other and not be independent. Draw from the "
                "rng argument, or seed the generator from the operating system (numpy.random.default_rng())")
        return Randomness(requested, "unseeded", False,
                          f"the same seed gave different outputs {checked} ({where}, index={index}): the mechanism "
                          "draws randomness admmcheck cannot seed")
    raise MechanismError(
        f"{name} gives the same outputs for the same seed within one worker process but different ones in another "
        f"({where}): its randomness is fixed per process (seeded from the process id or once at import), so the "
        "samples of one worker would not be independent. Draw from the rng argument, or give "
        "randomness='unseeded' if every call really draws fresh randomness")


def _outputs(block: Block) -> list[tuple[str, bytes]]:
    """Each sample as (kind, its numbers' bytes): equal exactly when an observer sees the same output."""
    return [(block.kinds[k].signature, block.values[j, :block.kinds[k].layout.size].tobytes())
            for j, k in enumerate(block.kind_of)]


# ---- worker side -------------------------------------------------------------------------

_WORKER: dict[str, Any] = {}


#: What a fault raised by the code adds, where the command can audit exceptions as outputs (the one-run audit cannot)
EXCEPTIONS_HINT = ("; if raising is something an observer sees, audit with exceptions as outputs "
                   "(exceptions_are_outputs=True)")

def worker_started(progress: record.Progress, memory: int, max_output: int, protocol: tuple[int, ...]) -> None:
    """This process is an audit worker (:mod:`admmcheck.audit.running.worker`): record where it is in ``progress``, refuse
    outputs over ``max_output`` bytes, limit each block's CPU time, and have a child of ``os.fork`` that returns from
    a call stop (closing the ``protocol`` descriptors at once, so that it cannot answer in the worker's place)."""
    _WORKER.update(progress=progress, memory=memory, max_output=max_output, limited=True)

    def in_child() -> None:
        global _FORK_CHILD
        _FORK_CHILD = True
        for fd in protocol:
            try:
                os.close(fd)
            except OSError:
                pass

    os.register_at_fork(after_in_child=in_child)


_FORK_CHILD = False  # set in a child of os.fork: the worker's own code must never run on in it
_BLOCK = ""  # the block being drawn, in words: what a fork's child that returns reports
_UNLIMITED_OUTPUT = 1 << 62


def _progress() -> record.Progress:
    """The shared record (a private one where the worker's entries run in another process, as tests do)."""
    progress = _WORKER.get("progress")
    if progress is None:
        progress = _WORKER["progress"] = record.Progress(record.create_file())
    return progress


def _leave_fork(raised: BaseException | None, index: int) -> None:
    """In a child of ``os.fork`` made during a call, come back to the worker's code: a child that exits
    (``sys.exit``) goes with its status; one that returned or raised is a second return of the call, said in the
    shared record for the worker (which reports it as a fault), and goes too."""
    if isinstance(raised, SystemExit):
        code = raised.code
        os._exit(code if isinstance(code, int) else (0 if code is None else 1))
    progress = _progress()
    if not progress.slots[record.FORKED]:  # the first such return to say so is the one reported
        progress.say(f"{_BLOCK}, index={index}")  # the block as it was at the fork (the worker may have moved on)
        progress.slots[record.FORKED] = 1
    os._exit(0)


@contextmanager
def stage(phase: int) -> Iterator[None]:
    """The worker is in ``phase`` (a stage the supervisor times, :mod:`admmcheck.audit.running.progress`) for the
    ``with`` block; then back in the stage it was in, timed from now (none: its own work)."""
    progress = _progress()
    before = progress.slots[record.PHASE]
    progress.enter(phase)
    try:
        yield
    finally:
        progress.enter(record.OWN if before in (record.IDLE, phase) else before)


def _worker_state(mechanism: Source, neighbours: Source) -> tuple[Any, list]:
    """Load the mechanism and the neighbour pairs once per worker (a pool serves one audit)."""
    if "mechanism" not in _WORKER:
        with stage(record.LOADING):  # third-party code runs: imports, the neighbours' call
            pairs_source = neighbours.load("neighbours")
            produced = pairs_source() if callable(pairs_source) else pairs_source
            pairs = neighbour_pairs(produced)
            _WORKER.update(mechanism=as_mechanism(mechanism.load(), mechanism.describe()), pairs=pairs, pristine={},
                           copied={}, input_changed=None)
            if isinstance(pairs, list):  # every dataset as given, before any call can write into one they share
                for pair in range(len(pairs)):
                    _pristine(pair, 0)
    return _WORKER["mechanism"], _WORKER["pairs"]


def _pristine(pair: int, side: int) -> bytes | None:
    """The pickled dataset of ``side`` of ``pair`` as the neighbours gave it, both sides of a pair pickled
    together on its first use (a pair built on demand, :class:`~admmcheck.audit.inputs.contract.PairSequence`);
    None where it cannot be pickled (no change to it can be seen)."""
    pristine = _WORKER["pristine"]
    if (pair, side) not in pristine:
        with stage(record.DATASET):
            built = _WORKER["pairs"][pair]
            for either in (0, 1):
                try:
                    taken = [pickle.dumps(built.dataset(either), protocol=5) for _ in range(2)]
                except Exception:
                    taken = [None]
                pristine[(pair, either)] = taken[0] if taken[0] == taken[-1] else None  # pickles two ways: None
    return pristine[(pair, side)]


def _given(task: Task) -> Any:
    """The dataset a call of ``task`` gets: the neighbours' own object, or, once a call was seen writing into
    it (:func:`_input_written`), a fresh copy of it as given."""
    with stage(record.DATASET):
        if (task.pair, task.side) in _WORKER["copied"]:
            return pickle.loads(_WORKER["pristine"][(task.pair, task.side)])
        return _WORKER["pairs"][task.pair].dataset(task.side)


def _input_written(task: Task, data: Any, where: str) -> bool:
    """After a block drawn on ``data``, the neighbours' own dataset: True when its calls changed it (it no longer
    holds what the pickle taken before any call holds, :func:`_unchanged`). Every later call of this side then gets its own copy
    (:func:`_given`), as each call on the real dataset would see it, and the block is to be drawn again; the
    first time is remembered for the main process (:func:`input_changed`)."""
    key = (task.pair, task.side)
    if key in _WORKER["copied"]:
        return False
    before = _pristine(*key)
    if before is None:
        return False
    try:  # the same pickle is the same dataset (fast); another one may still hold the same, plus a cache
        with stage(record.CHECKING):
            changed = pickle.dumps(data, protocol=5) != before and not _unchanged(pickle.loads(before), data)
    except Exception:
        changed = True  # it pickled before the calls and cannot be compared now: the calls changed it
    if changed:
        _WORKER["copied"][key] = True
        if _WORKER["input_changed"] is None:
            _WORKER["input_changed"] = where
    return changed


_PLAIN_STATE = getattr(object, "__getstate__", None)  # Python 3.11+: the default; before it, no attribute at all
_ATOMS = (str, bytes, int, float, complex, bool, type(None), np.generic, set, frozenset)


def _unchanged(before: Any, after: Any, depth: int = 0) -> bool:
    """Whether ``after``, the dataset the calls got, still holds what ``before`` (a copy of it as given, unpickled)
    holds: the same types, arrays (bit for bit), numbers (NaN equal to NaN), strings, sequences, mappings (their
    keys too) and object attributes, recursively. An attribute an object gained is not a change: a cache filled on
    first use (``functools.cached_property``), which a call on the real dataset would fill too. Objects that pickle
    their own way, and anything nested deeper than 50, are compared as pickles."""
    if type(before) is not type(after):
        return False
    if depth > 50:
        return pickle.dumps(before, protocol=5) == pickle.dumps(after, protocol=5)
    if isinstance(before, np.ndarray):
        if before.dtype != after.dtype or before.shape != after.shape:
            return False
        if before.dtype.hasobject:
            return all(_unchanged(x, y, depth + 1) for x, y in zip(before.ravel().tolist(), after.ravel().tolist()))
        return before.tobytes() == after.tobytes()
    if isinstance(before, _ATOMS):
        return bool(before == after) or (before != before and after != after)
    if isinstance(before, (list, tuple)):
        return len(before) == len(after) and all(_unchanged(x, y, depth + 1) for x, y in zip(before, after))
    if isinstance(before, dict):
        return before.keys() == after.keys() and all(_unchanged(before[k], after[k], depth + 1) for k in before)
    state = getattr(before, "__dict__", None)
    if state is not None and getattr(type(before), "__getstate__", None) is _PLAIN_STATE \
            and not hasattr(type(before), "__slots__"):
        held = vars(after)
        return all(key in held and _unchanged(value, held[key], depth + 1) for key, value in state.items())
    return pickle.dumps(before, protocol=5) == pickle.dumps(after, protocol=5)


def input_changed() -> str | None:
    """Where this worker first saw the mechanism change its input dataset (None: it has not)."""
    return _WORKER.get("input_changed")


def count_pairs(mechanism: Source, neighbours: Source) -> tuple[str, Any]:
    """Worker entry: ("ok", (number of neighbour pairs, the pairs whose two datasets pickle the same, of those
    given as a list)) or ("error", message)."""
    try:
        pairs = _worker_state(mechanism, neighbours)[1]
    except Exception as exc:
        return "error", f"loading failed: {type(exc).__name__}: {exc}"
    same = [] if not isinstance(pairs, list) else [
        pair for pair in range(len(pairs)) if _pristine(pair, 0) is not None and _pristine(pair, 0) == _pristine(pair, 1)]
    return "ok", (len(pairs), same)


def run_block(mechanism: Source, neighbours: Source, seed: int, timeout: float, task: Task,
              exceptions_are_outputs: bool = False) -> tuple[str, Any]:
    """Worker entry: ("ok", :class:`~admmcheck.audit.inputs.outputs.Block`) or ("error", message)."""
    try:
        callable_, pairs = _worker_state(mechanism, neighbours)
    except (AdmmcheckError, Exception) as exc:
        return "error", f"loading failed: {type(exc).__name__}: {exc}"
    if task.pair >= len(pairs):
        return "error", f"neighbours returned {len(pairs)} pairs, pair {task.pair} asked for"
    global _BLOCK
    where = _BLOCK = f"seed={seed}, pair={task.pair}, side={task.side}, block={task.block}"
    progress = _progress()
    progress.start_block(seed, task.pair, task.side, task.block, task.count)
    if _WORKER.get("limited"):
        cpu_backstop(timeout * task.count)
    try:
        data = _given(task)
        status, payload = _draw_block(callable_, data, seed, task, where, exceptions_are_outputs)
        if _input_written(task, data, where):  # drawn again, each call on its own copy of the dataset as given
            status, payload = _draw_block(callable_, _given(task), seed, task, where, exceptions_are_outputs)
    finally:
        progress.enter(record.OWN)
    if progress.slots[record.FORKED]:
        return "error", (f"forks: a child of the worker process made by os.fork returned from the call "
                         f"({progress.last_words()}), so the call returned twice; a mechanism may start processes, "
                         "but a child must end in them (os._exit) and never return")
    return status, payload


def _draw_block(callable_, data: Any, seed: int, task: Task, where: str,
                exceptions_are_outputs: bool) -> tuple[str, Any]:
    """One block's calls on ``data`` (:func:`_given`): ("ok", :class:`~admmcheck.audit.inputs.outputs.Block`) or
    ("error", message)."""
    copied = (task.pair, task.side) in _WORKER["copied"]
    words = _block_words(seed, task)
    batch = getattr(callable_, "batch", None)
    if batch is not None:
        return _run_batch(batch, data, words, seed, task, where)
    if "rng" not in _WORKER:  # one generator per worker, given each sample's state in turn
        bit_generator = np.random.PCG64(0)
        _WORKER.update(rng=np.random.Generator(bit_generator), states=_SampleStates(bit_generator),
                       globals=_GlobalGenerators())
    rng, states, generators = _WORKER["rng"], _WORKER["states"], _WORKER["globals"]
    numbers_most = _WORKER.get("max_output", _UNLIMITED_OUTPUT) // 8
    words = words.tolist()
    kinds: dict[str, int] = {}
    kind_list: list[Kind] = []
    kind_of = np.empty(task.count, dtype=np.int64)
    rows: list[np.ndarray] = []

    def fault(message: str) -> tuple[str, str]:
        """The block's first fault: a NaN or inf among the outputs so far, else ``message``."""
        bad = next((j for j, row in enumerate(rows) if not np.isfinite(row).all()), None)
        return "error", message if bad is None else f"returns NaN or inf ({where}, index={bad})"

    for j in range(task.count):
        if copied and j:
            data = _given(task)  # each call its own copy (the first one has it already)
        value, raised = _call(callable_, data, rng, states, generators, words, j)  # now encoding (or raising)
        if raised is not None:
            if _stops_the_audit(raised):
                return fault(f"{_stopping(raised)} ({where}, index={j})")
            if not exceptions_are_outputs:
                return fault(f"raises {type(raised).__name__}: {raised} ({where}, index={j}){EXCEPTIONS_HINT}")
            kind, flat = raised_kind(raised), _EMPTY
        else:
            if type(value) is not float:
                size = getattr(value, "size", 0)
                if type(size) is int and size > numbers_most:  # an array: refused before encoding copies it
                    return fault(f"{_too_large(size * 8)} ({where}, index={j})")
            try:
                kind, flat = encode_output(value)
            except NotAnOutput as exc:
                return fault(f"{exc} ({where}, index={j})")
            except MemoryError:
                return fault(f"{_stopping(MemoryError())} while its output was encoded ({where}, index={j})")
            if len(flat) > numbers_most:
                return fault(f"{_too_large(len(flat) * 8)} ({where}, index={j})")
        index = kinds.get(kind.signature)
        if index is None:
            index = kinds[kind.signature] = len(kind_list)
            kind_list.append(kind)
        kind_of[j] = index
        rows.append(flat)
    _progress().enter(record.OWN)
    width = max((len(row) for row in rows), default=0)
    if all(len(row) == width for row in rows):
        values = np.array(rows, dtype=np.float64).reshape(task.count, width)
    else:
        values = np.zeros((task.count, width))
        for j, row in enumerate(rows):
            values[j, :len(row)] = row
    # NaN and inf are looked for once a block rather than after each call (that took ~2.8 µs of a scalar
    # Laplace sample's 6.2 µs); the first one is reported, as it was when each call was checked
    finite = np.isfinite(values).all(axis=1)
    if not finite.all():
        return "error", f"returns NaN or inf ({where}, index={int(np.argmin(finite))})"
    return "ok", Block(values, kind_of, tuple(kind_list))


_EMPTY = np.empty(0)


def _stops_the_audit(raised: BaseException) -> bool:
    """Whether a call's exception is never an output, even with ``exceptions_are_outputs``: the memory limit hit, an
    exit, an interrupt."""
    return not isinstance(raised, Exception) or isinstance(raised, MemoryError)


def _stopping(raised: BaseException) -> str:
    """A call's exception that is never an output, in words: a memory limit hit, an exit, an interrupt."""
    if isinstance(raised, MemoryError):
        memory = _WORKER.get("memory")
        limit = "" if memory is None else f" of {memory / MIB:g} MiB"
        return (f"exceeded the memory limit{limit} (raises MemoryError); a mechanism that needs more: raise "
                "memory_limit (--memory-limit MIB)")
    if isinstance(raised, SystemExit):
        return f"exits: calls sys.exit({raised.code!r})"
    return f"raises {type(raised).__name__}: {raised}" if str(raised) else f"raises {type(raised).__name__}"


def _too_large(size: int) -> str:
    most = _WORKER.get("max_output", _UNLIMITED_OUTPUT)
    return (f"returns an output of {size} bytes, more than the limit of {most} bytes ({most / MIB:g} MiB); for a "
            "larger release raise max_output (--max-output MIB)")


def _call(callable_, data, rng: np.random.Generator, states: _SampleStates, generators: _GlobalGenerators,
          words: list[int], j: int) -> tuple[Any, BaseException | None]:
    """Sample j's call, watched by the supervisor from the start time written into the shared record: (its value,
    None) or (None, the exception it raised, :class:`SystemExit` and :class:`KeyboardInterrupt` included); a call
    that drew from global generators not yet seeded for it runs again, seeded. The worker leaves it in stage
    ENCODING (its value's methods run next) or RAISING (the exception is put into words next)."""
    shared = _progress()
    times, slots = shared.times, shared.slots
    slots[record.INDEX] = j
    while True:
        states.set(words, j)
        generators.prepare(words, j)
        times[0] = time.monotonic()  # record.STARTED, then the stage (Progress.enter, inlined: ~6 us a call)
        slots[1] = record.CALL  # record.PHASE: the supervisor's watchdog times the call
        try:
            value, raised = callable_(data, rng), None
        except BaseException as exc:  # noqa: BLE001 - an exit or interrupt in the call is the call's fault
            value, raised = None, exc
        times[0] = time.monotonic()
        slots[1] = record.ENCODING if raised is None else record.RAISING
        if _FORK_CHILD:
            _leave_fork(raised, j)
        if not generators.moved(words, j):
            return value, raised


def _run_batch(batch, data, words, seed, task: Task, where: str):
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(task.pair, task.side, task.block))))
    _seed_globals(words, 0)
    progress = _progress()
    progress.enter(record.BATCH)
    try:
        value = batch(data, rng, task.count)
    except BaseException as exc:  # noqa: BLE001 - as in _call
        progress.enter(record.RAISING)
        if _stops_the_audit(exc):
            return "error", f"batch {_stopping(exc)} ({where})"
        return "error", f"batch raises {type(exc).__name__}: {exc} ({where})"
    finally:
        if _FORK_CHILD:
            os._exit(0)
    try:
        with stage(record.ENCODING):
            out = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        return "error", f"batch returns something that is not a table of numbers ({exc}) ({where})"
    if out.ndim == 1:
        out = out[:, None]
    out = out.reshape(out.shape[0], -1)
    if out.shape[0] != task.count:
        return "error", f"batch returns {out.shape[0]} rows for {task.count} samples ({where})"
    if out.shape[0] and out.nbytes // out.shape[0] > _WORKER.get("max_output", _UNLIMITED_OUTPUT):
        return "error", f"batch {_too_large(out.nbytes // out.shape[0])} per sample ({where})"
    if not np.all(np.isfinite(out)):
        return "error", f"batch returns NaN or inf ({where})"
    return "ok", Block.plain(out, Kind(f"vector of {out.shape[1]}", Layout((("output", (out.shape[1],)),))))


# ---- main side ---------------------------------------------------------------------------

class Sampler:
    """Draws blocks on worker processes (:mod:`admmcheck.audit.running.worker`); raises
    :class:`MechanismError` on faults. Results come back as JSON and ``.npy`` bytes, never as
    pickles, so nothing a mechanism does in a worker can run code in the main process."""

    def __init__(self, mechanism: Source, neighbours: Source, settings: AuditSettings, most_pairs: int = 64) -> None:
        self.most_pairs = most_pairs
        self.requested = settings.randomness
        self.randomness: Randomness | None = None
        self.mechanism, self.neighbours, self.seed = mechanism, neighbours, settings.seed
        self.timeout, self.exceptions_are_outputs = float(settings.timeout), settings.exceptions_are_outputs
        self.exceptions_hint = True  # whether a fault raised by the code suggests exceptions_are_outputs
        scheduler, workers = settings.scheduler, settings.workers
        self._client = None
        self._lease = None
        self.files = (*mechanism.files(), *neighbours.files())  # what a sandbox shows of the code's files
        if scheduler is not None:  # blocks as Dask tasks (admmcheck.audit.running.dask_executor)
            from admmcheck.audit.running.dask_executor import (DaskWorker, Lease, audit_key,  # optional dependency
                                                               cluster_slots, connect)

            self.limits = settings.worker_limits(None)  # each Dask worker takes its own machine's share
            self._client = connect(scheduler)
            self.workers = [DaskWorker(self._client) for _ in range(workers or cluster_slots(self._client))]
            # the workers on the cluster end with this process however it ends: it renews their lease while it lives
            self._lease = Lease(self._client, audit_key(self._init_message()[1:]))
        else:
            count = workers or available_cores()
            self.limits = settings.worker_limits(count)
            self.workers = [WorkerProcess(self.limits, self.files) for _ in range(count)]
        for worker in self.workers:
            self._send(worker, self._init_message())
        self.pairs: int | None = None
        #: where a worker first saw the mechanism write into its input dataset (every later call of that side
        #: got its own copy, and the block was drawn again: :func:`_input_written`); None: never seen
        self.input_changed: str | None = None
        #: the pairs whose two datasets are equal (they pickle the same; pairs given as a list only)
        self.identical: list[int] = []
        #: pair index -> the pair in words, for a fault's message (the neighbour search's screening sets it)
        self.pair_names: Callable[[int], str] | None = None

    def findings(self) -> list[str]:
        """What the workers saw of the neighbours' datasets, in words: a mechanism writing into its input
        (:attr:`input_changed`) and pairs of a dataset with itself (:attr:`identical`)."""
        said = []
        if self.input_changed is not None:
            said.append(f"the mechanism writes into its input dataset ({self.input_changed}, first seen after this "
                        "block): a call on the real dataset sees it as given, so from then on every call was given its "
                        "own copy of it, and that block was drawn again. The audit is of the mechanism on the datasets "
                        "as given; copying the data inside the mechanism makes it faster")
        same = self.identical
        if same:
            said.append(f"the two datasets of pair{'s' if len(same) > 1 else ''} {', '.join(map(str, same[:10]))}"
                        f"{' ...' if len(same) > 10 else ''} are equal: the audit compares a dataset with itself there, "
                        "where no mechanism can leak; neighbours differ in one record (replaced, added or removed)")
        return said

    @property
    def isolation(self) -> str:
        """Which isolation the code ran under, in words (:class:`~admmcheck.audit.running.sandbox.Isolation`):
        the local workers', or what the cluster's said (once a block came back)."""
        said = dict.fromkeys(str(worker.isolation) for worker in self.workers if worker.isolation is not None)
        return "; ".join(said) or "not known: no block came back from the cluster"

    def close(self) -> None:
        for worker in self.workers:
            worker.kill()
        if self._client is not None:
            from admmcheck.audit.running.dask_executor import close_audit

            if self._lease is not None:
                self._lease.stop()
                self._lease = None
            close_audit(self._client, self._init_message()[1:])  # the workers it started on the cluster
            self._client.close()
            self._client = None

    def __enter__(self) -> "Sampler":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _init_message(self) -> tuple:
        return ("init", self.mechanism, self.neighbours, self.seed, self.timeout, self.exceptions_are_outputs,
                self.limits)

    def probe(self) -> Block:
        """Load in the workers, count the pairs, look at the output, and (unless ``randomness`` is
        "unseeded") decide whether the mechanism's randomness is ours to seed (:func:`judge_randomness`).
        Sets :attr:`randomness`; returns the first samples of block 0 (pair 0, side 0)."""
        first_worker = self.workers[0]
        self._send(first_worker, ("pairs",))
        try:
            header, _ = first_worker.receive(self._allowance(1))
        except WorkerDied as death:
            raise self._died(death) from None
        except TimeoutError:
            self.close()
            raise MechanismError(f"{self.mechanism.describe()}: loading it and its neighbours did not finish within "
                                 f"{self._allowance(1):g} s, and its supervisor did not stop it") from None
        if header["status"] != "ok":
            raise MechanismError(f"{self.mechanism.describe()}: {header['message']}")
        if header["pairs"] > self.most_pairs:
            raise InvalidConfiguration(f"the neighbours returned more than {self.most_pairs} pairs; audit at most "
                                       f"{self.most_pairs} at once")
        self.identical = [int(pair) for pair in header.get("identical") or []]
        self.pairs = int(header["pairs"])
        task = Task(0, 0, 0, PROBE_SAMPLES)
        first = self._one(first_worker, task)
        if self.requested == "unseeded":
            self.randomness = Randomness("unseeded", "unseeded", False,
                                         "unseeded was asked for, so reproducibility was not probed")
            return first
        again = self._one(first_worker, task)
        other = self._fresh_draw(task)
        self.randomness = judge_randomness(self.requested, first, again, other,
                                           f"{self.mechanism.describe()}", f"seed={self.seed}, pair=0, side=0, block=0")
        if self.randomness.mode == "unseeded":
            warnings.warn(UnseededRandomness(
                f"{self.mechanism.describe()} draws randomness admmcheck cannot seed; auditing it as unseeded: "
                "every sample is still an independent draw, but the same seed will not give the same samples"),
                stacklevel=2)
        return first

    def _fresh_draw(self, task: Task) -> Block | None:
        """``task`` drawn by a worker process that has drawn nothing before (None with one Dask slot)."""
        if len(self.workers) > 1:
            return self._one(self.workers[-1], task)
        if self._client is not None:
            return None
        worker = WorkerProcess(self.limits, self.files)
        try:
            self._send(worker, self._init_message())
            return self._one(worker, task)
        finally:
            worker.kill()

    def _send(self, worker: "WorkerProcess", message: tuple) -> None:
        try:
            worker.send(message)
        except WorkerDied as death:  # it died since its last answer
            raise self._died(death) from None
        except InvalidConfiguration:  # the message cannot be sent (it does not pickle): no worker is left behind
            self.close()
            raise

    def _died(self, death: WorkerDied, named: str = "") -> MechanismError:
        """A worker's death (or overrun, or broken protocol) as the audit's fault; every worker is stopped."""
        self.close()
        return MechanismError(f"{self.mechanism.describe()} {death}{named}; reproduce it with "
                              "admmcheck.audit.sample_generator(seed, pair, side, block, index)")

    def _allowance(self, count: int) -> float:
        """How long the main process waits for a block's answer: its backstop, should a supervisor be stuck."""
        return answer_deadline(count, self.timeout)

    def _one(self, worker: "WorkerProcess", task: Task) -> Block:
        self._send(worker, ("block", task))
        return self._unpack(task, worker)

    def _receive(self, task: Task, worker: "WorkerProcess") -> tuple[dict[str, Any], bytes]:
        named = f" (pair {task.pair} is {self.pair_names(task.pair)})" if self.pair_names else ""
        try:
            header, body = worker.receive(self._allowance(task.count))
        except TimeoutError:  # the supervisor's watchdog did not stop it: the supervisor itself is stuck
            self.close()
            raise MechanismError(
                f"{self.mechanism.describe()} hangs: block {task.block} (side {task.side}, pair {task.pair}, "
                f"seed {self.seed}) did not finish within {self._allowance(task.count):g} s, and its supervisor "
                "did not stop it"
            ) from None
        except WorkerDied as death:
            raise self._died(death, named) from None
        if header.get("input_changed") and self.input_changed is None:
            self.input_changed = str(header["input_changed"])
        if header["status"] != "ok":
            if not self.exceptions_hint:  # a command that cannot audit exceptions as outputs does not suggest it
                header = {**header, "message": str(header["message"]).replace(EXCEPTIONS_HINT, "")}
            if header.get("counting"):
                raise AdmmcheckError(f"admmcheck could not count block {task.block} (side {task.side}, pair "
                                     f"{task.pair}) of {self.mechanism.describe()}'s outputs: {header['message']}. "
                                     "This is a fault of admmcheck, not of the mechanism; please report it")
            raise MechanismError(f"{self.mechanism.describe()} {header['message']}{named}; reproduce it with "
                                 "admmcheck.audit.sample_generator(seed, pair, side, block, index)")
        return header, body

    def _unpack(self, task: Task, worker: "WorkerProcess") -> Block:
        _, body = self._receive(task, worker)
        try:
            block = Block.from_bytes(body)
        except (ValueError, KeyError, TypeError, OSError, EOFError, RecursionError, zipfile.BadZipFile) as exc:
            raise MechanismError(f"{self.mechanism.describe()} broke the worker's protocol: block {task.block} (side "
                                 f"{task.side}, pair {task.pair}) came back malformed ({printable(str(exc))}); the "
                                 "mechanism writes to file descriptors it does not own") from None
        if len(block) != task.count:
            raise MechanismError(f"an audit worker sent {len(block)} samples for {task.count}")
        return block

    def _counts(self, task: Task, worker: "WorkerProcess", size: int) -> np.ndarray:
        header, _ = self._receive(task, worker)
        counts = header.get("counts")
        if not (isinstance(counts, list) and len(counts) == size
                and all(type(c) is int and 0 <= c <= task.count for c in counts) and counts[-1] == task.count):
            raise MechanismError(f"an audit worker sent malformed counts for block {task.block} (side {task.side}, "
                                 f"pair {task.pair}); the mechanism may write to file descriptors it does not own")
        return np.array(counts, dtype=np.int64)

    def draw(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, Block]]:
        """Yield (task, samples) in the order of ``tasks`` (deterministic). Task i goes to worker
        i mod K, with at most two blocks in flight per worker, so memory stays bounded; ``tasks``
        is consumed lazily, so a generator can stop issuing blocks (the time budget)."""
        return self._stream(tasks, "block", self._unpack)

    def count(self, tasks: Iterable[Task], tally: Any) -> Iterator[tuple[Task, np.ndarray]]:
        """As :meth:`draw`, but each worker reduces its blocks to ``tally``'s counts
        (:meth:`~admmcheck.audit.statistics.counting.Tally.count`, the same numbers as counting the drawn block
        here) and only those come back."""
        payload = tally.to_bytes()
        for worker in self.workers:
            self._send(worker, ("tally", payload))
        return self._stream(tasks, "count", lambda task, worker: self._counts(task, worker, tally.size))

    def _stream(self, tasks: Iterable[Task], kind: str, answer) -> Iterator[tuple[Task, Any]]:
        k = len(self.workers)
        source = iter(tasks)
        pending: list[tuple[int, Task]] = []
        submitted = 0
        while True:
            while len(pending) < 2 * k:
                task = next(source, None)
                if task is None:
                    break
                self._send(self.workers[submitted % k], (kind, task))
                pending.append((submitted % k, task))
                submitted += 1
            if not pending:
                return
            worker, task = pending.pop(0)
            yield task, answer(task, self.workers[worker])
