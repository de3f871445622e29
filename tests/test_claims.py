"""Privacy claims as values (admmcheck.claims.values) against values computed independently here: hockey-stick
divergences by numerical integration and by summing over discrete outcomes, dp_accounting's PLD and RDP accountants,
the Bun & Steinke bound, the Neyman-Pearson optimal events of a Gaussian pair and Rényi divergences of Bernoulli
pairs maximised over the order here."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize, stats

from admmcheck.claims import ApproxDp, DpCurve, GaussianDp, PureDp, ZeroConcentratedDp, from_event
from admmcheck.foundations.errors import InvalidConfiguration

FEW = settings(max_examples=25, deadline=None, derandomize=True)


# ---------------------------------------------------------------------------------------------------------------
# independent references


def gaussian_hockey_stick(mu: float, epsilon: float) -> float:
    """sup_E N(mu, 1)(E) - e^eps N(0, 1)(E) = the integral of max(0, p - e^eps q), by quadrature. The integrand is
    positive exactly where the log-likelihood ratio exceeds eps; that point is found by root finding on the two
    log-densities, and the integral is taken from it to infinity (and from -infinity to it, which must be ~0)."""
    def p(x):
        return stats.norm.pdf(x, loc=mu)

    def q(x):
        return stats.norm.pdf(x)

    root = optimize.brentq(lambda x: stats.norm.logpdf(x, loc=mu) - stats.norm.logpdf(x) - epsilon, -200, 200,
                           xtol=1e-14, rtol=1e-15)
    right, _ = integrate.quad(lambda x: max(0.0, p(x) - math.exp(epsilon) * q(x)), root, np.inf,
                              epsabs=0, epsrel=1e-12, limit=200)
    left, _ = integrate.quad(lambda x: max(0.0, p(x) - math.exp(epsilon) * q(x)), -np.inf, root,
                             epsabs=1e-300, epsrel=1e-12, limit=200)
    return right + left


def discrete_hockey_stick(p: np.ndarray, q: np.ndarray, epsilon: float) -> float:
    """sum_i max(0, p_i - e^eps q_i): the hockey-stick divergence of two distributions on finitely many outcomes."""
    return float(np.sum(np.maximum(0.0, np.asarray(p) - math.exp(epsilon) * np.asarray(q))))


def randomized_response(epsilon0: float) -> tuple[np.ndarray, np.ndarray]:
    """Randomized response with exactly epsilon0: the true bit with probability e^eps0/(1 + e^eps0)."""
    truth = math.exp(epsilon0) / (1 + math.exp(epsilon0))
    return np.array([truth, 1 - truth]), np.array([1 - truth, truth])


def kov_mechanism(epsilon0: float, delta0: float) -> tuple[np.ndarray, np.ndarray]:
    """The four-outcome (eps0, delta0) mechanism of Kairouz, Oh & Viswanath: reveal with probability delta0, else
    randomized response with eps0."""
    rr_a, rr_b = randomized_response(epsilon0)
    return (np.array([delta0, *(1 - delta0) * rr_a, 0.0]), np.array([0.0, *(1 - delta0) * rr_b, delta0]))


def all_events(size: int):
    for mask in itertools.product([False, True], repeat=size):
        yield np.array(mask)


def bernoulli_renyi(p: float, q: float, alpha: np.ndarray) -> np.ndarray:
    """D_alpha(Bern(p) || Bern(q)) = log(p^a q^(1-a) + (1-p)^a (1-q)^(1-a)) / (a - 1), straight from the definition
    (in logs, so that no power under- or overflows)."""
    alpha = np.asarray(alpha, dtype=float)
    with np.errstate(divide="ignore"):
        first = alpha * math.log(p) + (1 - alpha) * math.log(q)
        second = alpha * math.log1p(-p) + (1 - alpha) * math.log1p(-q)
    return np.logaddexp(first, second) / (alpha - 1)


def sup_renyi_over_alpha(p: float, q: float) -> float:
    """sup_{alpha > 1} D_alpha(Bern(p) || Bern(q)) / alpha, on a dense grid then refined, plus the alpha -> 1 limit
    (the KL divergence): the largest rho the event refutes exactly."""
    kl = p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))
    log_grid = np.linspace(math.log(1e-7), math.log(1e5), 4000)
    values = bernoulli_renyi(p, q, 1 + np.exp(log_grid)) / (1 + np.exp(log_grid))
    best = int(np.argmax(values))
    lo, hi = log_grid[max(best - 1, 0)], log_grid[min(best + 1, len(log_grid) - 1)]
    found = optimize.minimize_scalar(
        lambda t: -float(bernoulli_renyi(p, q, np.array([1 + math.exp(t)]))[0] / (1 + math.exp(t))),
        bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    return max(kl, float(values[best]), -float(found.fun))


def pld_epsilon(event, delta: float, interval: float = 1e-4) -> float:
    accountant = PLDAccountant(value_discretization_interval=interval)
    accountant.compose(event)
    return float(accountant.get_epsilon(delta))


def rdp_epsilon(event, delta: float) -> float:
    accountant = RdpAccountant()
    accountant.compose(event)
    return float(accountant.get_epsilon(delta))


# ---------------------------------------------------------------------------------------------------------------
# 1. the Gaussian claim's profile is the hockey-stick divergence of N(mu, 1) vs N(0, 1)


@pytest.mark.parametrize("mu, epsilon", [(0.5, 0.0), (0.5, 0.3), (0.3, 1.5), (1.0, 0.5), (1.0, 2.0), (2.0, 1.0),
                                         (3.0, 4.0), (5.0, 0.0)])
def test_gaussian_profile_is_the_integrated_hockey_stick_divergence(mu, epsilon):
    expected = gaussian_hockey_stick(mu, epsilon)
    assert float(GaussianDp(mu).profile(epsilon)) == pytest.approx(expected, rel=1e-6, abs=0)
    # vectorised: the same values in an array
    epsilons = np.array([epsilon, epsilon + 0.5])
    assert GaussianDp(mu).profile(epsilons) == pytest.approx(
        [expected, gaussian_hockey_stick(mu, epsilon + 0.5)], rel=1e-6, abs=0)


def test_gaussian_profile_of_mu_zero_is_zero():
    assert np.all(GaussianDp(0.0).profile(np.array([0.0, 1.0, 10.0])) == 0)
    assert GaussianDp(0.0).epsilon_at(1e-9) == 0.0


# ---------------------------------------------------------------------------------------------------------------
# 2. the Gaussian claim's epsilon(delta) against dp_accounting's PLD accountant; composition of Gaussians


@pytest.mark.parametrize("sigma, delta", [(1.0, 1e-5), (2.0, 1e-5), (0.8, 1e-3), (4.0, 1e-7)])
def test_gaussian_epsilon_at_agrees_with_the_pld_accountant(sigma, delta):
    ours = GaussianDp(1 / sigma).epsilon_at(delta)
    theirs = pld_epsilon(dpa.GaussianDpEvent(sigma), delta, interval=1e-3)
    assert ours == pytest.approx(theirs, rel=1e-2)
    # the PLD accountant's discretisation is pessimistic: it never gives a smaller epsilon than the exact one
    assert ours <= theirs * (1 + 1e-6)
    # and at our epsilon the (integrated) divergence is delta: epsilon is the smallest one with profile <= delta
    assert gaussian_hockey_stick(1 / sigma, ours) == pytest.approx(delta, rel=1e-6)


def test_self_composed_gaussian_is_mu_times_root_k_and_matches_the_pld_accountant():
    sigma, k, delta = 3.0, 9, 1e-5
    event = dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(sigma), k)
    claim = from_event(event)
    assert isinstance(claim, GaussianDp)
    assert claim.mu == pytest.approx(math.sqrt(k) / sigma, rel=1e-12)
    assert claim.event is event
    assert claim.epsilon_at(delta) == pytest.approx(pld_epsilon(event, delta, interval=1e-3), rel=1e-2)
    # a ComposedDpEvent of Gaussians adds mu in squares
    composed = from_event(dpa.ComposedDpEvent([dpa.GaussianDpEvent(1.0), dpa.GaussianDpEvent(2.0)]))
    assert isinstance(composed, GaussianDp)
    assert composed.mu == pytest.approx(math.sqrt(1 + 0.25), rel=1e-12)


def test_from_event_single_events_and_mixed_composition():
    assert from_event(dpa.GaussianDpEvent(2.0)) == GaussianDp(0.5, source=from_event(dpa.GaussianDpEvent(2.0)).source)
    laplace = from_event(dpa.LaplaceDpEvent(0.5))
    assert isinstance(laplace, PureDp) and laplace.epsilon == pytest.approx(2.0)
    laplaces = from_event(dpa.ComposedDpEvent([dpa.LaplaceDpEvent(1.0), dpa.LaplaceDpEvent(0.25)]))
    assert isinstance(laplaces, PureDp) and laplaces.epsilon == pytest.approx(5.0)
    zcdp = from_event(dpa.ZCDpEvent(0.3))
    assert isinstance(zcdp, ZeroConcentratedDp) and zcdp.rho == pytest.approx(0.3)
    noop = from_event(dpa.NoOpDpEvent())
    assert isinstance(noop, PureDp) and noop.epsilon == 0
    # mixed notions compose as zCDP: eps^2/2 + mu^2/2 + rho
    mixed = from_event(dpa.ComposedDpEvent([dpa.LaplaceDpEvent(1.0), dpa.GaussianDpEvent(2.0), dpa.ZCDpEvent(0.1)]))
    assert isinstance(mixed, ZeroConcentratedDp)
    assert mixed.rho == pytest.approx(0.5 * 1.0 ** 2 + 0.5 * 0.5 ** 2 + 0.1, rel=1e-12)


def test_laplace_claim_is_valid_against_the_laplace_mechanisms_exact_epsilon():
    """Laplace(1/eps0) is one eps0-DP mechanism: the pure claim's epsilon(delta), the worst over all eps0-DP
    mechanisms, is at least the Laplace mechanism's own (dp_accounting's PLD)."""
    for b, delta in [(1.0, 1e-5), (2.0, 0.05)]:
        claim = from_event(dpa.LaplaceDpEvent(b))
        theirs = pld_epsilon(dpa.LaplaceDpEvent(b), delta, interval=1e-3)
        assert claim.epsilon_at(delta) >= theirs - 2e-3
        assert claim.epsilon_at(delta) <= 1 / b


# ---------------------------------------------------------------------------------------------------------------
# 3. zCDP's epsilon(delta): below Bun & Steinke, above the exact Gaussian's, close to the RDP accountant's


@pytest.mark.parametrize("rho, delta", [(0.5, 1e-5), (0.05, 1e-6), (2.0, 1e-3), (0.01, 1e-9)])
def test_zcdp_epsilon_at_is_between_the_gaussian_and_bun_steinke_and_near_rdp(rho, delta):
    ours = ZeroConcentratedDp(rho).epsilon_at(delta)
    # Bun & Steinke 2016, Prop. 1.3
    assert ours <= rho + 2 * math.sqrt(rho * math.log(1 / delta)) + 1e-12
    # the Gaussian mechanism with mu = sqrt(2 rho) is rho-zCDP: its exact epsilon(delta) cannot exceed the claim's
    mu = math.sqrt(2 * rho)
    assert gaussian_hockey_stick(mu, ours) <= delta * (1 + 1e-6)
    assert ours >= GaussianDp(mu).epsilon_at(delta) - 1e-9
    # dp_accounting's RDP accountant converts at discrete orders: its epsilon is >= ours, and close
    for event in (dpa.ZCDpEvent(rho), dpa.GaussianDpEvent(1 / mu)):
        theirs = rdp_epsilon(event, delta)
        assert ours <= theirs + 1e-6
        assert ours >= theirs * (1 - 0.03)


@pytest.mark.parametrize("rho", [0.02, 0.5, 3.0])
def test_zcdp_profile_dominates_the_gaussian_mechanisms_divergence(rho):
    mu = math.sqrt(2 * rho)
    claim = ZeroConcentratedDp(rho)
    for epsilon in (0.0, 0.5 * rho, rho + 0.3, 2.0, 5.0):
        assert gaussian_hockey_stick(mu, epsilon) <= float(claim.profile(epsilon)) * (1 + 1e-9)
    # the profile is a number in [0, 1] that decreases in epsilon
    values = claim.profile(np.linspace(0, 10, 11))
    assert values.shape == (11,)
    assert np.all((values >= 0) & (values <= 1))
    assert np.all(np.diff(values) <= 1e-15)


# ---------------------------------------------------------------------------------------------------------------
# 4. pure and approximate DP profiles: randomized response and the Kairouz-Oh-Viswanath mechanism


@pytest.mark.parametrize("epsilon0", [0.1, 1.0, 3.0])
def test_pure_profile_is_randomized_responses_divergence(epsilon0):
    p, q = randomized_response(epsilon0)
    claim = PureDp(epsilon0)
    for epsilon in np.linspace(0, epsilon0, 7):
        assert float(claim.profile(epsilon)) == pytest.approx(discrete_hockey_stick(p, q, epsilon), rel=1e-12,
                                                              abs=1e-15)
    for epsilon in (epsilon0 + 1e-3, epsilon0 + 1, 50.0):
        assert float(claim.profile(epsilon)) == 0.0
    # epsilon(delta) is where randomized response's divergence falls to delta
    for delta in (1e-6, 1e-2, 0.2 * discrete_hockey_stick(p, q, 0.0)):
        epsilon = claim.epsilon_at(delta)
        assert discrete_hockey_stick(p, q, epsilon) == pytest.approx(delta, rel=1e-9)
    assert claim.epsilon_at(0.0) == pytest.approx(epsilon0, abs=1e-12)
    assert claim.epsilon_at(1.0) == 0.0
    assert claim.epsilon_at(discrete_hockey_stick(p, q, 0.0)) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("epsilon0", [100.0, 709.0, 800.0])
def test_pure_epsilon_at_for_a_large_epsilon0_does_not_overflow(epsilon0):
    """Randomized response with a large eps0, its divergence written without e^eps0:
    p - e^eps (1 - p) with p = 1/(1 + e^-eps0) is (1 - e^(eps - eps0)) / (1 + e^-eps0); it falls to delta at the
    root found here. The claim's epsilon(delta) must be that root (its profile already avoids overflow)."""
    def divergence(epsilon):
        return -math.expm1(epsilon - epsilon0) / (1 + math.exp(-epsilon0))

    for delta in (0.1, 0.5):
        expected = optimize.brentq(lambda e, d=delta: divergence(e) - d, epsilon0 - 50, epsilon0, xtol=1e-13)
        assert float(PureDp(epsilon0).profile(expected)) == pytest.approx(delta, rel=1e-9)
        assert PureDp(epsilon0).epsilon_at(delta) == pytest.approx(expected, abs=1e-9)
        assert DpCurve(((epsilon0, 0.0),)).epsilon_at(delta) == pytest.approx(expected, abs=1e-9)
        assert PureDp(epsilon0).to_approx(delta).epsilon == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("epsilon0, delta0", [(0.5, 1e-5), (1.0, 0.01), (2.0, 0.3)])
