"""Issue 60, item 5: a plugin guide per family, each walking through a worked outside package of ``examples/`` with a
claim of another notion than pure ε and a parameter of its own, tested as a user installs and runs it.

* ``docs/plugin-consensus.md``: ``examples/gaussian-admm`` (``gaussian-admm``: clipped updates, Gaussian noise, an
  (ε, 1e-5) claim, ``--clip`` and ``--sigma``; ``gaussian-admm-quiet``, one hundredth of its noise);
* ``docs/plugin-sharing.md``: ``clipped-sharing`` of ``examples/noisy-variants`` (an (ε, δ) claim, ``--clip``);
* ``docs/plugin-online.md``: ``examples/online-variant`` (``gaussian-dual-averaging``: clipped gradients, Gaussian
  messages, a ρ-zCDP claim, no neighbours of its own; ``gaussian-dual-averaging-quiet``, one hundredth of its noise).

The packages are installed by pip into one fresh virtual environment (``examples_python``, tests/conftest.py), and
every command of each guide's ``bash`` block runs there as a user runs it, ``python -m admmcheck.cli``, with
``--json`` (and, for audits, one worker and seed 0) added; tests/test_docs.py counts on these tests to run every one.
The commands run three at a time (an audit of one worker leaves a core idle) in the module's fixture; each test checks
what it needs of their outputs against values computed here from the flags the guide typed: the (ε, δ) of μ-GDP from
its privacy profile, ρ of the Gaussian mechanism in closed form, the Gaussian mechanism's σ and its compositions.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from example_packages import EXAMPLES, admmcheck, as_json, environment, once
from scipy import optimize, stats

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: each guide: the example package it walks through, its family, and the names it checks (the variant first, then
#: the broken copy the package registers, if any)
GUIDES = {
    "plugin-consensus.md": ("gaussian-admm", "consensus", ("gaussian-admm", "gaussian-admm-quiet")),
    "plugin-sharing.md": ("noisy-variants", "sharing", ("clipped-sharing",)),
    "plugin-online.md": ("online-variant", "online", ("gaussian-dual-averaging", "gaussian-dual-averaging-quiet")),
}
#: what ``admmcheck plugins`` must say of each package: (distribution, version, entry point), from its pyproject.toml
PACKAGES = {"gaussian-admm": ("admmcheck-gaussian-admm", "0.1.0", "gaussian-admm"),
            "noisy-variants": ("admmcheck-noisy-variants", "0.1.0", "noisy-variants"),
            "online-variant": ("admmcheck-online-variant", "0.1.0", "online-variant")}
#: the papers' labels, which no output of a plugin may carry unless the plugin gives them
PAPER_WORDS = ("Theorem", "Corollary", "Lemma 1", "DPSDA")
DELTA = 1e-5  # the consensus variant's claimed delta, as its guide states it


def blocks(page: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", (DOCS / page).read_text(), flags=re.S | re.M)


def commands(page: str) -> list[tuple[str, ...]]:
    """The commands of the page's one ``bash`` block, without the leading ``admmcheck``."""
    (block,) = blocks(page, "bash")
    found = [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]
    assert all(words[0] == "admmcheck" for words in found), found
    return [tuple(words[1:]) for words in found]


def command(page: str, *start: str, having: str | None = None, without: str | None = None) -> tuple[str, ...]:
    """The one command of ``page`` that begins with ``start`` (and has the flag ``having``, lacks ``without``)."""
    (found,) = [c for c in commands(page) if c[:len(start)] == start and (having is None or having in c)
                and (without is None or without not in c)]
    return found


def flag(arguments: tuple[str, ...], name: str, read=float):
    """The value the command gives ``name``."""
    return read(arguments[arguments.index(name) + 1])


def expected_status(arguments: tuple[str, ...]) -> int:
    """1 (a violation) for a black-box audit of a deliberately broken copy and for verify of one, else 0."""
    broken = any(word.endswith("-quiet") for word in arguments[1:] for word in word.split(","))
    if arguments[0] == "audit" and "--canaries" not in arguments:
        return int(broken)
    return int(arguments[0] == "verify" and broken)


