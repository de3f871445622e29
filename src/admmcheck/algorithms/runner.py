"""The scaffold every algorithm shares: one decorator turns update equations into a ``run_*``.

An algorithm module writes only its update equations, as a generator

    @algorithm("madmm")
    def run_madmm(context: RunContext, *, penalty=0.5, theta=0.5):
        ...validate its own parameters, record them in context.parameters...
        for t in range(context.iterations):
            ...the paper's updates...
            yield f, lam, newton_steps        # f(t+1), lambda(t+1), Newton steps (or None)

and :func:`algorithm` makes of it the public function

    run_madmm(problem, network, *, penalty=0.5, theta=0.5, iterations=100, seeds=0,
              initial=None, init_scale=1.0, tol=DEFAULT_TOL, reference=None) -> Run

which validates the shared arguments, draws f(0) (:class:`~admmcheck.solving.runs.Recorder`), records
every yielded iterate and returns the one :class:`~admmcheck.solving.runs.Run` type. The updates run
with one BLAS thread (:func:`one_blas_thread`). The generated
signature is a real one (``inspect.signature`` and ``help`` show every keyword).
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.solving.local_solver import DEFAULT_TOL
from admmcheck.problems.networks import Network
from admmcheck.solving.oracle import Optimum
from admmcheck.solving.runs import Recorder, Run, Seeds, Start

Step = tuple  # (f, lam) or (f, lam, newton_steps)


def one_blas_thread():
    """Context limiting BLAS to one thread (``threadpoolctl``), restored on exit.

    The updates are many small batched products (d x d Hessians, (K, d) @ (d, B) margins), where
    BLAS threads cost more than they give: measured 1.3-3.5x slower with two threads on 10^4 PP
    trials, and 29 s against 8.6 s for an Adult-sized M-ADMM run (issue 19). Parallelism comes
    from independent trial blocks in separate processes instead (:mod:`admmcheck.solving.parallel`)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


@dataclass
class RunContext:
    """What the update equations see: the problem, the network, T, f(0) and the per-trial
    generators (``start``), the Newton tolerance, and where to put the run's parameters and
    extra arrays (noise drawn, unperturbed minimisers, ...)."""

    problem: object  # ConsensusProblem or SharingProblem
    network: Network | None
    iterations: int
    start: Start
    tol: float
    parameters: dict[str, object] = field(default_factory=dict)
    extras: dict[str, np.ndarray] = field(default_factory=dict)


_SHARED = [
    inspect.Parameter("iterations", inspect.Parameter.KEYWORD_ONLY, default=100, annotation=int),
    inspect.Parameter("seeds", inspect.Parameter.KEYWORD_ONLY, default=0, annotation=Seeds),
    inspect.Parameter("initial", inspect.Parameter.KEYWORD_ONLY, default=None, annotation="np.ndarray | None"),
    inspect.Parameter("init_scale", inspect.Parameter.KEYWORD_ONLY, default=1.0, annotation=float),
    inspect.Parameter("tol", inspect.Parameter.KEYWORD_ONLY, default=DEFAULT_TOL, annotation=float),
    inspect.Parameter("reference", inspect.Parameter.KEYWORD_ONLY, default=None, annotation="Optimum | None"),
]

SHARED_DOC = """
    Shared keywords: ``iterations`` T; ``seeds`` one per trial (an int, a SeedSequence or a
    sequence of them); ``initial`` f(0) as (N, d) or (trials, N, d) instead of a random draw of
    scale ``init_scale``; ``tol`` the Newton tolerance of the primal subproblems;
    ``reference`` a CVXPY optimum to measure against. Returns a :class:`~admmcheck.solving.runs.Run`."""


def algorithm(name: str, *, peers: bool = True, zero_start: bool = False,
              dual_dim: Callable[[object], int] | None = None) -> Callable[[Callable[..., Iterator[Step]]], Callable[..., Run]]:
    """Decorator: update equations (a generator over t = 1..T) -> ``run_*`` (module docstring).

    ``peers=False`` for algorithms without a peer network (ADMM sharing: parties and a server),
    whose ``run_*`` takes the problem alone; ``zero_start`` makes f(0) = 0 the default start
    (the sharing paper initialises x, y, z with 0) instead of a random draw; ``dual_dim(problem)``
    gives the dual's dimension when it is not the primal's."""

    def wrap(updates: Callable[..., Iterator[Step]]) -> Callable[..., Run]:
        own = list(inspect.signature(updates).parameters.values())[1:]  # drop the context

        @functools.wraps(updates)
        def run(problem, network: Network | None = None, *, iterations: int = 100, seeds: Seeds = 0,
                initial: np.ndarray | None = None, init_scale: float = 1.0, tol: float = DEFAULT_TOL,
                reference: Optimum | None = None, **parameters: object) -> Run:
            if peers and network is None:
                raise InvalidConfiguration(f"{name} runs on a network of peers: pass one (networks.ring(N), ...)")
            if not peers and network is not None:
                raise InvalidConfiguration(f"{name} has parties and a server, no peer network: do not pass one")
            if zero_start and initial is None:
                initial = np.zeros((problem.nodes, problem.dim))
            recorder = Recorder(problem, network, iterations, seeds, initial, init_scale,
                                None if dual_dim is None else dual_dim(problem))
            context = RunContext(problem, network, iterations, recorder.start, tol)
            t = 0
            with one_blas_thread():
                for t, step in enumerate(updates(context, **parameters), start=1):
                    if t > iterations:
                        break
                    recorder.record(t, *step)
            if t != iterations:
                raise InvalidConfiguration(f"{name} produced {t} iterates for T = {iterations}")  # a bug, not input
            return recorder.finish(name, context.parameters | {"iterations": iterations, "tol": tol}, reference,
                                   context.extras)

        positional = [inspect.Parameter("problem", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        if peers:
            positional.append(inspect.Parameter("network", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Network))
        run.__signature__ = inspect.Signature(positional + own + _SHARED, return_annotation=Run)
        run.__doc__ = (updates.__doc__ or "") + SHARED_DOC
        return run

    return wrap
