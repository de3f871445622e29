"""Issue 62, item 1: one deadline for everything a worker does on the code's behalf.

The watchdog watched only the calls: an output whose ``__array__`` hangs (run while the worker encodes it), an
exception whose ``__str__`` hangs (run while the fault is put into words), a dataset whose pickling hangs (the
check for changes after a block), a thread that holds the interpreter, and a thread that reads the worker's
request pipe each held the audit until the main process's own deadline (``--timeout`` x block + 120 s; at
``--timeout 0.05`` it ended after 175 s). Every stage is now timed by the supervisor, so each audit ends within
``--timeout`` plus :data:`~admmcheck.audit.running.supervisor.STAGE_SLACK` (and the tenth the watchdog may take),
exit 2, one line naming the stage and the sample, a JSON error, nothing left behind: no process, no file in the
temporary folder. The five audits run at once, as the installed command, each with a mark of its own and a
temporary folder of its own.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

from admmcheck.audit import sample_generator
from admmcheck.audit.running.supervisor import STAGE_SLACK
from processes import marked

HOSTILE = str(Path(__file__).resolve().with_name("hostile.py"))
TIMEOUT = 0.5
SLACK = 20.0  # seconds beyond the stage's deadline: starting five audits at once and stopping them, under load

# mechanism, neighbours, the cause, whether the sample named is the call at fault (False: where it was noticed;
# None: either)
STAGES = [
    ("hangs_when_its_output_is_encoded", "neighbours", "hangs while its output was encoded", True),
    ("hangs_when_its_exception_is_put_into_words", "neighbours",
     "hangs while the exception it raised was put into words", True),
    ("reads_its_value", "neighbours_that_hang_when_pickled_again",
     "hangs while its input dataset was checked for changes", False),
    ("holds_the_interpreter_from_a_thread", "neighbours", "hangs", None),  # in whichever stage the thread stops it
    ("steals_its_requests", "neighbours", "hangs before taking up the audit's next request", False),
]


def _first_misbehaving(seed: int, pair: int, side: int, block: int) -> int:
    return next(j for j in range(100_000) if sample_generator(seed, pair, side, block, j).random() < 0.01)


def test_every_stage_of_a_worker_is_timed_and_named(tmp_path):
    started, audits = time.monotonic(), []
    for mechanism, neighbours, _, _ in STAGES:
        mark, temporary = uuid.uuid4().hex, tmp_path / mechanism
        temporary.mkdir()
        environment = {**os.environ, "ADMMCHECK_TEST_MARK": mark, "TMPDIR": str(temporary)}
        command = [sys.executable, "-m", "admmcheck.cli", "audit", "code", "--mechanism", f"{HOSTILE}:{mechanism}",
                   "--neighbors", f"{HOSTILE}:{neighbours}", "--epsilon", "1", "--samples", "2000", "--workers", "2",
                   "--seed", "0", "--timeout", str(TIMEOUT), "--quiet", "--json"]
        audits.append((subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env=environment), mark, temporary))
    limit = TIMEOUT + 1.1 * (TIMEOUT + STAGE_SLACK) + SLACK
    for (mechanism, _, cause, exact), (process, mark, temporary) in zip(STAGES, audits):
        out, err = process.communicate(timeout=limit + 60)
        assert time.monotonic() - started < limit, mechanism
        assert process.returncode == 2, err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"admmcheck: error: {HOSTILE}:{mechanism} {cause}"), err
        assert f"(--timeout plus {STAGE_SLACK:g} s)" in lines[0] or "one call ran longer" in lines[0]
        error = json.loads(out)
        assert error["exit_status"] == 2 and cause in error["error"]
        sample = re.search(r"\(seed=(\d+), pair=(\d+), side=(\d+), block=(\d+), index=(\d+)", lines[0])
        assert sample is not None, lines[0]
        seed, pair, side, block, index = (int(number) for number in sample.groups())
        if exact:  # the call whose output or exception hung
            assert index == _first_misbehaving(seed, pair, side, block)
            assert "where it was noticed" not in lines[0]
        elif exact is False:
            assert "where it was noticed" in lines[0]
        assert marked(mark) == []
        assert list(temporary.iterdir()) == []
