"""A privacy claim as a small frozen value of the notion its author states it in, after dp_accounting's ``DpEvent``.

* :class:`PureDp` ``(epsilon)``: ε-DP (Dwork & Roth 2014, Def. 2.4 with δ = 0);
* :class:`ApproxDp` ``(epsilon, delta)``: (ε, δ)-DP (Def. 2.4);
* :class:`ZeroConcentratedDp` ``(rho)``: ρ-zCDP, D_α(M(x) ‖ M(x')) <= ρα for every α > 1 (Bun & Steinke 2016,
  Def. 1.1);
* :class:`GaussianDp` ``(mu)``: μ-GDP, every test's type II error at least G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) (Dong, Roth &
  Su 2022, Def. 2.6);
* :class:`DpCurve` ``(points)``: (ε_i, δ_i)-DP at each of its points, an (ε, δ(ε)) curve.

Every claim knows the same four things, so that an audit can test the notion claimed without knowing which it is:

* its **privacy profile** :meth:`Claim.profile`: the largest hockey-stick divergence δ(ε) = sup_E P_a(E) − e^ε P_b(E)
  a mechanism with the claim can have on a pair of neighbours (Balle et al. 2018);
* :meth:`Claim.epsilon_at`: the smallest ε with profile(ε) <= δ, and :meth:`Claim.to_approx` the (ε, δ) claim it
  implies there;
* :meth:`Claim.refuted_value`: the largest value of its own parameter (ε, ρ, μ) that one event E refutes when
  P_a(E) >= ``p_a`` and P_b(E) <= ``p_b`` (bounds from below and above, as an audit's intervals give): every value
  below it is impossible for a mechanism with that event. A claim is refuted when this exceeds its :attr:`value`;
* its **source**: where the claim comes from (a theorem its mechanism names, "stated by PACKAGE", or a
  dp_accounting event, :func:`from_event`), carried into every result that tests it.

Conversions are the standard ones: ε-DP implies (ε²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4); μ-GDP implies
(μ²/2)-zCDP (a Gaussian mechanism's Rényi divergence, Mironov 2017, Prop. 7); every claim implies (ε(δ), δ)-DP at
every δ (:meth:`Claim.to_approx`). A conversion that does not exist (zCDP to GDP, say) is refused.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Iterable

import numpy as np

from admmcheck.foundations.errors import InvalidConfiguration

#: the δ of the (ε, δ) point at which an audit plans which events to bound for a claim with no δ of its own
#: (zCDP, GDP, a curve): a planning choice only; the verdict tests the claim's own notion
PLANNING_DELTA = 1e-3
#: Rényi orders α at which a zCDP claim's refutation is evaluated (:meth:`ZeroConcentratedDp.refuted_value`): the
#: bound is the largest over them, so fewer orders only make it smaller (never invalid)
RENYI_ORDERS = np.concatenate([1 + np.geomspace(1e-3, 1, 60, endpoint=False), np.geomspace(2, 1e4, 120)])


def _number(name: str, value: object, *, upper: float = math.inf, closed_upper: bool = False) -> float:
    """``value`` as a float in [0, upper) (or [0, upper]), refused with what to give."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise InvalidConfiguration(f"{name}={value!r} must be a finite number >= 0", parameter=name)
    number = float(value)
    inside = number <= upper if closed_upper else number < upper
    if not (math.isfinite(number) and number >= 0 and inside):
        wanted = (f"lie in [0, {upper:g}{']' if closed_upper else ')'}" if math.isfinite(upper)
                  else "be a finite number >= 0")
        raise InvalidConfiguration(f"{name}={value!r} must {wanted}", parameter=name)
    return number


