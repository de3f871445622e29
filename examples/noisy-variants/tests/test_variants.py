"""The variants' own checks, with admmcheck's pytest plugin (installed with admmcheck): convergence to the CVXPY
optimum, the convergence theorem's conditions decided exactly, and the privacy claims audited. The statistical
assertions are marked ``@pytest.mark.admmcheck``: the session's confidence (``--admmcheck-confidence``, 0.95) holds
for all of them together.

    pytest tests --admmcheck-profile smoke
"""

from __future__ import annotations

import pytest

from admmcheck.problems.datasets import make_problem, synthetic
from admmcheck.mechanisms.registry import REGISTRY
from admmcheck.problems.networks import ring
from admmcheck.testing import PrivacyViolation, assert_conditions_hold, assert_converges, assert_private
from noisy_variants import register
from noisy_variants.noisy_admm import run_noisy_admm

if "noisy-admm" not in REGISTRY:  # installed, the entry point has registered them already
    register(REGISTRY)


def test_noisy_admm_without_noise_reaches_the_optimum():
    problem = make_problem(synthetic(200, 5, seed=1), 4)
    assert_converges(run_noisy_admm, problem=problem, network=ring(4), iterations=300, alpha=float("inf"))


def test_its_convergence_theorem_holds_on_the_data():
    # without noise it is ADMM: M-ADMM with the constant penalty eta_i(t) = theta (Theorem 3.1)
    assert_conditions_hold("noisy-admm", graph="ring:4", eta=("1/2",), theta="1/2", dataset="synthetic")


@pytest.mark.admmcheck(assertions=2)
def test_both_variants_keep_their_claims():
    assert_private("noisy-admm", samples=1_000, sequential=False)
    assert_private("clipped-sharing", samples=1_000, sequential=False)


@pytest.mark.admmcheck
@pytest.mark.xfail(raises=PrivacyViolation, strict=True,
                   reason="quiet-admm draws one hundredth of the noise its claim is for")
def test_the_broken_variant_is_caught():
    assert_private("quiet-admm", samples=1_000)