def added(arguments: tuple[str, ...], out: Path) -> list[str]:
    """What the test adds to a guide's command: JSON, and for an audit one worker and an explicit seed."""
    if "--help" in arguments:
        return []
    if arguments[0] == "audit":
        return ["--json", "--quiet", "--workers", "1", "--seed", "0"]
    if arguments[0] == "verify":
        return ["--json", "--seed", "0", "--out", str(out / "-".join(arguments[-1].split(",")))]
    return ["--json"]


@dataclass(frozen=True)
class Ran:
    """What the guides' commands gave (``commands``: each command, as the guide writes it, to its process), and the
    two new packages' own tests (``own``, and ``own_results``: the JSON of their statistical assertions)."""

    commands: dict[tuple[str, ...], subprocess.CompletedProcess]
    own: subprocess.CompletedProcess
    own_results: dict

    def __getitem__(self, arguments: tuple[str, ...]) -> subprocess.CompletedProcess:
        return self.commands[arguments]


@pytest.fixture(scope="module")
def ran(examples_python, tmp_path_factory) -> Ran:
    """Every distinct command of the three guides run once, and the two new packages' own tests, three at a time,
    the longest first; once per test run, whichever pytest-xdist worker gets these tests (``once``)."""
    stored = once(tmp_path_factory, "example-families", lambda: _run_all(examples_python,
                                                                         tmp_path_factory.mktemp("families")))
    done = {tuple(arguments): subprocess.CompletedProcess(arguments, status, out, err)
            for arguments, status, out, err in stored["commands"]}
    return Ran(done, subprocess.CompletedProcess(*stored["own"]), stored["own_results"])


def _run_all(python: Path, out: Path) -> dict:
    distinct = list(dict.fromkeys(c for page in GUIDES for c in commands(page)))
    order = sorted(distinct, key=lambda c: {"verify": 0, "audit": 1}.get(c[0], 2))
    with ThreadPoolExecutor(3) as pool:
        own = pool.submit(_own_tests, python, out)
        futures = {c: pool.submit(admmcheck, python, *c, *added(c, out)) for c in order}
        done = [(list(c), f.result().returncode, f.result().stdout, f.result().stderr) for c, f in futures.items()]
        tests = own.result()
    results = out / "own.json"
    return {"commands": done, "own": [tests.args, tests.returncode, tests.stdout, tests.stderr],
            "own_results": json.loads(results.read_text()) if results.is_file() else {}}


def _own_tests(python: Path, out: Path) -> subprocess.CompletedProcess:
    """pytest on the installed copies of the two new packages' tests/, with admmcheck's plugin (seed 0)."""
    folders = [str(python.parents[2] / package / "tests") for package in ("gaussian-admm", "online-variant")]
    return subprocess.run([str(python), "-m", "pytest", *folders, "-p", "no:cacheprovider", "-o", "addopts=", "-q",
                           "--rootdir", str(python.parents[2]), "--admmcheck-profile", "smoke", "--admmcheck-seed", "0",
                           "--admmcheck-json", str(out / "own.json")], capture_output=True, text=True, timeout=600,
                          env=environment(), cwd=out)


def gdp_epsilon(mu: float, delta: float) -> float:
    """ε of μ-GDP at ``delta``: the root of δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong, Roth & Su 2022,
    Cor. 2.13), the exact (ε, δ) of T composed Gaussian mechanisms of sensitivity Δ and noise σ, μ = √T Δ/σ."""
    return optimize.brentq(lambda e: stats.norm.cdf(-e / mu + mu / 2) - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2)
                           - delta, 0.0, 200.0, xtol=1e-13)


def consensus_epsilon(arguments: tuple[str, ...]) -> float:
    """The (ε, 1e-5) of ``gaussian-admm`` for the clip, σ and T the command gives: Δ = 2c per iteration."""
    clip, sigma, iterations = flag(arguments, "--clip"), flag(arguments, "--sigma"), flag(arguments, "--iterations")
    return gdp_epsilon(2 * clip * math.sqrt(iterations) / sigma, DELTA)