def _kov_profile(epsilon: np.ndarray, epsilon0: float, delta0: float) -> np.ndarray:
    """The privacy profile of (ε0, δ0)-DP: δ0 + (1 − δ0)(e^{ε0} − e^ε)/(1 + e^{ε0}) for ε <= ε0, δ0 beyond: the
    hockey-stick divergence of the randomised-response pair whose region is the whole (ε0, δ0) region (Kairouz, Oh &
    Viswanath 2015, Thm 2.1), which contains every (ε0, δ0)-DP pair's."""
    # (e^{ε0} − e^ε)/(1 + e^{ε0}) written so that no exponential overflows at a large ε0
    inside = delta0 + (1 - delta0) * -np.expm1(np.minimum(epsilon, epsilon0) - epsilon0) / (1 + math.exp(-epsilon0))
    return np.where(epsilon <= epsilon0, inside, delta0)


def _kov_epsilon(delta: float, epsilon0: float, delta0: float) -> float:
    """The smallest ε whose (ε0, δ0) profile is <= ``delta`` (the inverse of :func:`_kov_profile`)."""
    if delta >= 1:
        return 0.0
    if delta < delta0:
        return math.inf
    # δ0 + (1 − δ0)(e^{ε0} − e^ε)/(1 + e^{ε0}) = δ  <=>  e^{ε − ε0} = 1 − (δ − δ0)(1 + e^{−ε0})/(1 − δ0),
    # written with e^{−ε0} so that no exponential overflows at a large ε0
    ratio = 1 - (delta - delta0) * (1 + math.exp(-epsilon0)) / (1 - delta0)
    return max(epsilon0 + math.log(ratio), 0.0) if ratio > 0 else 0.0


def epsilon_refuted(p_a: np.ndarray | float, p_b: np.ndarray | float, delta: float) -> np.ndarray:
    """ln((p_a − δ)/p_b): the largest ε an event with P_a(E) >= p_a, P_b(E) <= p_b refutes at δ (−inf where
    p_a <= δ: it refutes no ε)."""
    p_a, p_b = np.asarray(p_a, dtype=float), np.asarray(p_b, dtype=float)
    numerator = p_a - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.log(numerator / p_b)
    return np.where(numerator > 0, value, -math.inf)


