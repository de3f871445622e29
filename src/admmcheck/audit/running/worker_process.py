"""One audit worker seen from the process that drives it.

The worker (``python -m admmcheck.audit.running.worker``) runs under its supervisor (:mod:`admmcheck.audit.running.supervisor`:
watchdog, containment, output capture). Requests go to the worker on a pipe of their own (pickles written by
admmcheck), answers come back on another (a framed JSON header and ``.npz`` bytes, read with a deadline and checked
before they are believed); neither is the worker's stdin or stdout, which belong to the code under audit. Where
the worker is, and the tail of what it printed, are read from the record it shares
(:mod:`admmcheck.audit.running.progress`); how it ended, from the supervisor's report. So every fault, a death included,
names its cause and its sample. Used by the local sampler and, on each Dask worker, by
:mod:`admmcheck.audit.running.dask_executor`.
"""

from __future__ import annotations

import json
import os
import pickle
import secrets
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from typing import Any

from admmcheck.audit.running import sandbox
from admmcheck.audit.running.limits import WorkerLimits
from admmcheck.audit.running.supervisor import HUNT_SECONDS, child_subreaper, descendants_of, kill_with_group
from admmcheck.audit.running.progress import READING, REQUESTED, WORKER, WRITTEN, Progress, create_file, where
from admmcheck.audit.running.channel import MAGIC, PREFIX
from admmcheck.foundations.errors import InvalidConfiguration, MechanismError
from admmcheck.foundations.inputs import json_nesting
from admmcheck.foundations.output import printable

# Read by BLAS and OpenMP when they load: one thread per worker process, as the engine's own runs use
# (several workers share the cores; a scikit-learn fit inside a mechanism was 11x slower under load).
ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                     "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")}
HEADER_MOST = 1 << 20
#: The deepest nesting of an answer's JSON header (the worker's own are at most 3 deep)
HEADER_DEPTH = 8
#: Seconds to wait for the supervisor's report once the worker's answers have ended.
REPORT_WAIT = 10.0
#: How often a supervisor is continued (SIGCONT) while an answer is awaited: a supervisor the code stopped is
#: noticed within this time, and its watchdog goes on
RESUME_EVERY = 1.0


#: The environment variable that tags an unsandboxed worker's processes for :meth:`WorkerProcess._hunt`
TAG = "ADMMCHECK_WORKER_TAG"
_ADOPTING = [0]  # unsandboxed workers alive in this process: while there are any, it is a child subreaper
_ADOPTING_LOCK = threading.Lock()


def _adopting(more: bool) -> None:
    """One more (or one fewer) unsandboxed worker: this process is a child subreaper while there is any."""
    with _ADOPTING_LOCK:
        _ADOPTING[0] += 1 if more else -1
        if _ADOPTING[0] == (1 if more else 0):
            child_subreaper(more)