def online_rho(clip: float, sigma: float, nodes: int, iterations: int) -> float:
    """ρ of ``gaussian-dual-averaging``: (T − 1) rounds of the Gaussian mechanism of sensitivity Δ = 2c n^1.5, each
    Δ²/(2σ²)-zCDP (Bun & Steinke 2016, Prop. 1.6), composed by adding (Lemma 2.3 there)."""
    return (iterations - 1) * (2 * clip * nodes ** 1.5) ** 2 / (2 * sigma ** 2)


def gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """σ of the Gaussian mechanism for (ε, δ) (Dwork & Roth 2014, Thm A.1)."""
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def test_every_command_of_the_guides_ran_and_ended_with_a_verdict(ran):
    """Each guide's bash block, every command: exit 0, or 1 where it audits (or verifies) a deliberately broken copy;
    never 2 or 3."""
    for page in GUIDES:
        assert commands(page), page
        for arguments in commands(page):
            process = ran[arguments]
            assert process.returncode == expected_status(arguments), (arguments, process.stderr[-3000:])


def test_plugins_lists_each_package_with_its_family(ran):
    (plugins,) = {command(page, "plugins") for page in GUIDES}
    listing = as_json(ran[plugins])
    found = {entry["name"]: entry for entry in listing["registered"]}
    for page, (package, family, names) in GUIDES.items():
        for name in names:
            entry = found[name]
            assert (entry["family"], entry["kind"], entry["package"], entry["version"], entry["entry_point"]) == (
                family, "mechanism", *PACKAGES[package]), name
            shown = [line.split()[:5] for line in blocks(page, "text")[0].splitlines()]  # what the guide shows
            assert [name, family, "mechanism", entry["package"], entry["version"]] in shown, (page, name)
    assert listing["failed"] == []


@pytest.mark.parametrize("page", ["plugin-consensus.md", "plugin-online.md"])
def test_run_help_lists_the_variants_own_flags(ran, page):
    text = ran[command(page, "run", GUIDES[page][2][0], having="--help")].stdout
    assert "--clip CLIP" in text and "--sigma SIGMA" in text


@pytest.mark.parametrize("page", ["plugin-consensus.md", "plugin-online.md"])
def test_run_help_carries_no_paper_label_the_plugin_does_not_give(ran, page):
    """The family's flags are every plugin's: their help must not name the papers' theorems."""
    text = ran[command(page, "run", GUIDES[page][2][0], having="--help")].stdout
    assert [word for word in PAPER_WORDS if word in text] == []


def test_run_takes_the_variants_with_their_own_flags(ran):
    typed = command("plugin-consensus.md", "run", "gaussian-admm", without="--help")
    consensus = as_json(ran[typed])
    assert consensus["algorithm"] == "gaussian-admm" and consensus["iterations"] == flag(typed, "--iterations", int)
    assert consensus["parameters"]["clip"] == flag(typed, "--clip")
    assert consensus["parameters"]["sigma"] == flag(typed, "--sigma")
    assert math.isfinite(consensus["objective_gap"])

    typed = command("plugin-online.md", "run", "gaussian-dual-averaging", without="--help")
    online = as_json(ran[typed])
    assert online["claim"]["notion"] == "zcdp" and online["iterations"] == flag(typed, "--iterations", int)
    assert online["claim"]["rho"] == pytest.approx(online_rho(flag(typed, "--clip"), online["sigma"], online["nodes"],
                                                              online["iterations"]), rel=1e-12)
    assert math.isfinite(online["regret"]) and online["regret_bound"] is None  # it states no regret bound

    typed = command("plugin-sharing.md", "run", "clipped-sharing", without="--help")
    sharing = as_json(ran[typed])
    sigma = gaussian_sigma(2 * flag(typed, "--clip"), flag(typed, "--step-epsilon"), 1e-5)
    assert sharing["sigma"] == pytest.approx([sigma] * sharing["parties"], rel=1e-12)


