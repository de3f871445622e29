"""Connected undirected networks and the matrices the ADMM analyses use.

M-ADMM paper §3.2: adjacency A (a_ij = 1 iff i and j are connected), degree matrix
D = diag(V_1, ..., V_N), Laplacian D - A and signless Laplacian D + A.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from admmcheck.foundations.errors import InvalidNetwork
from admmcheck.foundations.inputs import read_text_file

if TYPE_CHECKING:
    import networkx as nx

GRAPH_KINDS = ("ring", "path", "star", "complete", "random")


@dataclass(frozen=True, eq=False)
class Network:
    """A connected, simple, undirected graph on nodes 0..N-1.

    Build it with :func:`network_from_graph` (validates any networkx graph) or one of
    the generators; node ``k`` of the network is the ``k``-th node of the input graph in
    sorted order, recorded in ``labels``.
    """

    adjacency: np.ndarray
    labels: tuple[object, ...]
    name: str = "custom"

    @property
    def nodes(self) -> int:
        """Number of nodes N."""
        return self.adjacency.shape[0]

    @cached_property
    def degrees(self) -> np.ndarray:
        """Neighbour counts V_i, shape (N,)."""
        return self.adjacency.sum(axis=1)

    @cached_property
    def degree_matrix(self) -> np.ndarray:
        """D = diag(V_1, ..., V_N)."""
        return np.diag(self.degrees)

    @cached_property
    def laplacian(self) -> np.ndarray:
        """The Laplacian D - A."""
        return self.degree_matrix - self.adjacency

    @cached_property
    def signless_laplacian(self) -> np.ndarray:
        """The signless Laplacian D + A."""
        return self.degree_matrix + self.adjacency

    @cached_property
    def edges(self) -> tuple[tuple[int, int], ...]:
        """Undirected edges (i, j) with i < j."""
        i, j = np.nonzero(np.triu(self.adjacency, k=1))
        return tuple(zip(i.tolist(), j.tolist()))

    def neighbors(self, i: int) -> tuple[int, ...]:
        """The neighbour set V_i of node i (excluding i)."""
        return tuple(np.nonzero(self.adjacency[i])[0].tolist())

    def to_networkx(self) -> nx.Graph:
        """Return the network as a networkx graph on nodes 0..N-1."""
        import networkx as nx

        return nx.from_numpy_array(self.adjacency)


def network_from_graph(graph: nx.Graph, name: str = "custom") -> Network:
    """Validate a networkx graph and return it as a :class:`Network`.

    Raises :class:`InvalidNetwork` for directed graphs, multigraphs, self-loops, fewer
    than two nodes, or a disconnected graph (naming its components).
    """
    import networkx as nx

    if not isinstance(graph, nx.Graph):
        raise InvalidNetwork(
            f"expected a networkx.Graph, got {type(graph).__name__}; build one with networkx"
        )
    if graph.is_directed():
        raise InvalidNetwork(
            "the graph is directed; the ADMM papers assume an undirected network "
            "(use graph.to_undirected())"
        )
    if graph.is_multigraph():
        raise InvalidNetwork("the graph is a multigraph; pass a simple networkx.Graph")
    if graph.number_of_nodes() < 2:
        raise InvalidNetwork(
            f"the graph has {graph.number_of_nodes()} node(s); a network needs at least 2"
        )
    loops = sorted(nx.nodes_with_selfloops(graph), key=repr)
    if loops:
        raise InvalidNetwork(
            f"the graph has self-loops at nodes {loops[:10]}; remove them "
            "(graph.remove_edges_from(nx.selfloop_edges(graph)))"
        )
    if not nx.is_connected(graph):
        components = sorted(
            (sorted(c, key=repr) for c in nx.connected_components(graph)),
            key=lambda c: repr(c[0]),
        )
        shown = "; ".join(str(c) for c in components[:5])
        more = "" if len(components) <= 5 else f" and {len(components) - 5} more"
        raise InvalidNetwork(
            f"the graph is disconnected: {len(components)} components {shown}{more}; "
            "the papers require a connected network, add edges joining the components"
        )
    labels = tuple(sorted(graph.nodes, key=_label_order))
    adjacency = nx.to_numpy_array(graph, nodelist=list(labels), weight=None, dtype=np.int64)
    adjacency.setflags(write=False)
    return Network(adjacency=adjacency, labels=labels, name=name)


def _label_order(label: object) -> tuple[int, object]:
    """Integers in numeric order (2 before 10), then anything else by repr."""
    if isinstance(label, (int, np.integer)) and not isinstance(label, bool):
        return (0, int(label))
    return (1, repr(label))


def network_from_edge_list(path: str | Path) -> Network:
    """Read an edge-list file: one edge "i j" per line, i and j non-negative integer node labels.

    Blank lines and text after ``#`` are ignored. Every anticipated problem (missing,
    unreadable or binary file, a line without exactly two integer labels, a self-loop, an
    edge listed twice, a disconnected graph) is an :class:`InvalidNetwork` naming the file
    and line. Node k of the network is the k-th smallest label.
    """
    import networkx as nx

    file = Path(path)
    text = read_text_file(file, "edge-list file", InvalidNetwork, "one edge 'i j' per line")
    graph = nx.Graph()
    seen: dict[tuple[int, int], int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        tokens = line.split("#", 1)[0].split()
        if not tokens:
            continue
        if len(tokens) != 2 or not all(token.isascii() and token.isdigit() for token in tokens):
            raise InvalidNetwork(
                f"{file}:{number}: expected two non-negative integer node labels 'i j', got {line.strip()[:60]!r}"
            )
        i, j = int(tokens[0]), int(tokens[1])
        if i == j:
            raise InvalidNetwork(f"{file}:{number}: self-loop {i} {j}; the networks have no self-loops")
        edge = (min(i, j), max(i, j))
        if edge in seen:
            raise InvalidNetwork(f"{file}:{number}: the edge {i} {j} is already listed on line {seen[edge]}")
        seen[edge] = number
        graph.add_edge(i, j)
    if not seen:
        raise InvalidNetwork(f"{file} lists no edges; write one edge 'i j' per line")
    return network_from_graph(graph, name=file.name)


def _require_nodes(kind: str, nodes: int, minimum: int) -> None:
    if isinstance(nodes, bool) or not isinstance(nodes, (int, np.integer)) or nodes < minimum:
        raise InvalidNetwork(f"a {kind} network needs an integer number of nodes >= {minimum}, got {nodes!r}")


def ring(nodes: int) -> Network:
    """Cycle graph C_N (N >= 3)."""
    import networkx as nx

    _require_nodes("ring", nodes, 3)
    return network_from_graph(nx.cycle_graph(nodes), name=f"ring:{nodes}")


def path(nodes: int) -> Network:
    """Path graph P_N (N >= 2)."""
    import networkx as nx

    _require_nodes("path", nodes, 2)
    return network_from_graph(nx.path_graph(nodes), name=f"path:{nodes}")


def star(nodes: int) -> Network:
    """Star with centre 0 and N-1 leaves (N >= 2)."""
    import networkx as nx

    _require_nodes("star", nodes, 2)
    return network_from_graph(nx.star_graph(nodes - 1), name=f"star:{nodes}")


def complete(nodes: int) -> Network:
    """Complete graph K_N (N >= 2)."""
    import networkx as nx

    _require_nodes("complete", nodes, 2)
    return network_from_graph(nx.complete_graph(nodes), name=f"complete:{nodes}")


def random_connected(nodes: int, seed: int, edge_probability: float = 0.3) -> Network:
    """A random connected graph: a uniform random labelled tree plus each other edge
    independently with probability ``edge_probability``; reproducible from ``seed``."""
    import networkx as nx

    _require_nodes("random", nodes, 2)
    if not 0.0 <= edge_probability <= 1.0:
        raise InvalidNetwork(f"edge_probability={edge_probability!r} must lie in [0, 1]")
    rng = np.random.default_rng(seed)
    graph = nx.Graph()
    graph.add_nodes_from(range(nodes))
    order = rng.permutation(nodes)
    for k in range(1, nodes):  # random recursive tree: connected by construction
        graph.add_edge(int(order[k]), int(order[rng.integers(k)]))
    for i in range(nodes):
        for j in range(i + 1, nodes):
            if not graph.has_edge(i, j) and rng.random() < edge_probability:
                graph.add_edge(i, j)
    return network_from_graph(graph, name=f"random:{nodes}:seed={seed}")


def network_by_name(kind: str, nodes: int, seed: int = 0) -> Network:
    """Return the generator network ``kind`` (one of :data:`GRAPH_KINDS`) on ``nodes`` nodes."""
    builders = {"ring": ring, "path": path, "star": star, "complete": complete}
    if kind == "random":
        return random_connected(nodes, seed=seed)
    if kind not in builders:
        raise InvalidNetwork(f"unknown graph kind {kind!r}; choose one of {', '.join(GRAPH_KINDS)}")
    return builders[kind](nodes)