def test_approx_profile_is_the_kov_mechanisms_divergence(epsilon0, delta0):
    p, q = kov_mechanism(epsilon0, delta0)
    assert p.sum() == pytest.approx(1) and q.sum() == pytest.approx(1)
    claim = ApproxDp(epsilon0, delta0)
    for epsilon in [*np.linspace(0, epsilon0, 6), epsilon0 + 0.5, 20.0]:
        assert float(claim.profile(epsilon)) == pytest.approx(discrete_hockey_stick(p, q, epsilon), rel=1e-12,
                                                              abs=1e-15)
    # below delta0 no epsilon will do
    assert claim.epsilon_at(delta0 / 2) == math.inf
    at_zero = discrete_hockey_stick(p, q, 0.0)
    for delta in (delta0 * 1.5, (delta0 + at_zero) / 2):
        assert discrete_hockey_stick(p, q, claim.epsilon_at(delta)) == pytest.approx(delta, rel=1e-9)
    assert claim.epsilon_at(delta0) == pytest.approx(epsilon0, abs=1e-12)
    assert claim.epsilon_at(at_zero) == pytest.approx(0.0, abs=1e-9)


def test_approx_profile_dominates_every_eps_delta_pair():
    """Any pair of distributions that is (eps0, delta0)-DP in both orders has a divergence below the claim's
    profile at every epsilon (the KOV region contains it)."""
    rng = np.random.default_rng(0)
    for _ in range(40):
        p, q = rng.dirichlet(np.ones(6) * 0.7, size=2)
        epsilon0 = float(rng.uniform(0, 2))
        delta0 = max(discrete_hockey_stick(p, q, epsilon0), discrete_hockey_stick(q, p, epsilon0))
        if delta0 >= 1:
            continue
        claim = ApproxDp(epsilon0, delta0)
        for epsilon in np.linspace(0, 3, 13):
            assert discrete_hockey_stick(p, q, epsilon) <= float(claim.profile(epsilon)) + 1e-12