def test_bound_states_each_claim_in_its_own_notion(ran):
    """The consensus claim is (ε, 1e-5) with ε that of μ-GDP, μ = 2c√T/σ; the online claim ρ = (T − 1)(2c n^1.5)²/(2σ²);
    the sharing claim advanced and basic composition of the Gaussian mechanism of sensitivity 2c. The guides' text
    blocks show what the commands print."""
    typed = command("plugin-consensus.md", "bound", "gaussian-admm")
    claim = as_json(ran[typed])["claim"]
    assert (claim["notion"], claim["delta"]) == ("approximate-dp", DELTA)
    assert claim["epsilon"] == pytest.approx(consensus_epsilon(typed), rel=1e-6)
    assert f"gaussian-admm: {claim['describe']} ({claim['source']})" in blocks("plugin-consensus.md", "text")[1]

    typed = command("plugin-online.md", "bound", "gaussian-dual-averaging")
    claim = as_json(ran[typed])["claim"]
    assert claim["notion"] == "zcdp" and "delta" not in claim
    assert claim["rho"] == pytest.approx(online_rho(flag(typed, "--clip"), flag(typed, "--sigma"),
                                                    flag(typed, "--nodes", int), flag(typed, "--iterations", int)))
    assert f"gaussian-dual-averaging: {claim['describe']} ({claim['source']})" in blocks("plugin-online.md", "text")[1]

    typed = command("plugin-sharing.md", "bound", "clipped-sharing")
    sharing = as_json(ran[typed])
    widths = [int(width) for width in flag(typed, "--features", str).split(",")]
    epsilon, T, delta, delta_prime = flag(typed, "--step-epsilon"), flag(typed, "--iterations", int), 1e-5, 1e-5
    sigma = gaussian_sigma(2 * flag(typed, "--clip"), epsilon, delta)
    assert sharing["sensitivity"] == [2 * flag(typed, "--clip")] * len(widths)
    assert sharing["sigma"] == pytest.approx([sigma] * len(widths), rel=1e-12)
    assert sharing["epsilon_total"] == pytest.approx(math.sqrt(2 * T * math.log(1 / delta_prime)) * epsilon
                                                     + T * epsilon * math.expm1(epsilon), rel=1e-12)
    assert sharing["basic_composition"] == pytest.approx({"epsilon": T * epsilon, "delta": T * delta})
    assert f"sigma = {sigma:.6g}" in blocks("plugin-sharing.md", "text")[1]


def test_audit_shows_the_claimed_delta_and_catches_each_broken_copy(ran):
    """At each package's declared audit setting (the flags its guide types): the variant's black-box audit finds no
    violation (exit 0) of a claim computed here, the broken copy's a violation of the same claim (exit 1); the
    consensus one-run audit tests the same (ε, δ)."""
    from admmcheck.mechanisms.settings import OnlineSetting

    audits = {c[1]: as_json(ran[c], expected_status(c)) for c in commands("plugin-consensus.md")
              if c[0] == "audit" and "--canaries" not in c}
    typed = command("plugin-consensus.md", "audit", "gaussian-admm", having="--record")
    epsilon = consensus_epsilon(typed)
    for result in audits.values():
        assert result["claim"]["notion"] == "approximate-dp" and result["claimed_delta"] == DELTA
        assert result["claimed_epsilon"] == pytest.approx(epsilon, rel=1e-6)
        assert result["lower_bound"]["parameter"] == "epsilon"
    kept, broken = audits["gaussian-admm"], audits["gaussian-admm-quiet"]
    assert kept["verdict"] == "no-violation-found" and kept["epsilon_lower_bound"] <= epsilon
    assert broken["verdict"] == "violation" and broken["epsilon_lower_bound"] > epsilon
    one_run = as_json(ran[command("plugin-consensus.md", "audit", "gaussian-admm", having="--canaries")])
    assert (one_run["mode"], one_run["claimed_delta"]) == ("one-run", DELTA)
    assert one_run["claimed_epsilon"] == pytest.approx(epsilon, rel=1e-6)

    nodes, iterations = OnlineSetting.DEFAULTS["audit"].nodes, OnlineSetting.DEFAULTS["audit"].iterations
    for c in commands("plugin-online.md"):
        if c[0] != "audit":
            continue
        result = as_json(ran[c], expected_status(c))
        rho = online_rho(flag(c, "--clip"), flag(c, "--sigma"), nodes, iterations)
        assert result["claim"]["notion"] == "zcdp" and result["claim"]["rho"] == pytest.approx(rho, rel=1e-12)
        assert result["lower_bound"]["parameter"] == "rho"
        assert (result["lower_bound"]["value"] > rho) == c[1].endswith("-quiet")
        assert result["verdict"] == ("violation" if c[1].endswith("-quiet") else "no-violation-found")


