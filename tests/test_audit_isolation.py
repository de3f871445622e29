"""Issue 51: untrusted code cannot hang, crash, fool or outlive the auditor.

Every hostile mechanism of tests/hostile.py is audited through the command line's entry point, as a user would
(``admmcheck.cli.main``, in this process; the mechanism runs in the audit's worker processes, never here), with a
mark of its own in the environment the audit's processes inherit: supervisors, workers, what the mechanism starts,
daemons that leave the process tree. Reading the process table for the mark shows what was left behind. Each audit
must end within its ``--timeout`` plus :data:`SLACK`, exit 2 with one line on stderr naming the cause and the
sample, print a JSON error object with ``--json``, and leave no process. Killing the main process is tested on
the installed command in a process of its own.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from admmcheck.audit import sample_generator
from admmcheck.cli import main
from processes import marked

HERE = Path(__file__).resolve().parent
HOSTILE = str(HERE / "hostile.py")
SLACK = 20.0  # seconds beyond --timeout: starting and stopping the workers, under the test suite's own load


def _arguments(mechanism: str, *extra: str) -> list[str]:
    return ["audit", "code", "--mechanism", f"{HOSTILE}:{mechanism}", "--neighbors", f"{HOSTILE}:neighbours",
            "--epsilon", "1", "--samples", "2000", "--workers", "2", "--seed", "0", "--quiet", "--json", *extra]


def _run(monkeypatch, capsys, mechanism: str, *extra: str) -> tuple[int, str, str, float, str]:
    """(exit status, stdout, stderr, seconds, the mark) of ``admmcheck audit code`` on ``mechanism``."""
    mark = uuid.uuid4().hex
    monkeypatch.setenv("ADMMCHECK_TEST_MARK", mark)  # inherited by every process the audit starts
    started = time.monotonic()
    status = main(_arguments(mechanism, *extra))
    wall = time.monotonic() - started
    out, err = capsys.readouterr()
    return status, out, err, wall, mark


@pytest.fixture(scope="module")
def plain_json() -> dict:
    """The JSON of the plain Laplace mechanism, from the installed command."""
    process = subprocess.run([sys.executable, "-m", "admmcheck.cli", *_arguments("plain")], capture_output=True,
                             text=True, timeout=600)
    assert process.returncode == 0, process.stderr
    return json.loads(process.stdout)


def _first_misbehaving(seed: int, pair: int, side: int, block: int) -> int:
    """The first index of the block whose sample misbehaves (its first uniform draw below 0.01)."""
    return next(j for j in range(100_000) if sample_generator(seed, pair, side, block, j).random() < 0.01)


# mechanism, extra flags, the cause, and which sample is named: "first" the block's first misbehaving call (the
# fault stops the worker in it), "any" one of its misbehaving calls (a fork's child that returned: children of
# several calls race to say so), "noticed" where the worker was when the fault was seen (after the call)
HOSTILE_CASES = [
    ("exits", (), "exits: calls sys.exit(3)", "first"),
    ("execs", (), "replaced the worker process with another program (an exec: it now runs", "first"),
    ("prints_then_raises", (), "raises ValueError: bad input", "first"),
    ("exits_at_os_level", (), "stopped: the worker process exited with status 4", "first"),
    ("interrupted", (), "raises KeyboardInterrupt", "first"),
    ("kills_itself", (), "stopped: the worker process was killed by SIGKILL", "first"),
    ("aborts", (), "stopped: the worker process was killed by SIGABRT", "first"),
    ("crashes_in_c", (), "stopped: the worker process was killed by SIGSEGV (a crash in C code)", "first"),
    ("ignores_alarms", ("--timeout", "2"), "hangs: one call ran longer than the timeout of 2 s", "first"),
    ("blocks_signals", ("--timeout", "2"), "hangs: one call ran longer than the timeout of 2 s", "first"),
    ("closes_descriptors", (), "exited with status 70: its protocol pipes were closed or replaced", "noticed"),
    ("writes_descriptors", (), "broke the worker's protocol: it sent a malformed answer", "noticed"),
    ("unbounded_allocation", ("--memory-limit", "400", "--timeout", "20"),
     "exceeded the memory limit of 400 MiB (raises MemoryError)", "first"),
    ("memory_runs_out_outside_the_call", (), "exceeded the memory limit", "first"),
    ("huge_output", ("--max-output", "1"), "returns an output of 16000000 bytes, more than the limit of 1048576", "first"),
    ("child_in_new_session", (), "stopped: the worker process exited with status 9", "first"),
    ("daemonises_then_hangs", ("--timeout", "2"), "hangs: one call ran longer than the timeout of 2 s", "first"),
    ("thread_ends_the_process", (), "stopped: the worker process exited with status 6", "first"),
    ("forks", (), "forks: a child of the worker process made by os.fork returned from the call", "any"),
]


@pytest.mark.parametrize("mechanism, extra, cause, named", HOSTILE_CASES, ids=[case[0] for case in HOSTILE_CASES])
def test_a_hostile_mechanism_ends_the_audit_with_its_cause_and_sample_and_leaves_no_process(monkeypatch, capsys,
                                                                                            mechanism, extra, cause,
                                                                                            named):
    status, out, err, wall, mark = _run(monkeypatch, capsys, mechanism, *extra)
    timeout = float(extra[extra.index("--timeout") + 1]) if "--timeout" in extra else 10.0
    assert status == 2, err
    assert wall < timeout + SLACK
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"admmcheck: error: {HOSTILE}:{mechanism} "), err
    assert cause in lines[0]
    error = json.loads(out)
    assert error["exit_status"] == 2 and error["kind"] == "error" and cause in error["error"]
    sample = re.search(r"\(seed=(\d+), pair=(\d+), side=(\d+), block=(\d+), index=(\d+)", lines[0])
    assert sample is not None, lines[0]
    seed, pair, side, block, index = (int(number) for number in sample.groups())
    if named != "noticed":  # a misbehaving call (the block's first where it stops the worker), replayed
        assert sample_generator(seed, pair, side, block, index).random() < 0.01
        assert named == "any" or index == _first_misbehaving(seed, pair, side, block)
    else:  # noticed between calls: said so, and the misbehaving call came before
        assert "where it was noticed: the cause may lie in an earlier call of the block" in lines[0]
        assert _first_misbehaving(seed, pair, side, block) <= index
    if mechanism == "prints_then_raises":  # what the code printed goes with its fault
        assert "; its last output: about to fail on this sample" in lines[0]
    assert marked(mark) == []


def _left_behind(mark: str) -> list[Path]:
    """The code's temporary folders named by ``mark``, in the temporary folder or one level below it (a folder of
    another test's worker may vanish while it is listed)."""
    temporary, found = Path(tempfile.gettempdir()), []
    for folder in [temporary, *(entry for entry in temporary.iterdir() if entry.is_dir())]:
        try:
            found += [entry for entry in folder.iterdir() if entry.name.startswith(f"left-{mark}-")]
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
    return found


