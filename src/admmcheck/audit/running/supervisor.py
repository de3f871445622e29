"""The supervisor of one audit worker: ``python -m admmcheck.audit.running.supervisor SETTINGS``.

Everything the code under audit could switch off from inside the worker's Python is done here, in a process of
our own that runs no third-party code:

* **the watchdog.** The worker writes into the shared record (:mod:`admmcheck.audit.running.progress`) when each of
  its stages starts, and everything it does holding a request is a stage: a call of third-party code, encoding
  its output, putting its exception into words, building, copying and checking its dataset, counting, its own
  work, sending the answer. A stage that runs past its limit (:func:`limit_of`: ``timeout`` for a call,
  ``timeout`` times the block for a vectorised batch, ``timeout`` + :data:`LOAD_ALLOWANCE` for loading, ``timeout``
  + :data:`STAGE_SLACK` for every other) has the worker killed, between 1 and 1.1 times the limit (the watchdog
  looks every tenth of the timeout, at most every 0.1 s), and the fault names the stage. A request the worker
  does not take up (the driving process counts what it sent, the worker what it read) and an answer it does not
  finish sending while the driving process reads are timed the same way. Signal handlers, timers, blocked
  signals and threads holding the interpreter in the worker change nothing.
* **containment.** The supervisor is a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``): whatever the worker
  starts, children in sessions of their own and daemons that fork twice included, stays its descendant. When the
  worker ends (done, dead or killed), and when the process that started the supervisor ends by any means (its
  lifeline pipe closes: SIGKILL included), the worker's process group and every descendant are killed and reaped
  before the supervisor exits. The worker dies with the supervisor (``PR_SET_PDEATHSIG``).
* **the output capture.** The worker's stdout and stderr are one pipe read here; its last 64 KiB are kept in the
  shared record for fault messages, the rest discarded, so printing can neither block the worker nor fill a disk.
* **a temporary folder of its own.** The worker's ``TMPDIR`` is a fresh folder, removed with everything in it once
  the worker and its descendants are dead: what the code under audit (or Octave's working folder) leaves in the
  temporary folder does not pile up, though a killed worker runs no clean-up of its own.
* **the death report.** When the worker ends, one JSON line on the status pipe says how: its exit status or the
  signal that killed it, or the watchdog's reason.

Standard library only, so that it starts in tens of milliseconds. Linux gives the subreaper and the parent-death
signal; elsewhere the supervisor still runs the watchdog and kills the worker's process group.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from admmcheck.audit.running.progress import (BATCH, CALL, COUNT, COUNTING, IDLE, LOADING, PHASE, READING, REQUESTED,
                                              SENDING, STAGE_WORDS, STARTED, TAKEN, WORKER, Progress)

#: Seconds beyond ``timeout`` that loading the mechanism and its neighbours may take: importing a module,
#: building the neighbours' datasets, starting GNU Octave.
LOAD_ALLOWANCE = 60.0
#: Seconds beyond ``timeout`` that each of the worker's other stages may take (encoding one output, pickling a
#: dataset, writing a block's answer, ...): the slack of every deadline but the call's.
STAGE_SLACK = 5.0
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
#: How long descendants are hunted after the worker ended (a process that forks faster than it is killed).
HUNT_SECONDS = 5.0


def child_subreaper(on: bool) -> bool:
    """Make this process a child subreaper (or no longer one): orphans among its descendants become its children."""
    return _prctl(PR_SET_CHILD_SUBREAPER, int(on))


def _prctl(option: int, value: int) -> bool:
    """``prctl(option, value)`` where Linux offers it; False elsewhere or on failure."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def die_with_parent() -> None:
    """Have the kernel SIGKILL this process when its parent ends (called by the worker: its parent is the
    supervisor, a single thread, so the signal means the supervisor itself is gone)."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def limit_of(phase: int, count: int, timeout: float) -> float:
    """How long the worker may stay in ``phase`` (a stage of :mod:`~admmcheck.audit.running.progress`)."""
    if phase == CALL:
        return timeout
    if phase == BATCH:
        return timeout * max(count, 1)
    if phase == LOADING:
        return timeout + LOAD_ALLOWANCE
    if phase == COUNTING:
        return timeout * max(count, 1) + STAGE_SLACK
    return timeout + STAGE_SLACK


def answer_deadline(count: int, timeout: float) -> float:
    """The longest a block of ``count`` samples can take while every stage keeps to :func:`limit_of` (loading,
    each sample's call and encoding, and every stage of the block once; twice over, for a block drawn again after
    its input changed), plus the supervisor's own tenth and 10 s: the driving process's backstop, should the
    supervisor itself be stuck."""
    stages = timeout + STAGE_SLACK
    block = count * (timeout + stages) + limit_of(COUNTING, count, timeout) + 6 * stages
    return 1.1 * (limit_of(LOADING, count, timeout) + 2 * block) + 10.0


def overrun_reason(phase: int, count: int, timeout: float) -> str:
    if phase == CALL:
        return f"hangs: one call ran longer than the timeout of {timeout:g} s"
    if phase == BATCH:
        return f"hangs: batch of {count} ran longer than {timeout * count:g} s"
    if phase == LOADING:
        return (f"hangs while loading: importing it or building its neighbours took longer than "
                f"{timeout + LOAD_ALLOWANCE:g} s (--timeout plus {LOAD_ALLOWANCE:g} s)")
    limit = limit_of(phase, count, timeout)
    return (f"hangs {STAGE_WORDS.get(phase, f'in stage {phase}')}: that took longer than {limit:g} s (--timeout "
            f"{'times the block ' if phase == COUNTING else ''}plus {STAGE_SLACK:g} s)")


def signal_cause(number: int) -> str:
    """Why a process killed by signal ``number`` died, in words."""
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    meaning = {"SIGSEGV": "a crash in C code", "SIGBUS": "a crash in C code", "SIGILL": "a crash in C code",
               "SIGFPE": "a crash in C code", "SIGABRT": "aborted, e.g. by a failed C assertion",
               "SIGKILL": "by the kernel's out-of-memory killer or another process",
               "SIGXCPU": "it exceeded its CPU-time limit", "SIGXFSZ": "it exceeded the file-size limit"}.get(name)
    return f"was killed by {name}" + (f" ({meaning})" if meaning else "")


def kill_with_group(pid: int) -> None:
    """SIGKILL to ``pid``'s process group (where it leads one) and to ``pid`` itself; gone already is fine."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def descendants_of(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (read from ``/proc``; empty where there is none)."""
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()  # after "pid (comm) ": state, ppid, ...
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(entry))
    return found


