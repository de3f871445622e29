"""Issue 60, item 1: every audit tests the DP notion claimed. A Gaussian mechanism is exactly μ-GDP and
(μ²/2)-zCDP (σ = 1/μ on a sensitivity-1 count); the audit must not flag it at its true μ or ρ, must refute a claim
four times too strong with a lower bound that never exceeds the truth, and a registered mechanism's (ε, δ) claim keeps
its δ all the way to the audit's JSON."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from scipy import stats

from admmcheck.audit import AuditSettings, Source, audit
from admmcheck.claims import ApproxDp, DpCurve, GaussianDp, ZeroConcentratedDp
from admmcheck.foundations.errors import InvalidConfiguration

MECHANISMS = str(Path(__file__).with_name("mechanisms.py"))
SETTINGS = AuditSettings(samples=20_000, workers=2, seed=3)


def _audit(mechanism: str, claim, **changes):
    return audit(Source(spec=f"{MECHANISMS}:{mechanism}"), Source(spec=f"{MECHANISMS}:scalar_pair"), claim,
                 SETTINGS.but(**changes))


@pytest.mark.parametrize("claim, truth", [(GaussianDp(1.0), 4.0), (ZeroConcentratedDp(0.5), 8.0)],
                         ids=["gdp", "zcdp"])
def test_a_claim_four_times_too_strong_is_refuted_in_its_own_notion_and_the_bound_stays_below_the_truth(claim, truth):
    result = _audit("gaussian_quarter", claim)
    summary = result.as_dict()
    assert result.verdict == "violation"
    assert summary["lower_bound"]["parameter"] == claim.parameter
    assert claim.value < summary["lower_bound"]["value"] <= truth
    assert summary["claim"]["notion"] == claim.notion and summary["claimed_epsilon"] is None
    # the deciding event's own intervals give the bound, recomputed here from the Clopper-Pearson ends
    lead = summary["candidates"][0]
    a = 0 if summary["event_more_likely_under"] == "d0" else 1
    p_a, p_b = summary[f"p_d{a}"]["interval"][0], summary[f"p_d{1 - a}"]["interval"][1]
    if claim.parameter == "mu":
        assert lead["lower_bound"] == pytest.approx(stats.norm.ppf(p_a) - stats.norm.ppf(p_b), rel=1e-9)
    json.dumps(summary, default=str)


@pytest.mark.parametrize("claim", [GaussianDp(1.0), ZeroConcentratedDp(0.5),
                                   DpCurve(((GaussianDp(1.0).epsilon_at(1e-2), 1e-2),
                                            (GaussianDp(1.0).epsilon_at(1e-1), 1e-1)))],
                         ids=["gdp", "zcdp", "curve"])
def test_the_gaussian_mechanism_at_its_true_claim_is_not_flagged(claim):
    result = _audit("gaussian_unit", claim)
    assert result.verdict == "no-violation-found"
    assert result.claim_lower_bound <= claim.value
    assert not result.curve.as_dict()["exceeds_claim"]  # its lower curve stays under the claim's profile


def test_a_curve_claim_too_strong_is_refuted():
    true = GaussianDp(4.0)
    claimed = DpCurve(((1.0, 1e-3), (2.0, 1e-5)))  # the 4-GDP mechanism needs eps(1e-3) ~ 9.2
    assert true.epsilon_at(1e-3) > 5
    result = _audit("gaussian_quarter", claimed)
    assert result.verdict == "violation" and result.claim_lower_bound > 0
    assert result.as_dict()["privacy_curve"]["exceeds_claim"]


def test_the_sequential_audit_and_the_one_run_audit_refuse_what_they_cannot_test():
    with pytest.raises(InvalidConfiguration, match="sequential audit tests an \\(epsilon, delta\\) claim"):
        _audit("gaussian_unit", ZeroConcentratedDp(0.5), sequential=True)
    from admmcheck.audit.one_run.canaries import require_one_run_claim

    assert require_one_run_claim(GaussianDp(1.0)) == GaussianDp(1.0)
    with pytest.raises(InvalidConfiguration, match="one-run audit tests an \\(epsilon, delta\\) or a Gaussian-DP"):
        require_one_run_claim(ZeroConcentratedDp(0.5))
    with pytest.raises(InvalidConfiguration, match="claim value of admmcheck.claims"):
        _audit("gaussian_unit", 1.0)


def test_the_command_line_takes_mu_and_rho_and_refuses_two_claims(capsys):
    from admmcheck.cli import main

    base = ["audit", "code", "--mechanism", f"{MECHANISMS}:gaussian_quarter", "--neighbors",
            f"{MECHANISMS}:scalar_pair", "--samples", "5000", "--workers", "2"]
    assert main(base + ["--mu", "1"]) == 1
    head = capsys.readouterr().out.splitlines()[0]
    assert head.startswith("violation: mu >= ") and "(claimed mu = 1 (1-GDP))" in head
    assert main(base + ["--mu", "1", "--epsilon", "1"]) == 2
    assert "both given: give one claim" in capsys.readouterr().err
    assert main(base + ["--rho", "1", "--delta", "1e-5"]) == 2
    assert "goes with epsilon" in capsys.readouterr().err


def test_a_registered_mechanisms_epsilon_delta_claim_keeps_its_delta_and_its_source():
    """The issue's Gaussian variant was audited as 'claimed epsilon = 5.98992, delta = 0': a spec whose claim is an
    (ε, δ) value is audited against that (ε, δ), and says where the claim came from."""
    from admmcheck.commands.audit import MechanismAudit, run_mechanism_audit
    from admmcheck.mechanisms.registry import REGISTRY, register
    from admmcheck.mechanisms.settings import ConsensusSetting

    pvp = REGISTRY.mechanism("pvp")
    register(replace(pvp, name="pvp-approx", claim=lambda setting: ApproxDp(50.0, 1e-5), theorem=None))
    try:
        setting = replace(ConsensusSetting.DEFAULTS["audit"], seed=1)
        assert REGISTRY.mechanism("pvp-approx").claim_value(setting).delta == 1e-5
        summary = run_mechanism_audit(MechanismAudit("pvp-approx", setting, where=(0, 0),
                                                     settings=pvp.audit.but(samples=2_000, workers=2))).as_dict()
    finally:
        REGISTRY.unregister("pvp-approx")
    assert summary["claimed_epsilon"] == 50.0 and summary["claimed_delta"] == 1e-5
    assert summary["claim"]["source"] == "stated by registered in this process"
    assert summary["verdict"] == "no-violation-found"


def test_an_online_mechanism_registered_without_neighbours_gets_its_familys_and_is_audited():
    """Issue 60: an OnlineSpec without neighbours= registered, ran and bounded, then ``audit`` crashed with
    "'NoneType' object is not callable"; every family now gives its neighbours (DPSDA's Definition 1 for online)."""
    from admmcheck.commands.audit import MechanismAudit, run_mechanism_audit
    from admmcheck.mechanisms.registry import REGISTRY, OnlineSpec, register
    from admmcheck.mechanisms.settings import OnlineSetting

    paper = REGISTRY.mechanism("dpsda-c")
    spec = OnlineSpec("online-plain", "online", "an online variant without neighbours of its own", paper.run,
                      claim=paper.claim)
    assert spec.neighbours is not None and spec.first_place == (1, "--changed-round 1")
    register(spec)
    try:
        result = run_mechanism_audit(MechanismAudit("online-plain", OnlineSetting.DEFAULTS["audit"], where=1,
                                                    settings=paper.audit.but(samples=2_000, workers=2))).as_dict()
    finally:
        REGISTRY.unregister("online-plain")
    assert result["verdict"] in ("violation", "no-violation-found")
    assert result["claim"]["notion"] == "pure-dp" and result["claimed_delta"] == 0.0


@pytest.mark.admmcheck
def test_assert_private_tests_a_claim_of_any_notion_and_its_replay_states_it():
    from admmcheck.testing import PrivacyViolation, assert_private

    with pytest.raises(PrivacyViolation) as caught:
        assert_private(f"{MECHANISMS}:gaussian_quarter", f"{MECHANISMS}:scalar_pair", claim=GaussianDp(1.0),
                       samples=5_000, workers=2)
    message = str(caught.value)
    assert "violates its claim (mu = 1 (1-GDP)): mu >= " in message and "--mu 1.0" in caught.value.command
    assert caught.value.result.claim_lower_bound <= 4.0  # the truth: sigma = 1/4 on sensitivity 1
    with pytest.raises(InvalidConfiguration, match="give the claim one way"):
        assert_private(f"{MECHANISMS}:gaussian_unit", f"{MECHANISMS}:scalar_pair", epsilon=1.0,
                       claim=GaussianDp(1.0))


@pytest.mark.parametrize("paper", ["dp-sharing", "dpsda-c"], ids=["sharing", "online"])
def test_a_sharing_or_online_variant_whose_claim_is_a_value_runs_bounds_and_is_audited(paper, capsys):
    """Its noise scale comes from its own arguments (the paper's come from its theorem's object), its claim keeps its
    delta in run, bound and audit, and nothing it prints carries the paper's theorem."""
    from admmcheck.cli import main
    from admmcheck.commands.audit import MechanismAudit, run_mechanism_audit
    from admmcheck.mechanisms.registry import REGISTRY, register

    spec = REGISTRY.mechanism(paper)
    name = f"{paper}-valued"
    register(replace(spec, name=name, theorem=None, labels={}, report=False,
                     claim=lambda setting: ApproxDp(3.0, 1e-5, source="the variant's own proof"),
                     arguments=lambda setting: {"sigma": 2.0}))
    try:
        assert main(["run", name, "--iterations", "3", "--json"]) == 0
        ran = json.loads(capsys.readouterr().out)
        assert ran["claim"]["delta"] == 1e-5 and ran["claim"]["source"] == "the variant's own proof"
        assert main(["bound", name]) == 0
        assert capsys.readouterr().out.strip() == f"{name}: (3, 1e-05)-DP (the variant's own proof)"
        audited = run_mechanism_audit(MechanismAudit(name, spec.setting_type.defaults("audit"),
                                                     where=spec.first_place[0],
                                                     settings=spec.audit.but(samples=1_000, workers=2))).as_dict()
    finally:
        REGISTRY.unregister(name)
    assert audited["claimed_epsilon"] == 3.0 and audited["claimed_delta"] == 1e-5
    text = json.dumps([ran, audited], default=str)
    assert "Theorem" not in text and "Corollary" not in text and "DPSDA" not in text
