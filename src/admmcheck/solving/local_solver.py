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

from admmcheck.foundations.errors import SolverError
from admmcheck.problems import ConsensusProblem, LogisticLoss

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

    Node by node, the node's samples are shared by all trials, so margins, gradients and
    Hessians are matrix products over the trials still iterating (finished problems drop out);
    the loss, its slope and curvature come from one exp and one log1p per sample and step,
    reused from the line search's accepted point; the d x d systems are solved by a batched
    closed-form Cholesky (:func:`solve_spd`).
    """
    f = np.array(start, dtype=np.float64, copy=True)
    linear = np.asarray(linear, dtype=np.float64)
    total = np.broadcast_to(problem.regularization + np.asarray(curvature, dtype=np.float64), f.shape[:-1])
    steps = np.zeros(f.shape[:-1], dtype=np.int64)
    padded, outer = problem.padded, problem.sample_outer_products
    for i, size in enumerate(problem.sizes):
        node = _NodeData(padded.signed_features[i, :size], padded.weights[i, :size],
                         None if outer is None else outer[i, :size], problem.loss)
        f[:, i], steps[:, i] = _newton(node, linear[:, i], np.array(total[:, i]), f[:, i], tol, i)
    return LocalSolution(f=f, newton_steps=steps)


@dataclass(frozen=True)
class _NodeData:
    """One node's signed samples (B_i, d), weights C/B_i (B_i,), x x^T per sample (B_i, d*d) or None."""

    x: np.ndarray
    w: np.ndarray
    outer: np.ndarray | None
    loss: LogisticLoss

    def evaluate(self, f: np.ndarray, margins: np.ndarray, linear: np.ndarray, total: np.ndarray):
        """Objective (*) and the loss's slope and curvature per sample at ``margins`` = x f."""
        value, first, second = self.loss.value_and_derivatives(margins)
        objective = value @ self.w + np.einsum("kd,kd->k", linear + 0.5 * total[:, None] * f, f)
        return objective, first, second

    def derivatives(self, f, first, second, linear, total) -> tuple[np.ndarray, np.ndarray]:
        """Gradient (K, d) and Hessian (K, d, d) of (*)."""
        d = f.shape[-1]
        gradient = (first * self.w) @ self.x + linear + total[:, None] * f
        scale = second * self.w
        if self.outer is not None:
            hessian = (scale @ self.outer).reshape(-1, d, d)
        else:
            hessian = np.matmul(self.x.T[None], scale[:, :, None] * self.x[None])
        hessian[:, np.arange(d), np.arange(d)] += total[:, None]
        return gradient, hessian


def _newton(node: _NodeData, linear, total, f, tol, index) -> tuple[np.ndarray, np.ndarray]:
    """Damped Newton for one node's problems over all trials, (K, d) -> minimisers and step counts."""
    out, counts = f.copy(), np.zeros(f.shape[0], dtype=np.int64)
    rows = np.arange(f.shape[0])
    margins = f @ node.x.T
    value, first, second = node.evaluate(f, margins, linear, total)
    for _ in range(MAX_NEWTON_STEPS):
        if rows.size == 0:
            break
        gradient, hessian = node.derivatives(f, first, second, linear, total)
        step = -solve_spd(hessian, gradient)
        decrement = -np.einsum("kd,kd->k", gradient, step)
        step_margins = step @ node.x.T
        new_f, new_margins = f + step, margins + step_margins
        new_value, new_first, new_second = node.evaluate(new_f, new_margins, linear, total)
        length = np.ones(rows.size)
        # below TINY_DECREMENT float64 cannot resolve the Armijo test: the full step is taken
        searching = np.flatnonzero(~((new_value <= value - ARMIJO * decrement)
                                     | (decrement <= TINY_DECREMENT * (1.0 + np.abs(value)))))
        for _ in range(MAX_HALVINGS):
            if searching.size == 0:
                break
            length[searching] *= 0.5
            short = length[searching, None]
            trial_f = f[searching] + short * step[searching]
            trial_margins = margins[searching] + short * step_margins[searching]
            trial = node.evaluate(trial_f, trial_margins, linear[searching], total[searching])
            ok = trial[0] <= value[searching] - ARMIJO * length[searching] * decrement[searching]
            done = searching[ok]
            new_f[done], new_margins[done] = trial_f[ok], trial_margins[ok]
            new_value[done], new_first[done], new_second[done] = (part[ok] for part in trial)
            searching = searching[~ok]
        if searching.size:
            raise SolverError(
                f"the Newton line search found no decrease after {MAX_HALVINGS} halvings at "
                f"(trial, node)={(int(rows[searching[0]]), index)}; the subproblem is badly scaled"
            )
        f, margins, value, first, second = new_f, new_margins, new_value, new_first, new_second
        counts[rows] += 1
        going = length * np.linalg.norm(step, axis=-1) > tol * (1.0 + np.linalg.norm(f, axis=-1))
        if not going.all():
            out[rows[~going]] = f[~going]
            rows = rows[going]
            f, margins, value, first, second, linear, total = (
                a[going] for a in (f, margins, value, first, second, linear, total))
    if rows.size:
        raise SolverError(
            f"Newton did not reach tol={tol:g} in {MAX_NEWTON_STEPS} steps at "
            f"(trial, node)={(int(rows[0]), index)}; the subproblem may be ill-conditioned"
        )
    return out, counts


#: d up to which :func:`solve_spd` uses the closed-form batched Cholesky, and the batch size from
#: which it does (smaller batches: LAPACK per matrix is as fast).
CHOLESKY_MAX_DIM, CHOLESKY_MIN_BATCH = 8, 32


def solve_spd(hessian: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve H x = g for a batch of symmetric positive definite H (K, d, d), g (K, d).

    For small d and large K a Cholesky factorisation written out element by element, each
    element a vector over the batch (K-long numpy operations instead of K LAPACK calls);
    otherwise, or if a pivot is not positive, ``numpy.linalg.solve``."""
    batch, d = rhs.shape
    if d > CHOLESKY_MAX_DIM or batch < CHOLESKY_MIN_BATCH:
        return np.linalg.solve(hessian, rhs[..., None])[..., 0]
    h = np.ascontiguousarray(hessian.reshape(batch, d * d).T)  # (d*d, K): element rows
    low: dict[tuple[int, int], np.ndarray] = {}
    for j in range(d):
        pivot = h[j * d + j].copy()
        for q in range(j):
            pivot -= low[j, q] * low[j, q]
        if not np.all(pivot > 0):
            return np.linalg.solve(hessian, rhs[..., None])[..., 0]
        low[j, j] = np.sqrt(pivot)
        for i in range(j + 1, d):
            entry = h[i * d + j].copy()
            for q in range(j):
                entry -= low[i, q] * low[j, q]
            low[i, j] = entry / low[j, j]
    g = rhs.T
    forward: list[np.ndarray] = []
    for i in range(d):
        value = g[i].copy()
        for q in range(i):
            value -= low[i, q] * forward[q]
        forward.append(value / low[i, i])
    solution: list[np.ndarray] = [forward[0]] * d
    for i in reversed(range(d)):
        value = forward[i].copy()
        for q in range(i + 1, d):
            value -= low[q, i] * solution[q]
        solution[i] = value / low[i, i]
    return np.stack(solution, axis=1)
