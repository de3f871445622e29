"""Theorem 4.1 (PP) and Theorem IV.1 (private R-ADMM) against hand computations, and
their refusal when a precondition fails."""

from __future__ import annotations

import numpy as np
import pytest

from admmcheck.foundations.errors import InvalidConfiguration, PreconditionError
from admmcheck.problems.networks import path, ring
from admmcheck.privacy import BoundSetting, pp_bound, radmm_bound
from admmcheck.solving.schedules import GeometricSchedule

# A 3-node path: degrees V = (1, 2, 1); sizes B = (50, 40, 20); C = 1, rho = 1, c1 = 1/4.
SETTING = BoundSetting(sizes=(50, 40, 20), degrees=(1, 2, 1), C=1.0, rho=1.0, max_feature_norm=1.0)


def test_pp_bound_constant_schedule_by_hand():
    bound = pp_bound(SETTING, penalty=0.5, alpha=3.0, theta=0.5, iterations=10)
    # per iteration C (1.4 c1 + alpha) / (eta V_i B_i) = 3.35 / (0.5 V_i B_i)
    expected = [10 * 3.35 / (0.5 * 1 * 50), 10 * 3.35 / (0.5 * 2 * 40), 10 * 3.35 / (0.5 * 1 * 20)]
    np.testing.assert_allclose(bound.per_node, expected, rtol=1e-14)  # 1.34, 0.8375, 3.35
    assert bound.beta == pytest.approx(3.35, rel=1e-14)
    np.testing.assert_allclose(bound.curve, 0.335 * np.arange(1, 11), rtol=1e-14)  # node 3 dominates
    assert bound.holds and bound.failed == ()


def test_pp_bound_geometric_schedules_by_hand():
    eta = GeometricSchedule(0.5, 1.1)  # 0.5, 0.55, 0.605
    alpha = GeometricSchedule(3.0, 1.2)  # 3, 3.6, 4.32
    bound = pp_bound(SETTING, penalty=eta, alpha=alpha, theta=0.5, iterations=3)
    node3 = 3.35 / (0.5 * 20) + 3.95 / (0.55 * 20) + 4.67 / (0.605 * 20)  # 0.335 + 0.35909 + 0.38595
    node1 = 3.35 / (0.5 * 50) + 3.95 / (0.55 * 50) + 4.67 / (0.605 * 50)
    assert bound.per_node[2] == pytest.approx(node3, rel=1e-13)
    assert bound.per_node[0] == pytest.approx(node1, rel=1e-13)
    assert bound.beta == pytest.approx(1.0800413, rel=1e-7)
    np.testing.assert_allclose(bound.curve, [0.335, 0.335 + 3.95 / 11, node3], rtol=1e-13)


def test_radmm_bound_constant_alpha_by_hand():
    bound = radmm_bound(SETTING, eta=1.0, alpha=2.0, iterations=5)  # K = 3 odd iterations
    # node 3: 3 * (2C/B)(1.4 c1 / (rho/N + 2 eta V) + alpha) = 3 * 0.1 * (0.35 / (1/3 + 2) + 2)
    node3 = 3 * 0.1 * (0.35 / (1 / 3 + 2) + 2)  # = 0.645
    node2 = 3 * 0.05 * (0.35 / (1 / 3 + 4) + 2)
    assert bound.per_node[2] == pytest.approx(node3, rel=1e-14)
    assert bound.per_node[1] == pytest.approx(node2, rel=1e-14)
    assert bound.beta == pytest.approx(0.645, rel=1e-14)
    # P(t) grows only at odd t (Lemma IV.1): t = 1..5 -> k = 1, 1, 2, 2, 3
    np.testing.assert_allclose(bound.curve, [0.215, 0.215, 0.43, 0.43, 0.645], rtol=1e-14)


