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
The test asserts the gap is at most D over the lines of the finest ladder (its sets are unions of
intervals of the scalar output, with exact probabilities), that every interval of that ladder
covers its set's true probability, and that the discretisation alone is at most 1e-3.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from admmcheck.audit import PrivacyClaim, Source, audit
from admmcheck.audit.statistics.curve import CurveSet, bound_curve
from admmcheck.audit.statistics.events import Event
from admmcheck.report.audit_page import render_audit_page
from admmcheck.report.curve_figure import privacy_curve_figure
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


def exact_delta(law0, law1, closed, epsilon: np.ndarray) -> np.ndarray:
    """δ(ε) of the pair by integration, checked against the closed form. Both orders give the same δ here
    (x -> 1 − x maps either law onto the other), so d1 over d0 is integrated."""
    integrated = integrated_delta(law1, law0, epsilon)
    # quad_vec asks each piece for an error of at most max(1e-10, 1e-8 × max δ) <= 4e-9 in every component
    np.testing.assert_allclose(integrated, closed(epsilon), rtol=0, atol=1.2e-8)
    return integrated


def true_probabilities(curve_set, law0, law1) -> tuple[float, float]:
    """P_d0 and P_d1 of a ladder set {score >= c} of a scalar output: a union of intervals (the score may be
    monotone, or a step function such as an additive score), whose ends are located on a grid over
    [-200, 200] and found to 1e-12 by bisection on membership."""
    def member(x: np.ndarray) -> np.ndarray:
        return curve_set.event.score(np.asarray(x, dtype=float)[:, None]) >= curve_set.threshold

    grid = np.linspace(-200.0, 200.0, 400_001)
    inside = member(grid)
    ends = []
    for i in np.flatnonzero(inside[1:] != inside[:-1]):
        low, high = grid[i], grid[i + 1]
        while high - low > 1e-12:
            middle = (low + high) / 2
            low, high = (middle, high) if member(np.array([middle]))[0] == inside[i] else (low, middle)
        ends.append(high)
    edges = np.concatenate([[-np.inf], ends, [np.inf]])
    starts_inside = bool(member(np.array([-1e6]))[0])
    probabilities = []
    for law in (law0, law1):
        pieces = np.diff(law.cdf(edges))
        probabilities.append(float(np.sum(pieces[0 if starts_inside else 1::2])))
    return probabilities[0], probabilities[1]


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


def measure(result, law0, law1, closed) -> dict[str, np.ndarray]:
    """The audit's curve against the exact one (see the module docstring), on the curve's grids: ``exact``,
    ``lower``, ``gap``, the stated ``distance`` D, the finest ladder's ``discretisation`` (exact minus the
    best of its sets' true lines, or 0), whether its intervals all ``cover`` their true probabilities, its
    number of ``thresholds``; at each δ of the grid ``epsilon_bound`` and ``exact_epsilon``."""
    curve = result.curve
    summary = result.as_dict()["privacy_curve"]
    grid = np.asarray(summary["epsilon_grid"])
    lower = np.asarray(summary["delta_lower_bound"])
    exact = exact_delta(law0, law1, closed, grid)
    first = max(curve.ladders, key=lambda ladder: ladder["thresholds"])  # the finest (a step-function score has few)
    ladder = [k for k, s in enumerate(curve.sets) if s.threshold is not None and s.event.description == first["event"]]
    truth = np.array([true_probabilities(curve.sets[k], law0, law1) for k in ladder])
    low, up = curve.intervals[ladder, :, 0], curve.intervals[ladder, :, 1]
    true_values, widths = _lines(truth, up - low, grid)
    delta_grid = np.asarray(summary["delta_grid"])
    exact_epsilon = [0.0 if closed(np.array(0.0)) <= d else optimize.brentq(lambda x: closed(x) - d, 0.0, 50.0)
                     for d in delta_grid]  # the root of the closed form, checked against the integral above
    return {"epsilon_grid": grid, "exact": exact, "lower": lower, "gap": exact - lower,
            "distance": np.minimum(exact, np.min(exact[:, None] - true_values + widths, axis=1)),  # δ >= 0 too
            "discretisation": exact - np.maximum(true_values.max(axis=1), 0.0),
            "cover": np.all((low <= truth) & (truth <= up)), "thresholds": np.array(len(ladder)),
            "delta_grid": delta_grid, "epsilon_bound": np.asarray(summary["epsilon_lower_bound"]),
            "exact_epsilon": np.array(exact_epsilon)}


def test_the_lower_curve_lies_below_the_exact_curve_within_the_ladders_widths(case):
    name, result, law0, law1, closed = case
    summary = result.as_dict()["privacy_curve"]
    assert summary["intervals"] == 4 * summary["sets"] and summary["level"] == pytest.approx(0.05 / summary["intervals"])
    m = measure(result, law0, law1, closed)
    assert m["epsilon_grid"][0] == 0.0 and result.claim.epsilon in m["epsilon_grid"] and len(m["epsilon_grid"]) >= 101
    assert np.all(m["lower"] <= m["exact"]), name  # valid everywhere on the grid
    assert m["thresholds"] == max(ladder["thresholds"] for ladder in summary["ladders"]) > 150
    assert m["cover"]  # every interval of the finest ladder covers its set's true probability
    assert np.all(m["gap"] <= m["distance"] + 1e-12), (name, float(np.max(m["gap"] - m["distance"])))
    # the ladder is fine enough: with thresholds 0.1 apart in logit the best of its sets loses at most 5.8e-4
    # (Laplace) and 2.2e-4 (Gaussian) of δ when the quantiles are exact; the selection's quantiles move a set by
    # ~0.003 in probability, a second-order loss
    assert np.max(m["discretisation"]) <= 1e-3, name
    assert np.all((0.0 <= m["epsilon_bound"]) & (m["epsilon_bound"] <= m["exact_epsilon"])), name
    assert m["epsilon_bound"][-1] > 0.0  # evidence at δ = 0.1 for both mechanisms (δ(0) is 0.39 and 0.38)


