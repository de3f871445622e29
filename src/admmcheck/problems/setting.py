"""The setting every consensus command builds its problem from: :class:`ProblemSetting` (data,
partition, graph, horizon) and :func:`build_problem`, which turns it into a
:class:`~admmcheck.problems.ConsensusProblem` and a :class:`~admmcheck.problems.networks.Network`."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from admmcheck.problems.datasets import dataset_by_name, make_problem, uneven_sizes
from admmcheck.problems.networks import GRAPH_KINDS, Network, network_by_name
from admmcheck.problems import ConsensusProblem
from admmcheck.foundations.formulas import parse_number
from admmcheck.foundations.parameters import parameter
from admmcheck.foundations.validation import non_negative_int, one_of, positive_int, real


@dataclass(frozen=True)
class ProblemSetting:
    """The data, partition, graph and horizon every command builds its problem from.

    ``seed`` drives the synthetic data, the partition, a random graph and f(0);
    ``samples`` and ``dim`` size the synthetic set.
    """

    dataset: str = parameter("breast-cancer", "synthetic, breast-cancer, adult or adult:PATH[,PATH]")
    nodes: int = parameter(5, "number of nodes N", read=int)
    graph: str = parameter("ring", "network", choices=GRAPH_KINDS)
    iterations: int = parameter(100, "iterations T", read=int)
    seed: int = parameter(0, "seed of the data, partition, random graph and f(0)", read=int)
    C: float = parameter(1.0, "C of eq. (1)", read=parse_number)
    rho: float = parameter(1.0, "rho of eq. (1)", read=parse_number)
    samples: int = parameter(250, "synthetic: rows", "rows", read=int, flag="--rows")
    dim: int = parameter(10, "synthetic: feature dimension", read=int)

    ONLY_FOR: ClassVar[dict[str, tuple[str, tuple[str, ...]]]] = {
        "samples": ("dataset", ("synthetic",)),
        "dim": ("dataset", ("synthetic",)),
    }

    @classmethod
    def default(cls, name: str, value: object) -> Any:
        """Field ``name`` with its help and flag, and another default (a command's own setting, e.g. the attack's
        25 rows)."""
        metadata = next(item.metadata for item in fields(cls) if item.name == name)
        return field(default=value, metadata=metadata)

    def __post_init__(self) -> None:
        one_of("graph", self.graph, GRAPH_KINDS)
        non_negative_int("seed", self.seed)
        for name in ("nodes", "iterations", "samples", "dim"):
            positive_int(name, getattr(self, name))
        real("C", self.C)
        real("rho", self.rho)


def build_problem(config: ProblemSetting, uneven: bool = False) -> tuple[ConsensusProblem, Network]:
    """Dataset, partition (even, or with ``uneven`` seeded Dirichlet shares of at least 20 rows
    each: :func:`~admmcheck.problems.datasets.uneven_sizes`) and network described by ``config``."""
    dataset = dataset_by_name(config.dataset, seed=config.seed, samples=config.samples, dim=config.dim)
    sizes = None
    if uneven:
        sizes = uneven_sizes(dataset.samples, config.nodes, seed=config.seed,
                             min_size=min(20, dataset.samples // config.nodes))
    problem = make_problem(dataset, config.nodes, C=config.C, rho=config.rho, seed=config.seed, sizes=sizes)
    network = network_by_name(config.graph, config.nodes, seed=config.seed)
    return problem, network
