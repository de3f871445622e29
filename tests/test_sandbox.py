"""Issue 62, item 4: the sandbox the code under audit runs in (``--sandbox auto|on|off``).

Each statement of README's "What the auditor protects against" about the sandbox, tested on the installed command
with mechanisms of tests/hostile.py, sandboxed and not: the user's files in the home folder cannot be read, the
home and working folders cannot be written (a write into ``$HOME`` lands in a private one that goes with the
sandbox), no socket reaches this machine's loopback, the code cannot outlive a supervisor it kills (a daemon
included), and sees neither admmcheck in its temporary folder's name nor the process that drives the audit. A
correct seeded mechanism gives the same JSON with and without the sandbox, isolation aside; ``on`` refuses where
the sandbox cannot run and ``auto`` says so. The audits of one test run at once.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from processes import marked
from system import needs

HOSTILE = str(Path(__file__).resolve().with_name("hostile.py"))
needs_bubblewrap = needs("bubblewrap")


def _start(mechanism: str, sandbox: str, cwd: Path, **environment: str) -> tuple[subprocess.Popen, str]:
    """``admmcheck audit code`` on ``mechanism`` under ``--sandbox sandbox``, started (not waited for), with a mark."""
    mark = uuid.uuid4().hex
    command = [sys.executable, "-m", "admmcheck.cli", "audit", "code", "--mechanism", f"{HOSTILE}:{mechanism}",
               "--neighbors", f"{HOSTILE}:neighbours", "--epsilon", "1", "--samples", "2000", "--workers", "2",
               "--seed", "0", "--quiet", "--json", "--sandbox", sandbox]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                               env={**os.environ, "ADMMCHECK_TEST_MARK": mark, **environment})
    return process, mark


def _finish(started: tuple[subprocess.Popen, str]) -> tuple[int, dict, str]:
    process, mark = started
    out, err = process.communicate(timeout=300)
    deadline = time.monotonic() + 5  # the kernel ends a sandbox's processes as its first one exits
    while marked(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marked(mark) == []
    return process.returncode, json.loads(out), err


@needs_bubblewrap
def test_in_the_sandbox_home_is_hidden_and_private_and_the_working_folder_read_only(tmp_path):
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    secret = home / "id_rsa"
    secret.write_text("not for the code")
    environment = {"HOME": str(home), "ADMMCHECK_TEST_SECRET": str(secret)}
    runs = {(mechanism, sandbox): _start(mechanism, sandbox, work, **environment)
            for mechanism in ("reads_a_private_file", "writes_into_home", "writes_into_the_working_folder")
            for sandbox in ("on", "off")}
    done = {key: (_finish(started), started[1]) for key, started in runs.items()}

    (status, error, err), _ = done[("reads_a_private_file", "on")]
    assert status == 2 and err.count("\n") == 1
    assert f"raises FileNotFoundError: [Errno 2] No such file or directory: '{secret}'" in error["error"]
    (status, result, _), _ = done[("reads_a_private_file", "off")]
    assert status == 0 and result["isolation"] == "none (--sandbox off): the code ran unsandboxed"

    (status, result, _), mark = done[("writes_into_home", "on")]  # into a private home, gone with the sandbox
    assert status == 0 and result["isolation"].startswith("sandbox (bubblewrap")
    assert not (home / f"written-{mark}").exists()
    (status, _, _), mark = done[("writes_into_home", "off")]
    assert status == 0 and (home / f"written-{mark}").exists()

    (status, error, _), mark = done[("writes_into_the_working_folder", "on")]
    assert status == 2 and "raises OSError: [Errno 30] Read-only file system" in error["error"]
    assert not (work / f"written-{mark}").exists()
    (status, _, _), mark = done[("writes_into_the_working_folder", "off")]
    assert status == 0 and (work / f"written-{mark}").exists()


@needs_bubblewrap
def test_in_the_sandbox_no_socket_reaches_this_machine(tmp_path):
    listener = socket.create_server(("127.0.0.1", 0), backlog=128)
    connections = []

    def accept():
        while True:
            try:
                connection = listener.accept()[0]
            except OSError:
                return
            connection.close()
            connections.append(None)

    threading.Thread(target=accept, daemon=True).start()
    port = str(listener.getsockname()[1])
    try:
        sandboxed, plain = (_start("opens_a_socket", sandbox, tmp_path, ADMMCHECK_TEST_PORT=port)
                            for sandbox in ("on", "off"))
        (status, error, _), (status_off, _, _) = _finish(sandboxed), _finish(plain)
        assert status == 2 and "raises ConnectionRefusedError: [Errno 111] Connection refused" in error["error"]
        assert status_off == 0 and len(connections) >= 2  # each worker of the unsandboxed run connected; no other
    finally:
        listener.close()


@needs_bubblewrap
def test_code_that_kills_its_supervisor_leaves_nothing_in_the_sandbox(tmp_path):
    """It starts a daemon in a session of its own, then SIGKILLs its supervisor: the sandbox's processes all end
    (checked by _finish), and its temporary folder, in the sandbox's private /tmp, is gone with it."""
    temporary = tmp_path / "temporary"
    temporary.mkdir()
    status, error, err = _finish(_start("kills_its_supervisor", "on", tmp_path, TMPDIR=str(temporary)))
    assert status == 2 and err.count("\n") == 1
    assert "stopped: the worker's supervisor process was killed (by the mechanism or another process)" in error["error"]
    assert list(temporary.iterdir()) == []