def test_the_curve_is_the_largest_line_of_its_sets_bounded_at_their_bonferroni_share():
    """Two sets bounded by hand: each side of each set gets one-sided Clopper-Pearson bounds at
    0.05 / 8 (Beta quantiles from scipy.stats.beta), the curve is max(0, the 8 lines) at every ε."""
    event = Event("coordinate", "x > 0", 1, lambda x: x[:, 0], 0.0, True)
    counts, n = [(100, 900), (5000, 4000)], (10_000, 10_000)
    sets = [CurveSet(0, "x > 0", event, None, counts[0], n), CurveSet(0, "x >= 1", event, 1.0, counts[1], n)]
    curve = bound_curve(sets, PrivacyClaim(1.0, 0.0), 0.95)
    level = 0.05 / 8
    lower = [[stats.beta.ppf(level, k, n_ - k + 1) for k, n_ in zip(c, n)] for c in counts]
    upper = [[stats.beta.ppf(1 - level, k + 1, n_ - k) for k, n_ in zip(c, n)] for c in counts]
    epsilon = np.linspace(0.0, 3.0, 31)
    lines = [lower[j][a] - np.exp(epsilon) * upper[j][1 - a] for j in (0, 1) for a in (0, 1)]
    lines += [(1 - upper[j][a]) - np.exp(epsilon) * (1 - lower[j][1 - a]) for j in (0, 1) for a in (0, 1)]
    np.testing.assert_allclose(curve.delta_lower_bound(epsilon), np.maximum(np.max(lines, axis=0), 0.0), atol=1e-12)
    delta = np.array([0.0, 1e-3, 0.1, 0.5])
    with np.errstate(invalid="ignore"):  # ln of a negative number: a line that refutes nothing at that δ
        bounds = [np.log((lower[j][a] - delta) / upper[j][1 - a]) for j in (0, 1) for a in (0, 1)]
        bounds += [np.log((1 - upper[j][a] - delta) / (1 - lower[j][1 - a])) for j in (0, 1) for a in (0, 1)]
    expected = np.maximum(np.nanmax(bounds, axis=0), 0.0)
    np.testing.assert_allclose(curve.epsilon_lower_bound(delta), expected, atol=1e-12)
    assert expected[1] > 1.0  # set 0 under d1: 0.09 against 0.01, so ε(1e-3) > ln(0.08/0.013)
    summary = curve.as_dict()
    assert summary["exceeds_claim"] and summary["sets"] == 2 and summary["intervals"] == 8
    assert summary["ladders"] == [{"pair": 0, "event": "x > 0", "thresholds": 1}]
    # the grid runs to the largest ε a line supports (at δ = 0), at least twice the claimed ε
    assert summary["epsilon_grid"][-1] == pytest.approx(max(expected[0], 2.0)) and len(summary["epsilon_grid"]) == 101
    assert curve.notes("no-violation-found") and curve.notes("violation") == ()


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
            assert float(claim.profile(epsilon)) == pytest.approx(-best.fun, abs=1e-9), (claim, epsilon)


@pytest.mark.parametrize("case", ["laplace"], indirect=True)
def test_the_page_and_the_report_draw_the_curve_against_the_claim(case, tmp_path):
    name, result, *_ = case
    summary = result.as_dict() | {"command": "admmcheck audit code ...", "versions": {"numpy": np.__version__}}
    paths = render_audit_page(summary, tmp_path / "page")
    assert paths["privacy_curve.png"].read_bytes().startswith(b"\x89PNG")
    html = paths["html"].read_text()
    section = html[html.index('id="privacy-curve"'):html.index('id="candidates"')]
    assert "The (&epsilon;, &delta;) curve" in section and section.count('src="data:image/png;base64,') == 1
    assert "refutes nothing" in section  # the claim is correct
    refuted = summary | {"privacy_curve": summary["privacy_curve"] | {"exceeds_claim_at_epsilon": [0.2, 0.4]}}
    html = render_audit_page(refuted, tmp_path / "refuted")["html"].read_text()
    assert "lies above the curve of the claim at 2 grid point(s) of epsilon between 0.2 and 0.4" in html
    report = Report("smoke", 0)
    report.add(Verdict(name, "black-box audit", "pass", "", "admmcheck audit", 0.0), 0.0)
    report.figures["privacy_curve"] = privacy_curve_figure({name: summary["privacy_curve"]})
    drawn = render(report, tmp_path / "report")
    assert drawn["privacy_curve.svg"].read_text().lstrip().startswith("<?xml")
    assert 'id="figure-privacy_curve"' in drawn["html"].read_text()
