"""The command-line contract: JSON fields, problem export, exit codes and messages."""

from __future__ import annotations

import json
import shlex
from fractions import Fraction
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
from scipy.optimize import minimize

from admmcheck.cli import _parser, main
from admmcheck.commands.spellings import new_spelling

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
    assert "--growth does not apply to admm: it reads --eta; remove it" in capsys.readouterr().err


def _without_timings(document):
    """report.json with the fields named as timings (``*_s``) and the output paths left out."""
    if isinstance(document, dict):
        return {k: _without_timings(v) for k, v in document.items() if not k.endswith("_s") and k != "files"}
    if isinstance(document, list):
        return [_without_timings(v) for v in document]
    return document


def test_verify_writes_a_reproducible_report_with_every_algorithm(capsys, tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    code = main(["verify", "--profile", "smoke", "--seed", "3", "--out", str(first), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1  # the papers' failed claims (dp-sharing is not DP, unstated preconditions)
    algorithms = {v["algorithm"] for v in out["verdicts"]}
    assert {"admm", "admm-edge", "madmm", "radmm", "pp", "dvp", "sharing", "dp-sharing", "dpsda-c", "dpsda-ps"} <= algorithms
    assert all(v["command"].startswith("admmcheck ") for v in out["verdicts"])
    for verdict in out["verdicts"]:  # each recorded command is spelled as the command line reads it now
        words = shlex.split(verdict["command"].split(" (")[0].split(" and ")[0])[1:]
        args, unknown = _parser().parse_known_args(words)
        assert unknown == [] and new_spelling(words, print) == words, verdict["command"]
    convergence = [v for v in out["verdicts"] if v["check"].split(" (")[0] in
                   ("admm converges", "madmm converges", "radmm converges", "edge = simplified", "madmm(eta=theta) = admm")]
    assert len(convergence) == 10 and all(v["verdict"] == "pass" for v in convergence)
    assert any(v["verdict"] == "violation" and v["algorithm"] == "dp-sharing" for v in out["verdicts"])
    assert any("stalls" in f["title"] for f in out["findings"])
    # issue 63: the papers' experiments on the papers' data, each row decided, citing admmcheck replicate
    rows = {(v["algorithm"], v["check"].split(":")[0]): v for v in out["verdicts"]}
    for algorithm in ("dpsda-c", "dpsda-ps"):
        table = rows[(algorithm, "Table III on MNIST 6 vs 8 (1,000 images, scaled)")]
        assert table["verdict"] == "fail" and "eps=0.2 test " in table["figure"]
        assert table["command"].startswith(f"admmcheck replicate {algorithm}-mnist --runs 6 ")
    assert [rows[key]["verdict"] for key in (("sharing", "a9a Fig. 1(a)"), ("sharing", "a9a Fig. 3(a)"),
                                             ("dp-sharing", "a9a Fig. 1(b)/3(a), the noisy runs"))] == [
        "pass", "pass", "fail"]
    assert rows[("sharing", "a9a Fig. 1(a)")]["command"] == "admmcheck replicate sharing-a9a --json (field checks)"
    assert "eps=1 test 89.60 vs " in rows[("dpsda-ps", "Table III on MNIST 6 vs 8 (1,000 images, scaled)")]["figure"]
    assert [rows[("dpsda-ps", check)]["verdict"] for check in ("Table III's claim", "Table V", "Fig. 6 on MNIST (500 "
                                                                 "images, T = 500, f_400 changed)")] == ["fail"] * 2 + ["pass"]
    titles = [f["title"].split(":")[0] for f in out["findings"] if f["algorithm"] == "dpsda-ps"]
    assert titles == ["Table III's private accuracies are not reproduced",
                      "Table V compares x(400), which cannot depend on f_400"]
    # the same seed again, for the checks that draw random numbers: the same verdicts, findings and figures, in the
    # same order, as the first run's, shown on DPSDA-C (a transcript audit, a regret run and seeded figures); the
    # reference mechanisms' audits are shown reproducible by tests/test_audit_settings.py
    again = ("dpsda-c",)
    assert main(["verify", "--profile", "smoke", "--seed", "3", "--out", str(second), "--only", ",".join(again)]) == 1
    assert "dpsda-c     fail            preconditions the proofs use" in capsys.readouterr().out  # the table
    a = json.loads((first / "report.json").read_text())
    b = json.loads((second / "report.json").read_text())
    for key in ("verdicts", "findings"):
        ours = [entry for entry in a[key] if entry["algorithm"] in again]
        assert json.dumps(_without_timings(b[key])) == json.dumps(_without_timings(ours))  # order and keys too
    for name, figure in b["figures"].items():  # a figure of the same algorithms whole, else each series it has
        if figure["algorithms"] == a["figures"][name]["algorithms"]:
            assert figure == a["figures"][name], name
        else:
            assert figure["series"] and all(series == a["figures"][name]["series"][key]
                                            for key, series in figure["series"].items()), name
    assert {"dpsda", "dpsda_tradeoff"} <= set(b["figures"])
    html = (first / "report.html").read_text()
    assert 'id="verdicts"' in html and html.count('class="algorithm"') == len(algorithms)
    assert html.count("data:image/png;base64,") >= 2 and (first / "privacy.svg").exists()
    # issue 63: the papers' data that cannot be had offline is said once, in the JSON, the text and the page
    from admmcheck.commands.replicate import A9A, MNIST
    from admmcheck.commands.verify import UNOBTAINABLE

    assert a["data"] == [MNIST, A9A, UNOBTAINABLE] and b["data"] == [MNIST, UNOBTAINABLE]  # and what they ran on
    assert "Mushroom" in UNOBTAINABLE and "CIFAR-10" in UNOBTAINABLE and "gisette" in UNOBTAINABLE
    assert html.count("Mushroom (the DPSDA paper&#39;s Table II), CIFAR-10") == 1 and 'id="data"' in html
    (second / "report.html").unlink()  # admmcheck report renders a report.json again (the smaller one)
    assert main(["report", str(second / "report.json")]) == 0 and (second / "report.html").exists()
    assert (second / "report.html").read_text().count("gisette (the ADMM-sharing paper&#39;s Fig. 2)") == 1


def test_verify_only_checks_the_names_asked_and_refuses_what_it_cannot_check(capsys, tmp_path):
    """Issue 52: ``verify --only NAME[,NAME...]``. DPSDA-PS alone gives its two verdicts of the DPSDA part, the very
    regret of ``admmcheck run dpsda-ps`` with the smoke profile's rounds (its rows of the experiments part, the
    paper's MNIST rerun, are checked in the whole verify's test); an unknown name, and a private mechanism no check
    covers (registered without report=True), are refused before any work, with what to do."""
    from admmcheck.commands.verify import collect
    from admmcheck.mechanisms.registry import REGISTRY
    from admmcheck.mechanisms.settings import OnlineSetting

    out = collect("smoke", only=["dpsda-ps"], parts=("dpsda",)).as_dict()
    assert [(v["algorithm"], v["check"], v["verdict"]) for v in out["verdicts"]] == [
        ("dpsda-ps", "regret <= Theorem 5 bound (eps = inf)", "pass"), ("dpsda-ps", "preconditions the proofs use", "pass")]
    spec = REGISTRY["dpsda-ps"]
    alone = spec.family.run(spec, OnlineSetting(iterations=100, trials=3, seed=0))
    assert out["verdicts"][0]["value"] == alone.as_dict()["regret"]
    assert main(["verify", "--only", "pp,nope", "--out", str(tmp_path)]) == 2
    assert "--only pp,nope: no registered name nope; choose among admm," in capsys.readouterr().err
    assert main(["verify", "--only", "pvp", "--out", str(tmp_path)]) == 2
    assert "verify checks a private mechanism registered with report=True" in capsys.readouterr().err
    assert main(["verify", "--only", "pp,", "--out", str(tmp_path)]) == 2
    assert "give registered names separated by commas" in capsys.readouterr().err


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
    out = json.loads(capsys.readouterr().out)
    assert out["beta"] is None and out["non_finite"]["beta"] == "inf"  # JSON has no infinity
    assert out["parameters"] == {"eta": 0.5, "alpha": None, "c1": 0.25, "theta": 0.5}
    assert out["non_finite"]["parameters.alpha"] == "inf"


def test_bound_rejects_an_unknown_symbol_at_parse_time(capsys):
    assert main(["bound", "pp", "--eta", "0.5*x"]) == 2
    assert "unknown name 'x'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["bound", "radmm", "--eta", "0.5*1.1^(t-1)"], "private-radmm takes one constant eta"),
        (["bound", "pp", "--alpha", "0"], "--alpha: '0' = 0.0 must be positive"),
    ],
)
def test_bound_rejects_bad_schedules_with_exit_2(capsys, argv, message):
    assert main(argv + ["--dataset", "synthetic"]) == 2
    assert message in capsys.readouterr().err


def test_conditions_radmm_json_has_every_condition_and_rechecks(capsys, tmp_path):
    from admmcheck.conditions.certificates import Certificate, verify_certificate

    code = main(["conditions", "radmm", "--graph", "complete:4", "--eta", "1/2", "--gamma", "1/5",
                 "--lipschitz", "1/4", "--find-gamma", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0  # the question asked is the minimal gamma, and it was certified
    assert not out["all_hold"] and out["status"] == "pass"  # R_2 ≻ 0 on R^N (a proof claim) fails
    names = [c["name"] for c in out["conditions"]]
    assert names[:5] == ["D - A ⪰ 0", "D + A ⪰ 0", "Null(D - A) = span(1)", "(26)", "(27)"] and all(isinstance(c["holds"], bool) for c in out["conditions"])
    for c in out["conditions"]:  # certificates re-check against the printed matrices
        if c["name"] == "Null(D - A) = span(1)":
            assert c["basis"] == [["1", "1", "1", "1"]]
            continue
        assert verify_certificate(Certificate.from_dict(c["certificate"]), c["matrix"])
    assert out["gamma_interval"]["lo"] == "1/8" and out["gamma_interval"]["width"] <= 1e-6


def test_conditions_radmm_reports_no_gamma_with_a_certificate(capsys):
    assert main(["conditions", "radmm", "--graph", "path:4", "--lipschitz", "1/4", "--find-gamma", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["gamma_interval"] is None
    assert out["no_gamma_certificate"]["kind"] == "uniform_witness"


def test_conditions_madmm_from_a_dataset_and_an_edge_list_file(capsys, tmp_path):
    edges = tmp_path / "graph.txt"
    edges.write_text("# a triangle and a pendant node\n0 1\n1 2\n2 0\n\n2 3\n")
    assert main(["conditions", "madmm", "--graph", str(edges), "--eta", "1/2", "--theta", "1/2",
                 "--dataset", "synthetic", "--rho", "1/2", "--horizon", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["graph"] == "graph.txt" and out["all_hold"]
    assert out["parameters"]["m"] == ["1/8"] * 4  # rho/N
    assert all(Fraction(m) < Fraction(1, 4) for m in out["parameters"]["M"])


@pytest.mark.parametrize("args,message", [
    (["radmm", "--graph", "ring:5"], "--lipschitz"),
    (["radmm", "--graph", "hexagon:5", "--lipschitz", "1"], "edge-list file"),
    (["radmm", "--graph", "ring:5", "--lipschitz", "1", "--gamma", "-1"], "gamma=-1 must be >= 0"),
    (["radmm", "--graph", "ring:5", "--lipschitz", "1", "--eta", "one"], "unknown name 'one'"),
    (["madmm", "--graph", "ring:5", "--lipschitz", "1"], "--strong-convexity"),
])
def test_conditions_bad_input_names_the_fix(capsys, args, message):
    assert main(["conditions", *args]) == 2
    assert message in capsys.readouterr().err


def test_version_module_entry_and_defaults_in_help(capsys):
    from admmcheck import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"admmcheck {__version__}" and __version__ != "unknown"
    result = subprocess.run([sys.executable, "-m", "admmcheck", "--version"], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == f"admmcheck {__version__}"
    for command, shown in (("run madmm", ["(default: 0.5)", "(default: synthetic)", "(default: ring)"]),
                           ("bound pp", ["(default: 5.0)", "(default: 0.25)", "(default: breast-cancer)"]),
                           ("conditions radmm", ["(default: ring:5)", "(default: 1/5)"]),
                           ("conditions madmm", ["(default: ring:5)", "(default: 20)"]),
                           ("experiment", ["(default: 10)", "(default: experiments)"])):
        assert main([*command.split(), "--help"]) == 0
        text = " ".join(capsys.readouterr().out.split())
        assert all(s in text for s in shown), (command, shown)
        assert "exit status:" in text and "4 the time budget" in text


def test_bound_json_states_the_schedules_it_used(capsys):
    assert main(["bound", "pp", "--dataset", "synthetic", "--eta", "0.5*1.03^(t-1)", "--alpha", "2,3,4,5,6",
                 "--iterations", "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["parameters"] == {"eta": "0.5*1.03^(t-1)", "alpha": [2.0, 3.0, 4.0, 5.0, 6.0], "c1": 0.25, "theta": 0.5}
    assert isinstance(out["beta"], float) and "non_finite" not in out
    assert main(["bound", "radmm", "--dataset", "synthetic", "--eta", "1", "--json"]) == 0
    assert "theta" not in json.loads(capsys.readouterr().out)["parameters"]


def test_edge_list_labels_keep_numeric_order(tmp_path):
    from admmcheck.problems.networks import network_from_edge_list

    path = tmp_path / "ring12.txt"
    path.write_text("".join(f"{k} {(k + 1) % 12}\n" for k in range(12)))
    network = network_from_edge_list(path)
    assert network.labels == tuple(range(12))  # 2 before 10, not repr order
    np.testing.assert_array_equal(network.adjacency, nx.to_numpy_array(nx.cycle_graph(12), dtype=int))


def test_strict_json_writes_non_finite_numbers_as_null_and_lists_them():
    from admmcheck.foundations.output import to_json

    text = to_json({"a": float("inf"), "b": [1.0, float("nan")], "c": {"d": -np.inf}, "e": np.float64(2.5)})
    assert json.loads(text) == {"a": None, "b": [1.0, None], "c": {"d": None}, "e": 2.5,
                                "non_finite": {"a": "inf", "b[1]": "nan", "c.d": "-inf"}}
    assert "Infinity" not in text and "NaN" not in text


def test_benchmarks_leave_the_recorded_results_alone(tmp_path):
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    copy = tmp_path / "benchmarks"
    shutil.copytree(root / "benchmarks", copy, ignore=shutil.ignore_patterns("out"))
    recorded = copy / "results" / "pp_batch.json"
    before = recorded.read_bytes()
    subprocess.run([sys.executable, str(copy / "pp_batch.py"), "--trials", "3", "--repeats", "1"],
                   check=True, capture_output=True, timeout=120)  # the default output
    assert recorded.read_bytes() == before
    assert json.loads((copy / "out" / "pp_batch.json").read_text())["setting"]["trials"] == 3
    assert "/benchmarks/out/" in (root / ".gitignore").read_text().splitlines()


def test_a_reader_that_stops_early_is_not_an_error_of_ours():
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-m", "admmcheck", "run", "admm", "--dataset", "synthetic",
                                "--iterations", "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # the reader is gone before the first line, as `| head -0` would be: every write fails
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 0 and "error" not in stderr, stderr


AUDIT_ARGS = ["audit", "code", "--mechanism", "m.py:f", "--neighbors", "m.py:g", "--epsilon", "1", "--json"]


@pytest.mark.parametrize("raised, status", [
    (None, 0),  # the command computed and wrote its verdict: the only way to 0
    (BrokenPipeError(32, "Broken pipe"), 3),  # a pipe of ours, not stdout: never "a reader that stopped early"
    (SystemExit(0), 3), (SystemExit(None), 3), (SystemExit(2), 3),  # an exit inside a command is a bug
    (KeyboardInterrupt(), 130), (MemoryError("x"), 2), (OSError(5, "io"), 3), (RuntimeError("x"), 3),
    (GeneratorExit(), None),  # a BaseException that is neither: it propagates, never exit 0
], ids=["verdict", "BrokenPipeError", "SystemExit(0)", "SystemExit(None)", "SystemExit(2)", "KeyboardInterrupt",
        "MemoryError", "OSError", "RuntimeError", "GeneratorExit"])
def test_every_way_out_of_main_but_a_written_verdict_is_a_non_zero_exit(monkeypatch, capsys, raised, status):
    """Issue 51: a broken pipe of a worker was taken for a reader that closed stdout, and the audit exited 0 with
    nothing written. Each way a command can end is enumerated here; only a verdict computed and written exits 0."""
    from admmcheck import cli

    def command(args):
        if raised is None:
            print('{"verdict": "no-violation-found"}')
            return cli.EXIT_OK
        raise raised

    monkeypatch.setattr(cli, "_audit_code", command)
    if status is None:
        with pytest.raises(type(raised)):
            cli.main(AUDIT_ARGS)
        return
    assert cli.main(AUDIT_ARGS) == status
    out, err = capsys.readouterr()
    if status == 0:
        assert json.loads(out)["verdict"] == "no-violation-found"
    else:
        assert json.loads(out.strip().splitlines()[-1])["exit_status"] == status
        assert err.startswith("admmcheck: ")


def test_a_broken_pipe_is_a_reader_that_stopped_early_only_when_stdout_itself_is_closed():
    script = ("import sys\nfrom admmcheck import cli\n"
              "def command(args):\n    print('x' * 100000, flush=True)\n    return cli.EXIT_OK\n"
              f"cli._audit_code = command\nsys.exit(cli.main({AUDIT_ARGS!r}))\n")
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # stdout's reader is gone: the print fails with BrokenPipeError
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 0 and "error" not in stderr, stderr


def test_a_private_run_at_its_defaults_states_the_claim_its_bound_gives(capsys):
    """``admmcheck run pp`` at its defaults (eta given as one value for every node) said "no claim on this setting
    (penalty has shape (1,) ...)": the claim now reads the schedules the run reads. Its text printed a KeyError
    ('sigma') before, a consensus run having no sigma."""
    assert main(["run", "pp", "--iterations", "5", "--json"]) == 0
    claim = json.loads(capsys.readouterr().out)["claim"]
    assert main(["bound", "pp", "--dataset", "synthetic", "--iterations", "5", "--alpha", "5", "--json"]) == 0
    assert claim["epsilon"] == pytest.approx(json.loads(capsys.readouterr().out)["beta"])
    assert main(["run", "pp", "--iterations", "5"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("claimed          ")


def test_an_experiment_without_a_privacy_figure_prints_its_table(capsys, tmp_path):
    """madmm-fig1 is non-private: its P(T) is None, which the table's format crashed on (exit 3); it shows "-"."""
    assert main(["experiment", "madmm-fig1", "--iterations", "5", "--out", str(tmp_path)]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].split() == ["panel", "setting", "L_mean(T)", "L_range(T)", "P(T)"]
    assert all(row.endswith(" -") for row in rows[1:-1]) and rows[-1].startswith("written: ")


def test_replicate_refuses_what_an_experiment_does_not_take(capsys):
    """Issue 63: ``admmcheck replicate``. A deterministic experiment refuses --runs and --seed, a noisy one fewer
    than 2 runs, an unknown name is refused with the choices; each exit 2, before any work."""
    assert main(["replicate", "sharing-a9a", "--runs", "3"]) == 2
    assert "sharing-a9a is deterministic: it takes neither --runs nor --seed" in capsys.readouterr().err
    assert main(["replicate", "dpsda-c-mnist", "--runs", "1"]) == 2
    assert "--runs 1: at least 2 noisy runs per setting" in capsys.readouterr().err
    assert main(["replicate", "mushroom"]) == 2
    assert "(choose from 'dpsda-c-mnist', 'dpsda-ps-mnist', 'sharing-a9a')" in capsys.readouterr().err
