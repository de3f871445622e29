"""Issue 30: the conditional ratio test that bounds an event's ε for claims with δ = 0
(``admmcheck.audit.statistics.estimators.ratio_epsilon_bound``), checked against scipy's conditional odds-ratio
interval, the closed form of the odds-to-ratio step, its level at the null's boundary, and its leak floor."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.stats.contingency import odds_ratio

from admmcheck.audit.statistics.estimators import (CORRECTION_SHARE, RATIO_TEST, TWO_INTERVALS, better_estimator, cp_lower,
                                        cp_upper, epsilon_bound, odds_ratio_lower, ratio_epsilon_bound,
                                        ratio_leak_floor)

TABLES = [(5, 100, 1, 100), (50, 1000, 30, 1000), (552, 100_000, 397, 100_000),
          (10, 10, 0, 10), (7, 50, 0, 60), (300, 1000, 250, 1200), (3, 40, 9, 40)]


@pytest.mark.parametrize("count_a, n_a, count_b, n_b", TABLES)
def test_the_odds_ratio_bound_is_scipys_conditional_interval(count_a, n_a, count_b, n_b):
    """A second implementation: scipy sums the whole noncentral hypergeometric law, ours a window of it."""
    table = [[count_a, n_a - count_a], [count_b, n_b - count_b]]
    for alpha in (0.05, 0.0025):
        expected = odds_ratio(table, kind="conditional").confidence_interval(1 - alpha, alternative="greater").low
        assert odds_ratio_lower(count_a, n_a, count_b, n_b, alpha) == pytest.approx(expected, rel=1e-7)


def test_no_count_at_the_least_value_the_total_allows_bounds_anything():
    assert odds_ratio_lower(0, 100, 3, 100, 0.05) == 0.0
    assert odds_ratio_lower(10, 100, 50, 50, 0.05) == 0.0  # t = 60 and n_b = 50: X >= 10 whatever ψ
    assert ratio_epsilon_bound(0, 100, 3, 100, 0.05) == -math.inf


def test_the_ratio_bound_is_the_odds_bound_times_the_closed_form_correction():
    """p_a / p_b = ψ (1 − p_a) / (1 − p_b): the odds bound at (1 − share)·alpha, 1 − p_a from above and
    1 − p_b from below by Clopper-Pearson (scipy's Beta quantiles) at share·alpha/2 each."""
    count_a, n_a, count_b, n_b, alpha = 600, 2000, 500, 2000, 0.05
    share = CORRECTION_SHARE * alpha / 2
    psi = odds_ratio([[count_a, n_a - count_a], [count_b, n_b - count_b]],
                     kind="conditional").confidence_interval(1 - (1 - CORRECTION_SHARE) * alpha, "greater").low
    upper_a = stats.beta.ppf(1 - share, count_a + 1, n_a - count_a)
    lower_b = stats.beta.ppf(share, count_b, n_b - count_b + 1)
    expected = math.log(psi) + math.log(1 - upper_a) - math.log(1 - lower_b)
    assert ratio_epsilon_bound(count_a, n_a, count_b, n_b, alpha) == pytest.approx(expected, rel=1e-6)


def test_the_ratio_bound_holds_its_level_where_the_claim_is_exactly_true():
    """At the null's boundary p_a = e^ε p_b with common events (p_b = 0.2), where the odds ratio exceeds the
    ratio by (1 − p_b)/(1 − p_a) = 1.10: the bound exceeds ε in at most alpha of the runs. Without the
    correction (the odds bound alone) it would in about two thirds of them."""
    rng = np.random.default_rng(7)
    epsilon, p_b, n, alpha, runs = 0.3, 0.2, 2000, 0.2, 1000
    p_a = math.exp(epsilon) * p_b
    count_a, count_b = rng.binomial(n, p_a, runs), rng.binomial(n, p_b, runs)
    bounds = np.array([ratio_epsilon_bound(int(a), n, int(b), n, alpha) for a, b in zip(count_a, count_b)])
    odds_only = np.array([math.log(odds_ratio_lower(int(a), n, int(b), n, alpha)) for a, b in zip(count_a, count_b)])
    assert np.mean(bounds > epsilon) <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)
    assert np.mean(odds_only > epsilon) > 0.5


def test_the_ratio_bound_gains_on_rare_events_and_two_intervals_on_common_ones_and_the_better_one_is_chosen():
    """Why the audit chooses per event (events.with_estimator): at 10^6 a side and 95 %, the optimal event of
    SVT6 (probabilities 0.00552 and 0.00397, ln ratio 0.330) gets 0.295 from the ratio test and 0.2725 from
    two Clopper-Pearson intervals at 2.5 % each; events of probability 0.3 and 0.25 the other way round."""
    n = 1_000_000

    def box(count_a, count_b):
        return float(epsilon_bound(cp_lower(count_a, n, 0.025), cp_upper(count_b, n, 0.025), 0.0))

    assert ratio_epsilon_bound(5521, n, 3969, n, 0.05) == pytest.approx(0.2950, abs=5e-4)
    assert box(5521, 3969) == pytest.approx(0.2725, abs=5e-4)
    assert ratio_epsilon_bound(300_000, n, 250_000, n, 0.05) < box(300_000, 250_000) < math.log(0.3 / 0.25)
    assert better_estimator(5521, n, 3969, n, 0.05) == (RATIO_TEST, ratio_epsilon_bound(5521, n, 3969, n, 0.05))
    assert better_estimator(300_000, n, 250_000, n, 0.05) == (TWO_INTERVALS, box(300_000, 250_000))


@pytest.mark.parametrize("n, alpha, epsilon", [(850_000, 0.025, 0.1), (85_000, 0.025, 1.0), (1000, 0.05, 1.0)])
def test_the_ratio_leak_floor_is_the_least_count_that_refutes(n, alpha, epsilon):
    """One count fewer refutes nothing, the floor's count does (a direct scan, the second implementation)."""
    floor = ratio_leak_floor(n, alpha, epsilon)
    t = round(floor * n)
    assert ratio_epsilon_bound(t, n, 0, n, alpha) > epsilon >= ratio_epsilon_bound(t - 1, n, 0, n, alpha)
    assert floor < 1.0
    assert ratio_leak_floor(170, 0.05, 8.0) == 1.0  # no count of 170 samples refutes ε = 8
