"""The neighbour search: screen many candidate pairs, then audit only the chosen ones on fresh samples.

1. **Screening.** Every candidate pair (a :class:`~admmcheck.audit.inputs.contract.PairSequence`: a dataset's
   :class:`~admmcheck.audit.inputs.neighbourhoods.CandidatePairs`, StatDP's query-answer patterns, or a registered
   mechanism's :class:`~admmcheck.mechanisms.candidates.RegisteredPairs`)
   gets ``SearchSettings.samples`` samples per side of its own, drawn from a seed stream apart from
   the audit's. On them the audit's own event selection (:func:`~admmcheck.audit.statistics.events.candidate_events`)
   predicts the bound the pair would give on the audit's bounding split (without the learned
   families, :data:`SCREEN_SKIPS`, which cost seconds per pair); that prediction is the pair's score.
2. **Bounding.** The ``SearchSettings.keep`` best-scoring pairs are audited by
   :func:`~admmcheck.audit.auditor.audit` with the user's settings, on samples that share nothing
   with the screening samples.

Why the confidence holds: the screening samples are independent of every sample the audit draws,
so the chosen pairs are fixed before the audit's samples exist, exactly as the audit fixes its
events on the selection split before the bounding split. Conditionally on the choice, the audit's
weighted Bonferroni correction over the ``keep`` chosen pairs (1 − confidence split among them)
makes all its bounds hold together with probability ≥ confidence; the candidates that were screened
and dropped cost nothing, because no bound is ever computed for them.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from admmcheck.audit.auditor import MOST_EVENTS, audit, event_levels, selection_size
from admmcheck.audit.result import AuditResult
from admmcheck.audit.inputs.contract import PairSequence, Pairs
from admmcheck.claims.values import Claim
from admmcheck.audit.statistics.events import SelectionSizes, candidate_events
from admmcheck.audit.inputs.outputs import Block, Encoding
from admmcheck.audit.running.sampling import Sampler, Source, Task
from admmcheck.audit.running.settings import AuditSettings, SearchSettings  # noqa: F401 - SearchSettings is used here too
from admmcheck.foundations.progress import Budget

SCREEN_STREAM = 29  # mixed into the seed of the screening samples: a stream apart from the audit's
SCREEN_BLOCK = 5_000
# families not asked while screening: the learned ones (a gradient-boosting fit took seconds per candidate); the
# chosen pairs' audit uses every family
SCREEN_SKIPS = ("classifier", "mixed")
SCREEN_CUTS = 50  # thresholds tried per score while screening (the audit tries 400): a ranking needs no finer
# choice, and the bounds of each cut cost most of a candidate's screening time


def search_audit(mechanism: Source, candidates: PairSequence, claim: Claim,
                 settings: AuditSettings | None = None, search: SearchSettings | None = None,
                 progress: bool = False) -> AuditResult:
    """Screen ``candidates``, audit the ``search.keep`` best on fresh samples, and say which pair was found
    (``AuditResult.search``; see the module docstring for why the confidence holds)."""
    settings = settings or AuditSettings()
    search = search or SearchSettings()
    started = time.perf_counter()
    if len(candidates) > search.keep:
        scores = screen(mechanism, candidates, claim, settings, search, progress)
    else:  # nothing to choose: every candidate is audited
        scores = [float("nan")] * len(candidates)
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
    chosen = order[:min(search.keep, len(candidates))]
    screened_s = time.perf_counter() - started
    result = audit(mechanism, Source(obj=Pairs([candidates[i] for i in chosen])), claim, settings, progress=progress)
    found = chosen[result.pair]
    return dataclasses.replace(result, wall_time_s=time.perf_counter() - started, search={
        "found": candidates.describe(found) | {"screen_epsilon": _finite(scores[found])},
        "chosen": [candidates.describe(i) | {"screen_epsilon": _finite(scores[i])} for i in chosen],
        "best_screened": [candidates.describe(i) | {"screen_epsilon": _finite(scores[i])} for i in order[:10]],
        "candidates_built": candidates.total or len(candidates), "candidates_screened": len(candidates),
        "screening_samples_per_side": search.samples, "kept": len(chosen), "screening_wall_time_s": screened_s,
        "multiplicity": "the pairs were chosen on screening samples independent of the audit's samples, so only "
                        "the chosen pairs share 1 - confidence; screened and dropped pairs are never bounded",
    })


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def screen(mechanism: Source, candidates: PairSequence, claim: Claim, settings: AuditSettings,
           search: SearchSettings, progress: bool = False) -> list[float]:
    """Each candidate's score: the bound the audit's event selection predicts for it on the audit's
    bounding split, from ``search.samples`` screening samples per side (-inf where none is predicted)."""
    seed = int(np.random.SeedSequence([settings.seed, SCREEN_STREAM]).generate_state(1, np.uint64)[0] >> 1)
    screening = settings.but(seed=seed, checkpoint=None)
    blocks = -(-search.samples // SCREEN_BLOCK)
    tasks = [Task(c, side, b, min(SCREEN_BLOCK, search.samples - b * SCREEN_BLOCK))
             for c in range(len(candidates)) for side in (0, 1) for b in range(blocks)]
    scores = [float("-inf")] * len(candidates)
    parts: dict[int, list[Block]] = {0: [], 1: []}
    budget = Budget(None, progress)
    with Sampler(mechanism, Source(obj=candidates), screening, most_pairs=len(candidates)) as sampler:
        sampler.pair_names = lambda pair: (f"the neighbour search's candidate "
                                           f"{candidates.describe(pair).get('change', pair)}, screened on seed {seed}, "
                                           "the screening's own stream")
        width = max(1, sampler.probe().values.shape[1])
        bounding = settings.samples - selection_size(settings.samples, width)  # the audit's bounding split
        planned = SelectionSizes((search.samples, search.samples), (bounding, bounding),
                                 event_levels(MOST_EVENTS, (1 - settings.confidence) / search.keep)[0] / 2,
                                 claim.planning_point().delta,
                                 cuts=SCREEN_CUTS)
        for task, block in budget.steps(sampler.draw(tasks), "search: screening candidate pairs", total=len(tasks)):
            parts[task.side].append(block)
            if task.side == 1 and task.block == blocks - 1:
                scores[task.pair] = _score(Block.concatenate(parts[0]), Block.concatenate(parts[1]), planned,
                                          settings.seed)
                parts = {0: [], 1: []}
    return scores


def _score(d0: Block, d1: Block, planned: SelectionSizes, seed: int) -> float:
    encoding = Encoding.fit((d0, d1))
    s0, s1 = encoding.features(d0), encoding.features(d1)
    kinds = encoding.category_labels() if encoding.categories else None
    events = candidate_events(s0, s1, encoding.layout, planned, seed=seed, most=1, kinds=kinds, skip=SCREEN_SKIPS)
    predicted = [e.predicted_epsilon for e in events if np.isfinite(e.predicted_epsilon)]
    return max(predicted, default=float("-inf"))
