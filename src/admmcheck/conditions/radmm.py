"""R-ADMM Theorem III.1 (recycled-admm.txt): conditions (24)-(25), their L = μ = 2 form
(26)-(27), and the matrix claims the proof in Appendix I rests on.

With D̃ = diag(2ηV_i + γ), σ_min(D̃) = min_i(2ηV_i + γ) and D_M = diag(M_i²):

    (24)  I + η(D+A)D̃⁻¹  ≻  Lμ/(2σ_min(D̃)) · (1/η) · D_M (D-A)⁺
    (25)  η(D+A)  ≻  η(D+A)D̃⁻¹η(D-A) + (2/L)·η(D+A)D̃⁻¹η(D+A) + Lμ/(2σ_min(D̃)(μ-1)) · D_M

``X ≻ Y`` is decided on the quadratic form of X - Y (see :mod:`.certificates`): the proof
uses both only inside Frobenius products (App. I, (35)-(43)). Every builder accepts a
rational γ or the symbol :data:`GAMMA`, so the same code yields the matrices at a point
and as rational functions of γ for :mod:`.gamma_search`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
import sympy

from admmcheck.conditions.certificates import rationals_per_node, to_fraction
from admmcheck.conditions.certificates import sympy_rational as _rational
from admmcheck.conditions.checks import ConditionCheck, matrix_check
from admmcheck.conditions.graph import ExactGraph
from admmcheck.foundations.errors import InvalidConfiguration

GAMMA = sympy.Symbol("gamma", nonnegative=True)


@dataclass(frozen=True, eq=False)
class RadmmSetting:
    """Graph, penalty η > 0 and Lipschitz constants M_i > 0 (Assumption 3, (14))."""

    graph: ExactGraph
    eta: Fraction
    lipschitz: tuple[Fraction, ...]

    def __post_init__(self) -> None:
        eta = to_fraction(self.eta)
        if eta <= 0:
            raise InvalidConfiguration(f"eta={eta} must be > 0 (R-ADMM penalty)")
        lipschitz = rationals_per_node("lipschitz", self.lipschitz, self.graph.nodes)
        if any(m <= 0 for m in lipschitz):
            raise InvalidConfiguration(f"Lipschitz constants M_i must be > 0, got {[str(m) for m in lipschitz]}")
        object.__setattr__(self, "eta", eta)
        object.__setattr__(self, "lipschitz", lipschitz)

    @property
    def eta_(self) -> sympy.Rational:
        return _rational(self.eta)

    @property
    def d_m(self) -> sympy.Matrix:
        """D_M = diag(M_1², ..., M_N²)."""
        return sympy.diag(*[_rational(m) ** 2 for m in self.lipschitz])

    def d_tilde(self, gamma: sympy.Expr) -> sympy.Matrix:
        """D̃ = diag(2ηV_i + γ) (§III, before (16))."""
        return sympy.diag(*[2 * self.eta_ * v + gamma for v in self.graph.degrees])

    def sigma_min(self, gamma: sympy.Expr) -> sympy.Expr:
        """σ_min(D̃) = min_i(2ηV_i + γ), as Theorem III.1 defines it."""
        return 2 * self.eta_ * min(self.graph.degrees) + gamma


def _gamma(gamma: object) -> sympy.Expr:
    if isinstance(gamma, sympy.Symbol):
        return gamma
    value = to_fraction(gamma)
    if value < 0:
        raise InvalidConfiguration(f"gamma={value} must be >= 0")
    return _rational(value)


def _lagrange_constants(big_l: object, mu: object) -> tuple[sympy.Rational, sympy.Rational]:
    big_l, mu = to_fraction(big_l), to_fraction(mu)
    if big_l <= 0 or mu <= 1:
        raise InvalidConfiguration(f"Theorem III.1 needs L > 0 and mu > 1, got L={big_l}, mu={mu}")
    return _rational(big_l), _rational(mu)


def condition_24(setting: RadmmSetting, gamma: object, big_l: object = 2, mu: object = 2) -> sympy.Matrix:
    """LHS - RHS of (24); at L = μ = 2 this is (26)."""
    g = _gamma(gamma)
    big_l, mu = _lagrange_constants(big_l, mu)
    eta, graph = setting.eta_, setting.graph
    n = graph.nodes
    lhs = sympy.eye(n) + eta * graph.signless_laplacian * setting.d_tilde(g).inv()
    rhs = big_l * mu / (2 * setting.sigma_min(g)) / eta * setting.d_m * graph.laplacian_pinv
    return lhs - rhs


def condition_25(setting: RadmmSetting, gamma: object, big_l: object = 2, mu: object = 2) -> sympy.Matrix:
    """LHS - RHS of (25); at L = μ = 2 this is (27)."""
    g = _gamma(gamma)
    big_l, mu = _lagrange_constants(big_l, mu)
    eta, graph = setting.eta_, setting.graph
    coupling = eta * graph.signless_laplacian * setting.d_tilde(g).inv()  # η(D+A)D̃⁻¹
    rhs = (
        coupling * eta * graph.laplacian
        + 2 / big_l * coupling * eta * graph.signless_laplacian
        + big_l * mu / (2 * setting.sigma_min(g) * (mu - 1)) * setting.d_m
    )
    return eta * graph.signless_laplacian - rhs


def condition_27(setting: RadmmSetting, gamma: object) -> sympy.Matrix:
    """LHS - RHS of (27) as printed: η(D+A) ≻ 2η(D+A)D̃⁻¹ηD + (2/σ_min(D̃)) D_M."""
    g = _gamma(gamma)
    eta, graph = setting.eta_, setting.graph
    coupling = eta * graph.signless_laplacian * setting.d_tilde(g).inv()
    return eta * graph.signless_laplacian - 2 * coupling * eta * graph.degree - 2 / setting.sigma_min(g) * setting.d_m


def condition_names(big_l: object, mu: object) -> tuple[str, str]:
    """'(26)', '(27)' at L = μ = 2, else '(24)', '(25)'."""
    if to_fraction(big_l) == 2 and to_fraction(mu) == 2:
        return "(26)", "(27)"
    return "(24)", "(25)"


def radmm_conditions(setting: RadmmSetting, gamma: object, big_l: object = 2, mu: object = 2) -> list[ConditionCheck]:
    """Theorem III.1's conditions and the proof's matrix claims at a rational γ.

    Returns, in order: (24)/(26) and (25)/(27) (the names follow L = μ = 2 or not), then the
    claims of Appendix I: η(D+A)D̃⁻¹ ≻ 0 (used in (35)), I + η(D+A)D̃⁻¹ ≻ 0 (used after
    (45)), and R_2 ≻ 0 of (42), on all of ℝᴺ as printed and on range(D - A), the only
    directions 2Λ(t+1) - 2Λ(t) = η(D - A)f̂(t+1) of (21) take.
    """
    g = _gamma(gamma)
    big_l_, mu_ = _lagrange_constants(big_l, mu)
    first, second = condition_names(big_l, mu)
    eta, graph = setting.eta_, setting.graph
    coupling = eta * graph.signless_laplacian * setting.d_tilde(g).inv()
    pinv = graph.laplacian_pinv
    sigma = setting.sigma_min(g)
    r2 = (pinv / eta) * (sympy.eye(graph.nodes) + coupling) - big_l_ * mu_ / (2 * sigma) * (pinv / eta) ** 2 * setting.d_m
    basis = sympy.Matrix.hstack(*graph.laplacian.columnspace())  # spans range(D - A) = 1^⊥
    common = {"gamma": str(g), "L": str(big_l_), "mu": str(mu_)}
    return [
        matrix_check(first, "I + η(D+A)D̃⁻¹ ≻ Lμ/(2σ_min(D̃))·(1/η)·D_M(D-A)⁺", condition_24(setting, g, big_l, mu), **common),
        matrix_check(
            second,
            "η(D+A) ≻ η(D+A)D̃⁻¹η(D-A) + (2/L)η(D+A)D̃⁻¹η(D+A) + Lμ/(2σ_min(D̃)(μ-1))·D_M",
            condition_25(setting, g, big_l, mu),
            **common,
        ),
        matrix_check("App. I (35): η(D+A)D̃⁻¹ ≻ 0", "the proof calls η(D+A)D̃⁻¹ positive definite", coupling, **common),
        matrix_check("App. I (45): I + η(D+A)D̃⁻¹ ≻ 0", "needed to cancel it in (45)", sympy.eye(graph.nodes) + coupling, **common),
        matrix_check("App. I (42): R_2 ≻ 0 on R^N", "R_2 = G_2 - Lμ/(2σ_min(D̃))((1/η)(D-A)⁺)²D_M, as printed", r2, **common),
        matrix_check(
            "App. I (42): R_2 ≻ 0 on range(D-A)",
            "R_2 restricted to the directions of 2Λ(t+1) - 2Λ(t); Bᵀ R_2 B with B a basis of 1^⊥",
            basis.T * r2 * basis,
            **common,
        ),
    ]

