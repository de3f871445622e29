"""Penalty perturbation (PP), the private M-ADMM of Algorithm 1 (M-ADMM paper §4), and DVP.

PP adds eps_i(t+1), with density proportional to exp(-alpha_i(t+1) ||eps||_2), inside the
penalty of the M-ADMM primal objective (10):

    L_i^priv(t+1) = O(f, D_i) + 2 lambda_i(t)^T f
                    + eta_i(t+1) sum_{j in V_i} ||f + eps_i(t+1) - (f_i(t) + f_j(t))/2||^2   (24)
    f_i(t+1) = argmin_f L_i^priv(t+1)                                                    (25)
    lambda_i(t+1) = lambda_i(t) + theta/2 sum_{j in V_i} (f_i(t+1) - f_j(t+1))              (11)

Expanding the square, (24) equals the M-ADMM objective with lambda_i(t) replaced by
lambda_i(t) + eta_i(t+1) V_i eps_i(t+1) plus a constant (the equivalence stated before
eq. (26)), so the primal step is :func:`~admmcheck.algorithms.madmm.madmm_primal_step`
with that perturbed dual; the dual update (11) uses the unperturbed lambda_i(t).

DVP (dual variable perturbation, Zhang & Zhu 2017; §2.4) is the special case
eta_i(t) = theta for all i, t noted under eq. (26): :func:`run_dvp`.
"""

from __future__ import annotations

import numpy as np

from admmcheck.algorithms.madmm import madmm_dual_step, madmm_primal_step
from admmcheck.local_solver import DEFAULT_TOL
from admmcheck.networks import Network
from admmcheck.noise import gamma_noise_table
from admmcheck.oracle import Optimum
from admmcheck.problems import ConsensusProblem
from admmcheck.runs import Recorder, Run, Seeds
from admmcheck.schedules import ScheduleLike, schedule_table
from admmcheck.validation import real


def run_pp(
    problem: ConsensusProblem,
    network: Network,
    *,
    penalty: ScheduleLike = 0.5,
    theta: float = 0.5,
    alpha: ScheduleLike = 5.0,
    iterations: int = 100,
    seeds: Seeds = 0,
    initial: np.ndarray | None = None,
    init_scale: float = 1.0,
    tol: float = DEFAULT_TOL,
    reference: Optimum | None = None,
    algorithm: str = "pp",
) -> Run:
    """Run PP (Algorithm 1): M-ADMM (10)-(11) with the perturbed penalty (24)-(25).

    ``penalty`` gives eta_i(t) and ``alpha`` the noise parameters alpha_i(t), each as a
    scalar, one value per node, a (T, N) table for t = 1..T or a GeometricSchedule;
    ``alpha = inf`` switches the noise off (then the run is M-ADMM exactly). Algorithm 1
    asks for theta with 2 c1 < (B_i/C)(rho/N + 2 theta V_i); that is a precondition of the
    privacy bound (:func:`admmcheck.privacy.pp_bound`), not of the run, and is not enforced.

    The noise eps_i(t) drawn for the run is kept in ``run.extras["noise"]``
    (trials, T, N, d); f_i(0) is drawn first, then the noise, from each trial's generator.
    """
    theta = real("theta", theta)
    recorder = Recorder(problem, network, iterations, seeds, initial, init_scale)
    eta = schedule_table("penalty", penalty, iterations, problem.nodes)
    alphas = schedule_table("alpha", alpha, iterations, problem.nodes, allow_infinite=True)
    noise = gamma_noise_table(recorder.start.rngs, alphas, problem.dim)
    degree = network.degrees
    f, lam = recorder.start.f, np.zeros_like(recorder.start.f)
    for t in range(iterations):
        perturbed = lam + (eta[t] * degree)[:, None] * noise[:, t]  # lambda + eta V eps, eq. (24)
        solution = madmm_primal_step(problem, network, f, perturbed, eta[t], tol)  # eq. (25)
        f = solution.f
        lam = madmm_dual_step(network, lam, f, theta)  # eq. (11)
        recorder.record(t + 1, f, lam, solution.newton_steps)
    parameters = {
        "theta": theta, "iterations": iterations, "tol": tol,
        "penalty": eta.tolist(), "alpha": alphas.tolist(),
    }
    return recorder.finish(algorithm, parameters, reference, {"noise": noise})


def run_dvp(
    problem: ConsensusProblem,
    network: Network,
    *,
    theta: float = 0.5,
    alpha: ScheduleLike = 5.0,
    iterations: int = 100,
    seeds: Seeds = 0,
    initial: np.ndarray | None = None,
    init_scale: float = 1.0,
    tol: float = DEFAULT_TOL,
    reference: Optimum | None = None,
) -> Run:
    """Run DVP: PP with eta_i(t) = theta for every node and iteration (note under eq. (26)).

    The perturbation theta V_i eps_i(t+1) then enters the dual of conventional ADMM (8)
    with eta = theta, which is the dual variable perturbation of Zhang & Zhu (2017).
    """
    theta = real("theta", theta)
    return run_pp(
        problem, network, penalty=theta, theta=theta, alpha=alpha, iterations=iterations,
        seeds=seeds, initial=initial, init_scale=init_scale, tol=tol, reference=reference,
        algorithm="dvp",
    )
