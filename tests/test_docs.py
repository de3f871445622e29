"""Every example of the documentation runs as written (issue 20, item 4; issue 53, item 5): the pages of the site
built from docs/ (Sphinx, the toctree of docs/index.md) and the README's examples.

A fenced block in one of the languages of ``RUNNABLE`` is an example: a command, a program, or a file an example
writes (``# file: NAME`` on its first line, a CSV named in the sentence before it); every other block (``text``) is a
synopsis or an output. Each page with examples names, in ``RUN_BY``, the tests that run them; each of those tests
asserts that it ran every block of its page.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import shlex
from pathlib import Path

import numpy as np
import pytest
from system import needs

from admmcheck.cli import main

pytest_plugins = ["pytester"]

DOCS = Path(__file__).resolve().parents[1] / "docs"
ROOT = DOCS.parent
RUNNABLE = ("bash", "python", "py", "toml", "csv", "matlab")


def blocks(page: str, language: str) -> list[str]:
    return re.findall(rf"^ *```{language}\n(.*?)^ *```", (DOCS / page).read_text(), flags=re.S | re.M)


def languages(text: str) -> set[str]:
    return set(re.findall(r"^ *```(\S+)$", text, flags=re.M))


def site_pages() -> list[str]:
    """The pages of the site: docs/index.md and every page its toctrees list."""
    index = (DOCS / "index.md").read_text()
    trees = re.findall(r"```\{toctree\}\n(.*?)```", index, flags=re.S)
    return ["index.md"] + [f"{line.strip()}.md" for tree in trees for line in tree.splitlines()
                           if line.strip() and not line.startswith(":")]


def commands(page: str) -> list[str]:
    """The commands of a page's ``bash`` blocks, one per line (a backslash continues a line)."""
    return [line.strip() for block in blocks(page, "bash") for line in block.replace("\\\n", " ").splitlines()
            if line.strip()]


# Which tests run each page's examples (every test named here asserts that it ran all of its page's blocks).
RUN_BY = {
    "verify-a-new-algorithm.md": ("test_verify_a_new_algorithm_examples_run",
                                  "tests/test_example_plugins.py runs its bash block in an installed environment"),
    "plugin-consensus.md": ("tests/test_example_families.py runs its bash block in an installed environment and "
                            "finds its py and toml blocks in examples/gaussian-admm",),
    "plugin-sharing.md": ("tests/test_example_families.py runs its bash block in an installed environment and "
                          "finds its py and toml blocks in examples/noisy-variants",),
    "plugin-online.md": ("tests/test_example_families.py runs its bash block in an installed environment and "
                         "finds its py and toml blocks in examples/online-variant",),
    "audit-third-party-code.md": ("test_audit_third_party_code_examples_give_what_the_page_says",
                                  "test_audit_third_party_code_matlab_example_gives_what_the_page_says"),
    "read-the-report.md": ("test_read_the_report_command_prints_the_gap",),
    "audit-one-run.md": ("test_audit_one_run_examples",),
    "strategies.md": ("test_the_strategies_examples_hold",),
    "algorithms.md": ("test_algorithms_examples",),
    "conditions.md": ("test_conditions_examples",),
    "black-box-audit.md": ("test_black_box_audit_examples",),
    "white-box.md": ("test_white_box_examples",),
    "sharing.md": ("test_sharing_examples",),
    "dpsda.md": ("test_dpsda_examples",),
    "library.md": ("test_library_examples",),
}


def test_the_site_is_every_page_of_docs():
    assert sorted(site_pages()) == sorted(path.name for path in DOCS.glob("*.md"))


@pytest.mark.parametrize("page", site_pages())
def test_every_example_on_the_site_is_run_by_a_test(page):
    examples = languages((DOCS / page).read_text()) & set(RUNNABLE)
    assert not examples or page in RUN_BY, f"{page} has {sorted(examples)} examples: name the test that runs them"
    named = [test for test in RUN_BY.get(page, ()) if test.startswith("test_")]
    assert all(test in globals() for test in named), named


@pytest.mark.parametrize("page", [page for page in site_pages() if page not in ("index.md",)])
def test_every_page_is_linked_from_the_readme(page):
    assert f"(docs/{page})" in (ROOT / "README.md").read_text()


def run_commands(page: str, checks: list, capsys) -> None:
    """Run the page's commands in the current folder; each must exit with its status and pass its check, which gets
    the JSON the command printed, or its text."""
    found = commands(page)
    assert len(found) == len(checks), found
    for command, (status, check) in zip(found, checks):
        args = shlex.split(command, comments=True)
        assert args[0] == "admmcheck"
        assert main(args[1:]) == status, command
        out = capsys.readouterr().out
        assert check(_json(out) or out), command


