"""Broken and hostile mechanisms of the kinds found in real code, audited by tests/test_audit_isolation.py.

Each misbehaves at the sample whose first uniform draw is below 0.01 (so the fault's sample is known from
``sample_generator``), and otherwise releases ``data + Laplace(1)``. The benign ones at the end behave oddly
(print, close stdin, leave a thread running) but release a correct Laplace mechanism.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

SLEEPER = "import time\nwhile True: time.sleep(1)\n"


def _laplace(data, rng, u):
    return data + rng.laplace(0.0, 1.0)


def _when(misbehave):
    def mechanism(data, rng):
        u = rng.random()
        if u < 0.01:
            misbehave()
        return _laplace(data, rng, u)
    mechanism.__name__ = misbehave.__name__
    return mechanism


def neighbours():
    return (0.0, 1.0)


# ---- every way a Python process can die ------------------------------------------------------
exits = _when(lambda: sys.exit(3))
execs = _when(lambda: os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)"]))
exits_at_os_level = _when(lambda: os._exit(4))
interrupted = _when(lambda: (_ for _ in ()).throw(KeyboardInterrupt()))
kills_itself = _when(lambda: os.kill(os.getpid(), signal.SIGKILL))
aborts = _when(lambda: os.abort())
crashes_in_c = _when(lambda: ctypes.string_at(0))  # reads address 0: SIGSEGV


def _ignore_alarms_and_loop():
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    signal.setitimer(signal.ITIMER_REAL, 0)
    while True:
        pass


def _block_every_signal_and_sleep():
    signal.pthread_sigmask(signal.SIG_BLOCK, set(signal.Signals) - {signal.SIGKILL, signal.SIGSTOP})
    time.sleep(600)


# ---- timers and signal handlers changed -------------------------------------------------------
ignores_alarms = _when(_ignore_alarms_and_loop)
blocks_signals = _when(_block_every_signal_and_sleep)


# ---- descriptors closed or written --------------------------------------------------------------
def _close_every_descriptor():
    os.closerange(3, 1024)


def _write_into_every_descriptor():
    for fd in range(3, 64):
        try:
            os.write(fd, b"\x00garbage from the mechanism\n" * 4)
        except OSError:
            pass


closes_descriptors = _when(_close_every_descriptor)
writes_descriptors = _when(_write_into_every_descriptor)


# ---- resources ------------------------------------------------------------------------------------
def unbounded_allocation(data, rng):
    """Allocates without limit (touching the pages) at the sample with u < 0.01."""
    if rng.random() < 0.01:
        held = []
        while True:
            held.append(np.ones(1 << 24))  # 128 MiB each
    return data + rng.laplace(0.0, 1.0)


def huge_output(data, rng):
    """Releases 2 million numbers (16 MB) at the sample with u < 0.01."""
    if rng.random() < 0.01:
        return np.zeros(2_000_000)
    return data + rng.laplace(0.0, 1.0)


class _Exhausting(list):
    """A list whose elements cannot be read without running out of memory."""

    def __iter__(self):
        raise MemoryError()


def memory_runs_out_outside_the_call(data, rng):
    """Returns, at u < 0.01, an output that runs out of memory when the worker reads it (after the call)."""
    if rng.random() < 0.01:
        return _Exhausting([1.0])
    return data + rng.laplace(0.0, 1.0)


# ---- processes and threads it starts ---------------------------------------------------------------
def _start_sleeper(**options):
    subprocess.Popen([sys.executable, "-c", SLEEPER], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, **options)


def child_in_new_session(data, rng):
    """Starts a sleeping child in a session of its own on every 100th call or so, and at u < 0.01 exits."""
    u = rng.random()
    if u < 0.02:
        _start_sleeper(start_new_session=True)
    if u < 0.01:
        os._exit(9)
    return data + rng.laplace(0.0, 1.0)


def _daemonise():
    """The double fork of a daemon: the grandchild, in a session of its own, is nobody's child but init's."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", SLEEPER])
        os._exit(0)