def _verdicts(ran, page: str) -> dict[tuple[str, str], dict]:
    report = as_json(ran[command(page, "verify")], expected_status(command(page, "verify")))
    return {(v["algorithm"], v["check"].split(" at ")[0]): v for v in report["verdicts"]}


@pytest.mark.parametrize("page", ["plugin-consensus.md", "plugin-online.md"])
def test_verify_only_flags_only_the_broken_copy(ran, page):
    """The claim and the black-box audit of each name, at the setting its spec declares (the checks say it), every
    verdict pass but the broken copy's audit, a violation."""
    verdicts = _verdicts(ran, page)
    names = GUIDES[page][2]
    assert {name for name, _ in verdicts} == set(names)
    for (name, check), verdict in verdicts.items():
        broken = name.endswith("-quiet") and check == "black-box audit"
        assert verdict["verdict"] == ("violation" if broken else "pass"), (name, check)
        assert "--clip" in verdict["check"]
        replay = "bound" if check == "claim" else "audit"
        assert " at --" in verdict["check"] and verdict["command"].startswith(f"admmcheck {replay} {name} ")
    assert {check for _, check in verdicts} == {"claim", "black-box audit"}


def test_verifys_claim_commands_replay_its_claim_verdicts(ran, examples_python):
    for page in ("plugin-consensus.md", "plugin-online.md"):
        name = GUIDES[page][2][0]
        verdict = _verdicts(ran, page)[(name, "claim")]
        claim = as_json(admmcheck(examples_python, *shlex.split(verdict["command"])[1:]))["claim"]
        assert claim["rho" if claim["notion"] == "zcdp" else "epsilon"] == pytest.approx(verdict["value"])


def test_outputs_carry_no_paper_label_the_plugin_does_not_give(ran):
    """No output of the guides' commands names the papers' theorems or DPSDA (clipped-sharing's own theorem label
    cites Dwork & Roth's "Thm A.1", which it gives)."""
    for page in GUIDES:
        for arguments in commands(page):
            process = ran[arguments]
            assert [word for word in PAPER_WORDS if word in process.stdout + process.stderr] == [], arguments


def test_the_packages_own_tests_pass_and_catch_their_broken_copies(ran):
    """Each package's tests/ with admmcheck's pytest plugin: convergence without noise, the claim recomputed, the claim
    kept, the broken copy a strict xfail (its violation recorded)."""
    assert ran.own.returncode == 0 and "7 passed, 2 xfailed" in ran.own.stdout, ran.own.stdout + ran.own.stderr
    verdicts = {r["mechanism"]: r["verdict"] for r in ran.own_results["results"] if r["kind"] == "private"}
    assert verdicts == {"gaussian-admm": "no-violation-found", "gaussian-admm-quiet": "violation",
                        "gaussian-dual-averaging": "no-violation-found", "gaussian-dual-averaging-quiet": "violation"}


@pytest.mark.parametrize("page", GUIDES)
def test_the_guides_excerpts_are_the_packages_word_for_word(page):
    """Each guide's ``py`` and ``toml`` blocks are excerpts of its package (sources, tests, pyproject.toml)."""
    package = EXAMPLES / GUIDES[page][0]
    text = "".join(path.read_text() for path in sorted(package.rglob("*.py")))
    excerpts = blocks(page, "py")
    assert excerpts and [excerpt for excerpt in excerpts if excerpt not in text] == []
    (toml,) = blocks(page, "toml")
    assert toml in (package / "pyproject.toml").read_text()


def test_admmcheck_itself_does_not_mention_the_new_examples():
    words = ("gaussian_admm", "gaussian-admm", "online_variant", "online-variant", "gaussian-dual-averaging")
    mentions = [str(path) for path in (ROOT / "src" / "admmcheck").rglob("*") if path.is_file()
                and path.suffix in (".py", ".m", ".html", ".txt", ".toml", ".json")
                and any(word in path.read_text(errors="replace") for word in words)]
    assert mentions == []
