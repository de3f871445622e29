"""Strong-convexity and smoothness constants m_i, M_i of the local objectives, certified.

For O(f_i, D_i) = C/B_i Σ_n L(y f_iᵀx) + (ρ/N)·½||f_i||² (M-ADMM eq. (2)) with 0 < L'' <= c1:

    m_i = ρ/N,    M_i = c1·λ_max(C/B_i · X_iᵀX_i) + ρ/N

(issue 5; M-ADMM Assumption 3 / R-ADMM (14)). λ_max of the data Gram matrix is irrational
in general; it is enclosed exactly, and the upper end is used as M_i. Any upper bound on
the Lipschitz constant of ∇O is itself a valid M_i, so the theorems stay valid with it.

The exact Gram matrix of float data has huge denominators, so the upper bound is certified
on a rounded copy: with S̃ = S rounded entrywise to multiples of h, ||S - S̃||₂ <= d·h/2, so
λ_max(S) <= λ_max(S̃) + d·h/2, and ``u·I - S̃ ⪰ 0`` is checked by exact LDLᵀ on small numbers.
The lower end is a Rayleigh quotient of the exact S.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from admmcheck.conditions.certificates import RationalMatrix, decide_positive, to_fraction
from admmcheck.conditions.intervals import Interval
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.problems import ConsensusProblem

GRID = Fraction(1, 2**40)


@dataclass(frozen=True)
class LocalConstants:
    """Per-node m_i (exact) and an enclosure of M_i whose upper end is used as M_i."""

    strong_convexity: tuple[Fraction, ...]
    smoothness: tuple[Interval, ...]

    @property
    def lipschitz(self) -> tuple[Fraction, ...]:
        """The certified upper bounds used as M_i."""
        return tuple(i.hi for i in self.smoothness)

    def as_dict(self) -> dict[str, object]:
        return {
            "m": [str(m) for m in self.strong_convexity],
            "M": [str(m) for m in self.lipschitz],
            "M_enclosure": [i.as_dict() for i in self.smoothness],
        }


def _dyadic_integers(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Floats as exact integers over one power of two: ``values == numerators / 2**exponent``."""
    ratios = [float(v).as_integer_ratio() for v in np.ravel(values)]
    exponent = max(den.bit_length() - 1 for _, den in ratios)  # every denominator is 2^k
    numerators = [num << (exponent - (den.bit_length() - 1)) for num, den in ratios]
    return np.array(numerators, dtype=object).reshape(np.shape(values)), exponent


def exact_weighted_gram(rows: np.ndarray, weights: np.ndarray) -> RationalMatrix:
    """Exact Σ_n w_n x_n x_nᵀ for float rows x_n (shape (B, d)) and float weights w_n."""
    x, ex = _dyadic_integers(rows)
    w, ew = _dyadic_integers(weights)
    total = (x.T * w) @ x  # integer arithmetic; one division per entry at the end
    scale = 2 ** (ew + 2 * ex)
    return tuple(tuple(Fraction(int(v), scale) for v in row) for row in total)


def gram_lambda_max(features: np.ndarray, scale: Fraction) -> Interval:
    """Certified enclosure of λ_max(scale · XᵀX) for float data X of shape (B, d)."""
    x = np.asarray(features, dtype=float)
    d = x.shape[1]
    gram = [[scale * v for v in row] for row in exact_weighted_gram(x, np.ones(x.shape[0]))]
    values, vectors = np.linalg.eigh(float(scale) * (x.T @ x))
    v = [Fraction(float(c)).limit_denominator(10**12) for c in vectors[:, -1]]
    norm = sum((c * c for c in v), Fraction(0))
    lower = sum((v[a] * gram[a][b] * v[b] for a in range(d) for b in range(d)), Fraction(0)) / norm
    rounded = [[Fraction(round(g / GRID)) * GRID for g in row] for row in gram]
    slack = d * GRID / 2
    margin = Fraction(max(abs(values[-1]), 1.0)) * Fraction(1, 10**10)
    upper = Fraction(float(values[-1])) + margin
    for _ in range(60):
        shifted = [[(upper - slack if a == b else 0) - rounded[a][b] for b in range(d)] for a in range(d)]
        if decide_positive(shifted, strict=False).holds:  # λ_max(S̃) <= upper - slack
            return Interval(min(lower, upper), upper)
        upper += margin
        margin *= 4
    raise ArithmeticError("could not certify an upper bound on λ_max of the data Gram matrix")


def local_constants(problem: ConsensusProblem, c1: object | None = None) -> LocalConstants:
    """m_i = ρ/N and the enclosure of M_i = c1·λ_max(C/B_i X_iᵀX_i) + ρ/N for every node."""
    curvature = to_fraction(problem.loss.c1 if c1 is None else c1)
    if curvature <= 0:
        raise InvalidConfiguration(f"c1={curvature} must be > 0 (a bound on L'')")
    reg = to_fraction(problem.rho) / problem.nodes
    smooth = []
    for x in problem.features:
        lam = gram_lambda_max(x, to_fraction(problem.C) / x.shape[0])
        smooth.append(Interval(curvature * lam.lo + reg, curvature * lam.hi + reg))
    return LocalConstants(tuple([reg] * problem.nodes), tuple(smooth))
