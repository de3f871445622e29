"""The variant's own checks, with admmcheck's pytest plugin (installed with admmcheck): without noise it is ADMM and
reaches the CVXPY optimum; its claim is the composed Gaussian mechanism's (ε, 1e-5); the audit finds no violation of
it, and catches the deliberately broken copy. The statistical assertions are marked ``@pytest.mark.admmcheck``: the
session's confidence (``--admmcheck-confidence``, 0.95) holds for all of them together.

    pytest tests --admmcheck-profile smoke
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from admmcheck.algorithms.admm import run_admm
from admmcheck.problems.datasets import make_problem, synthetic
from admmcheck.mechanisms.registry import REGISTRY
from admmcheck.problems.networks import ring
from admmcheck.testing import PrivacyViolation, assert_converges, assert_private
from gaussian_admm import register
from gaussian_admm.variant import AUDIT_SETTING, GaussianSetting, gaussian_admm_claim, run_gaussian_admm

if "gaussian-admm" not in REGISTRY:  # installed, the entry point has registered it already
    register(REGISTRY)


def test_without_noise_or_clip_it_is_admm_and_reaches_the_optimum():
    problem = make_problem(synthetic(200, 5, seed=1), 4)
    assert_converges(run_gaussian_admm, problem=problem, network=ring(4), iterations=300, sigma=0.0, clip=math.inf)
    ours = run_gaussian_admm(problem, ring(4), iterations=20, seeds=[0], sigma=0.0, clip=math.inf)
    admm = run_admm(problem, ring(4), iterations=20, seeds=[0], initial=np.zeros((4, problem.dim)))
    np.testing.assert_allclose(ours.primal, admm.primal, rtol=0, atol=1e-12)


@pytest.mark.parametrize("clip, sigma, iterations", [(0.05, 0.5, 3), (0.5, 2.0, 40)])
def test_its_claim_is_the_composed_gaussian_mechanisms(clip, sigma, iterations):
    """T Gaussian mechanisms of sensitivity 2c and noise σ are μ-GDP with μ = 2c√T/σ, whose privacy profile is
    δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong, Roth & Su 2022, Cor. 2.13): its ε at δ = 1e-5, solved
    here."""
    mu = 2 * clip * math.sqrt(iterations) / sigma
    epsilon = optimize.brentq(lambda e: stats.norm.cdf(-e / mu + mu / 2)
                              - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2) - 1e-5, 0.0, 100.0, xtol=1e-12)
    claim = gaussian_admm_claim(GaussianSetting(clip=clip, sigma=sigma, iterations=iterations))
    assert claim.notion == "approximate-dp" and claim.delta == 1e-5
    assert claim.epsilon == pytest.approx(epsilon, rel=1e-6)


@pytest.mark.admmcheck
def test_it_keeps_its_claim():
    assert_private("gaussian-admm", AUDIT_SETTING, samples=1_000)


@pytest.mark.admmcheck
@pytest.mark.xfail(raises=PrivacyViolation, strict=True,
                   reason="gaussian-admm-quiet draws one hundredth of the noise its claim is for")
def test_the_broken_copy_is_caught():
    assert_private("gaussian-admm-quiet", AUDIT_SETTING, samples=1_000)
