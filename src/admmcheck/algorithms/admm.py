"""Conventional decentralized ADMM in the simplified form, M-ADMM paper eq. (8)-(9)::

    f_i(t+1) = argmin_f O(f, D_i) + 2 lambda_i(t)^T f
                        + eta sum_{j in V_i} || (f_i(t) + f_j(t))/2 - f ||^2      (8)
    lambda_i(t+1) = lambda_i(t) + eta/2 sum_{j in V_i} (f_i(t+1) - f_j(t+1))       (9)

with lambda_i(0) = 0. Arrays are (trials, N, d).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from admmcheck.algorithms.runner import RunContext, algorithm
from admmcheck.solving.local_solver import DEFAULT_TOL, LocalSolution, solve_local
from admmcheck.problems.networks import Network
from admmcheck.problems import ConsensusProblem
from admmcheck.foundations.validation import real


def admm_primal_step(
    problem: ConsensusProblem,
    network: Network,
    f: np.ndarray,
    lam: np.ndarray,
    eta: float,
    tol: float = DEFAULT_TOL,
) -> LocalSolution:
    """Solve eq. (8) for every node.

    Expanding eta sum_j ||m_ij - f||^2 with m_ij = (f_i(t) + f_j(t))/2 gives the
    subproblem O(f) + b_i^T f + (kappa_i/2)||f||^2 with
    b_i = 2 lambda_i(t) - 2 eta sum_j m_ij and kappa_i = 2 eta V_i.
    """
    linear, curvature = admm_subproblem(network, f, lam, eta)
    return solve_local(problem, linear, curvature, start=f, tol=tol)


def admm_subproblem(network: Network, f: np.ndarray, lam: np.ndarray, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """(b, kappa) of eq. (8) in the form O(f) + b_i^T f + (kappa_i/2)||f||^2 of the local solver."""
    midpoint_sum = 0.5 * (network.degrees[:, None] * f + network.adjacency @ f)  # sum_j m_ij
    return 2.0 * lam - 2.0 * eta * midpoint_sum, 2.0 * eta * network.degrees


def admm_dual_step(network: Network, lam: np.ndarray, f_next: np.ndarray, step: float) -> np.ndarray:
    """Eq. (9): lambda_i += step/2 sum_{j in V_i} (f_i(t+1) - f_j(t+1))."""
    disagreement = network.degrees[:, None] * f_next - network.adjacency @ f_next
    return lam + 0.5 * step * disagreement


@algorithm("admm")
def run_admm(context: RunContext, *, eta: float = 0.5) -> Iterator[tuple]:
    """Run conventional ADMM (8)-(9) for ``iterations`` steps on a batch of trials.

    One trial per seed in ``seeds``; f_i(0) is random (or ``initial``), lambda_i(0) = 0.
    """
    eta = real("eta", eta)
    context.parameters["eta"] = eta
    f = context.start.f
    lam = np.zeros_like(f)
    for _ in range(context.iterations):
        solution = admm_primal_step(context.problem, context.network, f, lam, eta, context.tol)  # eq. (8)
        f = solution.f
        lam = admm_dual_step(context.network, lam, f, eta)  # eq. (9)
        yield f, lam, solution.newton_steps
