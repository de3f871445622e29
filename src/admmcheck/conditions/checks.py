"""One result type for every checked condition or proof-step claim."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from admmcheck.conditions.certificates import (
    Certificate,
    RationalMatrix,
    decide_positive,
    rational_matrix,
    verify_certificate,
)


@dataclass(frozen=True)
class ConditionCheck:
    """A condition of a theorem (or a claim its proof uses) decided for concrete values.

    ``holds`` is True/False when decided exactly, None when a certified interval could not
    separate it from its boundary at the precision tried. For a matrix claim ``M ≻ 0`` or
    ``M ⪰ 0`` (on the quadratic form), ``matrix`` is M and ``certificate`` proves the verdict.
    """

    name: str
    statement: str
    holds: bool | None
    certificate: Certificate | None = None
    matrix: RationalMatrix | None = None
    details: dict[str, object] = field(default_factory=dict)

    def verify(self) -> bool:
        """Re-check the certificate against the matrix (True for checks without one)."""
        if self.certificate is None or self.matrix is None:
            return True
        return verify_certificate(self.certificate, self.matrix) and self.certificate.holds == self.holds

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"name": self.name, "statement": self.statement, "holds": self.holds}
        out["certificate"] = None if self.certificate is None else self.certificate.as_dict()
        if self.matrix is not None:
            out["matrix"] = [[str(v) for v in row] for row in self.matrix]
        out.update(self.details)
        return out


def matrix_check(name: str, statement: str, matrix: sympy.Matrix, strict: bool = True, **details: object) -> ConditionCheck:
    """Decide ``matrix ≻ 0`` (``strict``) or ``⪰ 0`` on its quadratic form, with a certificate."""
    exact = rational_matrix(matrix)
    certificate = decide_positive(exact, strict=strict)
    return ConditionCheck(name, statement, certificate.holds, certificate, exact, dict(details))