# ---------------------------------------------------------------------------------------------------------------
# 5. refuted_value is valid (never above the truth) and tight where it should be


def gaussian_events(mu: float):
    """(P_a(E), P_b(E)) for P_a = N(mu, 1), P_b = N(0, 1): half lines x > c and intervals [c1, c2]."""
    half = [(stats.norm.sf(c - mu), stats.norm.sf(c)) for c in np.linspace(-3, 5, 17)]
    intervals = [(stats.norm.cdf(c2 - mu) - stats.norm.cdf(c1 - mu), stats.norm.cdf(c2) - stats.norm.cdf(c1))
                 for c1, c2 in [(-1, 0), (0, 1), (0.5, 3), (1, 1.5), (2, 8), (-5, 5), (-2, 0.3), (3, 3.2)]]
    return half, intervals


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
def test_gaussian_refuted_value_is_mu_on_half_lines_and_at_most_mu_elsewhere(mu):
    half, intervals = gaussian_events(mu)
    claim = GaussianDp(mu)
    for p_a, p_b in half:  # Neyman-Pearson: the likelihood-ratio tests are exactly on the GDP curve
        assert float(claim.refuted_value(p_a, p_b)) == pytest.approx(mu, abs=1e-9)
    for p_a, p_b in intervals:
        assert float(claim.refuted_value(p_a, p_b)) <= mu + 1e-9
    # vectorised, and the claimed mu itself is not refuted by its own mechanism
    p_a, p_b = np.array(half + intervals).T
    assert claim.refuted_value(p_a, p_b).shape == p_a.shape
    assert not np.any(GaussianDp(mu * (1 + 1e-6)).refutes(p_a, p_b))
    # the other order (P_a = N(0, 1), P_b = N(mu, 1)) with the lower half lines is also tight
    for c in np.linspace(-3, 5, 9):
        assert float(claim.refuted_value(stats.norm.cdf(c), stats.norm.cdf(c - mu))) == pytest.approx(mu, abs=1e-9)
    # a smaller claim is refuted by every half line
    assert np.all(GaussianDp(0.9 * mu).refutes(*np.array(half).T))


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
def test_zcdp_refuted_value_never_exceeds_the_gaussian_mechanisms_rho(mu):
    rho = mu ** 2 / 2
    claim = ZeroConcentratedDp(rho)
    half, intervals = gaussian_events(mu)
    flipped = [(stats.norm.cdf(c), stats.norm.cdf(c - mu)) for c in np.linspace(-3, 5, 9)]
    for p_a, p_b in half + intervals + flipped:
        assert float(claim.refuted_value(p_a, p_b)) <= rho * (1 + 1e-9)
    for p_a, p_b in half + flipped:  # p_a > p_b on every half line toward the shifted mean
        assert float(claim.refuted_value(p_a, p_b)) > 0
    assert not np.any(claim.refutes(*np.array(half + intervals + flipped).T))
    # far in the tail a half line comes close to the truth (optimal order ~ c / mu, within RENYI_ORDERS)
    far = 8 * max(mu, 1.0)
    tail = float(claim.refuted_value(stats.norm.sf(far - mu), stats.norm.sf(far)))
    assert 0.85 * rho < tail <= rho * (1 + 1e-9)
    # a claim of a quarter of the truth is refuted there
    assert bool(ZeroConcentratedDp(rho / 4).refutes(stats.norm.sf(far - mu), stats.norm.sf(far)))


