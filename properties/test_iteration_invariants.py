"""Claims about the iterations and the bounds, on generated graphs, datasets and schedules:

* convergence to the CVXPY optimum (ADMM, M-ADMM with a non-decreasing schedule, R-ADMM), asserted with
  ``admmcheck.testing.assert_converges``, as a researcher's own tests would;
* Σ_i λ_i(t) = 0 under zero initialisation, i.e. the dual stays in the range of D − A (the
  proofs' λ(t) ∈ range(L)), for ADMM, M-ADMM, PP and private R-ADMM;
* the edge-form duals of (4)-(7) (supplement App. A, Forero et al. Lemma 3): lambda^a_ij(t) =
  lambda^b_ij(t) = -lambda^a_ji(t) and w_ij(t) = (f_i(t) + f_j(t))/2 under zero initialisation;
* the privacy bounds (26) and (30) are monotone: larger α costs more, larger η and B_i less.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from admmcheck.algorithms import run_admm, run_madmm, run_pp, run_private_radmm, run_radmm
from admmcheck.solving.oracle import centralized_optimum
from admmcheck.privacy import BoundSetting, pp_bound, radmm_bound
from admmcheck.strategies import networks_and_problems, nondecreasing_schedules
from admmcheck.testing import assert_converges


@settings(max_examples=settings().max_examples // 12 if settings().max_examples >= 100 else 1)  # 41 thorough
@given(networks_and_problems(min_nodes=2, max_nodes=5, max_dim=3, max_samples=12), st.integers(0, 1000))
def test_admm_madmm_radmm_reach_the_cvxpy_optimum(case, seed):
    network, problem = case
    optimum = centralized_optimum(problem)
    # the theorems promise convergence, not a rate: weakly regularised problems (rho = 0.05) need
    # thousands of steps (the thorough profile found one at 1.2e-6 after 1,500), so the horizon is long
    case = {"problem": problem, "network": network, "seed": seed, "reference": optimum, "tolerance": 1e-6}
    assert_converges(run_admm, eta=1.0, iterations=6000, **case)
    assert_converges(run_madmm, theta=1.0, penalty=1.0, iterations=6000, **case)
    assert_converges(run_radmm, eta=1.0, gamma=0.5, iterations=12000, **case)


@given(networks_and_problems(), st.integers(0, 1000), st.data())
def test_duals_sum_to_zero_and_stay_in_the_range_of_the_laplacian(case, seed, data):
    network, problem = case
    T = 8
    schedule = data.draw(nondecreasing_schedules(T, network.nodes))
    runs = [run_admm(problem, network, iterations=T, seeds=[seed]),
            run_madmm(problem, network, penalty=schedule, theta=float(schedule.min()), iterations=T, seeds=[seed]),
            run_pp(problem, network, penalty=schedule, theta=float(schedule.min()), alpha=3.0, iterations=T,
                   seeds=[seed]),
            run_private_radmm(problem, network, eta=1.0, gamma=0.3, alpha=3.0, iterations=T, seeds=[seed])]
    projector = np.linalg.pinv(network.laplacian) @ network.laplacian  # onto range(D − A)
    for run in runs:
        scale = 1.0 + np.abs(run.dual).max()
        np.testing.assert_allclose(run.dual.sum(axis=2), 0.0, atol=1e-10 * scale)
        np.testing.assert_allclose(np.einsum("ij,stjd->stid", projector, run.dual), run.dual, atol=1e-9 * scale)


@given(networks_and_problems(), st.integers(0, 1000), st.floats(0.1, 5.0))
def test_edge_duals_are_equal_and_antisymmetric_as_appendix_a_claims(case, seed, eta):
    from admmcheck.algorithms.admm_edge import edge_iterations

    network, problem = case
    start = np.random.default_rng(seed).normal(size=(1, network.nodes, problem.dim))
    off_graph = ~network.adjacency.astype(bool)
    for state in edge_iterations(problem, network, start, eta, iterations=8):
        scale = 1.0 + np.abs(state.lam_a).max()
        np.testing.assert_allclose(state.lam_a, state.lam_b, atol=1e-10 * scale)
        np.testing.assert_allclose(state.lam_a, -np.swapaxes(state.lam_a, 1, 2), atol=1e-10 * scale)
        midpoint = 0.5 * (state.f[:, :, None, :] + state.f[:, None, :, :])
        np.testing.assert_allclose(state.w[:, ~off_graph], midpoint[:, ~off_graph],
                                   atol=1e-10 * (1.0 + np.abs(state.f).max()))


@given(st.lists(st.integers(2, 60), min_size=2, max_size=6), st.floats(0.1, 5.0), st.floats(0.1, 10.0),
       st.floats(1.01, 3.0), st.integers(1, 20))
def test_privacy_bounds_are_monotone_in_alpha_eta_and_sizes(sizes, eta, alpha, factor, iterations):
    nodes = len(sizes)
    degrees = tuple([2] * nodes) if nodes > 2 else (1, 1)
    setting = BoundSetting(sizes=tuple(sizes), degrees=degrees, C=1.0, rho=1.0, max_feature_norm=1.0)
    larger = BoundSetting(sizes=tuple(int(b * factor) + 1 for b in sizes), degrees=degrees, C=1.0, rho=1.0,
                          max_feature_norm=1.0)
    for bound in (lambda s, e, a: pp_bound(s, e, a, theta=e, iterations=iterations),
                  lambda s, e, a: radmm_bound(s, e, a, iterations=iterations)):
        base = np.max(bound(setting, eta, alpha).per_node)
        assert np.max(bound(setting, eta, alpha * factor).per_node) > base
        assert np.max(bound(setting, eta * factor, alpha).per_node) < base
        assert np.max(bound(larger, eta, alpha).per_node) < base


def _descent(problem, network, schedule, theta, seed):
    from admmcheck.experiments.convergence import madmm_descent_terms

    run = run_madmm(problem, network, penalty=schedule, theta=theta, iterations=len(schedule), seeds=[seed])
    optimum = centralized_optimum(problem)
    terms, scales = madmm_descent_terms(run, network, optimum, theta)
    slack = 1e-9 * scales + 1e-13  # rounding: Z* is polished to machine precision
    return terms, slack


@settings(max_examples=max(settings().max_examples // 5, 2))
@given(networks_and_problems(min_nodes=2, max_nodes=5, max_dim=3, max_samples=12), st.integers(0, 1000), st.data())
def test_madmm_descent_inequality_19_holds_with_a_common_penalty(case, seed, data):
    """Theorem 3.1's (19), ⟨Z(t+1) − Z*, J(t+1)(Z(t+1) − Z(t))⟩ <= 0, along trajectories whose
    penalty η(t) >= θ is non-decreasing and the same at every node (W(t) = η(t) I). With
    node-specific penalties it fails: see the next test."""
    network, problem = case
    common = data.draw(nondecreasing_schedules(25, 1, low=0.2))
    schedule = np.repeat(common, network.nodes, axis=1)
    theta = data.draw(st.floats(0.05, float(schedule.min())))
    terms, slack = _descent(problem, network, schedule, theta, seed)
    assert np.all(terms <= slack), (int(np.argmax(terms - slack)), float(np.max(terms)))


def test_madmm_descent_inequality_19_fails_with_node_specific_penalties():
    """The counterexample the thorough profile found for Theorem 3.1's (19) with η_i(t) non-decreasing
    and >= θ as the theorem asks, but different per node: two nodes, d = 1, η_1(t) = 2,
    η_2(t) = 1.125^(t-1), θ = 1/4. The proof's step ⟨f̂, (W − θI)(D − A) f̂⟩ >= 0 needs (W − θI)(D − A)
    to be positive on its quadratic form, which a non-uniform W breaks; the iterates stall
    (Σ_t 1/η_2(t) < ∞) and the left side of (19) turns positive."""
    from admmcheck.problems.networks import path
    from admmcheck.problems import ConsensusProblem

    problem = ConsensusProblem((np.array([[0.12573022]]), np.array([[0.64042265]])),
                               (np.array([-1.0]), np.array([-1.0])), C=1.0, rho=2.0)
    schedule = np.stack([np.full(25, 2.0), 1.125 ** np.arange(25)], axis=1)
    terms, slack = _descent(problem, path(2), schedule, 0.25, 0)
    assert terms[-1] > 1000 * slack[-1] and terms[-1] > 5e-6  # positive beyond every error bound
    assert np.all(terms[:20] < 0)