def run_python(page: str, folder: Path) -> dict:
    """Write the page's ``# file: NAME`` blocks into ``folder``; run the others, in order, in one namespace."""
    namespace: dict = {"__name__": "docs_example"}
    for code in blocks(page, "python"):
        named = re.match(r"# file: (\S+)", code)
        if named:
            (folder / named.group(1)).write_text(code)
        else:
            exec(compile(code, page, "exec"), namespace)  # noqa: S102 - our own docs
    return namespace


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
        assert namespace["black"].verdict == "no-violation-found" and namespace["white"].verdict == "within-claim"
        assert namespace["audited"].summary["theorem"]["beta"] == namespace["audited"].claimed.epsilon > 0
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


@pytest.mark.filterwarnings("ignore::admmcheck.foundations.errors.UnseededRandomness")
def test_audit_third_party_code_examples_give_what_the_page_says(tmp_path, monkeypatch, capsys):
    assert _run_audit_examples(tmp_path, monkeypatch, capsys, None) == 9


@needs("octave")
def test_audit_third_party_code_matlab_example_gives_what_the_page_says(tmp_path, monkeypatch, capsys):
    assert _run_audit_examples(tmp_path, monkeypatch, capsys, "octave") == 1


def test_read_the_report_command_prints_the_gap(capsys):
    (command,) = blocks("read-the-report.md", "bash")
    assert main(shlex.split(command)[1:]) == 0
    assert abs(json.loads(capsys.readouterr().out)["objective_gap"]) <= 1e-6




def test_the_strategies_examples_hold():
    """Each block of the strategies page defines one Hypothesis test; each runs (under the suite's profile)."""
    codes = blocks("strategies.md", "python")
    ran = 0
    for code in codes:
        namespace: dict = {}
        exec(compile(code, "strategies.md", "exec"), namespace)  # noqa: S102 - our own docs
        tests = [value for name, value in namespace.items() if name.startswith("test_")]
        assert len(tests) == 1, code
        tests[0]()
        ran += 1
    assert ran == len(codes) == 10


def _gap_at_most(tolerance: float):
    return lambda out: abs(out["objective_gap"]) <= tolerance


def test_algorithms_examples(tmp_path, monkeypatch, capsys):
    """M-ADMM and R-ADMM reach the CVXPY optimum; the exported problem holds what the page says, and the optimum
    recomputed from the file alone (one CVXPY solve of eq. (1), written here) is the run's; β of Theorem 4.1 and IV.1
    are finite with every precondition true."""
    import cvxpy as cp

    monkeypatch.chdir(tmp_path)

    def exported(out):
        data = np.load(tmp_path / "radmm-problem.npz")
        assert data["adjacency"].shape == (8, 8) and out["graph"].startswith("random")
        f = cp.Variable(data["X_0"].shape[1])  # eq. (1): sum_i C/B_i sum_j log(1 + exp(-y_ij f.x_ij)) + rho/2 |f|^2
        objective = sum(float(data["C"]) / len(data[f"y_{i}"])
                        * cp.sum(cp.logistic(-cp.multiply(data[f"y_{i}"], data[f"X_{i}"] @ f))) for i in range(8)) \
            + float(data["rho"]) / 2 * cp.sum_squares(f)
        value = cp.Problem(cp.Minimize(objective)).solve()
        return math.isclose(value, out["optimum"]["objective"], rel_tol=1e-6)

    def bound(out):
        return out["beta"] is not None and 0 < out["beta"] < math.inf and all(out["preconditions"].values())

    run_commands("algorithms.md", [(0, _gap_at_most(1e-6)), (0, exported), (0, bound), (0, bound)], capsys)


def test_conditions_examples(capsys):
    """R-ADMM's minimal γ is certified above the 1/5 asked for, so (27) fails there; M-ADMM with §5.1's growing
    penalties fails App. B's claims; with a constant penalty on a path every condition holds."""
    def radmm(out):
        interval = out["gamma_interval"]
        conditions = {condition["name"]: condition["holds"] for condition in out["conditions"]}
        return (out["complete"] and 1 / 5 < interval["lo_float"] <= interval["hi_float"]
                and interval["width"] <= 1e-6 and conditions["(27)"] is False)

    run_commands("conditions.md", [
        (0, radmm),
        (1, lambda text: re.search(r"FAILS +App\. B \(38\)", text) is not None),
        (0, lambda text: "FAILS" not in text and text.count("holds") >= 10),
    ], capsys)