@FEW
@given(p_a=st.floats(1e-6, 1 - 1e-6), p_b=st.floats(1e-6, 1 - 1e-6))
def test_zcdp_refuted_value_is_the_bernoulli_renyi_supremum(p_a, p_b):
    """The largest rho an event refutes is sup_alpha D_alpha(Bern(p_a) || Bern(p_b)) / alpha: the module's (on its
    grid of orders) is never above it and within 1% of it; 0 where p_a <= p_b."""
    value = float(ZeroConcentratedDp(1.0).refuted_value(p_a, p_b))
    if p_a <= p_b:
        assert value == 0
        return
    exact = sup_renyi_over_alpha(p_a, p_b)
    assert value <= exact * (1 + 1e-9) + 1e-15
    assert value >= exact * (1 - 1e-2)
    # alpha = 2 by hand: log(p_a^2/p_b + (1-p_a)^2/(1-p_b)) / 2 is a lower bound
    assert value >= math.log(p_a ** 2 / p_b + (1 - p_a) ** 2 / (1 - p_b)) / 2 * (1 - 1e-9)


@pytest.mark.parametrize("epsilon0, delta0", [(0.5, 0.0), (1.0, 1e-4), (2.5, 0.05)])
def test_approx_refuted_value_never_exceeds_the_true_epsilon(epsilon0, delta0):
    p, q = kov_mechanism(epsilon0, delta0) if delta0 else randomized_response(epsilon0)
    claim = ApproxDp(epsilon0, delta0) if delta0 else PureDp(epsilon0)
    values = []
    for event in all_events(len(p)):
        for first, second in ((p, q), (q, p)):
            value = float(claim.refuted_value(first[event].sum(), second[event].sum()))
            assert value <= epsilon0 + 1e-12
            values.append(value)
    # the event {reveal, truth} (for randomized response: {truth}) attains it
    assert max(values) == pytest.approx(epsilon0, abs=1e-12)
    # by hand for that event: ln((P_a(E) - delta0) / P_b(E))
    event = np.array([True, True, False, False]) if delta0 else np.array([True, False])
    assert float(claim.refuted_value(p[event].sum(), q[event].sum())) == pytest.approx(
        math.log((p[event].sum() - delta0) / q[event].sum()), abs=1e-12)


