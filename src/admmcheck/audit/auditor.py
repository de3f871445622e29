"""The black-box audit: sample, choose events on one split, bound them on the other.

1. Workers draw a selection split (about 10 % of the samples per side) and the main
   process chooses candidate events on it (:mod:`admmcheck.audit.events`).
2. Workers draw the bounding split; each block is reduced at once to the events' counts,
   so memory holds one block per worker, never the whole bounding split.
3. Each event gives ε_lb = ln((p̲_a − δ)/p̄_b) from its two one-sided Clopper-Pearson
   bounds. The error probability alpha = 1 − confidence is split among the events before
   the bounding split is drawn (a weighted Bonferroni correction, :func:`event_levels`):
   the event predicted best on the selection split gets half of it, the other events share
   the other half, so all bounds hold together with probability >= confidence while the
   likely winner pays little for the others. The audit reports the largest bound; it is a
   **violation** only when that exceeds the claimed ε.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from admmcheck.audit.checkpoint import Checkpoint
from admmcheck.audit.contract import Layout, PrivacyClaim
from admmcheck.audit.estimators import cp_lower, cp_upper, delta_bound, epsilon_bound
from admmcheck.audit.events import Event, SelectionSizes, candidate_events
from admmcheck.audit.sampling import Randomness, Sampler, Source, Task
from admmcheck.errors import InvalidConfiguration
from admmcheck.progress import Budget

MOST_EVENTS = 10
SELECTION_FRACTION = 0.15
SELECTION_NUMBERS = 16_000_000  # at most this many output numbers per side are kept for selection


@dataclass(frozen=True)
class AuditResult:
    """The verdict of one audit and the evidence behind it (see :meth:`as_dict`)."""

    verdict: str
    epsilon_lower_bound: float
    claim: PrivacyClaim
    confidence: float
    samples: int
    selection_samples: tuple[int, int]
    bounding_samples: tuple[int, int]
    event: str
    family: str
    numerator: int
    pair: int
    counts: tuple[int, int]
    intervals: tuple[tuple[float, float], tuple[float, float]]
    delta_lower_bound: float
    candidates: tuple[dict[str, object], ...]
    intervals_bounded: int
    seed: int
    wall_time_s: float
    layout: Layout
    pairs: int
    complete: bool
    randomness: Randomness
    mechanism: str = ""
    notes: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, object]:
        """JSON-ready fields of the ``admmcheck audit --json`` contract."""
        def side(k: int) -> dict[str, object]:
            n = self.bounding_samples[k]
            return {"count": self.counts[k], "n": n, "estimate": self.counts[k] / n if n else None,
                    "interval": list(self.intervals[k])}

        return {
            "verdict": self.verdict,
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "claimed_epsilon": self.claim.epsilon,
            "claimed_delta": self.claim.delta,
            "delta_lower_bound_at_claimed_epsilon": self.delta_lower_bound,
            "confidence": self.confidence,
            "samples": self.samples,
            "samples_used": {"selection": list(self.selection_samples), "bounding": list(self.bounding_samples)},
            "event": self.event,
            "event_family": self.family,
            "event_more_likely_under": f"d{self.numerator}",
            "neighbour_pair": self.pair,
            "neighbour_pairs": self.pairs,
            "p_d0": side(0),
            "p_d1": side(1),
            "multiplicity": {"intervals": self.intervals_bounded, "method": "weighted Bonferroni over every "
                             "one-sided Clopper-Pearson interval of every bounded event: the event ranked best on "
                             "the selection split gets half of 1 - confidence (per neighbour pair), the others "
                             "share the rest; each candidate's 'level' is its share"},
            "candidates": list(self.candidates),
            "output_layout": self.layout.as_dict(),
            "mechanism": self.mechanism,
            "seed": self.seed,
            "reproducible": self.randomness.reproducible,
            "randomness": self.randomness.as_dict(),
            "wall_time_s": self.wall_time_s,
            "complete": self.complete,
            "notes": list(self.notes),
        }


def _tasks(side_counts: int, block_size: int, first_block: int, pair: int) -> list[Task]:
    """Blocks for both sides, interleaved, covering ``side_counts`` samples per side."""
    tasks = []
    blocks = math.ceil(side_counts / block_size)
    for b in range(blocks):
        count = min(block_size, side_counts - b * block_size)
        tasks.extend(Task(pair, side, first_block + b, count) for side in (0, 1))
    return tasks


def audit(
    mechanism: Source,
    neighbours: Source,
    claim: PrivacyClaim,
    samples: int = 100_000,
    confidence: float = 0.95,
    seed: int = 0,
    workers: int | None = None,
    timeout: float = 10.0,
    max_time: float | None = None,
    checkpoint: str | None = None,
    progress: bool = False,
    scheduler: str | None = None,
    randomness: str = "auto",
) -> AuditResult:
    """Audit ``mechanism`` on ``neighbours`` against ``claim`` with ``samples`` draws per side.

    Blocks are drawn on ``workers`` local processes (default: every core), or as tasks of the
    Dask cluster whose scheduler is at ``scheduler`` (:mod:`admmcheck.audit.dask_executor`;
    ``workers`` then defaults to the cluster's threads); either gives the same samples.

    ``randomness``: "seeded" (the mechanism's outputs must be functions of the sample seeds: the
    same seed gives the same result), "unseeded" (the mechanism draws its own randomness, e.g. from
    ``secrets``; samples are independent draws but not reproducible) or "auto" (probe, and go on
    unseeded with a :class:`~admmcheck.errors.UnseededRandomness` warning when the same seed gives
    different outputs); see :func:`~admmcheck.audit.sampling.judge_randomness`."""
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 200:
        raise InvalidConfiguration(f"--samples {samples!r} must be an integer >= 200 (per side)")
    if not 0.5 <= confidence < 1:
        raise InvalidConfiguration(f"--confidence {confidence!r} must lie in [0.5, 1)")
    started = time.perf_counter()
    budget = Budget(max_time, progress)
    with Sampler(mechanism, neighbours, seed, workers, timeout, scheduler, randomness) as sampler:
        layout = sampler.probe()
        drawn_as = sampler.randomness
        k = layout.size
        block_size = max(50, min(10_000, 2_000_000 // max(1, k)))
        selection = min(max(int(samples * SELECTION_FRACTION), min(2_000, samples // 2)),
                        max(1_000, SELECTION_NUMBERS // max(1, k)), samples // 2)
        bounding = samples - selection
        store = None
        if checkpoint is not None:
            store = Checkpoint(checkpoint, {
                "mechanism": mechanism.describe(), "neighbours": neighbours.describe(), "seed": seed,
                "mechanism_sha256": mechanism.fingerprint(), "neighbours_sha256": neighbours.fingerprint(),
                "samples": samples, "epsilon": claim.epsilon, "delta": claim.delta, "confidence": confidence,
                "block_size": block_size, "selection": selection, "output_size": k,
                "version": 2,  # stored bounding counts belong to the events this code chooses: bump when that changes
            })
            drawn_as = _resumed_randomness(store, drawn_as)
        try:
            outcome = _run(sampler, layout, claim, samples, confidence, seed, selection, bounding, block_size,
                           budget, store)
        finally:
            if store is not None:
                store.close()
    return AuditResult(**outcome, claim=claim, confidence=confidence, samples=samples, seed=seed,
                       wall_time_s=time.perf_counter() - started, layout=layout, pairs=sampler.pairs,
                       mechanism=mechanism.describe(), randomness=drawn_as)


def _resumed_randomness(store: Checkpoint, now: Randomness) -> Randomness:
    """Record in the checkpoint that blocks are drawn unseeded; a result that reuses such blocks is not
    reproducible even when this run's draws are."""
    if now.mode == "unseeded":
        store.note("drawn_unseeded", now.reason)
        return now
    earlier = store.noted("drawn_unseeded")
    if earlier is None:
        return now
    return Randomness(now.requested, now.mode, False, f"this run drew seeded samples, but the checkpoint holds "
                      f"blocks an earlier run drew unseeded ({earlier})")


def _run(sampler: Sampler, layout: Layout, claim: PrivacyClaim, samples: int, confidence: float, seed: int,
         selection: int, bounding: int, block_size: int, budget: Budget, store: Checkpoint | None) -> dict[str, Any]:
    alpha = 1 - confidence
    pairs = sampler.pairs
    stored_selection = store.load("selection") if store else {}
    stored_counts = store.load("bounding") if store else {}
    planned = SelectionSizes((selection, selection), (bounding, bounding),
                             event_levels(MOST_EVENTS, alpha / pairs)[0] / 2, claim.delta)
    chosen: list[tuple[int, Event]] = []
    counts: dict[tuple[int, int], np.ndarray] = {}
    complete = True
    selection_blocks = math.ceil(selection / block_size)
    for pair in range(pairs):
        parts: dict[int, list[np.ndarray]] = {0: [], 1: []}
        tasks = _tasks(selection, block_size, 0, pair)
        missing = [t for t in tasks if (pair, t.side, t.block) not in stored_selection]
        drawn: dict[tuple[int, int], np.ndarray] = {}
        for task, array in budget.steps(sampler.draw(missing), f"audit: selection (pair {pair})", total=len(missing)):
            _store(store, "selection", task, array)
            drawn[(task.side, task.block)] = array
        for task in tasks:  # the selection split is needed whole: the time budget applies to bounding only
            key = (task.side, task.block)
            parts[task.side].append(drawn[key] if key in drawn else stored_selection[(pair, *key)])
        s0, s1 = np.concatenate(parts[0]), np.concatenate(parts[1])
        events = candidate_events(s0, s1, layout, planned, seed=seed, most=MOST_EVENTS)
        chosen.extend((pair, e) for e in events)
        del parts, s0, s1, drawn
        tasks = _tasks(bounding, block_size, selection_blocks, pair)
        side_counts = {0: np.zeros(len(events), dtype=np.int64), 1: np.zeros(len(events), dtype=np.int64)}
        side_n = [0, 0]
        missing = []
        for task in tasks:
            stored = stored_counts.get((pair, task.side, task.block))
            if stored is None:
                missing.append(task)
            else:
                side_counts[task.side] += stored[:-1]
                side_n[task.side] += int(stored[-1])
        for task, array in budget.steps(sampler.draw(_until(missing, budget)), f"audit: bounding (pair {pair})",
                                        total=len(missing)):
            block_counts = np.array([int(np.sum(e.indicator(array))) for e in events] + [len(array)], dtype=np.int64)
            _store(store, "bounding", task, block_counts)
            side_counts[task.side] += block_counts[:-1]
            side_n[task.side] += len(array)
        if side_n[0] < bounding or side_n[1] < bounding:
            complete = False
        for side in (0, 1):
            counts[(pair, side)] = side_counts[side]
        counts[(pair, -1)] = np.array(side_n)
    return _bound(chosen, counts, claim, alpha, selection, complete)


def _until(tasks: list[Task], budget: Budget):
    for task in tasks:
        if budget.expired():
            return
        yield task


def _store(store: Checkpoint | None, phase: str, task: Task, array: np.ndarray) -> None:
    if store is not None:
        store.store(phase, task.pair, task.side, task.block, array)


def event_levels(m: int, alpha: float) -> list[float]:
    """Error probabilities of ``m`` events ranked best first, summing to ``alpha``.

    The first event gets alpha/2 and the other m − 1 share alpha/2 equally (a lone event gets
    alpha); each event spends its level on its two one-sided intervals, half each. The levels
    are fixed by the ranking on the selection split, before any bounding sample is drawn, so
    by Boole's inequality all bounds hold together with probability >= 1 − alpha.
    """
    if m == 1:
        return [alpha]
    return [alpha / 2] + [alpha / (2 * (m - 1))] * (m - 1)


def _bound(chosen: list[tuple[int, Event]], counts, claim: PrivacyClaim, alpha: float, selection: int,
           complete: bool) -> dict[str, Any]:
    m = len(chosen)
    per_pair: dict[int, int] = {}
    for pair, _ in chosen:
        per_pair[pair] = per_pair.get(pair, 0) + 1
    levels = {pair: event_levels(size, alpha / len(per_pair)) for pair, size in per_pair.items()}
    candidates, best = [], None
    index_in_pair: dict[int, int] = {}
    for pair, event in chosen:
        k = index_in_pair.get(pair, 0)
        index_in_pair[pair] = k + 1
        alpha_each = levels[pair][k] / 2
        n = counts[(pair, -1)]
        c = (int(counts[(pair, 0)][k]), int(counts[(pair, 1)][k]))
        a, b = event.numerator, 1 - event.numerator
        lower_a = float(cp_lower(c[a], n[a], alpha_each))
        upper_b = float(cp_upper(c[b], n[b], alpha_each))
        epsilon = float(epsilon_bound(lower_a, upper_b, claim.delta))
        intervals = [(0.0, 0.0), (0.0, 0.0)]
        intervals[a] = (lower_a, float(cp_upper(c[a], n[a], alpha_each)))
        intervals[b] = (float(cp_lower(c[b], n[b], alpha_each)), upper_b)
        row = {"event": event.description, "family": event.family, "pair": pair, "counts": list(c),
               "n": [int(v) for v in n], "epsilon_lower_bound": max(epsilon, 0.0), "level": 2 * alpha_each,
               "predicted_on_selection": event.predicted_epsilon,
               "delta_lower_bound_at_claimed_epsilon": delta_bound(lower_a, upper_b, claim.epsilon)}
        candidates.append(row)
        if best is None or epsilon > best[0]:
            best = (epsilon, pair, event, c, tuple(intervals), lower_a, upper_b, n)
    epsilon, pair, event, c, intervals, lower_a, upper_b, n = best
    epsilon = max(epsilon, 0.0)
    notes = []
    if not complete:
        notes.append("the time budget ran out before every bounding sample was drawn; the bound uses those drawn")
    return {
        "verdict": "violation" if epsilon > claim.epsilon else "no-violation-found",
        "epsilon_lower_bound": epsilon,
        "selection_samples": (selection, selection),
        "bounding_samples": (int(n[0]), int(n[1])),
        "event": event.description, "family": event.family, "numerator": event.numerator, "pair": pair,
        "counts": c, "intervals": intervals,
        "delta_lower_bound": max(r["delta_lower_bound_at_claimed_epsilon"] for r in candidates),
        "candidates": tuple(sorted(candidates, key=lambda r: -r["epsilon_lower_bound"])),
        "intervals_bounded": 2 * m, "complete": complete, "notes": tuple(notes),
    }
