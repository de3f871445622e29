"""One audit worker subprocess seen from the process that drives it: requests in on its stdin
(pickles written by admmcheck), answers out on a separate pipe (a length-prefixed JSON header and
``.npz`` bytes), read with a deadline. Used by the local sampler and, on each Dask worker, by
:mod:`admmcheck.audit.dask_executor`."""

from __future__ import annotations

import json
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import time
from typing import Any

from admmcheck.errors import MechanismError

# Read by BLAS and OpenMP when they load: one thread per worker process, as the engine's own runs use
# (several workers share the cores; a scikit-learn fit inside a mechanism was 11x slower under load).
ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                     "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")}


class WorkerProcess:
    """One ``python -m admmcheck.audit.worker`` process: tasks in on stdin (pickles we write),
    results out on a separate pipe (length-prefixed JSON header and ``.npy`` bytes)."""

    def __init__(self) -> None:
        read_end, write_end = os.pipe()
        self._process = subprocess.Popen(
            [sys.executable, "-m", "admmcheck.audit.worker", str(write_end)], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(write_end,), close_fds=True,
            env=os.environ | ONE_THREAD, start_new_session=True)  # its own process group: see kill()
        os.close(write_end)
        self._results = read_end
        self._buffer = bytearray()

    def send(self, message: tuple) -> None:
        payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self._process.stdin.write(struct.pack("<Q", len(payload)) + payload)
            self._process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise MechanismError("an audit worker process died (the mechanism may have killed it)") from None

    def _read(self, size: int, deadline: float) -> bytes:
        while len(self._buffer) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._results], [], [], remaining)[0]:
                raise TimeoutError
            chunk = os.read(self._results, max(1 << 20, size - len(self._buffer)))
            if not chunk:
                raise MechanismError("an audit worker process died (the mechanism may have exited or crashed "
                                     "the interpreter)")
            self._buffer += chunk  # a bytearray: appending is amortised, not a copy of all read so far
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def receive(self, timeout: float) -> tuple[dict[str, Any], bytes]:
        """(JSON header, body bytes: a block's ``.npz``, or empty); a malformed frame is a :class:`MechanismError`."""
        deadline = time.monotonic() + timeout
        try:
            header_size, body_size = struct.unpack("<QQ", self._read(16, deadline))
            if header_size > 1 << 28:
                raise ValueError("header too long")
            header = json.loads(self._read(header_size, deadline))
            body = self._read(body_size, deadline) if body_size else b""
            if not isinstance(header, dict) or header.get("status") not in ("ok", "error"):
                raise ValueError("no status")
        except (ValueError, KeyError, TypeError, struct.error) as exc:
            raise MechanismError(f"an audit worker sent a malformed result ({exc}); the mechanism may write "
                                 "to file descriptors it does not own") from None
        return header, body

    def kill(self) -> None:
        """Stop the process with everything it started (its Octave, a mechanism's own subprocesses: the
        whole process group) and close its pipes (safe to call more than once)."""
        if self._process.returncode is None:  # not reaped yet, so the group id is still its own
            try:
                os.killpg(self._process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self._process.wait()
        if self._process.stdin:
            self._process.stdin.close()
        if self._results is not None:
            os.close(self._results)
            self._results = None
