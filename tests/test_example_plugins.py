"""Issue 52, item 5: the outside example package ``examples/noisy-variants`` (a private consensus variant and a
private sharing variant, registered through the entry point ``admmcheck.plugins``) works with no code in admmcheck.

It is installed by pip into a fresh virtual environment, offline (``--no-index --no-build-isolation --no-deps``), with
the other example packages (``tests/example_packages.py``); admmcheck and its dependencies come from this environment
through a ``.pth`` file, so that what is tested is this checkout. Every command runs as a user runs it there,
``python -m admmcheck.cli``, in a process of its own, and each figure it prints is checked against a value computed
here by other means.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from example_packages import environment

ROOT = Path(__file__).resolve().parents[1]
NAMES = ("noisy-admm", "clipped-sharing")


def _guide_commands() -> list[list[str]]:
    """The commands of step 5 of docs/verify-a-new-algorithm.md, as the page writes them (tests/test_docs.py counts
    on the tests below to run every one)."""
    page = (ROOT / "docs" / "verify-a-new-algorithm.md").read_text()
    (block,) = re.findall(r"^```bash\n(.*?)^```", page, flags=re.S | re.M)
    return [shlex.split(line, comments=True)[1:] for line in block.splitlines() if line.strip()]


PLUGINS, RUN, BOUND, AUDIT_SHARING, AUDIT_CONSENSUS, VERIFY = _guide_commands()


@pytest.fixture(scope="module")
def python(examples_python) -> Path:
    """The interpreter of the fresh virtual environment into which pip installed the example packages (this one among
    them: ``examples_python`` of tests/conftest.py, shared with tests/test_example_families.py)."""
    return examples_python


def _environment() -> dict[str, str]:
    return environment()


def _admmcheck(python: Path, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-m", "admmcheck.cli", *arguments], capture_output=True, text=True, timeout=600,
                          env=_environment())


def _json(python: Path, *arguments: str, status: int = 0) -> dict:
    process = _admmcheck(python, *arguments, "--json")
    assert process.returncode == status, process.stderr
    return json.loads(process.stdout)


def test_admmcheck_plugins_lists_both_variants_with_the_example_package(python):
    listing = _json(python, *PLUGINS)
    found = {entry["name"]: entry for entry in listing["registered"] if entry["name"] in NAMES}
    assert {name: (entry["family"], entry["kind"], entry["package"], entry["version"], entry["entry_point"])
            for name, entry in found.items()} == {
        "noisy-admm": ("consensus", "mechanism", "admmcheck-noisy-variants", "0.1.0", "noisy-variants"),
        "clipped-sharing": ("sharing", "mechanism", "admmcheck-noisy-variants", "0.1.0", "noisy-variants")}
    assert listing["failed"] == []


def test_run_takes_both_variants(python):
    """Without noise the consensus variant is decentralized ADMM: the same iterates as ``run admm``; the sharing
    variant draws σ = 2√(2 ln(1.25/δ))/ε, the Gaussian mechanism's for sensitivity 2."""
    assert RUN[:4] == ["run", "noisy-admm", "--alpha", "inf"]
    noiseless = _json(python, *RUN)
    admm = _json(python, "run", "admm", *RUN[4:])
    assert noiseless["final_mean"] == pytest.approx(admm["final_mean"], abs=1e-12)
    sharing = _json(python, "run", "clipped-sharing", "--step-epsilon", "0.5", "--step-delta", "1e-5",
                    "--iterations", "5")
    assert sharing["sigma"] == pytest.approx([2 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5] * sharing["parties"])


def test_bound_takes_both_variants(python):
    """The claims, recomputed here from their formulas: advanced and basic composition of the Gaussian mechanism;
    β = max_i Σ_t α Δ_i with Δ_i = 2C / (B_i (ρ/N + 2ηV_i)) on the setting the command reports."""
    assert BOUND == ["bound", "clipped-sharing", "--features", "3,3", "--step-epsilon", "0.5", "--iterations", "4"]
    sharing = _json(python, *BOUND)
    T, epsilon, delta, delta_prime = 4, 0.5, 1e-5, 1e-5
    assert sharing["epsilon_total"] == pytest.approx(math.sqrt(2 * T * math.log(1 / delta_prime)) * epsilon
                                                     + T * epsilon * math.expm1(epsilon), rel=1e-12)
    assert sharing["basic_composition"] == pytest.approx({"epsilon": T * epsilon, "delta": T * delta})
    consensus = _json(python, "bound", "noisy-admm", "--alpha", "2", "--eta", "0.5", "--iterations", "3")
    setting = consensus["setting"]
    nodes = len(setting["sizes"])
    beta = max(3 * 2 * 2 * setting["C"] / (size * (setting["rho"] / nodes + 2 * 0.5 * degree))
               for size, degree in zip(setting["sizes"], setting["degrees"]))
    assert consensus["beta"] == pytest.approx(beta, rel=1e-12)