class Supervisor:
    def __init__(self, settings: dict) -> None:
        self.timeout = float(settings["timeout"])
        self.period = min(0.1, self.timeout / 10)
        self.lifeline = settings["lifeline"]
        self.status = settings["status"]
        self.progress = Progress(settings["progress"])
        self.subreaper = child_subreaper(True)
        output_read, output_write = os.pipe()
        passed = tuple(settings["pass_fds"])
        # a session of its own: its process group is killed at once, and it has no terminal to read
        # made by the driving process (which removes it too, should this process be killed) or, in the sandbox,
        # here, in the sandbox's private /tmp (gone with the sandbox)
        self.scratch = settings.get("scratch") or tempfile.mkdtemp()
        worker = subprocess.Popen(settings["worker"], stdin=subprocess.DEVNULL, stdout=output_write,
                                  stderr=output_write, pass_fds=passed, close_fds=True, start_new_session=True,
                                  env={**os.environ, "TMPDIR": self.scratch})
        self.pid = worker.pid
        self.progress.slots[WORKER] = worker.pid
        worker.returncode = 0  # reaped by waitpid below, never by Popen
        os.close(output_write)
        for fd in passed:  # the worker's own now: an EOF on the answers must mean the worker's end is closed
            os.close(fd)
        self.output = output_read
        os.set_blocking(self.output, False)
        try:
            self.pidfd: int | None = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            self.pidfd = None
        self.status_code: int | None = None  # the worker's, as Popen gives it (negative: killed by that signal)
        self.watchdog: str | None = None
        self.pending_since: float | None = None  # since when a request waits that the idle worker has not taken
        # the worker's command line as /proc shows it (while the kernel still sets up a new program, empty): another
        # one means the code replaced the worker with an exec
        self.command = b"".join(os.fsencode(part) + b"\0" for part in settings["worker"])

    def run(self) -> None:
        parent_gone = False
        watched = [self.lifeline, self.output] + ([self.pidfd] if self.pidfd is not None else [])
        while self.status_code is None:
            ready = select.select(watched, [], [], self.period)[0]
            if self.output in ready and not self._drain():  # the worker closed its stdout and stderr: stop watching
                watched.remove(self.output)
            if self.lifeline in ready and not os.read(self.lifeline, 1):
                parent_gone = True  # the driving process is done with the worker, or dead: stop everything
                break
            self._watch()
            self._reap()
        self._kill_all()
        self._drain()
        shutil.rmtree(self.scratch, ignore_errors=True)  # nothing is left to write into it
        if not parent_gone:
            self._say({"died": self._cause()})

    def _command(self) -> bytes | None:
        try:
            with open(f"/proc/{self.pid}/cmdline", "rb") as handle:
                return handle.read()
        except OSError:
            return None

    def _watch(self) -> None:
        if self.watchdog is not None:
            return
        now_running = self._command()
        if now_running and now_running != self.command:  # not a death: the worker is another program
            shown = now_running.replace(b"\0", b" ").decode("utf-8", "replace").strip()
            self.watchdog = (f"replaced the worker process with another program (an exec: it now runs "
                             f"{shown[:200]!r})")
            self._kill_group()
            return
        slots, times, now = self.progress.slots, self.progress.times, time.monotonic()
        phase = slots[PHASE]  # read before its start time (progress's module docstring)
        started = times[STARTED]
        if phase == IDLE:  # timed only while a request waits for it
            if slots[REQUESTED] <= slots[TAKEN]:
                self.pending_since = None
                return
            self.pending_since = started = self.pending_since or now
        elif phase == SENDING:  # timed only while the driving process reads (else the pipe may be full)
            reading = times[READING]
            if reading <= 0.0:
                return
            started = max(started, reading)
        if started <= 0.0:
            return
        count = slots[COUNT]
        if now - started > limit_of(phase, count, self.timeout):
            self.watchdog = overrun_reason(phase, count, self.timeout)
            self._kill_group()

    def _reap(self, block: bool = False) -> None:
        """Collect ended children: the worker (its status kept) and descendants handed to this subreaper."""
        while True:
            try:
                pid, status = os.waitpid(-1, 0 if block else os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.pid:
                self.status_code = os.waitstatus_to_exitcode(status)
                if block:
                    return

    def _cause(self) -> dict:
        status = self.status_code
        if self.watchdog is not None:
            cause = self.watchdog
        elif status is not None and status < 0:
            cause = f"stopped: the worker process {signal_cause(-status)}"
        else:
            cause = f"stopped: the worker process exited with status {status}"
        return {"cause": cause, "status": status, "watchdog": self.watchdog is not None}

    def _drain(self) -> bool:
        """Keep what the worker printed; False once its end of the pipe is closed."""
        while True:
            try:
                chunk = os.read(self.output, 1 << 16)
            except (BlockingIOError, InterruptedError):
                return True
            if not chunk:
                return False
            self.progress.record_output(chunk)

    def _kill_group(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def _kill_all(self) -> None:
        """The worker's process group, then every descendant the subreaper inherits, until none is left."""
        self._kill_group()  # the worker, or what is left of its group (its Octave, a helper it started)
        if self.status_code is None:
            self._reap(block=True)
        deadline = time.monotonic() + HUNT_SECONDS
        while self.subreaper and time.monotonic() < deadline:
            children = descendants_of(os.getpid())
            if not children:
                return
            for pid in children:
                kill_with_group(pid)
            self._reap()

    def _say(self, message: dict) -> None:
        try:
            os.write(self.status, (json.dumps(message) + "\n").encode())
        except OSError:
            pass  # the driving process is gone


def _ignore(signum: int, frame: object) -> None:
    pass


#: Every signal whose default ends or stops a process and that a process can catch: the code under audit may send
#: any of them to its supervisor (its parent), which is stopped only through its lifeline or by SIGKILL. The
#: signals of a fault in the process itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS) keep their
#: default: a handler cannot resume after a real fault.
FENDED_OFF = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGPROF",
              "SIGIO", "SIGPWR", "SIGSTKFLT", "SIGXCPU", "SIGXFSZ", "SIGTSTP", "SIGTTIN", "SIGTTOU")


def fend_off_signals() -> None:
    """A handler that does nothing for every signal of :data:`FENDED_OFF` and every real-time signal (a handler,
    not SIG_IGN, which the worker would inherit; the worker's own reset to the defaults at ``exec``)."""
    names = [name for name in FENDED_OFF if hasattr(signal, name)]
    numbers = [getattr(signal, name) for name in names]
    if hasattr(signal, "SIGRTMIN"):
        numbers += list(range(signal.SIGRTMIN, signal.SIGRTMAX + 1))
    for number in numbers:
        try:
            signal.signal(number, _ignore)
        except (OSError, ValueError, RuntimeError):  # one this platform does not let a process catch
            pass


def main() -> None:
    fend_off_signals()
    Supervisor(json.loads(sys.argv[1])).run()


if __name__ == "__main__":
    main()