def _carries(pid: int, tag: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return tag in handle.read().split(b"\0")
    except OSError:
        return False


class WorkerDied(MechanismError):
    """The worker stopped, was stopped or broke the protocol: ``cause`` in words, ``sample`` where (the words
    of :func:`~admmcheck.audit.running.progress.where`), ``output`` the tail of what it printed."""

    def __init__(self, cause: str, sample: str, output: str) -> None:
        cause = printable(cause)  # words the code may have written (``output`` is escaped by output_tail)
        self.cause, self.sample, self.output = cause, sample, output
        super().__init__(f"{cause} ({sample})" + (f"; its last output: {output}" if output else ""))


def output_tail(raw: bytes, lines: int = 3, most: int = 600) -> str:
    """The last non-empty ``lines`` of printed bytes, on one line, at most ``most`` characters, its control
    characters escaped."""
    text = [line.strip() for line in raw.decode("utf-8", "replace").splitlines() if line.strip()]
    said = printable(" | ".join(text[-lines:]))
    return said if len(said) <= most else "..." + said[-most:]


class WorkerProcess:
    """One supervised worker: ``send`` a request, ``receive`` its answer, ``kill`` it with all it started."""

    def __init__(self, limits: WorkerLimits, readable: tuple[str, ...] = ()) -> None:
        """Start a supervised worker under ``limits``, in the sandbox they ask for (``readable``: the files of the
        code under audit it must show, :func:`~admmcheck.audit.running.sandbox.readable_paths`); a sandbox
        that was asked for (``on``) and cannot run is :class:`InvalidConfiguration`."""
        self.limits = limits
        self.isolation = sandbox.resolve(limits.sandbox)
        # the worker's temporary folder: made here, and removed here too, should its supervisor be killed; in the
        # sandbox, a private /tmp that goes with it
        self.scratch = None if self.isolation.sandboxed else tempfile.mkdtemp()
        # unsandboxed, what the code started outlives a supervisor it kills: this process adopts it (_hunt)
        self._tag = None if self.isolation.sandboxed else secrets.token_hex(8)
        if self._tag is not None:
            _adopting(True)
        request_read, self._requests = os.pipe()
        self._answers, answer_write = os.pipe()
        self._status, status_write = os.pipe()
        lifeline_read, self._lifeline = os.pipe()  # never written: its end closing tells the supervisor to stop
        progress = create_file()
        self.progress = Progress(progress)
        worker = [sys.executable, "-m", "admmcheck.audit.running.worker",
                  json.dumps({"requests": request_read, "answers": answer_write, "progress": progress,
                              **limits.worker_settings()})]
        settings = {"lifeline": lifeline_read, "status": status_write, "progress": progress, "scratch": self.scratch,
                    "timeout": limits.timeout, "worker": worker, "pass_fds": [request_read, answer_write, progress]}
        passed = (request_read, answer_write, progress, lifeline_read, status_write)
        command = [sys.executable, "-m", "admmcheck.audit.running.supervisor", json.dumps(settings)]
        if self.isolation.sandboxed:
            command = sandbox.command(command, limits.worker_settings()["memory"], readable)
        self._supervisor = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=passed,
            close_fds=True, env=os.environ | ONE_THREAD | ({TAG: self._tag} if self._tag else {}),
            start_new_session=True)  # not stopped by the terminal's Ctrl-C: by us
        for fd in passed:
            os.close(fd)
        self._buffer = bytearray()
        self._death: WorkerDied | None = None
        self._inner: list[int] = []  # in the sandbox: its first process and the supervisor (_resume)
        self._first: int | None = None  # a pidfd of the sandbox's first process, once found (_resume)
        #: of each answer still to come: the largest body believed, and the token it must carry (:meth:`send`)
        self._expected: deque[tuple[int, int]] = deque()

    # ---- requests and answers --------------------------------------------------------------

    def send(self, message: tuple) -> None:
        if self._death is not None:
            raise self._death
        self.progress.slots[REQUESTED] += 1  # before it is written: the supervisor times a request not taken up
        token = secrets.randbits(62)  # the answer must carry it: one the code forged without it is refused
        if message[0] in ("pairs", "count"):
            self._expected.append((0, token))
        elif message[0] == "block":
            self._expected.append((self.limits.most_block_bytes(message[1].count), token))
        try:
            payload = pickle.dumps((token, message), protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, AttributeError, TypeError) as error:
            raise InvalidConfiguration(
                f"what the audit sends its worker processes cannot be pickled ({type(error).__name__}: {error}); "
                "define the mechanism's functions, and those it is registered with, at module level (a lambda or a "
                "function defined inside another cannot be sent)") from None
        data = memoryview(struct.pack("<Q", len(payload)) + payload)
        try:
            while data:
                data = data[os.write(self._requests, data):]
        except OSError:  # the worker's end is gone: it died; say how
            raise self._died() from None

    def receive(self, timeout: float) -> tuple[dict[str, Any], bytes]:
        """(JSON header, body bytes: a block's ``.npz``, or empty) of the oldest request not yet answered. A
        death, an overrun and a malformed answer (one larger than the request's limits allow, too) are
        :class:`WorkerDied`; a fault's message ends with what the code printed last; no answer within ``timeout`` (the supervisor itself stuck) is ``TimeoutError``."""
        if self._death is not None:
            raise self._death
        self._resume()
        self.progress.times[READING] = time.monotonic()  # from now the supervisor times the answer's sending
        try:
            return self._answer(time.monotonic() + timeout)
        finally:
            self.progress.times[READING] = 0.0

    def _answer(self, deadline: float) -> tuple[dict[str, Any], bytes]:
        magic, header_size, body_size = PREFIX.unpack(self._read(PREFIX.size, deadline))
        most_body, token = self._expected.popleft() if self._expected else (0, -1)
        if magic != MAGIC or header_size > HEADER_MOST or body_size > most_body:
            raise self._broken(f"a malformed answer (starting {bytes(magic)!r}, header {header_size} bytes, body "
                               f"{body_size} bytes)")
        text = self._read(header_size, deadline)
        try:
            header = json.loads(text) if json_nesting(text) <= HEADER_DEPTH else None
        except (ValueError, RecursionError) as exc:
            raise self._broken(f"a malformed answer ({type(exc).__name__})") from None
        body = self._read(body_size, deadline) if body_size else b""
        if not isinstance(header, dict) or header.get("status") not in ("ok", "error"):
            raise self._broken("a malformed answer (no status, or a header nested deeper than "
                               f"{HEADER_DEPTH} levels)")
        if header.get("token") != token:
            raise self._broken("an answer to no request it was sent (without the request's token)")
        if header["status"] == "error":  # the code's words: shown, never acted on by a terminal
            printed = self.output() if not header.get("counting") else ""
            header = {**header, "message": printable(str(header.get("message")))
                      + (f"; its last output: {printed}" if printed else "")}
        return header, body

    def _read(self, size: int, deadline: float) -> bytes:
        while len(self._buffer) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            ready = select.select([self._answers, self._status], [], [], min(remaining, RESUME_EVERY))[0]
            if not ready:
                self._resume()  # the code may have stopped its supervisor while the block runs: it is continued
                continue
            if self._answers not in ready:  # the supervisor reports the worker's end, and nothing is left to read
                raise self._died()
            chunk = os.read(self._answers, max(1 << 20, size - len(self._buffer)))
            if not chunk:  # every writer is gone: the worker ended, and the supervisor has killed what it started
                raise self._died()
            self._buffer += chunk  # a bytearray: appending is amortised, not a copy of all read so far
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    # ---- how it ended ----------------------------------------------------------------------

    def sample(self, exact: bool = True) -> str:
        """Where the worker is, or was when it stopped, in words (``exact`` False: noticed after the fact)."""
        return where(self.progress.sample(), exact)

    def output(self) -> str:
        """The tail of what the worker's code printed, on one line (empty where nothing was). Called on a fault:
        the supervisor copies the output in as it comes, so this waits until its count stands still for 20 ms (at
        most 0.2 s) for what was printed just before the fault."""
        record, deadline = self.progress, time.monotonic() + 0.2
        written = -1
        while written != record.slots[WRITTEN] and time.monotonic() < deadline:
            written = record.slots[WRITTEN]
            time.sleep(0.02)
        return output_tail(record.tail())

    def _died(self) -> WorkerDied:
        """The worker's end, from the supervisor's report (waited for) and the shared record."""
        report = self._report()
        if report is None:
            cause = "stopped: the worker's supervisor process was killed (by the mechanism or another process)"
        else:
            cause = report["cause"]
            words = self.progress.last_words()
            if words and not report.get("watchdog"):
                cause = f"{cause}: {words}"
        return self._stop(WorkerDied(cause, self.sample(), self.output()))

    def _broken(self, what: str) -> WorkerDied:
        return self._stop(WorkerDied(f"broke the worker's protocol: it sent {what}; the mechanism writes to file "
                                     "descriptors it does not own", self.sample(exact=False), self.output()))

    def _stop(self, death: WorkerDied) -> WorkerDied:
        self._death = death
        self.kill()
        return death

    def _report(self) -> dict | None:
        """The supervisor's "died" report (None: it ended without one)."""
        deadline = time.monotonic() + REPORT_WAIT
        text = b""
        while b"\n" not in text:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._status], [], [], remaining)[0]:
                return None
            chunk = os.read(self._status, 1 << 16)
            if not chunk:
                return None
            text += chunk
        try:
            return json.loads(text.split(b"\n", 1)[0])["died"]
        except (ValueError, KeyError, TypeError):
            return None

    def _resume(self) -> None:
        """SIGCONT to the supervisor: the code under audit may have stopped it (SIGSTOP cannot be caught), which
        would stop its watchdog and its clean-up; continuing a running process changes nothing. In the sandbox
        the supervisor is the grandchild of the process started here (bubblewrap, then the sandbox's first
        process): both are continued."""
        if self._supervisor.returncode is not None:
            return
        if self.isolation.sandboxed and len(self._inner) < 2:  # found once, from the process table
            first = descendants_of(self._supervisor.pid)
            self._inner = [pid for inner in first for pid in [inner, *descendants_of(inner)]]
            if self._inner and self._first is None:
                try:  # bubblewrap's first process: it exits only once the sandbox's PID namespace is empty
                    self._first = os.pidfd_open(self._inner[0])
                except (OSError, AttributeError):  # gone already, or no pidfd (Linux < 5.3)
                    pass
        for pid in [self._supervisor.pid, *self._inner]:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        """Stop the worker with everything it started: closing the lifeline tells the supervisor to kill the
        worker's process group and every descendant, and to exit (waited for; safe to call more than once)."""
        for name in ("_lifeline", "_requests"):
            fd = getattr(self, name)
            if fd is not None:
                os.close(fd)
                setattr(self, name, None)
        deadline = time.monotonic() + REPORT_WAIT
        while True:
            self._resume()  # a supervisor the code stopped (SIGSTOP) could not clean up: it is woken, repeatedly
            try:
                self._supervisor.wait(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() < deadline:
                    continue
            try:  # the supervisor is stuck: it and its worker (parent-death signal) go
                os.killpg(self._supervisor.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._supervisor.wait()
            break
        if self._first is not None:  # bubblewrap's outer process may exit before the sandbox's processes are gone
            select.select([self._first], [], [], REPORT_WAIT)  # readable once its first process (pid 1) has exited
            os.close(self._first)
            self._first = None
        for name in ("_answers", "_status"):
            fd = getattr(self, name)
            if fd is not None:
                os.close(fd)
                setattr(self, name, None)
        if self._tag is not None:
            self._hunt()
            _adopting(False)
            self._tag = None
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def _hunt(self) -> None:
        """Unsandboxed, where the supervisor was killed before it could clean up: what the code started was adopted
        by this process (a child subreaper while unsandboxed workers live). Every child of this process that
        carries this worker's tag in its environment is killed with its process group and reaped, until none is
        left (for at most :data:`~admmcheck.audit.running.supervisor.HUNT_SECONDS`); the worker too, should it be
        left unreaped."""
        tag = f"{TAG}={self._tag}".encode()
        deadline = time.monotonic() + HUNT_SECONDS
        while time.monotonic() < deadline:
            found = [pid for pid in descendants_of(os.getpid()) if _carries(pid, tag)]
            if not found:
                break
            for pid in found:
                kill_with_group(pid)
            for pid in found:
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass
        worker = self.progress.slots[WORKER]
        if worker > 0 and worker in descendants_of(os.getpid()):  # adopted when its supervisor died first (a zombie:
            try:                                                   # no tag to read)
                os.waitpid(worker, os.WNOHANG)
            except ChildProcessError:
                pass
