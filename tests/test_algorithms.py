"""Reference algorithms: convergence to the CVXPY optimum, equivalences the papers prove,
node-wise KKT checks of every update, batching, and parameter validation."""

from __future__ import annotations

import numpy as np
import pytest

from admmcheck.algorithms import run_admm, run_admm_edge, run_madmm, run_radmm
from admmcheck.experiments.convergence import PAPER_ETA1, SLOW_GROWTH
from admmcheck.problems.datasets import make_problem, synthetic
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.solving.local_solver import solve_local
from admmcheck.problems.networks import random_connected, ring, star
from admmcheck.solving.runs import trial_seeds
from admmcheck.solving.schedules import GeometricSchedule

GAP = 1e-6


# ------------------------------------------------------------ acceptance: convergence
def test_admm_reaches_the_cvxpy_optimum(acceptance_case):
    problem, network, optimum = acceptance_case
    run = run_admm(problem, network, eta=0.5, iterations=200, seeds=0, reference=optimum)
    assert abs(run.objective_gap[0, -1]) <= GAP
    assert run.consensus_error[0, -1] <= 1e-4


def test_madmm_with_growing_private_penalties_reaches_the_optimum(acceptance_case):
    problem, network, optimum = acceptance_case
    schedule = GeometricSchedule(PAPER_ETA1, SLOW_GROWTH)  # q_i >= 1, eta_i(t) >= theta
    assert np.all(np.diff(schedule.table(200, 5), axis=0) >= 0) and schedule.table(1, 5).min() >= 0.5
    run = run_madmm(problem, network, theta=0.5, penalty=schedule, iterations=200, seeds=0, reference=optimum)
    assert abs(run.objective_gap[0, -1]) <= GAP
    assert run.consensus_error[0, -1] <= 1e-4


def test_radmm_reaches_the_optimum(acceptance_case):
    problem, network, optimum = acceptance_case
    run = run_radmm(problem, network, eta=0.5, gamma=0.5, iterations=200, seeds=0, reference=optimum)
    assert abs(run.objective_gap[0, -1]) <= GAP
    assert run.consensus_error[0, -1] <= 1e-4


def test_gap_is_large_before_convergence(synthetic_case):
    """The gap metric can fail: after one iteration from a random start it is far from 0."""
    problem, network, optimum = synthetic_case
    run = run_admm(problem, network, iterations=1, seeds=0, reference=optimum)
    assert run.objective_gap[0, 0] > 1e-2 and run.consensus_error[0, 0] > 1e-1


# -------------------------------------------------------- acceptance: equivalences
@pytest.mark.parametrize("network_name", ["ring", "random", "star"])
def test_edge_based_admm_matches_simplified_admm(acceptance_case, network_name):
    problem, _, _ = acceptance_case
    network = {"ring": ring(5), "random": random_connected(5, seed=4), "star": star(5)}[network_name]
    edge = run_admm_edge(problem, network, eta=0.7, iterations=40, seeds=3)
    simple = run_admm(problem, network, eta=0.7, iterations=40, seeds=3)
    np.testing.assert_allclose(edge.primal, simple.primal, rtol=0, atol=1e-9)
    np.testing.assert_allclose(edge.dual, simple.dual, rtol=0, atol=1e-9)


def test_madmm_with_eta_equal_theta_reproduces_admm(acceptance_case):
    problem, network, _ = acceptance_case
    madmm = run_madmm(problem, network, penalty=0.8, theta=0.8, iterations=60, seeds=1)
    admm = run_admm(problem, network, eta=0.8, iterations=60, seeds=1)
    np.testing.assert_allclose(madmm.primal, admm.primal, rtol=0, atol=1e-12)
    np.testing.assert_allclose(madmm.dual, admm.dual, rtol=0, atol=1e-12)


# --------------------------------------------------- updates checked node by node
def test_madmm_iterates_satisfy_kkt_12_and_dual_update_11(synthetic_case):
    problem, network, _ = synthetic_case
    schedule = GeometricSchedule((0.55, 0.65, 0.6, 0.55, 0.6), (1.01, 1.03, 1.1, 1.2, 1.02))
    theta = 0.5
    run = run_madmm(problem, network, penalty=schedule, theta=theta, iterations=8, seeds=2)
    eta = schedule.table(8, 5)
    f, lam = run.primal[0], run.dual[0]
    for t in range(8):
        for i in range(5):
            neighbours = network.neighbors(i)
            gradient = problem.local_gradients(f[t + 1])[i]
            residual = gradient + 2 * lam[t, i] + eta[t, i] * sum(
                2 * f[t + 1, i] - (f[t, i] + f[t, j]) for j in neighbours
            )  # eq. (12)
            assert np.linalg.norm(residual) <= 1e-9
            dual_step = theta / 2 * sum(f[t + 1, i] - f[t + 1, j] for j in neighbours)  # eq. (11)
            np.testing.assert_allclose(lam[t + 1, i], lam[t, i] + dual_step, atol=1e-14)


