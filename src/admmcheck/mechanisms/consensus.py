"""Our reference private mechanisms as auditable mechanisms, and ERM neighbours.

A :class:`ReferenceMechanism` releases what the papers' adversary sees: every broadcast
f_i(t), t = 0..T (``Run.primal``), flattened per sample. Its vectorised ``batch`` runs one
batched call of the algorithm with one spawned seed per sample.

Neighbours (:func:`replace_one_record`) change one record of one node and keep the
sizes B_i: the *replace-one* notion of the M-ADMM paper (§2.2: D_i and D_i' differ in one
data point) and of the R-ADMM paper (§IV, the same definition). Removing or adding a
record changes B_i, which both theorems' bounds are stated for one fixed value of; the
``remove`` kind is offered for audits of other mechanisms.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from admmcheck.audit.inputs.contract import BatchedRunMechanism
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.problems.networks import Network
from admmcheck.problems import ConsensusProblem
from admmcheck.solving.runs import Run, Seeds

NEIGHBOUR_KINDS = ("label-flip", "feature-move", "remove")


@dataclass(frozen=True, eq=False)
class ReferenceMechanism(BatchedRunMechanism):
    """The private algorithm ``run`` (a ``run_*`` function, registered as ``name``: see
    :mod:`admmcheck.mechanisms.registry`) on ``network`` for ``iterations`` with ``parameters`` (the
    keyword arguments of ``run``: penalty/theta/alpha/eta/gamma); ``release`` how its noise enters what it
    releases (:mod:`admmcheck.mechanisms.releases`; None: no white box)."""

    name: str
    network: Network
    iterations: int
    parameters: Mapping[str, object] = field(default_factory=dict)
    run: Callable[..., Run] | None = None
    release: Any = None

    def __post_init__(self) -> None:
        if not callable(self.run):
            raise InvalidConfiguration(f"the reference mechanism {self.name!r} needs its run_* function as run=; "
                                       "admmcheck.mechanisms.registry.reference_mechanism builds one by name")

    @property
    def __name__(self) -> str:
        return f"reference:{self.name}"

    @property
    def arguments(self) -> dict[str, object]:
        """Its ``run_*`` function's keyword arguments: ``parameters``, defaults filled in."""
        signature = inspect.signature(self.run)
        values = {name: p.default for name, p in signature.parameters.items()
                  if p.kind is p.KEYWORD_ONLY and p.default is not inspect.Parameter.empty}
        return values | dict(self.parameters)

    def batch_run(self, problem: ConsensusProblem, seeds: Seeds) -> Run:
        """One batched run of the algorithm on ``problem``, one trial per seed."""
        return self.run(problem, self.network, iterations=self.iterations, seeds=seeds,
                                **dict(self.parameters))

    def released(self, run: Run) -> np.ndarray:
        """Every broadcast f_i(t), t = 0..T: (n, T+1, N, d)."""
        return run.primal


def keyword_arguments(run: Callable[..., Any]) -> tuple[str, ...]:
    """The names of a ``run_*`` function's keyword-only arguments."""
    return tuple(name for name, p in inspect.signature(run).parameters.items() if p.kind is p.KEYWORD_ONLY)


def replace_one_record(problem: ConsensusProblem, node: int = 0, index: int = 0,
                       kind: str = "label-flip") -> tuple[ConsensusProblem, ConsensusProblem]:
    """(D, D') differing in record ``index`` of node ``node``.

    ``label-flip`` negates y; ``feature-move`` moves x to −x (another point of the unit
    ball, the farthest one) and keeps y; ``remove`` drops the record (B_i changes).
    """
    if kind not in NEIGHBOUR_KINDS:
        raise InvalidConfiguration(f"unknown neighbour kind {kind!r}; choose one of {', '.join(NEIGHBOUR_KINDS)}")
    if not 0 <= node < problem.nodes or not 0 <= index < problem.sizes[node]:
        raise InvalidConfiguration(f"record {index} of node {node} does not exist (sizes {problem.sizes})")
    x, y = problem.features[node][index], float(problem.labels[node][index])
    if kind == "label-flip":
        return problem, replace_record(problem, node, index, x, -y)
    if kind == "feature-move":
        return problem, replace_record(problem, node, index, -x, y)
    features, labels = list(problem.features), list(problem.labels)
    features[node] = np.delete(features[node], index, axis=0)
    labels[node] = np.delete(labels[node], index)
    return problem, ConsensusProblem(tuple(features), tuple(labels), problem.C, problem.rho, problem.loss)


def replace_record(problem: ConsensusProblem, node: int, index: int, x: np.ndarray, y: float) -> ConsensusProblem:
    """``problem`` with record ``index`` of node ``node`` replaced by (x, y)."""
    features, labels = list(problem.features), list(problem.labels)
    features[node], labels[node] = features[node].copy(), labels[node].copy()
    features[node][index], labels[node][index] = x, y
    return ConsensusProblem(tuple(features), tuple(labels), problem.C, problem.rho, problem.loss)