def test_approx_refuted_value_is_valid_on_random_pairs():
    rng = np.random.default_rng(1)
    for _ in range(30):
        p, q = rng.dirichlet(np.ones(5), size=2)
        epsilon0 = float(rng.uniform(0, 2))
        delta0 = max(discrete_hockey_stick(p, q, epsilon0), discrete_hockey_stick(q, p, epsilon0))
        claim = ApproxDp(epsilon0, delta0)
        for event in all_events(5):
            assert float(claim.refuted_value(p[event].sum(), q[event].sum())) <= epsilon0 + 1e-9
            # the event that attains delta0 sits exactly on eps0 (up to rounding): a claim a hair larger holds
            assert not ApproxDp(epsilon0 + 1e-9, delta0).refutes(p[event].sum(), q[event].sum())


MONOTONE_CLAIMS = [PureDp(1.0), ApproxDp(1.0, 1e-3), ApproxDp(0.2, 0.3), GaussianDp(1.0), ZeroConcentratedDp(0.5),
                   DpCurve(((1.0, 1e-3), (2.0, 1e-6), (0.5, 0.1)))]


@pytest.mark.parametrize("claim", MONOTONE_CLAIMS, ids=lambda c: c.describe())
def test_refuted_value_rises_with_p_a_and_falls_with_p_b(claim):
    grid = np.concatenate([[0.0, 1e-300, 1e-12, 1e-6], np.linspace(0.01, 0.99, 25), [1 - 1e-9, 1.0]])
    values = claim.refuted_value(grid[:, None], grid[None, :])
    assert values.shape == (grid.size, grid.size)
    assert not np.any(np.isnan(values))
    tolerance = 1e-9 * np.maximum(1.0, np.abs(np.where(np.isfinite(values), values, 0)))
    assert np.all(values[1:, :] >= values[:-1, :] - tolerance[1:, :])  # rising p_a
    assert np.all(values[:, 1:] <= values[:, :-1] + tolerance[:, 1:])  # falling p_b
    # refutes is refuted_value > value
    assert np.array_equal(claim.refutes(grid[:, None], grid[None, :]), values > claim.value)
    # an event with P_a(E) = 0 refutes nothing
    assert not np.any(claim.refutes(0.0, grid))


