"""PP, DVP, PVP and private R-ADMM: noise-off equivalence, the perturbed updates checked
node by node against the paper's equations, Lemma IV.1's post-processing, batching."""

from __future__ import annotations

import numpy as np
import pytest

from admmcheck.algorithms import run_admm, run_madmm, run_radmm
from admmcheck.algorithms.admm import admm_primal_step
from admmcheck.algorithms.pp import run_dvp, run_pp
from admmcheck.algorithms.private_radmm import (
    duals_from_transcript,
    even_iterates_from_transcript,
    recycled_gradient,
    run_private_radmm,
)
from admmcheck.algorithms.pvp import run_pvp
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.solving.local_solver import solve_local
from admmcheck.solving.runs import trial_seeds
from admmcheck.solving.schedules import GeometricSchedule

OFF = np.inf  # alpha = inf: zero noise
SCHEDULE = GeometricSchedule((0.55, 0.65, 0.6, 0.55, 0.6), (1.01, 1.03, 1.1, 1.2, 1.02))


# ----------------------------------------------------------- noise off = non-private
def test_pp_without_noise_is_madmm_exactly(acceptance_case):
    problem, network, _ = acceptance_case
    seeds = trial_seeds(3, 2)
    pp = run_pp(problem, network, penalty=SCHEDULE, theta=0.5, alpha=OFF, iterations=25, seeds=seeds)
    madmm = run_madmm(problem, network, penalty=SCHEDULE, theta=0.5, iterations=25, seeds=seeds)
    np.testing.assert_array_equal(pp.primal, madmm.primal)
    np.testing.assert_array_equal(pp.dual, madmm.dual)
    assert np.all(pp.extras["noise"] == 0)


def test_dvp_without_noise_is_admm(acceptance_case):
    problem, network, _ = acceptance_case
    dvp = run_dvp(problem, network, theta=0.7, alpha=OFF, iterations=25, seeds=4)
    np.testing.assert_array_equal(dvp.primal, run_madmm(problem, network, penalty=0.7, theta=0.7, iterations=25, seeds=4).primal)
    admm = run_admm(problem, network, eta=0.7, iterations=25, seeds=4)  # the node-wise form (8)-(9)
    np.testing.assert_allclose(dvp.primal, admm.primal, rtol=0, atol=1e-12)


def test_pvp_without_noise_is_admm_exactly(acceptance_case):
    problem, network, _ = acceptance_case
    pvp = run_pvp(problem, network, eta=0.5, alpha=OFF, iterations=25, seeds=5)
    admm = run_admm(problem, network, eta=0.5, iterations=25, seeds=5)
    np.testing.assert_array_equal(pvp.primal, admm.primal)
    np.testing.assert_array_equal(pvp.dual, admm.dual)


def test_private_radmm_without_noise_is_radmm_exactly(acceptance_case):
    problem, network, _ = acceptance_case
    private = run_private_radmm(problem, network, eta=0.5, gamma=0.5, alpha=OFF, iterations=25, seeds=6)
    plain = run_radmm(problem, network, eta=0.5, gamma=0.5, iterations=25, seeds=6)
    np.testing.assert_array_equal(private.primal, plain.primal)
    np.testing.assert_array_equal(private.dual, plain.dual)


# ------------------------------------------------------ the updates, node by node
def test_pp_iterates_minimise_the_perturbed_objective_24(synthetic_case):
    problem, network, _ = synthetic_case
    theta, T = 0.5, 6
    run = run_pp(problem, network, penalty=SCHEDULE, theta=theta, alpha=2.0, iterations=T, seeds=7)
    eta, eps = SCHEDULE.table(T, 5), run.extras["noise"][0]
    f, lam = run.primal[0], run.dual[0]
    assert np.all(np.linalg.norm(eps, axis=-1) > 0)
    for t in range(T):
        gradients = problem.local_gradients(f[t + 1])
        for i in range(5):
            neighbours = network.neighbors(i)
            # gradient of (24): grad O + 2 lambda + eta sum_j 2 (f + eps - (f_i(t) + f_j(t))/2)
            residual = gradients[i] + 2 * lam[t, i] + eta[t, i] * sum(
                2 * (f[t + 1, i] + eps[t, i]) - (f[t, i] + f[t, j]) for j in neighbours
            )
            assert np.linalg.norm(residual) <= 1e-9
            dual_step = theta / 2 * sum(f[t + 1, i] - f[t + 1, j] for j in neighbours)  # eq. (11)
            np.testing.assert_allclose(lam[t + 1, i], lam[t, i] + dual_step, atol=1e-13)


def test_dvp_is_admm_with_the_dual_perturbed_by_theta_v_eps(synthetic_case):
    problem, network, _ = synthetic_case
    theta = 0.5
    run = run_dvp(problem, network, theta=theta, alpha=1.0, iterations=4, seeds=8)
    eps = run.extras["noise"]
    for t in range(4):
        perturbed = run.dual[:, t] + theta * network.degrees[:, None] * eps[:, t]  # eq. (26) with eta = theta
        step = admm_primal_step(problem, network, run.primal[:, t], perturbed, theta)  # the (8) update
        np.testing.assert_allclose(run.primal[:, t + 1], step.f, rtol=0, atol=1e-12)