def test_radmm_bound_per_iteration_alpha_by_hand():
    alpha = np.array([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [4.0, 4.0, 4.0]])  # alpha_i(k), k = 1..3
    bound = radmm_bound(SETTING, eta=0.5, alpha=alpha, iterations=6)
    # node 3 (V = 1, B = 20): sum_k 0.1 (0.35 / (1/3 + 1) + alpha(k)) = 0.1 (3 * 0.2625 + 7)
    assert bound.per_node[2] == pytest.approx(0.1 * (3 * 0.2625 + 7), rel=1e-14)
    assert bound.beta == pytest.approx(0.77875, rel=1e-14)


def test_bounds_from_a_problem(synthetic_case):
    problem, network, _ = synthetic_case
    setting = BoundSetting.from_problem(problem, network)
    assert setting.sizes == problem.sizes and setting.degrees == (2, 2, 2, 2, 2)
    assert setting.max_feature_norm <= 1.0 + 1e-12
    bound = pp_bound(setting, penalty=0.5, alpha=1.0, theta=0.5, iterations=4)
    expected = max(4 * 1.35 / (0.5 * 2 * b) for b in problem.sizes)
    assert bound.require() == pytest.approx(expected, rel=1e-14)


def test_refused_on_data_with_norm_above_one():
    rng = np.random.default_rng(0)
    features = [rng.uniform(-0.3, 0.3, (30, 4)) for _ in range(3)]
    features[1][7] = [2.0, 0.0, 0.0, 0.0]  # ||x|| = 2
    setting = BoundSetting.from_data(features, ring(3), C=1.0, rho=1.0)
    assert setting.max_feature_norm == pytest.approx(2.0)
    for bound in (pp_bound(setting, 0.5, 3.0, 0.5, 5), radmm_bound(setting, 1.0, 3.0, 5)):
        assert bound.beta is None and not bound.holds
        assert bound.failed == ("feature_norm_at_most_1",)
        assert bound.as_dict()["beta"] is None
        with pytest.raises(PreconditionError, match="feature_norm_at_most_1"):
            bound.require()


def test_refused_when_theta_or_eta_violates_the_curvature_condition():
    # 2 c1 = 0.5 but (B_i/C)(rho/N + 2 theta V_i) = (2/2)(0.01/3 + 2 * 0.05 * V_i) <= 0.2
    small = BoundSetting(sizes=(2, 2, 2), degrees=(1, 2, 1), C=2.0, rho=0.01, max_feature_norm=1.0)
    pp = pp_bound(small, penalty=0.05, alpha=1.0, theta=0.05, iterations=3)
    assert pp.failed == ("theta_condition",) and pp.beta is None
    radmm = radmm_bound(small, eta=0.05, alpha=1.0, iterations=3)
    assert radmm.failed == ("eta_condition",) and radmm.beta is None
    # the boundary is strict: equality 2 c1 = (B/C)(rho/N + 2 theta V) is refused
    # with B = 4, C = 1, rho/N = 0.25, theta = 0.5, V = 1: (B/C)(rho/N + 2 theta V) = 5 exactly
    on_boundary = BoundSetting(sizes=(4, 4), degrees=(1, 1), C=1.0, rho=0.5, max_feature_norm=1.0, c1=2.5)
    inside = BoundSetting(sizes=(4, 4), degrees=(1, 1), C=1.0, rho=0.5, max_feature_norm=1.0, c1=2.49)
    assert "theta_condition" in pp_bound(on_boundary, 0.5, 1.0, 0.5, 2).failed  # 2 c1 = 5
    assert "theta_condition" not in pp_bound(inside, 0.5, 1.0, 0.5, 2).failed  # 2 c1 = 4.98


def test_pp_refuses_schedules_outside_the_theorem():
    decreasing = pp_bound(SETTING, penalty=GeometricSchedule(1.0, 0.9), alpha=1.0, theta=0.5, iterations=5)
    assert decreasing.failed == ("penalty_nondecreasing",)
    below_theta = pp_bound(SETTING, penalty=0.4, alpha=1.0, theta=0.5, iterations=5)
    assert below_theta.failed == ("penalty_at_least_theta",)


