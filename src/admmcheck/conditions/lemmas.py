"""Certified checks of the lemmas the papers' proofs rest on.

* the scalar inequality ``-ln(1-x) < 1.4x`` on (0, 1/2] (R-ADMM App. III between (56) and
  (57); M-ADMM supplement App. D between (65) and (66));
* the graph facts D - A ⪰ 0, D + A ⪰ 0, Null(D - A) = span(1), and whether D + A is
  singular (it is exactly on bipartite graphs, where R-ADMM App. I (35)'s claim
  "η(D+A)D̃⁻¹ is positive definite" fails);
* the eigenvalue lemma of the privacy proofs (R-ADMM App. III after (55); M-ADMM supplement
  App. D (64)): rank G ≤ 2, λ(H) ≥ ρ/N + 2ηV_i, |λ(G)| ≤ Cc₁/B_i, |λ(H⁻¹G)| ≤ κ and κ ≤ 1/2
  under 2c₁ < (B_i/C)(ρ/N + 2ηV_i), decided for a concrete node, point and neighbour.

Every verdict is exact (``Fraction`` / sympy rationals) or carries a re-checkable
certificate; no float with a tolerance decides anything.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import numpy as np
import sympy
from sympy.polys.matrices import DomainMatrix

from admmcheck.conditions.certificates import RationalMatrix, identity_matrix, to_fraction
from admmcheck.conditions.checks import ConditionCheck, matrix_check
from admmcheck.conditions.constants import exact_weighted_gram
from admmcheck.conditions.graph import exact_graph
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.problems.networks import Network
from admmcheck.problems import ConsensusProblem

# Terms of ln 2 = Σ_{k≥1} 1/(k 2^k) summed; the tail after n terms is at most 1/((n+1) 2^n).
LN2_TERMS = 30


# --------------------------------------------------------------------------- log inequality
def ln2_bounds(terms: int = LN2_TERMS) -> tuple[Fraction, Fraction]:
    """Rational ``(lo, hi)`` with lo ≤ ln 2 ≤ hi from ln 2 = Σ_{k≥1} 1/(k 2^k).

    lo is the partial sum S_n; the tail Σ_{k>n} 1/(k 2^k) ≤ (1/(n+1)) Σ_{k>n} 2^{-k}
    = 1/((n+1) 2^n) gives hi.
    """
    if isinstance(terms, bool) or not isinstance(terms, int) or terms < 1:
        raise InvalidConfiguration(f"terms={terms!r} must be a positive integer")
    partial = sum((Fraction(1, k * 2**k) for k in range(1, terms + 1)), Fraction(0))
    return partial, partial + Fraction(1, (terms + 1) * 2**terms)


def log_inequality_check(terms: int = LN2_TERMS) -> ConditionCheck:
    """Proof that -ln(1-x) < 1.4x for every x in (0, 1/2] (R-ADMM (56)-(57), M-ADMM (65)-(66)).

    With g(x) = 1.4x + ln(1-x): g(0) = 0, g''(x) = -1/(1-x)² < 0 (sympy), so g is concave and
    g(x) ≥ (1-2x)g(0) + 2x·g(1/2) = 2x·g(1/2) on [0, 1/2]; g(1/2) = 7/10 - ln 2 > 0 by the
    rational bounds of :func:`ln2_bounds`. The papers state it on [0, 0.5] with a strict
    inequality, which fails at x = 0 (equality); their proofs only use x > 0.
    """
    x = sympy.Symbol("x", real=True)
    g = sympy.Rational(7, 5) * x + sympy.log(1 - x)
    g_second = sympy.diff(g, x, 2)
    # g'' = -1/(1-x)², and with t = 1 - x ≥ 1/2 > 0 on [0, 1/2] sympy decides its sign itself.
    t = sympy.Symbol("t", positive=True)
    closed_form = sympy.simplify(g_second + 1 / (1 - x) ** 2) == 0
    concave = closed_form and bool(g_second.subs(x, 1 - t).is_negative)
    g_zero = g.subs(x, 0)
    g_half = sympy.expand_log(g.subs(x, sympy.Rational(1, 2)), force=True)
    half_form = sympy.simplify(g_half - (sympy.Rational(7, 10) - sympy.log(2))) == 0
    lo, hi = ln2_bounds(terms)
    g_half_lower = Fraction(7, 10) - hi  # g(1/2) = 7/10 - ln 2 ≥ 7/10 - hi
    holds = concave and g_zero == 0 and half_form and g_half_lower > 0
    return ConditionCheck(
        "log inequality: -ln(1-x) < 1.4x on (0, 1/2]",
        "g(x) = 1.4x + ln(1-x) > 0 for x in (0, 1/2]; used for (57) of R-ADMM and (66) of M-ADMM",
        holds,
        details={
            "interval": "(0, 1/2]",
            "paper_statement": "for any x in [0, 0.5], -ln(1-x) < 1.4x",
            "at_zero": "equality: g(0) = 0, so the strict claim fails at x = 0; the proofs only use x > 0",
            "g": str(g),
            "g_second_derivative": str(g_second),
            "concave_on_interval": concave,
            "g_at_zero": str(g_zero),
            "g_at_half": str(g_half),
            "ln2_terms": terms,
            "ln2_lower": str(lo),
            "ln2_upper": str(hi),
            "g_at_half_lower_bound": str(g_half_lower),
            "lower_bound_on_interval": "g(x) >= 2x * g(1/2) >= 2x * (7/10 - ln2_upper) by concavity",
        },
    )


# --------------------------------------------------------------------------- graph matrices
def graph_laplacian_checks(network: Network) -> list[ConditionCheck]:
    """Exact D - A ⪰ 0, D + A ⪰ 0, Null(D - A) = span(1) and D + A ≻ 0 (§III of R-ADMM).

    The last check fails exactly on bipartite graphs (``details["bipartite"]``): a connected
    graph's signless Laplacian is singular iff it is bipartite, the kernel being spanned by
    the ±1 two-colouring; then R-ADMM App. I (35)'s "η(D+A)D̃⁻¹ ≻ 0" is false.
    """
    graph = exact_graph(network)
    n = graph.nodes
    laplacian, signless = graph.laplacian, graph.signless_laplacian
    kernel = laplacian.nullspace()
    ones = sympy.ones(n, 1)
    spans_ones = len(kernel) == 1 and kernel[0] == kernel[0][0] * ones and kernel[0][0] != 0
    signless_kernel = signless.nullspace()
    common = {"network": graph.name, "nodes": n}
    return [
        matrix_check("D - A ⪰ 0", "the Laplacian is positive semidefinite", laplacian, strict=False, **common),
        matrix_check("D + A ⪰ 0", "the signless Laplacian is positive semidefinite", signless, strict=False, **common),
        ConditionCheck(
            "Null(D - A) = span(1)",
            "on a connected graph the Laplacian's kernel is spanned by the all-ones vector",
            spans_ones,
            details={
                **common,
                "nullity": len(kernel),
                "basis": [[str(v) for v in vector] for vector in kernel],
            },
        ),
        matrix_check(
            "D + A ≻ 0",
            "the signless Laplacian is non-singular; R-ADMM App. I (35) needs η(D+A)D̃⁻¹ ≻ 0",
            signless,
            strict=True,
            **common,
            bipartite=len(signless_kernel) > 0,
            nullity=len(signless_kernel),
            basis=[[str(v) for v in vector] for vector in signless_kernel],
        ),
    ]


# --------------------------------------------------------------------------- eigenvalue lemma
def _combine(a: Fraction, left: RationalMatrix, b: Fraction, right: RationalMatrix) -> RationalMatrix:
    """a·left + b·right."""
    return tuple(tuple(a * p + b * q for p, q in zip(r, s)) for r, s in zip(left, right))


def _exact_rank(matrix: RationalMatrix) -> int:
    qq = sympy.QQ
    rows = [[qq(v.numerator, v.denominator) for v in row] for row in matrix]
    return DomainMatrix(rows, (len(matrix), len(matrix)), qq).rank()


def jacobian_eigenvalue_checks(
    problem: ConsensusProblem,
    node: int,
    eta: object,
    degree: int,
    f: Sequence[float] | np.ndarray,
    replacement: tuple[Sequence[float] | np.ndarray, float] | None = None,
) -> list[ConditionCheck]:
    """The eigenvalue lemma of R-ADMM App. III (after (55)) decided exactly at a point.

    For node i = ``node`` with V_i = ``degree``, penalty η = ``eta`` and point f_i = ``f``
    (shape (d,)), the neighbouring D̂_i replaces sample 1 by ``replacement`` = (x̂, ŷ)
    (default: the features of sample 2 with the label of sample 1 flipped) and

        H = (C/B_i) Σ_n L''(y_n fᵀx_n) x_n x_nᵀ + (ρ/N + 2ηV_i) I      (= -J, ∇²R = I)
        G = (C/B_i) (L''(ŷ fᵀx̂) x̂x̂ᵀ - L''(y_1 fᵀx_1) x_1x_1ᵀ),

    with κ = c₁ / ((B_i/C)(ρ/N + 2ηV_i)). M-ADMM's (64) is the same lemma with H, G divided
    by 2η_i(t)V_i, which leaves H⁻¹G and κ unchanged. Since H ≻ 0, κH ∓ G ⪰ 0 is exactly
    |λ(H⁻¹G)| ≤ κ. The features, C, ρ, η and c₁ enter as the exact rationals their floats
    are; the curvatures L''(z) = s(1-s) are the *float-evaluated* values converted exactly
    (the first check confirms they lie in (0, c₁]). Returns, in order: curvatures in (0, c₁],
    ‖x‖ ≤ 1, rank G ≤ 2, λ(H) ≥ ρ/N + 2ηV_i, λ(G) ≤ Cc₁/B_i, λ(G) ≥ -Cc₁/B_i,
    λ(H⁻¹G) ≤ κ, λ(H⁻¹G) ≥ -κ, κ ≤ 1/2 (the theorem's condition 2c₁ < (B_i/C)(ρ/N + 2ηV_i)
    is κ < 1/2; the check fails when it does not hold).
    """
    eta_, point, x_hat, y_hat = _lemma_point(problem, node, eta, degree, f, replacement)
    features, labels = problem.features[node], problem.labels[node]
    size, dim = features.shape
    c, rho, c1 = to_fraction(problem.C), to_fraction(problem.rho), to_fraction(problem.loss.c1)
    scale = c / size  # C/B_i
    alpha = rho / problem.nodes + 2 * eta_ * int(degree)  # ρ/N + 2ηV_i
    kappa = c1 / (alpha / scale)  # c₁ / ((B_i/C)(ρ/N + 2ηV_i))

    curvature = problem.loss.second_derivative(labels * (features @ point))  # floats
    curvature_hat = problem.loss.second_derivative(np.array([y_hat * float(x_hat @ point)]))
    exact_curvatures = [Fraction(float(v)) for v in np.concatenate([curvature, curvature_hat])]
    in_range = all(0 < v <= c1 for v in exact_curvatures)
    squared_norms = [
        sum((Fraction(float(v)) ** 2 for v in row), Fraction(0)) for row in np.vstack([features, x_hat[None]])
    ]

    data_hessian = exact_weighted_gram(features, curvature)  # Σ_n L''_n x_n x_nᵀ
    identity = identity_matrix(dim)
    h = _combine(scale, data_hessian, alpha, identity)
    g = _combine(
        scale,
        exact_weighted_gram(x_hat[None], curvature_hat),
        -scale,
        exact_weighted_gram(features[:1], curvature[:1]),
    )
    rank = _exact_rank(g)
    bound_g = scale * c1  # Cc₁/B_i

    common: dict[str, object] = {
        "node": int(node),
        "B_i": size,
        "V_i": int(degree),
        "N": problem.nodes,
        "C": str(c),
        "rho": str(rho),
        "eta": str(eta_),
        "c1": str(c1),
        "rho/N + 2 eta V_i": str(alpha),
        "kappa": str(kappa),
        "kappa_float": float(kappa),
    }
    return _lemma_checks(common, exact_curvatures, in_range, squared_norms, g, rank, h, alpha, kappa, bound_g, c1,
                         scale, identity)


def _lemma_checks(common: dict[str, object], exact_curvatures: list[Fraction], in_range: bool,
                  squared_norms: list[Fraction], g: object, rank: int, h: object, alpha: Fraction, kappa: Fraction,
                  bound_g: Fraction, c1: Fraction, scale: Fraction, identity: object) -> list[ConditionCheck]:
    """The checks of :func:`jacobian_eigenvalue_checks`, in its order, from the exact quantities it computed."""
    float_note = "L''(z) = s(1-s) evaluated in floats, then converted exactly"
    return [
        ConditionCheck(
            "Assumption 4: L'' in (0, c1]",
            "the float-evaluated curvatures L''(y fᵀx) of D_i and of the replacement lie in (0, c1]",
            in_range,
            details={
                **common,
                "curvature": float_note,
                "min": str(min(exact_curvatures)),
                "max": str(max(exact_curvatures)),
            },
        ),
        ConditionCheck(
            "||x||_2 <= 1",
            "every feature vector of D_i and the replacement x̂ lies in the unit ball (exactly)",
            all(s <= 1 for s in squared_norms),
            details={**common, "max_squared_norm": str(max(squared_norms)), "max_squared_norm_float": float(max(squared_norms))},
        ),
        ConditionCheck(
            "rank G <= 2",
            "G = (C/B_i)(L''(ŷfᵀx̂)x̂x̂ᵀ - L''(y_1fᵀx_1)x_1x_1ᵀ) has rank at most 2",
            rank <= 2,
            matrix=g,
            details={**common, "rank": rank},
        ),
        matrix_check(
            "λ(H) >= ρ/N + 2ηV_i",
            "H - (ρ/N + 2ηV_i) I ⪰ 0, H = -J(g_k⁻¹)",
            _combine(Fraction(1), h, -alpha, identity),
            strict=False,
            **common,
            curvature=float_note,
        ),
        matrix_check("λ(G) <= Cc1/B_i", "(Cc1/B_i) I - G ⪰ 0", _combine(bound_g, identity, Fraction(-1), g), strict=False, **common),
        matrix_check("λ(G) >= -Cc1/B_i", "(Cc1/B_i) I + G ⪰ 0", _combine(bound_g, identity, Fraction(1), g), strict=False, **common),
        matrix_check(
            "λ(H⁻¹G) <= κ",
            "κH - G ⪰ 0, κ = c1 / ((B_i/C)(ρ/N + 2ηV_i)); with H ≻ 0 this is λ_max(H⁻¹G) <= κ",
            _combine(kappa, h, Fraction(-1), g),
            strict=False,
            **common,
        ),
        matrix_check(
            "λ(H⁻¹G) >= -κ",
            "κH + G ⪰ 0; with H ≻ 0 this is λ_min(H⁻¹G) >= -κ",
            _combine(kappa, h, Fraction(1), g),
            strict=False,
            **common,
        ),
        ConditionCheck(
            "κ <= 1/2",
            "|λ(H⁻¹G)| <= κ <= 1/2, as the proof concludes from 2c1 < (B_i/C)(ρ/N + 2ηV_i)",
            kappa <= Fraction(1, 2),
            details={**common, "theorem_condition": 2 * c1 < alpha / scale},
        ),
    ]


def _lemma_point(problem: ConsensusProblem, node: int, eta: object, degree: int, f: Sequence[float] | np.ndarray,
                 replacement: tuple[Sequence[float] | np.ndarray, float] | None
                 ) -> tuple[Fraction, np.ndarray, np.ndarray, float]:
    """The arguments of :func:`jacobian_eigenvalue_checks` checked: η exact, the point f_i, and the replacement
    record (x̂, ŷ) (default: sample 2's features with sample 1's label flipped)."""
    if isinstance(node, bool) or not isinstance(node, (int, np.integer)) or not 0 <= node < problem.nodes:
        raise InvalidConfiguration(f"node={node!r} must be an integer in [0, {problem.nodes - 1}]")
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or degree < 1:
        raise InvalidConfiguration(f"degree={degree!r} must be the neighbour count V_i >= 1 of node {node}")
    eta_ = to_fraction(eta)
    if eta_ <= 0:
        raise InvalidConfiguration(f"eta={eta!r} must be > 0 (the ADMM penalty)")
    features, labels = problem.features[node], problem.labels[node]
    size, dim = features.shape
    point = np.asarray(f, dtype=np.float64)
    if point.shape != (dim,):
        raise InvalidConfiguration(f"f has shape {point.shape}; pass node {node}'s primal variable, shape ({dim},)")
    if replacement is None:
        x_hat = features[1] if size > 1 else np.eye(dim)[0]
        y_hat = -float(labels[0])
    else:
        x_hat, y_hat = np.asarray(replacement[0], dtype=np.float64), float(replacement[1])
        if x_hat.shape != (dim,) or y_hat not in (-1.0, 1.0):
            raise InvalidConfiguration(
                f"replacement must be (x_hat of shape ({dim},), y_hat in {{-1, +1}}), "
                f"got shapes {x_hat.shape} and y_hat={y_hat!r}"
            )
    return eta_, point, x_hat, y_hat


__all__ = [
    "graph_laplacian_checks",
    "jacobian_eigenvalue_checks",
    "ln2_bounds",
    "log_inequality_check",
]
