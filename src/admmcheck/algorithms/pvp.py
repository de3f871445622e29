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

from typing import Iterator

import numpy as np

from admmcheck.algorithms.admm import admm_dual_step, admm_primal_step
from admmcheck.algorithms.runner import RunContext, algorithm
from admmcheck.solving.noise import gamma_noise_table
from admmcheck.solving.schedules import ScheduleLike, schedule_table
from admmcheck.foundations.validation import real


@algorithm("pvp")
def run_pvp(context: RunContext, *, eta: float = 0.5, alpha: ScheduleLike = 5.0) -> Iterator[tuple]:
    """Run PVP: ADMM (8)-(9) whose broadcast primal f_i(t+1) carries additive noise.

    ``alpha`` (scalar, per node, (T, N) table or GeometricSchedule) sets the noise
    parameters; ``alpha = inf`` gives conventional ADMM exactly. Extras: ``noise``
    (trials, T, N, d) and ``unperturbed`` (trials, T, N, d), the minimisers before noise.
    """
    eta = real("eta", eta)
    problem, network = context.problem, context.network
    alphas = schedule_table("alpha", alpha, context.iterations, problem.nodes, allow_infinite=True)
    noise = gamma_noise_table(context.start.rngs, alphas, problem.dim)
    unperturbed = np.empty_like(noise)
    context.parameters.update(eta=eta, alpha=alphas.tolist())
    context.extras.update(noise=noise, unperturbed=unperturbed)
    f = context.start.f
    lam = np.zeros_like(f)
    for t in range(context.iterations):
        solution = admm_primal_step(problem, network, f, lam, eta, context.tol)  # eq. (8)
        unperturbed[:, t] = solution.f
        f = solution.f + noise[:, t]  # perturb before broadcasting
        lam = admm_dual_step(network, lam, f, eta)  # eq. (9) with the broadcast values
        yield f, lam, solution.newton_steps
