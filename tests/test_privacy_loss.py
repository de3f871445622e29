"""White-box privacy loss (issue 16): checked against a direct numerical integration of the two
output densities, against the structure of the mechanisms, and with mutants it must catch."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from admmcheck.algorithms import run_pp, run_private_radmm, run_pvp
from admmcheck.mechanisms import privacy_loss as loss_module
from admmcheck.mechanisms.privacy_loss import privacy_loss
from admmcheck.mechanisms.consensus import replace_one_record
from admmcheck.mechanisms.registry import reference_mechanism
from admmcheck.problems.networks import path, ring
from admmcheck.problems import ConsensusProblem

ETA, ALPHA, C, RHO = 0.05, 2.0, 1.0, 0.1
F0 = np.array([[0.3], [-0.2]])  # f(0), public and fixed


def one_dimensional_pair() -> tuple[ConsensusProblem, ConsensusProblem]:
    """Two nodes, d = 1; node 0's record 0 moves from x = 1 to x = 0.2 (its Hessian changes)."""
    x0 = np.array([[1.0], [-0.5]])
    y0 = np.array([1.0, 1.0])
    x1, y1 = np.array([[0.7], [0.4]]), np.array([1.0, -1.0])
    d0 = ConsensusProblem((x0, x1), (y0, y1), C, RHO)
    moved = x0.copy()
    moved[0] = 0.2
    return d0, ConsensusProblem((moved, x1), (y0, y1), C, RHO)


def node0_noise_preimage(problem: ConsensusProblem, x: np.ndarray) -> np.ndarray:
    """The noise eps under which one PP step from f(0) = F0, lambda = 0 releases f_0(1) = x.

    The KKT condition of (24) in d = 1 reads g(f) = O'(f) + 2 eta V f - eta (f_0(0) + f_1(0))
    = -2 eta V eps (V = 1), with g increasing: eps(x) = -g(x) / (2 eta) is decreasing."""
    f = np.zeros((len(x), 2, 1))
    f[:, 0, 0] = x
    g = problem.local_gradients(f)[:, 0, 0] + 2 * ETA * x - ETA * (F0[0, 0] + F0[1, 0])
    return -g / (2 * ETA)


def node0_output_cdf(problem: ConsensusProblem, x: np.ndarray) -> np.ndarray:
    """P(f_0(1) <= x) = P(eps >= eps(x)), eps ~ Laplace(1/alpha) (the gamma-norm law in d = 1)."""
    return stats.laplace.sf(node0_noise_preimage(problem, x), scale=1 / ALPHA)


def numerical_density(problem: ConsensusProblem, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """P(x - h < f_0(1) <= x + h) / 2h: the Laplace mass of the noise preimage of the interval
    (from whichever tail keeps its precision), without any change-of-variables formula."""
    a, b = node0_noise_preimage(problem, x + h), node0_noise_preimage(problem, x - h)
    law = stats.laplace(scale=1 / ALPHA)
    mass = np.where(b <= 0, law.cdf(b) - law.cdf(a), np.where(a >= 0, law.sf(a) - law.sf(b), law.cdf(b) - law.cdf(a)))
    return mass / (2 * h)


def integrated_loss_law(d0, d1):
    """(mean, cdf) of L(f) = ln p0(f) - ln p1(f) for f ~ p0, by quadrature of the densities
    over the range holding all but 1e-12 of either law's mass."""
    def quantile(problem, q):
        return optimize.brentq(lambda x: node0_output_cdf(problem, np.array([x]))[0] - q, -100, 100, xtol=1e-13)

    low = min(quantile(p, 1e-12) for p in (d0, d1))
    high = max(quantile(p, 1 - 1e-12) for p in (d0, d1))
    grid = np.linspace(low, high, 200_001)
    mass = numerical_density(d0, grid)
    values = np.log(mass) - np.log(numerical_density(d1, grid))
    mean = float(integrate.simpson(mass * values, x=grid))

    def cdf(level: float) -> float:
        return float(integrate.simpson(mass * (values <= level), x=grid))

    return mean, cdf


def sampled_losses(n: int = 20_000) -> np.ndarray:
    d0, d1 = one_dimensional_pair()
    mechanism = reference_mechanism("pp", path(2), 1, {"penalty": ETA, "theta": ETA, "alpha": ALPHA, "initial": F0})
    run = run_pp(d0, mechanism.network, iterations=1, seeds=np.random.SeedSequence(7).spawn(n),
                 **dict(mechanism.parameters))
    return privacy_loss(mechanism, d0, d1, run.primal).total


def test_loss_law_matches_numerical_integration_of_the_output_densities():
    d0, d1 = one_dimensional_pair()
    losses = sampled_losses()
    mean, cdf = integrated_loss_law(d0, d1)
    n = len(losses)
    assert abs(losses.mean() - mean) <= 4 * losses.std() / np.sqrt(n)
    for q in (0.1, 0.5, 0.9):
        level = float(np.quantile(losses, q))
        assert abs(cdf(level) - q) <= 4 * np.sqrt(q * (1 - q) / n), (q, level, cdf(level))


def test_a_loss_without_the_jacobian_term_fails_the_same_check(monkeypatch):
    """The mutant drops ln|det J| (as a proof that ignores the G(t)/H(t) terms would)."""
    monkeypatch.setattr(loss_module, "_log_det", lambda matrices: np.zeros(matrices.shape[:-2]))
    d0, d1 = one_dimensional_pair()
    losses = sampled_losses()
    mean, cdf = integrated_loss_law(d0, d1)
    n = len(losses)
    mean_off = abs(losses.mean() - mean) > 4 * losses.std() / np.sqrt(n)
    quantile_off = any(abs(cdf(float(np.quantile(losses, q))) - q) > 4 * np.sqrt(q * (1 - q) / n)
                       for q in (0.1, 0.5, 0.9))
    assert mean_off or quantile_off


@pytest.fixture(scope="module")
def small_problem() -> ConsensusProblem:
    rng = np.random.default_rng(3)
    features, labels = [], []
    for _ in range(4):
        x = rng.normal(size=(6, 3))
        features.append(x / np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True)))
        labels.append(np.where(rng.random(6) < 0.5, -1.0, 1.0))
    return ConsensusProblem(tuple(features), tuple(labels), 1.0, 0.5)


