"""ADMM sharing over vertically partitioned features (Algorithm 1, (6)-(8)) and its DP version (10).

Parties update in parallel (Jacobi) from the previous iterate of the others::

    x_m^{t+1} = argmin_{x_m ∈ X_m} λR_m(x_m) + ⟨y^t, D_m x_m⟩
                + ρ/2 ‖Σ_{k≠m} D_k x_k^t + D_m x_m − z^t‖²                                 (6)
    z^{t+1}   = argmin_z l(z) − ⟨y^t, z⟩ + ρ/2 ‖Σ_m D_m x_m^{t+1} − z‖²                      (7)
    y^{t+1}   = y^t + ρ (Σ_m D_m x_m^{t+1} − z^{t+1})                                       (8)

from x = y = z = 0 (§5). With R_m = ½‖·‖², (6) is the linear system
(ρD_mᵀD_m + λI) x_m = D_mᵀ(ρ(z^t − r_{−m}) − y^t) (one Cholesky factor per party, reused);
with a box X_m it is a bounded least-squares problem (``scipy.optimize.lsq_linear``). (7) is
separable per sample: N scalar equations ∇l(z)_i − y_i + ρ(z_i − s_i) = 0, solved together by
safeguarded Newton inside the bracket s_i + (y_i ± 1/N)/ρ that abs(∇l_i) < 1/N gives.

DP version (10): ξ_m^{t+1} ~ N(0, σ_m² (D_mᵀD_m)⁻¹) is added to x_m^{t+1}, and every later use
of party m's block — the z-update, the dual update, the other parties' (6) — sees
x̃_m = x_m + ξ_m; the party's own block in (6) is its fresh variable. The noise is drawn as
ξ_m = σ_m R_m⁻¹ g with D_m = Q_m R_m (thin QR), g ~ N(0, I), so that the shared
D_m ξ_m = σ_m Q_m g. σ_m comes from Theorem 1 (:func:`admmcheck.privacy.sharing_bound`).

Transcript: ``primal`` holds the concatenated x (the parties' own, noiseless decisions) as one
"node", ``dual`` y (N values); extras ``shared`` (trials, T+1, M, N) hold every D_m x̃_m^t the
server receives (what an observer of the protocol sees), ``z`` the server's z^t and, for the
DP version, ``noise`` ξ^t (trials, T, d).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
from scipy.linalg import cho_factor, cho_solve, qr, solve_triangular

from admmcheck.algorithms.runner import RunContext, algorithm
from admmcheck.foundations.errors import InvalidConfiguration, InvalidProblem, SolverError
from admmcheck.solving.noise import per_trial
from admmcheck.problems.sharing import SharingProblem
from admmcheck.foundations.validation import real

Z_NEWTON_STEPS = 100


def z_update(problem: SharingProblem, s: np.ndarray, y: np.ndarray, rho: float, tol: float) -> np.ndarray:
    """(7) for every trial and sample: the root of g(z) = ∇l(z) − y + ρ(z − s), shape of s.

    g is increasing and its root lies in s + (y ± 1/N)/ρ; Newton steps are taken inside that
    bracket, and a bisection step replaces one that leaves it or does not halve the step
    before it ("rtsafe"), so that Newton cannot cycle where the logistic curvature dwarfs ρ."""
    half_width = 1.0 / (problem.samples * rho)
    low, high = s + y / rho - half_width, s + y / rho + half_width
    z = s + y / rho
    step_before = high - low
    for _ in range(Z_NEWTON_STEPS):
        residual = problem.loss_gradient(z) - y + rho * (z - s)
        slope = problem.loss_curvature(z) + rho
        if np.all((np.abs(residual) <= tol * rho * (1.0 + np.abs(z))) | (high - low <= tol * (1.0 + np.abs(z)))):
            return z
        high = np.where(residual > 0, z, high)
        low = np.where(residual < 0, z, low)
        newton = z - residual / slope
        bisect = (newton <= low) | (newton >= high) | (np.abs(2 * residual) > np.abs(step_before * slope))
        step = np.where(bisect, 0.5 * (high - low), np.abs(residual / slope))
        z = np.where(bisect, 0.5 * (low + high), newton)
        step_before = step
    raise SolverError(f"the z-update (7) did not reach tol={tol:g} in {Z_NEWTON_STEPS} safeguarded Newton steps")


class PartySolver:
    """(6) for one party: (ρD_mᵀD_m + λI) x = D_mᵀ(ρ(z − r) − y), or its box-constrained form."""

    def __init__(self, problem: SharingProblem, m: int, rho: float):
        self.block, self.rho, self.lam, self.box = problem.parts[m], rho, problem.lam, problem.box
        self.factor = cho_factor(rho * self.block.T @ self.block + problem.lam * np.eye(self.block.shape[1]))
        if self.box is not None:
            self.stacked = np.vstack([np.sqrt(rho) * self.block, np.sqrt(problem.lam) * np.eye(self.block.shape[1])])

    def solve(self, target: np.ndarray, y: np.ndarray) -> np.ndarray:
        """argmin of (6) for every trial: ``target`` = z − r_{−m} and y are (trials, N)."""
        if self.box is None:
            return cho_solve(self.factor, ((self.rho * target - y) @ self.block).T).T
        from scipy.optimize import lsq_linear  # (only a box needs it: SciPy's optimisers load in 0.15 s)

        # ρ/2‖D x − (target − y/ρ)‖² + λ/2‖x‖² (+ const) over the box: bounded least squares
        out = []
        for goal in target - y / self.rho:
            rhs = np.concatenate([np.sqrt(self.rho) * goal, np.zeros(self.block.shape[1])])
            out.append(lsq_linear(self.stacked, rhs, bounds=(-self.box, self.box), method="bvls", tol=1e-12).x)
        return np.array(out)


def _sharing_iterations(context: RunContext, rho: float, sigma: np.ndarray | None) -> Iterator[tuple]:
    problem: SharingProblem = context.problem
    if not isinstance(problem, SharingProblem):
        raise InvalidConfiguration("ADMM sharing runs on a SharingProblem (problems.sharing.split_columns)")
    trials, T, M = context.start.f.shape[0], context.iterations, problem.parties
    solvers = [PartySolver(problem, m, rho) for m in range(M)]
    shared = np.zeros((trials, T + 1, M, problem.samples))
    z_record = np.zeros((trials, T + 1, problem.samples))
    context.extras.update(shared=shared, z=z_record)
    noise = None
    if sigma is not None:
        for m, full in enumerate(problem.full_rank):
            if not full:
                raise InvalidConfiguration(
                    f"party {m}'s block D_{m} has rank {int(np.linalg.matrix_rank(problem.parts[m]))} < "
                    f"{problem.widths[m]} columns: the noise of (10), N(0, sigma^2 (D_mᵀD_m)⁻¹), does not exist "
                    "(Assumption 1.1); DP ADMM sharing as published cannot run on it")
        draws = per_trial(context.start.rngs, lambda rng: rng.standard_normal((T, problem.dim)))
        noise = np.empty_like(draws)
        for m, block in enumerate(problem.parts):
            _, r = qr(block, mode="economic")
            columns = slice(problem.offsets[m], problem.offsets[m + 1])
            noise[..., columns] = sigma[m] * solve_triangular(r, draws[..., columns].reshape(-1, r.shape[0]).T).T.reshape(
                draws[..., columns].shape)  # ξ_m = σ_m R_m⁻¹ g: covariance σ_m²(D_mᵀD_m)⁻¹
        context.extras["noise"] = noise
    x = context.start.f[:, 0].copy()
    released = np.stack([x[:, problem.offsets[m]:problem.offsets[m + 1]] @ problem.parts[m].T for m in range(M)], axis=1)
    shared[:, 0] = released
    y = np.zeros((trials, problem.samples))
    z = np.zeros((trials, problem.samples))
    for t in range(T):
        total = released.sum(axis=1)
        new_x = np.empty_like(x)
        for m, solver in enumerate(solvers):  # (6), in parallel: every party sees the others' x̃^t
            columns = slice(problem.offsets[m], problem.offsets[m + 1])
            new_x[:, columns] = solver.solve(z - (total - released[:, m]), y)
        x = new_x
        noisy = x if noise is None else x + noise[:, t]
        released = np.stack([noisy[:, problem.offsets[m]:problem.offsets[m + 1]] @ problem.parts[m].T
                             for m in range(M)], axis=1)
        s = released.sum(axis=1)
        z = z_update(problem, s, y, rho, context.tol)  # (7)
        y = y + rho * (s - z)  # (8)
        shared[:, t + 1], z_record[:, t + 1] = released, z
        yield x[:, None, :], y[:, None, :]


def _dual_width(problem: SharingProblem) -> int:
    return problem.samples


@algorithm("sharing", peers=False, zero_start=True, dual_dim=_dual_width)
def run_sharing(context: RunContext, *, rho: float = 1.0) -> Iterator[tuple]:
    """Run ADMM sharing, Algorithm 1 with the parallel updates (6)-(8), from x = y = z = 0."""
    rho = real("rho", rho)
    context.parameters["rho"] = rho
    yield from _sharing_iterations(context, rho, None)


@algorithm("dp-sharing", peers=False, zero_start=True, dual_dim=_dual_width)
def run_dp_sharing(context: RunContext, *, rho: float = 1.0, sigma: float | np.ndarray = 1.0) -> Iterator[tuple]:
    """Run DP ADMM sharing (10): Gaussian noise ξ_m ~ N(0, σ_m²(D_mᵀD_m)⁻¹) on every x_m^{t+1}
    before D_m x̃_m is shared. The blocks' rows must have unit norm (Assumption 2.3, on which the
    σ of Theorem 1 rests); ``split_columns(..., normalise_rows=True)`` makes them so. ``sigma`` is one σ_m for all parties or one per party (Theorem 1:
    :func:`admmcheck.privacy.sharing_bound` computes it from ε, δ and Lemma 1's 𝐂)."""
    rho = real("rho", rho)
    problem: SharingProblem = context.problem
    message = problem.normalisation_error() if isinstance(problem, SharingProblem) else None
    if message is not None:
        raise InvalidProblem(message)
    sigma = np.broadcast_to(np.asarray(sigma, dtype=np.float64), (problem.parties,)).copy()
    if not np.all(np.isfinite(sigma) & (sigma > 0)):
        raise InvalidConfiguration(f"sigma must be positive and finite (one value or one per party); got {sigma}")
    context.parameters.update(rho=rho, sigma=sigma.tolist())
    yield from _sharing_iterations(context, rho, sigma)
