"""The public Hypothesis strategies of admmcheck.strategies draw what their docstrings promise:
the shapes, and the invariants the papers' assumptions need, checked by independent computation;
the same Hypothesis choices give the same objects; bad arguments are refused when called."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from admmcheck import strategies
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.strategies import (
    graph_sequences,
    graph_sequences_and_online_problems,
    online_problems,
    sharing_problems,
)

#: Few, derandomised examples whichever Hypothesis profile is loaded: this file must stay fast.
FEW = settings(max_examples=15, deadline=None, derandomize=True, database=None,
               suppress_health_check=[HealthCheck.too_slow])


def all_reachable(edges: np.ndarray) -> bool:
    """Every node reaches every node along ``edges`` (boolean (n, n)): transitive closure by squaring."""
    n = len(edges)
    reach = np.eye(n, dtype=bool) | edges
    for _ in range(int(np.ceil(np.log2(max(n, 2)))) + 1):
        reach = reach | ((reach.astype(np.int64) @ reach.astype(np.int64)) > 0)
    return bool(reach.all())


def off_diagonal_edges(matrix: np.ndarray) -> np.ndarray:
    edges = np.asarray(matrix) > 0
    np.fill_diagonal(edges, False)
    return edges


# ----------------------------------------------------------------------------- sharing problems
@FEW
@given(sharing_problems())
def test_sharing_problems_have_consistent_blocks_and_full_rank(problem):
    widths = [block.shape[1] for block in problem.parts]
    design = np.hstack(problem.parts)
    assert 1 <= len(widths) <= 4 and all(1 <= w <= 3 for w in widths)
    assert sum(widths) == design.shape[1] == problem.dim
    assert list(np.diff(problem.offsets)) == widths
    rows = {block.shape[0] for block in problem.parts}
    assert rows == {len(problem.labels)} and design.shape[1] + 5 <= len(problem.labels) <= 80
    assert set(np.unique(problem.labels)) <= {-1.0, 1.0}
    for block in problem.parts:  # Assumption 1.1: every D_m has full column rank
        assert np.linalg.matrix_rank(block) == block.shape[1]
    assert np.all(np.linalg.norm(design, axis=1) <= 1.0 + 1e-12)  # rows of D in the unit ball
    assert 0.01 <= problem.lam <= 1.0 and problem.box is None


@FEW
@given(sharing_problems(min_parties=2, max_parties=3, min_width=2, max_width=2, min_samples=30, max_samples=40,
                        min_lam=0.5, max_lam=0.5, normalise_rows=True, box=2.0))
def test_normalised_sharing_problems_have_unit_rows_in_every_block(problem):
    assert 2 <= problem.parties <= 3 and problem.widths == (2,) * problem.parties
    assert 30 <= problem.samples <= 40
    assert problem.lam == 0.5 and problem.box == 2.0
    for block in problem.parts:  # Assumption 2.3, computed here rather than read from the problem
        np.testing.assert_allclose(np.sqrt(np.sum(block**2, axis=1)), 1.0, rtol=0, atol=1e-12)
    assert problem.normalisation_error() is None


# ----------------------------------------------------------------------------- online problems
@FEW
@given(st.data())
def test_online_problems_split_the_coordinates_among_the_nodes(data):
    nodes = data.draw(st.integers(1, 5), label="nodes")
    rounds = data.draw(st.integers(1, 8), label="rounds")
    problem = data.draw(online_problems(nodes, rounds, min_block=1, max_block=3, max_batch=3))
    assert problem.nodes == nodes and problem.rounds == rounds
    assert problem.features.shape[0] == rounds and problem.features.shape[2] == problem.dim
    assert problem.targets.shape == problem.features.shape[:2]
    assert nodes <= problem.dim <= 3 * nodes
    # node i controls a block of consecutive coordinates, the blocks partition 0..d-1, sizes 1..3
    sizes = np.bincount(problem.owner, minlength=nodes)
    assert np.all((1 <= sizes) & (sizes <= 3)) and sizes.sum() == problem.dim
    assert np.all(np.diff(problem.owner) >= 0)
    np.testing.assert_array_equal(problem.block_mask.sum(axis=0), 1.0)
    np.testing.assert_array_equal(problem.block_mask.sum(axis=1), sizes)
    if problem.loss == "squared":  # §6.1: one sample per round, a(t) on [-0.5, 0.5]^d, box of radius 5
        assert problem.set_kind == "box" and problem.features.shape[1] == 1
        assert np.all(np.abs(problem.features) <= 0.5)
    else:  # §6.2: batches of 1..3 samples with ||a|| <= 1 and +-1 labels, ball of radius 5
        assert problem.loss == "logistic" and problem.set_kind == "ball"
        assert 1 <= problem.features.shape[1] <= 3
        assert np.all(np.linalg.norm(problem.features, axis=2) <= 1.0 + 1e-12)
        assert set(np.unique(problem.targets)) <= {-1.0, 1.0}
    assert problem.radius == 5.0 and np.isfinite(problem.gradient_bound)


@FEW
@given(online_problems(3, 4, losses=("logistic",), max_batch=2, radius=1.5),
       online_problems(2, 4, losses="squared", min_block=2, max_block=2))
def test_online_problems_keep_to_the_losses_blocks_and_radius_asked(logistic, squared):
    assert logistic.loss == "logistic" and logistic.radius == 1.5 and logistic.features.shape[1] <= 2
    assert squared.loss == "squared" and squared.dim == 4
    np.testing.assert_array_equal(squared.owner, [0, 0, 1, 1])


# ----------------------------------------------------------------------------- graph sequences
@FEW
@given(st.data())
def test_graph_sequences_are_stochastic_and_connected_over_every_window(data):
    nodes = data.draw(st.integers(2, 6), label="nodes")
    rounds = data.draw(st.integers(1, 12), label="rounds")
    directed = data.draw(st.sampled_from([False, True, None]), label="directed")
    sequence = data.draw(graph_sequences(nodes, rounds, directed, max_window=4))
    matrices = sequence.matrices
    assert matrices.shape == (rounds, nodes, nodes)
    assert directed is None or sequence.directed is directed
    assert 1 <= sequence.window <= 4
    assert np.all(matrices >= 0) and np.all(np.diagonal(matrices, axis1=1, axis2=2) > 0)
    if sequence.directed:  # DPSDA-PS: A(t) column-stochastic
        np.testing.assert_allclose(matrices.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    else:  # DPSDA-C with Metropolis weights: W(t) symmetric, so doubly stochastic (Lemma 2(a))
        np.testing.assert_allclose(matrices.sum(axis=2), 1.0, rtol=0, atol=1e-12)
        np.testing.assert_allclose(matrices, np.transpose(matrices, (0, 2, 1)), rtol=0, atol=1e-15)
    B = sequence.window
    for start in range(0, rounds, B):  # B-(strong) connectivity: the union of each window
        union = np.any([off_diagonal_edges(m) for m in matrices[start:start + B]], axis=0)
        assert all_reachable(union), f"window starting at t={start + 1} is not connected"


@FEW
@given(graph_sequences(5, 9, directed=False, min_window=3, max_window=3, max_extra_edges=0.0),
       graph_sequences(4, 6, directed=True, min_window=2, max_window=2, max_extra_edges=0.0))
def test_without_extra_edges_each_window_is_a_spanning_tree_or_cycle(tree, cycle):
    assert tree.window == 3 and cycle.window == 2
    for sequence, expected in ((tree, 5 - 1), (cycle, 4)):
        B = sequence.window
        for start in range(0, sequence.steps, B):
            union = np.any([off_diagonal_edges(m) for m in sequence.matrices[start:start + B]], axis=0)
            count = union.sum() // 2 if not sequence.directed else union.sum()
            assert count == expected and all_reachable(union)


@FEW
@given(graph_sequences(5, 6, weights="uniform"))
def test_uniform_weights_are_the_papers_one_over_degree(sequence):
    for matrix in sequence.matrices:
        support = matrix > 0  # the node itself and its neighbours, each weighted 1/(deg_i + 1)
        np.testing.assert_allclose(matrix[support], np.repeat(1.0 / support.sum(axis=1), support.sum(axis=1)))


@FEW
@given(graph_sequences_and_online_problems(min_nodes=2, max_nodes=4, rounds=7, directed=True, max_block=2))
def test_a_sequence_and_an_online_problem_share_nodes_and_rounds(case):
    sequence, problem = case
    assert sequence.nodes == problem.nodes and 2 <= problem.nodes <= 4
    assert sequence.steps == problem.rounds == 7
    assert sequence.directed and problem.nodes <= problem.dim <= 2 * problem.nodes


# ----------------------------------------------------------------------------- reproducibility
def _fingerprints(strategy) -> list[bytes]:
    found: list[bytes] = []

    @settings(max_examples=6, derandomize=True, database=None, deadline=None, phases=[Phase.generate])
    @given(strategy)
    def collect(value):
        arrays = value if isinstance(value, tuple) else (value,)
        found.append(b"".join(np.ascontiguousarray(a).tobytes() for obj in arrays for a in _arrays(obj)))

    collect()
    return found


def _arrays(obj) -> list[np.ndarray]:
    if hasattr(obj, "parts"):
        return [*obj.parts, obj.labels, np.array([obj.lam])]
    if hasattr(obj, "matrices"):
        return [obj.matrices]
    return [obj.features, obj.targets]


@pytest.mark.parametrize("strategy", [
    sharing_problems(max_parties=2, normalise_rows=True),
    online_problems(3, 5),
    graph_sequences(4, 6, directed=None),
    graph_sequences_and_online_problems(max_nodes=3, rounds=5),
], ids=["sharing", "online", "graph-sequences", "pair"])
def test_the_same_choices_draw_the_same_objects(strategy):
    first = _fingerprints(strategy)
    assert len(first) >= 2 and first == _fingerprints(strategy)


# ----------------------------------------------------------------------------- bad arguments
@pytest.mark.parametrize(("make", "fragment"), [
    (lambda: sharing_problems(min_parties=0), "min_parties=0"),
    (lambda: sharing_problems(min_parties=3, max_parties=2), "min_parties=3, max_parties=2"),
    (lambda: sharing_problems(min_width=2, max_width=1), "min_width=2, max_width=1"),
    (lambda: sharing_problems(max_width=2.5), "max_width=2.5"),
    (lambda: sharing_problems(max_samples=10), "max_samples=10"),
    (lambda: sharing_problems(min_samples=90), "min_samples=90, max_samples=80"),
    (lambda: sharing_problems(min_lam=0.0), "min_lam=0.0"),
    (lambda: sharing_problems(max_lam=float("nan")), "max_lam=nan"),
    (lambda: sharing_problems(box=-1.0), "box=-1.0"),
    (lambda: sharing_problems(normalise_rows="yes"), "normalise_rows='yes'"),
    (lambda: online_problems(0), "nodes=0"),
    (lambda: online_problems(2, rounds=0), "rounds=0"),
    (lambda: online_problems(2, min_block=3, max_block=2), "min_block=3, max_block=2"),
    (lambda: online_problems(2, losses=("hinge",)), "losses=('hinge',)"),
    (lambda: online_problems(2, losses=()), "losses=()"),
    (lambda: online_problems(2, max_batch=0), "max_batch=0"),
    (lambda: online_problems(2, radius=0), "radius=0"),
    (lambda: graph_sequences(1, 5), "nodes=1"),
    (lambda: graph_sequences(3, True), "rounds=True"),
    (lambda: graph_sequences(3, 5, directed="yes"), "directed='yes'"),
    (lambda: graph_sequences(3, 5, weights="random"), "weights='random'"),
    (lambda: graph_sequences(3, 5, min_window=0), "min_window=0"),
    (lambda: graph_sequences(3, 5, min_window=4, max_window=2), "min_window=4, max_window=2"),
    (lambda: graph_sequences(3, 5, max_extra_edges=1.5), "max_extra_edges=1.5"),
    (lambda: graph_sequences_and_online_problems(min_nodes=1), "min_nodes=1"),
    (lambda: graph_sequences_and_online_problems(min_nodes=5, max_nodes=3), "min_nodes=5, max_nodes=3"),
    (lambda: graph_sequences_and_online_problems(rounds=-1), "rounds=-1"),
    (lambda: graph_sequences_and_online_problems(losses=["svm"]), "losses=['svm']"),
])
def test_bad_arguments_are_refused_when_the_strategy_is_made(make, fragment):
    with pytest.raises(InvalidConfiguration) as raised:
        make()  # no drawing: the error comes before any example is generated
    message = str(raised.value)
    assert fragment in message and "pass" in message, message


def test_the_connectivity_check_used_above_tells_connected_from_not():
    path = np.zeros((3, 3), dtype=bool)
    path[1, 0] = path[2, 1] = True  # 0 -> 1 -> 2: weakly but not strongly connected
    assert not all_reachable(path) and all_reachable(path | path.T)
    two_parts = np.zeros((4, 4), dtype=bool)
    two_parts[0, 1] = two_parts[1, 0] = two_parts[2, 3] = two_parts[3, 2] = True
    assert not all_reachable(two_parts)


# ---- mechanisms with their neighbours (issue 28) ----------------------------------------------------

@settings(max_examples=10, deadline=None)
@given(config=strategies.mechanism_audits(samples=1_000, workers=1))
def test_mechanism_audits_draw_a_registered_mechanism_whose_pair_changes_one_record(config):
    from admmcheck.commands.audit import audited_pair
    from admmcheck.mechanisms.families import CONSENSUS
    from admmcheck.mechanisms.registry import REGISTRY

    assert config.mechanism in REGISTRY.names(CONSENSUS, private=True) and config.settings.seed == config.setting.seed
    audited, pair, _ = audited_pair(config)
    claim, mechanism = audited, audited.mechanism
    changed = [(i, n) for i in range(pair.d0.nodes) for n in range(pair.d0.sizes[i])
               if pair.d0.labels[i][n] != pair.d1.labels[i][n]
               or np.any(pair.d0.features[i][n] != pair.d1.features[i][n])]
    assert changed == [(0, 0)] and claim.claimed.epsilon > 0 and mechanism.run is config.spec.run


def test_mechanism_audits_refuse_an_unregistered_name():
    with pytest.raises(InvalidConfiguration, match="choose among the registered consensus mechanisms"):
        strategies.mechanism_audits(mechanisms=["sharing"])
    with pytest.raises(InvalidConfiguration, match="max_nodes"):
        strategies.mechanism_audits(max_nodes=2)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_sharing_neighbour_pairs_change_one_party_block_and_keep_unit_rows(data):
    problem = data.draw(strategies.sharing_problems(min_parties=1, max_parties=3, normalise_rows=True))
    d0, d1 = data.draw(strategies.sharing_neighbour_pairs(problem))
    different = [m for m in range(problem.parties) if np.any(d0.parts[m] != d1.parts[m])]
    assert len(different) == 1 and np.array_equal(d0.labels, d1.labels)
    assert np.allclose(np.linalg.norm(d1.parts[different[0]], axis=1), 1.0)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_online_neighbour_pairs_change_one_round(data):
    problem = data.draw(strategies.online_problems(3, rounds=6))
    f0, f1 = data.draw(strategies.online_neighbour_pairs(problem))
    rounds = [t for t in range(problem.rounds) if np.any(f0.targets[t] != f1.targets[t])
              or np.any(f0.features[t] != f1.features[t])]
    assert len(rounds) <= 1 and np.array_equal(f0.features, f1.features)
    if rounds:
        assert np.array_equal(f1.targets[rounds[0]], -f0.targets[rounds[0]])
