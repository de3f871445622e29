"""The smallest γ >= 0 for which R-ADMM's (24)-(25) (or (26)-(27)) hold, with certificates.

Let C(γ) be the pair of symmetric parts of the condition matrices, each multiplied by a
denominator c(γ) > 0 on [0, ∞) so that its entries are polynomials. Their definiteness can
only change where det C(γ) = 0 (eigenvalues are continuous in γ), so:

1. the real roots of the determinants on [0, ∞) are isolated exactly (sympy, rational
   isolating intervals); between consecutive roots the verdict is constant and one exact
   check at a rational sample point decides the whole gap;
2. the first gap where both conditions hold starts at the minimal γ (an infimum: at a root
   det = 0, so the strict condition fails there); bisection with exact checks between the
   last failing sample and the first holding one shrinks it to ``[lo, hi]``, with a witness
   that the conditions fail at ``lo`` and a factorization that they hold at ``hi``;
3. when no gap holds, no γ >= 0 works. The certificate is one vector x whose quadratic form
   xᵀ M(γ) x, a rational function of γ, is <= 0 for every γ >= 0 (checked by root isolation)
   when such a vector is among the candidates, else the per-gap witnesses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Sequence

import sympy
from sympy.polys.matrices import DomainMatrix

from admmcheck.conditions.certificates import Certificate, decide_positive, rational_matrix, to_fraction
from admmcheck.conditions.radmm import GAMMA, RadmmSetting, condition_24, condition_25, condition_names
from admmcheck.foundations.progress import UNLIMITED, Budget

DEFAULT_WIDTH = Fraction(1, 10**6)
MatrixOfGamma = Callable[[object], sympy.Matrix]


@dataclass(frozen=True)
class UniformWitness:
    """A vector x with xᵀ M(γ) x <= 0 for every γ >= 0: M(γ) ≻ 0 fails for all γ >= 0."""

    condition: str
    vector: tuple[Fraction, ...]
    form: sympy.Expr  # xᵀ M(γ) x as a rational function of γ

    def as_dict(self) -> dict[str, object]:
        return {
            "kind": "uniform_witness",
            "condition": self.condition,
            "vector": [str(v) for v in self.vector],
            "quadratic_form": str(sympy.factor(self.form)),
        }


@dataclass(frozen=True)
class GammaSearch:
    """Result of :func:`minimal_gamma`.

    ``interval`` is ``(lo, hi)`` with the minimal γ in ``[lo, hi]`` (None if no γ >= 0 works);
    ``roots`` are isolating intervals of the determinants' roots on [0, ∞) and
    ``gap_samples`` the verdict at one point of every root-free gap between them.
    ``complete`` is False when the time budget ran out: ``interval`` is then the best
    certified bracket reached (wider than asked), or None when no γ was found to hold yet,
    which is not a proof that none exists.
    """

    interval: tuple[Fraction, Fraction] | None
    fails_at_lo: dict[str, Certificate] = field(default_factory=dict)
    holds_at_hi: dict[str, Certificate] = field(default_factory=dict)
    roots: tuple[tuple[Fraction, Fraction], ...] = ()
    gap_samples: tuple[tuple[Fraction, bool], ...] = ()
    determinants: dict[str, str] = field(default_factory=dict)
    no_gamma_certificate: UniformWitness | dict[str, object] | None = None
    complete: bool = True

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "complete": self.complete,
            "gamma_interval": None
            if self.interval is None
            else {"lo": str(self.interval[0]), "hi": str(self.interval[1]),
                  "lo_float": float(self.interval[0]), "hi_float": float(self.interval[1]),
                  "width": float(self.interval[1] - self.interval[0])},
            "determinant_roots": [[str(a), str(b)] for a, b in self.roots],
            "gap_samples": [{"gamma": str(g), "holds": h} for g, h in self.gap_samples],
            "determinants": self.determinants,
        }
        if self.interval is not None:
            out["fails_at_lo"] = {k: c.as_dict() for k, c in self.fails_at_lo.items()}
            out["holds_at_hi"] = {k: c.as_dict() for k, c in self.holds_at_hi.items()}
        elif self.complete:
            cert = self.no_gamma_certificate
            out["no_gamma_certificate"] = cert.as_dict() if isinstance(cert, UniformWitness) else cert
        return out


def _cleared_symmetric(matrix: sympy.Matrix) -> tuple[sympy.Matrix, sympy.Expr]:
    """(c(γ)·(M + Mᵀ)/2, c(γ)) with polynomial entries and c > 0 on [0, ∞)."""
    sym = (matrix + matrix.T) / 2
    entries = [sympy.fraction(sympy.cancel(sympy.together(e))) for e in sym]
    denominator = sympy.Integer(1)
    for _, den in entries:
        denominator = sympy.lcm(denominator, den)
    poly = sympy.Poly(denominator, GAMMA)
    if poly.degree() > 0 and poly.count_roots(0, None) > 0:  # products of (2ηV_i + γ): never
        raise ArithmeticError(f"the denominator {denominator} vanishes on [0, oo)")
    if poly.eval(0) < 0:
        denominator = -denominator
    cleared = sympy.Matrix(sym.shape[0], sym.shape[1], [sympy.cancel(num * denominator / den) for num, den in entries])
    return cleared, denominator


def polynomial_determinant(matrix: sympy.Matrix) -> sympy.Poly:
    """det of a matrix with polynomial entries in γ, exactly, as a Poly in γ.

    Computed over the domain QQ[γ] (fraction-free elimination); sympy's generic
    ``Matrix.det`` swells expressions and took minutes on a 10-node ring.
    """
    ring = sympy.QQ[GAMMA]
    determinant = DomainMatrix.from_Matrix(matrix).convert_to(ring).det()
    return sympy.Poly(ring.to_sympy(determinant), GAMMA)


def _nonpositive_on_halfline(expr: sympy.Expr) -> bool:
    """True iff the rational function ``expr`` of γ is <= 0 for every γ >= 0 (exactly)."""
    num, den = sympy.fraction(sympy.cancel(sympy.together(expr)))
    num_p, den_p = sympy.Poly(num, GAMMA), sympy.Poly(den, GAMMA)
    if den_p.degree() > 0 and den_p.count_roots(0, None) > 0:
        return False
    sign = 1 if den_p.eval(0) > 0 else -1
    if num_p.is_zero:
        return True
    # the sign is constant between roots (where the value is 0): one sample per gap decides
    points = _gaps(_root_intervals(num_p), num_p)
    return all(sign * num_p.eval(sympy.Rational(p.numerator, p.denominator)) <= 0 for p in points)


def _root_intervals(poly: sympy.Poly) -> list[tuple[Fraction, Fraction]]:
    """Disjoint rational isolating intervals of the real roots >= 0 of ``poly``, sorted."""
    if poly.degree() <= 0:
        return []
    square_free = poly.sqf_part()
    for eps in (None, Fraction(1, 10**3), Fraction(1, 10**9), Fraction(1, 10**30)):
        found = square_free.intervals(inf=0, eps=None if eps is None else sympy.Rational(eps.numerator, eps.denominator))
        out = sorted((to_fraction(sympy.Rational(a)), to_fraction(sympy.Rational(b))) for (a, b), _ in found)
        if all(out[k][1] < out[k + 1][0] for k in range(len(out) - 1)):
            return out
    raise ArithmeticError(f"could not separate the roots of {poly.as_expr()}")


def _gaps(roots: list[tuple[Fraction, Fraction]], poly: sympy.Poly) -> list[Fraction]:
    """One rational sample inside every maximal interval of [0, ∞) free of roots."""
    samples: list[Fraction] = []
    if poly.degree() <= 0 or poly.eval(0) != 0:
        samples.append(Fraction(0))
    for k, (a, b) in enumerate(roots):
        nxt = roots[k + 1][0] if k + 1 < len(roots) else None
        samples.append(b + 1 if nxt is None else (b + nxt) / 2)
    return samples


def minimal_gamma(
    setting: RadmmSetting,
    big_l: object = 2,
    mu: object = 2,
    width: Fraction = DEFAULT_WIDTH,
    budget: Budget = UNLIMITED,
) -> GammaSearch:
    """The certified minimal γ >= 0 for Theorem III.1's conditions (L = μ = 2: (26)-(27)).

    ``budget`` bounds the wall-clock time (checked between exact steps) and shows progress;
    when it runs out the result has ``complete=False`` and the best bracket so far.
    """
    first, second = condition_names(big_l, mu)
    builders: dict[str, MatrixOfGamma] = {
        first: lambda g: condition_24(setting, g, big_l, mu),
        second: lambda g: condition_25(setting, g, big_l, mu),
    }
    determinants: dict[str, sympy.Poly] = {}
    for name, build in budget.steps(builders.items(), "gamma search: determinants", total=len(builders)):
        cleared, _ = _cleared_symmetric(build(GAMMA))
        determinants[name] = polynomial_determinant(cleared)
    product = sympy.Poly(1, GAMMA)
    for det in determinants.values():
        product = product * det
    if product.is_zero:
        roots: list[tuple[Fraction, Fraction]] = []
        samples = [Fraction(0), Fraction(1)]
    else:
        roots = _root_intervals(product)
        samples = _gaps(roots, product)
        if any(product.eval(sympy.Rational(g.numerator, g.denominator)) == 0 for g in samples):
            raise ArithmeticError("a gap sample hit a root; the isolating intervals touch")
    dets = {name: str(det.as_expr()) for name, det in determinants.items()}

    def decide(gamma: Fraction) -> dict[str, Certificate]:
        return {name: decide_positive(rational_matrix(build(gamma)), strict=True) for name, build in builders.items()}

    verdicts: list[tuple[Fraction, dict[str, Certificate]]] = []
    for g in budget.steps(samples, "gamma search: one check per gap between roots"):
        if budget.expired():
            return GammaSearch(None, roots=tuple(roots), gap_samples=_holding(verdicts), determinants=dets,
                               complete=False)
        verdicts.append((g, decide(g)))
    gap_samples = _holding(verdicts)
    first = next((k for k, (_, ok) in enumerate(gap_samples) if ok), None)
    if first is None:
        return GammaSearch(None, roots=tuple(roots), gap_samples=gap_samples, determinants=dets,
                           no_gamma_certificate=_no_gamma_certificate(builders, verdicts, setting))
    if first == 0 and samples[0] == 0:
        certs = verdicts[0][1]
        return GammaSearch((Fraction(0), Fraction(0)), {}, certs, tuple(roots), gap_samples, dets)
    lo, hi = samples[first - 1] if first > 0 else Fraction(0), samples[first]
    root = next((r for r in roots if lo < r[1] and r[0] < hi), None)
    if root is not None and root[0] == root[1]:
        lo = root[0]  # a rational root: the minimal γ is exactly this value
    lo_certs, hi_certs = decide(lo), verdicts[first][1]
    halvings = max(0, math.ceil(math.log2((hi - lo) / width))) if hi - lo > width else 0
    complete = True
    for _ in budget.steps(range(halvings), "gamma search: bisection", total=halvings):
        if budget.expired():
            complete = False
            break
        mid = (lo + hi) / 2  # bisection on exact checks
        certs = decide(mid)
        if all(c.holds for c in certs.values()):
            hi, hi_certs = mid, certs
        else:
            lo, lo_certs = mid, certs
    failing = {k: c for k, c in lo_certs.items() if not c.holds}
    return GammaSearch((lo, hi), failing, hi_certs, tuple(roots), gap_samples, dets, complete=complete)


def _holding(verdicts: Sequence[tuple[Fraction, dict[str, Certificate]]]) -> tuple[tuple[Fraction, bool], ...]:
    return tuple((g, all(c.holds for c in certs.values())) for g, certs in verdicts)


def _no_gamma_certificate(
    builders: dict[str, MatrixOfGamma],
    verdicts: Sequence[tuple[Fraction, dict[str, Certificate]]],
    setting: RadmmSetting,
) -> UniformWitness | dict[str, object]:
    """A single vector refuting a condition for every γ >= 0, else the per-gap witnesses."""
    candidates: list[tuple[str, tuple[Fraction, ...]]] = []
    kernel = setting.graph.signless_laplacian.nullspace()  # bipartite graphs: x with (D+A)x = 0
    for name in builders:
        candidates += [(name, tuple(to_fraction(v) for v in k)) for k in kernel]
    for _, certs in verdicts:
        candidates += [(name, c.evidence.vector) for name, c in certs.items() if not c.holds]
    for name, vector in candidates:
        x = sympy.Matrix([sympy.Rational(v.numerator, v.denominator) for v in vector])
        form = sympy.cancel((x.T * builders[name](GAMMA) * x)[0, 0])
        if _nonpositive_on_halfline(form):
            return UniformWitness(name, vector, form)
    return {
        "kind": "gap_witnesses",
        "gaps": [
            {"gamma": str(g), "failing": {k: c.as_dict() for k, c in certs.items() if not c.holds}}
            for g, certs in verdicts
        ],
    }


def verify_uniform_witness(witness: UniformWitness, matrix_of_gamma: MatrixOfGamma) -> bool:
    """Recompute xᵀ M(γ) x from the matrix and check it is <= 0 for every γ >= 0."""
    if not any(witness.vector):
        return False
    x = sympy.Matrix([sympy.Rational(v.numerator, v.denominator) for v in witness.vector])
    form = sympy.cancel((x.T * matrix_of_gamma(GAMMA) * x)[0, 0])
    return _nonpositive_on_halfline(form)