daemonises_then_hangs = _when(lambda: (_daemonise(), time.sleep(600)))


def _thread_that_ends_the_process():
    """A thread ends the process while the call waits for it (started and left, it may fire after the last sample,
    or in a later call: a race, not a test)."""
    threading.Thread(target=lambda: (time.sleep(0.05), os._exit(6)), daemon=True).start()
    time.sleep(5)


thread_ends_the_process = _when(_thread_that_ends_the_process)


def _fork_and_return_twice():
    os.fork()  # both the worker and its child return from the call


forks = _when(_fork_and_return_twice)


def _print_then_raise():
    print("about to fail on this sample", flush=True)
    raise ValueError("bad input")


prints_then_raises = _when(_print_then_raise)


# ---- answers forged on the worker's own answer pipe (issue 62: the main process trusts nothing it receives) ----
def _forge(header: bytes, body: bytes = b"") -> None:
    """Write one well-framed answer into the worker's answer pipe (its number is in the worker's own argv)."""
    import json

    from admmcheck.audit.running.channel import MAGIC, PREFIX

    view = memoryview(PREFIX.pack(MAGIC, len(header), len(body)) + header + body)
    answers = json.loads(sys.argv[1])["answers"]
    while view:
        view = view[os.write(answers, view):]


def _token() -> bytes:
    """The header of an answer to the worker's current request, its token read from the worker's memory (the code
    shares the worker's process: nothing there is hidden from it)."""
    import gc
    import json

    token = next(o.token for o in gc.get_objects() if type(o).__name__ == "_Channel")
    return json.dumps({"status": "ok", "token": token}).encode()


def _stored_block(values: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.savez(buffer, values=values, kind_of=np.zeros(len(values), dtype=np.int64),
             kinds=np.array('[["float", [["output", []]]]]'))
    return buffer.getvalue()


def _deep_header():
    _forge(b"[" * 100_000 + b"]" * 100_000)


def _inflating_block(mib: int = 512):
    """A 2.4 MB answer whose values.npy inflates to ``mib`` MiB of zeros (deflated at level 1, written in pieces)."""
    import io
    import zipfile

    rows = (mib << 20) // 8
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (rows, 1)})
    buffer, zeros = io.BytesIO(), bytes(1 << 20)
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open("values.npy", "w", force_zip64=True) as stream:
            stream.write(header.getvalue())
            for _ in range(mib):
                stream.write(zeros)
        for name, array in (("kind_of.npy", np.zeros(rows, dtype=np.int64)[:1]), ("kinds.npy", np.array("[]"))):
            with archive.open(name, "w") as stream:
                np.lib.format.write_array(stream, array)
    _forge(_token(), buffer.getvalue())


def _nan_block():
    values = np.zeros((1000, 1))
    values[7] = np.nan
    _forge(_token(), _stored_block(values))


def _plausible_block_instead():
    """The worker's own answers go to the null device; a well-formed block of plausible numbers goes in their place
    (without the request's token, which only the worker's memory holds)."""
    import json

    answers = json.loads(sys.argv[1])["answers"]
    _forge(b'{"status": "ok"}', _stored_block(np.random.default_rng(0).laplace(size=(1000, 1))))
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, answers)
    os.close(null)


def _raise_terminal_escapes():
    raise ValueError("\r\x1b[2K\x1b[1Ano violation found: epsilon >= 0.0000\nall fine")


forges_a_deep_header = _when(_deep_header)
forges_an_inflating_block = _when(_inflating_block)
forges_a_nan_block = _when(_nan_block)
forges_a_plausible_block = _when(_plausible_block_instead)
raises_terminal_escapes = _when(_raise_terminal_escapes)


# ---- hangs outside the call (issue 62 item 1: every stage of the worker is timed) ----------------------------
class _HangsAsAnArray:
    def __array__(self, *args, **kwargs):
        time.sleep(3600)


