"""Every command on bad input: one line saying what to change, exit status 2, no traceback,
nothing executed (issue 14). Each row is one kind of bad input a user has sent us."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from admmcheck.audit.inputs.contract import PrivacyClaim
from admmcheck.audit.running.settings import AuditSettings
from admmcheck.cli import EXIT_BUG, main
from admmcheck.mechanisms.conditions import MadmmConditions, evaluate_madmm
from admmcheck.mechanisms.settings import ConsensusSetting
from admmcheck.foundations.errors import AdmmcheckError
from admmcheck.foundations.output import output_folder
from admmcheck.privacy.sharing import sharing_bound
from admmcheck.problems.setting import ProblemSetting

FAST = ["--iterations", "3"]


@pytest.fixture
def files(tmp_path) -> dict[str, str]:
    (tmp_path / "binary.dat").write_bytes(bytes(range(256)) * 8)
    (tmp_path / "nul.csv").write_bytes(b"39, State-gov\x00, 77516\n")
    (tmp_path / "three.txt").write_text("0 1 2\n1 2\n")
    (tmp_path / "label.txt").write_text("0 1\n1 a\n")
    (tmp_path / "float.txt").write_text("0 1\n1 2.5\n")
    (tmp_path / "loop.txt").write_text("0 1\n1 1\n")
    (tmp_path / "twice.txt").write_text("0 1\n1 2\n2 1\n")
    (tmp_path / "empty.txt").write_text("# nothing\n\n")
    (tmp_path / "apart.txt").write_text("0 1\n2 3\n")
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "folder").mkdir()
    return {name: str(tmp_path / name) for name in
            ("binary.dat", "nul.csv", "three.txt", "label.txt", "float.txt", "loop.txt", "twice.txt",
             "empty.txt", "apart.txt", "a_file", "folder")} | {"missing": str(tmp_path / "missing" / "x"),
                                                                "root": str(tmp_path)}


# (argv with {placeholders} for files, a fragment of the one-line message)
BAD_INPUTS = [
    # schedules and numbers: code, hangs, non-finite values
    (["bound", "pp", "--alpha", "__import__('os').system('echo hi')"], "is not allowed"),
    (["bound", "pp", "--eta", "(lambda: 1)()"], "is not allowed"),
    (["bound", "pp", "--eta", "exec('1')"], "is not allowed"),
    (["bound", "pp", "--alpha", "9^9^9^9"], "no finite real value"),
    (["bound", "pp", "--alpha", "10^10^8"], "no finite real value"),
    (["bound", "pp", "--alpha", "sqrt(-1)"], "no finite real value"),
    (["bound", "pp", "--alpha", "1/(t-1)"], "divides by zero at t=1, i=1"),
    (["bound", "pp", "--alpha", "+".join(["t"] * 20_000)], "at most 1000 are accepted"),
    (["bound", "pp", "--alpha", "0.5*x"], "unknown name 'x'"),
    (["bound", "pp", "--eta", "inf"], "inf is allowed only for the noise parameter"),
    (["bound", "pp", "--eta", "1-t"], "is not positive at t=1, i=1"),
    (["run", "admm", "--eta", "nan"], "unknown name 'nan'"),
    (["run", "admm", "--theta", "1e999"], "out of range"),
    (["conditions", "radmm", "--lipschitz", "1", "--gamma", "9^9^9"], "bits"),
    (["conditions", "radmm", "--lipschitz", "sqrt(2)"], "not rational in general"),
    (["conditions", "radmm", "--lipschitz", "1/0"], "divides by zero"),
    # integers and ranges
    (["run", "admm", "--seed", "-1"], "--seed -1 must be a non-negative integer"),
    (["run", "admm", "--nodes", "0"], "--nodes 0 must be a positive integer"),
    (["run", "admm", "--iterations", "0"], "--iterations 0 must be a positive integer"),
    (["run", "admm", "--iterations", "ten"], "invalid int value"),
    (["verify", "--iterations", "0"], "must be a positive integer"),
    (["experiment", "madmm-fig2", "--runs", "0"], "runs"),
    (["conditions", "madmm", "--lipschitz", "1/4", "--strong-convexity", "1/10", "--at", "0"],
     "--at 0 must be a positive integer"),
    (["conditions", "madmm", "--lipschitz", "1/4", "--strong-convexity", "1/10", "--horizon", "0"],
     "--horizon 0 must be a positive integer"),
    (["conditions", "madmm", "--lipschitz", "1/4", "--strong-convexity", "1/2"],
     "--strong-convexity m_i = 1/2 exceeds lipschitz M_i = 1/4 at node 1"),
    (["conditions", "radmm", "--lipschitz", "1", "--max-time", "-1"], "--max-time"),
    (["run", "admm", "--C", "100"], "C = 100 exceeds B_0 = 50"),
    (["run", "admm", "--C", "0"], "--C 0.0 must be finite and > 0"),
    (["run", "radmm", "--gamma", "-1", *FAST], "--gamma -1.0 must be finite and >= 0"),
    (["run", "admm", "--nodes", "1000"], "fewer than nodes=1000"),
    (["bound", "pp", "--iterations", "100000000000"], "out of memory"),
    (["conditions", "madmm", "--lipschitz", "1/4", "--strong-convexity", "1/10", "--theta", "0"],
     "--theta 0 must be > 0"),
    (["conditions", "madmm", "--lipschitz", "1/4", "--strong-convexity", "1/10", "--delta", "0"], "delta > 0"),
    (["conditions", "radmm", "--lipschitz", "1", "--mu", "1"], "mu > 1"),
    (["conditions", "radmm", "--lipschitz", "1,2"], "got 2 values for 5 nodes"),
    (["conditions", "radmm", "--lipschitz", "1", "--eta", "0"], "eta=0 must be > 0"),
    (["conditions", "radmm", "--lipschitz", "1", "--dataset", "synthetic", "--C", "0"], "C=0.0 must be"),
    # flags that do not apply
    (["conditions", "madmm", "--lipschitz", "1", "--strong-convexity", "1/2", "--gamma", "1"],
     "--gamma does not apply to admmcheck conditions madmm"),
    (["conditions", "madmm", "--lipschitz", "1", "--strong-convexity", "1/2", "--find-gamma"],
     "--find-gamma does not apply to admmcheck conditions madmm"),
    (["conditions", "radmm", "--lipschitz", "1", "--growth", "2"], "--growth does not apply to admmcheck conditions radmm"),
    (["conditions", "radmm", "--lipschitz", "1", "--L", "3", "--theta", "1"],
     "--theta does not apply to admmcheck conditions radmm"),
    (["bound", "radmm", "--theta", "0.3"], "--theta does not apply to private-radmm"),
    (["run", "admm", "--gamma", "0.3"], "--gamma does not apply to admm"),
    (["run", "radmm", "--theta", "0.3"], "--theta does not apply to radmm"),
    (["run", "admm", "--dataset", "breast-cancer", "--samples", "100"], "--rows does not apply to breast-cancer"),
    (["bound", "pp", "--dataset", "breast-cancer", "--dim", "3"], "--dim does not apply to breast-cancer"),
    # graphs and edge lists
    (["conditions", "radmm", "--lipschitz", "1", "--graph", "ring:1"], "ring network needs an integer number of nodes >= 3"),
    (["conditions", "radmm", "--lipschitz", "1", "--graph", "ring:x"], "node count must be a whole number"),
    (["conditions", "radmm", "--lipschitz", "1", "--graph", "wheel:5"], "unknown graph kind 'wheel'"),
    (["conditions", "radmm", "--lipschitz", "1", "--graph", "{missing}"], "does not exist"),
    (["conditions", "radmm", "--lipschitz", "1", "--graph", "{folder}"], "is not a file"),
    (["conditions", "radmm", "--lipschitz", "1", "--graph", "{binary.dat}"], "is not a text edge-list file"),
    (["conditions", "radmm", "--lipschitz", "1", "--graph", "{three.txt}"], "three.txt:1: expected two"),
    (["conditions", "radmm", "--lipschitz", "1", "--graph", "{label.txt}"], "label.txt:2: expected two"),
    (["conditions", "radmm", "--lipschitz", "1", "--graph", "{float.txt}"], "float.txt:2: expected two"),
    (["conditions", "radmm", "--lipschitz", "1", "--graph", "{loop.txt}"], "loop.txt:2: self-loop"),
    (["conditions", "radmm", "--lipschitz", "1", "--graph", "{twice.txt}"], "already listed on line 2"),
    (["conditions", "radmm", "--lipschitz", "1", "--graph", "{empty.txt}"], "lists no edges"),
    (["conditions", "radmm", "--lipschitz", "1", "--graph", "{apart.txt}"], "disconnected"),
    (["run", "admm", "--graph", "hexagon"], "invalid choice"),
    # datasets
    (["run", "admm", "--dataset", "adult:{binary.dat}"], "is not a text Adult CSV file"),
    (["run", "admm", "--dataset", "adult:{nul.csv}"], "NUL bytes"),
    (["run", "admm", "--dataset", "adult:{missing}"], "does not exist"),
    (["run", "admm", "--dataset", "adult:{folder}"], "neither adult.data nor adult.test"),
    (["run", "admm", "--dataset", "iris"], "iris"),
    (["conditions", "radmm", "--dataset", "adult:{binary.dat}"], "is not a text Adult CSV file"),
    # outputs
    (["run", "admm", *FAST, "--export-problem", "{missing}"], "does not exist; create it first"),
    (["run", "admm", *FAST, "--export-problem", "{a_file}/p.npz"], "is a file, not a folder"),
    (["run", "admm", *FAST, "--export-problem", "{folder}"], "is a folder; give a file name"),
    (["run", "admm", *FAST, "--export-problem", "/proc/admmcheck.npz"], "cannot write in /proc"),
    (["experiment", "madmm-fig2", *FAST, "--out", "{a_file}"], "is a file, not a folder"),
    (["experiment", "madmm-fig2", *FAST, "--out", "{a_file}/sub"], "cannot create the folder"),
    (["experiment", "madmm-fig2", *FAST, "--out", "/proc/admmcheck"], "cannot create the folder"),
    (["audit", "radmm", "--eta", "1+t", "--samples", "1000"], "private-radmm takes one constant eta"),
    (["audit", "pvp", "--eta", "0.5,0.6,0.7", "--epsilon", "1", "--samples", "1000"], "pvp takes one constant eta"),
    # commands and flags
    (["frobnicate"], "invalid choice"),
    (["run"], "the following arguments are required"),
    (["run", "admm", "--no-such-flag"], "--no-such-flag does not apply to admmcheck run admm; remove it"),
]


@pytest.mark.parametrize("argv, message", BAD_INPUTS, ids=lambda v: " ".join(v)[:60] if isinstance(v, list) else None)
def test_bad_input_is_one_line_and_exit_2(capsys, files, argv, message):
    code = main([re.sub(r"\{([\w.]+)\}", lambda m: files[m.group(1)], arg) for arg in argv])
    captured = capsys.readouterr()
    assert code == 2
    assert message in captured.err
    assert "Traceback" not in captured.err + captured.out
    errors = [line for line in captured.err.splitlines() if line.startswith(("admmcheck: error", "admmcheck ")) or
              ": error:" in line]
    assert len(errors) == 1  # one message (argparse adds its usage line above it)


def _conditions(**changes):
    return evaluate_madmm(MadmmConditions(**{"lipschitz": ("1/4",)} | changes))


def _sharing_bound(**changes):
    return sharing_bound((66, 57), **{"rho": 1.0, "lam": 0.01, "c1": 1.0, "b1": 1.0, "epsilon": 1.0, "delta": 1e-5,
                                      "iterations": 20, "delta_prime": 1e-5} | changes)


# (a library call, the parameter its error names, the same mistake on the command line, what the CLI says)
SAME_MISTAKE = [
    (lambda files: ProblemSetting(nodes=0), "nodes", ["run", "admm", "--nodes", "0"],
     "--nodes 0 must be a positive integer"),
    (lambda files: ProblemSetting(C=0), "C", ["run", "admm", "--C", "0"], "--C 0.0 must be finite and > 0"),
    (lambda files: AuditSettings(samples=10), "samples", ["audit", "pp", "--samples", "10"],
     "--samples 10 must be an integer >= 200"),
    (lambda files: ConsensusSetting(samples=0), "samples", ["audit", "pp", "--rows", "0"],
     "--rows 0 must be a positive integer"),
    (lambda files: PrivacyClaim(-1.0), "epsilon",
     ["audit", "code", "--mechanism", "m.py:m", "--neighbors", "m.py:n", "--epsilon", "-1"],
     "--epsilon -1.0 must be a finite number >= 0"),
    (lambda files: _sharing_bound(delta_prime=2.0), "delta_prime", ["bound", "sharing", "--delta-prime", "2"],
     "--delta-prime 2.0 must lie in (0, 1)"),
    (lambda files: _conditions(strong_convexity=("1/10",), theta="0"), "theta",
     ["conditions", "madmm", "--lipschitz", "1/4", "--strong-convexity", "1/10", "--theta", "0"],
     "--theta 0 must be > 0"),
    (lambda files: _conditions(), "strong_convexity", ["conditions", "madmm", "--lipschitz", "1/4"],
     "--strong-convexity is required for madmm"),
    (lambda files: output_folder(files["a_file"], "out"), "out",
     ["experiment", "madmm-fig2", *FAST, "--out", "{a_file}"], "--out {a_file} is a file, not a folder"),
]


@pytest.mark.parametrize("call, parameter, argv, message", SAME_MISTAKE, ids=[row[3][:40] for row in SAME_MISTAKE])
def test_the_library_names_the_parameter_and_the_cli_the_flag(capsys, files, call, parameter, argv, message):
    with pytest.raises(AdmmcheckError) as error:
        call(files)
    assert error.value.parameter == parameter
    assert str(error.value).startswith((parameter + "=", parameter + " ")) and "--" not in str(error.value)
    fill = lambda text: re.sub(r"\{([\w.]+)\}", lambda m: files[m.group(1)], text)  # noqa: E731
    assert main([fill(arg) for arg in argv]) == 2
    err = capsys.readouterr().err
    assert f"admmcheck: error: {fill(message)}" in err and parameter + "=" not in err


def test_the_issue_commands_do_not_execute_anything(tmp_path):
    canary = tmp_path / "canary"
    # the six commands run side by side (each spends ~2 s importing): a payload that ran would
    # leave the canary, whichever process ran it
    processes = [subprocess.Popen([sys.executable, "-m", "admmcheck", "bound", "pp", flag, payload],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for flag in ("--alpha", "--eta")
                 for payload in (f"__import__('os').system('touch {canary}')", f"(lambda: open('{canary}','w'))()",
                                 f"exec(\"open('{canary}','w')\")")]
    for process in processes:
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 2 and "Traceback" not in stderr
    assert not canary.exists()


def test_an_unexpected_error_is_reported_as_a_bug_with_exit_3(capsys, monkeypatch):
    import admmcheck.cli as cli

    def broken(args):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(cli, "_command_verify", broken)
    assert main(["verify"]) == EXIT_BUG
    err = capsys.readouterr().err
    assert "internal error: ZeroDivisionError: a bug" in err and "please report it" in err
    assert "Traceback" not in err
    assert main(["--debug", "verify"]) == EXIT_BUG
    assert "Traceback" in capsys.readouterr().err


def test_a_run_outside_theorem_31_runs_and_warns_on_stderr(capsys):
    assert main(["run", "madmm", "--theta", "0.9", "--eta", "0.5", "--growth", "0.9", *FAST, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["iterations"] == 3
    warnings = [line for line in captured.err.splitlines() if line.startswith("admmcheck: warning:")]
    assert len(warnings) == 2
    assert "eta_i(1) = 0.5 < theta = 0.9" in warnings[0] and "growth q_i = 0.9 < 1" in warnings[1]
    assert main(["run", "madmm", *FAST]) == 0
    assert "warning" not in capsys.readouterr().err  # inside the theorem: silent


def test_no_output_is_left_half_written(tmp_path, monkeypatch):
    from admmcheck.foundations.output import write_atomic, write_text_atomic
    from admmcheck.foundations.errors import OutputError

    target = tmp_path / "report.json"
    write_text_atomic(target, "previous")

    def crash(stream):
        stream.write(b"half")
        raise RuntimeError("crash while writing")

    with pytest.raises(RuntimeError):
        write_atomic(target, crash)
    assert target.read_text() == "previous" and [p.name for p in tmp_path.iterdir()] == ["report.json"]
    with pytest.raises(OutputError, match="cannot write"):
        write_text_atomic(tmp_path / "missing" / "x.json", "x")


def test_with_json_an_error_is_also_a_json_object_on_stdout(capsys):
    assert main(["run", "admm", "--iterations", "0", "--json"]) == 2
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["exit_status"] == 2 and out["kind"] == "error"
    assert captured.err.strip() == f"admmcheck: error: {out['error']}"  # the same message, one line on stderr
    assert main(["run", "admm", "--iterations", "0"]) == 2 and capsys.readouterr().out == ""  # no JSON unasked


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_take_the_users_umask(tmp_path, umask, mode):
    from admmcheck.foundations.output import write_text_atomic

    old = os.umask(umask)
    try:
        path = write_text_atomic(tmp_path / "report.json", "{}")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == mode
