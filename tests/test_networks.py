"""Networks: matrices against closed forms, generators, and validation messages."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from admmcheck.foundations.errors import InvalidNetwork
from admmcheck.problems.networks import complete, network_by_name, network_from_graph, path, random_connected, ring, star


def test_ring_laplacian_spectrum_matches_closed_form():
    n = 7
    net = ring(n)
    expected = np.sort(2 - 2 * np.cos(2 * np.pi * np.arange(n) / n))
    np.testing.assert_allclose(np.linalg.eigvalsh(net.laplacian), expected, atol=1e-12)
    np.testing.assert_array_equal(net.degrees, np.full(n, 2))


def test_matrices_of_a_path():
    net = path(3)
    np.testing.assert_array_equal(net.adjacency, [[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    np.testing.assert_array_equal(net.laplacian, [[1, -1, 0], [-1, 2, -1], [0, -1, 1]])
    np.testing.assert_array_equal(net.signless_laplacian, [[1, 1, 0], [1, 2, 1], [0, 1, 1]])
    assert net.edges == ((0, 1), (1, 2))
    assert net.neighbors(1) == (0, 2)


def test_star_and_complete_degrees():
    np.testing.assert_array_equal(star(5).degrees, [4, 1, 1, 1, 1])
    np.testing.assert_array_equal(complete(4).degrees, [3, 3, 3, 3])


def test_laplacians_are_psd_and_null_space_is_constants():
    net = random_connected(9, seed=3)
    assert np.linalg.eigvalsh(net.laplacian)[0] == pytest.approx(0.0, abs=1e-12)
    assert np.linalg.eigvalsh(net.laplacian)[1] > 1e-9
    assert np.linalg.eigvalsh(net.signless_laplacian)[0] >= -1e-12
    np.testing.assert_allclose(net.laplacian @ np.ones(9), 0.0)


def test_random_graph_is_reproducible_and_seed_dependent():
    a, b = random_connected(10, seed=1), random_connected(10, seed=1)
    np.testing.assert_array_equal(a.adjacency, b.adjacency)
    assert any(not np.array_equal(a.adjacency, random_connected(10, seed=s).adjacency) for s in range(2, 6))
    assert nx.is_connected(a.to_networkx())


def test_disconnected_graph_names_its_components():
    graph = nx.Graph([(0, 1), (2, 3), (3, 4)])
    with pytest.raises(InvalidNetwork, match=r"disconnected: 2 components \[0, 1\]; \[2, 3, 4\]"):
        network_from_graph(graph)


def test_self_loop_is_rejected():
    graph = nx.Graph([(0, 1), (1, 1)])
    with pytest.raises(InvalidNetwork, match=r"self-loops at nodes \[1\]"):
        network_from_graph(graph)


def test_directed_and_multigraphs_are_rejected():
    with pytest.raises(InvalidNetwork, match="directed"):
        network_from_graph(nx.DiGraph([(0, 1)]))
    with pytest.raises(InvalidNetwork, match="multigraph"):
        network_from_graph(nx.MultiGraph([(0, 1)]))
    with pytest.raises(InvalidNetwork, match="expected a networkx.Graph"):
        network_from_graph([(0, 1)])


def test_single_node_is_rejected():
    graph = nx.Graph()
    graph.add_node("a")
    with pytest.raises(InvalidNetwork, match="1 node"):
        network_from_graph(graph)


def test_labels_keep_the_input_node_names():
    net = network_from_graph(nx.Graph([("b", "a"), ("a", "c")]))
    assert net.labels == ("a", "b", "c")
    np.testing.assert_array_equal(net.degrees, [2, 1, 1])


def test_generator_arguments_are_validated():
    with pytest.raises(InvalidNetwork, match="ring network needs an integer number of nodes >= 3"):
        ring(2)
    with pytest.raises(InvalidNetwork, match="unknown graph kind 'torus'"):
        network_by_name("torus", 4)
