"""The graph matrices of the analyses in exact rational arithmetic.

R-ADMM paper §III (after (19)) and M-ADMM paper §3.2: adjacency ``A``, degree matrix
``D = diag(V_i)``, Laplacian ``D - A`` and signless Laplacian ``D + A``; R-ADMM (24)-(27)
also use the Moore-Penrose pseudo-inverse ``(D - A)⁺``.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from admmcheck.problems.networks import Network


@dataclass(frozen=True, eq=False)
class ExactGraph:
    """Exact (sympy, integer/rational) matrices of a connected network."""

    name: str
    adjacency: sympy.Matrix
    degree: sympy.Matrix

    @property
    def nodes(self) -> int:
        return self.adjacency.shape[0]

    @property
    def degrees(self) -> tuple[int, ...]:
        """V_i, the neighbour counts."""
        return tuple(int(self.degree[i, i]) for i in range(self.nodes))

    @property
    def laplacian(self) -> sympy.Matrix:
        """D - A."""
        return self.degree - self.adjacency

    @property
    def signless_laplacian(self) -> sympy.Matrix:
        """D + A."""
        return self.degree + self.adjacency

    @property
    def laplacian_pinv(self) -> sympy.Matrix:
        """(D - A)⁺ for a connected graph: (D - A + J/N)⁻¹ - J/N with J the all-ones matrix.

        On a connected graph Null(D - A) = span(1), so adding J/N replaces the zero
        eigenvalue by 1 without touching the others; subtracting J/N afterwards removes it.
        """
        n = self.nodes
        j = sympy.ones(n, n) / n
        return (self.laplacian + j).inv() - j


def exact_graph(network: Network) -> ExactGraph:
    """Exact matrices of ``network`` (its adjacency is integer already)."""
    adjacency = sympy.Matrix(network.adjacency.astype(int).tolist())
    degree = sympy.diag(*[sum(adjacency.row(i)) for i in range(adjacency.shape[0])])
    return ExactGraph(network.name, adjacency, degree)
