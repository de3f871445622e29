"""Issue 30 (part 2): the audit's (ε, δ) curve against the exact curves of the Laplace and Gaussian
mechanisms, the claim's curve against the (ε0, δ0) privacy region, and the curve on the audit page
and in the verification report.

Exact curves are computed here by numerical integration of max(0, p_a − e^ε p_b) (scipy's quad) and
checked against the closed forms: Laplace(b), sensitivity Δ, ε0 = Δ/b: δ(ε) = 1 − e^{(ε − ε0)/2} on
[0, ε0], 0 beyond; Gaussian(σ), μ = Δ/σ: δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) (Balle & Wang 2018).

The stated distance. If the intervals of a line ℓ (a set S or its complement, numerator a) hold, its
true value T_ℓ(ε) = P_a(S) − e^ε P_b(S) exceeds its lower bound p̲_a − e^ε p̄_b by at most
W_ℓ(ε) = (p̄_a − p̲_a) + e^ε (p̄_b − p̲_b), the widths of its two-sided intervals. The curve is at
least every line's lower bound and at least 0, so
    exact(ε) − curve(ε) <= D(ε) = min(exact(ε), min_ℓ [exact(ε) − T_ℓ(ε)] + W_ℓ(ε)):
the ladder's discretisation (exact, from the sets' true probabilities) plus the interval widths.
The test asserts the gap is at most D over the lines of the first ladder (whose score is monotone in
the output, so its sets are half-lines with exact probabilities), that every interval of that ladder
covers its set's true probability, and that the discretisation alone is at most 1e-3.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from admmcheck.audit import PrivacyClaim, Source, audit
from admmcheck.audit.curve import claimed_delta
from admmcheck.report.audit_page import write_audit_page
from admmcheck.report.collect import privacy_curve_figure
from admmcheck.report.model import Report, Verdict
from admmcheck.report.render import render

MECHANISMS = str(Path(__file__).resolve().parent / "mechanisms.py")
SAMPLES = 100_000

# name: (mechanism, claim, law of the output on d0 = 0 and on d1 = 1, closed form of delta(epsilon))
CASES = {
    "laplace": ("laplace_vectorised", PrivacyClaim(1.0, 0.0), stats.laplace(0.0, 1.0), stats.laplace(1.0, 1.0),
                lambda e: np.where(e <= 1.0, -np.expm1((np.minimum(e, 1.0) - 1.0) / 2), 0.0)),
    # sigma = sqrt(2 ln(1.25/delta))/epsilon at delta = 1e-5 (Dwork & Roth 2014, Thm A.1): a correct claim
    "gaussian": ("gaussian_vectorised", PrivacyClaim(math.sqrt(2 * math.log(1.25e5)), 1e-5), stats.norm(0.0, 1.0),
                 stats.norm(1.0, 1.0), lambda e: stats.norm.cdf(0.5 - e) - np.exp(e) * stats.norm.cdf(-0.5 - e)),
}


def integrated_delta(law_a, law_b, epsilon: np.ndarray) -> np.ndarray:
    """∫ max(0, p_a − e^ε p_b) at every ε by one vector-valued adaptive quadrature (scipy's quad_vec),
    split where the integrands bend (at the two means)."""
    scale = np.exp(epsilon)

    def excess(x: float) -> np.ndarray:
        return np.maximum(0.0, law_a.pdf(x) - scale * law_b.pdf(x))

    return sum(integrate.quad_vec(excess, lo, hi, epsabs=1e-10, epsrel=1e-8, norm="max", limit=2000)[0]
               for lo, hi in ((-60.0, 0.0), (0.0, 1.0), (1.0, 61.0)))


@pytest.fixture(scope="module", params=list(CASES))
def case(request):
    mechanism, claim, law0, law1, closed = CASES[request.param]
    result = audit(Source(f"{MECHANISMS}:{mechanism}"), Source(f"{MECHANISMS}:scalar_pair"), claim,
                   samples=SAMPLES, workers=2, seed=3)
    return request.param, result, law0, law1, closed


def _exact(law0, law1, closed, epsilon: np.ndarray) -> np.ndarray:
    """δ(ε) of the pair by integration, checked against the closed form. Both orders give the same δ here
    (x -> 1 − x maps either law onto the other), so d1 over d0 is integrated."""
    integrated = integrated_delta(law1, law0, epsilon)
    # quad_vec asks each piece for an error of at most max(1e-10, 1e-8 × max δ) <= 4e-9 in every component
    np.testing.assert_allclose(integrated, closed(epsilon), rtol=0, atol=1.2e-8)
    return integrated


def _true_probabilities(curve_set, law0, law1) -> tuple[float, float]:
    """P_d0 and P_d1 of a ladder set {score >= c} of a score monotone in the scalar output: a half-line
    whose end is found by root finding on the score."""
    def score(x: float) -> float:
        return float(curve_set.event.score(np.array([[x]]))[0])

    end = optimize.brentq(lambda x: score(x) - curve_set.threshold, -200.0, 200.0, xtol=1e-13)
    if score(end + 1.0) > score(end - 1.0):  # increasing: the set is [end, inf)
        return float(law0.sf(end)), float(law1.sf(end))
    return float(law0.cdf(end)), float(law1.cdf(end))


def _lines(truth: np.ndarray, width: np.ndarray, epsilon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(T, W) of every line of the sets whose true probabilities (sets, side) and interval widths are given,
    at every ε: T = P_a(S) − e^ε P_b(S) and W = w_a + e^ε w_b for S each set and its complement, a = d1, d0."""
    scale = np.exp(epsilon)[:, None]
    values, widths = [], []
    for a, b in ((1, 0), (0, 1)):
        for p_a, p_b in ((truth[:, a], truth[:, b]), (1 - truth[:, a], 1 - truth[:, b])):
            values.append(p_a[None, :] - scale * p_b[None, :])
            widths.append(width[None, :, a] + scale * width[None, :, b])
    return np.concatenate(values, axis=1), np.concatenate(widths, axis=1)


def test_the_lower_curve_lies_below_the_exact_curve_within_the_ladders_widths(case):
    name, result, law0, law1, closed = case
    curve = result.curve
    summary = result.as_dict()["privacy_curve"]
    grid = np.asarray(summary["epsilon_grid"])
    lower = np.asarray(summary["delta_lower_bound"])
    assert grid[0] == 0.0 and result.claim.epsilon in grid and len(grid) >= 101
    exact = _exact(law0, law1, closed, grid)
    assert np.all(lower <= exact), name  # valid everywhere on the grid
    assert summary["intervals"] == 4 * summary["sets"] and summary["level"] == pytest.approx(0.05 / summary["intervals"])
    # the stated distance: over the lines of the first ladder, discretisation + interval widths
    first = curve.ladders[0]
    ladder = [k for k, s in enumerate(curve.sets) if s.threshold is not None and s.event.description == first["event"]]
    assert len(ladder) == first["thresholds"] > 150
    truth = np.array([_true_probabilities(curve.sets[k], law0, law1) for k in ladder])
    low, up = curve.intervals[ladder, :, 0], curve.intervals[ladder, :, 1]
    assert np.all((low <= truth) & (truth <= up))  # every interval of the ladder covers its true probability
    true_values, widths = _lines(truth, up - low, grid)
    gap = exact - lower
    distance = np.minimum(exact, np.min(exact[:, None] - true_values + widths, axis=1))  # δ >= 0: the line 0 too
    assert np.all(gap <= distance + 1e-12), (name, float(np.max(gap - distance)))
    # the ladder is fine enough: with thresholds 0.1 apart in logit the best of its sets loses at most 5.8e-4
    # (Laplace) and 2.2e-4 (Gaussian) of δ when the quantiles are exact; the selection's quantiles move a set by
    # ~0.003 in probability, a second-order loss
    assert np.max(exact - np.maximum(true_values.max(axis=1), 0.0)) <= 1e-3, name
    # the curve's own ε(δ) bounds: below the exact ε(δ) (the root of the closed form, checked above)
    for delta, bound in zip(summary["delta_grid"], summary["epsilon_lower_bound"]):
        truth_at = 0.0 if closed(np.array(0.0)) <= delta else optimize.brentq(lambda x: closed(x) - delta, 0.0, 50.0)
        assert 0.0 <= bound <= truth_at, (name, delta)
    assert bound > 0.0  # evidence at δ = 0.1 for both mechanisms (δ(0) is 0.39 and 0.38)


def test_the_claims_curve_is_the_edge_of_its_privacy_region():
    """δ(ε) allowed by (ε0, δ0)-DP = max P(E) − e^ε Q(E) over (P(E), Q(E)) in the (ε0, δ0) privacy region
    (Kairouz, Oh & Viswanath 2015): a linear programme in the two probabilities."""
    for epsilon0, delta0 in ((1.0, 0.0), (0.5, 1e-5), (2.0, 0.1), (0.0, 0.2)):
        claim = PrivacyClaim(epsilon0, delta0)
        k = math.exp(epsilon0)
        # p <= k q + δ0, q <= k p + δ0, 1 − p <= k (1 − q) + δ0, 1 − q <= k (1 − p) + δ0
        rows = [[1, -k], [-k, 1], [-1, k], [k, -1]]
        bounds = [delta0, delta0, k - 1 + delta0, k - 1 + delta0]
        for epsilon in (0.0, 0.3 * epsilon0, epsilon0, epsilon0 + 0.7, 3.0):
            best = optimize.linprog([-1.0, math.exp(epsilon)], A_ub=rows, b_ub=bounds, bounds=[(0, 1), (0, 1)])
            assert best.status == 0
            assert float(claimed_delta(epsilon, claim)) == pytest.approx(-best.fun, abs=1e-9), (claim, epsilon)


@pytest.mark.parametrize("case", ["laplace"], indirect=True)
def test_the_page_and_the_report_draw_the_curve_against_the_claim(case, tmp_path):
    name, result, *_ = case
    summary = result.as_dict() | {"command": "admmcheck audit code ...", "versions": {"numpy": np.__version__}}
    paths = write_audit_page(summary, tmp_path / "page")
    assert paths["privacy_curve.png"].read_bytes().startswith(b"\x89PNG")
    html = paths["html"].read_text()
    section = html[html.index('id="privacy-curve"'):html.index('id="candidates"')]
    assert "The (&epsilon;, &delta;) curve" in section and section.count('src="data:image/png;base64,') == 1
    assert "refutes nothing" in section  # the claim is correct
    refuted = summary | {"privacy_curve": summary["privacy_curve"] | {"exceeds_claim_at_epsilon": [0.2, 0.4]}}
    html = write_audit_page(refuted, tmp_path / "refuted")["html"].read_text()
    assert "lies above the curve of the claim at epsilon from 0.2 to 0.4" in html
    report = Report("smoke", 0)
    report.add(Verdict(name, "black-box audit", "pass", "", "admmcheck audit", 0.0), 0.0)
    report.figures["privacy_curve"] = privacy_curve_figure({name: summary["privacy_curve"]})
    drawn = render(report, tmp_path / "report")
    assert drawn["privacy_curve.svg"].read_text().lstrip().startswith("<?xml")
    assert 'id="figure-privacy_curve"' in drawn["html"].read_text()