def test_without_the_sandbox_what_outlives_a_killed_supervisor_is_adopted_and_hunted_by_the_main_process(tmp_path):
    """Unsandboxed, the daemon and the worker are handed to the main process (a child subreaper while unsandboxed
    workers live), which kills and reaps every child carrying the worker's tag (issue 62 item 3: before, the daemon
    stayed under pid 1 and the worker's temporary folder stayed too)."""
    temporary = tmp_path / "temporary"
    temporary.mkdir()
    status, error, _ = _finish(_start("kills_its_supervisor", "off", tmp_path, TMPDIR=str(temporary)))
    assert status == 2
    assert "stopped: the worker's supervisor process was killed (by the mechanism or another process)" in error["error"]
    assert list(temporary.iterdir()) == []


@needs_bubblewrap
def test_in_the_sandbox_the_code_sees_its_own_processes_and_a_plain_temporary_folder(tmp_path):
    status, error, _ = _finish(_start("signs_of_the_audit", "on", tmp_path))
    assert status == 2
    said = error["error"]
    temporary = said.split("TMPDIR=", 1)[1].split(" ", 1)[0]
    assert temporary.startswith("/tmp/tmp") and "admmcheck" not in temporary
    assert " pid=3" in said and " init=/usr/bin/bwrap " in said  # the sandbox's first process, not ours


@needs_bubblewrap
def test_a_correct_mechanism_gives_the_same_json_with_and_without_the_sandbox(tmp_path):
    sandboxed, plain = (_start("plain", sandbox, tmp_path) for sandbox in ("on", "off"))
    (status, inside, _), (status_off, outside, _) = _finish(sandboxed), _finish(plain)
    assert status == status_off == 0
    assert inside.pop("isolation").startswith("sandbox (bubblewrap")
    assert outside.pop("isolation") == "none (--sandbox off): the code ran unsandboxed"
    for result in (inside, outside):
        result.pop("wall_time_s")
    assert inside == outside


def test_on_refuses_where_the_sandbox_cannot_run_and_auto_says_which_isolation_ran(tmp_path):
    """With no bubblewrap on the PATH."""
    refused = _start("plain", "on", tmp_path, PATH=str(tmp_path))
    unsandboxed = _start("plain", "auto", tmp_path, PATH=str(tmp_path))
    process, _ = refused
    out, err = process.communicate(timeout=300)
    assert process.returncode == 2
    assert err.strip() == ("admmcheck: error: --sandbox on: the sandbox cannot run here: bubblewrap (bwrap) is not "
                           "installed; install Debian's bubblewrap (apt-get install bubblewrap) on a kernel that "
                           "allows unprivileged user namespaces, or audit without it (--sandbox off)")
    status, result, _ = _finish(unsandboxed)
    assert status == 0
    assert result["isolation"] == ("none: the sandbox cannot run here (bubblewrap (bwrap) is not installed); the code "
                                   "ran unsandboxed")