def test_a_c1_below_the_loss_curvature_is_refused():
    optimistic = BoundSetting(sizes=(50, 40, 20), degrees=(1, 2, 1), C=1.0, rho=1.0, max_feature_norm=1.0, c1=0.1)
    assert pp_bound(optimistic, 0.5, 3.0, 0.5, 4).failed == ("c1_bounds_loss_curvature",)


def test_no_noise_gives_an_infinite_but_valid_bound():
    bound = pp_bound(SETTING, penalty=0.5, alpha=np.inf, theta=0.5, iterations=3)
    assert bound.holds and bound.beta == np.inf


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"sizes": (10, 10), "degrees": (1,)}, "one B_i and one V_i per node"),
        ({"sizes": (10, 0), "degrees": (1, 1)}, "sizes=0 must be a positive integer"),
        ({"sizes": (10, 10), "degrees": (1, 1), "C": -1.0}, "C=-1.0 must be finite"),
    ],
)
def test_bad_settings_are_rejected(kwargs, message):
    base = {"C": 1.0, "rho": 1.0, "max_feature_norm": 1.0}
    with pytest.raises(InvalidConfiguration, match=message):
        BoundSetting(**{**base, **kwargs})


def test_bad_schedules_are_rejected():
    with pytest.raises(InvalidConfiguration, match="alpha has shape"):
        pp_bound(SETTING, penalty=0.5, alpha=[1.0, 2.0], theta=0.5, iterations=3)
    with pytest.raises(InvalidConfiguration, match="got features for 2 nodes on a 3-node network"):
        BoundSetting.from_data([np.zeros((2, 2))] * 2, path(3), C=1.0, rho=1.0)


def test_expression_schedules_give_the_same_bound_as_tables():
    from admmcheck.solving.schedules import ExpressionSchedule, parse_schedule

    by_formula = pp_bound(SETTING, penalty=parse_schedule("0.5*1.1^(t-1)"), alpha=parse_schedule("3*1.2^(t-1)"),
                          theta=0.5, iterations=3)
    by_geometric = pp_bound(SETTING, penalty=GeometricSchedule(0.5, 1.1), alpha=GeometricSchedule(3.0, 1.2),
                            theta=0.5, iterations=3)
    np.testing.assert_allclose(by_formula.per_node, by_geometric.per_node, rtol=1e-14)
    per_node = ExpressionSchedule("0.4 + 0.1*i").table(2, 3)
    np.testing.assert_allclose(per_node, [[0.5, 0.6, 0.7]] * 2)
    assert parse_schedule("1, 2,3") == (1.0, 2.0, 3.0) and parse_schedule("inf", allow_infinite=True) == np.inf
    with pytest.raises(InvalidConfiguration, match="ends too early"):
        parse_schedule("0.5*(")


def test_alpha_for_target_reproduces_the_target_bound():
    from admmcheck.privacy import pp_alpha_for_target, radmm_alpha_for_target

    eta = GeometricSchedule(0.5, 1.05)
    alpha1 = pp_alpha_for_target(SETTING, eta, theta=0.5, target=2.0, iterations=20, growth=1.02)
    bound = pp_bound(SETTING, eta, GeometricSchedule(alpha1, 1.02), theta=0.5, iterations=20)
    assert bound.beta == pytest.approx(2.0, rel=1e-12)
    alpha = radmm_alpha_for_target(SETTING, eta=1.0, target=2.0, iterations=21)
    assert radmm_bound(SETTING, 1.0, alpha, 21).beta == pytest.approx(2.0, rel=1e-12)
    with pytest.raises(InvalidConfiguration, match="below what PP costs with no noise"):
        pp_alpha_for_target(SETTING, 0.5, theta=0.5, target=1e-3, iterations=20)