# ---------------------------------------------------------------------------------------------------------------
# 6. conversions


def test_conversions_to_zcdp():
    for epsilon in (0.0, 0.3, 2.0):
        converted = PureDp(epsilon).to_zcdp()
        assert isinstance(converted, ZeroConcentratedDp) and converted.rho == pytest.approx(epsilon ** 2 / 2)
        assert ApproxDp(epsilon, 0.0).to_zcdp().rho == pytest.approx(epsilon ** 2 / 2)
    for mu in (0.1, 1.0, 3.0):
        converted = GaussianDp(mu).to_zcdp()
        assert isinstance(converted, ZeroConcentratedDp) and converted.rho == pytest.approx(mu ** 2 / 2)
        assert converted.source  # says where it comes from
    assert ZeroConcentratedDp(0.4).to_zcdp() == ZeroConcentratedDp(0.4)
    with pytest.raises(InvalidConfiguration):
        ApproxDp(1.0, 1e-5).to_zcdp()
    with pytest.raises(InvalidConfiguration):
        DpCurve(((1.0, 1e-5),)).to_zcdp()
    # zCDP implies no GDP: there is no conversion to offer, and composing a zCDP claim with a GDP one stays zCDP
    zcdp = ZeroConcentratedDp(0.5)
    assert not any(hasattr(zcdp, name) for name in ("to_gdp", "to_gaussian", "to_gaussian_dp"))
    mixed = from_event(dpa.ComposedDpEvent([dpa.GaussianDpEvent(1.0), dpa.ZCDpEvent(0.5)]))
    assert isinstance(mixed, ZeroConcentratedDp) and mixed.rho == pytest.approx(1.0)


@pytest.mark.parametrize("claim", [GaussianDp(1.0), GaussianDp(0.3), ZeroConcentratedDp(0.5), PureDp(1.5),
                                   ApproxDp(1.0, 1e-6), DpCurve(((1.0, 1e-4), (3.0, 1e-8)))],
                         ids=lambda c: c.describe())
@pytest.mark.parametrize("delta", [1e-6, 1e-3])
def test_to_approx_gives_an_epsilon_whose_profile_is_at_most_delta(claim, delta):
    approx = claim.to_approx(delta)
    assert isinstance(approx, ApproxDp)
    assert approx.delta == delta
    assert float(claim.profile(approx.epsilon)) <= delta * (1 + 1e-9)
    assert approx.source.startswith(claim.describe())
    if approx.epsilon > 0:  # and the smallest such epsilon
        assert float(claim.profile(approx.epsilon * (1 - 1e-6) - 1e-9)) > delta
    if isinstance(claim, GaussianDp):  # against the integrated divergence too
        assert gaussian_hockey_stick(claim.mu, approx.epsilon) <= delta * (1 + 1e-6)
        assert gaussian_hockey_stick(claim.mu, approx.epsilon * (1 - 1e-4)) > delta


def test_to_approx_refuses_a_delta_below_an_approximate_claims_own():
    with pytest.raises(InvalidConfiguration) as error:
        ApproxDp(1.0, 1e-3).to_approx(1e-5)
    assert error.value.parameter == "delta"


@pytest.mark.parametrize("claim", [GaussianDp(1.0), ZeroConcentratedDp(0.5)], ids=lambda c: c.describe())
def test_gaussian_and_zcdp_imply_no_pure_dp(claim):
    """N(mu, 1) vs N(0, 1) has an unbounded likelihood ratio: its hockey-stick divergence is positive at every
    epsilon, so neither a mu-GDP nor a rho-zCDP claim implies (eps, 0)-DP for any finite eps."""
    assert gaussian_hockey_stick(1.0, 30.0) > 0
    assert claim.epsilon_at(0.0) == math.inf
    with pytest.raises(InvalidConfiguration):
        claim.to_approx(0.0)


# ---------------------------------------------------------------------------------------------------------------
# 7. curves


