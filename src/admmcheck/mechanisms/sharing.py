"""Privacy of DP ADMM sharing, checked: its released values as an auditable mechanism, the
neighbours of Definition 2, and the exact (white-box) privacy loss of a transcript.

**What is released.** The server — the adversary the paper protects against — receives every
D_m x̃_m^t, t = 1..T (``extras["shared"]``); y^t and z^t are functions of those. The mechanism
releases them flattened.

**Neighbours.** Definition 2 calls D_m and D′_m neighbours when they differ "in only one feature
column" with ‖D_m − D′_m‖ ≤ 1, while Definition 1 counts entries (|x − y|₁ ≤ 1) and Lemma 1's
proof needs Assumption 2.3 (unit rows) for both. :func:`replace_one_row` implements the
reading every statement admits at once for one *sample*: row i of block D_m is replaced by
another unit vector at distance exactly 1 (so ‖D_m − D′_m‖₂ = 1, both datasets satisfy 2.3, and
the change is one sample's features held by party m — the record-level notion a vertically
partitioned party protects). It changes every column of D_m in one entry, so it is also a
"one-entry-per-column" change; a change of one whole column is offered as ``kind="column"``
(the literal Definition 2, rows re-normalised).

**Exact loss.** ξ_m ~ N(0, σ²(D_mᵀD_m)⁻¹) makes D_m ξ_m a Gaussian supported on col(D_m): the
released D_m x̃_m lies in col(D_m) under D. Under D′ it lies in col(D′_m). Where the two
column spaces differ, a transcript from D lies off col(D′_m) with probability 1, so the loss
is +inf on a set of probability 1 — no (ε, δ) with δ < 1 holds. :func:`sharing_privacy_loss`
returns, per step, the distance of the released vector from col(D′_m) as the evidence, and the
Gaussian log-density ratio where both supports hold it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from admmcheck.algorithms.sharing import PartySolver, run_dp_sharing, z_update
from admmcheck.audit.inputs.contract import BatchedRunMechanism
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.problems.sharing import SharingProblem

SUPPORT_TOL = 1e-8  # relative distance from a column space that counts as "on it"


@dataclass(frozen=True, eq=False)
class SharingMechanism(BatchedRunMechanism):
    """DP sharing with penalty ``rho``, noise ``sigma`` (one per party; None: the run takes none, a variant whose
    noise its own ``arguments`` set) for ``iterations`` steps:
    releases every D_m x̃_m^t, t = 1..T, flattened (T·M·N numbers). ``run`` is the registered algorithm
    ``name`` (default: the paper's, (10)); a variant's run takes the same arguments, and its own ``arguments``, and
    returns the same extras."""

    rho: float
    sigma: tuple[float, ...] | None
    iterations: int
    tol: float = 1e-10
    name: str = "dp-sharing"
    run: Callable[..., Any] = run_dp_sharing
    arguments: tuple[tuple[str, Any], ...] = ()  # a variant's own keyword arguments (MechanismSpec.run_arguments)

    @property
    def __name__(self) -> str:
        return f"reference:{self.name}"

    def batch_run(self, problem: SharingProblem, seeds):
        noise = {} if self.sigma is None else {"sigma": np.array(self.sigma)}
        return self.run(problem, rho=self.rho, iterations=self.iterations, seeds=seeds, tol=self.tol, **noise,
                        **dict(self.arguments))

    def released(self, run) -> np.ndarray:
        """Every D_m x̃_m^t the server receives, t = 1..T."""
        return run.extras["shared"][:, 1:]


def replace_one_row(problem: SharingProblem, party: int = 0, row: int = 0,
                    kind: str = "row") -> tuple[SharingProblem, SharingProblem]:
    """(D, D′) of Definition 2 (see the module docstring): ``row`` — row ``row`` of D_party
    rotated to a unit vector at distance 1; ``column`` — column 0 of D_party negated, rows of
    the block re-normalised."""
    if not 0 <= party < problem.parties or not 0 <= row < problem.samples:
        raise InvalidConfiguration(f"party {party} / row {row} do not exist ({problem.parties} parties, "
                                   f"{problem.samples} rows)")
    block = problem.parts[party].copy()
    if kind == "row":
        old = block[row]
        if block.shape[1] < 2:
            raise InvalidConfiguration("a row change within the unit sphere needs a block of at least 2 columns")
        other = np.zeros_like(old)
        other[int(np.argmin(np.abs(old)))] = 1.0
        other -= (other @ old) * old
        other /= np.linalg.norm(other)
        block[row] = 0.5 * old + np.sqrt(0.75) * other  # unit, at distance 1 from old
    elif kind == "column":
        block[:, 0] = -block[:, 0]
        block /= np.linalg.norm(block, axis=1, keepdims=True)
    else:
        raise InvalidConfiguration(f"unknown neighbour kind {kind!r}; choose row or column")
    parts = list(problem.parts)
    parts[party] = block
    return problem, SharingProblem(tuple(parts), problem.labels, problem.lam, problem.box)


@dataclass(frozen=True, eq=False)
class SharingLoss:
    """Per-step, per-party loss (trials, T, M) and the distance of each released vector from
    col(D′_m) relative to its norm (the evidence where the loss is infinite)."""

    per_step: np.ndarray
    off_support: np.ndarray
    changed_parties: tuple[int, ...] = field(default=())

    @property
    def total(self) -> np.ndarray:
        return self.per_step.sum(axis=(1, 2))


def sharing_privacy_loss(mechanism: SharingMechanism, d0: SharingProblem, d1: SharingProblem,
                         shared: np.ndarray) -> SharingLoss:
    """ln p(o | d0) − ln p(o | d1) for transcripts ``shared`` (trials, T+1, M, N) of the server.

    y^t and z^t are rebuilt from the released values ((7), (8)); each party's x_m^{t+1} is
    recomputed under each dataset from those public values and the others' released values."""
    if mechanism.sigma is None:
        raise InvalidConfiguration(f"{mechanism.name} takes no noise scale sigma: its exact loss is not DP sharing's")
    shared = np.asarray(shared, dtype=np.float64)
    trials, steps = shared.shape[0], shared.shape[1] - 1
    M = d0.parties
    changed = tuple(m for m in range(M) if d0.parts[m].shape != d1.parts[m].shape
                    or np.any(d0.parts[m] != d1.parts[m]))
    solvers = {(k, m): PartySolver(problem, m, mechanism.rho) for k, problem in enumerate((d0, d1)) for m in changed}
    projectors = {m: d1.parts[m] @ np.linalg.pinv(d1.parts[m]) for m in changed}
    per_step = np.zeros((trials, steps, M))
    off = np.zeros((trials, steps, M))
    y = np.zeros((trials, d0.samples))
    z = np.zeros((trials, d0.samples))
    for t in range(steps):
        before, released = shared[:, t], shared[:, t + 1]
        total = before.sum(axis=1)
        for m in changed:
            target = z - (total - before[:, m])
            means = [problem.parts[m] @ solvers[(k, m)].solve(target, y).T for k, problem in enumerate((d0, d1))]
            s = released[:, m]
            distance = np.linalg.norm(s - s @ projectors[m].T, axis=-1) / np.maximum(np.linalg.norm(s, axis=-1), 1e-300)
            off[:, t, m] = distance
            gaussian = (np.sum((s - means[1].T) ** 2, axis=-1) - np.sum((s - means[0].T) ** 2, axis=-1)) \
                / (2 * mechanism.sigma[m] ** 2)
            per_step[:, t, m] = np.where(distance > SUPPORT_TOL, np.inf, gaussian)
        s_total = released.sum(axis=1)
        z = z_update(d0, s_total, y, mechanism.rho, mechanism.tol)  # (7): public
        y = y + mechanism.rho * (s_total - z)  # (8)
    return SharingLoss(per_step, off, changed)
