"""The audit's sampling blocks on a Dask distributed cluster (``--scheduler ADDRESS``).

The :class:`~admmcheck.audit.running.sampling.Sampler` talks to its workers through two calls,
``send(message)`` and ``receive(timeout)``. :class:`DaskWorker` offers the same two calls for a
cluster: each block becomes one Dask task, and that task does on the Dask worker exactly what
the local engine does on this machine — it starts (once per Dask worker process and audit) an
isolated ``python -m admmcheck.audit.running.worker`` subprocess, sends it the block, and reads the
answer with the same per-block time allowance. So the mechanism still never runs in a Dask
worker's own process, a hanging call is still killed by its per-call timeout, a block returns
the same JSON header and ``.npy`` bytes, and the samples of a block are the same numbers
whichever machine draws them: results equal the local executor's for the same seed.
When the audit ends, :func:`close_audit` stops its subprocesses on every Dask worker, with all they
started.

However the client ends (Ctrl-C, SIGTERM, SIGKILL, its machine or its connection lost), the Dask workers, which
outlive it, stop its subprocesses on their own: the client holds a lease on every Dask worker (:class:`Lease`,
renewed every :data:`RENEW_EVERY_S` seconds), and a watchdog thread on each Dask worker process stops the
subprocesses of an audit whose lease has not been renewed for :data:`LEASE_S` seconds, with everything they started
and their folders. So nothing of an audit outlives its client by more than LEASE_S plus the time a stop takes (at
most the supervisor's report wait, 10 s; well under a second as measured).

Requirements: ``pip install "admmcheck[dask]"`` here and on every Dask worker (the worker
starts ``sys.executable -m admmcheck.audit.running.worker``), and the mechanism's source reachable from
the workers (a module installed there, or a file at the same path). Dask moves tasks and
results between machines with its own protocol, which trusts the cluster's workers.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any


from admmcheck.audit.running.supervisor import answer_deadline
from admmcheck.audit.running.worker_process import WorkerProcess
from admmcheck.foundations.errors import InvalidConfiguration, MechanismError

CONNECT_TIMEOUT_S = 20.0  # how long to wait for the scheduler before saying it cannot be reached
#: Seconds an audit's subprocesses on a Dask worker live without their client renewing its lease
LEASE_S = 10.0
#: How often the client renews its leases (well within LEASE_S: a renewal may wait for a busy scheduler)
RENEW_EVERY_S = 2.0
#: On a Dask worker process: (audit key, thread) -> that thread's supervised worker for the audit
_WORKERS: dict[tuple, WorkerProcess] = {}
#: On a Dask worker process: audit key -> when its lease runs out (time.monotonic())
_LEASES: dict[tuple, float] = {}
_WATCHDOG: list[threading.Thread] = []  # the Dask worker process's watchdog, once started
_WORKERS_LOCK = threading.Lock()


def audit_key(init: tuple) -> tuple:
    """What identifies one audit on the cluster: its ``init`` message, the code by its fingerprint."""
    mechanism, neighbours, seed, timeout, exceptions_are_outputs, limits = init
    return (mechanism.fingerprint(), neighbours.fingerprint(), seed, timeout, exceptions_are_outputs, limits)


def _remote(init: tuple, message: tuple, allowance: float, tally: bytes | None = None) -> tuple[dict[str, Any], bytes]:
    """Runs on a Dask worker: forward ``message`` to this audit's isolated subprocess, after the
    ``tally`` its counts are to be reduced to (a ``count`` message; any subprocess may get the task)."""
    key = (audit_key(init), threading.get_ident())  # one subprocess per audit and Dask worker thread
    with _WORKERS_LOCK:
        worker = _WORKERS.get(key)
        if key[0] not in _LEASES:  # a task may come before the client's first renewal reached this worker
            _lease_until(key[0], time.monotonic() + LEASE_S)
    if worker is None:
        worker = WorkerProcess(init[-1], (*init[0].files(), *init[1].files()))
        with _WORKERS_LOCK:
            _WORKERS[key] = worker
        worker.send(("init", *init))
    try:
        if tally is not None:
            worker.send(("tally", tally))
        worker.send(message)
        header, body = worker.receive(allowance)
    except (TimeoutError, MechanismError) as exc:
        worker.kill()
        with _WORKERS_LOCK:
            _WORKERS.pop(key, None)
        if isinstance(exc, TimeoutError):
            return {"status": "timeout"}, b""
        return {"status": "error", "message": str(exc)}, b""
    return {**header, "isolation": str(worker.isolation)}, body  # which isolation ran on this machine


def _lease_until(key: tuple, deadline: float) -> None:
    """Set the audit's lease on this Dask worker process, starting its watchdog once (held: _WORKERS_LOCK)."""
    _LEASES[key] = deadline
    if not _WATCHDOG:
        watchdog = threading.Thread(target=_watch, name="admmcheck-audit-leases", daemon=True)
        watchdog.start()
        _WATCHDOG.append(watchdog)


