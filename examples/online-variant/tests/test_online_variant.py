"""The variant's own checks, with admmcheck's pytest plugin (installed with admmcheck): without noise or clip it is
admmcheck's online dual averaging (Algorithm 1) with its noise off; one changed function moves a round's messages by
exactly the sensitivity its claim uses; the audit finds no violation of the zCDP claim, and catches the deliberately
broken copy. The statistical assertions are marked ``@pytest.mark.admmcheck``: the session's confidence
(``--admmcheck-confidence``, 0.95) holds for all of them together.

    pytest tests --admmcheck-profile smoke
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from admmcheck.algorithms.dpsda import run_dpsda_c
from admmcheck.mechanisms.registry import REGISTRY
from admmcheck.testing import PrivacyViolation, assert_private
from online_variant import register
from online_variant.variant import AUDIT_SETTING, run_gaussian_dual_averaging, zcdp_claim

if "gaussian-dual-averaging" not in REGISTRY:  # installed, the entry point has registered it already
    register(REGISTRY)


def test_without_noise_or_clip_it_is_the_papers_online_dual_averaging():
    setting = replace(AUDIT_SETTING, nodes=5, dim=10, iterations=30, window=3)
    problem, graphs = setting.problem(), setting.graphs(False)
    ours = run_gaussian_dual_averaging(problem, graphs=graphs, sigma=0.0, clip=math.inf, iterations=30, seeds=[3])
    paper = run_dpsda_c(problem, graphs=graphs, sigma=0.0, iterations=30, seeds=[3])
    np.testing.assert_allclose(ours.extras["broadcast"], paper.extras["broadcast"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.extras["decision"], paper.extras["decision"], rtol=0, atol=1e-12)


def test_one_changed_function_moves_a_rounds_messages_by_the_sensitivity_of_the_claim():
    """At the audit setting (n = 4, T = 2, c = 0.05) the family's neighbours (round 1's target negated) move the
    noise-free messages of round 2 by 2c n √n, the Δ of ρ = (T − 1) Δ²/(2σ²): the claim is tight there."""
    n, c, sigma, T = AUDIT_SETTING.nodes, AUDIT_SETTING.clip, AUDIT_SETTING.sigma, AUDIT_SETTING.iterations
    spec = REGISTRY.mechanism("gaussian-dual-averaging")
    first, second = spec.neighbours(AUDIT_SETTING.problem(), 1, spec.neighbour_kinds[0])
    graphs = AUDIT_SETTING.graphs(False)
    runs = [run_gaussian_dual_averaging(problem, graphs=graphs, sigma=0.0, clip=c, iterations=T, seeds=[0])
            for problem in (first, second)]
    moved = np.linalg.norm((runs[0].extras["broadcast"] - runs[1].extras["broadcast"])[0], axis=(1, 2))
    assert moved[0] == 0 and moved[1] == pytest.approx(2 * c * n * math.sqrt(n), rel=1e-12)
    assert zcdp_claim(AUDIT_SETTING).rho == pytest.approx((T - 1) * (2 * c * n ** 1.5) ** 2 / (2 * sigma ** 2))


@pytest.mark.admmcheck
def test_it_keeps_its_claim():
    assert_private("gaussian-dual-averaging", AUDIT_SETTING, samples=1_000)


@pytest.mark.admmcheck
@pytest.mark.xfail(raises=PrivacyViolation, strict=True,
                   reason="gaussian-dual-averaging-quiet draws one hundredth of the noise its claim is for")
def test_the_broken_copy_is_caught():
    assert_private("gaussian-dual-averaging-quiet", AUDIT_SETTING, samples=1_000)
