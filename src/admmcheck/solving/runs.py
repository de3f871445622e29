"""The one run/transcript type shared by every algorithm, and its batched recorder.

A :class:`Run` holds the complete transcript an observer of the network sees — every
broadcast primal f_i(t) — together with the duals lambda_i(t), for a batch of
independent trials. Array axes are always ``(trials, t, nodes, dim)`` with t = 0..T.

Randomness: each trial has its own :class:`numpy.random.SeedSequence`; trial k of a
batch is reproduced exactly by a run with ``seeds=[that seed]`` alone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping, Sequence, Union

import numpy as np

from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.problems.networks import Network
from admmcheck.solving.oracle import Optimum
from admmcheck.problems import ConsensusProblem
from admmcheck.problems.sharing import SharingProblem
from admmcheck.foundations.validation import positive_int, real

SeedLike = Union[int, np.random.SeedSequence]
Seeds = Union[SeedLike, Sequence[SeedLike]]


def trial_seeds(seed: int, trials: int) -> tuple[np.random.SeedSequence, ...]:
    """Spawn ``trials`` independent child seeds from ``seed`` (one per trial)."""
    return tuple(np.random.SeedSequence(seed).spawn(positive_int("trials", trials)))


def as_seed_sequences(seeds: Seeds) -> tuple[np.random.SeedSequence, ...]:
    """Normalise an int, a SeedSequence or a sequence of them to a tuple of SeedSequences."""
    items = [seeds] if isinstance(seeds, (int, np.integer, np.random.SeedSequence)) else list(seeds)
    if not items:
        raise InvalidConfiguration("seeds is empty; pass at least one seed (one per trial)")
    out = []
    for s in items:
        if isinstance(s, np.random.SeedSequence):
            out.append(s)
        elif isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0:
            out.append(np.random.SeedSequence(int(s)))
        else:
            raise InvalidConfiguration(f"seed {s!r} must be a non-negative int or a SeedSequence")
    return tuple(out)


def describe_seed(seed: np.random.SeedSequence) -> dict[str, object]:
    """JSON-able identity of a trial seed (entropy and spawn key)."""
    return {"entropy": int(seed.entropy), "spawn_key": list(seed.spawn_key)}


@dataclass(frozen=True, eq=False)
class Start:
    """Initial state of a batch: per-trial generators and f(0) with shape (trials, N, d)."""

    seeds: tuple[np.random.SeedSequence, ...]
    rngs: tuple[np.random.Generator, ...]
    f: np.ndarray


def initial_state(
    problem: ConsensusProblem,
    seeds: Seeds,
    initial: np.ndarray | None = None,
    init_scale: float = 1.0,
) -> Start:
    """Draw f_i(0) ~ init_scale * N(0, I_d) per trial ("generate f_i(0) randomly", Alg. 1).

    ``initial`` (shape (N, d) or (trials, N, d)) overrides the random draw; the
    generators are still created so private variants can draw their noise from them.
    """
    seed_seqs = as_seed_sequences(seeds)
    rngs = tuple(np.random.default_rng(s) for s in seed_seqs)
    shape = (problem.nodes, problem.dim)
    if initial is None:
        scale = real("init_scale", init_scale, strict=False)
        f0 = np.stack([scale * rng.standard_normal(shape) for rng in rngs])
    else:
        f0 = np.asarray(initial, dtype=np.float64)
        if f0.shape == shape:
            f0 = np.broadcast_to(f0, (len(rngs),) + shape).copy()
        elif f0.shape != (len(rngs),) + shape:
            raise InvalidConfiguration(
                f"initial has shape {f0.shape}; expected {shape} or {(len(rngs),) + shape}"
            )
        if not np.all(np.isfinite(f0)):
            raise InvalidConfiguration("initial contains NaN or inf")
    return Start(seeds=seed_seqs, rngs=rngs, f=f0)


def check_network(problem: ConsensusProblem, network: Network) -> None:
    """Raise unless the network has exactly one node per data partition."""
    if network.nodes != problem.nodes:
        raise InvalidConfiguration(
            f"the network has {network.nodes} nodes but the problem has {problem.nodes} "
            "partitions; build both with the same N"
        )


@dataclass(frozen=True, eq=False)
class Run:
    """Transcript of a batch of runs of one algorithm.

    Fields (shapes): ``primal`` f_i(t) (trials, T+1, N, d); ``dual`` lambda_i(t)
    (trials, T+1, N, d); ``newton_steps`` per primal update (trials, T, N), 0 where the
    update is closed form; ``problem`` the ERM problem run on; ``reference`` the CVXPY
    optimum used for the gap metrics, if given. :attr:`objective` is computed on first use.
    """

    algorithm: str
    problem: ConsensusProblem | SharingProblem
    primal: np.ndarray
    dual: np.ndarray
    newton_steps: np.ndarray
    parameters: Mapping[str, object]
    seeds: tuple[np.random.SeedSequence, ...]
    wall_time_s: float
    reference: Optimum | None = None
    extras: Mapping[str, np.ndarray] = field(default_factory=dict)

    @property
    def trials(self) -> int:
        """Number of independent trials in the batch."""
        return self.primal.shape[0]

    @property
    def iterations(self) -> int:
        """Number of iterations T (the transcript has T+1 entries, t = 0..T)."""
        return self.primal.shape[1] - 1

    def _require_reference(self) -> Optimum:
        if self.reference is None:
            raise InvalidConfiguration(
                "this run has no reference optimum; pass reference=centralized_optimum(problem)"
            )
        return self.reference

    @cached_property
    def objective(self) -> np.ndarray:
        """O_ERM(f_i(t)) of eq. (1) at every node's iterate, shape (trials, T+1, N)."""
        values = np.stack([self.problem.objective(self.primal[:, t]) for t in range(self.iterations + 1)], axis=1)
        values.setflags(write=False)
        return values

    @property
    def objective_gap(self) -> np.ndarray:
        """``max_i (O_ERM(f_i(t)) - O*) / |O*|`` per trial and iteration, shape (trials, T+1)."""
        reference = self._require_reference()
        return np.max(self.objective - reference.objective, axis=-1) / abs(reference.objective)

    @property
    def consensus_error(self) -> np.ndarray:
        """max_i ||f_i(t) - f_c*||_2 per trial and iteration, shape (trials, T+1)."""
        reference = self._require_reference()
        return np.max(np.linalg.norm(self.primal - reference.solution, axis=-1), axis=-1)

    @property
    def final_mean(self) -> np.ndarray:
        """Node average of f_i(T) per trial, shape (trials, d)."""
        return self.primal[:, -1].mean(axis=1)

    def trial(self, k: int) -> "Run":
        """The k-th trial as a run of its own."""
        keep = slice(k, k + 1)
        return Run(
            algorithm=self.algorithm,
            problem=self.problem,
            primal=self.primal[keep],
            dual=self.dual[keep],
            newton_steps=self.newton_steps[keep],
            parameters=self.parameters,
            seeds=self.seeds[keep],
            wall_time_s=self.wall_time_s,
            reference=self.reference,
            extras={name: value[keep] for name, value in self.extras.items()},
        )


