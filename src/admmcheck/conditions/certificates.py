"""Exact decisions of M ≻ 0 / M ⪰ 0 over the rationals, with re-checkable certificates.

The convergence conditions of the papers are orderings ``X ≻ Y`` between matrices, several
of them not symmetric (e.g. ``η(D+A)D̃⁻¹`` in R-ADMM (24)-(27)). The proofs only ever use
them through quadratic forms ``⟨x, (X - Y) x⟩`` (Frobenius products in R-ADMM App. I,
(35)-(43); M-ADMM supplement App. B, (38)-(41)), so ``M ≻ 0`` means here

    xᵀ M x > 0 for every x ≠ 0,   i.e. the symmetric part (M + Mᵀ)/2 is positive definite,

and ``M ⪰ 0`` means xᵀ M x >= 0 for every x. This is *not* the same as "every eigenvalue
of M is positive", which the M-ADMM supplement (App. B, below (38)) uses as if it were.

The decision is a symmetric-pivoted LDLᵀ elimination in exact ``Fraction`` arithmetic:

* it holds: a :class:`Factorization` ``P S Pᵀ = L diag(d) Lᵀ`` of the symmetric part ``S``
  with ``L`` unit lower triangular and every ``d_k > 0`` (definite) or ``>= 0`` (semidefinite);
* it fails: a :class:`Witness` ``x`` with ``xᵀ S x <= 0`` (``x ≠ 0``; for ≻) or ``< 0`` (for ⪰).

:func:`verify_certificate` re-checks a certificate against a matrix from scratch, trusting
nothing the certificate claims except what it can recompute.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from fractions import Fraction
from numbers import Rational
from typing import Sequence, Union

import numpy as np
import sympy

from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.formulas import parse_rational

RationalMatrix = tuple[tuple[Fraction, ...], ...]
MatrixLike = Union[sympy.MatrixBase, np.ndarray, Sequence[Sequence[object]]]

if hasattr(sys, "set_int_max_str_digits"):
    # certificates of long schedules hold integers beyond CPython's 4300-digit str() default
    sys.set_int_max_str_digits(0)

DEFINITE = "positive definite"
SEMIDEFINITE = "positive semidefinite"


def to_fraction(value: object) -> Fraction:
    """Return ``value`` as an exact ``Fraction``.

    Accepts ints, Fractions, sympy Rationals, rational strings ("1/5") and finite floats
    (converted exactly: a float *is* a dyadic rational). Irrational sympy numbers are
    refused: bound them with :mod:`admmcheck.conditions.intervals` instead of rounding.
    """
    if isinstance(value, bool):
        raise InvalidConfiguration(f"expected a rational number, got the bool {value!r}")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (int, np.integer)):
        return Fraction(int(value))
    if isinstance(value, sympy.Basic):
        if value.is_Rational:
            return Fraction(int(value.p), int(value.q))
        raise InvalidConfiguration(
            f"{value} is not rational; exact conditions need rational entries "
            "(bound irrational quantities with certified intervals)"
        )
    if isinstance(value, Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value):
            raise InvalidConfiguration(f"expected a finite number, got {value!r}")
        return Fraction(float(value))
    if isinstance(value, str):
        return parse_rational(value)  # the safe grammar of admmcheck.foundations.formulas: 1/5, 0.2, 2^-3
    raise InvalidConfiguration(f"expected a rational number, got {type(value).__name__} {value!r}")


def rationals_per_node(name: str, values: Sequence[object] | object, nodes: int) -> tuple[Fraction, ...]:
    """One rational for every node, or one per node, as Fractions (``name`` is for errors)."""
    items = values if isinstance(values, (list, tuple)) else (values,)
    out = tuple(to_fraction(v) for v in items)
    if len(out) == 1:
        out = out * nodes
    if len(out) != nodes:
        raise InvalidConfiguration(f"{name}: got {len(out)} values for {nodes} nodes; give one or one per node")
    return out


def sympy_rational(value: Fraction) -> sympy.Rational:
    """A Fraction as a sympy Rational (for building condition matrices symbolically)."""
    return sympy.Rational(value.numerator, value.denominator)


def rational_matrix(matrix: MatrixLike) -> RationalMatrix:
    """Return a square matrix as a tuple of rows of ``Fraction`` (exact, no rounding)."""
    if isinstance(matrix, sympy.MatrixBase):
        rows = matrix.tolist()
    else:
        rows = [list(row) for row in (matrix.tolist() if isinstance(matrix, np.ndarray) else matrix)]
    n = len(rows)
    if n == 0 or any(len(row) != n for row in rows):
        raise InvalidConfiguration(
            f"expected a non-empty square matrix, got rows of lengths {[len(r) for r in rows]}"
        )
    return tuple(tuple(to_fraction(v) for v in row) for row in rows)


def identity_matrix(n: int) -> RationalMatrix:
    """The n x n identity as Fractions."""
    return tuple(tuple(Fraction(int(i == j)) for j in range(n)) for i in range(n))


def symmetric_part(matrix: MatrixLike) -> RationalMatrix:
    """(M + Mᵀ)/2: the matrix whose quadratic form equals that of ``M``."""
    m = rational_matrix(matrix)
    n = len(m)
    return tuple(tuple((m[i][j] + m[j][i]) / 2 for j in range(n)) for i in range(n))


def quadratic_form(matrix: MatrixLike, vector: Sequence[object]) -> Fraction:
    """Exact xᵀ M x (equal to xᵀ S x for the symmetric part S)."""
    m = rational_matrix(matrix)
    x = [to_fraction(v) for v in vector]
    if len(x) != len(m):
        raise InvalidConfiguration(f"vector of length {len(x)} for a {len(m)}x{len(m)} matrix")
    return sum((x[i] * sum((m[i][j] * x[j] for j in range(len(x))), Fraction(0)) for i in range(len(x))), Fraction(0))


@dataclass(frozen=True)
class Factorization:
    """``P S Pᵀ = L diag(pivots) Lᵀ``; row ``k`` of ``P S Pᵀ`` is row ``order[k]`` of ``S``."""

    order: tuple[int, ...]
    lower: RationalMatrix
    pivots: tuple[Fraction, ...]


@dataclass(frozen=True)
class Witness:
    """A vector ``x ≠ 0`` and its quadratic form ``value = xᵀ M x`` (<= 0 or < 0)."""

    vector: tuple[Fraction, ...]
    value: Fraction


@dataclass(frozen=True)
class Certificate:
    """Evidence for ``holds`` of ``M ≻ 0`` (``strict``) or ``M ⪰ 0`` on the quadratic form."""

    strict: bool
    holds: bool
    evidence: Union[Factorization, Witness]

    @property
    def claim(self) -> str:
        """The claim in words, e.g. 'not positive definite'."""
        kind = DEFINITE if self.strict else SEMIDEFINITE
        return kind if self.holds else f"not {kind}"

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form; rationals are written as strings like '-3/7'."""
        out: dict[str, object] = {"claim": self.claim, "strict": self.strict, "holds": self.holds}
        e = self.evidence
        if isinstance(e, Factorization):
            out["factorization"] = {
                "order": list(e.order),
                "lower": [[str(v) for v in row] for row in e.lower],
                "pivots": [str(v) for v in e.pivots],
            }
        else:
            out["witness"] = {"vector": [str(v) for v in e.vector], "value": str(e.value)}
        return out

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> "Certificate":
        """Rebuild a certificate from :meth:`as_dict` output (e.g. read back from JSON)."""
        try:
            if "factorization" in data:
                f = data["factorization"]
                evidence: Union[Factorization, Witness] = Factorization(
                    order=tuple(int(k) for k in f["order"]),
                    lower=tuple(tuple(Fraction(v) for v in row) for row in f["lower"]),
                    pivots=tuple(Fraction(v) for v in f["pivots"]),
                )
            else:
                w = data["witness"]
                evidence = Witness(tuple(Fraction(v) for v in w["vector"]), Fraction(w["value"]))
            return cls(strict=bool(data["strict"]), holds=bool(data["holds"]), evidence=evidence)
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as error:
            raise InvalidConfiguration(f"not a certificate: {error!r}") from None


