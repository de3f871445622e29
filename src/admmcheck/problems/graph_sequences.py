"""Time-varying graphs and their mixing matrices, for the DPSDA paper (§2.3, §4.1, §5.1).

* undirected sequences with a row-stochastic W(t) (DPSDA-C): W(t)1 = 1, [W]_ii ≥ ϕ and
  [W]_ij ≥ ϕ on edges (§4.1). The paper's experiment weights are W_ij = 1/deg_i(t) (deg
  counting i itself), row- but not column-stochastic; the proof of its Lemma 2(a) needs a
  symmetric W, which ``weights="metropolis"`` gives (W_ij = 1/(1 + max(d_i, d_j))).
* directed sequences with a column-stochastic A(t), [A]_ij = 1/deg_j^out(t) for j → i
  (deg counting j itself), DPSDA-PS (§5.1).

Connectivity (the paper's B-strong connectivity): the union of the edges of every window
(t−1)B+1 … tB is (strongly) connected. :func:`validate_sequence` checks that and the
stochasticity of every matrix, naming the step or window that fails. Generators are seeded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.validation import positive_int

STOCHASTIC_TOL = 1e-12


@dataclass(frozen=True, eq=False)
class GraphSequence:
    """Mixing matrices ``matrices[t]`` (T, n, n) for t = 1..T (index t−1), ``directed`` or not,
    with the connectivity window ``window`` B the sequence was built (or checked) for."""

    matrices: np.ndarray
    directed: bool
    window: int

    @property
    def nodes(self) -> int:
        return self.matrices.shape[1]

    @property
    def steps(self) -> int:
        return self.matrices.shape[0]

    def at(self, t: int) -> np.ndarray:
        """W(t) or A(t), t = 1..T (cycled when a run is longer than the sequence)."""
        return self.matrices[(t - 1) % self.steps]

    @property
    def smallest_weight(self) -> float:
        """ϕ: the smallest positive entry over the sequence (§4.1)."""
        return float(self.matrices[self.matrices > 0].min())


def _edges_of(matrix: np.ndarray) -> np.ndarray:
    off = matrix.copy()
    np.fill_diagonal(off, 0.0)
    return off > 0


def connected(edges: np.ndarray, directed: bool) -> bool:
    """Whether the graph with ``edges[i, j]`` for j → i (or i — j) is (strongly) connected."""
    import networkx as nx

    graph = nx.from_numpy_array(np.asarray(edges).T.astype(int), create_using=nx.DiGraph if directed else nx.Graph)
    return nx.is_strongly_connected(graph) if directed else nx.is_connected(graph)


def connected_every_step(sequence: GraphSequence) -> bool:
    """Whether every single step's graph is (strongly) connected (window 1)."""
    return all(connected(_edges_of(m), sequence.directed) for m in sequence.matrices)


def validate_sequence(sequence: GraphSequence) -> None:
    """Raise :class:`InvalidConfiguration` naming the step (stochasticity) or the window
    (connectivity) that breaks the assumptions of §4.1 / §5.1."""
    kind = "column" if sequence.directed else "row"
    axis = 0 if sequence.directed else 1
    for t, matrix in enumerate(sequence.matrices, start=1):
        if np.any(matrix < 0) or not np.all(np.isfinite(matrix)):
            raise InvalidConfiguration(f"the mixing matrix at step t={t} has a negative or non-finite entry")
        sums = matrix.sum(axis=axis)
        worst = int(np.argmax(np.abs(sums - 1.0)))
        if abs(sums[worst] - 1.0) > STOCHASTIC_TOL:
            raise InvalidConfiguration(
                f"the mixing matrix at step t={t} is not {kind}-stochastic: {kind} {worst} sums to {sums[worst]:.6g}"
                f" ({'DPSDA-PS needs A(t) column-stochastic' if sequence.directed else 'DPSDA-C needs W(t)1 = 1'})")
        if np.any(np.diag(matrix) <= 0):
            raise InvalidConfiguration(f"the mixing matrix at step t={t} has a zero diagonal entry; every node keeps "
                                       "a positive weight on itself (§4.1: [W]_ii >= phi > 0)")
    B = sequence.window
    for start in range(0, sequence.steps, B):
        union = np.any([_edges_of(m) for m in sequence.matrices[start:start + B]], axis=0)
        if not connected(union, sequence.directed):
            what = "strongly connected" if sequence.directed else "connected"
            raise InvalidConfiguration(
                f"the union of the graphs of steps t={start + 1}..{min(start + B, sequence.steps)} (window of B={B}) is "
                f"not {what}; the sequence is not B-{'strongly ' if sequence.directed else ''}connected: add edges "
                "there or raise B")


