"""The pytest plugin (entry point ``pytest11``: ``admmcheck``): admmcheck's assertions (:mod:`admmcheck.testing`)
in any project's test suite, with one error budget for the whole session.

Options: ``--admmcheck-profile smoke|quick|full`` (samples per side of an assertion that names none),
``--admmcheck-seed`` (the session seed: each assertion's seed follows from it and the test's id),
``--admmcheck-confidence`` (the confidence of the whole session, default 0.95), ``--admmcheck-assertions K`` (the
number the budget is shared among, instead of the count of the collected suite), ``--admmcheck-json FILE`` and
``--admmcheck-pairs DIR`` (where a ``Pair`` of arrays given as neighbours is written for a replay command).

A test that makes statistical assertions is marked ``@pytest.mark.admmcheck`` (``assertions=N`` for N of them). The
session's error 1 − confidence is split among the K assertions the marked tests of the collected suite declare,
counted before ``-k``, ``-m`` or ``--lf`` deselect any (Bonferroni: each gets (1 − confidence)/K, so that with
probability at least ``confidence`` none of them fails on a correct mechanism): selecting tests leaves each one's
share, seed and verdict as they were in the whole suite, and so does ``pytest-xdist``. Naming fewer files or
folders collects fewer tests; ``--admmcheck-assertions K`` fixes K whatever is collected.

Every assertion of :mod:`admmcheck.testing` is recorded, the statistical ones and ``assert_converges`` and
``assert_conditions_hold`` too: in the terminal summary (with its replay command where it failed), in the test's
JUnit XML properties (the result as JSON under ``admmcheck``, and its key figures: for an audit
``epsilon_lower_bound``, ``samples`` (the samples used), ``seed``, ``budget_share``, ``verdict``; for the others
``verdict``, their figure and ``command``) and in the JSON file.

This module imports nothing of admmcheck until a marked test runs: a project that has admmcheck installed but does
not use it pays for pytest's reading of the entry point only.
"""

from __future__ import annotations

import contextvars
import json
from pathlib import Path
from typing import Any, Callable

import pytest

MARKER = "admmcheck"
PROFILES = ("smoke", "quick", "full")
RECORD = "admmcheck"  # the user property that carries one assertion's result (JSON)
_DECLARED = pytest.StashKey[dict]()  # test id -> the statistical assertions it declares (the collected suite)
#: the recorder of the test now running: ``admmcheck.testing`` gives it each assertion's record
RECORDER: contextvars.ContextVar[Callable[[dict[str, Any]], None] | None] = contextvars.ContextVar(
    "admmcheck_recorder", default=None)
#: where this session writes a ``Pair`` of arrays given as neighbours (``--admmcheck-pairs``), and the folder its
#: replay commands are relative to (pytest's root)
PAIRS: contextvars.ContextVar[tuple[Path, Path] | None] = contextvars.ContextVar("admmcheck_pairs", default=None)


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
                    help="write every assertion's result to FILE as JSON")
    group.addoption("--admmcheck-assertions", metavar="K", type=int, default=None,
                    help="share the budget among K statistical assertions (default: those the marked tests of the "
                         "collected suite declare, before -k/-m/--lf deselect any)")
    group.addoption("--admmcheck-pairs", metavar="DIR", default=".admmcheck/pairs",
                    help="where a Pair of arrays given as neighbours is written, named by its content, for the "
                         "replay command (relative to the root of the run; default: .admmcheck/pairs)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}(assertions=1): the test makes this many statistical assertions "
                                       "of admmcheck.testing; the session's error budget is shared among them")
    confidence = config.getoption("admmcheck_confidence")
    if not 0 < confidence < 1:
        raise pytest.UsageError(f"--admmcheck-confidence {confidence}: give a number in (0, 1), e.g. 0.95")
    fixed = config.getoption("admmcheck_assertions")
    if fixed is not None and fixed < 1:
        raise pytest.UsageError(f"--admmcheck-assertions {fixed}: give a whole number >= 1")
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


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect (mark plugin) and --lf filters (its wrapper's end)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """K: the statistical assertions the marked tests of the collected suite declare, before any deselection (the
    same ids, so the same K, in every xdist worker and whatever ``-k`` selects)."""
    config.stash[_DECLARED] = {item.nodeid: _declared(item) for item in items if _declared(item)}


@pytest.hookimpl(hookwrapper=True)  # the old-style wrapper: pytest 7 has no wrapper=True
def pytest_runtest_call(item: pytest.Item) -> Any:
    declared = item.config.stash[_DECLARED]
    mine = declared.get(item.nodeid, 0)
    total = item.config.getoption("admmcheck_assertions") or sum(declared.values())

    def record(result: dict[str, Any]) -> None:
        item.user_properties.append((RECORD, json.dumps(result | {"test": item.nodeid, "declared": total})))
        for key, value in result["properties"].items():
            item.user_properties.append((key, value))

    root = item.config.rootpath
    tokens = [(RECORDER, RECORDER.set(record)),
              (PAIRS, PAIRS.set((root / item.config.getoption("admmcheck_pairs"), root)))]
    if mine:  # an unmarked test's statistical assertion is refused (admmcheck.testing._decision)
        from admmcheck.testing import CURRENT, Session  # only now: nothing of admmcheck at collection

        error = 1 - item.config.getoption("admmcheck_confidence")
        tokens.append((CURRENT, CURRENT.set(Session(item.nodeid, error * mine / total, mine,
                                                    item.config.getoption("admmcheck_seed"),
                                                    item.config.getoption("admmcheck_profile")))))
    try:
        yield
    finally:
        for variable, token in reversed(tokens):
            variable.reset(token)


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
        writer.section("admmcheck: assertions")
        if any(result["kind"] == "private" for result in self.results):
            writer.line(f"session confidence {option('admmcheck_confidence'):g} shared among "
                        f"{self.results[0]['declared']} declared statistical assertion(s) (Bonferroni), profile "
                        f"{option('admmcheck_profile')}, session seed {option('admmcheck_seed')}")
        for result in sorted(self.results, key=lambda r: r["test"]):  # each assertion says itself (its "line")
            writer.line(f"{result['verdict']:<19} {result['test']} {result['line']}")
            if result["verdict"] in ("violation", "fail") and result.get("command"):
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