CURVE_POINTS = ((2.0, 1e-6), (0.5, 0.05), (1.0, 1e-3))


def test_curve_profile_is_the_least_of_its_points():
    curve = DpCurve(CURVE_POINTS)
    assert curve.points == tuple(sorted(CURVE_POINTS))
    epsilons = np.linspace(0, 3, 31)
    expected = np.min([ApproxDp(e, d).profile(epsilons) for e, d in CURVE_POINTS], axis=0)
    assert curve.profile(epsilons) == pytest.approx(expected, rel=1e-12, abs=0)
    # and each point's own profile is the KOV mechanism's divergence, so check one value by hand too
    p, q = kov_mechanism(1.0, 1e-3)
    assert float(curve.profile(0.9)) <= discrete_hockey_stick(p, q, 0.9) + 1e-15
    for delta in (1e-7, 1e-6, 1e-4, 0.01, 0.2):
        assert curve.epsilon_at(delta) == pytest.approx(min(ApproxDp(e, d).epsilon_at(delta)
                                                            for e, d in CURVE_POINTS))
    assert curve.epsilon_at(1e-7) == math.inf
    assert curve.value == 0


def test_curve_refutes_iff_some_point_is_refuted():
    curve = DpCurve(CURVE_POINTS)
    grid = np.concatenate([[0.0, 1e-8, 1e-6], np.geomspace(1e-5, 1, 30)])
    p_a, p_b = np.meshgrid(grid, grid, indexing="ij")
    expected = np.any([ApproxDp(e, d).refutes(p_a, p_b) for e, d in CURVE_POINTS], axis=0)
    assert expected.any() and not expected.all()
    assert np.array_equal(curve.refutes(p_a, p_b), expected)
    # its value is the shift past the worst point: ln((p_a - d_i) / p_b) - e_i at its largest
    assert float(curve.refuted_value(0.5, 0.01)) == pytest.approx(
        max(math.log((0.5 - d) / 0.01) - e for e, d in CURVE_POINTS))


def test_curve_from_profile():
    curve = DpCurve.from_profile([2.0, 1.0], [1e-6, 1e-3], source="accountant")
    assert curve.points == ((1.0, 1e-3), (2.0, 1e-6)) and curve.source == "accountant"
    with pytest.raises(InvalidConfiguration) as error:
        DpCurve.from_profile([1.0, 2.0], [1e-3])
    assert error.value.parameter == "points"


# ---------------------------------------------------------------------------------------------------------------
# 8. bad input


@pytest.mark.parametrize("build, parameter", [
    (lambda: PureDp(-1.0), "epsilon"),
    (lambda: ApproxDp(-0.1, 1e-5), "epsilon"),
    (lambda: ApproxDp(1.0, -1e-5), "delta"),
    (lambda: ApproxDp(1.0, 1.0), "delta"),
    (lambda: ApproxDp(1.0, 1.5), "delta"),
    (lambda: ApproxDp(math.inf, 0.0), "epsilon"),
    (lambda: ApproxDp(math.nan, 0.0), "epsilon"),
    (lambda: ApproxDp("1", 0.0), "epsilon"),
    (lambda: PureDp(1.0, 1e-5), "delta"),
    (lambda: PureDp(True), "epsilon"),
    (lambda: ApproxDp(1.0, False), "delta"),
    (lambda: GaussianDp(True), "mu"),
    (lambda: GaussianDp(-1.0), "mu"),
    (lambda: ZeroConcentratedDp(False), "rho"),
    (lambda: ZeroConcentratedDp(-0.5), "rho"),
    (lambda: DpCurve(()), "points"),
    (lambda: DpCurve([]), "points"),
    (lambda: DpCurve(((1.0,),)), "points"),
    (lambda: DpCurve(((1.0, 1e-5, 3.0),)), "points"),
    (lambda: DpCurve((1.0, 1e-5)), "points"),
    (lambda: DpCurve(((True, 1e-5),)), "epsilon"),
    (lambda: DpCurve(((1.0, 1.0),)), "delta"),
    (lambda: GaussianDp(1.0).epsilon_at(1.5), "delta"),
    (lambda: GaussianDp(1.0).epsilon_at(-1e-3), "delta"),
    (lambda: PureDp(1.0).epsilon_at(True), "delta"),
    (lambda: from_event(dpa.GaussianDpEvent(0.0)), "event"),
])
def test_bad_input_is_refused_naming_the_parameter(build, parameter):
    with pytest.raises(InvalidConfiguration) as error:
        build()
    assert error.value.parameter == parameter
    assert parameter in str(error.value).lower()


def test_from_event_of_an_event_without_a_notion_needs_delta():
    event = dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(2.0))
    with pytest.raises(InvalidConfiguration) as error:
        from_event(event)
    assert "delta=" in str(error.value)
    assert error.value.parameter == "delta"
    claim = from_event(event, delta=1e-5)
    assert isinstance(claim, ApproxDp) and claim.delta == 1e-5 and claim.event is event
    assert claim.epsilon == pytest.approx(pld_epsilon(event, 1e-5, interval=1e-3), rel=2e-2)
    # sampling only helps: below the unsampled Gaussian's epsilon
    assert claim.epsilon < GaussianDp(0.5).epsilon_at(1e-5)


