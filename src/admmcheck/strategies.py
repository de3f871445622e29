"""Public Hypothesis strategies for the problem families admmcheck checks.

* networks and consensus ERM (M-ADMM / R-ADMM papers): :func:`connected_networks`,
  :func:`consensus_problems`, :func:`networks_and_problems`, :func:`nondecreasing_schedules`
  (penalty tables eta_i(t)) and :func:`neighbour_pairs` (replace-one neighbours D, D′);
* sharing over vertically partitioned features (ADMM-sharing paper): :func:`sharing_problems`;
* online problems and time-varying graphs (DPSDA paper): :func:`online_problems`,
  :func:`graph_sequences` (B-connected sequences of mixing matrices) and
  :func:`graph_sequences_and_online_problems` (a sequence and a problem on the same nodes).

Sizes are small by default so that property tests stay fast; every random array comes from a
seed that Hypothesis draws, so a failing example replays exactly. Invalid arguments raise
:class:`~admmcheck.foundations.errors.InvalidConfiguration` naming the argument and what to pass (the
sharing, online and graph-sequence strategies check them when called, before any drawing).

Use them in your own property tests::

    from hypothesis import given
    from admmcheck.strategies import connected_networks, consensus_problems

    @given(connected_networks(min_nodes=3, max_nodes=6))
    def test_something(network): ...

See docs/strategies.md for one example of each.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import networkx as nx
import numpy as np
from hypothesis import strategies as st

from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.problems.graph_sequences import GraphSequence, random_sequence
from admmcheck.problems.networks import Network, network_from_graph
from admmcheck.problems import ConsensusProblem
from admmcheck.problems.online import (
    OnlineProblem,
    online_classification,
    online_linear_regression,
)
from admmcheck.problems.sharing import SharingProblem, split_columns

#: A drawn sharing problem has at least this many more samples than features (N >= d + 5), so
#: every block D_m has full column rank with margin (Assumption 1.1 of the ADMM-sharing paper).
SPARE_SAMPLES = 5
#: The losses :func:`online_problems` can draw: §6.1 online linear regression, §6.2 classification.
ONLINE_LOSSES = ("squared", "logistic")
#: The mixing weights of an undirected sequence (:func:`admmcheck.problems.graph_sequences.undirected_weights`).
GRAPH_WEIGHTS = ("metropolis", "uniform")


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
    (the replace-one neighbours of both papers, :func:`admmcheck.mechanisms.consensus.replace_one_record`)."""
    from admmcheck.mechanisms.consensus import replace_one_record

    node = draw(st.integers(0, problem.nodes - 1))
    index = draw(st.integers(0, problem.sizes[node] - 1))
    return replace_one_record(problem, node, index, draw(st.sampled_from(["label-flip", "feature-move"])))


