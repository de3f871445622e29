"""Issue 53: admmcheck's assertions in a researcher's own pytest session (``admmcheck.testing`` and the plugin
``admmcheck.pytest_plugin``): one error budget for the session, split by test id; every result in the terminal
summary, the JUnit XML and the JSON file; a violation's replay command gives the same verdict; xdist changes
nothing."""

from __future__ import annotations

import json
import shlex
import xml.etree.ElementTree as ET

import pytest

from admmcheck.cli import main
from admmcheck.testing import assert_conditions_hold, assert_converges, derived_seed

pytest_plugins = ["pytester"]

SESSION = '''
import numpy as np
import pytest

from admmcheck.audit import Pair
from admmcheck.testing import assert_conditions_hold, assert_converges, assert_private


def laplace(data, rng):
    return float(np.sum(data)) + rng.laplace(scale=1.0)


def half_scale(data, rng):
    return float(np.sum(data)) + rng.laplace(scale=0.5)


def pair():
    return Pair(np.array([0.0]), np.array([1.0]))


@pytest.mark.admmcheck(assertions=2)
def test_laplace_is_private_at_its_scale_and_at_twice_the_claim():
    assert_private(laplace, pair, epsilon=1.0, workers=1, sequential=False)
    assert_private(laplace, pair, epsilon=2.0, workers=1, sequential=False)


@pytest.mark.admmcheck
def test_half_scale_is_not():  # neighbours given as a Pair of arrays: the replay reads them from a file
    assert_private(half_scale, Pair(np.array([0.0]), np.array([1.0])), epsilon=1.0, workers=1)


def test_unmarked():
    assert_private(laplace, pair, epsilon=1.0, workers=1)


@pytest.mark.admmcheck
def test_more_than_declared():
    assert_private(laplace, pair, epsilon=1.0, workers=1, samples=500, sequential=False)
    assert_private(laplace, pair, epsilon=1.0, workers=1, samples=500, sequential=False)


def test_exact_assertions():  # not statistical: recorded, with no share of the budget
    assert_converges("admm", iterations=200)
    assert_conditions_hold({"M": [[2, 1], [1, 2]]})
    assert_conditions_hold({"N": [[1, 2], [2, 1]]})
'''


def _results(path) -> dict:
    return {(r["test"], r["claimed_epsilon"]): r for r in json.loads(path.read_text())["results"]
            if r["kind"] == "private"}


def _properties(path) -> dict:
    return {case.get("name"): [(p.get("name"), p.get("value")) for p in case.iter("property")]
            for case in ET.parse(path).iter("testcase")}


