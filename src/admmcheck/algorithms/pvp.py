"""Primal variable perturbation (PVP), the second baseline of Zhang & Zhu (2017).

As summarised in §2.4 of the M-ADMM paper: each node updates its primal variable with the
conventional ADMM step (8), then adds noise eps_i(t+1), with density proportional to
exp(-alpha_i(t+1) ||eps||_2), before broadcasting:

    f~_i(t+1) = argmin (8) + eps_i(t+1)
    lambda_i(t+1) = lambda_i(t) + eta/2 sum_{j in V_i} (f~_i(t+1) - f~_j(t+1))     (9)

The broadcast value f~_i(t+1) is the node's iterate from then on (it enters the dual
update and the next primal step), which is how Zhang & Zhu's PVP runs; the noiseless
minimiser is kept in ``run.extras["unperturbed"]``.
"""

from __future__ import annotations

import numpy as np

from admmcheck.algorithms.admm import admm_dual_step, admm_primal_step
from admmcheck.local_solver import DEFAULT_TOL
from admmcheck.networks import Network
from admmcheck.noise import gamma_noise_table
from admmcheck.oracle import Optimum
from admmcheck.problems import ConsensusProblem
from admmcheck.runs import Recorder, Run, Seeds
from admmcheck.schedules import ScheduleLike, schedule_table
from admmcheck.validation import real


def run_pvp(
    problem: ConsensusProblem,
    network: Network,
    *,
    eta: float = 0.5,
    alpha: ScheduleLike = 5.0,
    iterations: int = 100,
    seeds: Seeds = 0,
    initial: np.ndarray | None = None,
    init_scale: float = 1.0,
    tol: float = DEFAULT_TOL,
    reference: Optimum | None = None,
) -> Run:
    """Run PVP: ADMM (8)-(9) whose broadcast primal f_i(t+1) carries additive noise.

    ``alpha`` (scalar, per node, (T, N) table or GeometricSchedule) sets the noise
    parameters; ``alpha = inf`` gives conventional ADMM exactly. Extras: ``noise``
    (trials, T, N, d) and ``unperturbed`` (trials, T, N, d), the minimisers before noise.
    """
    eta = real("eta", eta)
    recorder = Recorder(problem, network, iterations, seeds, initial, init_scale)
    alphas = schedule_table("alpha", alpha, iterations, problem.nodes, allow_infinite=True)
    noise = gamma_noise_table(recorder.start.rngs, alphas, problem.dim)
    unperturbed = np.empty_like(noise)
    f, lam = recorder.start.f, np.zeros_like(recorder.start.f)
    for t in range(iterations):
        solution = admm_primal_step(problem, network, f, lam, eta, tol)  # eq. (8)
        unperturbed[:, t] = solution.f
        f = solution.f + noise[:, t]  # perturb before broadcasting
        lam = admm_dual_step(network, lam, f, eta)  # eq. (9) with the broadcast values
        recorder.record(t + 1, f, lam, solution.newton_steps)
    parameters = {"eta": eta, "iterations": iterations, "tol": tol, "alpha": alphas.tolist()}
    return recorder.finish("pvp", parameters, reference, {"noise": noise, "unperturbed": unperturbed})