# ------------------------------------------------------------------ argument checks
def _whole(where: str, name: str, value: object, minimum: int) -> int:
    """``value`` as an int >= ``minimum``, or InvalidConfiguration naming it and what to pass."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InvalidConfiguration(f"{where}: {name}={value!r} must be an integer >= {minimum}; "
                                   f"pass {name}={minimum} or more")
    return int(value)


def _number(where: str, name: str, value: object, low: float, high: float = math.inf,
            low_open: bool = True) -> float:
    """``value`` as a finite float above ``low`` (at least ``low`` when not ``low_open``) and at most ``high``."""
    ok = not isinstance(value, bool) and isinstance(value, (int, float, np.number)) and math.isfinite(value)
    if ok:
        ok = (float(value) > low if low_open else float(value) >= low) and float(value) <= high
    if not ok:
        wanted = f"{'>' if low_open else '>='} {low:g}" + (f" and <= {high:g}" if high < math.inf else "")
        example = high if high < math.inf else low + 1.0
        raise InvalidConfiguration(f"{where}: {name}={value!r} must be a finite number {wanted}; "
                                   f"pass e.g. {name}={example:g}")
    return float(value)


def _ordered(where: str, low_name: str, low: float, high_name: str, high: float) -> None:
    if low > high:
        raise InvalidConfiguration(f"{where}: need {low_name} <= {high_name}, got {low_name}={low!r}, "
                                   f"{high_name}={high!r}; pass {high_name}={low!r} or more, or a smaller {low_name}")


# ------------------------------------------------------------------ sharing (vertical partitions)
def sharing_problems(*, min_parties: int = 1, max_parties: int = 4, min_width: int = 1, max_width: int = 3,
                     min_samples: int = 1, max_samples: int = 80, min_lam: float = 0.01, max_lam: float = 1.0,
                     normalise_rows: bool = False, box: float | None = None) -> st.SearchStrategy[SharingProblem]:
    """Sharing problems (1) of the ADMM-sharing paper over vertically partitioned features.

    M in [min_parties, max_parties] parties hold column blocks of widths d_m in [min_width,
    max_width] of a Gaussian design D (N, d = Σ d_m), built with
    :func:`admmcheck.problems.sharing.split_columns`; labels are ±1 and λ is drawn from
    [min_lam, max_lam]. The number of samples N is drawn from [max(min_samples, d + 5),
    max_samples] (:data:`SPARE_SAMPLES`), so every block has full column rank (Assumption 1.1).
    With ``normalise_rows`` every row of every block has norm 1 (Assumption 2.3, which the
    privacy bounds need); otherwise every row of D has norm <= 1. ``box`` is b of
    X_m = [−b, b]^{d_m} (None: unconstrained) and is passed through unchanged.
    """
    where = "sharing_problems"
    min_parties = _whole(where, "min_parties", min_parties, 1)
    max_parties = _whole(where, "max_parties", max_parties, 1)
    _ordered(where, "min_parties", min_parties, "max_parties", max_parties)
    min_width = _whole(where, "min_width", min_width, 1)
    max_width = _whole(where, "max_width", max_width, 1)
    _ordered(where, "min_width", min_width, "max_width", max_width)
    min_samples = _whole(where, "min_samples", min_samples, 1)
    max_samples = _whole(where, "max_samples", max_samples, 1)
    widest = max_parties * max_width + SPARE_SAMPLES
    if max_samples < widest:
        raise InvalidConfiguration(
            f"{where}: max_samples={max_samples} leaves no room for the widest design: N >= d + {SPARE_SAMPLES} "
            f"samples are drawn (full column rank) and d can reach max_parties*max_width = {max_parties * max_width}; "
            f"pass max_samples={widest} or more, or smaller max_parties / max_width")
    _ordered(where, "min_samples", min_samples, "max_samples", max_samples)
    min_lam = _number(where, "min_lam", min_lam, 0.0)
    max_lam = _number(where, "max_lam", max_lam, 0.0)
    _ordered(where, "min_lam", min_lam, "max_lam", max_lam)
    if not isinstance(normalise_rows, (bool, np.bool_)):
        raise InvalidConfiguration(f"{where}: normalise_rows={normalise_rows!r} must be True or False; "
                                   "pass normalise_rows=True for unit-norm rows (Assumption 2.3)")
    if box is not None:
        box = _number(where, "box", box, 0.0)
    return _sharing_problems(min_parties, max_parties, min_width, max_width, min_samples, max_samples,
                             min_lam, max_lam, bool(normalise_rows), box)


@st.composite
def _sharing_problems(draw: st.DrawFn, min_parties: int, max_parties: int, min_width: int, max_width: int,
                      min_samples: int, max_samples: int, min_lam: float, max_lam: float, normalise_rows: bool,
                      box: float | None) -> SharingProblem:
    parties = draw(st.integers(min_parties, max_parties))
    widths = tuple(draw(st.lists(st.integers(min_width, max_width), min_size=parties, max_size=parties)))
    rows = draw(st.integers(max(min_samples, sum(widths) + SPARE_SAMPLES), max_samples))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    design = rng.standard_normal((rows, sum(widths)))
    if not normalise_rows:
        design /= np.maximum(np.linalg.norm(design, axis=1, keepdims=True), 1.0)
    labels = np.where(rng.random(rows) < 0.5, -1.0, 1.0)
    lam = draw(st.floats(min_lam, max_lam))
    return split_columns(design, labels, widths, lam=lam, box=box, normalise_rows=normalise_rows)


# ------------------------------------------------------------------ online problems and graph sequences
def online_problems(nodes: int, rounds: int = 20, *, min_block: int = 1, max_block: int = 3,
                    losses: Sequence[str] = ONLINE_LOSSES, max_batch: int = 3,
                    radius: float = 5.0) -> st.SearchStrategy[OnlineProblem]:
    """Online problems f_1, …, f_T of the DPSDA paper on ``nodes`` nodes, T = ``rounds``.

    The dimension d is drawn from [nodes·min_block, nodes·max_block], so each node controls a
    block of min_block..max_block consecutive coordinates. The loss is drawn from ``losses``:
    ``"squared"`` is §6.1's online linear regression
    (:func:`admmcheck.problems.online.online_linear_regression`: one sample per round, a(t)
    uniform on [−0.5, 0.5]^d, χ the box [−radius, radius]^d); ``"logistic"`` is §6.2's
    classification (:func:`admmcheck.problems.online.online_classification`: rounds of 1..max_batch
    samples with ‖a‖ <= 1 and ±1 labels, χ the ball ‖x‖ <= radius).
    """
    return _online_problems(*_online_arguments("online_problems", nodes, rounds, min_block, max_block, losses,
                                               max_batch, radius))


def _online_arguments(where: str, nodes: object, rounds: object, min_block: object, max_block: object,
                      losses: object, max_batch: object, radius: object) -> tuple:
    nodes = _whole(where, "nodes", nodes, 1)
    rounds = _whole(where, "rounds", rounds, 1)
    min_block = _whole(where, "min_block", min_block, 1)
    max_block = _whole(where, "max_block", max_block, 1)
    _ordered(where, "min_block", min_block, "max_block", max_block)
    max_batch = _whole(where, "max_batch", max_batch, 1)
    radius = _number(where, "radius", radius, 0.0)
    chosen = (losses,) if isinstance(losses, str) else tuple(losses) if isinstance(losses, Sequence) else ()
    if not chosen or any(loss not in ONLINE_LOSSES for loss in chosen):
        raise InvalidConfiguration(f"{where}: losses={losses!r} must be a non-empty selection of "
                                   f"{', '.join(ONLINE_LOSSES)}; pass e.g. losses=('squared',)")
    return nodes, rounds, min_block, max_block, tuple(dict.fromkeys(chosen)), max_batch, radius


@st.composite
def _online_problems(draw: st.DrawFn, nodes: int, rounds: int, min_block: int, max_block: int,
                     losses: tuple[str, ...], max_batch: int, radius: float) -> OnlineProblem:
    dim = draw(st.integers(nodes * min_block, nodes * max_block))
    loss = draw(st.sampled_from(losses))
    seed = draw(st.integers(0, 2**32 - 1))
    if loss == "squared":
        return online_linear_regression(rounds=rounds, dim=dim, nodes=nodes, seed=seed, radius=radius)
    batch = draw(st.integers(1, max_batch))
    rng = np.random.default_rng(seed)
    features = rng.standard_normal((rounds * batch, dim))
    features /= np.maximum(np.linalg.norm(features, axis=1, keepdims=True), 1.0)
    labels = np.where(rng.random(rounds * batch) < 0.5, -1.0, 1.0)
    return online_classification(features, labels, rounds=rounds, batch=batch, nodes=nodes, seed=seed, radius=radius)


def graph_sequences(nodes: int, rounds: int, directed: bool | None = False, *, weights: str = "metropolis",
                    min_window: int = 1, max_window: int = 4,
                    max_extra_edges: float = 0.3) -> st.SearchStrategy[GraphSequence]:
    """B-connected sequences of ``rounds`` mixing matrices on ``nodes`` nodes (DPSDA §4.1, §5.1).

    The window B is drawn from [min_window, max_window]; the union of the graphs of every
    window of B steps is connected (strongly, when directed) — the sequence comes from
    :func:`admmcheck.problems.graph_sequences.random_sequence`, which spreads a random spanning tree
    (cycle) over each window and adds each other edge with a probability drawn from
    [0, max_extra_edges] (0: the sparsest sequences, single steps usually disconnected).
    ``directed=False`` gives row-stochastic W(t) with ``weights`` ``"metropolis"`` (symmetric,
    hence doubly stochastic, as the proof of Lemma 2(a) needs; DPSDA-C) or ``"uniform"`` (the
    paper's 1/deg_i); ``directed=True`` gives column-stochastic A(t) (DPSDA-PS; ``weights`` is
    not used); ``directed=None`` draws which.
    """
    return _graph_sequences(*_graph_arguments("graph_sequences", nodes, rounds, directed, weights, min_window,
                                              max_window, max_extra_edges))


def _graph_arguments(where: str, nodes: object, rounds: object, directed: object, weights: object,
                     min_window: object, max_window: object, max_extra_edges: object) -> tuple:
    nodes = _whole(where, "nodes", nodes, 2)
    rounds = _whole(where, "rounds", rounds, 1)
    if directed is not None and not isinstance(directed, (bool, np.bool_)):
        raise InvalidConfiguration(f"{where}: directed={directed!r} must be True, False or None; "
                                   "pass directed=None to draw either")
    if weights not in GRAPH_WEIGHTS:
        raise InvalidConfiguration(f"{where}: weights={weights!r} is not known; pass one of "
                                   f"{', '.join(GRAPH_WEIGHTS)}")
    min_window = _whole(where, "min_window", min_window, 1)
    max_window = _whole(where, "max_window", max_window, 1)
    _ordered(where, "min_window", min_window, "max_window", max_window)
    max_extra_edges = _number(where, "max_extra_edges", max_extra_edges, 0.0, 1.0, low_open=False)
    return (nodes, rounds, None if directed is None else bool(directed), weights, min_window, max_window,
            max_extra_edges)


@st.composite
def _graph_sequences(draw: st.DrawFn, nodes: int, rounds: int, directed: bool | None, weights: str,
                     min_window: int, max_window: int, max_extra_edges: float) -> GraphSequence:
    if directed is None:
        directed = draw(st.booleans())
    window = draw(st.integers(min_window, max_window))
    extra = draw(st.floats(0.0, max_extra_edges)) if max_extra_edges > 0 else 0.0
    seed = draw(st.integers(0, 2**32 - 1))
    return random_sequence(nodes, rounds, window, seed, directed=directed, weights=weights, extra_edges=extra)


def graph_sequences_and_online_problems(
    *, min_nodes: int = 2, max_nodes: int = 6, rounds: int = 20, directed: bool | None = None,
    weights: str = "metropolis", max_window: int = 4, max_block: int = 3, losses: Sequence[str] = ONLINE_LOSSES,
) -> st.SearchStrategy[tuple[GraphSequence, OnlineProblem]]:
    """A graph sequence (:func:`graph_sequences`) and an online problem (:func:`online_problems`)
    on the same number of nodes, drawn from [min_nodes, max_nodes], both of ``rounds`` steps:
    what DPSDA-C (``sequence.directed`` False) or DPSDA-PS (True) runs on. The other settings are
    the defaults of the two strategies (windows 1..max_window, blocks 1..max_block per node)."""
    where = "graph_sequences_and_online_problems"
    min_nodes = _whole(where, "min_nodes", min_nodes, 2)
    max_nodes = _whole(where, "max_nodes", max_nodes, 2)
    _ordered(where, "min_nodes", min_nodes, "max_nodes", max_nodes)
    _, rounds, directed, weights, _, max_window, extra = _graph_arguments(
        where, min_nodes, rounds, directed, weights, 1, max_window, 0.3)
    _, _, _, max_block, losses, batch, radius = _online_arguments(where, min_nodes, rounds, 1, max_block, losses, 3, 5.0)
    return st.integers(min_nodes, max_nodes).flatmap(
        lambda n: st.tuples(_graph_sequences(n, rounds, directed, weights, 1, max_window, extra),
                            _online_problems(n, rounds, 1, max_block, losses, batch, radius)))


# ---- private mechanisms with their neighbours ------------------------------------------------------

def mechanism_audits(mechanisms: Sequence[str] | None = None, max_nodes: int = 4, max_iterations: int = 3,
                     max_dim: int = 2, samples: int = 4_000, workers: int | None = 2) -> st.SearchStrategy:
    """Audits of registered consensus mechanisms on small settings: a
    :class:`~admmcheck.mechanisms.audit_request.MechanismAudit` (mechanism, 3..``max_nodes`` nodes,
    1..``max_iterations`` steps, dimension 1..``max_dim``, alpha, replace-one neighbour kind, seed)
    whose :func:`~admmcheck.commands.audit.audited_pair` gives the mechanism, its claim and its
    neighbour pair. ``mechanisms`` defaults to every registered private consensus mechanism; one
    without a theorem is audited against epsilon = 1."""
    from admmcheck.mechanisms.families import CONSENSUS
    from admmcheck.mechanisms.registry import REGISTRY

    registered = REGISTRY.names(CONSENSUS, private=True)
    names = tuple(mechanisms) if mechanisms is not None else registered
    unknown = [name for name in names if name not in registered]
    if unknown or not names:
        raise InvalidConfiguration(f"mechanism_audits(mechanisms={list(names)!r}): choose among the registered "
                                   f"consensus mechanisms {', '.join(registered)}")
    _whole("mechanism_audits", "max_nodes", max_nodes, 3)
    _whole("mechanism_audits", "max_iterations", max_iterations, 1)
    _whole("mechanism_audits", "max_dim", max_dim, 1)
    return _mechanism_audits(names, max_nodes, max_iterations, max_dim, samples, workers)


@st.composite
def _mechanism_audits(draw: st.DrawFn, names: tuple[str, ...], max_nodes: int, max_iterations: int, max_dim: int,
                      samples: int, workers: int | None):
    from admmcheck.mechanisms.audit_request import MechanismAudit
    from admmcheck.mechanisms.registry import REGISTRY
    from admmcheck.mechanisms.settings import ConsensusSetting

    name = draw(st.sampled_from(names))
    seed = draw(st.integers(0, 1000))
    spec = REGISTRY.mechanism(name)
    setting = ConsensusSetting(dataset="synthetic", samples=30, nodes=draw(st.integers(3, max_nodes)),
                               iterations=draw(st.integers(1, max_iterations)), dim=draw(st.integers(1, max_dim)),
                               eta=1.0, theta=1.0, gamma=0.2, alpha=draw(st.sampled_from([2.0, 5.0, 20.0])),
                               seed=seed, epsilon=None if spec.supports("claim") else 1.0)
    return MechanismAudit(name, setting, neighbours=draw(st.sampled_from(spec.neighbour_kinds)),
                          settings=spec.audit.but(samples=samples, workers=workers, seed=seed))


@st.composite
def sharing_neighbour_pairs(draw: st.DrawFn, problem):
    """(D, D′) of DP sharing's Definition 2 for a :class:`~admmcheck.problems.sharing.SharingProblem`
    with unit rows: row or column change of a drawn party and row
    (:func:`admmcheck.mechanisms.sharing.replace_one_row`; a row change needs 2 columns)."""
    from admmcheck.mechanisms.sharing import replace_one_row

    party = draw(st.integers(0, problem.parties - 1))
    kinds = ["column"] + (["row"] if problem.parts[party].shape[1] >= 2 else [])
    return replace_one_row(problem, party, draw(st.integers(0, problem.samples - 1)), draw(st.sampled_from(kinds)))


@st.composite
def online_neighbour_pairs(draw: st.DrawFn, problem):
    """(F, F′) of DPSDA's Definition 1 for an :class:`~admmcheck.problems.online.OnlineProblem`: the
    function of one drawn round replaced by its target negated (b → −b)
    (:func:`admmcheck.mechanisms.dpsda.change_one_round`)."""
    from admmcheck.mechanisms.dpsda import change_one_round

    t0 = draw(st.integers(1, problem.rounds))
    return change_one_round(problem, t0, problem.features[t0 - 1], -problem.targets[t0 - 1])
