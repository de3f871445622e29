"""ADMM sharing over vertically partitioned features and its DP version (issue 17)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from admmcheck.algorithms import run_dp_sharing, run_sharing
from admmcheck.algorithms.sharing import z_update
from admmcheck.cli import main
from admmcheck.problems.datasets import breast_cancer, synthetic
from admmcheck.foundations.errors import InvalidProblem
from admmcheck.solving.oracle import sharing_optimum
from admmcheck.privacy.sharing import corollary1_total, lemma1_sensitivity, sharing_bound, theorem1_sigma
from admmcheck.problems.sharing import SharingProblem, split_columns


@pytest.fixture(scope="module")
def synthetic_three():
    data = synthetic(300, 12, seed=0)
    problem = split_columns(data.features, data.labels, 3, lam=0.01)
    return problem, sharing_optimum(problem)


@pytest.fixture(scope="module")
def cancer_two():
    data = breast_cancer()
    problem = split_columns(data.features, data.labels, 2, lam=0.01)
    return problem, sharing_optimum(problem)


@pytest.mark.parametrize("case", ["synthetic_three", "cancer_two"])
def test_admm_sharing_reaches_the_cvxpy_optimum(case, request):
    problem, optimum = request.getfixturevalue(case)
    run = run_sharing(problem, rho=0.001, iterations=300, seeds=[0], reference=optimum)
    assert abs(run.objective_gap[0, -1]) <= 1e-6
    assert np.linalg.norm(run.extras["shared"][0, -1].sum(axis=0) - run.extras["z"][0, -1]) <= 1e-5
    assert run.primal.shape == (1, 301, 1, problem.dim) and run.dual.shape == (1, 301, 1, problem.samples)


def test_the_shared_values_are_each_partys_block_times_its_decision(synthetic_three):
    problem, _ = synthetic_three
    run = run_sharing(problem, rho=0.01, iterations=5, seeds=[0])
    for m in range(problem.parties):
        np.testing.assert_allclose(run.extras["shared"][0, :, m], problem.block(run.primal[0, :, 0], m) @ problem.parts[m].T,
                                   atol=1e-12)
    np.testing.assert_array_equal(run.primal[0, 0], 0.0)  # x = y = z = 0 (§5)


def test_the_z_update_solves_its_optimality_condition(synthetic_three):
    problem, _ = synthetic_three
    rng = np.random.default_rng(0)
    s, y = rng.normal(size=(4, problem.samples)) * 3, rng.normal(size=(4, problem.samples)) / problem.samples
    for rho in (1e-4, 1e-2, 10.0):
        z = z_update(problem, s, y, rho, 1e-12)
        np.testing.assert_allclose(problem.loss_gradient(z) - y + rho * (z - s), 0.0, atol=1e-11 * rho)


def test_a_box_constrained_run_reaches_the_constrained_optimum():
    data = synthetic(200, 6, seed=3)
    problem = split_columns(data.features, data.labels, 2, lam=0.01, box=0.5)
    optimum = sharing_optimum(problem)
    assert np.max(np.abs(optimum.solution)) == pytest.approx(0.5)  # the box is active
    run = run_sharing(problem, rho=0.001, iterations=300, seeds=[0], reference=optimum)
    assert abs(run.objective_gap[0, -1]) <= 1e-6 and np.max(np.abs(run.primal[0, -1])) <= 0.5 + 1e-12


def test_dp_noise_has_the_covariance_of_eq_10_and_lies_in_the_column_space():
    data = synthetic(60, 4, seed=1)
    problem = split_columns(data.features, data.labels, 2, lam=0.1, normalise_rows=True)
    run = run_dp_sharing(problem, rho=0.5, sigma=[0.3, 0.7], iterations=1, seeds=np.random.SeedSequence(0).spawn(20_000))
    noise = run.extras["noise"][:, 0]
    for m, sigma in enumerate((0.3, 0.7)):
        block = problem.parts[m]
        expected = sigma**2 * np.linalg.inv(block.T @ block)
        empirical = np.cov(problem.block(noise, m), rowvar=False)
        assert np.max(np.abs(empirical - expected)) <= 5 * np.max(np.abs(expected)) * math.sqrt(2 / 20_000)
        shared = problem.block(noise, m) @ block.T  # D_m ξ_m: in col(D_m), zero off it
        projector = block @ np.linalg.pinv(block)
        np.testing.assert_allclose(shared @ projector, shared, atol=1e-10)


def test_theorem1_sigma_and_corollary1_match_a_hand_computation():
    # (66, 57), rho = 1, lambda = 0.01, c1 = b1 = 1, M = 2: C = 3/(66*1) * (0.01 + (1 + 2) * 1)
    assert lemma1_sensitivity(66, 2, 1.0, 0.01, 1.0, 1.0) == pytest.approx(3 * 3.01 / 66, rel=1e-15)
    assert theorem1_sigma(3 * 3.01 / 66, 1.0, 1e-5) == pytest.approx(math.sqrt(2 * math.log(125_000)) * 3 * 3.01 / 66)
    # T = 20, eps = 0.1, delta' = 1e-5: sqrt(40 ln 1e5) * 0.1 + 20 * 0.1 * (e^0.1 - 1)
    total, delta = corollary1_total(0.1, 1e-5, 20, 1e-5)
    assert total == pytest.approx(math.sqrt(40 * math.log(1e5)) * 0.1 + 2 * (math.exp(0.1) - 1), rel=1e-14)
    assert total == pytest.approx(2.35631, abs=1e-5) and delta == pytest.approx(20e-5 + 1e-5)
    # second setting: 3 parties (10, 20, 5), rho = 0.5, lambda = 0.1, c1 = 1, b1 = 2, eps = 0.5, delta = 1e-6
    bound = sharing_bound((10, 20, 5), rho=0.5, lam=0.1, c1=1.0, b1=2.0, epsilon=0.5, delta=1e-6, iterations=5,
                          delta_prime=1e-6)
    for d, c, s in zip((10, 20, 5), bound.sensitivity, bound.sigma):
        assert c == pytest.approx(3 / (d * 0.5) * (0.1 + 2.5 * 2.0))
        assert s == pytest.approx(math.sqrt(2 * math.log(1.25e6)) * c / 0.5)
    assert bound.epsilon_total == pytest.approx(math.sqrt(10 * math.log(1e6)) * 0.5 + 2.5 * (math.exp(0.5) - 1))


def test_the_accountant_composes_the_same_gaussian_mechanism_tighter_than_corollary1():
    bound = sharing_bound((66, 57), rho=1.0, lam=0.01, c1=1.0, b1=1.0, epsilon=1.0, delta=1e-5, iterations=20,
                          delta_prime=1e-5)
    # one Gaussian mechanism of noise multiplier sqrt(2 ln(1.25/delta))/eps is (eps, delta)-DP: T-fold at T*delta + delta'
    assert bound.accountant_pld <= bound.accountant_rdp + 1e-9 and bound.accountant_pld < bound.epsilon_total
    single = sharing_bound((66,), rho=1.0, lam=0.01, c1=1.0, b1=1.0, epsilon=1.0, delta=1e-5, iterations=1,
                           delta_prime=1e-12)
    assert single.accountant_pld <= 1.0  # the classical calibration is conservative for one release


def test_rank_deficient_blocks_and_bad_rows_are_refused_with_what_to_change():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 3))
    labels = np.where(rng.random(20) < 0.5, -1.0, 1.0)
    deficient = np.hstack([x, x[:, :1] + x[:, 1:2]])
    with pytest.raises(InvalidProblem, match="rank 3 < 4 columns.*drop the redundant columns"):
        SharingProblem((deficient, x), labels, 0.1)
    with pytest.raises(InvalidProblem, match="empty"):
        SharingProblem((x, np.zeros((20, 0))), labels, 0.1)
    with pytest.raises(InvalidProblem, match="has 19 rows but there are 20 labels"):
        SharingProblem((x, x[:19]), labels, 0.1)
    raw = SharingProblem((x, x * 2), labels, 0.1)
    assert "Assumption 2.3" in raw.normalisation_error() and "normalise" in raw.normalisation_error()
    with pytest.raises(InvalidProblem, match="Assumption 2.3"):
        run_dp_sharing(raw, rho=1.0, sigma=1.0, iterations=2)
    with pytest.raises(InvalidProblem, match="all-zero row"):
        split_columns(np.hstack([x, np.zeros((20, 1))]), labels, (3, 1), 0.1, normalise_rows=True)
    assert split_columns(x, labels, 2, 0.1, normalise_rows=True).normalisation_error() is None


def test_cli_run_sharing_json_and_export(capsys, tmp_path):
    path = tmp_path / "sharing.npz"
    assert main(["run", "sharing", "--dataset", "breast-cancer", "--parties", "2", "--iterations", "300",
                 "--rho", "0.001", "--lam", "0.01", "--seed", "1", "--json", "--export-problem", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert abs(out["objective_gap"]) <= 1e-6 and len(out["final_x"]) == 30 and out["features"] == [15, 15]
    data = np.load(path)
    assert data["X"].shape == (569, 30) and list(data["parts"]) == ["0:15", "15:30"]
    assert float(data["lam"]) == 0.01 and float(data["rho"]) == 0.001
    assert main(["bound", "sharing", "--features", "66,57", "--rho", "1", "--lam", "0.01", "--c1", "1", "--b1", "1",
                 "--epsilon", "1", "--delta", "1e-5", "--iterations", "20", "--delta-prime", "1e-5", "--json"]) == 0
    bound = json.loads(capsys.readouterr().out)
    assert len(bound["sensitivity"]) == len(bound["sigma"]) == 2
    for key in ("epsilon_total", "delta_total", "accountant"):
        assert key in bound
    assert main(["run", "sharing", "--nodes", "3"]) == 2
    assert "--nodes does not apply" in capsys.readouterr().err


def test_assumption_1_2_and_lemma4_are_decided_exactly_with_the_minimal_rho():
    from fractions import Fraction

    from admmcheck.conditions.sharing import sharing_conditions

    # D_0ᵀD_0 = diag(4, 1/4), D_1ᵀD_1 = diag(1, 1): sigma values known exactly
    n = 8
    d0 = np.zeros((n, 2))
    d0[0, 0], d0[1, 1] = 2.0, 0.5
    d1 = np.zeros((n, 2))
    d1[2, 0], d1[3, 1] = 1.0, 1.0
    labels = np.array([1.0, -1.0] * 4)
    problem = SharingProblem((d0, d1), labels, 0.25)
    exact = (2 * Fraction(4) - Fraction(1, 4)) / Fraction(1, 4)  # party 0: (2 sigma_max - lambda) / sigma_min = 31
    result = sharing_conditions(problem, "31")
    assert result.minimal_rho.lo <= exact <= result.minimal_rho.hi and result.minimal_rho.width < Fraction(1, 10**6)
    assert sharing_conditions(problem, exact + Fraction(1, 1000)).holds is True
    below = sharing_conditions(problem, exact - Fraction(1, 1000))
    assert below.holds is False and below.checks["1.2b_party_0"]["holds"] is False
    assert below.checks["1.2b_party_1"]["holds"] is True  # party 1 needs only rho >= 2 - 1/4
    z = result.checks["lemma4_z_coefficient"]
    assert Fraction(z["value"]["lo"]) == Fraction(31, 2) - Fraction(1, 32) ** 2 / 31  # rho/2 - L^2/rho, L = 1/(4*8)


def test_lemma3_fails_for_three_parties_with_the_reported_counterexample():
    from admmcheck.conditions.sharing import sharing_conditions

    data = synthetic(60, 6, seed=2)
    for parties, holds in ((2, True), (3, False)):
        check = sharing_conditions(split_columns(data.features, data.labels, parties, 0.1), "1").checks["lemma3"]
        assert check["holds"] is holds
    # the inequality itself, numerically: Delta_m = v for m = 1..3 and any e
    rng = np.random.default_rng(0)
    v, e = rng.normal(size=4), rng.normal(size=4)
    left = (np.sum((e + 3 * v) ** 2) - np.sum(e**2)) - 3 * (np.sum((e + v) ** 2) - np.sum(e**2))
    assert left == pytest.approx(6 * v @ v) and left > 3 * v @ v


# ------------------------------------------------------------------ privacy, checked
def test_dp_sharing_has_infinite_loss_on_the_row_neighbour_with_the_distance_as_evidence():
    from admmcheck.mechanisms.sharing import SharingMechanism, replace_one_row, sharing_privacy_loss

    data = synthetic(40, 6, seed=0)
    problem = split_columns(data.features, data.labels, 2, lam=0.1, normalise_rows=True)
    d0, d1 = replace_one_row(problem, 0, 3)
    assert d1.normalisation_error() is None
    assert np.linalg.norm(d0.parts[0] - d1.parts[0], 2) == pytest.approx(1.0)  # Definition 2: ||D - D'|| <= 1
    mechanism = SharingMechanism(rho=1.0, sigma=(0.5, 0.5), iterations=3)
    shared = mechanism.batch_run(d0, np.random.SeedSequence(0).spawn(500)).extras["shared"]
    loss = sharing_privacy_loss(mechanism, d0, d1, shared)
    assert loss.changed_parties == (0,) and np.all(np.isposinf(loss.total))
    assert loss.off_support[:, :, 0].min() > 1e3 * 1e-8  # far off col(D'_0), not rounding
    assert np.all(loss.per_step[:, :, 1] == 0.0)  # party 1 holds the same data
    # the released values do lie in col(D_0): against D itself the loss is 0, not inf
    assert np.all(sharing_privacy_loss(mechanism, d0, d0, shared).total == 0.0)


def test_where_the_supports_agree_the_loss_is_a_density_ratio():
    """D'_0 = D_0 A spans the same columns: E_D[exp(-L)] = 1 (the identity every exact
    log-density ratio satisfies) and the KL divergence E_D[L] is >= 0."""
    from admmcheck.mechanisms.sharing import SharingMechanism, sharing_privacy_loss

    data = synthetic(40, 6, seed=0)
    problem = split_columns(data.features, data.labels, 2, lam=0.1, normalise_rows=True)
    mixed = SharingProblem((problem.parts[0] @ np.array([[1, 0.3, 0], [0, 1, 0], [0.2, 0, 1]]), problem.parts[1]),
                           problem.labels, problem.lam)
    mechanism = SharingMechanism(rho=1.0, sigma=(0.05, 0.05), iterations=3)
    shared = mechanism.batch_run(problem, np.random.SeedSequence(1).spawn(4000)).extras["shared"]
    losses = sharing_privacy_loss(mechanism, problem, mixed, shared).total
    ratio = np.exp(-losses)
    assert np.isfinite(losses).all() and abs(ratio.mean() - 1) <= 4 * ratio.std() / np.sqrt(len(ratio))
    assert losses.mean() >= -4 * losses.std() / np.sqrt(len(losses)) and losses.std() > 0.01


def test_cli_audit_of_dp_sharing_reports_the_support_violation(capsys):
    code = main(["audit", "dp-sharing", "--white-box", "--samples", "2000", "--workers", "2", "--search-candidates", "6",
                 "--search-samples", "300", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["verdict"] == "violation" and "support" in out["event"]
    assert out["neighbour_search"]["candidates_built"] == 80  # every row of both parties
    assert out["neighbours"] == out["neighbour_search"]["found"]["change"]
    assert out["epsilon_lower_bound"] > out["claimed_epsilon"]
    assert out["white_box"]["infinite_fraction"] == 1.0 and out["white_box"]["verdict"] == "violation"
    assert out["theorem"]["sigma"][0] > 0 and out["p_d0"]["count"] == 0


def test_experiment_curves_and_tradeoff_behave_as_their_definitions_say():
    from admmcheck.experiments.sharing import HeldOut, gradient_descent, privacy_tradeoff, training_curves

    data = synthetic(300, 8, seed=4)
    train = split_columns(data.features[:200], data.labels[:200], 2, lam=0.01)
    test = HeldOut(data.features[200:], data.labels[200:])
    optimum = sharing_optimum(train)
    curves = training_curves(train, test, rho=0.01, epochs=40)
    assert curves["admm_objective"][0] == pytest.approx(np.log(2))  # x = 0
    assert np.all(np.diff(curves["gd_objective"]) <= 1e-15)  # step 1/L: monotone descent
    assert curves["admm_objective"][-1] - optimum.objective <= 1e-4 * optimum.objective
    x = gradient_descent(train, 3)[-1]
    assert test.log_loss(x) == pytest.approx(np.mean(np.log1p(np.exp(-test.labels * (test.design @ x)))))
    private = split_columns(data.features[:200], data.labels[:200], 2, lam=0.01, normalise_rows=True)
    rows = privacy_tradeoff(private, test, 0.01, 10, [1.0], trials=3, sigmas=[1e-3, 10.0])
    assert rows[0]["sigma"][0] > 0 and "epsilon_total_corollary1" in rows[0]
    assert rows[2]["test_loss_min"] > rows[1]["test_loss_max"]  # sigma 10 ruins the model, 1e-3 does not
