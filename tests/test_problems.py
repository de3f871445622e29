"""The consensus ERM model: validation messages and values against direct formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from admmcheck.foundations.errors import InvalidProblem
from admmcheck.problems import ConsensusProblem, load_problem_npz


def _node(rows: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, dim))
    x /= 2 * np.linalg.norm(x, axis=1, keepdims=True)
    y = np.where(rng.random(rows) < 0.5, -1.0, 1.0)
    return x, y


@pytest.fixture
def small_problem() -> ConsensusProblem:
    parts = [_node(4, 3, 0), _node(6, 3, 1), _node(5, 3, 2)]
    return ConsensusProblem(tuple(p[0] for p in parts), tuple(p[1] for p in parts), C=2.0, rho=0.7)


def _local_objective_by_hand(problem: ConsensusProblem, i: int, f: np.ndarray) -> float:
    x, y = problem.features[i], problem.labels[i]
    total = sum(math.log1p(math.exp(-y[n] * float(x[n] @ f))) for n in range(len(y)))
    return problem.C / len(y) * total + problem.rho / problem.nodes * 0.5 * float(f @ f)


def test_local_objectives_match_eq2_by_hand(small_problem):
    f = np.random.default_rng(3).standard_normal((small_problem.nodes, 3))
    expected = [_local_objective_by_hand(small_problem, i, f[i]) for i in range(small_problem.nodes)]
    np.testing.assert_allclose(small_problem.local_objectives(f), expected, rtol=1e-13)


def test_centralized_objective_is_sum_of_local_objectives_at_consensus(small_problem):
    f = np.random.default_rng(4).standard_normal(3)
    by_hand = sum(_local_objective_by_hand(small_problem, i, f) for i in range(small_problem.nodes))
    assert small_problem.objective(f) == pytest.approx(by_hand, rel=1e-13)


def test_gradient_and_hessian_match_finite_differences(small_problem):
    rng = np.random.default_rng(5)
    f = rng.standard_normal((small_problem.nodes, 3))
    h = 1e-6
    grad = small_problem.local_gradients(f)
    hess = small_problem.local_hessians(f)
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        numeric_grad = (small_problem.local_objectives(f + e) - small_problem.local_objectives(f - e)) / (2 * h)
        np.testing.assert_allclose(grad[:, k], numeric_grad, atol=1e-8)
        numeric_hess = (small_problem.local_gradients(f + e) - small_problem.local_gradients(f - e)) / (2 * h)
        np.testing.assert_allclose(hess[:, :, k], numeric_hess, atol=1e-8)
    central = rng.standard_normal(3)
    numeric = [
        (small_problem.objective(central + h * np.eye(3)[k]) - small_problem.objective(central - h * np.eye(3)[k])) / (2 * h)
        for k in range(3)
    ]
    np.testing.assert_allclose(small_problem.gradient(central), numeric, atol=1e-8)


def test_logistic_constants_hold_numerically(small_problem):
    z = np.linspace(-40, 40, 10001)
    loss = small_problem.loss
    assert np.max(np.abs(loss.derivative(z))) <= loss.lipschitz
    assert np.max(loss.second_derivative(z)) == pytest.approx(loss.c1)
    assert np.all(np.isfinite(loss.value(np.array([-800.0, 800.0]))))


def test_batched_evaluation_has_trial_axis(small_problem):
    f = np.random.default_rng(6).standard_normal((7, small_problem.nodes, 3))
    batched = small_problem.local_objectives(f)
    assert batched.shape == (7, small_problem.nodes)
    np.testing.assert_allclose(batched[4], small_problem.local_objectives(f[4]), rtol=1e-14)


def test_npz_round_trip(tmp_path, small_problem):
    adjacency = np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    path = small_problem.save_npz(tmp_path / "p.npz", adjacency=adjacency)
    loaded, loaded_adjacency = load_problem_npz(path)
    assert loaded.C == small_problem.C and loaded.rho == small_problem.rho
    for a, b in zip(loaded.features, small_problem.features):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(loaded_adjacency, adjacency)


# ------------------------------------------------------------------- validation
def _problem(**overrides):
    x, y = _node(5, 3, 0)
    args = dict(features=(x, x), labels=(y, y), C=1.0, rho=1.0)
    args.update(overrides)
    return ConsensusProblem(**args)


def test_labels_outside_plus_minus_one_are_rejected():
    x, y = _node(5, 3, 0)
    with pytest.raises(InvalidProblem, match=r"labels of node 1 contain \[0\.0\]; labels must be in \{-1, \+1\}"):
        _problem(labels=(y, np.where(y > 0, 1.0, 0.0)))


def test_rows_outside_unit_ball_are_rejected():
    x, y = _node(5, 3, 0)
    x2 = x.copy()
    x2[3] *= 5.0
    with pytest.raises(InvalidProblem, match=r"sample 3 of node 0 has \|\|x\|\|_2 = 2\.5 > 1"):
        _problem(features=(x2, x))


def test_c_larger_than_a_node_sample_count_is_rejected():
    with pytest.raises(InvalidProblem, match=r"C = 6 exceeds B_0 = 5 .* requires C <= B_i .* at most 5"):
        _problem(C=6.0)


def test_empty_node_is_rejected():
    x, y = _node(5, 3, 0)
    with pytest.raises(InvalidProblem, match="node 1 holds no samples"):
        _problem(features=(x, np.zeros((0, 3))), labels=(y, np.zeros(0)))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_and_inf_features_are_rejected(bad):
    x, y = _node(5, 3, 0)
    x2 = x.copy()
    x2[2, 1] = bad
    with pytest.raises(InvalidProblem, match=r"features of node 1 contain NaN or inf \(first at row 2, column 1\)"):
        _problem(features=(x, x2))


def test_nan_labels_are_rejected():
    x, y = _node(5, 3, 0)
    y2 = y.copy()
    y2[0] = np.nan
    with pytest.raises(InvalidProblem, match="labels of node 0 contain NaN or inf"):
        _problem(labels=(y2, y))


def test_mismatched_feature_dimensions_are_rejected():
    x, y = _node(5, 3, 0)
    x4, _ = _node(5, 4, 1)
    with pytest.raises(InvalidProblem, match="node 1 has features of dimension 4 but node 0 has 3"):
        _problem(features=(x, x4))


def test_mismatched_label_count_is_rejected():
    x, y = _node(5, 3, 0)
    with pytest.raises(InvalidProblem, match="node 0 has 5 feature rows but 4 labels"):
        _problem(labels=(y[:4], y))


@pytest.mark.parametrize("name,value", [("C", 0.0), ("rho", -1.0), ("rho", float("nan"))])
def test_non_positive_constants_are_rejected(name, value):
    with pytest.raises(InvalidProblem, match=f"{name}=.* must be a finite positive number"):
        _problem(**{name: value})


def test_problem_is_immutable():
    problem = _problem()
    with pytest.raises(ValueError):
        problem.features[0][0, 0] = 1.0


def test_fused_logistic_value_and_derivatives_match_scipy_special_everywhere():
    from scipy.special import expit, log_expit

    from admmcheck.problems.consensus import LogisticLoss

    z = np.concatenate([np.linspace(-750, 750, 3001), [-1e-300, 0.0, 1e-300, 37.0, -37.0]])
    value, first, second = LogisticLoss.value_and_derivatives(z)
    np.testing.assert_allclose(value, -log_expit(z), rtol=1e-15, atol=0)
    np.testing.assert_allclose(first, -expit(-z), rtol=1e-15, atol=1e-300)  # subnormal tails
    np.testing.assert_allclose(second, expit(z) * expit(-z), rtol=1e-14, atol=1e-300)
