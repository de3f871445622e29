"""Exact Clopper-Pearson bounds and the ε lower bound they give for one event.

For an event E with P_a(E) >= p̲_a and P_b(E) <= p̄_b (one-sided Clopper-Pearson bounds,
each at level alpha_each), (ε, δ)-DP of the mechanism requires P_a(E) <= e^ε P_b(E) + δ,
so any claimed ε below ``ln((p̲_a − δ) / p̄_b)`` is refuted; the same pair gives the
hockey-stick lower bound ``p̲_a − e^ε p̄_b`` on δ at a claimed ε. With m events bounded on
the same samples, levels summing to alpha (a weighted Bonferroni correction over the one-sided intervals)
makes every bound hold together with probability >= 1 − alpha.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special


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
