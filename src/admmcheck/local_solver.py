"""Batched damped Newton solver for the primal subproblems of every ADMM variant.

Each primal update of the papers (M-ADMM eq. (8), (10), (25); R-ADMM eq. (12), (28))
is, after expanding the squared penalty terms, an instance of

    f_i = argmin_f  O(f, D_i) + b_i^T f + (kappa_i / 2) ||f||_2^2           (*)

with a node-specific linear coefficient ``b_i`` and curvature ``kappa_i >= 0``. The KKT
condition of (*) is eq. (12)/(13) of the M-ADMM paper. This module solves (*) for all
trials and nodes at once: arrays have shape ``(trials, N, d)``.

Stopping rule: a problem is finished once its Newton step satisfies
``||step||_2 <= tol * (1 + ||f||_2)``; the step is still applied, and since Newton
converges quadratically the remaining error is far below ``tol``. Each (trial, node)
problem stops on its own, so a batch reproduces separate runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from admmcheck.errors import SolverError
from admmcheck.problems import ConsensusProblem

DEFAULT_TOL = 1e-10
MAX_NEWTON_STEPS = 100
MAX_HALVINGS = 60
ARMIJO = 0.25
# Below this Newton decrement, relative to 1 + |objective|, float64 cannot resolve the
# Armijo test (the objective sums B_i rounded terms); such steps lie deep in the
# quadratic-convergence region and are taken in full. An absolute threshold is not
# enough: with a large linear term (a noisy dual) the objective is large and a line
# search on a tiny decrement would stall at length 2^-60 and look "converged".
TINY_DECREMENT = 1e-11


@dataclass(frozen=True, eq=False)
class LocalSolution:
    """Minimisers of (*) with shape (trials, N, d) and Newton steps used, (trials, N)."""

    f: np.ndarray
    newton_steps: np.ndarray


def _value(
    problem: ConsensusProblem,
    margins: np.ndarray,
    f: np.ndarray,
    linear: np.ndarray,
    curvature: np.ndarray,
) -> np.ndarray:
    """O(f_i, D_i) + b_i^T f_i + kappa_i/2 ||f_i||^2 from precomputed margins, (trials, N)."""
    quadratic = 0.5 * (problem.regularization + curvature) * np.sum(f * f, axis=-1)
    return problem.local_data_term(margins) + np.sum(linear * f, axis=-1) + quadratic


def solve_local(
    problem: ConsensusProblem,
    linear: np.ndarray,
    curvature: np.ndarray,
    start: np.ndarray,
    tol: float = DEFAULT_TOL,
) -> LocalSolution:
    """Minimise (*) for every trial and node by damped Newton with Armijo backtracking.

    ``linear`` is b with shape (trials, N, d), ``curvature`` is kappa broadcastable to
    (trials, N), ``start`` the warm start (trials, N, d). Raises :class:`SolverError`
    if a subproblem does not reach the tolerance in ``MAX_NEWTON_STEPS`` steps.
    Margins y x^T f are linear in f, so they are updated along the step instead of
    being recomputed.
    """
    f = np.array(start, dtype=np.float64, copy=True)
    curvature = np.broadcast_to(np.asarray(curvature, dtype=np.float64), f.shape[:-1])
    total_curvature = (problem.regularization + curvature)[..., None, None]
    active = np.ones(f.shape[:-1], dtype=bool)
    steps = np.zeros(f.shape[:-1], dtype=np.int64)
    identity = np.eye(problem.dim)
    margins = problem.margins(f)
    value = _value(problem, margins, f, linear, curvature)
    for _ in range(MAX_NEWTON_STEPS):
        if not active.any():
            break
        data_gradient, data_hessian = problem.local_data_derivatives(margins)
        gradient = data_gradient + linear + (problem.regularization + curvature)[..., None] * f
        hessian = data_hessian + total_curvature * identity
        step = -np.linalg.solve(hessian, gradient[..., None])[..., 0]
        decrement = -np.sum(gradient * step, axis=-1)
        step_margins = problem.margins(step)
        length = np.ones(f.shape[:-1])
        searching = active.copy()
        for _ in range(MAX_HALVINGS):
            trial_f = f + length[..., None] * step
            trial_margins = margins + length[..., None] * step_margins
            trial_value = _value(problem, trial_margins, trial_f, linear, curvature)
            accepted = (trial_value <= value - ARMIJO * length * decrement) | (
                decrement <= TINY_DECREMENT * (1.0 + np.abs(value))
            )
            searching &= ~accepted
            if not searching.any():
                break
            length = np.where(searching, 0.5 * length, length)
        if searching.any():
            where = np.argwhere(searching)[0].tolist()
            raise SolverError(
                f"the Newton line search found no decrease after {MAX_HALVINGS} halvings at "
                f"(trial, node)={tuple(where)}; the subproblem is badly scaled"
            )
        f = np.where(active[..., None], trial_f, f)
        margins = np.where(active[..., None], trial_margins, margins)
        value = np.where(active, trial_value, value)
        steps += active
        size = length * np.linalg.norm(step, axis=-1)
        active &= size > tol * (1.0 + np.linalg.norm(f, axis=-1))
    if active.any():
        where = np.argwhere(active)[0].tolist()
        raise SolverError(
            f"Newton did not reach tol={tol:g} in {MAX_NEWTON_STEPS} steps at "
            f"(trial, node)={tuple(where)}; the subproblem may be ill-conditioned"
        )
    return LocalSolution(f=f, newton_steps=steps)
