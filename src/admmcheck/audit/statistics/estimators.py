"""Exact Clopper-Pearson bounds and the ε lower bound they give for one event.

For an event E with P_a(E) >= p̲_a and P_b(E) <= p̄_b (one-sided Clopper-Pearson bounds,
each at level alpha_each), (ε, δ)-DP of the mechanism requires P_a(E) <= e^ε P_b(E) + δ,
so any claimed ε below ``ln((p̲_a − δ) / p̄_b)`` is refuted; the same pair gives the
hockey-stick lower bound ``p̲_a − e^ε p̄_b`` on δ at a claimed ε. With m events bounded on
the same samples, levels summing to alpha (a weighted Bonferroni correction over the one-sided intervals)
makes every bound hold together with probability >= 1 − alpha.

For claims with δ = 0 an event's level may instead go to one conditional ratio test
(:func:`ratio_epsilon_bound`: Fisher's exact bound on the odds ratio of the two counts, then the step
from odds to ratio), which on rare events pays about √2·z(alpha) standard errors of ln p̂_a − ln p̂_b
where the two intervals pay 2·z(alpha/2).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import optimize, special

from admmcheck.claims.values import ApproxDp, Claim


def cp_lower(count: np.ndarray | float, n: np.ndarray | float, alpha: float) -> np.ndarray:
    """One-sided lower Clopper-Pearson bound on p from ``count`` successes in ``n`` (0 if count = 0).

    ``count`` may be fractional (a predicted count); the Beta quantile is defined for it. It is taken
    from ``scipy.special.betaincinv``, the function ``scipy.stats.beta.ppf`` evaluates, without the
    latter's argument handling (most of the time of a small call: the neighbour search makes many).
    """
    count, n = np.asarray(count, dtype=float), np.asarray(n, dtype=float)
    safe = np.maximum(count, 1e-300)
    lower = special.betaincinv(safe, np.maximum(n - count + 1, 1e-300), alpha)  # Beta(a, b).ppf(alpha)
    return np.where(count <= 0, 0.0, lower)


def cp_upper(count: np.ndarray | float, n: np.ndarray | float, alpha: float) -> np.ndarray:
    """One-sided upper Clopper-Pearson bound on p from ``count`` successes in ``n`` (1 if count = n)."""
    count, n = np.asarray(count, dtype=float), np.asarray(n, dtype=float)
    upper = special.betaincinv(count + 1, np.maximum(n - count, 1e-300), 1 - alpha)  # Beta.ppf(1 - alpha)
    return np.where(count >= n, 1.0, upper)


def epsilon_bound(lower_a: np.ndarray | float, upper_b: np.ndarray | float, delta: float) -> np.ndarray:
    """ln((p̲_a − δ) / p̄_b), or −inf where p̲_a <= δ (the event refutes nothing)."""
    lower_a, upper_b = np.asarray(lower_a, dtype=float), np.asarray(upper_b, dtype=float)
    numerator = lower_a - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.log(numerator / upper_b)
    return np.where(numerator > 0, value, -math.inf)


def delta_bound(lower_a: float, upper_b: float, epsilon: float) -> float:
    """Hockey-stick lower bound on δ at ``epsilon``: p̲_a − e^ε p̄_b (may be negative)."""
    return float(lower_a - math.exp(epsilon) * upper_b)


def point_estimate(p_a: float, p_b: float, delta: float) -> float:
    """ln((p_a − δ)/p_b) from the frequencies: +inf when the event never happened under the other
    dataset (a support mismatch), nan where it refutes nothing or nothing was drawn."""
    if not (p_a > delta) or math.isnan(p_b):
        return float("nan")
    return math.inf if p_b == 0 else math.log((p_a - delta) / p_b)


def leak_floor(n: int, alpha: float, epsilon: float, delta: float) -> float:
    """The smallest probability p at which an event refutes (ε, δ) from ``n`` samples per side when it has
    probability p under one dataset and 0 under the other, counted at its expectation n·p and 0, with
    one-sided intervals at ``alpha`` each: ln((p̲_a(n·p) − δ) / p̄_b(0)) = ε, where p̄_b(0) = 1 − alpha^(1/n).

    A leak confined to rarer events cannot be refuted by bounding any one event at that level, even one
    known in advance (its expected count is too small): what a "no violation found" cannot speak for. 1.0
    where no event can refute the claim at all (n too small). Bisection on ln p: the bound increases with p.
    """
    upper = float(cp_upper(0, n, alpha))

    def refutes(p: float) -> bool:
        return float(epsilon_bound(cp_lower(n * p, n, alpha), upper, delta)) > epsilon

    if not refutes(1.0):
        return 1.0
    low, high = math.log(1e-3 / n), 0.0  # an expected count of 1e-3 refutes nothing
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (low, middle) if refutes(math.exp(middle)) else (middle, high)
    return math.exp(high)


CORRECTION_SHARE = 0.01  # of a ratio bound's level, spent on the two intervals of its odds-to-ratio step
TWO_INTERVALS, RATIO_TEST = "two intervals", "conditional ratio test"  # the estimators' names in the JSON


def odds_ratio_lower(count_a: int, n_a: int, count_b: int, n_b: int, alpha: float) -> float:
    """Exact one-sided lower confidence bound at level ``alpha`` on the odds ratio
    ψ = p_a (1 − p_b) / (p_b (1 − p_a)) of two independent binomial counts: the conditional (Fisher)
    bound, the ψ at which P_ψ(X ≥ count_a | X + Y = count_a + count_b) = alpha, X and Y the two counts,
    whose conditional law is Fisher's noncentral hypergeometric (``scipy.stats.nchypergeom_fisher``;
    the bound of ``scipy.stats.contingency.odds_ratio(kind="conditional")``). 0 where count_a is the
    least value the total allows.

    The tail is summed over a window of ±(12·√t + 50) around count_a (t the total): the law is
    log-concave, so where its bulk lies outside the window the truncated tail errs on the side that
    keeps the root where it is, and at the root the window holds all but a negligible part of it."""
    t = count_a + count_b
    low, high = max(0, t - n_b), min(n_a, t)
    if count_a <= low:
        return 0.0
    half = int(12 * math.sqrt(t) + 50)
    k = np.arange(max(low, count_a - half), min(high, count_a + half) + 1, dtype=float)
    base = (special.gammaln(n_a + 1) - special.gammaln(k + 1) - special.gammaln(n_a - k + 1)
            + special.gammaln(n_b + 1) - special.gammaln(t - k + 1) - special.gammaln(n_b - t + k + 1))
    tail = k >= count_a
    target = math.log(alpha)

    def excess(log_psi: float) -> float:
        g = base + k * log_psi
        return float(special.logsumexp(g[tail]) - special.logsumexp(g)) - target

    odds_a = (count_a + 0.5) / (n_a - count_a + 0.5)
    odds_b = (count_b + 0.5) / (n_b - count_b + 0.5)
    guess = math.log(odds_a / odds_b)
    step = 1.0
    lo_x, hi_x = guess - step, guess + step
    while excess(lo_x) > 0:
        step *= 2
        lo_x = guess - step
    step = 1.0
    while excess(hi_x) < 0:
        step *= 2
        hi_x = guess + step
    return math.exp(optimize.brentq(excess, lo_x, hi_x, xtol=1e-10, rtol=1e-12))


def ratio_epsilon_bound(count_a: int, n_a: int, count_b: int, n_b: int, alpha: float) -> float:
    """Lower confidence bound at level ``alpha`` on ln(p_a / p_b), for claims with δ = 0: the conditional
    odds-ratio bound (:func:`odds_ratio_lower`, at (1 − CORRECTION_SHARE)·alpha) times
    (1 − p̄_a) / (1 − p̲_b) (one-sided Clopper-Pearson bounds at CORRECTION_SHARE·alpha/2 each), since
    p_a / p_b = ψ (1 − p_a) / (1 − p_b). −inf where the odds-ratio bound is 0.

    Why not ln(p̲_a / p̄_b) with alpha/2 on each side (:func:`epsilon_bound`): a ratio's two one-sided
    intervals add their margins, 2·z(alpha/2)·s where the conditional test pays about √2·z(alpha)·s, so
    the Bonferroni box gives away a third of the distance to the true ratio on rare events
    (ln(0.00552/0.00397) = 0.330 at 10⁶ a side, 95 %: box 0.2725, conditional 0.2950)."""
    psi = odds_ratio_lower(count_a, n_a, count_b, n_b, (1 - CORRECTION_SHARE) * alpha)
    if psi <= 0:
        return -math.inf
    share = CORRECTION_SHARE * alpha / 2
    upper_a = float(cp_upper(count_a, n_a, share))
    lower_b = float(cp_lower(count_b, n_b, share))
    if upper_a >= 1.0:
        return -math.inf
    return math.log(psi) + math.log1p(-upper_a) - math.log1p(-lower_b)


def ratio_leak_floor(n: int, alpha: float, epsilon: float) -> float:
    """:func:`leak_floor` for the conditional ratio test (claims with δ = 0): the smallest probability t/n at
    which an event counted t times among ``n`` samples of one side and never among ``n`` of the other refutes
    ``epsilon`` at level ``alpha`` (:func:`ratio_epsilon_bound`); 1.0 where no count does. The bound grows
    with t until t nears n, where the odds-to-ratio step's bound on 1 − p_a takes it back down: the least
    refuting count is found by bisection below the first of 60 geometrically spaced counts that refutes."""
    def bound(t: int) -> float:
        return ratio_epsilon_bound(t, n, 0, n, alpha)

    if n < 1:
        return 1.0
    counts = np.unique(np.geomspace(1, n, 60).astype(int))
    values = [bound(int(t)) for t in counts]
    if not max(values) > epsilon:
        return 1.0
    first = next(i for i, value in enumerate(values) if value > epsilon)
    low, high = (0, int(counts[0])) if first == 0 else (int(counts[first - 1]), int(counts[first]))
    while high - low > 1:  # bound(low) <= epsilon < bound(high)
        middle = (low + high) // 2
        low, high = (middle, high) if not bound(middle) > epsilon else (low, middle)
    return high / n


def better_estimator(count_a: float, n_a: int, count_b: float, n_b: int, level: float) -> tuple[str, float]:
    """For a claim with δ = 0, the registered estimator (:data:`ESTIMATORS`) whose ε bound at level ``level`` is
    largest at these counts, and that bound: of the two built in, two Clopper-Pearson intervals at level/2 each
    (:func:`epsilon_bound`) or the conditional ratio test (:func:`ratio_epsilon_bound`), which wins on rare events
    and loses on common ones. A tie keeps the first registered."""
    values = [estimator.predicted(count_a, n_a, count_b, n_b, level) for estimator in ESTIMATORS]
    best = max(range(len(values)), key=values.__getitem__)
    return ESTIMATORS[best].name, values[best]


@dataclass(frozen=True)
class EventBound:
    """What an estimator bounds from one event's counts: ``epsilon`` the ε lower bound at the claim's δ (its planning
    point's), ``value`` the lower bound on the claim's own parameter (:attr:`~admmcheck.claims.Claim.parameter`)."""

    epsilon: float
    value: float


class Estimator(ABC):
    """One way to turn an event's two counts into lower bounds at a level (the event's share of 1 − confidence).

    The registered estimators (:data:`ESTIMATORS`) compete for each event on the selection split
    (:func:`admmcheck.audit.statistics.events.with_estimator`), before any bounding sample is drawn, so the bound
    stays valid; the audit's result, the terminal and the audit page show the chosen one's ``name`` and ``method``.
    A new estimator is one subclass handed to :func:`register_estimator`."""

    #: the estimator's name, as the audit's JSON and page give it
    name: ClassVar[str]
    #: how it bounds, in one sentence (the terminal and the page)
    method: ClassVar[str]

    def applies(self, claim: Claim) -> bool:
        """Whether it may bound an event against ``claim`` (default: any claim)."""
        return True

    @abstractmethod
    def bound(self, count_a: int, n_a: int, count_b: int, n_b: int, level: float, claim: Claim) -> EventBound:
        """The lower bounds from ``count_a`` of ``n_a`` (the side the event is more likely under) and ``count_b``
        of ``n_b``, holding with probability >= 1 − ``level``."""

    def predicted(self, count_a: float, n_a: int, count_b: float, n_b: int, level: float) -> float:
        """The ε bound it would give a pure ε claim at counts projected from the selection split (how the
        estimators compete for an event)."""
        return self.bound(int(count_a), n_a, int(count_b), n_b, level, ApproxDp(1.0, 0.0)).epsilon

    def leak_floor(self, n: int, level: float, point: ApproxDp) -> float:
        """The smallest probability an event, never given by the other side, must have to refute ``point`` at its
        expected count from ``n`` samples per side at ``level`` (1.0: it refutes none)."""
        return 1.0


class TwoIntervals(Estimator):
    """ln((p̲_a − δ) / p̄_b) from two one-sided Clopper-Pearson intervals at half the level each (module docstring);
    a claim's own parameter from the same two ends (:meth:`~admmcheck.claims.Claim.refuted_value`)."""

    name = TWO_INTERVALS
    method = "two one-sided Clopper-Pearson intervals at half the event's level each"

    def bound(self, count_a: int, n_a: int, count_b: int, n_b: int, level: float, claim: Claim) -> EventBound:
        lower_a, upper_b = float(cp_lower(count_a, n_a, level / 2)), float(cp_upper(count_b, n_b, level / 2))
        epsilon = float(epsilon_bound(lower_a, upper_b, claim.planning_point().delta))
        return EventBound(epsilon, float(claim.refuted_value(lower_a, upper_b)))

    def predicted(self, count_a: float, n_a: int, count_b: float, n_b: int, level: float) -> float:
        return float(epsilon_bound(cp_lower(count_a, n_a, level / 2), cp_upper(count_b, n_b, level / 2), 0.0))

    def leak_floor(self, n: int, level: float, point: ApproxDp) -> float:
        return leak_floor(n, level / 2, point.epsilon, point.delta)