def test_black_box_audit_examples(tmp_path, monkeypatch, capsys):
    """The page's mechanism, written as the page writes it: Laplace of scale 1 on a pair at distance 1 is exactly
    1-DP, so ε = 1 holds and ε = 0.5 is refuted; Gaussian noise of std 1 is exactly 1-GDP, so μ = 0.5 is refuted."""
    monkeypatch.chdir(tmp_path)
    run_python("black-box-audit.md", tmp_path)
    run_commands("black-box-audit.md", [
        (0, lambda out: out["verdict"] == "no-violation-found" and out["epsilon_lower_bound"] <= 1),
        (1, lambda text: text.startswith("violation: epsilon >= ") and float(text.split()[3]) <= 1),
        # Gaussian noise of std 1 is exactly 1-GDP: the claim mu = 0.5 refuted, the bound in mu and never above 1
        (1, lambda text: text.startswith("violation: mu >= ") and 0.5 < float(text.split()[3]) <= 1
         and "(claimed mu = 0.5 (0.5-GDP))" in text.splitlines()[0]),
    ], capsys)


def test_white_box_examples(tmp_path, monkeypatch, capsys):
    """PP's exact loss stays within β, its searched worst case too, and the black-box bound below the largest loss;
    the KKT attack finds the hidden record when the penalties are public and not when they are private (the
    attack's test: the final mean |cos| at least 0.9 public, and 0.3 below that private)."""
    monkeypatch.chdir(tmp_path)

    def white(out):
        box = out["white_box"]
        return (box["verdict"] == "within-claim" and box["max_loss"] <= box["claimed_beta"]
                and box["worst_case"]["value"] <= box["claimed_beta"] and out["black_box_within_white_box"]
                and (tmp_path / "loss.png").stat().st_size > 0)

    attacks = {}

    def attack(setting: str):
        def check(out):
            attacks[setting] = out
            return out["setting"] == setting and out["trials"] == 20 and len(out["cosine"]) == 100
        return check

    run_commands("white-box.md", [(0, white), (0, attack("public eta")), (0, attack("private eta"))], capsys)
    # M-ADMM App. E: the average of (E) turns toward the hidden record only when the penalties are public
    public, private = attacks["public eta"]["final_cosine"], attacks["private eta"]["final_cosine"]
    assert public >= 0.9 and private <= public - 0.3, (public, private)


def test_sharing_examples(capsys):
    """ADMM sharing reaches the CVXPY optimum and DP sharing does not come near it; Lemma 1's sensitivity
    3/(d_m ρ)[λc1 + (1 + Mρ)b1], computed here; the conditions refuted at ρ = 0.001; DP sharing as published
    releases values off the other dataset's support (ε = ∞)."""
    def sensitivity(out):
        expected = [3 / (d * 1.0) * (0.01 * 1 + (1 + 2 * 1.0) * 1) for d in (66, 57)]
        return out["sensitivity"] == pytest.approx(expected, rel=1e-12)

    def audit(out):
        return (out["verdict"] == "violation" and out["non_finite"]["epsilon_estimate"] == "inf"
                and out["white_box"]["verdict"] == "violation")

    run_commands("sharing.md", [
        (0, _gap_at_most(1e-6)),
        (0, lambda out: out["objective_gap"] > 1),
        (0, sensitivity),
        (1, lambda text: "FAILS" in text),
        (1, audit),
    ], capsys)


def test_dpsda_examples(capsys):
    """DPSDA-C's regret stays under Theorem 3's bound; Theorem 4's total is Tε = 200; the audit of the round-1
    neighbours finds nothing above the claim Tε = 2 of 2 rounds."""
    run_commands("dpsda.md", [
        (0, lambda out: 0 <= out["regret"] <= out["regret_bound"]),
        (0, lambda out: out["epsilon_total"] == pytest.approx(200 * 1.0)),
        (0, lambda out: out["verdict"] == "no-violation-found" and out["claimed_epsilon"] == pytest.approx(2.0)
            and out["epsilon_lower_bound"] <= 2.0),
    ], capsys)


def test_library_examples(tmp_path):
    """The Python blocks assert what the page says (shapes, the gap to CVXPY, every block run); the pyproject
    excerpt is TOML naming the entry-point group the registry reads."""
    from admmcheck.mechanisms.plugins import GROUP

    namespace = run_python("library.md", tmp_path)
    assert namespace["trials"] == 2_000
    (excerpt,) = blocks("library.md", "toml")
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11's tomllib reads the excerpt")
    assert list(tomllib.loads(excerpt)["project"]["entry-points"]) == [GROUP]


