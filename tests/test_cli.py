"""The command-line contract: JSON fields, problem export, exit codes and messages."""

from __future__ import annotations

import json
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
from scipy.optimize import minimize

from admmcheck.cli import main

REQUIRED = {"algorithm", "iterations", "objective_gap", "consensus_error", "final_mean", "wall_time_s"}


def _run_json(capsys, *args: str) -> dict:
    assert main(["run", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("algorithm", ["admm", "admm-edge", "madmm", "radmm"])
def test_run_prints_the_contract_fields(capsys, algorithm):
    out = _run_json(capsys, algorithm, "--iterations", "150", "--seed", "2")
    assert REQUIRED <= out.keys()
    assert out["algorithm"] == algorithm and out["iterations"] == 150
    assert len(out["final_mean"]) == 10
    assert abs(out["objective_gap"]) <= 1e-6


def test_exported_problem_lets_anyone_recompute_the_optimum(capsys, tmp_path):
    path = tmp_path / "problem.npz"
    out = _run_json(capsys, "radmm", "--dataset", "breast-cancer", "--graph", "random", "--nodes", "6",
                    "--iterations", "200", "--export-problem", str(path))
    data = np.load(path)
    nodes = int(data["nodes"])
    assert nodes == 6 and nx.is_connected(nx.from_numpy_array(data["adjacency"]))
    x = np.vstack([data[f"X_{i}"] for i in range(nodes)])
    y = np.concatenate([data[f"y_{i}"] for i in range(nodes)])
    w = np.concatenate([np.full(len(data[f"y_{i}"]), float(data["C"]) / len(data[f"y_{i}"])) for i in range(nodes)])
    rho = float(data["rho"])
    assert x.shape == (569, 30)

    def objective(f):
        return w @ np.logaddexp(0.0, -y * (x @ f)) + 0.5 * rho * f @ f

    independent = minimize(objective, np.zeros(30), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(out["optimum"]["solution"], independent.x, atol=1e-5)
    np.testing.assert_allclose(out["final_mean"], independent.x, atol=1e-4)


def test_invalid_input_exits_2_with_a_message(capsys):
    assert main(["run", "admm", "--C", "100"]) == 2
    assert "C = 100 exceeds B_0 = 50" in capsys.readouterr().err
    assert main(["run", "admm", "--dataset", "adult:/nonexistent/adult.data"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["run", "madmm", "--eta", "0.5,0.6"]) == 2
    assert "--eta has 2 values for 5 nodes" in capsys.readouterr().err
    assert main(["run", "admm", "--growth", "1.1"]) == 2
    assert "admm takes one --eta and no --growth" in capsys.readouterr().err


def test_verify_runs_every_check_and_reports_them(capsys):
    assert main(["verify", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["failed"] == 0 and report["passed"] == len(report["checks"]) == 10
    assert {c["verdict"] for c in report["checks"]} == {"PASS"}
    assert all(c["measured"] <= c["threshold"] for c in report["checks"])
    assert all(f["stalls"] for f in report["findings"])


def test_console_script_entry_point():
    result = subprocess.run(
        [sys.executable, "-m", "admmcheck.cli", "run", "admm", "--iterations", "5", "--json"],
        capture_output=True, text=True, check=True,
    )
    assert json.loads(result.stdout)["iterations"] == 5


# ------------------------------------------------------------------ admmcheck bound
def test_bound_pp_json_matches_the_formula(capsys):
    code = main(["bound", "pp", "--dataset", "synthetic", "--nodes", "5", "--iterations", "3",
                 "--eta", "0.5*1.1^(t-1)", "--alpha", "2", "--theta", "0.5", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["failed"] == [] and all(out["preconditions"].values())
    sizes, degrees = out["setting"]["sizes"], out["setting"]["degrees"]
    assert degrees == [2] * 5 and sum(sizes) == 250
    # hand evaluation of (26) for the smallest node: sum_t (1.4/4 + 2) / (0.5 * 1.1^(t-1) * 2 * B)
    expected = max(sum(2.35 / (0.5 * 1.1 ** (t - 1) * 2 * b) for t in (1, 2, 3)) for b in sizes)
    assert out["beta"] == pytest.approx(expected, rel=1e-12)


def test_bound_radmm_refuses_an_optimistic_c1_and_exits_1(capsys):
    code = main(["bound", "radmm", "--dataset", "synthetic", "--eta", "1", "--alpha", "2", "--c1", "0.1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["beta"] is None
    assert out["preconditions"] == {
        "feature_norm_at_most_1": True, "c1_bounds_loss_curvature": False, "eta_condition": True,
    }


def test_bound_without_noise_is_infinite_not_refused(capsys):
    assert main(["bound", "pp", "--dataset", "synthetic", "--alpha", "inf", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["beta"] == "inf"


def test_bound_rejects_an_unknown_symbol_at_parse_time(capsys):
    with pytest.raises(SystemExit) as raised:
        main(["bound", "pp", "--eta", "0.5*x"])
    assert raised.value.code == 2
    assert "only t (iteration) and i (node)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["bound", "radmm", "--eta", "0.5*1.1^(t-1)"], "radmm takes one constant --eta"),
        (["bound", "pp", "--alpha", "0"], "alpha must be positive"),
    ],
)
def test_bound_rejects_bad_schedules_with_exit_2(capsys, argv, message):
    assert main(argv + ["--dataset", "synthetic"]) == 2
    assert message in capsys.readouterr().err
