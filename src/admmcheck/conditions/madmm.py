"""M-ADMM Theorems 3.1 and 3.2 (m-admm-privacy-accuracy-icml2018.txt §3.2-3.3; proofs in
the supplement, Appendices B and C) for a concrete graph and penalty schedule
η_i(t) = η_i(1)·q_i^(t-1), with W(t) = diag(η_i(t)).

Theorem 3.1 assumes η_i(t+1) >= η_i(t) >= θ > 0; its proof (App. B) then uses

* (38): ⟨f, (W(t+1) - θI)(D - A) f⟩ >= 0, justified by "the eigenvalues of
  (W(t+1) - θI)(D - A) are non-negative", which does not imply the quadratic form is;
* (41): (W(t+1) - W(t))(D + A) ⪰ 0, "since D + A ⪰ 0", and the squared norms
  ||·||²_J(t) with J(t) ∋ W(t)(D + A).

Theorem 3.2 adds (21), (22) for a given δ and the lower bound (23). Its singular values are
irrational; they enter through certified intervals, and (21)-(22) are monotone in them, so
a verdict is certified by checking the worst (for "holds") or best (for "fails") ends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import sympy

from admmcheck.conditions.certificates import decide_positive, rational_matrix, rationals_per_node, to_fraction
from admmcheck.conditions.certificates import sympy_rational as _r
from admmcheck.conditions.checks import ConditionCheck, matrix_check
from admmcheck.conditions.graph import ExactGraph
from admmcheck.conditions.intervals import (
    Interval,
    gram,
    largest_eigenvalue,
    largest_singular_value,
    smallest_nonzero_eigenvalue,
    smallest_nonzero_singular_value,
)
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.progress import UNLIMITED, Budget


@dataclass(frozen=True, eq=False)
class MadmmSetting:
    """Graph, dual step θ, schedule η_i(t) = η_i(1) q_i^(t-1), and m_i, M_i (Assumption 3)."""

    graph: ExactGraph
    theta: Fraction
    eta: tuple[Fraction, ...]
    growth: tuple[Fraction, ...]
    strong_convexity: tuple[Fraction, ...]
    lipschitz: tuple[Fraction, ...]

    def __post_init__(self) -> None:
        n = self.graph.nodes
        object.__setattr__(self, "theta", to_fraction(self.theta))
        for name in ("eta", "growth", "strong_convexity", "lipschitz"):
            object.__setattr__(self, name, rationals_per_node(name, getattr(self, name), n))
        if self.theta <= 0:
            raise InvalidConfiguration(f"theta={self.theta} must be > 0: it is the dual step size of (11)",
                                       parameter="theta")
        if any(q <= 0 for q in self.growth) or any(e <= 0 for e in self.eta):
            raise InvalidConfiguration("eta_i(1) and the growth factors q_i must be > 0")
        if any(m <= 0 for m in self.strong_convexity) or any(m <= 0 for m in self.lipschitz):
            raise InvalidConfiguration("m_i and M_i must be > 0 (Assumption 3)")
        above = [k + 1 for k, (m, big) in enumerate(zip(self.strong_convexity, self.lipschitz)) if m > big]
        if above:
            k = above[0] - 1
            raise InvalidConfiguration(
                f"strong_convexity m_i = {self.strong_convexity[k]} exceeds lipschitz M_i = {self.lipschitz[k]} "
                f"at node {above[0]}; Assumption 3 needs m_i <= M_i (a function's strong convexity "
                "cannot exceed its gradient's Lipschitz constant)", parameter="strong_convexity"
            )

    def penalties(self, t: int) -> tuple[Fraction, ...]:
        """η_i(t) = η_i(1) q_i^(t-1), t >= 1."""
        return tuple(e * q ** (t - 1) for e, q in zip(self.eta, self.growth))

    def w(self, t: int) -> sympy.Matrix:
        """W(t) = diag(η_1(t), ..., η_N(t))."""
        return sympy.diag(*[_r(v) for v in self.penalties(t)])


def schedule_check(setting: MadmmSetting) -> ConditionCheck:
    """η_i(t+1) >= η_i(t) >= θ > 0 for all t: for the geometric schedule this is exactly
    θ > 0, q_i >= 1 and η_i(1) >= θ (η_i(t) < ∞ always holds)."""
    failures = []
    if setting.theta <= 0:
        failures.append(f"theta={setting.theta} is not > 0")
    failures += [f"q_{i + 1}={q} < 1 (eta decreases)" for i, q in enumerate(setting.growth) if q < 1]
    failures += [f"eta_{i + 1}(1)={e} < theta" for i, e in enumerate(setting.eta) if e < setting.theta]
    return ConditionCheck(
        "Thm 3.1: eta_i(t+1) >= eta_i(t) >= theta > 0",
        "for all t and i, with eta_i(t) = eta_i(1) q_i^(t-1)",
        not failures,
        details={"failures": failures, "for_all_t": True},
    )


def _first_failure(name: str, statement: str, build, times: range, budget: Budget) -> ConditionCheck:
    """Check ``build(t) ⪰ 0`` for every t in ``times``; report the first failure (or the last t).

    When ``budget`` runs out first, the verdict is None (undecided) and ``checked_t`` says
    how far every t held.
    """
    check = None
    for t in budget.steps(times, name, total=len(times)):
        if budget.expired():
            return ConditionCheck(name, statement, None, details={
                "checked_t": [times.start, t - 1], "stopped": f"time budget ran out before t={t}"})
        check = matrix_check(name, statement, build(t), strict=False, t=t, checked_t=[times.start, times.stop - 1])
        if not check.holds:
            return check
    return check


def theorem_31_checks(setting: MadmmSetting, horizon: int, budget: Budget = UNLIMITED) -> list[ConditionCheck]:
    """Theorem 3.1's assumption and its proof's matrix claims for t = 1..horizon."""
    if horizon < 2:
        raise InvalidConfiguration(f"horizon={horizon} must be >= 2 (the claims compare t and t+1)",
                                   parameter="horizon")
    g, theta = setting.graph, _r(setting.theta)
    eye = sympy.eye(g.nodes)
    return [
        schedule_check(setting),
        _first_failure(
            "App. B (38): (W(t+1) - θI)(D-A) ⪰ 0",
            "quadratic form of (W(t+1) - θI)(D - A), used in (38)",
            lambda t: (setting.w(t + 1) - theta * eye) * g.laplacian,
            range(0 + 1, horizon),
            budget,
        ),
        _first_failure(
            "App. B (41): (W(t+1) - W(t))(D+A) ⪰ 0",
            "quadratic form of (W(t+1) - W(t))(D + A), used in (41)",
            lambda t: (setting.w(t + 1) - setting.w(t)) * g.signless_laplacian,
            range(1, horizon),
            budget,
        ),
        _first_failure(
            "App. B: W(t)(D+A) ⪰ 0",
            "||·||²_J(t) with J(t) = diag(I/θ, W(t)(D+A)) is a squared (semi)norm",
            lambda t: setting.w(t) * g.signless_laplacian,
            range(1, horizon + 1),
            budget,
        ),
    ]


@dataclass(frozen=True)
class SpectralQuantities:
    """Certified intervals of the singular values Theorem 3.2 uses at one t."""

    sigma_tilde_max: Interval  # σ_max(W(t)(D+A))
    sigma_bar_max_sq: Interval  # σ_max((W(t) - θI)(D-A))²
    sigma_bar_min: Interval  # smallest non-zero singular value of (W(t) - θI)(D-A)
    sigma_min_laplacian: Interval  # smallest non-zero singular value of D - A

    def as_dict(self) -> dict[str, object]:
        return {k: v.as_dict() for k, v in self.__dict__.items()}


def spectral_quantities(setting: MadmmSetting, t: int) -> SpectralQuantities:
    g = setting.graph
    bar = (setting.w(t) - _r(setting.theta) * sympy.eye(g.nodes)) * g.laplacian
    zero = Interval(Fraction(0), Fraction(0))  # W(t) = θI: no non-zero singular value, use 0
    return SpectralQuantities(
        largest_singular_value(setting.w(t) * g.signless_laplacian),
        zero if bar.is_zero_matrix else largest_eigenvalue(gram(bar)),
        zero if bar.is_zero_matrix else smallest_nonzero_singular_value(bar),
        smallest_nonzero_eigenvalue(g.laplacian),  # D - A is symmetric PSD: σ = λ
    )


def _bracket_22(setting: MadmmSetting, t: int, mu: Fraction, bar_sq: Fraction, lap: Fraction) -> sympy.Matrix:
    """The matrix δ multiplies in (22): (μσ̄_max²I + μ²D_M)/(θσ_min(D-A)(μ-1)) + W(t)(D+A)."""
    g, theta, mu_ = setting.graph, _r(setting.theta), _r(mu)
    d_m = sympy.diag(*[_r(m) ** 2 for m in setting.lipschitz])
    coefficient = (mu_ * _r(bar_sq) * sympy.eye(g.nodes) + mu_**2 * d_m) / (theta * _r(lap) * (mu_ - 1))
    return coefficient + setting.w(t) * g.signless_laplacian


def _rhs_22(setting: MadmmSetting, t: int) -> sympy.Matrix:
    """2(W(t) - θI)(D-A) + 2D_m, the right-hand side of (22)."""
    g = setting.graph
    d_small = sympy.diag(*[_r(m) for m in setting.strong_convexity])
    return 2 * (setting.w(t) - _r(setting.theta) * sympy.eye(g.nodes)) * g.laplacian + 2 * d_small


def delta_lower_bound(setting: MadmmSetting, q: SpectralQuantities, mu: Fraction) -> Interval:
    """Certified interval of (23): min{θσ_min(D-A)/(μ²σ̃_max), (2m_o + 2σ̄_min)/(...)}."""
    theta = setting.theta
    m_o, big_m = min(setting.strong_convexity), max(setting.lipschitz)

    def value(lap: Fraction, tilde: Fraction, bar_min: Fraction, bar_sq: Fraction) -> Fraction:
        first = theta * lap / (mu**2 * tilde)
        second = (2 * m_o + 2 * bar_min) / ((mu**2 * big_m**2 + mu * bar_sq) / (theta * lap * (mu - 1)) + tilde)
        return min(first, second)

    lo = value(q.sigma_min_laplacian.lo, q.sigma_tilde_max.hi, q.sigma_bar_min.lo, q.sigma_bar_max_sq.hi)
    hi = value(q.sigma_min_laplacian.hi, q.sigma_tilde_max.lo, q.sigma_bar_min.hi, q.sigma_bar_max_sq.lo)
    grid = 10**15  # round outward to short rationals; the enclosure stays certified
    return Interval(Fraction(math.floor(lo * grid), grid), Fraction(math.ceil(hi * grid), grid))


def _check_22(name: str, statement: str, setting: MadmmSetting, t: int, delta: Interval, mu: Fraction,
              q: SpectralQuantities, details: dict[str, object]) -> ConditionCheck:
    """(22), RHS - δ·bracket ⪰ 0, for every δ in ``delta`` and every value in the intervals.

    When the bracket is ⪰ 0 at its smallest (σ̄² low, σ_min high), RHS - δ·bracket only
    shrinks as δ, σ̄² grow and σ_min falls: it holds if it holds at the worst ends and fails
    if it fails at the best ends. Otherwise, or in between, the verdict is None, with no
    certificate attached.
    """
    rhs = _rhs_22(setting, t)
    smallest = _bracket_22(setting, t, mu, q.sigma_bar_max_sq.lo, q.sigma_min_laplacian.hi)
    if decide_positive(rational_matrix(smallest), strict=False).holds:
        worst = rhs - _r(delta.hi) * _bracket_22(setting, t, mu, q.sigma_bar_max_sq.hi, q.sigma_min_laplacian.lo)
        at_worst = matrix_check(name, statement, worst, strict=False, **details)
        if at_worst.holds:
            return at_worst
        at_best = matrix_check(name, statement, rhs - _r(delta.lo) * smallest, strict=False, **details)
        if not at_best.holds:
            return at_best
    return ConditionCheck(name, statement, None, details={**details, "undecided": "too close to call with certified intervals"})


def theorem_32_checks(setting: MadmmSetting, t: int, delta: object, mu: object = 2) -> list[ConditionCheck]:
    """(21), (22) for the given δ at iteration t, the value of (23), and whether δ = (23)
    satisfies (21)-(22) as the theorem claims."""
    if isinstance(t, bool) or not isinstance(t, int) or t < 1:
        raise InvalidConfiguration(f"t={t!r}: Theorem 3.2 is evaluated at an iteration t >= 1", parameter="t")
    delta, mu = to_fraction(delta), to_fraction(mu)
    if mu <= 1 or delta <= 0:
        raise InvalidConfiguration(f"Theorem 3.2 needs mu > 1 and delta > 0, got mu={mu}, delta={delta}")
    q = spectral_quantities(setting, t)
    common = {"t": t, "delta": str(delta), "mu": str(mu), "spectral": q.as_dict()}

    def check_21(d_lo: Fraction, d_hi: Fraction) -> bool | None:
        worst = d_hi * mu**2 * q.sigma_tilde_max.hi / (setting.theta * q.sigma_min_laplacian.lo)
        best = d_lo * mu**2 * q.sigma_tilde_max.lo / (setting.theta * q.sigma_min_laplacian.hi)
        return True if worst <= 1 else False if best > 1 else None

    out = [ConditionCheck("(21)", "δμ²σ̃_max(t)/(θσ_min(D-A)) <= 1", check_21(delta, delta), details=common)]
    out.append(_check_22("(22)", "δ(...) ⪯ 2(W(t) - θI)(D-A) + 2D_m (quadratic form)", setting, t,
                         Interval(delta, delta), mu, q, common))
    bound = delta_lower_bound(setting, q, mu)
    bound_details = {**common, "delta_23": bound.as_dict()}
    out.append(ConditionCheck("(23)", "lower bound on δ(t), certified interval", True, details=bound_details))
    # (21) holds at δ = (23) by construction: (23) <= θσ_min(D-A)/(μ²σ̃_max(t)), (21) solved for δ
    claim = _check_22("(23) satisfies (21)-(22)", "δ(t) = (23) is admissible in (21) and (22)", setting, t,
                      bound, mu, q, {**bound_details, "satisfies_21": True})
    out.append(claim)
    return out