def test_only_the_node_holding_the_changed_record_contributes(small_problem):
    d0, d1 = replace_one_record(small_problem, node=2, index=1, kind="feature-move")
    mechanism = reference_mechanism("pp", ring(4), 4, {"penalty": 0.8, "theta": 0.8, "alpha": 3.0})
    run = run_pp(d0, mechanism.network, iterations=4, seeds=np.random.SeedSequence(1).spawn(200),
                 **dict(mechanism.parameters))
    loss = privacy_loss(mechanism, d0, d1, run.primal, every_node=True)
    assert np.all(loss.per_step[:, :, [0, 1, 3]] == 0.0)
    assert np.abs(loss.per_node[:, 2]).max() > 0.01
    np.testing.assert_array_equal(privacy_loss(mechanism, d0, d1, run.primal).per_step, loss.per_step)


def test_identical_datasets_have_zero_loss_and_swapping_them_negates_it(small_problem):
    d0, d1 = replace_one_record(small_problem, node=0, index=0, kind="label-flip")
    mechanism = reference_mechanism("private-radmm", ring(4), 5, {"eta": 0.8, "gamma": 0.3, "alpha": 3.0})
    run = run_private_radmm(d0, mechanism.network, iterations=5, seeds=np.random.SeedSequence(2).spawn(100),
                            **dict(mechanism.parameters))
    assert np.all(privacy_loss(mechanism, d0, d0, run.primal).total == 0.0)
    forward = privacy_loss(mechanism, d0, d1, run.primal).total
    np.testing.assert_allclose(privacy_loss(mechanism, d1, d0, run.primal).total, -forward, atol=1e-12)


def test_even_radmm_iterations_cost_exactly_nothing(small_problem):
    """Lemma IV.1 per transcript: every even step contributes 0, the released even iterate is
    (29) of the transcript, and the odd steps carry the whole loss."""
    d0, d1 = replace_one_record(small_problem, node=1, index=0, kind="feature-move")
    mechanism = reference_mechanism("private-radmm", ring(4), 6, {"eta": 0.8, "gamma": 0.3, "alpha": 3.0})
    run = run_private_radmm(d0, mechanism.network, iterations=6, seeds=np.random.SeedSequence(4).spawn(300),
                            **dict(mechanism.parameters))
    loss = privacy_loss(mechanism, d0, d1, run.primal)
    assert np.all(loss.per_step[:, 1::2] == 0.0)
    assert loss.even_step_error.max() <= 1e-12
    assert np.abs(loss.per_step[:, 0::2]).max() > 0.01


