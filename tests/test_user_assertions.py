"""Issue 60, item 4: the assertions take a researcher's own work. ``assert_converges`` takes any optimiser on its
own data with a CVXPY problem as the reference; ``assert_conditions_hold`` takes one's own condition matrices, and
reads a registered theorem's fields given as text as their flags read them."""

from __future__ import annotations

from fractions import Fraction

import cvxpy as cp
import numpy as np
import pytest

from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.testing import assert_conditions_hold, assert_converges

RNG = np.random.default_rng(7)
X, Y = RNG.standard_normal((60, 4)), RNG.standard_normal(60)
LAM = 0.1


def ridge_by_gradient_descent(iterations: int, step: float = 0.2) -> np.ndarray:
    """A researcher's own optimiser: gradient descent on ||Xw - y||^2/n + lam ||w||^2."""
    w = np.zeros(X.shape[1])
    for _ in range(iterations):
        w -= step * (2 * X.T @ (X @ w - Y) / len(Y) + 2 * LAM * w)
    return w


def _ridge() -> cp.Problem:
    w = cp.Variable(X.shape[1])
    return cp.Problem(cp.Minimize(cp.sum_squares(X @ w - Y) / len(Y) + LAM * cp.sum_squares(w)))


def test_a_users_own_optimiser_is_checked_against_their_cvxpy_problem():
    gap = assert_converges(ridge_by_gradient_descent, reference=_ridge(), iterations=2_000, tolerance=1e-8)
    closed = np.linalg.solve(X.T @ X / len(Y) + LAM * np.eye(4), X.T @ Y / len(Y))  # the normal equations
    best = np.sum((X @ closed - Y) ** 2) / len(Y) + LAM * closed @ closed
    w = ridge_by_gradient_descent(2_000)
    assert gap == pytest.approx(abs(np.sum((X @ w - Y) ** 2) / len(Y) + LAM * w @ w - best) / best, abs=1e-9)
    with pytest.raises(AssertionError, match=r"ridge_by_gradient_descent\(iterations=3\) does not reach the CVXPY "
                                             r"optimum: relative objective gap"):
        assert_converges(ridge_by_gradient_descent, reference=_ridge(), iterations=3)  # passed: it takes iterations


def test_a_point_outside_the_constraints_does_not_converge_whatever_its_objective():
    w = cp.Variable(4)
    nonnegative = cp.Problem(cp.Minimize(cp.sum_squares(X @ w - Y) / len(Y)), [w >= 0])
    unconstrained = np.linalg.lstsq(X, Y, rcond=None)[0]  # below the constrained optimum, and negative somewhere
    assert unconstrained.min() < 0
    with pytest.raises(AssertionError, match=f"largest constraint violation {-unconstrained.min():.3e}"):
        assert_converges(lambda: unconstrained, reference=nonnegative)
    with pytest.raises(InvalidConfiguration, match="returned a point of shape \\(3,\\)"):
        assert_converges(lambda: np.zeros(3), reference=nonnegative)


def test_ones_own_condition_matrices_are_decided_exactly_with_a_certificate():
    result = assert_conditions_hold({"M(1)": [[2, 1], [1, 2]], "M(2)": [["1/2", 0], [0, Fraction(1, 3)]]})
    assert result.status == "pass" and [c["holds"] for c in result.as_dict()["conditions"]] == [True, True]
    assert str(result) == "  holds  M(1): M(1) is positive definite\n  holds  M(2): M(2) is positive definite"
    assert assert_conditions_hold({"edge": [[1, 1], [1, 1]]}, strict=False).status == "pass"
    with pytest.raises(AssertionError) as refused:
        assert_conditions_hold({"edge": [[1, 1], [1, 1]]})  # singular: semidefinite, not definite
    vector = [Fraction(v) for v in refused.value.args[0].split("x = [")[1].split("]")[0].split(", ")]
    assert vector[0] ** 2 + 2 * vector[0] * vector[1] + vector[1] ** 2 == 0 and any(vector)  # x^T M x recomputed
    with pytest.raises(InvalidConfiguration, match="a condition matrix is square"):
        assert_conditions_hold({"bad": [[1, 2, 3], [4, 5, 6]]})


def test_a_registered_theorems_field_given_as_text_is_read_as_its_flag_reads_it():
    """``eta="1/2"`` was read as the three values '1', '/', '2'; it is one value, as ``--eta 1/2`` is."""
    as_text = assert_conditions_hold("madmm", graph="ring:4", growth="1", strong_convexity="1/4",
                                     lipschitz="1/4,1/2,1/4,1/2")
    as_values = assert_conditions_hold("madmm", graph="ring:4", growth=("1",), strong_convexity=("1/4",),
                                       lipschitz=("1/4", "1/2", "1/4", "1/2"))
    timing = "elapsed_s"  # the only field that may differ: how long the decision took
    assert ({k: v for k, v in as_text.as_dict().items() if k != timing}
            == {k: v for k, v in as_values.as_dict().items() if k != timing})
    assert as_text.status == "pass"


def test_a_registered_sharing_algorithm_is_asserted_by_name_against_cvxpy_and_an_online_one_is_refused():
    """assert_converges by name runs any family whose problems have an optimum (issue 60, item 2): ADMM sharing's
    gap is its run's, against CVXPY's optimum of (1) solved independently here; DPSDA's runs have a regret, no
    optimum, and are refused with what to do."""
    from admmcheck.mechanisms.settings import SharingSetting
    from admmcheck.solving.oracle import sharing_optimum

    setting = SharingSetting(dataset="breast-cancer", parties=2)
    gap = assert_converges("sharing", setting)
    problem = setting.problem(normalise_rows=False)
    x = cp.Variable(problem.design.shape[1])
    z = problem.design @ x
    loss = cp.sum(cp.logistic(-cp.multiply(problem.labels, z))) / problem.samples
    objective = loss + problem.lam / 2 * cp.sum_squares(x)
    optimum = cp.Problem(cp.Minimize(objective)).solve(solver=cp.CLARABEL)
    assert optimum == pytest.approx(sharing_optimum(problem).objective, rel=1e-6) and gap <= 1e-6
    with pytest.raises(InvalidConfiguration, match="measured by their regret"):
        assert_converges("dpsda-c")