def test_audit_one_run_examples(tmp_path, monkeypatch, capsys):
    """The noise of the claim passes one run with 1,000 canaries, its bound within the claim; an eighth of it is
    caught from one run; the ceiling the page states is the perfect guesser's bound."""
    from admmcheck.audit.one_run import epsilon_lower_bound

    monkeypatch.chdir(tmp_path)
    run_python("audit-one-run.md", tmp_path)
    assert (tmp_path / "train.py").exists() and (tmp_path / "records.npz").exists()
    run_commands("audit-one-run.md", [
        (0, lambda out: out["verdict"] == "no-violation-found" and out["epsilon_lower_bound"] <= 1),
        (1, lambda text: text.startswith("violation: epsilon >= ") and float(text.split()[3]) > 1),
        (1, lambda text: text.startswith("violation: mu >= ") and 0.2064 < float(text.split()[3]) <= 8 * 0.2064
            and "claimed mu = 0.2064, a Gaussian-DP trade-off curve" in text),
        (1, lambda text: text.startswith("violation: epsilon >= ") and "dp-sharing's canaries at spread" in text
            and "written: one-run/audit.html" in text),
        (0, lambda out: out["verdict"] == "no-violation-found" and out["score"].startswith("exact privacy loss")
            and out["claimed_epsilon"] == pytest.approx(5 * (1.4 * 0.25 + 5) / (2 * 110))),  # (26), B_i = 10 + 100
    ], capsys)
    assert {path.name for path in (tmp_path / "one-run").iterdir()} == {"audit.html", "audit.json", "scores.png"}
    page = (DOCS / "audit-one-run.md").read_text()
    for m, shown in ((100, "3.5"), (1000, "5.8"), (10_000, "7.8")):
        assert f"{epsilon_lower_bound(m, m, 0.95, 1e-5, canaries=m):.1f}" == shown and shown in page


README = ROOT / "README.md"


def test_the_readme_set_up_commands_are_those_ci_runs():
    """The two set-up commands (and the documentation's build) are what .ci/run runs, word for word."""
    readme = README.read_text()
    setup = re.findall(r"```bash\n(pip install .*?)\n```", readme)
    assert setup == ['pip install . && admmcheck verify', 'pip install ".[test]" && pytest tests properties',
                     'pip install ".[docs]" && sphinx-build -W --keep-going -b html docs docs/_build/html']
    ci = (ROOT / ".ci" / "run").read_text()
    assert all(command in ci.splitlines() for command in setup[1:])


def test_the_readme_examples_give_what_it_shows(tmp_path, monkeypatch, capsys, pytester):
    """verify on ADMM sharing (its Assumption 1.2 refuted at the paper's rho, every verdict with its command); the
    sharing run at the optimum; the audit's first four lines as the README prints them; the pytest example failing with the
    replay command."""
    readme = README.read_text()
    monkeypatch.chdir(tmp_path)
    files = {}
    for code in re.findall(r"```python\n(.*?)```", readme, flags=re.S):
        name = re.match(r"# file: (\S+)", code).group(1)
        files[name] = code
        (tmp_path / name).write_text(code)
    assert sorted(files) == ["mech.py", "test_release.py"]
    examples = [line for block in re.findall(r"```bash\n(.*?)```", readme, flags=re.S)
                for line in block.splitlines() if line and not line.startswith("pip install")]
    assert len(examples) == 4
    verify, run, audit, test = (shlex.split(line) for line in examples)

    assert main(verify[1:]) == 1
    report = json.loads((tmp_path / "reports" / "smoke" / "report.json").read_text())
    failed = [verdict for verdict in report["verdicts"] if verdict["verdict"] == "fail"]
    assert [verdict["check"] for verdict in failed] == ["Assumption 1.2 / Lemma 4 at the rho used (1/1000)"]
    assert all(verdict["command"].startswith("admmcheck ") for verdict in report["verdicts"])
    assert "warning" not in capsys.readouterr().err  # no empty figures of mechanisms not checked (--only)
    assert main(run[1:]) == 0 and abs(json.loads(capsys.readouterr().out)["objective_gap"]) <= 1e-6
    assert main(audit[1:]) == 1
    shown = re.search(r"```text\n(violation:.*?)```", readme, flags=re.S).group(1).splitlines()
    assert capsys.readouterr().out.splitlines()[:4] == shown[:4]

    assert test[0] == "pytest"
    for name, code in files.items():
        (pytester.path / name).write_text(code)
    result = pytester.runpytest_subprocess(*test[1:], "-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(failed=1)
    assert "PrivacyViolation" in result.stdout.str() and "replay (seed" in result.stdout.str()
