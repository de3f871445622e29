"""The original edge-based decentralized ADMM, M-ADMM paper eq. (3)-(7).

Kept as a cross-check of the simplification (8)-(9) proved in Appendix A of the
supplement (after Forero et al., 2010). For every ordered pair (i, j), j in V_i, there is
an auxiliary w_ij with constraints f_i = w_ij (dual lambda^a_ij) and w_ij = f_j (dual
lambda^b_ij):

    f(t+1)      = argmin_f L_eta({f}, {w(t), lambda(t)})                  (4)
    w_ij(t+1)   = argmin_w L_eta({f(t+1)}, {w, lambda(t)})                (5)
    lambda^a_ij(t+1) = lambda^a_ij(t) + eta (f_i(t+1) - w_ij(t+1))        (6)
    lambda^b_ij(t+1) = lambda^b_ij(t) + eta (w_ij(t+1) - f_j(t+1))        (7)

Edge variables are dense arrays (trials, N, N, d) indexed [s, i, j], zero off the graph.
The transcript's dual is lambda_i = sum_j lambda^a_ij, the quantity of (8)-(9).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from admmcheck.algorithms.runner import RunContext, algorithm
from admmcheck.solving.local_solver import DEFAULT_TOL, solve_local
from admmcheck.problems.networks import Network
from admmcheck.problems import ConsensusProblem
from admmcheck.foundations.validation import real


@dataclass(frozen=True)
class EdgeState:
    """The full state of (4)-(7): f (trials, N, d), and w, lambda^a, lambda^b (trials, N, N, d)."""

    f: np.ndarray
    w: np.ndarray
    lam_a: np.ndarray
    lam_b: np.ndarray
    newton_steps: np.ndarray


def edge_iterations(problem: ConsensusProblem, network: Network, f: np.ndarray, eta: float, iterations: int,
                    tol: float = DEFAULT_TOL) -> Iterator[EdgeState]:
    """The states after each of ``iterations`` steps of (4)-(7), started from f(0) = ``f``,
    lambda^a = lambda^b = 0 and w_ij(0) = (f_i(0) + f_j(0))/2 (the value (30) of Appendix A
    assigns). Exposed so that Appendix A's claims about the edge duals can be checked."""
    mask = network.adjacency.astype(bool)[None, :, :, None]  # (1, N, N, 1): j in V_i
    degree = network.degrees
    w = np.where(mask, 0.5 * (f[:, :, None, :] + f[:, None, :, :]), 0.0)
    lam_a = np.zeros_like(w)
    lam_b = np.zeros_like(w)
    for _ in range(iterations):
        # (4): the terms of L_eta in f_i are O(f_i) + sum_j lambda^a_ij^T f_i
        #      - sum_j lambda^b_ji^T f_i + eta/2 sum_j (||f_i - w_ij||^2 + ||w_ji - f_i||^2)
        w_transposed = np.swapaxes(w, 1, 2)  # [s, i, j] -> w_ji
        linear = (
            lam_a.sum(axis=2)
            - np.swapaxes(lam_b, 1, 2).sum(axis=2)
            - eta * (w.sum(axis=2) + w_transposed.sum(axis=2))
        )
        solution = solve_local(problem, linear, 2.0 * eta * degree, start=f, tol=tol)
        f = solution.f
        f_i = f[:, :, None, :]
        f_j = f[:, None, :, :]
        # (5): KKT 0 = lambda^b_ij - lambda^a_ij + eta (2 w_ij - f_i - f_j), eq. (27) of App. A
        w = np.where(mask, (lam_a - lam_b) / (2.0 * eta) + 0.5 * (f_i + f_j), 0.0)
        lam_a = np.where(mask, lam_a + eta * (f_i - w), 0.0)  # (6)
        lam_b = np.where(mask, lam_b + eta * (w - f_j), 0.0)  # (7)
        yield EdgeState(f, w, lam_a, lam_b, solution.newton_steps)


@algorithm("admm-edge")
def run_admm_edge(context: RunContext, *, eta: float = 0.5) -> Iterator[tuple]:
    """Run edge-based ADMM (4)-(7) (:func:`edge_iterations`) from f(0), so that this run and
    :func:`~admmcheck.algorithms.admm.run_admm` start from the same state."""
    eta = real("eta", eta)
    context.parameters["eta"] = eta
    for state in edge_iterations(context.problem, context.network, context.start.f, eta, context.iterations,
                                 context.tol):
        yield state.f, state.lam_a.sum(axis=2), state.newton_steps
