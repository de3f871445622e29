"""MATLAB/Octave code under audit: ``FILE.m:FUNCTION`` run in GNU Octave.

Each audit worker process that loads such a function starts **one long-lived Octave**
(:class:`OctaveSession`) and talks to it over a small protocol of our own: a text line per
request on Octave's stdin (plus a packed dataset, sent once per dataset), one length-prefixed
answer per request on a separate pipe (:mod:`.codec` gives the byte layout and the table of
conversions). Why not ``oct2py``: it would add ``octave_kernel``/``metakernel`` and the Jupyter
stack to our dependencies, moves every value through ``.mat`` files (in which a logical comes
back as ``uint8``, and a row and a column vector both as one flat array), and cannot be
interrupted cleanly from a signal handler; our protocol is three ``.m`` files and a codec, and keeps
every distinction an observer could make. A call that overruns the timeout is stopped like Python
code: the worker's supervisor kills the worker's process group, its Octave included.

Octave runs in an empty working folder of its own (Octave looks in its working folder before its
path, so a file of the same name where admmcheck was started would be called instead), with the
named file's folder first on its path, and :meth:`OctaveFunction._check_resolves` refuses a function
that Octave's ``which`` does not find in the named file.

The audited function is called as ``out = FUNCTION(data)``. Before each call every Octave
generator (``rand``, and with it ``randi`` and ``randperm``; ``randn``, ``rande``, ``randg``,
``randp``) gets its own state from the sample's seed, so runs are reproducible and the samples
independent. A vectorised form ``rows = FUNCTION_batch(data, n)`` (n rows of numbers), found next
to it, is used when present. What the function prints goes nowhere. Octave errors become
:class:`OctaveError` with the message and the place on one line.
"""

from __future__ import annotations

import atexit
import base64
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from admmcheck.audit.inputs.contract import Pair
from admmcheck.audit.running.octave.codec import pack, unpack
from admmcheck.foundations.errors import InvalidConfiguration, MechanismError

HERE = Path(__file__).parent
STARTUP_TIMEOUT = 60.0  # seconds for Octave to start and answer a request that runs no audited code
INSTALL_HINT = ("install GNU Octave (Debian/Ubuntu: apt-get install octave; Fedora: dnf install octave; macOS: "
                "brew install octave) or name its executable in the environment variable ADMMCHECK_OCTAVE")


class OctaveError(Exception):
    """The audited Octave code raised an error (the message is Octave's, on one line, with the place)."""


def octave_command() -> str | None:
    """The Octave executable: ``$ADMMCHECK_OCTAVE``, else ``octave-cli`` or ``octave`` on the PATH."""
    named = os.environ.get("ADMMCHECK_OCTAVE")
    if named:
        return shutil.which(named)
    return shutil.which("octave-cli") or shutil.which("octave")


def require_octave(spec: str) -> str:
    """The Octave executable, or an :class:`InvalidConfiguration` saying how to install it."""
    command = octave_command()
    if command is None:
        raise InvalidConfiguration(f"{spec!r} is MATLAB/Octave code and GNU Octave was not found: {INSTALL_HINT}")
    return command


