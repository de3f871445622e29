"""Lower bounds on privacy from one run with m canaries (Steinke, Nasr & Jagielski, "Privacy auditing with one (1)
training run", NeurIPS 2023; Mahloujifar, Melis & Chaudhuri, "Auditing f-differential privacy in one run", ICML
2025).

The game: each of ``canaries`` = m canaries is included in the training data independently with probability ½; the
auditor scores every canary on what the one run released and guesses "included" or "excluded" for ``guesses`` = r
of them (the most extreme scores), abstaining on the others; ``correct`` = v of the guesses are right. The numbers
of guesses must be fixed before their correctness is looked at (or their choice paid for in the confidence).

* **ε-DP.** The number of correct guesses is stochastically dominated by Binomial(r, q_ε), q_ε = e^ε/(1 + e^ε),
  the accuracy of ε-DP randomized response (Steinke et al., Thm 5.2 with Corollary 5.4 at δ = 0). So ε-DP is refuted
  at level β = 1 − confidence when P[Bin(r, q_ε) ≥ v] ≤ β, and the largest ε refuted is the logit of the one-sided
  Clopper–Pearson lower bound on q from v successes in r: it does not depend on m.
* **(ε, δ)-DP.** P[W ≥ v] ≤ f(v) + 2mδ · max_{1≤i≤v} (f(v − i) − f(v))/i with f(u) = P[Bin(r, q_ε) ≥ u] (their
  Corollary 5.4, the form their experiments use; computed as in their Appendix D).
* **f-DP.** A hypothesised trade-off curve f is refuted by the recursion of Mahloujifar et al. (their Algorithm 3,
  from Theorem 3.1: Σ_{i∈T} (i/m) p_i ≤ f̄((1/(k−1)) Σ_{i∈T} ((r−i+1)/m) p_{i−1}) for f̄ = 1 − f); for μ-GDP,
  f̄⁻¹(y) = Φ(Φ⁻¹(y) − μ), and the bound is the largest μ refuted.
"""

from __future__ import annotations

import math
from typing import Callable

from scipy import special, stats

from admmcheck.audit.statistics.estimators import cp_lower
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.validation import non_negative_int, positive_int

#: how finely the largest refuted ε or μ is located (the bound returned is the lower end of its last bracket)
TOLERANCE = 1e-9


def _counts(guesses: object, correct: object, canaries: object | None) -> tuple[int, int, int | None]:
    r, v = non_negative_int("guesses", guesses), non_negative_int("correct", correct)
    if v > r:
        raise InvalidConfiguration(f"correct={v} exceeds guesses={r}: only guesses can be correct",
                                   parameter="correct")
    m = None if canaries is None else positive_int("canaries", canaries)
    if m is not None and r > m:
        raise InvalidConfiguration(f"guesses={r} exceeds canaries={m}: at most one guess per canary",
                                   parameter="guesses")
    return r, v, m


def _level(confidence: object) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise InvalidConfiguration(f"confidence={confidence!r} must be a number strictly between 0 and 1",
                                   parameter="confidence")
    return 1.0 - float(confidence)


def _delta(delta: object) -> float:
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 <= delta < 1:
        raise InvalidConfiguration(f"delta={delta!r} must be a number in [0, 1)", parameter="delta")
    return float(delta)


def one_run_p_value(canaries: int, guesses: int, correct: int, epsilon: float, delta: float = 0.0) -> float:
    """The probability, under an (ε, δ)-DP mechanism, of ``correct`` or more right guesses among ``guesses`` on
    ``canaries`` canaries, bounded as Steinke et al.'s Corollary 5.4 bounds it: f(v) + 2mδ max_i (f(v−i) − f(v))/i,
    f(u) = P[Binomial(r, e^ε/(1 + e^ε)) ≥ u] (their Appendix D's computation)."""
    r, v, m = _counts(guesses, correct, canaries)
    delta = _delta(delta)
    if not epsilon >= 0:
        raise InvalidConfiguration(f"epsilon={epsilon!r} must be >= 0", parameter="epsilon")
    q = 1.0 / (1.0 + math.exp(-epsilon)) if math.isfinite(epsilon) else 1.0
    tail = float(stats.binom.sf(v - 1, r, q))  # f(v)
    if delta == 0 or v == 0:
        return min(tail, 1.0)
    # f(v − i) − f(v) = Σ_{u = v−i}^{v−1} P[Bin = u]: a running sum over i
    gaps = stats.binom.pmf(range(v - 1, -1, -1), r, q).cumsum()
    slope = max(float(gap) / i for i, gap in enumerate(gaps, start=1))
    return min(tail + 2 * m * delta * slope, 1.0)


