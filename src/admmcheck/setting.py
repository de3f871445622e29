"""The setting every consensus command builds its problem from: :class:`ProblemSetting` (data,
partition, graph, horizon) and :func:`build_problem`, which turns it into a
:class:`~admmcheck.problems.ConsensusProblem` and a :class:`~admmcheck.networks.Network`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from admmcheck.datasets import dataset_by_name, make_problem, uneven_sizes
from admmcheck.networks import GRAPH_KINDS, Network, network_by_name
from admmcheck.problems import ConsensusProblem
from admmcheck.validation import non_negative_int, one_of, positive_int, real


@dataclass(frozen=True)
class ProblemSetting:
    """The data, partition, graph and horizon every command builds its problem from.

    ``seed`` drives the synthetic data, the partition, a random graph and f(0);
    ``samples`` and ``dim`` size the synthetic set.
    """

    dataset: str = "breast-cancer"
    nodes: int = 5
    graph: str = "ring"
    iterations: int = 100
    seed: int = 0
    C: float = 1.0
    rho: float = 1.0
    samples: int = 250
    dim: int = 10

    ONLY_FOR: ClassVar[dict[str, tuple[str, tuple[str, ...]]]] = {
        "samples": ("dataset", ("synthetic",)),
        "dim": ("dataset", ("synthetic",)),
    }

    def __post_init__(self) -> None:
        one_of("graph", self.graph, GRAPH_KINDS)
        non_negative_int("seed", self.seed)
        for name in ("nodes", "iterations", "samples", "dim"):
            positive_int(name, getattr(self, name))
        real("C", self.C)
        real("rho", self.rho)


def build_problem(config: ProblemSetting, uneven: bool = False) -> tuple[ConsensusProblem, Network]:
    """Dataset, partition (even, or with ``uneven`` seeded Dirichlet shares of at least 20 rows
    each: :func:`~admmcheck.datasets.uneven_sizes`) and network described by ``config``."""
    dataset = dataset_by_name(config.dataset, seed=config.seed, samples=config.samples, dim=config.dim)
    sizes = None
    if uneven:
        sizes = uneven_sizes(dataset.samples, config.nodes, seed=config.seed,
                             min_size=min(20, dataset.samples // config.nodes))
    problem = make_problem(dataset, config.nodes, C=config.C, rho=config.rho, seed=config.seed, sizes=sizes)
    network = network_by_name(config.graph, config.nodes, seed=config.seed)
    return problem, network