def test_audit_takes_both_variants_and_finds_no_violation(python):
    """``audit clipped-sharing`` and ``audit noisy-admm --white-box`` through the command, as the guide writes them:
    no violation, the sharing claim the smaller of advanced and basic composition, the largest exact loss within β."""
    sharing = _json(python, *AUDIT_SHARING, "--workers", "2", "--quiet")
    assert sharing["verdict"] == "no-violation-found" and sharing["epsilon_lower_bound"] <= sharing["claimed_epsilon"]
    assert sharing["claimed_epsilon"] == pytest.approx(min(sharing["theorem"]["epsilon_total"], 2 * 0.5))
    consensus = _json(python, *AUDIT_CONSENSUS, "--workers", "2", "--quiet")
    assert consensus["verdict"] == "no-violation-found" and consensus["white_box"]["verdict"] == "within-claim"
    assert consensus["white_box"]["max_loss"] <= consensus["claimed_epsilon"] == consensus["theorem"]["beta"]


def test_verify_only_checks_the_variants(python, tmp_path):
    """The consensus variant's convergence conditions (it registers M-ADMM's, conditions=), its claim, black-box audit
    and white box at its audit setting, and the sharing variant's claim and audit at the 4 rows a party it declares,
    all passing: the only verdicts of the report."""
    assert VERIFY == ["verify", "--profile", "smoke", "--only", ",".join(NAMES)]
    report = _json(python, *VERIFY, "--out", str(tmp_path))
    assert [(verdict["algorithm"], verdict["verdict"]) for verdict in report["verdicts"]] == [
        ("noisy-admm", "pass")] * 4 + [("clipped-sharing", "pass")] * 2
    checks = [v["check"] for v in report["verdicts"]]
    assert "exact convergence conditions (certified)" in checks
    assert any(check.startswith("black-box audit at --rows 4") for check in checks)
    claim = next(v for v in report["verdicts"] if v["algorithm"] == "noisy-admm" and v["check"].startswith("claim"))
    white = next(verdict for verdict in report["verdicts"] if verdict["check"].startswith("white-box"))
    assert 0 < white["value"] <= claim["value"]  # the largest sampled loss within beta
    assert json.loads((tmp_path / "report.json").read_text())["verdicts"] == report["verdicts"]


def test_the_examples_own_tests_use_the_pytest_plugin_and_catch_its_broken_variant(python, tmp_path):
    """Issue 53, item 4: the package's tests/ run with the plugin that admmcheck installs: convergence, conditions and
    both claims pass; the deliberately broken variant is a strict xfail; its replay command, run through the
    installed command, gives the same verdict."""
    tests = python.parents[2] / "noisy-variants" / "tests"
    process = subprocess.run([python, "-m", "pytest", str(tests), "-p", "no:cacheprovider", "-o", "addopts=",
                              "--rootdir", str(tests.parent), "--admmcheck-profile", "smoke",
                              "--admmcheck-json", str(tmp_path / "results.json")],
                             capture_output=True, text=True, timeout=600, env=_environment(), cwd=tmp_path)
    assert process.returncode == 0 and "3 passed, 1 xfailed" in process.stdout, process.stdout + process.stderr
    recorded = json.loads((tmp_path / "results.json").read_text())["results"]
    results = {r["mechanism"]: r for r in recorded if r["kind"] == "private"}
    assert sorted(r["kind"] for r in recorded if r["kind"] != "private") == ["conditions", "converges"]
    assert {name: r["verdict"] for name, r in results.items()} == {
        "noisy-admm": "no-violation-found", "clipped-sharing": "no-violation-found", "quiet-admm": "violation"}
    assert all(r["budget_share"] == pytest.approx(0.05 / 3) for r in results.values())
    replay = subprocess.run([python, "-m", "admmcheck.cli", *results["quiet-admm"]["command"].split()[1:],
                             "--workers", "2", "--quiet"], capture_output=True, text=True, timeout=600,
                            env=_environment())
    assert replay.returncode == 1 and json.loads(replay.stdout)["verdict"] == "violation", replay.stderr


def test_admmcheck_itself_does_not_mention_the_example():
    mentions = [str(path) for path in (ROOT / "src" / "admmcheck").rglob("*") if path.is_file()
                and path.suffix in (".py", ".m", ".html", ".txt", ".toml", ".json")
                and any(word in path.read_text(errors="replace") for word in ("noisy_variants", "noisy-variants",
                                                                             *NAMES))]
    assert mentions == []