class _HangsInWords(Exception):
    def __str__(self):
        time.sleep(3600)
        return "never"


def hangs_when_its_output_is_encoded(data, rng):
    """Returns an object whose ``__array__`` (run while the worker encodes the output) sleeps an hour."""
    if rng.random() < 0.01:
        return _HangsAsAnArray()
    return data + rng.laplace(0.0, 1.0)


def _raise_hanging_in_words():
    raise _HangsInWords()


hangs_when_its_exception_is_put_into_words = _when(_raise_hanging_in_words)


class HangsWhenPickledAgain:
    """A dataset (``value``) whose pickling hangs from its fifth time in a process: the worker pickles each side of
    the pair twice as it loads them, so the first check for changes after a block hangs."""

    pickled = 0

    def __init__(self, value: float) -> None:
        self.value = value

    def __reduce__(self):
        HangsWhenPickledAgain.pickled += 1
        if HangsWhenPickledAgain.pickled > 4:
            time.sleep(3600)
        return (HangsWhenPickledAgain, (self.value,))


def neighbours_that_hang_when_pickled_again():
    return (HangsWhenPickledAgain(0.0), HangsWhenPickledAgain(1.0))


def reads_its_value(data, rng):
    return data.value + rng.laplace(0.0, 1.0)


def _steal_requests():
    """Starts a thread that reads the audit's request pipe (its number is in the worker's own argv) as the worker
    does: the requests it takes, the worker never sees."""
    import json

    requests = json.loads(sys.argv[1])["requests"]

    def steal():
        while os.read(requests, 1 << 16):
            pass

    threading.Thread(target=steal, daemon=True).start()


def _hog_the_interpreter_later():
    """Starts a thread that, 0.3 s later (the worker goes on meanwhile), sleeps an hour in C holding the
    interpreter (a ctypes.PyDLL call keeps the GIL): the worker's own code never runs again."""
    def hog():
        time.sleep(0.3)
        ctypes.PyDLL(None).sleep(3600)

    threading.Thread(target=hog, daemon=True).start()


steals_its_requests = _when(_steal_requests)
holds_the_interpreter_from_a_thread = _when(_hog_the_interpreter_later)


# ---- what the sandbox stops (issue 62 item 4): each tries on every call, then releases data + Laplace(1) ----------
def reads_a_private_file(data, rng):
    """Reads the file the test names in ADMMCHECK_TEST_SECRET (in the user's home folder)."""
    with open(os.environ["ADMMCHECK_TEST_SECRET"]) as stream:
        stream.read()
    return data + rng.laplace(0.0, 1.0)


def writes_into_home(data, rng):
    """Writes a file named by the test's mark into $HOME."""
    with open(os.path.join(os.path.expanduser("~"), f"written-{os.environ['ADMMCHECK_TEST_MARK']}"), "w") as stream:
        stream.write("x")
    return data + rng.laplace(0.0, 1.0)


def writes_into_the_working_folder(data, rng):
    with open(f"written-{os.environ['ADMMCHECK_TEST_MARK']}", "w") as stream:
        stream.write("x")
    return data + rng.laplace(0.0, 1.0)


_CONNECTED: list[None] = []


def opens_a_socket(data, rng):
    """At its first call in a process, connects to the port the test listens on (ADMMCHECK_TEST_PORT, on this
    machine's loopback)."""
    import socket

    if not _CONNECTED:
        with socket.create_connection(("127.0.0.1", int(os.environ["ADMMCHECK_TEST_PORT"])), timeout=2):
            _CONNECTED.append(None)
    return data + rng.laplace(0.0, 1.0)


def _daemon_then_kill_the_supervisor():
    _start_sleeper(start_new_session=True)
    os.kill(os.getppid(), signal.SIGKILL)


kills_its_supervisor = _when(_daemon_then_kill_the_supervisor)