def undirected_weights(adjacency: np.ndarray, weights: str = "uniform") -> np.ndarray:
    """W for one undirected graph: ``uniform`` 1/deg_i (the paper's), ``metropolis`` symmetric."""
    a = (np.asarray(adjacency) > 0).astype(float)
    np.fill_diagonal(a, 0.0)
    degree = a.sum(axis=1)
    if weights == "uniform":
        w = (a + np.eye(len(a))) / (degree + 1.0)[:, None]
    elif weights == "metropolis":
        w = a / (1.0 + np.maximum(degree[:, None], degree[None, :]))
        np.fill_diagonal(w, 1.0 - w.sum(axis=1))
    else:
        raise InvalidConfiguration(f"unknown weights {weights!r}; choose uniform or metropolis")
    return w


def directed_weights(adjacency: np.ndarray) -> np.ndarray:
    """A for one digraph, ``adjacency[i, j] = 1`` for an edge j → i: A_ij = 1/deg_j^out (self included)."""
    a = (np.asarray(adjacency) > 0).astype(float)
    np.fill_diagonal(a, 1.0)
    return a / a.sum(axis=0)[None, :]


def random_sequence(nodes: int, steps: int, window: int, seed: int, directed: bool = False,
                    weights: str = "uniform", extra_edges: float = 0.1) -> GraphSequence:
    """A seeded sequence whose every window of ``window`` steps has a (strongly) connected union:
    the edges of a random spanning cycle (directed) or spanning tree (undirected) are spread
    over the window's steps, plus each other edge with probability ``extra_edges`` per step."""
    nodes, steps, window = positive_int("nodes", nodes), positive_int("steps", steps), positive_int("window", window)
    if nodes < 2:
        raise InvalidConfiguration("a graph sequence needs at least 2 nodes")
    rng = np.random.default_rng(seed)
    matrices = []
    for start in range(0, steps, window):
        order = rng.permutation(nodes)
        if directed:
            backbone = [(order[k], order[(k + 1) % nodes]) for k in range(nodes)]  # j -> i as (j, i)
        else:
            backbone = [(order[k], order[rng.integers(0, k)]) for k in range(1, nodes)]
        length = min(window, steps - start)  # the last window may be cut short by T
        slots = rng.integers(0, length, size=len(backbone))
        for offset in range(length):
            adjacency = (rng.random((nodes, nodes)) < extra_edges).astype(float)
            np.fill_diagonal(adjacency, 0.0)
            for (j, i), slot in zip(backbone, slots):
                if slot == offset:
                    adjacency[i, j] = 1.0
            if not directed:
                adjacency = np.maximum(adjacency, adjacency.T)
            matrices.append(directed_weights(adjacency) if directed else undirected_weights(adjacency, weights))
    sequence = GraphSequence(np.array(matrices), directed, window)
    validate_sequence(sequence)
    return sequence


def fixed_sequence(adjacency: np.ndarray, steps: int, directed: bool, weights: str = "uniform") -> GraphSequence:
    """The same graph at every step (window 1)."""
    matrix = directed_weights(adjacency) if directed else undirected_weights(adjacency, weights)
    sequence = GraphSequence(np.repeat(matrix[None], positive_int("steps", steps), axis=0), directed, 1)
    validate_sequence(sequence)
    return sequence
