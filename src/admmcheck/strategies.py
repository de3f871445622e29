"""Public Hypothesis strategies for networks and consensus problems.

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