@pytest.mark.parametrize("mechanism", ["prints", "closes_stdin_and_stdout", "leaves_a_thread",
                                       "leaves_temporary_files", "signals_its_supervisor", "stops_its_supervisor"])
def test_a_correct_mechanism_that_prints_closes_stdin_or_leaves_a_thread_is_audited_as_without_it(
        monkeypatch, capsys, plain_json, mechanism):
    """Seeded code: the very JSON of the same Laplace mechanism without the noise; no process and no temporary
    file of the code is left (each worker's TMPDIR is a folder its supervisor removes)."""
    status, out, err, _, mark = _run(monkeypatch, capsys, mechanism)
    assert status == 0, err
    strip = lambda result: {k: v for k, v in result.items() if k not in ("wall_time_s", "mechanism")}  # noqa: E731
    assert strip(json.loads(out)) == strip(plain_json)
    assert plain_json["verdict"] == "no-violation-found"
    assert marked(mark) == []
    assert _left_behind(mark) == []


KILLED = [sys.executable, "-m", "admmcheck.cli", *_arguments("spawns_and_releases", "--samples", "40000")]


@pytest.fixture(scope="module")
def uninterrupted() -> dict:
    whole = subprocess.run(KILLED, capture_output=True, text=True, timeout=600)
    assert whole.returncode == 0, whole.stderr
    return json.loads(whole.stdout)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL, signal.SIGINT], ids=["SIGTERM", "SIGKILL", "SIGINT"])
def test_killing_the_main_process_leaves_no_process_and_the_checkpoint_resumes_without_loss(tmp_path, uninterrupted,
                                                                                            how):
    """A mechanism that starts a child in a session of its own on one call in 500, killed mid-audit: within 5 s
    nothing of it is left, and the checkpoint then resumes to the uninterrupted answer."""
    path = tmp_path / "killed.sqlite"
    command = KILLED + ["--checkpoint", str(path)]
    mark = uuid.uuid4().hex
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=os.environ | {"ADMMCHECK_TEST_MARK": mark})
    deadline = time.monotonic() + 60
    while len(marked(mark)) < 6 and time.monotonic() < deadline:  # main, 2 supervisors, 2 workers, a child
        time.sleep(0.2)
    time.sleep(1.0)
    assert process.poll() is None, "the audit ended before it could be killed"
    os.kill(process.pid, how)
    process.communicate(timeout=60)
    deadline = time.monotonic() + 5
    while marked(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marked(mark) == []
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    strip = lambda result: {k: v for k, v in result.items() if k != "wall_time_s"}  # noqa: E731
    assert strip(json.loads(resumed.stdout)) == strip(uninterrupted)


def test_a_worker_that_closes_its_stdout_and_stderr_costs_its_supervisor_no_cpu(monkeypatch, capsys):
    """With the capture pipe closed at the worker's end, the supervisor must stop watching it (an end of file is
    always readable: watched, it would spin a core)."""
    mark = uuid.uuid4().hex
    monkeypatch.setenv("ADMMCHECK_TEST_MARK", mark)
    from admmcheck.audit import Source
    from admmcheck.audit.running.sampling import Sampler, Task
    from admmcheck.audit.running.settings import AuditSettings

    with Sampler(Source(f"{HOSTILE}:closes_stdin_and_stdout_and_stderr"), Source(f"{HOSTILE}:neighbours"),
                 AuditSettings(workers=1)) as sampler:
        list(sampler.draw([Task(0, 0, 0, 10)]))
        [supervisor] = [pid for pid in marked(mark, b"admmcheck.audit.running.supervisor")  # not its sandbox's
                        if Path(f"/proc/{pid}/comm").read_text().strip() != "bwrap"]
        before = _cpu_seconds(supervisor)
        time.sleep(1.0)
        spent = _cpu_seconds(supervisor) - before
    assert spent < 0.2


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
