"""Issue 64: audits on a real Dask cluster, started by Dask's own command line (``dask scheduler``, ``dask worker
--nworkers 2``), are contained like local ones: whichever way the client ends (SIGTERM, SIGKILL), the supervised
workers it started on the Dask workers stop within the lease's time
(:data:`~admmcheck.audit.running.dask_executor.LEASE_S`), their folders removed, while the cluster lives on; and a
completed cluster audit's JSON is the local one's."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from processes import marked

distributed = pytest.importorskip("distributed", reason='the Dask executor needs pip install "admmcheck[dask]"')

from admmcheck.audit.running.dask_executor import LEASE_S  # noqa: E402

MECHANISMS = str(Path(__file__).resolve().parent / "mechanisms.py")
DASK = str(Path(sys.executable).parent / "dask")
SUPERVISOR, WORKER = b"admmcheck.audit.running.supervisor", b"-m\0admmcheck.audit.running.worker"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(address, mark, scratch): a scheduler and two worker processes started by Dask's command line, every process
    of theirs carrying ``mark`` in its environment, their temporary folders in ``scratch``."""
    mark, port = uuid.uuid4().hex, _free_port()
    scratch = tmp_path_factory.mktemp("dask-workers")
    env = os.environ | {"ADMMCHECK_TEST_MARK": mark, "TMPDIR": str(scratch)}
    address = f"tcp://127.0.0.1:{port}"
    started = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)]
    started.append(subprocess.Popen([DASK, "worker", address, "--nworkers", "2", "--nthreads", "1", "--no-dashboard",
                                     "--local-directory", str(scratch)], env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, start_new_session=True))
    try:
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
        yield address, mark, scratch
    finally:
        for process in reversed(started):
            os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(started):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _ours(mark: str) -> list[int]:
    return marked(mark, SUPERVISOR) + marked(mark, WORKER)


def test_a_cluster_audit_ends_with_its_client_however_it_ends(cluster, tmp_path):
    """Two audits at once, one client ended by SIGTERM and one by SIGKILL at the same moment, mid-audit: both
    clients' workers on the cluster are gone within the lease's time, their folders too, and the cluster lives on.
    (Without the Dask workers' watchdog, 8 processes were still running 25 s later.)"""
    address, mark, scratch = cluster
    clients = [subprocess.Popen([sys.executable, "-m", "admmcheck", "audit", "code", "--mechanism",
                                 f"{MECHANISMS}:slow_laplace", "--neighbors", f"{MECHANISMS}:scalar_pair", "--epsilon",
                                 "1", "--samples", "20000", "--seed", str(seed), "--scheduler", address, "--quiet"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                                env={k: v for k, v in os.environ.items() if k != "ADMMCHECK_TEST_MARK"})
               for seed in (0, 1)]
    deadline = time.monotonic() + 60
    while len(marked(mark, WORKER)) < 4 and time.monotonic() < deadline:  # each audit on both Dask worker processes
        time.sleep(0.2)
    assert len(marked(mark, WORKER)) == 4 and all(c.poll() is None for c in clients), "the audits never got there"
    for client, stop in zip(clients, (signal.SIGTERM, signal.SIGKILL)):
        client.send_signal(stop)
    for client, stop in zip(clients, (signal.SIGTERM, signal.SIGKILL)):
        out, _ = client.communicate(timeout=30)
        assert client.returncode == -stop and out == b""  # ended by the signal, mid-audit, no verdict printed
    ended = time.monotonic()
    while _ours(mark) and time.monotonic() < ended + LEASE_S + 15:
        time.sleep(0.2)
    assert _ours(mark) == [], f"still running {time.monotonic() - ended:.1f} s after the clients ended"
    print(f"nothing left {time.monotonic() - ended:.1f} s after the clients ended")  # for the note
    assert [folder for folder in scratch.iterdir() if folder.name.startswith("tmp")] == []  # the workers' folders
    with distributed.Client(address, timeout=30) as alive:  # the cluster itself lives on
        assert len(alive.nthreads()) == 2


def test_a_completed_cluster_audit_gives_the_local_json(cluster, capsys):
    address, mark, _ = cluster
    words = ["audit", "code", "--mechanism", f"{MECHANISMS}:laplace_half_scale", "--neighbors",
             f"{MECHANISMS}:scalar_pair", "--epsilon", "1", "--samples", "2000", "--seed", "2", "--json"]
    from admmcheck.cli import main

    assert main([*words, "--scheduler", address]) == 1
    remote = json.loads(capsys.readouterr().out)
    assert main([*words, "--workers", "2"]) == 1
    local = json.loads(capsys.readouterr().out)
    for document in (remote, local):
        document.pop("wall_time_s")
    assert remote == local
    assert _ours(mark) == []  # and nothing of it is left on the cluster
