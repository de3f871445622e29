"""M-ADMM with private penalties eta_i(t) and dual step theta, M-ADMM paper eq. (10)-(11).

    f_i(t+1) = argmin_f O(f, D_i) + 2 lambda_i(t)^T f
                        + eta_i(t+1) sum_{j in V_i} ||f - (f_i(t) + f_j(t))/2||^2   (10)
    lambda_i(t+1) = lambda_i(t) + theta/2 sum_{j in V_i} (f_i(t+1) - f_j(t+1))       (11)

Implemented in the stacked matrix form of the paper (W(t) = diag(eta_i(t))):

    grad O(f(t+1)) + 2 Lambda(t) + 2 W(t+1) D f(t+1) - W(t+1)(D + A) f(t) = 0       (13)
    2 Lambda(t+1) = 2 Lambda(t) + theta (D - A) f(t+1)                              (14)

which is a second, independent transcription of the node-wise update of
:mod:`admmcheck.algorithms.admm` (with eta_i(t) = theta the two coincide, Thm 3.1 setting).
Theorem 3.1 guarantees convergence when eta_i(t+1) >= eta_i(t) >= theta > 0; this
runner does not enforce it, so that runs outside the theorem can be examined.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from admmcheck.algorithms.runner import RunContext, algorithm

from admmcheck.solving.local_solver import DEFAULT_TOL, LocalSolution, solve_local
from admmcheck.problems.networks import Network
from admmcheck.problems import ConsensusProblem
from admmcheck.solving.schedules import ScheduleLike, schedule_table
from admmcheck.foundations.validation import real


def madmm_primal_step(
    problem: ConsensusProblem,
    network: Network,
    f: np.ndarray,
    lam: np.ndarray,
    eta_next: np.ndarray,
    tol: float = DEFAULT_TOL,
) -> LocalSolution:
    """Solve eq. (10) for every node via its KKT form (13).

    ``eta_next`` holds eta_i(t+1), shape (N,). The subproblem is
    O(f) + b_i^T f + (kappa_i/2)||f||^2 with b = 2 Lambda(t) - W(t+1)(D+A) f(t) and
    kappa = 2 W(t+1) D.
    """
    weighted = eta_next[:, None] * (network.signless_laplacian @ f)  # W(t+1)(D+A) f(t)
    linear = 2.0 * lam - weighted
    curvature = 2.0 * eta_next * network.degrees  # diagonal of 2 W(t+1) D
    return solve_local(problem, linear, curvature, start=f, tol=tol)


def madmm_dual_step(network: Network, lam: np.ndarray, f_next: np.ndarray, theta: float) -> np.ndarray:
    """Eq. (14): 2 Lambda(t+1) = 2 Lambda(t) + theta (D - A) f(t+1)."""
    return lam + 0.5 * theta * (network.laplacian @ f_next)


@algorithm("madmm")
def run_madmm(context: RunContext, *, penalty: ScheduleLike = 0.5, theta: float = 0.5) -> Iterator[tuple]:
    """Run M-ADMM (10)-(11) with penalty schedule eta_i(t) and dual step ``theta``.

    ``penalty`` is a scalar, one value per node, a (T, N) table for t = 1..T, or a
    :class:`~admmcheck.solving.schedules.GeometricSchedule` (eta_i(1) q_i^(t-1), §5.1).
    """
    theta = real("theta", theta)
    eta = schedule_table("penalty", penalty, context.iterations, context.problem.nodes)
    context.parameters.update(theta=theta, penalty=eta.tolist())
    f = context.start.f
    lam = np.zeros_like(f)
    for t in range(context.iterations):
        solution = madmm_primal_step(context.problem, context.network, f, lam, eta[t], context.tol)  # eq. (10)/(13)
        f = solution.f
        lam = madmm_dual_step(context.network, lam, f, theta)  # eq. (11)/(14)
        yield f, lam, solution.newton_steps
