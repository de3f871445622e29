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

from typing import Iterator

import numpy as np

from admmcheck.algorithms.madmm import madmm_dual_step, madmm_primal_step
from admmcheck.algorithms.runner import RunContext, algorithm
from admmcheck.solving.noise import gamma_noise_table
from admmcheck.solving.schedules import ScheduleLike, schedule_table
from admmcheck.foundations.validation import real


@algorithm("pp")
def run_pp(context: RunContext, *, penalty: ScheduleLike = 0.5, theta: float = 0.5,
           alpha: ScheduleLike = 5.0) -> Iterator[tuple]:
    """Run PP (Algorithm 1): M-ADMM (10)-(11) with the perturbed penalty (24)-(25).

    ``penalty`` gives eta_i(t) and ``alpha`` the noise parameters alpha_i(t), each as a
    scalar, one value per node, a (T, N) table for t = 1..T or a GeometricSchedule;
    ``alpha = inf`` switches the noise off (then the run is M-ADMM exactly). Algorithm 1
    asks for theta with 2 c1 < (B_i/C)(rho/N + 2 theta V_i); that is a precondition of the
    privacy bound (:func:`admmcheck.privacy.pp_bound`), not of the run, and is not enforced.

    The noise eps_i(t) drawn for the run is kept in ``run.extras["noise"]``
    (trials, T, N, d); f_i(0) is drawn first, then the noise, from each trial's generator.
    """
    yield from _pp_iterations(context, penalty, real("theta", theta), alpha)


@algorithm("dvp")
def run_dvp(context: RunContext, *, theta: float = 0.5, alpha: ScheduleLike = 5.0) -> Iterator[tuple]:
    """Run DVP: PP with eta_i(t) = theta for every node and iteration (note under eq. (26)).

    The perturbation theta V_i eps_i(t+1) then enters the dual of conventional ADMM (8)
    with eta = theta, which is the dual variable perturbation of Zhang & Zhu (2017).
    """
    theta = real("theta", theta)
    yield from _pp_iterations(context, theta, theta, alpha)


def _pp_iterations(context: RunContext, penalty: ScheduleLike, theta: float, alpha: ScheduleLike) -> Iterator[tuple]:
    """(24)-(25) and (11) for t = 1..T, the noise drawn first (shared by PP and DVP)."""
    problem, network, T = context.problem, context.network, context.iterations
    eta = schedule_table("penalty", penalty, T, problem.nodes)
    alphas = schedule_table("alpha", alpha, T, problem.nodes, allow_infinite=True)
    noise = gamma_noise_table(context.start.rngs, alphas, problem.dim)
    context.parameters.update(theta=theta, penalty=eta.tolist(), alpha=alphas.tolist())
    context.extras["noise"] = noise
    degree = network.degrees
    f = context.start.f
    lam = np.zeros_like(f)
    for t in range(T):
        perturbed = lam + (eta[t] * degree)[:, None] * noise[:, t]  # lambda + eta V eps, eq. (24)
        solution = madmm_primal_step(problem, network, f, perturbed, eta[t], context.tol)  # eq. (25)
        f = solution.f
        lam = madmm_dual_step(network, lam, f, theta)  # eq. (11)
        yield f, lam, solution.newton_steps
