"""The CVXPY oracle against an independent scipy minimisation, and its failure modes."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import minimize

from admmcheck.foundations.errors import SolverError
from admmcheck.solving.oracle import centralized_optimum


def test_optimum_matches_scipy_bfgs(synthetic_case):
    problem, _, optimum = synthetic_case
    x = np.vstack(problem.features)
    y = np.concatenate(problem.labels)
    w = np.concatenate([np.full(b, problem.C / b) for b in problem.sizes])

    def objective(f):
        return float(w @ np.logaddexp(0.0, -y * (x @ f)) + 0.5 * problem.rho * f @ f)

    def gradient(f):
        s = -1.0 / (1.0 + np.exp(y * (x @ f)))
        return (w * s * y) @ x + problem.rho * f

    reference = minimize(objective, np.zeros(problem.dim), jac=gradient, method="BFGS", options={"gtol": 1e-12})
    np.testing.assert_allclose(optimum.solution, reference.x, atol=1e-6)
    assert optimum.objective == pytest.approx(reference.fun, rel=1e-9)
    assert optimum.status == "optimal"


def test_certificate_bounds_hold(synthetic_case):
    problem, _, optimum = synthetic_case
    assert optimum.suboptimality_bound <= 1e-9 * optimum.objective
    assert optimum.suboptimality_bound == pytest.approx(optimum.gradient_norm**2 / (2 * problem.rho))
    assert optimum.solver_objective == pytest.approx(optimum.objective, rel=1e-7)


def test_missing_solver_is_an_error(synthetic_case):
    problem, _, _ = synthetic_case
    with pytest.raises(SolverError, match="failed on eq. \\(1\\)"):
        centralized_optimum(problem, solver="GUROBI")


@pytest.mark.parametrize("status", [cp.INFEASIBLE, cp.UNBOUNDED_INACCURATE, cp.SOLVER_ERROR])
def test_non_optimal_status_is_an_error(monkeypatch, synthetic_case, status):
    problem, _, _ = synthetic_case

    def fake_solve(self, *args, **kwargs):
        self._status = status
        return None

    monkeypatch.setattr(cp.Problem, "solve", fake_solve)
    with pytest.raises(SolverError, match=f"returned status '{status}'"):
        centralized_optimum(problem)


def test_inaccurate_status_without_certificate_is_an_error(monkeypatch, synthetic_case):
    problem, _, _ = synthetic_case
    original = cp.Problem.solve

    def sloppy_solve(self, *args, **kwargs):
        original(self, *args, **kwargs)
        variable = self.variables()[0]
        variable.value = variable.value + 1e-2  # far from optimal: gradient is large
        self._status = cp.OPTIMAL_INACCURATE

    monkeypatch.setattr(cp.Problem, "solve", sloppy_solve)
    with pytest.raises(SolverError, match="optimal_inaccurate.*not used as a reference"):
        centralized_optimum(problem)