def _renew(key: tuple) -> bool:
    """Runs on every Dask worker (``client.run``, from :class:`Lease`): the audit's lease runs another LEASE_S."""
    with _WORKERS_LOCK:
        _lease_until(key, time.monotonic() + LEASE_S)
    return True


def _watch() -> None:
    """A Dask worker process's watchdog: every half second, stop the subprocesses of each audit whose lease ran out
    (its client is gone)."""
    while True:
        time.sleep(0.5)
        now = time.monotonic()
        with _WORKERS_LOCK:
            expired = [key for key, deadline in _LEASES.items() if deadline < now]
        for key in expired:
            _close_audit(key)


def _close_audit(key: tuple) -> int:
    """Runs on every Dask worker (``client.run``) when an audit ends, and from the watchdog when its lease runs out:
    its supervised workers, with everything they started, are stopped. Returns how many."""
    with _WORKERS_LOCK:
        _LEASES.pop(key, None)
        ended = [_WORKERS.pop(found) for found in [k for k in _WORKERS if k[0] == key]]
    for worker in ended:
        worker.kill()
    return len(ended)


def close_audit(client, init: tuple) -> None:
    """Stop the audit's workers on every Dask worker (a worker the cluster lost has none left to stop)."""
    try:
        client.run(_close_audit, audit_key(init))
    except Exception:  # noqa: BLE001 - a cluster going away at the audit's end takes its workers with it
        pass


class Lease:
    """The client's side of an audit's lease: renewed on every Dask worker at once, then every RENEW_EVERY_S seconds
    from a daemon thread, until :meth:`stop` (or until this process ends, however it ends)."""

    def __init__(self, client, key: tuple) -> None:
        self._client, self._key = client, key
        self._stopped = threading.Event()
        client.run(_renew, key)
        self._thread = threading.Thread(target=self._renew, name="admmcheck-lease", daemon=True)
        self._thread.start()

    def _renew(self) -> None:
        while not self._stopped.wait(RENEW_EVERY_S):
            try:
                self._client.run(_renew, self._key)
            except Exception:  # noqa: BLE001 - the cluster out of reach: its workers' leases run out
                pass

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=RENEW_EVERY_S + CONNECT_TIMEOUT_S)


def connect(address: str):
    """A ``distributed.Client`` for ``address`` (``tcp://host:8786``), with a clear error when the
    optional dependency is missing or the scheduler cannot be reached."""
    try:
        from distributed import Client
    except ImportError:
        raise InvalidConfiguration('scheduler needs Dask: pip install "admmcheck[dask]"',
                                   parameter="scheduler") from None
    try:
        return Client(address, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as exc:
        raise InvalidConfiguration(f"scheduler {address}: cannot reach the Dask scheduler ({exc})",
                                   parameter="scheduler") from None


def cluster_slots(client) -> int:
    """Number of task slots (threads over all Dask workers) of the cluster."""
    threads = client.nthreads()
    if not threads:
        raise InvalidConfiguration("the Dask cluster has no workers; start some with dask worker ADDRESS")
    return int(sum(threads.values()))


class DaskWorker:
    """Stands in for a :class:`~admmcheck.audit.running.worker_process.WorkerProcess`: ``send`` submits a Dask
    task, ``receive`` returns the oldest task's answer (or raises ``TimeoutError``)."""

    def __init__(self, client) -> None:
        self._client = client
        self._init: tuple | None = None
        self._tally: bytes | None = None
        self._pending: deque = deque()
        self.isolation: str | None = None  # as the cluster's last answer said it

    def send(self, message: tuple) -> None:
        if message[0] == "init":
            self._init = tuple(message[1:])
            return
        if message[0] == "tally":  # sent along with every count task
            self._tally = message[1]
            return
        timeout = self._init[3]
        count = message[1].count if message[0] in ("block", "count") else 1
        allowance = answer_deadline(count, timeout)
        tally = self._tally if message[0] == "count" else None
        self._pending.append(self._client.submit(_remote, self._init, message, allowance, tally, pure=False))

    def receive(self, timeout: float) -> tuple[dict[str, Any], bytes]:
        future = self._pending.popleft()
        try:
            header, body = future.result(timeout=timeout + 60.0)
        except TimeoutError:  # the Sampler turns it into a "hangs" MechanismError naming the block
            raise
        except Exception as exc:  # the task itself failed on the cluster (worker lost, ...)
            raise MechanismError(f"a Dask task failed: {type(exc).__name__}: {exc}") from None
        if header.get("status") == "timeout":
            raise TimeoutError
        self.isolation = header.pop("isolation", self.isolation)
        return header, body

    def kill(self) -> None:
        while self._pending:
            self._pending.popleft().cancel()
