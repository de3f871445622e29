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
from typing import Mapping

import numpy as np

from admmcheck.algorithms import run_dvp, run_pp, run_private_radmm, run_pvp
from admmcheck.errors import InvalidConfiguration
from admmcheck.networks import Network
from admmcheck.problems import ConsensusProblem
from admmcheck.runs import Run, Seeds

REFERENCE_MECHANISMS = ("pp", "dvp", "pvp", "radmm")
NEIGHBOUR_KINDS = ("label-flip", "feature-move", "remove")
_RUNS = {"pp": run_pp, "dvp": run_dvp, "pvp": run_pvp, "radmm": run_private_radmm}


@dataclass(frozen=True, eq=False)
class ReferenceMechanism:
    """``name`` (pp, dvp, pvp, radmm) on ``network`` for ``iterations`` with ``parameters``
    (the keyword arguments of its ``run_*`` function: penalty/theta/alpha/eta/gamma)."""

    name: str
    network: Network
    iterations: int
    parameters: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.name not in _RUNS:
            raise InvalidConfiguration(f"unknown reference mechanism {self.name!r}; "
                                       f"choose one of {', '.join(REFERENCE_MECHANISMS)}")

    @property
    def __name__(self) -> str:
        return f"reference:{self.name}"

    def batch(self, problem: ConsensusProblem, rng: np.random.Generator, n: int) -> np.ndarray:
        """(n, (T+1)·N·d): the broadcast transcripts of n runs, one spawned seed each."""
        seeds = np.random.SeedSequence(int(rng.integers(2**63))).spawn(n)
        return self.batch_run(problem, seeds).primal.reshape(n, -1)

    @property
    def arguments(self) -> dict[str, object]:
        """Its ``run_*`` function's keyword arguments: ``parameters``, defaults filled in."""
        signature = inspect.signature(_RUNS[self.name])
        values = {name: p.default for name, p in signature.parameters.items()
                  if p.kind is p.KEYWORD_ONLY and p.default is not inspect.Parameter.empty}
        return values | dict(self.parameters)

    def batch_run(self, problem: ConsensusProblem, seeds: Seeds) -> Run:
        """One batched run of the algorithm on ``problem``, one trial per seed."""
        return _RUNS[self.name](problem, self.network, iterations=self.iterations, seeds=seeds,
                                **dict(self.parameters))

    def __call__(self, problem: ConsensusProblem, rng: np.random.Generator) -> np.ndarray:
        return self.batch(problem, rng, 1)[0]


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
    features, labels = list(problem.features), list(problem.labels)
    x, y = features[node].copy(), labels[node].copy()
    if kind == "label-flip":
        y[index] = -y[index]
    elif kind == "feature-move":
        x[index] = -x[index]
    else:
        x, y = np.delete(x, index, axis=0), np.delete(y, index)
    features[node], labels[node] = x, y
    return problem, ConsensusProblem(tuple(features), tuple(labels), problem.C, problem.rho, problem.loss)