def decide_positive(matrix: MatrixLike, strict: bool = True) -> Certificate:
    """Decide ``M ≻ 0`` (``strict``) or ``M ⪰ 0`` on the quadratic form, exactly.

    Symmetric-pivoted LDLᵀ of the symmetric part over ℚ: at each step the largest positive
    diagonal entry of the Schur complement is the pivot. When none is positive the remaining
    Schur complement ``R`` decides: a negative diagonal entry, a zero one (for ≻), or an
    off-diagonal entry of an all-zero diagonal gives a witness; ``R = 0`` means ⪰ holds.
    """
    s = symmetric_part(matrix)
    n = len(s)
    schur = [list(row) for row in s]
    remaining = list(range(n))
    order: list[int] = []
    multipliers: dict[int, dict[int, Fraction]] = {}  # pivot -> {row index: l_row,pivot}
    pivots: list[Fraction] = []
    while remaining:
        value, p = max((schur[i][i], i) for i in remaining)
        if value <= 0:
            z = _schur_witness(schur, remaining, strict)
            if z is None:  # R = 0: semidefinite with zero pivots for the rest
                break
            x = _integral(_lift(z, order, multipliers, n))
            return Certificate(strict, False, Witness(tuple(x), quadratic_form(s, x)))
        remaining.remove(p)
        order.append(p)
        pivots.append(value)
        column = {i: schur[i][p] / value for i in remaining}
        multipliers[p] = column
        for i in remaining:
            if column[i]:
                for j in remaining:
                    schur[i][j] -= column[i] * schur[p][j]
    order += remaining
    pivots += [Fraction(0)] * len(remaining)
    position = {node: k for k, node in enumerate(order)}
    lower = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
    for p, column in multipliers.items():
        for i, l_ip in column.items():
            lower[position[i]][position[p]] = l_ip
    evidence = Factorization(tuple(order), tuple(tuple(r) for r in lower), tuple(pivots))
    return Certificate(strict, True, evidence)


