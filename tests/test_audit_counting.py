"""The bounding split is counted in the workers (issue 30, speed): the counts that come back are the
ones the drawn blocks give when counted here from the events' definitions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from admmcheck.audit import PrivacyClaim, audit, auditor
from admmcheck.audit.statistics.counting import Tally
from admmcheck.audit.statistics.curve import fit_ladders
from admmcheck.audit.statistics.events import Event, SelectionSizes, candidate_events, histogram_edges, scores_of
from admmcheck.audit.inputs.outputs import Block, Encoding
from admmcheck.audit.running.sampling import Sampler, Source, Task
from admmcheck.audit.running.settings import AuditSettings
from admmcheck.foundations.errors import AdmmcheckError, MechanismError

MECHANISMS = str(Path(__file__).resolve().parent / "mechanisms.py")


def _sampler(mechanism: str, pair: str, workers: int = 2) -> Sampler:
    return Sampler(Source(f"{MECHANISMS}:{mechanism}"), Source(f"{MECHANISMS}:{pair}"),
                   AuditSettings(seed=3, workers=workers))


def _by_hand(tally: Tally, block: Block) -> np.ndarray:
    """The counts from the definitions: {score > t} or {score < t}; bars [lo, hi); ladder sets' bins."""
    x = tally.encoding.features(block)
    members, bars, steps = [], [], []
    for k, event in enumerate(tally.events):
        s = np.asarray(event.score(x), dtype=float)
        members.append(np.sum(s > event.threshold) if event.above else np.sum(s < event.threshold))
        edges = tally.edges[k]
        inner = [np.sum((s >= lo) & (s < hi)) for lo, hi in zip(edges[:-1], edges[1:])]
        inner[0] += np.sum(s < edges[0])  # below the first edge: the first bar
        inner[-1] += np.sum(s >= edges[-1])
        bars += inner
        for ladder in tally.ladders.ladders:
            if ladder.index == k:
                c = ladder.thresholds
                steps += [np.sum(s < c[0])] + [np.sum((s >= a) & (s < b)) for a, b in zip(c[:-1], c[1:])] \
                    + [np.sum(s >= c[-1])]
    return np.array(members + bars + steps + [tally.encoding.unseen(block), len(block)], dtype=np.int64)


def test_the_workers_counts_are_the_drawn_blocks_counted_here():
    with _sampler("gaussian", "vector_pair") as sampler:
        sampler.probe()
        selection = [b for _, b in sampler.draw([Task(0, side, 0, 3_000) for side in (0, 1)])]
        encoding = Encoding.fit(tuple(selection))
        s0, s1 = encoding.features(selection[0]), encoding.features(selection[1])
        sizes = SelectionSizes((3_000, 3_000), (20_000, 20_000), 0.0125, 1e-5)
        events = candidate_events(s0, s1, encoding.layout, sizes, seed=3, most=10, plug_in=True)
        assert {"projection", "classifier"} <= {e.family for e in events}  # closures and a fitted ensemble travel
        pooled = [np.concatenate(pair) for pair in zip(scores_of(events, s0), scores_of(events, s1))]
        tally = Tally(encoding, tuple(events), tuple(histogram_edges(e, p) for e, p in zip(events, pooled)),
                      fit_ladders(events, pooled))
        assert tally.ladders.bins > 0
        tasks = [Task(0, side, 1 + b, 2_500) for b in range(2) for side in (0, 1)]
        counted = list(sampler.count(tasks, tally))
        drawn = list(sampler.draw(tasks))
    assert [t for t, _ in counted] == [t for t, _ in drawn] == tasks
    for (_, counts), (_, block) in zip(counted, drawn):
        assert counts.shape == (tally.size,)
        np.testing.assert_array_equal(counts, _by_hand(tally, block))
        assert 0 < counts[0] < len(block)


def _unimportable_score(x):  # this test module is not importable in a worker process
    return x[:, 0]


def test_a_tally_that_cannot_count_is_admmchecks_fault_and_malformed_counts_are_refused():
    with _sampler("laplace", "scalar_pair", workers=1) as sampler:
        first = sampler.probe()
        encoding = Encoding.fit((first, first))
        edges = (np.array([-np.inf, 0.0, np.inf]),)

        def failing(x):  # defined in a function, so it travels by value and fails in the worker
            raise ValueError("cannot score")

        for score, why in ((failing, "ValueError: cannot score"), (_unimportable_score, "could not load the chosen events")):
            tally = Tally(encoding, (Event("coordinate", "x > 0", 0, score, 0.0, True),), edges, fit_ladders([], []))
            with pytest.raises(AdmmcheckError, match="fault of admmcheck, not of the mechanism") as caught:
                list(sampler.count([Task(0, 0, 1, 10)], tally))
            assert why in str(caught.value) and not isinstance(caught.value, MechanismError)

        class Liar:  # a worker answer whose counts do not fit the tally (a mechanism writing on the answer pipe)
            def __init__(self, counts):
                self.counts = counts

            def receive(self, timeout):
                return {"status": "ok", "counts": self.counts}, b""

        good = Tally(encoding, (Event("coordinate", "x > 0", 0, lambda x: x[:, 0], 0.0, True),),
                     (np.array([-np.inf, 0.0, np.inf]),), fit_ladders([], []))
        task = Task(0, 0, 1, 10)
        assert list(sampler._counts(task, Liar([4, 6, 4, 0, 10]), good.size)) == [4, 6, 4, 0, 10]
        for counts in ([4, 6, 4, 0], [4, 6, 4, 0, 9], [4, 6, 4, -1, 10], [4, 6, 4.0, 0, 10], [11, 6, 4, 0, 10], "x"):
            with pytest.raises(MechanismError, match="malformed counts"):
                sampler._counts(task, Liar(counts), good.size)


def _audit_dict(**changes) -> dict:
    result = audit(Source(f"{MECHANISMS}:gaussian"), Source(f"{MECHANISMS}:vector_pair"), PrivacyClaim(0.5, 1e-5),
                   samples=20_000, seed=4, **changes).as_dict()
    return {key: result[key] for key in ("epsilon_lower_bound", "event", "p_d0", "p_d1", "candidates", "histogram",
                                         "privacy_curve", "samples_used", "notes")}


def test_an_audit_is_the_same_whether_the_workers_or_this_process_count(monkeypatch):
    here = _audit_dict()
    monkeypatch.setattr(auditor, "COUNT_IN_WORKERS", 0)
    assert _audit_dict() == here
    assert here["samples_used"]["bounding"] == [17_000, 17_000] and len(here["candidates"]) > 3
