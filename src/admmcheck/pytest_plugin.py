"""The pytest plugin (entry point ``pytest11``: ``admmcheck``): admmcheck's assertions (:mod:`admmcheck.testing`)
in any project's test suite, with one error budget for the whole session.

Options: ``--admmcheck-profile smoke|quick|full`` (samples per side of an assertion that names none),
``--admmcheck-seed`` (the session seed: each assertion's seed follows from it and the test's id),
``--admmcheck-confidence`` (the confidence of the whole session, default 0.95) and ``--admmcheck-json FILE``.

A test that makes statistical assertions is marked ``@pytest.mark.admmcheck`` (``assertions=N`` for N of them). The
session's error 1 − confidence is split among the K assertions the marked tests of the session declare, after
deselection (Bonferroni: each gets (1 − confidence)/K, so that with probability at least ``confidence`` none of them
fails on a correct mechanism); K and each share depend on the collected test ids alone, so they are the same in every
``pytest-xdist`` worker. Each result goes to the terminal summary, to the test's JUnit XML properties
(``epsilon_lower_bound``, ``samples``, ``seed``, ``budget_share``, ``verdict``) and to the JSON file.

This module imports nothing of admmcheck until a marked test runs: a project that has admmcheck installed but does
not use it pays for pytest's reading of the entry point only.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

MARKER = "admmcheck"
PROFILES = ("smoke", "quick", "full")
RECORD = "admmcheck"  # the user property that carries one assertion's result (JSON)
_DECLARED = pytest.StashKey[dict]()  # test id -> the statistical assertions it declares (this session's selection)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("admmcheck", "admmcheck: statistical privacy assertions")
    group.addoption("--admmcheck-profile", choices=PROFILES, default="quick",
                    help="samples per side of an assertion that gives none: smoke 2000, quick 20000 (default), "
                         "full 200000")
    group.addoption("--admmcheck-seed", type=int, default=0,
                    help="session seed; each assertion's seed follows from it and the test's id (default: 0)")
    group.addoption("--admmcheck-confidence", type=float, default=0.95,
                    help="the confidence of the whole session, shared among its statistical assertions (default: "
                         "0.95)")
    group.addoption("--admmcheck-json", metavar="FILE", default=None,
                    help="write every statistical assertion's result to FILE as JSON")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}(assertions=1): the test makes this many statistical assertions "
                                       "of admmcheck.testing; the session's error budget is shared among them")
    confidence = config.getoption("admmcheck_confidence")
    if not 0 < confidence < 1:
        raise pytest.UsageError(f"--admmcheck-confidence {confidence}: give a number in (0, 1), e.g. 0.95")
    config.stash[_DECLARED] = {}
    config.pluginmanager.register(_Results(config), "admmcheck-results")


def _declared(item: pytest.Item) -> int:
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return 0
    count = marker.kwargs.get("assertions", marker.args[0] if marker.args else 1)
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.{MARKER}(assertions={count!r}): give a whole number "
                                ">= 1")
    return count


def pytest_collection_finish(session: pytest.Session) -> None:
    """K: the statistical assertions the selected tests declare (the same ids, so the same K, in every xdist
    worker)."""
    session.config.stash[_DECLARED] = {item.nodeid: _declared(item) for item in session.items if _declared(item)}


@pytest.hookimpl(hookwrapper=True)  # the old-style wrapper: pytest 7 has no wrapper=True
def pytest_runtest_call(item: pytest.Item) -> Any:
    declared = item.config.stash[_DECLARED]
    mine, total = declared.get(item.nodeid, 0), sum(declared.values())
    if not mine:  # an unmarked test's statistical assertion is refused (admmcheck.testing._decision)
        yield
        return
    from admmcheck.testing import CURRENT, Session  # only now: nothing of admmcheck at collection

    error = 1 - item.config.getoption("admmcheck_confidence")

    def record(result: dict[str, Any]) -> None:
        item.user_properties.append((RECORD, json.dumps(result | {"test": item.nodeid, "declared": total})))
        for key in ("epsilon_lower_bound", "samples", "seed", "budget_share", "verdict"):
            item.user_properties.append((key, result[key]))

    session = Session(item.nodeid, error * mine / total, mine,
                      item.config.getoption("admmcheck_seed"), item.config.getoption("admmcheck_profile"), record)
    token = CURRENT.set(session)
    try:
        yield
    finally:
        CURRENT.reset(token)


class _Results:
    """The results of one session's assertions, gathered from the test reports (in the controller under xdist),
    printed in the terminal summary and written to ``--admmcheck-json``."""

    def __init__(self, config: pytest.Config):
        self.config, self.results = config, []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.results += [json.loads(value) | {"outcome": report.outcome}
                             for name, value in report.user_properties if name == RECORD]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if hasattr(self.config, "workerinput") or not self.results:
            return
        option = self.config.getoption
        writer = terminalreporter
        writer.section("admmcheck: statistical assertions")
        writer.line(f"session confidence {option('admmcheck_confidence'):g} shared among "
                    f"{self.results[0]['declared']} declared assertion(s) (Bonferroni), profile "
                    f"{option('admmcheck_profile')}, session seed {option('admmcheck_seed')}")
        for result in sorted(self.results, key=lambda r: r["test"]):
            share = "as given" if result["budget_share"] is None else f"{result['budget_share']:.3g}"
            relation = ">" if result["bound_is_strict"] else ">="
            claimed = f"{result['claimed_epsilon']:g}" if result["claimed_epsilon"] is not None else result["claim"]
            writer.line(f"{result['verdict']:<19} {result['test']} [{result['mechanism']}]: {result['bounded']} "
                        f"{relation} {result['lower_bound']:.4f} "
                        f"(claim {claimed}), n = {result['samples_used']}/{result['samples']}, "
                        f"seed {result['seed']}, error share {share}")
            if result["verdict"] == "violation":
                writer.line(f"    replay: {result['command']}")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        path = self.config.getoption("admmcheck_json")
        if path is None or hasattr(self.config, "workerinput"):
            return
        option = self.config.getoption
        document = {"confidence": option("admmcheck_confidence"), "seed": option("admmcheck_seed"),
                    "profile": option("admmcheck_profile"),
                    "declared": self.results[0]["declared"] if self.results else 0,
                    "results": sorted(self.results, key=lambda r: r["test"])}
        with open(path, "w", encoding="utf-8") as stream:
            json.dump(document, stream, indent=2)