def _largest_refuted(refuted: Callable[[float], bool], start: float = 1.0) -> float:
    """sup{x ≥ 0 : refuted(x)} for a property that holds on an interval [0, x*): 0 if it fails at 0, the lower end
    of a bracket of width TOLERANCE otherwise (conservative), inf if it holds at every x tried up to 1e6."""
    if not refuted(0.0):
        return 0.0
    low, high = 0.0, start
    while refuted(high):
        low, high = high, 2 * high
        if high > 1e6:
            return math.inf
    while high - low > TOLERANCE * max(1.0, low):
        middle = (low + high) / 2
        low, high = (middle, high) if refuted(middle) else (low, middle)
    return low


def epsilon_lower_bound(guesses: int, correct: int, confidence: float, delta: float = 0.0, *,
                        canaries: int | None = None) -> float:
    """The largest ε such that (ε, ``delta``)-DP is refuted, with probability ``confidence``, by ``correct`` right
    guesses out of ``guesses`` (Steinke et al.): 0 when nothing is refuted.

    With δ = 0 this is logit(p̲), p̲ the one-sided Clopper–Pearson lower bound on the guessing accuracy, whatever the
    number of canaries; with δ > 0 the bound depends on it: give ``canaries`` (m).
    """
    r, v, m = _counts(guesses, correct, canaries)
    beta, delta = _level(confidence), _delta(delta)
    if delta == 0:
        accuracy = float(cp_lower(v, r, beta)) if r else 0.0
        if accuracy <= 0.5:
            return 0.0
        return math.inf if accuracy >= 1 else math.log(accuracy / (1 - accuracy))
    if m is None:
        raise InvalidConfiguration("delta > 0: give canaries=m, the number of canaries in the run (the bound's "
                                   "delta term is 2 m delta)", parameter="canaries")
    return _largest_refuted(lambda epsilon: one_run_p_value(m, r, v, epsilon, delta) <= beta)


def trade_off_rejected(blow_up_inverse: Callable[[float], float], canaries: int, guesses: int, correct: int,
                       confidence: float, choices: int = 2) -> bool:
    """Whether ``correct`` right guesses out of ``guesses`` on ``canaries`` canaries refute, with probability
    ``confidence``, that the mechanism is f-DP, where ``blow_up_inverse`` is the inverse of f̄ = 1 − f (Mahloujifar
    et al., Algorithm 3, for canaries whose secret takes one of ``choices`` values; 2 for inclusion).

    The recursion builds, from mass 1 − confidence placed at ``correct`` correct guesses, the least probability that
    Theorem 3.1 forces on fewer correct guesses; the hypothesis is refuted when that exceeds what a distribution has.
    """
    r, v, m = _counts(guesses, correct, canaries)
    tau = _level(confidence)
    k = positive_int("choices", choices)
    if r == 0 or m is None:
        return False
    mass, rest = tau * v / m, tau * (r - v) / m  # r_c and h_c of the recursion
    for i in range(v - 1, -1, -1):
        rest_before = rest
        rest = max(rest, (k - 1) * blow_up_inverse(min(mass, 1.0)))
        mass += i / (r - i) * (rest - rest_before)
    return mass + rest > r / m


def gaussian_blow_up_inverse(mu: float) -> Callable[[float], float]:
    """f̄⁻¹ of μ-GDP: f̄(x) = 1 − f(x) = Φ(Φ⁻¹(x) + μ), so f̄⁻¹(y) = Φ(Φ⁻¹(y) − μ)."""
    return lambda y: float(special.ndtr(special.ndtri(y) - mu))


def gaussian_dp_refuted(mu: float, canaries: int, guesses: int, correct: int, confidence: float) -> bool:
    """Whether ``correct`` right of ``guesses`` on ``canaries`` canaries refute μ-GDP (a claim stated as a trade-off
    curve: type II error at least G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) for every test of type I error α, Dong, Roth & Su 2022)
    with ``confidence``, by Algorithm 3 of Mahloujifar et al. (:func:`trade_off_rejected`)."""
    return trade_off_rejected(gaussian_blow_up_inverse(mu), canaries, guesses, correct, confidence)


def gaussian_dp_lower_bound(canaries: int, guesses: int, correct: int, confidence: float) -> float:
    """The largest μ such that μ-GDP is refuted with probability ``confidence`` by the guesses (Mahloujifar et al.):
    0 when nothing is refuted. A lower bound on the mechanism's μ only if its trade-off curve is Gaussian; for any
    other mechanism it says which Gaussian curves its guesses rule out."""
    r, v, m = _counts(guesses, correct, canaries)
    _level(confidence)
    return _largest_refuted(lambda mu: trade_off_rejected(gaussian_blow_up_inverse(mu), m, r, v, confidence))