def test_from_event_with_delta_gives_the_approx_claim_its_own_notion_implies():
    """``delta=`` is never dropped: T Gaussian mechanisms of noise multiplier z compose exactly to sqrt(T)/z-GDP,
    whose (epsilon, delta) at delta is the GDP profile's (Dong, Roth & Su Cor. 2.13), solved here by bisection on the
    closed form, and agrees with dp-accounting's PLD accountant."""
    event = dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(4.0), 5)
    claim = from_event(event, delta=1e-5)
    assert isinstance(claim, ApproxDp) and claim.delta == 1e-5 and claim.event is event
    mu = math.sqrt(5) / 4.0

    def profile(epsilon: float) -> float:
        return (stats.norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2))

    closed = optimize.brentq(lambda e: profile(e) - 1e-5, 0.0, 50.0, xtol=1e-12)
    assert claim.epsilon == pytest.approx(closed, rel=1e-6)
    assert claim.epsilon == pytest.approx(pld_epsilon(event, 1e-5, interval=1e-4), rel=1e-2)
    laplace = from_event(dpa.LaplaceDpEvent(0.5), delta=0.0)
    assert isinstance(laplace, ApproxDp) and (laplace.epsilon, laplace.delta) == (2.0, 0.0)


# ---------------------------------------------------------------------------------------------------------------
# 9. as_dict, sources, values


ALL_CLAIMS = [PureDp(1.0), ApproxDp(1.0, 1e-5), GaussianDp(0.7), ZeroConcentratedDp(0.2),
              DpCurve(((1.0, 1e-3), (2.0, 1e-6)))]


@pytest.mark.parametrize("claim", ALL_CLAIMS, ids=lambda c: c.describe())
def test_as_dict_is_json_with_notion_parameters_and_source(claim):
    sourced = claim.with_source("Theorem 3")
    record = sourced.as_dict()
    text = json.dumps(record, allow_nan=False)
    back = json.loads(text)
    assert back["notion"] == type(claim).notion
    assert back["source"] == "Theorem 3"
    assert back["describe"] == claim.describe()
    parameters = {PureDp: {"epsilon": 1.0}, ApproxDp: {"epsilon": 1.0, "delta": 1e-5}, GaussianDp: {"mu": 0.7},
                  ZeroConcentratedDp: {"rho": 0.2}, DpCurve: {"points": [[1.0, 1e-3], [2.0, 1e-6]]}}[type(claim)]
    for name, value in parameters.items():
        assert back[name] == value
    # no other claim's parameters
    others = {"epsilon", "delta", "mu", "rho", "points"} - set(parameters)
    assert not others & set(back)
    assert len({c.notion for c in ALL_CLAIMS}) == len(ALL_CLAIMS)
    # the claim's value is its parameter's
    assert claim.value == {PureDp: 1.0, ApproxDp: 1.0, GaussianDp: 0.7, ZeroConcentratedDp: 0.2, DpCurve: 0.0}[
        type(claim)]


def test_with_source_keeps_an_existing_source_and_the_event():
    assert PureDp(1.0).with_source("Theorem 1").source == "Theorem 1"
    assert PureDp(1.0, source="stated by pkg").with_source("Theorem 1").source == "stated by pkg"
    event = dpa.GaussianDpEvent(2.0)
    claim = from_event(event)
    assert "GaussianDpEvent" in claim.source
    assert claim.with_source("other") is claim or claim.with_source("other").source == claim.source
    assert from_event(event, source="my accountant").source == "my accountant"
    unsourced = GaussianDp(0.5, event=event)
    assert unsourced.with_source("x").event is event and unsourced.with_source("x").source == "x"
    assert "Theorem 1" in str(PureDp(1.0).with_source("Theorem 1"))


def test_claims_are_frozen_hashable_values():
    claim = GaussianDp(1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        claim.mu = 2.0
    assert GaussianDp(1) == GaussianDp(1.0) and hash(GaussianDp(1)) == hash(GaussianDp(1.0))
    assert isinstance(GaussianDp(1).mu, float) and isinstance(DpCurve(((1, 0),)).points[0][0], float)
    assert PureDp(np.float64(0.5)).epsilon == 0.5 and type(PureDp(np.int64(2)).epsilon) is float
    # the event is kept for the record but is not part of the value
    assert GaussianDp(0.5, event=dpa.GaussianDpEvent(2.0)) == GaussianDp(0.5)
    assert PureDp(1.0).describe() == "1-DP" and ApproxDp(1.0, 1e-5).describe() == "(1, 1e-05)-DP"
