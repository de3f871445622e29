"""Issue 53: the pytest plugin's session budget keeps its promise. A session of 20 statistical assertions
(``admmcheck.testing.assert_private``, as the plugin runs them: each with an equal share of the session's error and a
seed derived from the session seed and its test id) on correct mechanisms whose claims are tight, the Laplace
mechanism at its ε and the Gaussian mechanism at its exact (ε, δ) curve, fails in at most 1 − confidence of
sessions.

The thorough profile runs 100 sessions (2,000 fixed-n audits of 2,000 samples per side, the smoke profile's; about
30 s a session on 2 cores: ``HYPOTHESIS_PROFILE=thorough pytest properties/test_assertion_budget.py``); the ci
profile runs none (one session would take half a minute of the suite's eight). The
count of failed sessions is tested with a one-sided binomial test at level 0.001 (``scipy.stats.binomtest``), as the
calibration property of the audit does for unseeded mechanisms: a fixed count would fail a correct budget in a
share of runs of its own.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from admmcheck.audit import Pair
from admmcheck.testing import CURRENT, PrivacyViolation, Session, assert_private

SESSIONS = {"thorough": 100}.get(os.environ.get("HYPOTHESIS_PROFILE", "ci"), 0)
ASSERTIONS, CONFIDENCE = 20, 0.95
SIGMA, EPSILON = 1.0, 1.0  # the Gaussian mechanism's scale and the ε its δ is computed at (sensitivity 1)


def gaussian_delta(epsilon: float, sigma: float) -> float:
    """The exact δ(ε) of the Gaussian mechanism of sensitivity 1 (Balle & Wang 2018, Theorem 8)."""
    return float(norm.cdf(0.5 / sigma - epsilon * sigma) - math.exp(epsilon) * norm.cdf(-0.5 / sigma - epsilon * sigma))


def laplace(data, rng):
    return float(np.sum(data)) + rng.laplace(scale=1.0 / EPSILON)


def gaussian(data, rng):
    return float(np.sum(data)) + rng.normal(scale=SIGMA)


def pair():
    return Pair(np.array([0.0]), np.array([1.0]))


def _session(seed: int) -> bool:
    """Whether one session of ASSERTIONS assertions (half Laplace, half Gaussian) fails."""
    failed = False
    for k in range(ASSERTIONS):
        test = f"test_budget.py::test_{k}"
        token = CURRENT.set(Session(test, (1 - CONFIDENCE) / ASSERTIONS, 1, seed, "smoke", lambda result: None))
        try:
            if k % 2:
                assert_private(gaussian, pair, epsilon=EPSILON, delta=gaussian_delta(EPSILON, SIGMA), workers=2,
                               sequential=False)
            else:
                assert_private(laplace, pair, epsilon=EPSILON, workers=2, sequential=False)
        except PrivacyViolation:
            failed = True
        finally:
            CURRENT.reset(token)
    return failed


@pytest.mark.skipif(SESSIONS == 0, reason="the thorough profile runs this one (HYPOTHESIS_PROFILE=thorough)")
def test_a_session_of_correct_tight_mechanisms_fails_in_at_most_one_minus_confidence_of_sessions():
    failed = sum(_session(seed) for seed in range(SESSIONS))
    print(f"{failed} of {SESSIONS} sessions failed", file=sys.stderr)
    assert binomtest(failed, SESSIONS, 1 - CONFIDENCE, alternative="greater").pvalue > 1e-3, (failed, SESSIONS)


def test_the_gaussian_delta_is_the_exact_curve():
    """δ(ε) of Theorem 8 against a numerical integration of (1 − e^{ε − L})₊ over the privacy loss L ~ N(μ, 2μ),
    μ = 1/(2σ²): the identity that makes the Gaussian claim tight."""
    mu = 0.5 / SIGMA**2
    losses = np.linspace(mu - 12 * math.sqrt(2 * mu), mu + 12 * math.sqrt(2 * mu), 400_001)
    density = norm.pdf(losses, loc=mu, scale=math.sqrt(2 * mu))
    integral = float(np.trapezoid(np.clip(1 - np.exp(EPSILON - losses), 0, None) * density, losses))
    assert gaussian_delta(EPSILON, SIGMA) == pytest.approx(integral, rel=1e-6)