class Claim(ABC):
    """What every privacy claim can say (module docstring). Subclasses are frozen dataclasses with a ``source``."""

    #: the notion's name in a sentence and in JSON
    notion: ClassVar[str]
    #: the name of the claim's parameter, which :meth:`refuted_value` bounds from below
    parameter: ClassVar[str]
    source: str

    @property
    @abstractmethod
    def value(self) -> float:
        """The claimed value of :attr:`parameter` (ε, ρ, μ; a curve's 0: no shift)."""

    @abstractmethod
    def profile(self, epsilon: np.ndarray | float) -> np.ndarray:
        """δ(ε): the largest hockey-stick divergence at each ``epsilon`` a mechanism with this claim can have."""

    @abstractmethod
    def refuted_value(self, p_a: np.ndarray | float, p_b: np.ndarray | float) -> np.ndarray:
        """The largest value of :attr:`parameter` that an event with P_a(E) >= ``p_a`` and P_b(E) <= ``p_b``
        refutes (−inf or 0 where it refutes none); vectorised over both."""

    @abstractmethod
    def describe(self) -> str:
        """The claim in words, e.g. ``(1, 1e-05)-DP``."""

    @abstractmethod
    def fields(self) -> dict[str, float | list[list[float]]]:
        """The claim's parameters by name (what :meth:`as_dict` holds beside the notion and the source)."""

    def refutes(self, p_a: np.ndarray | float, p_b: np.ndarray | float) -> np.ndarray:
        """Whether an event with P_a(E) >= ``p_a`` and P_b(E) <= ``p_b`` is impossible under this claim."""
        return np.asarray(self.refuted_value(p_a, p_b)) > self.value

    def epsilon_at(self, delta: float) -> float:
        """The smallest ε with :meth:`profile` (ε) <= ``delta``: the claim implies (ε, ``delta``)-DP (inf where no ε
        does). Bisection on the profile, which decreases in ε."""
        delta = _number("delta", delta, upper=1, closed_upper=True)
        if float(self.profile(0.0)) <= delta:
            return 0.0
        high = 1.0
        while float(self.profile(high)) > delta:
            high *= 2
            if high > 1e6:
                return math.inf
        from scipy import optimize  # imported where used: an audit's worker processes import this module

        return float(optimize.brentq(lambda e: float(self.profile(e)) - delta, 0.0, high, xtol=1e-12, rtol=1e-12))

    def to_approx(self, delta: float) -> "ApproxDp":
        """The (ε, ``delta``)-DP claim this claim implies (:meth:`epsilon_at`)."""
        epsilon = self.epsilon_at(delta)
        if not math.isfinite(epsilon):
            raise InvalidConfiguration(f"{self.describe()} implies no finite epsilon at delta={delta:g}; choose a "
                                       "larger delta", parameter="delta")
        return ApproxDp(epsilon, delta, source=f"{self.describe()} at delta = {delta:g}"
                        + (f" ({self.source})" if self.source else ""))

    def to_zcdp(self) -> "ZeroConcentratedDp":
        """The ρ-zCDP claim this claim implies, refused where it implies none."""
        raise InvalidConfiguration(f"{self.describe()} implies no zCDP guarantee; claim zCDP directly, or test it "
                                   "as it is")

    def planning_point(self) -> "ApproxDp":
        """The (ε, δ) point at which an audit chooses its events: the claim itself where it is one, else its
        (ε, δ) at :data:`PLANNING_DELTA`. Chooses events only: the verdict tests the claim's own notion."""
        return self.to_approx(PLANNING_DELTA)

    def claimed(self) -> str:
        """The claim as a result states it: ``claimed mu = 1 (1-GDP)``."""
        return f"claimed {self.parameter} = {self.value:.6g} ({self.describe()})"

    def as_dict(self) -> dict[str, object]:
        """JSON: ``notion``, the parameters, ``source``, ``describe`` and ``claimed`` (:meth:`claimed`)."""
        return {"notion": self.notion, **self.fields(), "source": self.source, "describe": self.describe(),
                "claimed": self.claimed()}

    def with_source(self, source: str) -> "Claim":
        """This claim with ``source`` where it has none of its own."""
        return self if self.source else replace(self, source=source)

    def __str__(self) -> str:
        return self.describe() + (f" ({self.source})" if self.source else "")


@dataclass(frozen=True)
class ApproxDp(Claim):
    """(ε, δ)-DP: P_a(E) <= e^ε P_b(E) + δ for every event E and both orders of every neighbour pair."""

    epsilon: float
    delta: float = 0.0
    source: str = field(default="", kw_only=True)
    event: Any = field(default=None, compare=False, repr=False, kw_only=True)

    notion: ClassVar[str] = "approximate-dp"
    parameter: ClassVar[str] = "epsilon"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _number("epsilon", self.epsilon))
        object.__setattr__(self, "delta", _number("delta", self.delta, upper=1))

    @property
    def value(self) -> float:
        return self.epsilon

    def profile(self, epsilon: np.ndarray | float) -> np.ndarray:
        return _kov_profile(np.asarray(epsilon, dtype=float), self.epsilon, self.delta)

    def epsilon_at(self, delta: float) -> float:
        return _kov_epsilon(_number("delta", delta, upper=1, closed_upper=True), self.epsilon, self.delta)

    def refuted_value(self, p_a: np.ndarray | float, p_b: np.ndarray | float) -> np.ndarray:
        return epsilon_refuted(p_a, p_b, self.delta)

    def planning_point(self) -> "ApproxDp":
        return self

    def to_zcdp(self) -> "ZeroConcentratedDp":
        if self.delta > 0:
            return super().to_zcdp()
        return ZeroConcentratedDp(self.epsilon ** 2 / 2, source=f"{self.describe()} (Bun & Steinke 2016, Prop. 1.4)")

    def describe(self) -> str:
        return f"({self.epsilon:.6g}, {self.delta:.6g})-DP"

    def claimed(self) -> str:
        return f"claimed epsilon = {self.epsilon:.6g}, delta = {self.delta:.3g}"

    def fields(self) -> dict[str, float | list[list[float]]]:
        return {"epsilon": self.epsilon, "delta": self.delta}