def signs_of_the_audit(data, rng):
    """Raises, listing what it sees of the audit: its temporary folder, its parent's and pid 1's command lines."""
    def line(pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as stream:
                return stream.read().replace(b"\0", b" ").decode()[:300]
        except OSError as exc:
            return type(exc).__name__
    raise RuntimeError(f"TMPDIR={os.environ.get('TMPDIR')} parent={line(os.getppid())} init={line(1)} "
                       f"pid={os.getpid()}")


# ---- benign: odd but correct ------------------------------------------------------------------------
def prints(data, rng):
    print("drawing a sample", flush=True)
    print("a warning on stderr", file=sys.stderr, flush=True)
    return data + rng.laplace(0.0, 1.0)


def closes_stdin_and_stdout(data, rng):
    for fd in (0, 1):
        try:
            os.close(fd)
        except OSError:
            pass
    return data + rng.laplace(0.0, 1.0)


def closes_stdin_and_stdout_and_stderr(data, rng):
    for fd in (0, 1, 2):
        try:
            os.close(fd)
        except OSError:
            pass
    return data + rng.laplace(0.0, 1.0)


_HELPERS: list[threading.Thread] = []


_SIGNALLED = []


def signals_its_supervisor(data, rng):
    """At its first call in a worker, every catchable signal that would end or stop a process, sent to the worker's
    parent (its supervisor); then a plain Laplace mechanism, its draws untouched."""
    if not _SIGNALLED:
        _SIGNALLED.append(True)
        for name in ("SIGUSR1", "SIGUSR2", "SIGALRM", "SIGHUP", "SIGQUIT", "SIGTSTP", "SIGVTALRM", "SIGPROF", "SIGIO",
                     "SIGXCPU", "SIGXFSZ", "SIGPWR", "SIGINT", "SIGTERM"):
            os.kill(os.getppid(), getattr(signal, name))
        os.kill(os.getppid(), signal.SIGRTMIN + 2)
    return data + rng.laplace(0.0, 1.0)


def leaves_a_thread(data, rng):
    if not _HELPERS:
        helper = threading.Thread(target=lambda: time.sleep(3600))  # not a daemon: it would hold the exit
        helper.start()
        _HELPERS.append(helper)
    return data + rng.laplace(0.0, 1.0)


_CALLS: list[None] = []


def leaves_temporary_files(data, rng):
    """Correct, but leaves a temporary folder and file behind on every 100th call in a worker (named by the test's
    mark; counted, not drawn: the samples are those of the plain mechanism)."""
    _CALLS.append(None)
    if len(_CALLS) % 100 == 1:
        folder = tempfile.mkdtemp(prefix=f"left-{os.environ.get('ADMMCHECK_TEST_MARK', 'x')}-")
        with open(os.path.join(folder, "scratch.bin"), "wb") as stream:
            stream.write(b"0" * 1024)
    return data + rng.laplace(0.0, 1.0)


def stops_its_supervisor(data, rng):
    """At its first call in a worker: starts a sleeper child, leaves a file in the temporary folder, and stops its
    supervisor (SIGSTOP, which no process can catch); then a plain Laplace mechanism, its draws untouched."""
    if not _SIGNALLED:
        _SIGNALLED.append(True)
        _start_sleeper()
        folder = tempfile.mkdtemp(prefix=f"left-{os.environ.get('ADMMCHECK_TEST_MARK', 'x')}-")
        open(os.path.join(folder, "scratch.bin"), "wb").close()
        os.kill(os.getppid(), signal.SIGSTOP)
    return data + rng.laplace(0.0, 1.0)


def plain(data, rng):
    return data + rng.laplace(0.0, 1.0)


def spawns_and_releases(data, rng):
    """Correct (Laplace(1)), but starts a sleeping child in a session of its own on one call in 500."""
    if rng.random() < 0.002:
        subprocess.Popen(["sleep", "1000"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    return data + rng.laplace(0.0, 1.0)