class RatioTest(Estimator):
    """The conditional ratio test (:func:`ratio_epsilon_bound`), for pure ε claims: wins on rare events."""

    name = RATIO_TEST
    method = ("the conditional ratio test on the two counts (Fisher's exact bound on the odds ratio, times bounds on "
              "(1 - p_a)/(1 - p_b)), not the two intervals")

    def applies(self, claim: Claim) -> bool:
        return isinstance(claim, ApproxDp) and claim.delta == 0

    def bound(self, count_a: int, n_a: int, count_b: int, n_b: int, level: float, claim: Claim) -> EventBound:
        epsilon = ratio_epsilon_bound(count_a, n_a, count_b, n_b, level)
        return EventBound(epsilon, epsilon)

    def predicted(self, count_a: float, n_a: int, count_b: float, n_b: int, level: float) -> float:
        return ratio_epsilon_bound(int(count_a), n_a, int(count_b), n_b, level)

    def leak_floor(self, n: int, level: float, point: ApproxDp) -> float:
        return ratio_leak_floor(n, level, point.epsilon) if point.delta == 0 else 1.0


#: The estimators an event's bound may come from, the default first (it keeps an event on a tie).
ESTIMATORS: list[Estimator] = [TwoIntervals(), RatioTest()]


def register_estimator(estimator: Estimator) -> Estimator:
    """Add ``estimator`` to :data:`ESTIMATORS` (refused where its name is taken); returns it."""
    if any(known.name == estimator.name for known in ESTIMATORS):
        raise ValueError(f"an estimator named {estimator.name!r} is registered already")
    ESTIMATORS.append(estimator)
    return estimator


def estimator_named(name: str) -> Estimator:
    """The registered estimator called ``name`` (the name an event or a result carries)."""
    for estimator in ESTIMATORS:
        if estimator.name == name:
            return estimator
    raise ValueError(f"no estimator named {name!r}; the registered ones are {[e.name for e in ESTIMATORS]}")