@dataclass(frozen=True)
class PureDp(ApproxDp):
    """ε-DP: (ε, 0)-DP."""

    notion: ClassVar[str] = "pure-dp"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.delta != 0:
            raise InvalidConfiguration(f"delta={self.delta!r}: a pure epsilon claim has delta 0; claim "
                                       "ApproxDp(epsilon, delta) instead", parameter="delta")

    def describe(self) -> str:
        return f"{self.epsilon:.6g}-DP"

    def fields(self) -> dict[str, float | list[list[float]]]:
        return {"epsilon": self.epsilon}


@dataclass(frozen=True)
class GaussianDp(Claim):
    """μ-GDP (Dong, Roth & Su 2022, Def. 2.6): no test tells the neighbours apart better than a test between
    N(0, 1) and N(μ, 1)."""

    mu: float
    source: str = field(default="", kw_only=True)
    event: Any = field(default=None, compare=False, repr=False, kw_only=True)

    notion: ClassVar[str] = "gaussian-dp"
    parameter: ClassVar[str] = "mu"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _number("mu", self.mu))

    @property
    def value(self) -> float:
        return self.mu

    def profile(self, epsilon: np.ndarray | float) -> np.ndarray:
        """δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong, Roth & Su 2022, Cor. 2.13)."""
        from scipy import special

        epsilon = np.asarray(epsilon, dtype=float)
        if self.mu == 0:
            return np.zeros_like(epsilon)
        # e^ε Φ(x) as exp(ε + log Φ(x)) so that neither factor overflows or underflows alone
        value = special.ndtr(-epsilon / self.mu + self.mu / 2) - np.exp(
            epsilon + special.log_ndtr(-epsilon / self.mu - self.mu / 2))
        return np.maximum(value, 0.0)

    def epsilon_at(self, delta: float) -> float:
        """As :meth:`Claim.epsilon_at`; inf at δ = 0 for μ > 0 (the likelihood ratio is unbounded, so the profile
        is above 0 at every ε, though it underflows in floating point)."""
        if _number("delta", delta, upper=1, closed_upper=True) == 0 and self.mu > 0:
            return math.inf
        return super().epsilon_at(delta)

    def refuted_value(self, p_a: np.ndarray | float, p_b: np.ndarray | float) -> np.ndarray:
        """Φ⁻¹(p_a) − Φ⁻¹(p_b): μ-GDP allows P_a(E) <= 1 − G_μ(P_b(E)) = Φ(Φ⁻¹(P_b(E)) + μ) (Def. 2.6 with the
        test that rejects on E), which rises with P_b and μ."""
        from scipy import special

        with np.errstate(divide="ignore", invalid="ignore"):
            value = special.ndtri(np.asarray(p_a, dtype=float)) - special.ndtri(np.asarray(p_b, dtype=float))
        return np.where(np.isnan(value), -math.inf, value)

    def to_zcdp(self) -> "ZeroConcentratedDp":
        return ZeroConcentratedDp(self.mu ** 2 / 2, source=f"{self.describe()} (the Gaussian mechanism's Rényi "
                                                          "divergence, Mironov 2017, Prop. 7)")

    def describe(self) -> str:
        return f"{self.mu:.6g}-GDP"

    def fields(self) -> dict[str, float | list[list[float]]]:
        return {"mu": self.mu}