def test_an_even_iterate_that_used_the_data_has_infinite_loss(small_problem):
    d0, d1 = replace_one_record(small_problem, node=1, index=0, kind="feature-move")
    mechanism = reference_mechanism("private-radmm", ring(4), 2, {"eta": 0.8, "gamma": 0.3, "alpha": 3.0})
    run = run_private_radmm(d0, mechanism.network, iterations=2, seeds=np.random.SeedSequence(5).spawn(10),
                            **dict(mechanism.parameters))
    tampered = run.primal.copy()
    tampered[:, 2, 1] += 1e-4  # node 1's even iterate moved, e.g. by the true gradient instead of (29)
    loss = privacy_loss(mechanism, d0, d1, tampered, every_node=True)
    assert np.all(np.isposinf(loss.total))
    assert np.all(loss.per_step[:, 1, [0, 2, 3]] == 0.0)


def test_pvp_loss_is_the_noise_density_ratio_of_the_released_minimiser(small_problem):
    """PVP: with the minimisers m(D), m(D') known, L = alpha (||f~ - m(D')|| - ||f~ - m(D)||),
    checked at T = 1 against the run's own recorded minimiser and noise."""
    d0, d1 = replace_one_record(small_problem, node=3, index=2, kind="label-flip")
    mechanism = reference_mechanism("pvp", ring(4), 1, {"eta": 0.7, "alpha": 2.5})
    seeds = np.random.SeedSequence(6).spawn(50)
    run0 = run_pvp(d0, mechanism.network, iterations=1, seeds=seeds, **dict(mechanism.parameters))
    run1 = run_pvp(d1, mechanism.network, iterations=1, seeds=seeds, **dict(mechanism.parameters))
    released = run0.primal[:, 1, 3]
    expected = 2.5 * (np.linalg.norm(released - run1.extras["unperturbed"][:, 0, 3], axis=-1)
                      - np.linalg.norm(run0.extras["noise"][:, 0, 3], axis=-1))
    np.testing.assert_allclose(privacy_loss(mechanism, d0, d1, run0.primal).total, expected, atol=1e-8)


def test_a_transcript_of_the_wrong_shape_is_refused(small_problem):
    mechanism = reference_mechanism("pp", ring(4), 3, {})
    with pytest.raises(Exception, match="releases"):
        privacy_loss(mechanism, small_problem, small_problem, np.zeros((2, 3, 4, 3)))


# ------------------------------------------------------------- loss law and privacy profile
def gaussian_profile(epsilon: np.ndarray, mu: float) -> np.ndarray:
    """δ(ε) of the Gaussian mechanism whose loss is N(mu, 2 mu) (Balle & Wang 2018, Thm 8)."""
    s = np.sqrt(2 * mu)
    return stats.norm.cdf(mu / s - epsilon / s) - np.exp(epsilon) * stats.norm.cdf(-mu / s - epsilon / s)


def test_profile_and_quantiles_of_gaussian_losses_match_the_closed_form():
    from admmcheck.audit.statistics.loss_profile import loss_distribution

    mu = 0.08
    losses = np.random.default_rng(11).normal(mu, np.sqrt(2 * mu), size=50_000)
    summary = loss_distribution(losses, confidence=0.99, epsilons=np.array([0.0, 0.3, 0.6, 0.9]))
    truth = gaussian_profile(np.array(summary.epsilons), mu)
    for value, (low, high), exact in zip(summary.delta, summary.delta_interval, truth):
        assert low <= exact <= high, (value, low, high, exact)
    assert summary.mean_interval[0] <= mu <= summary.mean_interval[1]
    for level, (estimate, low, high) in summary.quantiles.items():
        exact = stats.norm.ppf(level, mu, np.sqrt(2 * mu))
        assert low <= exact <= high, (level, low, exact, high)
    assert summary.maximum == losses.max() and summary.argmax == int(np.argmax(losses))


def test_an_infinite_loss_counts_fully_in_the_profile():
    from admmcheck.audit.statistics.loss_profile import privacy_profile

    np.testing.assert_allclose(privacy_profile(np.array([np.inf, 0.0, 0.0, 0.0]), np.array([0.0, 5.0])), [0.25, 0.25])


def test_loss_histogram_counts_every_finite_loss_and_reports_the_infinite_ones():
    from admmcheck.audit.statistics.loss_profile import loss_distribution

    losses = np.concatenate([np.random.default_rng(0).normal(size=999), [np.inf]])
    histogram = loss_distribution(losses).as_dict()["histogram"]
    counts, edges = np.histogram(losses[:-1], bins=len(histogram["counts"]))
    assert histogram["infinite"] == 1 and sum(histogram["counts"]) == 999
    np.testing.assert_array_equal(histogram["counts"], counts)
    np.testing.assert_allclose(histogram["edges"], edges)
