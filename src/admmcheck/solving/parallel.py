"""Independent trial blocks of one of our own ``run_*`` functions on a process pool.

Trials are independent given their seeds, so a batch of S trials splits into blocks of
consecutive seeds, each run in a worker process (``run(problem, network, seeds=block,
**options)``), and the blocks come back in order. Each worker uses one BLAS thread (the
``run_*`` scaffold sets it), so the machine's cores are used by processes, not threads.
Memory stays bounded: at most two blocks per worker are in flight, and the caller consumes
each block before more are submitted.

This is for the toolkit's reference implementations (trusted code): third-party mechanisms
under audit run only in the auditor's isolated workers (:mod:`admmcheck.audit.running.sampling`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Callable, Iterator, Sequence

import numpy as np

from admmcheck.audit.running.limits import available_cores
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.solving.runs import Run, as_seed_sequences

DEFAULT_BLOCK = 1000  # trials per block: measured fastest for N=5, d=5, B_i=50 (500-1000)


def _run_block(run: Callable[..., Run], problem, network, seeds, options) -> Run:
    return run(problem, network, seeds=list(seeds), **options)


def run_blocks(run: Callable[..., Run], problem, network, *, seeds, block: int = DEFAULT_BLOCK,
               workers: int | None = None, **options) -> Iterator[Run]:
    """Yield ``run(problem, network, seeds=seeds[k:k + block], **options)`` for k = 0, block, ...
    in order, computed on ``workers`` processes (default: every core; 1 runs in this process).

    Each block equals the same call made directly, so concatenating the blocks gives the
    trials of one batched call up to floating-point rounding of the batched products."""
    sequences = as_seed_sequences(seeds)
    if not isinstance(block, (int, np.integer)) or block < 1:
        raise InvalidConfiguration(f"block must be a positive number of trials, got {block!r}")
    workers = available_cores() if workers is None else workers
    if not isinstance(workers, (int, np.integer)) or workers < 1:
        raise InvalidConfiguration(f"workers must be a positive integer, got {workers!r}")
    chunks = [sequences[k:k + block] for k in range(0, len(sequences), block)]
    if workers == 1 or len(chunks) == 1:
        for chunk in chunks:
            yield _run_block(run, problem, network, chunk, options)
        return
    with ProcessPoolExecutor(max_workers=min(workers, len(chunks)), mp_context=get_context("spawn")) as pool:
        pending: deque = deque()
        upcoming = iter(chunks)
        for chunk in upcoming:
            pending.append(pool.submit(_run_block, run, problem, network, chunk, options))
            if len(pending) >= 2 * workers:
                break
        while pending:
            result = pending.popleft().result()
            for chunk in upcoming:
                pending.append(pool.submit(_run_block, run, problem, network, chunk, options))
                break
            yield result


def run_parallel(run: Callable[..., Run], problem, network, *, seeds, block: int = DEFAULT_BLOCK,
                 workers: int | None = None, **options) -> Run:
    """:func:`run_blocks` joined into one :class:`~admmcheck.solving.runs.Run` (all trials in memory)."""
    return concatenate_runs(list(run_blocks(run, problem, network, seeds=seeds, block=block, workers=workers,
                                            **options)))


def concatenate_runs(runs: Sequence[Run]) -> Run:
    """One :class:`~admmcheck.solving.runs.Run` holding the trials of ``runs`` in order (same algorithm,
    problem and parameters; the wall time is the sum)."""
    if not runs:
        raise InvalidConfiguration("no runs to concatenate")
    first = runs[0]
    if any(r.algorithm != first.algorithm or r.parameters != first.parameters for r in runs):
        raise InvalidConfiguration("only blocks of one algorithm with the same parameters can be concatenated")
    return replace(
        first,
        primal=np.concatenate([r.primal for r in runs]),
        dual=np.concatenate([r.dual for r in runs]),
        newton_steps=np.concatenate([r.newton_steps for r in runs]),
        seeds=tuple(s for r in runs for s in r.seeds),
        wall_time_s=float(sum(r.wall_time_s for r in runs)),
        extras={key: np.concatenate([r.extras[key] for r in runs]) for key in first.extras},
    )
