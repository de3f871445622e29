"""The one-run bounds of ``admmcheck.audit.one_run`` (issue 54, item 3): against independent computations (a
bisection on SciPy's binomial tail, the Corollary 5.4 sum written term by term), against the numbers Steinke et al.
print (their Appendix D's examples and §7's experiments), and valid: under a mechanism exactly at its claim the bound
exceeds the claim with probability at most 1 − confidence (computed exactly from the binomial law where it is one,
by simulation for the Gaussian trade-off curve)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from admmcheck.audit.one_run import epsilon_lower_bound, gaussian_dp_lower_bound, one_run_p_value
from admmcheck.audit.one_run.bounds import gaussian_blow_up_inverse, trade_off_rejected
from admmcheck.foundations.errors import InvalidConfiguration


def _bisected(r: int, v: int, beta: float) -> float:
    """sup{ε : P[Bin(r, e^ε/(1+e^ε)) ≥ v] ≤ β} by root finding on the binomial tail itself."""
    tail = lambda epsilon: stats.binom.sf(v - 1, r, 1 / (1 + math.exp(-epsilon))) - beta  # noqa: E731
    return 0.0 if tail(0.0) > 0 else optimize.brentq(tail, 0.0, 60.0, xtol=1e-12)


@pytest.mark.parametrize(("r", "v"), [(10, 9), (100, 75), (100, 100), (1000, 640), (1000, 980), (5000, 2600),
                                      (40, 20), (1, 1)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_pure_dp_bound_is_the_bisected_binomial_tail(r, v, confidence):
    assert epsilon_lower_bound(r, v, confidence) == pytest.approx(_bisected(r, v, 1 - confidence), abs=1e-9)


def _corollary_5_4(m: int, r: int, v: int, epsilon: float, delta: float) -> float:
    """f(v) + 2 m δ max_{1 ≤ i ≤ v} (f(v − i) − f(v)) / i, each f a binomial tail of its own."""
    q = 1 / (1 + math.exp(-epsilon))
    f = lambda u: stats.binom.sf(u - 1, r, q)  # noqa: E731 - P[Bin >= u]
    return min(1.0, f(v) + 2 * m * delta * max((f(v - i) - f(v)) / i for i in range(1, v + 1)))


@pytest.mark.parametrize(("m", "r", "v", "epsilon", "delta"), [
    (100, 100, 75, math.log(3), 1e-4), (1000, 100, 75, 0.5, 1e-4), (10_000, 400, 390, 3.0, 1e-5),
    (50, 20, 3, 0.1, 1e-3), (200, 200, 200, 6.0, 1e-6)])
def test_delta_p_value_is_corollary_5_4_term_by_term(m, r, v, epsilon, delta):
    assert one_run_p_value(m, r, v, epsilon, delta) == pytest.approx(_corollary_5_4(m, r, v, epsilon, delta),
                                                                     rel=1e-10)


@pytest.mark.parametrize(("call", "printed"), [
    # Appendix D's worked example: m = r = 100, v = 75, eps = ln 3 has p = 0.553; the bounds at 95 %
    (lambda: one_run_p_value(100, 100, 75, math.log(3)), "0.553"),
    (lambda: epsilon_lower_bound(100, 75, 0.95), "0.702"),
    (lambda: epsilon_lower_bound(100, 75, 0.95, 1e-4, canaries=100), "0.699"),
    (lambda: epsilon_lower_bound(100, 75, 0.95, 1e-4, canaries=1000), "0.673"),
    # §7: 1,439 right of 1,510 guesses on 10^5 canaries gives eps >= 2.675; 9,820 of 10^4 (accuracy at eps = 4) 3.87
    (lambda: epsilon_lower_bound(1510, 1439, 0.95, 1e-5, canaries=100_000), "2.675"),
    (lambda: epsilon_lower_bound(10_000, 9820, 0.95, 1e-5, canaries=10_000), "3.87"),
])
def test_the_papers_printed_numbers(call, printed):
    """Equal to the printed digits: within one unit of the last one (the paper rounds some and truncates others)."""
    assert abs(call() - float(printed)) < 10.0 ** -len(printed.split(".")[1])


@pytest.mark.parametrize("r", [20, 100, 1000])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_at_the_claim_the_bound_exceeds_it_with_probability_at_most_one_minus_confidence(r, epsilon, delta):
    """Randomized response at ε is exactly the law that dominates (every guess right with probability q_ε): the
    probability that the bound exceeds ε is the binomial mass of the counts that refute it, summed exactly."""
    beta = 0.05
    q = 1 / (1 + math.exp(-epsilon))
    refutes = lambda v: epsilon_lower_bound(r, v, 1 - beta, delta, canaries=r) > epsilon  # noqa: E731
    low, high = 0, r + 1  # the bound grows with v: the counts that refute are v >= the least one, found by bisection
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if refutes(middle) else (middle + 1, high)
    assert low == r + 1 or (refutes(low) and (low == 0 or not refutes(low - 1)))
    assert float(stats.binom.sf(low - 1, r, q)) <= beta


def test_the_bound_grows_with_the_right_guesses_and_shrinks_with_delta_times_canaries():
    bounds = [epsilon_lower_bound(200, v, 0.95) for v in range(90, 201, 10)]
    assert bounds == sorted(bounds) and bounds[0] == 0 < bounds[-1]
    assert (epsilon_lower_bound(200, 180, 0.95) > epsilon_lower_bound(200, 180, 0.95, 1e-5, canaries=200)
            > epsilon_lower_bound(200, 180, 0.95, 1e-5, canaries=20_000))


def test_perfect_guessers_reach_what_a_second_implementation_gives():
    """All guesses right, δ = 1e-5, 95 %: ε of Steinke et al.'s Appendix D, and the μ-GDP bound turned into ε at
    δ = 1e-5 by the analytic Gaussian curve, as jax_privacy's ``epsilon_one_run`` and ``epsilon_one_run_fdp`` give
    them (3.490 / 8.22 at 100 canaries, 5.782 / 12.33 at 1,000)."""
    def gaussian_epsilon(mu: float) -> float:
        s = 1 / mu
        curve = lambda e: stats.norm.cdf(-e * s + 1 / (2 * s)) - math.exp(e) * stats.norm.cdf(-e * s - 1 / (2 * s))  # noqa: E731
        return optimize.brentq(lambda e: curve(e) - 1e-5, 0, 60)

    assert epsilon_lower_bound(100, 100, 0.95, 1e-5, canaries=100) == pytest.approx(3.490, abs=6e-4)
    assert epsilon_lower_bound(1000, 1000, 0.95, 1e-5, canaries=1000) == pytest.approx(5.782, abs=6e-4)
    assert gaussian_epsilon(gaussian_dp_lower_bound(100, 100, 100, 0.95)) == pytest.approx(8.22, abs=6e-3)
    assert gaussian_epsilon(gaussian_dp_lower_bound(1000, 1000, 1000, 0.95)) == pytest.approx(12.33, abs=6e-3)


def test_the_gaussian_test_is_valid_for_a_gaussian_mechanism():
    """m = 200 canaries; an included canary's score is N(μ, 1), an excluded one's N(0, 1) (μ-GDP exactly); the
    guesser calls the top 20 included and the bottom 20 excluded. Over 2,000 runs μ-GDP is refuted (so the bound
    exceeds μ) in at most 5 % (a one-sided binomial test at 0.001 on the count); the guesses do carry evidence: a
    curve 4 times tighter is refuted in most runs."""
    rng = np.random.default_rng(7)
    mu, m, k, runs = 1.0, 200, 20, 2_000
    counts = []
    for _ in range(runs):
        included = rng.random(m) < 0.5
        order = np.argsort(rng.normal(size=m) + mu * included)
        counts.append(int(included[order[-k:]].sum() + (~included[order[:k]]).sum()))
    refuted = {v: trade_off_rejected(gaussian_blow_up_inverse(mu), m, 2 * k, v, 0.95) for v in set(counts)}
    over = sum(refuted[v] for v in counts)
    assert stats.binomtest(over, runs, 0.05, alternative="greater").pvalue > 1e-3, over
    tighter = {v: trade_off_rejected(gaussian_blow_up_inverse(mu / 4), m, 2 * k, v, 0.95) for v in set(counts)}
    assert sum(tighter[v] for v in counts) > runs / 2
    assert all(gaussian_dp_lower_bound(m, 2 * k, v, 0.95) > mu for v in refuted if refuted[v])


def test_the_trade_off_test_refutes_a_curve_below_what_the_guesses_show():
    assert trade_off_rejected(gaussian_blow_up_inverse(0.5), 1000, 1000, 1000, 0.95)
    assert not trade_off_rejected(gaussian_blow_up_inverse(20.0), 1000, 1000, 1000, 0.95)
    assert not trade_off_rejected(gaussian_blow_up_inverse(0.5), 1000, 1000, 500, 0.95)  # chance level


@pytest.mark.parametrize(("call", "message"), [
    (lambda: epsilon_lower_bound(10, 11, 0.95), "correct=11 exceeds guesses=10"),
    (lambda: epsilon_lower_bound(10, 5, 0.95, 1e-5), "give canaries=m"),
    (lambda: epsilon_lower_bound(10, 5, 1.5), "confidence=1.5 must be"),
    (lambda: epsilon_lower_bound(20, 5, 0.95, 1e-5, canaries=10), "guesses=20 exceeds canaries=10"),
    (lambda: epsilon_lower_bound(10, 5, 0.95, -1.0), "delta=-1.0 must be"),
])
def test_bad_input_is_refused_with_what_to_change(call, message):
    with pytest.raises(InvalidConfiguration, match=message):
        call()
