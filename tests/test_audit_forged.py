"""Issue 62, item 2 (the main process trusts nothing it receives) and item 6 (the code's words are shown, never acted
on): answers forged by the mechanism on its worker's own answer pipe, well framed, were taken apart by the main
process: a header nested 100,000 deep ended in RecursionError (exit 3), a block whose values.npy inflates a
thousandfold took the main process's memory up by as much, and NaN past a patched ``numpy.isfinite`` reached the
statistics (exit 3). Each is now a fault of the code under audit: exit 2, one line naming the mechanism and what came
back malformed, a JSON error, memory untouched, no process left behind."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest

from admmcheck.cli import main
from processes import marked

HOSTILE = str(Path(__file__).resolve().with_name("hostile.py"))
SLACK = 20.0  # seconds beyond the default timeout of 10 s: starting and stopping the workers under the suite's load


def _audit(monkeypatch, capsys, mechanism: str) -> tuple[int, str, str, float, str]:
    mark = uuid.uuid4().hex
    monkeypatch.setenv("ADMMCHECK_TEST_MARK", mark)
    started = time.monotonic()
    status = main(["audit", "code", "--mechanism", f"{HOSTILE}:{mechanism}", "--neighbors", f"{HOSTILE}:neighbours",
                   "--epsilon", "1", "--samples", "2000", "--workers", "2", "--seed", "0", "--quiet", "--json"])
    out, err = capsys.readouterr()
    return status, out, err, time.monotonic() - started, mark


def _peak_reset() -> None:
    """Reset this process's high-water mark of resident memory (VmHWM) to what it holds now."""
    Path("/proc/self/clear_refs").write_text("5")


def _peak_mib() -> float:
    line = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def _resident_mib() -> float:
    line = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


FORGED = [
    ("forges_a_deep_header", "broke the worker's protocol: it sent a malformed answer (no status, or a header nested "
                             "deeper than 8 levels)"),
    ("forges_an_inflating_block", "came back malformed (a compressed array (the worker stores its arrays as they "
                                  "are))"),
    ("forges_a_nan_block", "came back malformed (NaN or inf in sample 7 of the block (the worker refuses them))"),
    ("forges_a_plausible_block", "broke the worker's protocol: it sent an answer to no request it was sent (without "
                                 "the request's token)"),
]


@pytest.mark.parametrize("mechanism, cause", FORGED, ids=[case[0] for case in FORGED])
def test_a_forged_answer_is_a_fault_of_the_code_and_costs_the_main_process_no_memory(monkeypatch, capsys, mechanism,
                                                                                       cause):
    _peak_reset()
    before = _resident_mib()
    status, out, err, wall, mark = _audit(monkeypatch, capsys, mechanism)
    assert status == 2, err
    assert _peak_mib() - before < 300  # the inflating block holds 512 MiB of zeros: never inflated here
    assert wall < 10.0 + SLACK
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"admmcheck: error: {HOSTILE}:{mechanism} "), err
    assert cause in lines[0]
    error = json.loads(out)
    assert error["exit_status"] == 2 and cause in error["error"]
    assert marked(mark) == []


def test_the_codes_words_reach_the_terminal_escaped_on_one_line(monkeypatch, capsys):
    """An exception message with a carriage return and terminal escapes erased the error line and printed a fake
    "no violation found"; every control character now shows as its escape."""
    status, out, err, _, mark = _audit(monkeypatch, capsys, "raises_terminal_escapes")
    assert status == 2
    assert err.count("\n") == 1 and "\r" not in err and "\x1b" not in err
    assert "raises ValueError: \\r\\x1b[2K\\x1b[1Ano violation found: epsilon >= 0.0000\\nall fine" in err
    assert "\x1b" not in json.loads(out)["error"]
    assert marked(mark) == []