def test_a_session_shares_its_budget_records_every_result_and_a_violation_replays(pytester, capsys):
    """One session, and the same session under ``-n 2``: the same verdicts, seeds and bounds."""
    pytester.makepyfile(test_session=SESSION)
    options = ("-p", "no:randomly", "--admmcheck-profile", "smoke", "--admmcheck-seed", "7")
    result = pytester.runpytest_inprocess(*options, "--admmcheck-json", "out.json", "--junitxml", "junit.xml")
    result.assert_outcomes(passed=1, failed=4)
    result.stdout.fnmatch_lines(["*test_unmarked makes a statistical assertion but is not marked*",
                                 "*test_more_than_declared makes more than the 1 statistical assertion(s) it declares; "
                                 "mark it @pytest.mark.admmcheck(assertions=2)*",
                                 "*admmcheck: assertions*",
                                 "session confidence 0.95 shared among 4 declared statistical assertion(s) "
                                 "(Bonferroni)*",
                                 "violation *test_session.py::test_half_scale_is_not [[]*test_session.py:half_scale[]]: "
                                 "epsilon > *(claim 1), n = *"])
    found = _results(pytester.path / "out.json")
    found.pop(("test_session.py::test_more_than_declared", 1.0))  # its first assertion, made within its share
    private = "test_session.py::test_laplace_is_private_at_its_scale_and_at_twice_the_claim"
    broken = "test_session.py::test_half_scale_is_not"
    assert [(test, claim, r["verdict"]) for (test, claim), r in sorted(found.items())] == [
        (broken, 1.0, "violation"), (private, 1.0, "no-violation-found"), (private, 2.0, "no-violation-found")]
    for (test, _), record in found.items():  # (1 - 0.95) / 4 each; the seed a function of the test id alone
        assert record["budget_share"] == pytest.approx(0.05 / 4) and record["confidence"] == pytest.approx(1 - 0.05 / 4)
        assert record["seed"] in {derived_seed(7, test, 0), derived_seed(7, test, 1)} and record["samples"] == 2_000
    # JUnit XML: each assertion's bound, the samples it used, seed and budget share
    cases = _properties(pytester.path / "junit.xml")
    shown = dict(cases["test_half_scale_is_not"])
    assert float(shown["epsilon_lower_bound"]) == found[(broken, 1.0)]["epsilon_lower_bound"]
    assert (int(shown["samples"]), int(shown["seed"]), float(shown["budget_share"]), shown["verdict"]) == (
        found[(broken, 1.0)]["samples_used"], found[(broken, 1.0)]["seed"], pytest.approx(0.05 / 4), "violation")
    assert found[(broken, 1.0)]["samples_used"] < 2_000  # the sequential test stopped early
    assert [name for name, _ in cases["test_laplace_is_private_at_its_scale_and_at_twice_the_claim"]].count(
        "epsilon_lower_bound") == 2 and cases["test_unmarked"] == []
    # the exact assertions are recorded too, each with its replay command
    exact = [(name, value) for name, value in cases["test_exact_assertions"] if name != "admmcheck"]
    assert [name for name, _ in exact] == ["verdict", "objective_gap", "command", "verdict", "command",
                                           "verdict", "command"]
    assert [value for name, value in exact if name in ("verdict", "command")] == [
        "pass", "admmcheck run admm --iterations 200 --json", "pass", "pytest test_session.py::test_exact_assertions",
        "fail", "pytest test_session.py::test_exact_assertions"]
    assert float(dict(exact)["objective_gap"]) == pytest.approx(assert_converges("admm", iterations=200), abs=0)
    result.stdout.fnmatch_lines(["fail *test_session.py::test_exact_assertions [[]1 condition matrix positive "
                                 "definite[]]: decided exactly, fail",
                                 "    replay: pytest test_session.py::test_exact_assertions"])
    # the failure prints its replay command, and the command gives the same verdict and bound; the Pair of arrays
    # is written under the run's root, named by its content
    command = found[(broken, 1.0)]["command"]
    pair_file = command.split("--neighbors ")[1].split()[0]
    assert pair_file.startswith(".admmcheck/pairs/pair-") and pair_file.endswith(".npz")
    assert found[(private, 1.0)]["command"].startswith("admmcheck audit code --mechanism ")
    result.stdout.fnmatch_lines([f"*replay (seed {found[(broken, 1.0)]['seed']}): {command}"])
    capsys.readouterr()
    assert main(shlex.split(command)[1:] + ["--workers", "1", "--quiet"]) == 1
    replayed = json.loads(capsys.readouterr().out)
    assert (replayed["verdict"], replayed["epsilon_lower_bound"]) == ("violation",
                                                                       found[(broken, 1.0)]["epsilon_lower_bound"])
    # the same session on two xdist workers: the budget is split by test id, not by timing
    parallel = pytester.runpytest_subprocess(*options, "-n", "2", "--admmcheck-json", "two.json", "--junitxml",
                                             "two.xml")
    parallel.assert_outcomes(passed=1, failed=4)
    keys = ("verdict", "epsilon_lower_bound", "seed", "budget_share", "samples_used")
    two = _results(pytester.path / "two.json")
    two.pop(("test_session.py::test_more_than_declared", 1.0))
    assert {k: [r[key] for key in keys] for k, r in two.items()} == {k: [r[key] for key in keys]
                                                                      for k, r in found.items()}
    assert _properties(pytester.path / "two.xml") == cases  # byte-identical properties, arrays as neighbours too
    # -k selecting two tests: the budget is the whole suite's, so their verdicts and bounds are as they were
    selected = pytester.runpytest_inprocess(*options, "-k", "half_scale or laplace_is_private", "--junitxml",
                                            "some.xml")
    selected.assert_outcomes(passed=1, failed=1)
    some = _properties(pytester.path / "some.xml")
    assert {name: some[name] for name in some} == {name: cases[name] for name in some} and len(some) == 2


def test_convergence_and_conditions_assertions_say_what_failed_and_how_to_replay_it():
    assert assert_converges("admm", iterations=200) <= 1e-6
    with pytest.raises(AssertionError, match=r"admmcheck run admm --iterations 3 --json does not reach the CVXPY "
                                             r"optimum: relative objective gap 1\.9\d*e-01 > 1e-06"):
        assert_converges("admm", iterations=3)
    assert assert_conditions_hold("madmm", dataset="synthetic").status == "pass"
    with pytest.raises(AssertionError) as failed:
        assert_conditions_hold("radmm", lipschitz=("1/4",))
    message = str(failed.value)
    assert "(27): refuted; certificate: x = [" in message and "gives x^T M x = -" in message
    assert message.endswith("replay: admmcheck conditions radmm --lipschitz 1/4 --json")
    assert main(["conditions", "radmm", "--lipschitz", "1/4"]) == 1  # the replay refutes it too


def test_a_project_that_does_not_use_admmcheck_loads_nothing_of_it_but_the_plugin(pytester):
    """The plugin imports nothing of admmcheck until a marked test runs (its cost to a project that does not use it
    is measured in benchmarks/results/pytest_plugin_overhead.json)."""
    pytester.makeconftest('''
import sys


def pytest_sessionfinish(session):
    loaded = sorted(name for name in sys.modules if name.startswith("admmcheck"))
    (session.config.rootpath / "loaded.txt").write_text(" ".join(loaded))
''')
    pytester.makepyfile(test_plain="def test_plain():\n    assert 1 + 1 == 2\n")
    pytester.runpytest_subprocess("-p", "no:randomly").assert_outcomes(passed=1)
    assert (pytester.path / "loaded.txt").read_text().split() == ["admmcheck", "admmcheck.foundations",
                                                                   "admmcheck.foundations.lazy",
                                                                   "admmcheck.pytest_plugin"]
