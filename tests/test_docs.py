"""The worked examples of docs/ run as written (issue 20, item 4)."""

from __future__ import annotations

import json
import os
import re
import sys
import shlex
from pathlib import Path

import pytest
from system import needs

from admmcheck.cli import main

DOCS = Path(__file__).resolve().parents[1] / "docs"


def blocks(page: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", (DOCS / page).read_text(), flags=re.S)


EXAMPLE = DOCS.parent / "examples" / "noisy-variants"


def test_verify_a_new_algorithm_examples_run(tmp_path, monkeypatch):
    """The guide's examples run as written, with the example package's variants registered as its entry point
    registers them (on the path of this process and of the audit's workers): run, bound, black-box and white-box
    audit (the page asserts each; its verify --only runs in tests/test_example_plugins.py). Its ``py`` blocks are excerpts of the example
    package, and must be found there word for word."""
    from admmcheck.mechanisms.registry import REGISTRY

    source = EXAMPLE / "src"
    excerpts = blocks("verify-a-new-algorithm.md", "py")
    package = "".join(path.read_text() for path in sorted((source / "noisy_variants").glob("*.py"))
                      + sorted((EXAMPLE / "tests").glob("*.py")))
    assert len(excerpts) == 4 and all(excerpt in package for excerpt in excerpts)
    assert blocks("verify-a-new-algorithm.md", "toml")[0] in (EXAMPLE / "pyproject.toml").read_text()
    monkeypatch.syspath_prepend(str(source))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")])))
    namespace: dict = {}
    try:
        for code in blocks("verify-a-new-algorithm.md", "python"):
            exec(compile(code, "verify-a-new-algorithm.md", "exec"), namespace)  # noqa: S102 - our own docs
        assert namespace["run"].algorithm == "noisy-admm"
        assert namespace["black"].verdict == "no-violation-found" and namespace["white"]["verdict"] == "within-claim"
        assert namespace["claim"].summary["theorem"]["beta"] == namespace["claim"].epsilon > 0
    finally:
        for name in ("noisy-admm", "clipped-sharing", "quiet-admm"):
            if name in REGISTRY.registered():
                REGISTRY.unregister(name)
        for module in [name for name in sys.modules if name.startswith("noisy_variants")]:
            sys.modules.pop(module)
    assert "noisy-admm" not in REGISTRY


def _json(captured: str) -> dict:
    """The JSON a command printed, or {} for a command run without --json."""
    return json.loads(captured) if captured.lstrip().startswith("{") else {}


# What each command of audit-third-party-code.md must give, in the page's order: (exit status, check)
AUDIT_EXAMPLES = [
    (1, lambda out, folder: out["verdict"] == "violation" and 1.7 <= out["epsilon_lower_bound"] <= 2.0),
    (1, lambda out, folder: out["verdict"] == "violation" and out["mode"] == "sequential"
        and out["samples_used"]["total"] == out["sequential"]["samples_used"] and out["samples_used"]["total"][0] < 1_000
        and out["epsilon_lower_bound"] == 1.0),
    (0, lambda out, folder: out["verdict"] == "no-violation-found" and out["neighbour_pairs"] == 1),
    (1, lambda out, folder: out["verdict"] == "violation" and out["reproducible"] is False
        and out["randomness"]["mode"] == "unseeded"),
    (1, lambda out, folder: out["verdict"] == "violation" and out["epsilon_estimate"] is None
        and out["non_finite"]["epsilon_estimate"] == "inf" and "'classes': list['negative', 'positive']" in out["event"]),
    (1, lambda out, folder: out["verdict"] == "violation" and "raised ValueError" in out["event"]),
    (1, lambda out, folder: out["verdict"] == "violation" and out["epsilon_lower_bound"] > 3
        and "did not vary with the sample's seed" in out["findings"][0], "octave"),
    (1, lambda out, folder: out["verdict"] == "violation" and 1.0 < out["epsilon_lower_bound"] <= 9.728
        and out["neighbour_search"]["candidates_screened"] == 20 and out["neighbour_pairs"] == 1
        and out["neighbour_search"]["found"]["change"].endswith("replaced by the box corner farthest from it (1000)")),
    (1, lambda out, folder: out["verdict"] == "violation" and 1.0 < out["epsilon_lower_bound"] <= 5.0
        and out["neighbour_search"]["found"]["pattern"] not in ("one above", "one below")),
    (1, lambda out, folder: (folder / "noisy-count-audit" / "audit.html").exists()
        and json.loads((folder / "noisy-count-audit" / "audit.json").read_text())["verdict"] == "violation"),
]


CSV_FILES = ("incomes.csv",)


def _run_audit_examples(tmp_path, monkeypatch, capsys, needs: str | None) -> int:
    """Write the page's files, run its commands that need ``needs`` (None: plain Python), check each."""
    for language, marker in (("python", "#"), ("matlab", "%")):
        for code in blocks("audit-third-party-code.md", language):
            name = re.match(rf"{marker} file: (\S+)", code).group(1)
            (tmp_path / name).write_text(code)
    tables = blocks("audit-third-party-code.md", "csv")  # a CSV file has no comment line to name it: the page
    assert len(tables) == len(CSV_FILES)                # names it in the sentence before the block
    for name, table in zip(CSV_FILES, tables):
        assert f"`{name}`" in (DOCS / "audit-third-party-code.md").read_text()
        (tmp_path / name).write_text(table)
    monkeypatch.chdir(tmp_path)
    commands = blocks("audit-third-party-code.md", "bash")
    assert len(commands) == len(AUDIT_EXAMPLES)
    ran = 0
    for command, (status, check, *needed) in zip(commands, AUDIT_EXAMPLES):
        if (needed[0] if needed else None) != needs:
            continue
        args = shlex.split(command.replace("\\\n", " "))
        assert args[0] == "admmcheck" and main(args[1:]) == status, command
        assert check(_json(capsys.readouterr().out), tmp_path), command
        ran += 1
    return ran


@pytest.mark.filterwarnings("ignore::admmcheck.errors.UnseededRandomness")
def test_audit_third_party_code_examples_give_what_the_page_says(tmp_path, monkeypatch, capsys):
    assert _run_audit_examples(tmp_path, monkeypatch, capsys, None) == 9


@needs("octave")
def test_audit_third_party_code_matlab_example_gives_what_the_page_says(tmp_path, monkeypatch, capsys):
    assert _run_audit_examples(tmp_path, monkeypatch, capsys, "octave") == 1


def test_read_the_report_command_prints_the_gap(capsys):
    (command,) = blocks("read-the-report.md", "bash")
    assert main(shlex.split(command)[1:]) == 0
    assert abs(json.loads(capsys.readouterr().out)["objective_gap"]) <= 1e-6


@pytest.mark.parametrize("page", ["verify-a-new-algorithm.md", "audit-third-party-code.md", "read-the-report.md"])
def test_every_page_is_linked_from_the_readme(page):
    assert f"docs/{page}" in (DOCS.parent / "README.md").read_text()