def _schur_witness(schur: list[list[Fraction]], remaining: list[int], strict: bool) -> dict[int, Fraction] | None:
    """A vector z on ``remaining`` with zᵀ R z < 0 (or = 0 when strict), or None if R = 0."""
    lowest, i = min((schur[i][i], i) for i in remaining)
    if lowest < 0 or (strict and lowest == 0):
        return {i: Fraction(1)}
    for a in remaining:  # all remaining diagonal entries are 0 here
        for b in remaining:
            if a < b and schur[a][b] != 0:
                return {a: Fraction(1), b: Fraction(-1 if schur[a][b] > 0 else 1)}  # form -2|r_ab|
    return None


def _lift(z: dict[int, Fraction], order: list[int], multipliers: dict[int, dict[int, Fraction]], n: int) -> list[Fraction]:
    """Extend z (on the non-pivot indices) to x with xᵀ S x = zᵀ R z: solve Lᵀ x = (0, z)."""
    x = [Fraction(0)] * n
    for i, v in z.items():
        x[i] = v
    for p in reversed(order):  # back substitution through the eliminated pivots
        x[p] = -sum((l_ip * x[i] for i, l_ip in multipliers[p].items()), Fraction(0))
    return x


def _integral(x: list[Fraction]) -> list[Fraction]:
    """x scaled by a positive rational to coprime integers (the form's sign is unchanged)."""
    scale = math.lcm(*(v.denominator for v in x))
    ints = [int(v * scale) for v in x]
    common = math.gcd(*ints) or 1
    return [Fraction(v // common) for v in ints]


def verify_certificate(certificate: Certificate, matrix: MatrixLike) -> bool:
    """Re-check ``certificate`` against ``matrix`` from scratch; False if it proves nothing.

    A factorization must be a permutation, a unit lower-triangular ``L`` and pivots of the
    right sign whose product is exactly the permuted symmetric part; a witness must be a
    non-zero vector whose exactly recomputed quadratic form has the right sign and equals
    the stated value.
    """
    return certificate_defect(certificate, matrix) is None


def certificate_defect(certificate: Certificate, matrix: MatrixLike) -> str | None:
    """Why ``certificate`` does not prove its claim about ``matrix`` (None if it does)."""
    s = symmetric_part(matrix)
    n = len(s)
    e = certificate.evidence
    if certificate.holds != isinstance(e, Factorization):
        return "a holding claim needs a factorization and a failing one a witness"
    if isinstance(e, Witness):
        if len(e.vector) != n:
            return f"witness has length {len(e.vector)}, the matrix is {n}x{n}"
        if not any(e.vector):
            return "the witness vector is zero"
        value = quadratic_form(s, e.vector)
        if value != e.value:
            return f"the witness's quadratic form is {value}, not the stated {e.value}"
        if value > 0 or (value == 0 and not certificate.strict):
            return f"the witness's quadratic form {value} does not contradict the claim"
        return None
    if sorted(e.order) != list(range(n)) or len(e.pivots) != n or len(e.lower) != n:
        return "the factorization's order, pivots or L have the wrong size"
    lower = e.lower
    if any(len(row) != n for row in lower):
        return "L is not square"
    if any(lower[i][i] != 1 for i in range(n)) or any(lower[i][j] for i in range(n) for j in range(i + 1, n)):
        return "L is not unit lower triangular"
    if any(d < 0 or (certificate.strict and d == 0) for d in e.pivots):
        return "a pivot has the wrong sign for the claim"
    for a in range(n):
        for b in range(a + 1):
            product = sum((lower[a][k] * e.pivots[k] * lower[b][k] for k in range(b + 1)), Fraction(0))
            if product != s[e.order[a]][e.order[b]]:
                return f"L diag(d) Lᵀ differs from the permuted matrix at ({a}, {b})"
    return None


def null_direction(factorization: Factorization) -> tuple[Fraction, ...] | None:
    """A vector x ≠ 0 with xᵀ S x = 0 from a zero pivot of ``P S Pᵀ = L D Lᵀ`` (None if none).

    Solves ``Lᵀ y = e_k`` for the last zero pivot k; then xᵀSx = d_k = 0.
    """
    zeros = [k for k, d in enumerate(factorization.pivots) if d == 0]
    if not zeros:
        return None
    n, lower = len(factorization.pivots), factorization.lower
    y = [Fraction(0)] * n
    y[zeros[-1]] = Fraction(1)
    for a in range(zeros[-1] - 1, -1, -1):
        y[a] = -sum((lower[b][a] * y[b] for b in range(a + 1, n)), Fraction(0))
    x = [Fraction(0)] * n
    for k, node in enumerate(factorization.order):
        x[node] = y[k]
    return tuple(x)
