"""The worked examples of docs/ run as written (issue 20, item 4)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from admmcheck.cli import main

DOCS = Path(__file__).resolve().parents[1] / "docs"


def blocks(page: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", (DOCS / page).read_text(), flags=re.S)


def test_verify_a_new_algorithm_examples_run():
    namespace: dict = {}
    for code in blocks("verify-a-new-algorithm.md", "python"):
        exec(compile(code, "verify-a-new-algorithm.md", "exec"), namespace)  # noqa: S102 - our own docs
    assert namespace["run"].algorithm == "my-admm"


def test_audit_third_party_code_example_finds_the_violation(tmp_path, monkeypatch, capsys):
    (code,) = blocks("audit-third-party-code.md", "python")
    (tmp_path / "noisy_count.py").write_text(code)
    (command,) = blocks("audit-third-party-code.md", "bash")
    monkeypatch.chdir(tmp_path)
    args = shlex.split(command.replace("\\\n", " "))
    assert args[0] == "admmcheck" and main(args[1:]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "violation" and 1.7 <= out["epsilon_lower_bound"] <= 2.0


def test_read_the_report_command_prints_the_gap(capsys):
    (command,) = blocks("read-the-report.md", "bash")
    assert main(shlex.split(command)[1:]) == 0
    assert abs(json.loads(capsys.readouterr().out)["objective_gap"]) <= 1e-6


@pytest.mark.parametrize("page", ["verify-a-new-algorithm.md", "audit-third-party-code.md", "read-the-report.md"])
def test_every_page_is_linked_from_the_readme(page):
    assert f"docs/{page}" in (DOCS.parent / "README.md").read_text()
