"""The centralized optimum f_c* of eq. (1), computed independently with CVXPY.

The logistic terms are modelled with ``cvxpy.logistic`` (an exponential-cone
representation), so the optimum shares no code with the Newton solver the algorithms use.

Every optimum carries an a-posteriori certificate that needs no trust in the solver:
O_ERM is rho-strongly convex (R is 1-strongly convex, the loss convex), so for the
returned point f and its gradient g = grad O_ERM(f),

    O_ERM(f) - O*  <=  ||g||^2 / (2 rho),       ||f - f_c*||_2  <=  ||g|| / rho.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from admmcheck.foundations.errors import SolverError
from admmcheck.problems import ConsensusProblem
from admmcheck.problems.online import OnlineProblem
from admmcheck.problems.sharing import SharingProblem

# An "optimal_inaccurate" solution is used as a reference only if its certified
# relative suboptimality is at most this (the convergence checks compare against 1e-6).
CERTIFIED_RELATIVE_GAP = 1e-8


@dataclass(frozen=True, eq=False)
class Optimum:
    """Centralized solution of eq. (1) with its optimality certificate.

    ``objective`` is O_ERM(solution) re-evaluated in numpy; ``gradient_norm`` is
    ||grad O_ERM(solution)||_2; ``suboptimality_bound`` = gradient_norm^2 / (2 rho) bounds
    objective - O*, and ``distance_bound`` = gradient_norm / rho bounds
    ||solution - f_c*||_2.
    """

    solution: np.ndarray
    objective: float
    status: str
    solver: str
    solver_objective: float
    gradient_norm: float
    suboptimality_bound: float
    distance_bound: float


def _solve(objective, variable, constraints: list, solver: str, what: str,
           accepted: tuple[str, ...] = ("optimal", "optimal_inaccurate"), hint: str = "") -> tuple[np.ndarray, str, float]:
    """Minimise with CVXPY; (solution, status, solver value), or :class:`SolverError` naming ``what``."""
    import cvxpy as cp  # here, not at import: cvxpy takes 0.6 s to import, and most commands never solve

    cvx_problem = cp.Problem(cp.Minimize(objective), constraints)
    try:
        cvx_problem.solve(solver=solver)
    except cp.error.SolverError as exc:
        raise SolverError(f"CVXPY solver {solver} failed on {what}: {exc}") from exc
    status = str(cvx_problem.status)
    if status not in accepted or variable.value is None:
        raise SolverError(f"CVXPY solver {solver} returned status {status!r} on {what}{hint}")
    return np.array(variable.value, dtype=np.float64), status, float(cvx_problem.value)


def centralized_optimum(problem: ConsensusProblem, solver: str = "CLARABEL") -> Optimum:
    """Solve eq. (1) with CVXPY and certify the result.

    Raises :class:`SolverError` if the solver fails, returns a status other than
    optimal, or returns "optimal_inaccurate" without a certificate
    (``suboptimality_bound / |objective| <= CERTIFIED_RELATIVE_GAP``) that the point is
    accurate after all. (Clarabel stalls just short of its 1e-8 gap tolerance on some
    exponential-cone instances and says "optimal_inaccurate"; the certificate decides.)
    """
    import cvxpy as cp  # here, not at import: cvxpy takes 0.6 s to import, and most commands never solve

    features = problem.stacked.signed_features
    weights = problem.stacked.weights
    f = cp.Variable(problem.dim)
    objective = weights @ cp.logistic(-(features @ f)) + 0.5 * problem.rho * cp.sum_squares(f)
    solution, status, solver_value = _solve(objective, f, [], solver, "eq. (1)", hint="; no reference optimum is "
                                            "available (try solver='SCS' or rescale C and rho)")
    solution.setflags(write=False)
    value = float(problem.objective(solution))
    gradient_norm = float(np.linalg.norm(problem.gradient(solution)))
    bound = gradient_norm**2 / (2.0 * problem.rho)
    if status != cp.OPTIMAL and bound > CERTIFIED_RELATIVE_GAP * abs(value):
        raise SolverError(
            f"CVXPY solver {solver} returned status {status!r} with ||grad O_ERM|| = "
            f"{gradient_norm:.3g}, certifying only O - O* <= {bound:.3g} "
            f"(> {CERTIFIED_RELATIVE_GAP:g} relative); not used as a reference"
        )
    return Optimum(
        solution=solution,
        objective=value,
        status=status,
        solver=solver,
        solver_objective=solver_value,
        gradient_norm=gradient_norm,
        suboptimality_bound=bound,
        distance_bound=gradient_norm / problem.rho,
    )


def sharing_optimum(problem: SharingProblem, solver: str = "CLARABEL") -> Optimum:
    """Solve the sharing problem (1)-(2) centrally with CVXPY (``cvxpy.logistic``, as above).

    The objective is λ-strongly convex, so without a box the same certificate holds with λ in
    place of rho; with a box the gradient is replaced by the projected-gradient residual
    x − Π_X(x − ∇F(x)) (zero exactly at the optimum) and the bounds are reported from it, as
    indications rather than certificates (status "optimal" is then required).
    """
    import cvxpy as cp  # here, not at import: cvxpy takes 0.6 s to import, and most commands never solve

    x = cp.Variable(problem.dim)
    margins = cp.multiply(problem.labels, problem.design @ x)
    objective = cp.sum(cp.logistic(-margins)) / problem.samples + 0.5 * problem.lam * cp.sum_squares(x)
    constraints = [cp.abs(x) <= problem.box] if problem.box is not None else []
    solution, status, solver_value = _solve(objective, x, constraints, solver, "the sharing problem (1)")
    if problem.box is not None:
        solution = np.clip(solution, -problem.box, problem.box)
        gradient = solution - np.clip(solution - problem.gradient(solution), -problem.box, problem.box)
    else:
        gradient = problem.gradient(solution)
    solution.setflags(write=False)
    value = float(problem.objective(solution))
    gradient_norm = float(np.linalg.norm(gradient))
    bound = gradient_norm**2 / (2.0 * problem.lam)
    if status != cp.OPTIMAL and (problem.box is not None or bound > CERTIFIED_RELATIVE_GAP * abs(value)):
        raise SolverError(f"CVXPY solver {solver} returned status {status!r} with residual {gradient_norm:.3g} on the "
                          "sharing problem; not used as a reference")
    return Optimum(solution=solution, objective=value, status=status, solver=solver,
                   solver_objective=solver_value, gradient_norm=gradient_norm,
                   suboptimality_bound=bound, distance_bound=gradient_norm / problem.lam)


def hindsight_optimum(problem: OnlineProblem, rounds: int | None = None, solver: str = "CLARABEL") -> Optimum:
    """inf_{v ∈ χ} Σ_{t ≤ rounds} f_t(v), the comparator of the DPSDA regrets (2), (3), (19),
    solved with CVXPY (a least-squares or logistic program over the box or ball)."""
    import cvxpy as cp  # here, not at import: cvxpy takes 0.6 s to import, and most commands never solve

    rounds = problem.rounds if rounds is None else rounds
    a = problem.features[:rounds].reshape(-1, problem.dim)
    b = problem.targets[:rounds].reshape(-1)
    v = cp.Variable(problem.dim)
    if problem.loss == "squared":
        objective = cp.sum_squares(a @ v - b)
    else:
        objective = cp.sum(cp.logistic(-cp.multiply(b, a @ v)))
    constraints = [cp.abs(v) <= problem.radius] if problem.set_kind == "box" else [cp.norm(v, 2) <= problem.radius]
    solution, status, solver_value = _solve(objective, v, constraints, solver, "the hindsight problem",
                                            accepted=(cp.OPTIMAL,))
    solution = problem.project(solution)
    solution.setflags(write=False)
    value = float(sum(problem.value(t, solution) for t in range(1, rounds + 1)))
    return Optimum(solution=solution, objective=value, status=status, solver=solver,
                   solver_objective=solver_value, gradient_norm=float("nan"),
                   suboptimality_bound=float("nan"), distance_bound=float("nan"))