def test_pvp_broadcasts_the_admm_minimiser_plus_noise(synthetic_case):
    problem, network, _ = synthetic_case
    eta = 0.5
    run = run_pvp(problem, network, eta=eta, alpha=3.0, iterations=5, seeds=9)
    noise, clean = run.extras["noise"], run.extras["unperturbed"]
    np.testing.assert_allclose(run.primal[:, 1:] - clean, noise, rtol=0, atol=1e-13)
    for t in range(5):  # the minimiser is (8) from the previously broadcast values
        step = admm_primal_step(problem, network, run.primal[:, t], run.dual[:, t], eta)
        np.testing.assert_allclose(clean[:, t], step.f, rtol=0, atol=1e-12)


def test_private_radmm_odd_steps_solve_28_and_even_steps_recycle_kkt(synthetic_case):
    problem, network, _ = synthetic_case
    eta, gamma, T = 1.0, 0.2, 9
    run = run_private_radmm(problem, network, eta=eta, gamma=gamma, alpha=2.0, iterations=T, seeds=10)
    f, lam, eps = run.primal[0], run.dual[0], run.extras["noise"][0]
    assert eps.shape == (5, 5, problem.dim)  # K = ceil(9/2) odd iterations
    for t in range(1, T + 1, 2):
        gradients = problem.local_gradients(f[t])
        for i in range(5):
            neighbours = network.neighbors(i)
            residual = gradients[i] + 2 * lam[t - 1, i] + eps[(t - 1) // 2, i] + eta * sum(
                2 * f[t, i] - f[t - 1, i] - f[t - 1, j] for j in neighbours
            )  # KKT of (28)
            assert np.linalg.norm(residual) <= 1e-9
        # the public KKT value equals the stored eps + grad O that eq. (29) uses
        recycled = recycled_gradient(network, f[t - 1], f[t], lam[t - 1], eta)
        np.testing.assert_allclose(recycled, eps[(t - 1) // 2] + gradients, rtol=0, atol=1e-9)
        if t < T:
            np.testing.assert_array_equal(lam[t + 1], lam[t])


def test_even_iterates_are_recomputed_from_the_public_transcript_alone(breast_cancer_case):
    problem, network, _ = breast_cancer_case
    eta, gamma = 1.0, 0.2
    run = run_private_radmm(problem, network, eta=eta, gamma=gamma, alpha=2.0, iterations=21, seeds=trial_seeds(1, 3))
    transcript = run.primal.copy()  # all an observer has: f(t), plus the public eta, gamma, graph
    np.testing.assert_array_equal(duals_from_transcript(network, transcript, eta), run.dual)
    rebuilt = even_iterates_from_transcript(network, transcript, eta, gamma)  # takes no data at all
    np.testing.assert_allclose(rebuilt, run.primal[:, 2::2], rtol=0, atol=1e-10)
    # the odd iterates are not post-processing: they cannot be rebuilt this way
    assert np.abs(run.primal[:, 3::2] - run.primal[:, 2:-1:2]).max() > 1e-3


@pytest.mark.parametrize("scale", [10.0, 400.0])
def test_solver_does_not_stall_on_a_large_linear_term(breast_cancer_case, scale):
    # A noisy dual makes the objective large. Warm-started 1e-7 from the solution, the
    # Newton decrement (~1e-13) is below what Armijo can resolve at that magnitude; the
    # solver must still reach the KKT point instead of halving to a zero step.
    problem, _, _ = breast_cancer_case
    rng = np.random.default_rng(0)
    linear = scale * rng.standard_normal((8, 5, problem.dim))
    curvature = np.full(5, 4.0)
    exact = solve_local(problem, linear, curvature, start=np.zeros((8, 5, problem.dim))).f
    start = exact + 1e-7 * rng.standard_normal(exact.shape)
    solution = solve_local(problem, linear, curvature, start=start)
    residual = problem.local_gradients(solution.f) + linear + curvature[:, None] * solution.f
    assert np.abs(residual).max() <= 1e-9


# ----------------------------------------------------------- noise, seeds, batching
@pytest.mark.parametrize("runner", [run_pp, run_dvp, run_pvp, run_private_radmm])
def test_private_batches_equal_separate_runs(synthetic_case, runner):
    problem, network, _ = synthetic_case
    seeds = trial_seeds(21, 3)
    batch = runner(problem, network, alpha=2.0, iterations=6, seeds=seeds)
    for k, seed in enumerate(seeds):
        alone = runner(problem, network, alpha=2.0, iterations=6, seeds=[seed])
        np.testing.assert_allclose(batch.primal[k], alone.primal[0], rtol=0, atol=1e-12)
        np.testing.assert_array_equal(batch.extras["noise"][k], alone.extras["noise"][0])
    assert not np.allclose(batch.primal[0, -1], batch.primal[1, -1])


def test_noise_follows_the_alpha_schedule(synthetic_case):
    problem, network, _ = synthetic_case
    alpha = GeometricSchedule(2.0, 1.5)
    run = run_pp(problem, network, penalty=0.5, alpha=alpha, iterations=8, seeds=trial_seeds(0, 400))
    mean_norm = np.linalg.norm(run.extras["noise"], axis=-1).mean(axis=(0, 2))  # per t
    expected = problem.dim / alpha.table(8, 5)[:, 0]  # E||eps|| = d / alpha(t)
    np.testing.assert_allclose(mean_norm, expected, rtol=0.05)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"alpha": 0.0}, "alpha must be positive"),
        ({"alpha": [1.0, 2.0]}, "alpha has shape"),
        ({"alpha": -np.inf}, "alpha must be positive"),
        ({"theta": 0.0}, "theta=0.0 must be finite"),
    ],
)
def test_bad_private_parameters_are_rejected(synthetic_case, kwargs, message):
    problem, network, _ = synthetic_case
    with pytest.raises(InvalidConfiguration, match=message):
        run_pp(problem, network, iterations=3, **kwargs)
