"""Claim: the black-box auditor flags broken mechanisms (issue 15: the DP-Sniper benchmark's and ADMM's bugs)
within 10⁵ samples a side, with a bound that never exceeds the true ε where it is known, and a δ-type leak
(issue 30) at 10⁶. Each audit takes seconds: ``ci`` runs one broken mechanism of each kind (a scalar's wrong
scale, a noisy max that leaks its value, ADMM noise reused (ε = ∞), a Gaussian's wrong σ), ``thorough``
(HYPOTHESIS_PROFILE=thorough) every one, and the δ-type leak."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from admmcheck.audit import PrivacyClaim, Source, audit

MECHANISMS = str(Path(__file__).resolve().parents[1] / "tests" / "mechanisms.py")
#: the broken mechanisms ``ci`` audits, one of each kind
IN_CI = ("laplace_half_scale", "noisy_max_with_value", "admm_noise_reused", "gaussian_wrong_sigma")


def _thorough() -> bool:
    return settings().max_examples >= 100


def _audit(mechanism: str, neighbours: str, epsilon: float = 1.0, delta: float = 0.0, **kwargs):
    kwargs.setdefault("samples", 100_000)
    kwargs.setdefault("workers", 2)
    return audit(Source(f"{MECHANISMS}:{mechanism}"), Source(f"{MECHANISMS}:{neighbours}"),
                 PrivacyClaim(epsilon, delta), **kwargs)


# (mechanism, neighbours, claimed epsilon, claimed delta, true epsilon where known exactly)
BROKEN = [
    ("laplace_half_scale", "scalar_pair", 1.0, 0.0, 2.0),
    ("histogram_wrong_scale", "histogram_pair", 1.0, 0.0, 2.0),
    ("vector_l2_sensitivity", "vector_pair", 1.0, 0.0, 2.0),
    ("noisy_max_with_value", "max_pair", 1.0, 0.0, None),
    ("noisy_max_too_little_noise", "max_pair", 1.0, 0.0, None),
    ("svt_no_threshold_noise", "svt_pair", 1.0, 0.0, None),
    ("svt_never_stops", "svt_mixed_pair", 1.0, 0.0, None),
    ("admm_noise_missing_once", "scalar_pair", 1.0, 0.0, np.inf),
    ("admm_noise_reused", "scalar_pair", 1.0, 0.0, np.inf),
    ("gamma_norm_shape_d_minus_1", "plane_pair", 1.0, 0.0, np.inf),
    ("low_rank_noise", "plane_pair", 1.0, 0.0, np.inf),
    ("gaussian_wrong_sigma", "vector_pair", 0.5, 1e-5, None),
]


@pytest.mark.parametrize("mechanism, neighbours, epsilon, delta, true_epsilon", BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_mechanisms_are_flagged_within_1e5_samples(mechanism, neighbours, epsilon, delta, true_epsilon):
    if mechanism not in IN_CI and not _thorough():
        pytest.skip("the thorough profile audits it (HYPOTHESIS_PROFILE=thorough)")
    result = _audit(mechanism, neighbours, epsilon, delta, seed=7)
    assert result.verdict == "violation"
    assert result.epsilon_lower_bound > epsilon
    if true_epsilon is not None:
        assert result.epsilon_lower_bound <= true_epsilon  # a lower bound, never above the truth
    a, b = result.numerator, 1 - result.numerator
    if result.estimator == "two intervals":
        lower_a, upper_b = result.intervals[a][0], result.intervals[b][1]
        assert np.log((lower_a - delta) / upper_b) == pytest.approx(result.epsilon_lower_bound, rel=1e-12)
    else:  # the conditional ratio test, from the same counts at the deciding event's level
        from admmcheck.audit.statistics.estimators import ratio_epsilon_bound

        level = max(r["level"] for r in result.candidates if r["event"] == result.event and r["pair"] == result.pair)
        n = result.bounding_samples
        assert delta == 0 and ratio_epsilon_bound(result.counts[a], n[a], result.counts[b], n[b], level) == \
            pytest.approx(result.epsilon_lower_bound, rel=1e-12)


def test_a_delta_type_leak_of_probability_1e_3_is_found_at_1e6_samples():
    """Issue 30: a loss of up to 2.94 on an event of probability 1e-3 under one dataset only (the
    mechanism's docstring works out both numbers); the claim (1, 1e-5) is refuted, and the bound stays
    below the mechanism's pure epsilon, ln 18.9."""
    if not _thorough():
        pytest.skip("the thorough profile runs it (HYPOTHESIS_PROFILE=thorough): 10^6 samples a side")
    result = _audit("laplace_rare_leak", "scalar_pair", 1.0, 1e-5, samples=1_000_000, seed=0)
    assert result.verdict == "violation"
    assert 1.0 < result.epsilon_lower_bound <= math.log((1 - 1e-3) * math.e + 2e-3 * math.exp(9))