def _bernoulli_renyi(p: np.ndarray, q: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """D_α(Bern(p) ‖ Bern(q)) for each order α > 1 (last axis), ``p`` and ``q`` broadcast against it."""
    from scipy import special

    p, q = p[..., None], q[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.stack([orders * np.log(p) + (1 - orders) * np.log(q),
                          orders * np.log1p(-p) + (1 - orders) * np.log1p(-q)])
        return special.logsumexp(terms, axis=0) / (orders - 1)


@dataclass(frozen=True)
class ZeroConcentratedDp(Claim):
    """ρ-zCDP (Bun & Steinke 2016, Def. 1.1): D_α(M(x) ‖ M(x')) <= ρα for every α > 1 and both orders."""

    rho: float
    source: str = field(default="", kw_only=True)
    event: Any = field(default=None, compare=False, repr=False, kw_only=True)

    notion: ClassVar[str] = "zcdp"
    parameter: ClassVar[str] = "rho"

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", _number("rho", self.rho))

    @property
    def value(self) -> float:
        return self.rho

    def profile(self, epsilon: np.ndarray | float) -> np.ndarray:
        """δ(ε) = inf_{α>1} e^{(α−1)(αρ−ε)} (1 − 1/α)^α / (α − 1) (Canonne, Kamath & Steinke 2020, Prop. 12, with
        the Rényi divergence ρα of every order), minimised over α for each ε."""
        epsilon = np.asarray(epsilon, dtype=float)
        flat = np.array([self._delta(float(e)) for e in epsilon.ravel()])
        return flat.reshape(epsilon.shape)

    def _delta(self, epsilon: float) -> float:
        if self.rho == 0:
            return 0.0

        def log_delta(alpha: float) -> float:
            return ((alpha - 1) * (alpha * self.rho - epsilon) + alpha * math.log1p(-1 / alpha)
                    - math.log(alpha - 1))

        # the best order on a grid, then refined between its neighbours: a larger δ than the infimum only makes
        # the claim's profile looser, so a refutation against it stays valid
        grid = 1 + np.geomspace(1e-6, max(10.0, 4 * (epsilon + self.rho) / self.rho), 400)
        values = np.array([log_delta(float(alpha)) for alpha in grid])
        best = int(np.argmin(values))
        low, high = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
        from scipy import optimize

        found = optimize.minimize_scalar(log_delta, bounds=(low, high), method="bounded", options={"xatol": 1e-12})
        return float(min(1.0, math.exp(min(found.fun, values[best]))))

    def epsilon_at(self, delta: float) -> float:
        """As :meth:`Claim.epsilon_at`; inf at δ = 0 for ρ > 0 (zCDP implies no pure ε: the Gaussian mechanism is
        ρ-zCDP)."""
        if _number("delta", delta, upper=1, closed_upper=True) == 0 and self.rho > 0:
            return math.inf
        return super().epsilon_at(delta)

    def refuted_value(self, p_a: np.ndarray | float, p_b: np.ndarray | float) -> np.ndarray:
        """max over α of D_α(Bern(p_a) ‖ Bern(p_b))/α where p_a > p_b: post-processing to E's indicator keeps
        D_α <= ρα (Bun & Steinke 2016, Lemma 2.2), and the divergence grows as p_a rises and p_b falls, so the
        intervals' ends bound it from below. The largest over :data:`RENYI_ORDERS` (0 where p_a <= p_b)."""
        p_a, p_b = np.broadcast_arrays(np.asarray(p_a, dtype=float), np.asarray(p_b, dtype=float))
        value = (_bernoulli_renyi(p_a, p_b, RENYI_ORDERS) / RENYI_ORDERS).max(axis=-1)
        return np.where(p_a > p_b, np.nan_to_num(value, nan=0.0, posinf=math.inf), 0.0)

    def to_zcdp(self) -> "ZeroConcentratedDp":
        return self

    def describe(self) -> str:
        return f"{self.rho:.6g}-zCDP"

    def fields(self) -> dict[str, float | list[list[float]]]:
        return {"rho": self.rho}


@dataclass(frozen=True)
class DpCurve(Claim):
    """(ε_i, δ_i)-DP at each of its ``points``: the claim of an (ε, δ(ε)) curve (an accountant's, say). Its profile
    is the least of its points' profiles; its parameter is a shift of the curve to the right (value 0), so that
    :meth:`refuted_value` is how far right of the claimed ε_i at δ_i one event pushes ε at the worst point."""

    points: tuple[tuple[float, float], ...]
    source: str = field(default="", kw_only=True)
    event: Any = field(default=None, compare=False, repr=False, kw_only=True)

    notion: ClassVar[str] = "dp-curve"
    parameter: ClassVar[str] = "epsilon shift"

    def __post_init__(self) -> None:
        points = tuple(self.points) if isinstance(self.points, Iterable) else ()
        if not points:
            raise InvalidConfiguration(f"points={self.points!r}: give the curve as (epsilon, delta) pairs, e.g. "
                                       "((1.0, 1e-5), (2.0, 1e-8))", parameter="points")
        checked = []
        for point in points:
            if not (isinstance(point, (tuple, list)) and len(point) == 2):
                raise InvalidConfiguration(f"points: {point!r} is not an (epsilon, delta) pair", parameter="points")
            checked.append((_number("epsilon", point[0]), _number("delta", point[1], upper=1)))
        object.__setattr__(self, "points", tuple(sorted(checked)))

    @classmethod
    def from_profile(cls, epsilons: Iterable[float], deltas: Iterable[float], source: str = "") -> "DpCurve":
        """The curve through (ε_i, δ_i) given as two sequences (an accountant's ε grid and its δ(ε))."""
        epsilons, deltas = list(epsilons), list(deltas)
        if len(epsilons) != len(deltas):
            raise InvalidConfiguration(f"{len(epsilons)} epsilons for {len(deltas)} deltas; give one delta per "
                                       "epsilon", parameter="points")
        return cls(tuple(zip(epsilons, deltas)), source=source)

    @property
    def value(self) -> float:
        return 0.0

    def profile(self, epsilon: np.ndarray | float) -> np.ndarray:
        epsilon = np.asarray(epsilon, dtype=float)
        return np.min([_kov_profile(epsilon, e, d) for e, d in self.points], axis=0)

    def epsilon_at(self, delta: float) -> float:
        delta = _number("delta", delta, upper=1, closed_upper=True)
        return min(_kov_epsilon(delta, e, d) for e, d in self.points)

    def refuted_value(self, p_a: np.ndarray | float, p_b: np.ndarray | float) -> np.ndarray:
        return np.max([epsilon_refuted(p_a, p_b, d) - e for e, d in self.points], axis=0)

    def planning_point(self) -> ApproxDp:
        """The curve's own point whose δ is nearest :data:`PLANNING_DELTA` (in log): chooses events only."""
        epsilon, delta = min(self.points, key=lambda p: abs(math.log(max(p[1], 1e-300) / PLANNING_DELTA)))
        return ApproxDp(epsilon, delta)

    def claimed(self) -> str:
        return f"claimed {self.describe()}"

    def describe(self) -> str:
        shown = ", ".join(f"({e:.4g}, {d:.3g})" for e, d in self.points[:4])
        return f"(epsilon, delta)-DP at {shown}{', ...' if len(self.points) > 4 else ''}"

    def fields(self) -> dict[str, float | list[list[float]]]:
        return {"points": [[e, d] for e, d in self.points]}


#: what :func:`from_event` builds for a single dp_accounting mechanism event, by notion
CLAIM_TYPES = (PureDp, ApproxDp, ZeroConcentratedDp, GaussianDp, DpCurve)


def from_event(event: Any, *, delta: float | None = None, source: str = "") -> Claim:
    """The claim a dp_accounting event gives, with sensitivity 1 (the event's noise multiplier is the noise's
    scale over the sensitivity):

    * ``LaplaceDpEvent(b)``: (1/b)-DP; ``GaussianDpEvent(σ)``: (1/σ)-GDP (Dong, Roth & Su 2022, Thm 2.7);
      ``ZCDpEvent(ρ)``: ρ-zCDP; ``NoOpDpEvent``: 0-DP;
    * ``SelfComposedDpEvent`` and ``ComposedDpEvent`` of those: composed in their own notion where they share one
      (ε adds, μ adds in squares, ρ adds), else as zCDP (ε-DP is ε²/2-zCDP, μ-GDP μ²/2-zCDP);
    * any other event, with ``delta``: dp_accounting's PLD accountant's (ε(δ), δ).

    With ``delta``, an event of the first two kinds gives the (ε(δ), δ) claim its own notion implies at ``delta``
    (:meth:`Claim.to_approx`, the tight conversion), so that ``delta=`` always gives an (ε, δ) claim. The claim keeps
    ``event`` for the record, and ``source`` (default: the event's repr)."""
    label = source or f"dp-accounting {event!r}"
    try:
        claim = _compose(event)
        if delta is not None:
            claim = claim.to_approx(_number("delta", delta, upper=1))
    except _NotComposable:
        if delta is None:
            raise InvalidConfiguration(f"{type(event).__name__} has no claim of its own notion here; pass delta= to "
                                       "have dp-accounting's PLD accountant give (epsilon, delta)",
                                       parameter="delta") from None
        from dp_accounting.pld import PLDAccountant

        accountant = PLDAccountant()
        if not accountant.supports(event):
            raise InvalidConfiguration(f"dp-accounting's PLD accountant does not support {event!r}; state the claim "
                                       "as a value (ApproxDp, ZeroConcentratedDp, GaussianDp, DpCurve)",
                                       parameter="event") from None
        accountant.compose(event)
        claim = ApproxDp(accountant.get_epsilon(_number("delta", delta, upper=1)), delta)
    return replace(claim, source=label, event=event)


class _NotComposable(Exception):
    pass


def _compose(event: Any) -> Claim:
    """:func:`from_event`'s claim of an event it can compose exactly (raises :class:`_NotComposable` otherwise)."""
    import dp_accounting as dpa

    if isinstance(event, dpa.NoOpDpEvent):
        return PureDp(0.0)
    if isinstance(event, (dpa.LaplaceDpEvent, dpa.GaussianDpEvent)):
        if not event.noise_multiplier > 0:
            raise InvalidConfiguration(f"event={event!r}: a noise multiplier of 0 gives no privacy; there is no claim "
                                       "to audit", parameter="event")
        kind = PureDp if isinstance(event, dpa.LaplaceDpEvent) else GaussianDp
        return kind(1 / event.noise_multiplier)
    if isinstance(event, dpa.ZCDpEvent):
        if event.xi != 0:
            raise _NotComposable
        return ZeroConcentratedDp(event.rho)
    if isinstance(event, dpa.SelfComposedDpEvent):
        return _combine([_compose(event.event)] * event.count)
    if isinstance(event, dpa.ComposedDpEvent):
        return _combine([_compose(inner) for inner in event.events])
    raise _NotComposable


def _combine(claims: list[Claim]) -> Claim:
    """Compose ``claims`` in their shared notion (ε adds: Dwork & Roth Thm 3.16; μ in squares: Dong, Roth & Su
    Cor. 3.3; ρ adds: Bun & Steinke Lemma 2.3), else as zCDP."""
    if not claims:
        return PureDp(0.0)
    if all(isinstance(c, PureDp) for c in claims):
        return PureDp(sum(c.epsilon for c in claims))
    if all(isinstance(c, GaussianDp) for c in claims):
        return GaussianDp(math.sqrt(sum(c.mu ** 2 for c in claims)))
    return ZeroConcentratedDp(sum(c.to_zcdp().rho for c in claims))