class OctaveSession:
    """One Octave process serving admmcheck requests (``admmcheck_serve.m``)."""

    def __init__(self) -> None:
        command = require_octave("FILE.m")
        read_end, write_end = os.pipe()
        self._log = tempfile.TemporaryFile()
        # Octave looks in its working folder before its path: an empty folder of its own, so that a file of the
        # same name where admmcheck was started is never the function called
        self._folder = tempfile.TemporaryDirectory(prefix="admmcheck-octave-")
        folder = str(HERE).replace("'", "''")
        self._process = subprocess.Popen(
            [command, "--no-gui", "--no-window-system", "--quiet", "--norc", "--no-history", "--no-line-editing",
             "--eval", f"addpath('{folder}'); admmcheck_serve('/dev/fd/{write_end}')"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._log, pass_fds=(write_end,),
            close_fds=True, cwd=self._folder.name)
        os.close(write_end)
        self._answers = read_end
        self._buffer = b""
        self._sent: dict[int, tuple[Any, int]] = {}

    def request(self, line: str, payload: bytes = b"", timeout: float | None = STARTUP_TIMEOUT) -> Any:
        """Send one request; the answer's value, or :class:`OctaveError`. ``timeout`` None waits for
        as long as it takes (the caller's alarm interrupts it); an interruption kills the Octave."""
        try:
            self._process.stdin.write(line.encode("utf-8", "surrogateescape")
                                      + (b" " + base64.b64encode(payload) if payload else b"") + b"\n")
            self._process.stdin.flush()
            deadline = None if timeout is None else time.monotonic() + timeout
            (size,) = struct.unpack("<Q", self._read(8, deadline))
            body = self._read(size, deadline)
        except BaseException:
            self.close()  # stuck, interrupted or dead: never reused
            raise
        if body[:1] == b"e":
            raise OctaveError(body[1:].decode("utf-8", "replace"))
        return unpack(body[1:])

    def _read(self, size: int, deadline: float | None) -> bytes:
        while len(self._buffer) < size:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and (wait <= 0 or not select.select([self._answers], [], [], wait)[0]):
                raise MechanismError(f"Octave did not answer a request that runs no audited code within "
                                     f"{STARTUP_TIMEOUT:g} s{self._said()}")
            chunk = os.read(self._answers, max(1 << 16, size - len(self._buffer)))
            if not chunk:
                raise MechanismError(f"Octave exited{self._said()}")
            self._buffer += chunk
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def _said(self) -> str:
        """What Octave wrote to stderr, last line, for a message."""
        self._log.seek(0)
        lines = [line.strip() for line in self._log.read().decode("utf-8", "replace").splitlines() if line.strip()]
        return f" (Octave said: {lines[-1]})" if lines else ""

    def dataset(self, data: Any) -> int:
        """The number under which Octave holds ``data`` (sent once per object)."""
        known = self._sent.get(id(data))
        if known is not None and known[0] is data:
            return known[1]
        key = len(self._sent) + 1
        self.request(f"data {key}", pack(data))
        self._sent[id(data)] = (data, key)  # the object is kept, so its id is not reused
        return key

    @property
    def alive(self) -> bool:
        return self._process.poll() is None and self._answers is not None

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        if self._process.stdin:
            try:
                self._process.stdin.close()
            except OSError:
                pass
        if self._answers is not None:
            os.close(self._answers)
            self._answers = None
        self._log.close()
        self._folder.cleanup()


_SESSION: OctaveSession | None = None


def session() -> OctaveSession:
    """This process's Octave (started on first use, started again after it was killed; stopped when the
    process exits)."""
    global _SESSION
    if _SESSION is None or not _SESSION.alive:
        if _SESSION is None:
            atexit.register(lambda: _SESSION is not None and _SESSION.close())
        else:
            _SESSION.close()
        _SESSION = OctaveSession()
    return _SESSION


def _seeds(rng: np.random.Generator) -> str:
    """Twenty 32-bit words from the sample's generator: four for each Octave generator's state."""
    return " ".join(str(int(w)) for w in rng.integers(0, 2**32, size=20, dtype=np.uint64))


class OctaveFunction:
    """``FILE.m:FUNCTION`` made callable from Python in a worker process. FUNCTION is the file's own
    function (FUNCTION equals the file's name: the file's folder goes first on Octave's path) or a
    function a script file defines (the file is run with ``source`` once)."""

    def __init__(self, spec: str) -> None:
        path, _, name = spec.rpartition(":")
        file = Path(path)
        if not file.is_file():
            raise InvalidConfiguration(f"{spec!r}: the file {file} does not exist")
        self.spec, self.name, self.file = spec, name, file.resolve()
        self._load()

    def _load(self) -> None:
        octave = self._session = session()
        where = str(self.file if self.file.stem != self.name else self.file.parent).encode("utf-8", "surrogateescape")
        octave.request("path" if self.file.stem == self.name else "source", where)
        if octave.request(f"exist {self.name}") not in (2, 103):
            raise InvalidConfiguration(f"{self.spec!r}: Octave finds no function {self.name} there; name the file's "
                                       f"function (the file's name, {self.file.stem}) or a function the script "
                                       "file defines")
        self._check_resolves(self.name)

    def _check_resolves(self, name: str) -> None:
        """Refuse unless Octave's ``which`` finds ``name`` in this file (not a function of the same name elsewhere
        on its path, in a package or built in)."""
        found = self._session.request(f"which {name}")
        found = found if isinstance(found, str) else ""
        try:
            same = bool(found) and Path(found).resolve() == self.file
        except OSError:
            same = False
        if not same:
            raise InvalidConfiguration(
                f"{self.spec!r}: Octave would call {name} from {found or 'a built-in or another place'}, not from "
                f"{self.file}: the file does not define {name}, or another definition comes first; rename the "
                "function, or name the file that defines it")

    def call(self, *args: Any, nargout: int = 1, rng: np.random.Generator | None = None,
             timeout: float | None = None) -> list[Any]:
        if self._session is not session():  # Octave was restarted (killed after a timeout): load again
            self._load()
        octave = self._session
        key = octave.dataset(args[0]) if args else 0
        seeds = "" if rng is None else " " + _seeds(rng)
        return octave.request(f"call {self.name} {key} {nargout}{seeds}", timeout=timeout)


class OctaveMechanism(OctaveFunction):
    """``out = FUNCTION(data)`` as a mechanism ``mechanism(data, rng)``: Octave's generators are
    seeded from ``rng`` before the call. Has ``batch`` when ``FUNCTION_batch.m`` exists next to it."""

    def _load(self) -> None:
        super()._load()
        batch = f"{self.name}_batch"
        if self._session.request(f"exist {batch}") in (2, 103) and self._in_this_file(batch):
            self.batch = self._batch

    def _in_this_file(self, name: str) -> bool:
        """Whether ``name`` resolves to this file's folder (a ``FUNCTION_batch.m`` beside it) or, for a script,
        to the script itself."""
        found = self._session.request(f"which {name}")
        if not isinstance(found, str) or not found:
            return False
        place = Path(found).resolve()
        return place == self.file or place == self.file.with_name(f"{name}.m")

    def __call__(self, data: Any, rng: np.random.Generator) -> Any:
        return self.call(data, rng=rng)[0]

    def _batch(self, data: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        if self._session is not session():
            self._load()
        octave = self._session
        key = octave.dataset(data)
        rows = octave.request(f"batch {self.name}_batch {key} {n} {_seeds(rng)}", timeout=None)[0]
        return np.asarray(rows, dtype=np.float64)


class OctaveNeighbours(OctaveFunction):
    """``[d0, d1] = FUNCTION()`` as a neighbours callable: one :class:`~admmcheck.audit.Pair`."""

    def __call__(self) -> Pair:
        d0, d1 = self.call(nargout=2)
        return Pair(d0, d1)
