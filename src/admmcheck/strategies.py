"""Public Hypothesis strategies: networks, consensus problems, penalty schedules, neighbour pairs.

Use them in your own property tests::

    from hypothesis import given
    from admmcheck.strategies import connected_networks, consensus_problems

    @given(connected_networks(min_nodes=3, max_nodes=6))
    def test_something(network): ...
"""

from __future__ import annotations

import networkx as nx
import numpy as np
from hypothesis import strategies as st

from admmcheck.errors import InvalidConfiguration
from admmcheck.networks import Network, network_from_graph
from admmcheck.problems import ConsensusProblem


@st.composite
def connected_networks(draw: st.DrawFn, min_nodes: int = 2, max_nodes: int = 8) -> Network:
    """Connected simple graphs: a random spanning tree plus random extra edges."""
    if not 2 <= min_nodes <= max_nodes:
        raise InvalidConfiguration(
            f"need 2 <= min_nodes <= max_nodes, got min_nodes={min_nodes}, max_nodes={max_nodes}"
        )
    n = draw(st.integers(min_nodes, max_nodes))
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    for k in range(1, n):
        graph.add_edge(k, draw(st.integers(0, k - 1)))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if not graph.has_edge(i, j)]
    if pairs:
        graph.add_edges_from(draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs))))
    return network_from_graph(graph, name=f"hypothesis:{n}")


@st.composite
def consensus_problems(
    draw: st.DrawFn,
    nodes: int,
    min_dim: int = 1,
    max_dim: int = 6,
    min_samples: int = 1,
    max_samples: int = 30,
) -> ConsensusProblem:
    """Logistic consensus problems on ``nodes`` nodes with ||x|| <= 1 and labels in {-1, +1}."""
    dim = draw(st.integers(min_dim, max_dim))
    sizes = draw(st.lists(st.integers(min_samples, max_samples), min_size=nodes, max_size=nodes))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    features, labels = [], []
    for b in sizes:
        x = rng.standard_normal((b, dim))
        x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1.0)
        features.append(x)
        labels.append(np.where(rng.random(b) < 0.5, -1.0, 1.0))
    C = draw(st.floats(0.1, float(min(sizes)), allow_nan=False))
    rho = draw(st.floats(0.05, 5.0, allow_nan=False))
    return ConsensusProblem(tuple(features), tuple(labels), C=C, rho=rho)


@st.composite
def networks_and_problems(draw: st.DrawFn, min_nodes: int = 2, max_nodes: int = 6, max_dim: int = 4,
                          max_samples: int = 15) -> tuple[Network, ConsensusProblem]:
    """A connected network and a consensus problem with one partition per node."""
    network = draw(connected_networks(min_nodes=min_nodes, max_nodes=max_nodes))
    return network, draw(consensus_problems(network.nodes, max_dim=max_dim, max_samples=max_samples))


@st.composite
def nondecreasing_schedules(draw: st.DrawFn, iterations: int, nodes: int, low: float = 0.1,
                            high: float = 5.0) -> np.ndarray:
    """(T, N) tables eta_i(t) that never decrease in t (the shape Theorem 3.1 asks of M-ADMM's penalties)."""
    start = np.array(draw(st.lists(st.floats(low, high), min_size=nodes, max_size=nodes)))
    growth = np.array(draw(st.lists(st.floats(1.0, 1.2), min_size=nodes, max_size=nodes)))
    return start[None, :] * growth[None, :] ** np.arange(iterations)[:, None]


@st.composite
def neighbour_pairs(draw: st.DrawFn, problem: ConsensusProblem) -> tuple[ConsensusProblem, ConsensusProblem]:
    """(D, D′) differing in one record of one node: a label flip or the features moved to −x
    (the replace-one neighbours of both papers, :func:`admmcheck.audit.reference.replace_one_record`)."""
    from admmcheck.audit.reference import replace_one_record

    node = draw(st.integers(0, problem.nodes - 1))
    index = draw(st.integers(0, problem.sizes[node] - 1))
    return replace_one_record(problem, node, index, draw(st.sampled_from(["label-flip", "feature-move"])))
