"""Certified rational intervals for eigenvalues, singular values and square roots.

Spectral quantities of the theorems (σ_max(W(D+A)), the smallest non-zero singular value
of D - A, λ_max of a data Gram matrix, ...) are usually irrational. They are never rounded:
each is enclosed in ``[lo, hi]`` where both ends carry exact evidence,

* ``t* >= lo`` because ``S - lo·Q ⪰ 0`` (an LDLᵀ :class:`Certificate`), and
* ``t* <= hi`` because a vector ``x`` has Rayleigh quotient ``xᵀSx / xᵀQx = hi``,

for the threshold ``t* = max{t : S - tQ ⪰ 0}`` (``Q = I`` gives λ_min, the projector onto
range(S) gives the smallest non-zero eigenvalue). A float eigen-decomposition only proposes
the points to test; exact tests and bisection shrink the interval to the asked width.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import isqrt
from typing import Sequence

import numpy as np
import sympy

from admmcheck.conditions.certificates import (
    Certificate,
    MatrixLike,
    RationalMatrix,
    decide_positive,
    identity_matrix,
    null_direction,
    rational_matrix,
    symmetric_part,
    verify_certificate,
)
from admmcheck.foundations.errors import InvalidConfiguration

DEFAULT_WIDTH = Fraction(1, 10**9)


@dataclass(frozen=True)
class Interval:
    """A closed rational interval ``[lo, hi]`` known to contain a real number."""

    lo: Fraction
    hi: Fraction

    def __post_init__(self) -> None:
        if self.lo > self.hi:
            raise InvalidConfiguration(f"empty interval [{self.lo}, {self.hi}]")

    @property
    def width(self) -> Fraction:
        return self.hi - self.lo

    @property
    def exact(self) -> bool:
        return self.lo == self.hi

    def as_dict(self) -> dict[str, object]:
        return {"lo": str(self.lo), "hi": str(self.hi), "lo_float": float(self.lo), "hi_float": float(self.hi)}


@dataclass(frozen=True)
class ThresholdInterval(Interval):
    """``max{t : S - tQ ⪰ 0}`` in ``[lo, hi]``, with the evidence for both ends."""

    lower_evidence: Certificate | None = None  # S - lo·Q ⪰ 0
    upper_vector: tuple[Fraction, ...] | None = None  # Rayleigh quotient xᵀSx / xᵀQx = hi


def _matmul(a: RationalMatrix, b: RationalMatrix) -> RationalMatrix:
    n, m, k = len(a), len(b[0]), len(b)
    return tuple(tuple(sum((a[i][r] * b[r][j] for r in range(k)), Fraction(0)) for j in range(m)) for i in range(n))


def _combine(s: RationalMatrix, t: Fraction, q: RationalMatrix) -> RationalMatrix:
    return tuple(tuple(s[i][j] - t * q[i][j] for j in range(len(s))) for i in range(len(s)))


def _form(m: RationalMatrix, x: Sequence[Fraction]) -> Fraction:
    return sum((x[i] * m[i][j] * x[j] for i in range(len(x)) for j in range(len(x)) if m[i][j]), Fraction(0))


def _rationalize(vector: np.ndarray) -> tuple[Fraction, ...]:
    scale = np.max(np.abs(vector))
    return tuple(Fraction(float(v / scale)).limit_denominator(10**15) for v in vector)


def generalized_threshold(
    matrix: MatrixLike,
    weight: MatrixLike,
    estimate: float,
    width: Fraction = DEFAULT_WIDTH,
    guess: Sequence[Fraction] | None = None,
) -> ThresholdInterval:
    """Enclose ``t* = max{t : S - tQ ⪰ 0}`` (S symmetric, Q ⪰ 0) to ``width``.

    ``estimate`` is a float guess of t* and ``guess`` an optional vector near the minimising
    direction; both only steer the search. Each exact test at a point t either proves
    ``t* >= t`` (factorization) or yields x with xᵀSx < t·xᵀQx, i.e. ``t* <= xᵀSx/xᵀQx < t``.
    """
    s, q = symmetric_part(matrix), symmetric_part(weight)
    lo: Fraction | None = None
    hi: Fraction | None = None
    lower_evidence: Certificate | None = None
    upper_vector: tuple[Fraction, ...] | None = None

    def test(t: Fraction) -> None:
        nonlocal lo, hi, lower_evidence, upper_vector
        cert = decide_positive(_combine(s, t, q), strict=False)
        if cert.holds:
            if lo is None or t > lo:
                lo, lower_evidence = t, cert
            x = null_direction(cert.evidence)  # S - tQ singular along x: maybe t* = t
            if x is not None and _form(q, x) > 0 and (hi is None or t < hi):
                hi, upper_vector = t, x
            return
        x = cert.evidence.vector
        denominator = _form(q, x)
        if denominator <= 0:
            raise InvalidConfiguration("S is not positive semidefinite on the kernel of Q; no threshold exists")
        quotient = _form(s, x) / denominator
        if hi is None or quotient < hi:
            hi, upper_vector = quotient, x

    if guess is not None:
        denominator = _form(q, guess)
        if denominator > 0:
            first = _form(s, guess) / denominator
            hi, upper_vector = first, tuple(guess)
            test(first)  # exact when t* is this Rayleigh quotient
    centre = Fraction(estimate)
    simple = centre.limit_denominator(1000)  # spectra of graph matrices are often small rationals
    if abs(simple - centre) < Fraction(1, 10**9):
        test(simple)
    step = Fraction(max(abs(estimate), 1.0)) * Fraction(1, 10**12)
    while lo is None or hi is None:
        if lo is None:
            test(centre - step)
        if hi is None:
            test(centre + step)
        step *= 16
    while hi - lo > width:
        test((lo + hi) / 2)
    return ThresholdInterval(lo, hi, lower_evidence, upper_vector)


def verify_threshold_interval(interval: ThresholdInterval, matrix: MatrixLike, weight: MatrixLike) -> bool:
    """Re-check both ends of a :func:`generalized_threshold` interval from the matrices."""
    s, q = symmetric_part(matrix), symmetric_part(weight)
    if interval.lower_evidence is None or interval.upper_vector is None:
        return False
    if not verify_certificate(interval.lower_evidence, _combine(s, interval.lo, q)):
        return False
    denominator = _form(q, interval.upper_vector)
    return denominator > 0 and _form(s, interval.upper_vector) / denominator == interval.hi


def largest_eigenvalue(matrix: MatrixLike, width: Fraction = DEFAULT_WIDTH) -> Interval:
    """Certified enclosure of λ_max of the symmetric part of ``matrix``."""
    s = symmetric_part(matrix)
    values, vectors = np.linalg.eigh(np.array(s, dtype=float))
    negated = tuple(tuple(-v for v in row) for row in s)
    inner = generalized_threshold(negated, identity_matrix(len(s)), -values[-1], width, _rationalize(vectors[:, -1]))
    return Interval(-inner.hi, -inner.lo)  # the evidence proves the bounds for -S


def smallest_eigenvalue(matrix: MatrixLike, width: Fraction = DEFAULT_WIDTH) -> ThresholdInterval:
    """Certified enclosure of λ_min of the symmetric part of ``matrix``."""
    s = symmetric_part(matrix)
    values, vectors = np.linalg.eigh(np.array(s, dtype=float))
    return generalized_threshold(s, identity_matrix(len(s)), values[0], width, _rationalize(vectors[:, 0]))


def range_projector(matrix: MatrixLike) -> RationalMatrix:
    """Exact orthogonal projector onto the range of a symmetric rational matrix."""
    m = sympy.Matrix(symmetric_part(matrix))
    kernel = m.nullspace()
    n = m.shape[0]
    if not kernel:
        return identity_matrix(n)
    k = sympy.Matrix.hstack(*kernel)
    projector = sympy.eye(n) - k * (k.T * k).inv() * k.T
    return rational_matrix(projector)


def smallest_nonzero_eigenvalue(matrix: MatrixLike, width: Fraction = DEFAULT_WIDTH) -> ThresholdInterval:
    """Certified enclosure of the smallest non-zero eigenvalue of a symmetric PSD matrix.

    Uses ``S - tP ⪰ 0`` with ``P`` the exact projector onto range(S): S and P commute, so
    this holds exactly when every non-zero eigenvalue is at least t.
    """
    s = symmetric_part(matrix)
    p = range_projector(s)
    if all(v == 0 for row in p for v in row):
        raise InvalidConfiguration("the matrix is zero; it has no non-zero eigenvalue")
    values, vectors = np.linalg.eigh(np.array(s, dtype=float))
    rank = int(sum(p[i][i] for i in range(len(s))))  # trace of a projector
    index = len(s) - rank
    guess = _rationalize(vectors[:, index])
    projected = tuple(sum((p[i][j] * guess[j] for j in range(len(s))), Fraction(0)) for i in range(len(s)))
    return generalized_threshold(s, p, values[index], width, projected)


def gram(matrix: MatrixLike) -> RationalMatrix:
    """MᵀM, exactly (its eigenvalues are the squared singular values of M)."""
    m = rational_matrix(matrix)
    transpose = tuple(zip(*m))
    return _matmul(transpose, m)


def sqrt_interval(interval: Interval, digits: int = 12) -> Interval:
    """Rational ``[lo', hi']`` with lo' <= sqrt(lo) and sqrt(hi) <= hi' (exact for squares)."""
    if interval.lo < 0:
        raise InvalidConfiguration(f"square root of an interval reaching below 0: [{interval.lo}, {interval.hi}]")
    return Interval(_sqrt_bound(interval.lo, digits, up=False), _sqrt_bound(interval.hi, digits, up=True))


def _sqrt_bound(value: Fraction, digits: int, up: bool) -> Fraction:
    p, q = value.numerator, value.denominator
    root_p, root_q = isqrt(p), isqrt(q)
    if root_p * root_p == p and root_q * root_q == q:
        return Fraction(root_p, root_q)
    scale = 10**digits
    # sqrt(p/q) = sqrt(p*q)/q; bracket sqrt(p*q*scale^2) by integers
    r = isqrt(p * q * scale * scale)
    return Fraction(r + 1 if up else r, q * scale)


def largest_singular_value(matrix: MatrixLike, width: Fraction = DEFAULT_WIDTH) -> Interval:
    """Certified enclosure of σ_max(M) = sqrt(λ_max(MᵀM))."""
    return sqrt_interval(largest_eigenvalue(gram(matrix), width))


def smallest_nonzero_singular_value(matrix: MatrixLike, width: Fraction = DEFAULT_WIDTH) -> Interval:
    """Certified enclosure of the smallest non-zero singular value of M."""
    return sqrt_interval(smallest_nonzero_eigenvalue(gram(matrix), width))