def test_radmm_even_steps_follow_eq_10_and_keep_the_dual(synthetic_case):
    problem, network, _ = synthetic_case
    eta, gamma = 0.5, 0.3
    run = run_radmm(problem, network, eta=eta, gamma=gamma, iterations=6, seeds=5)
    f, lam = run.primal[0], run.dual[0]
    for t in (2, 4, 6):
        np.testing.assert_array_equal(lam[t], lam[t - 1])  # eq. (11)
        for i in range(5):
            neighbours = network.neighbors(i)
            gradient = problem.local_gradients(f[t - 1])[i]
            direction = gradient + 2 * lam[t - 1, i] + eta * sum(f[t - 1, i] - f[t - 1, j] for j in neighbours)
            expected = f[t - 1, i] - direction / (2 * eta * len(neighbours) + gamma)  # eq. (10)
            np.testing.assert_allclose(f[t, i], expected, atol=1e-14)
    assert np.all(run.newton_steps[0, 1::2] == 0) and np.all(run.newton_steps[0, 0::2] > 0)


def test_local_solver_matches_scipy_on_one_subproblem(synthetic_case):
    from scipy.optimize import minimize

    problem, _, _ = synthetic_case
    rng = np.random.default_rng(0)
    linear = rng.standard_normal((1, 5, problem.dim))
    curvature = np.array([0.0, 0.5, 1.0, 2.0, 4.0])
    solution = solve_local(problem, linear, curvature, start=np.zeros((1, 5, problem.dim)))
    for i in range(5):
        def phi(f, i=i):
            stacked = np.zeros((5, problem.dim))
            stacked[i] = f
            return problem.local_objectives(stacked)[i] + linear[0, i] @ f + curvature[i] / 2 * f @ f

        reference = minimize(phi, np.zeros(problem.dim), method="BFGS", options={"gtol": 1e-11})
        np.testing.assert_allclose(solution.f[0, i], reference.x, atol=1e-6)


# ---------------------------------------------------------------------- batching
def test_batch_equals_separate_runs_with_the_same_seeds(synthetic_case):
    problem, network, _ = synthetic_case
    seeds = trial_seeds(11, 12)
    schedule = GeometricSchedule(0.5, 1.05)
    batch = run_madmm(problem, network, penalty=schedule, theta=0.5, iterations=15, seeds=seeds)
    assert batch.primal.shape == (12, 16, 5, problem.dim)
    for k, seed in enumerate(seeds):
        alone = run_madmm(problem, network, penalty=schedule, theta=0.5, iterations=15, seeds=[seed])
        np.testing.assert_allclose(batch.primal[k], alone.primal[0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(batch.dual[k], alone.dual[0], rtol=0, atol=1e-12)
        np.testing.assert_array_equal(batch.trial(k).primal[0, 0], alone.primal[0, 0])


def test_same_seed_same_run_and_different_seeds_differ(synthetic_case):
    problem, network, _ = synthetic_case
    a = run_radmm(problem, network, iterations=5, seeds=4)
    b = run_radmm(problem, network, iterations=5, seeds=4)
    c = run_radmm(problem, network, iterations=5, seeds=5)
    np.testing.assert_array_equal(a.primal, b.primal)
    assert not np.allclose(a.primal[0, 0], c.primal[0, 0])


def test_run_metrics_need_a_reference(synthetic_case):
    problem, network, _ = synthetic_case
    run = run_admm(problem, network, iterations=2)
    with pytest.raises(InvalidConfiguration, match="no reference optimum"):
        run.objective_gap


# -------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "runner,kwargs,message",
    [
        (run_admm, {"eta": 0.0}, r"eta=0.0 must be finite and > 0"),
        (run_admm, {"iterations": 0}, r"iterations=0 must be a positive integer"),
        (run_madmm, {"theta": -1.0}, r"theta=-1.0 must be finite and > 0"),
        (run_madmm, {"penalty": np.ones((4, 5))}, r"penalty has shape \(4, 5\)"),
        (run_madmm, {"penalty": [0.5, -0.5, 0.5, 0.5, 0.5]}, r"penalty must be finite and positive"),
        (run_radmm, {"gamma": -0.1}, r"gamma=-0.1 must be finite and >= 0"),
        (run_admm, {"seeds": []}, r"seeds is empty"),
        (run_admm, {"seeds": -3}, r"seed -3 must be a non-negative int"),
        (run_admm, {"initial": np.zeros((4, 10))}, r"initial has shape \(4, 10\)"),
    ],
)
def test_invalid_parameters_are_rejected(synthetic_case, runner, kwargs, message):
    problem, network, _ = synthetic_case
    with pytest.raises(InvalidConfiguration, match=message):
        runner(problem, network, **{"iterations": 3, **kwargs})


def test_network_size_must_match_the_partition(synthetic_case):
    problem, _, _ = synthetic_case
    with pytest.raises(InvalidConfiguration, match="the network has 4 nodes but the problem has 5"):
        run_admm(problem, ring(4), iterations=2)
    small = make_problem(synthetic(20, 3, seed=0), 4)
    run_admm(small, ring(4), iterations=2)