class Recorder:
    """Preallocated transcript filled iteration by iteration by an algorithm's loop.

    Construction validates the network size and ``iterations`` and draws f(0) (see
    :func:`initial_state`); ``recorder.start.f`` is where the algorithm begins. The dual has
    the primal's dimension unless ``dual_dim`` says otherwise (ADMM sharing: y has one entry
    per sample).
    """

    def __init__(
        self,
        problem: ConsensusProblem,
        network: Network | None,
        iterations: int,
        seeds: Seeds,
        initial: np.ndarray | None = None,
        init_scale: float = 1.0,
        dual_dim: int | None = None,
    ) -> None:
        if network is not None:  # the sharing family has no peer network
            check_network(problem, network)
        iterations = positive_int("iterations", iterations)
        self.problem = problem
        self.start = initial_state(problem, seeds, initial, init_scale)
        self.started = time.perf_counter()
        trials, nodes, dim = self.start.f.shape
        self.primal = np.empty((trials, iterations + 1, nodes, dim))
        self.dual = np.empty((trials, iterations + 1, nodes, dim if dual_dim is None else dual_dim))
        self.newton_steps = np.zeros((trials, iterations, nodes), dtype=np.int64)
        self.record(0, self.start.f, np.zeros(self.dual.shape[:1] + self.dual.shape[2:]))

    def record(self, t: int, f: np.ndarray, lam: np.ndarray, newton_steps: np.ndarray | None = None) -> None:
        """Store f(t), lambda(t) (and the Newton steps of the update that produced them)."""
        self.primal[:, t] = f
        self.dual[:, t] = lam
        if newton_steps is not None:
            self.newton_steps[:, t - 1] = newton_steps

    def finish(
        self,
        algorithm: str,
        parameters: Mapping[str, object],
        reference: Optimum | None,
        extras: Mapping[str, np.ndarray] | None = None,
    ) -> Run:
        """Freeze the transcript into a :class:`Run`."""
        for array in (self.primal, self.dual, self.newton_steps):
            array.setflags(write=False)
        return Run(
            algorithm=algorithm,
            problem=self.problem,
            primal=self.primal,
            dual=self.dual,
            newton_steps=self.newton_steps,
            parameters=dict(parameters),
            seeds=self.start.seeds,
            wall_time_s=time.perf_counter() - self.started,
            reference=reference,
            extras=dict(extras or {}),
        )
