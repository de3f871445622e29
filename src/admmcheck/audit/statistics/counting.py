"""What a block of the bounding split is reduced to: a :class:`Tally` of the chosen events.

The events, their histogram edges and the curve's ladders are fixed on the selection split before any
bounding sample is drawn. The main process counts the blocks it receives with :meth:`Tally.count`; on a
large bounding split (``auditor.COUNT_IN_WORKERS``) the tally goes instead to the worker processes once
per neighbour pair, and each worker counts the blocks it draws where it draws them
(:meth:`~admmcheck.audit.running.sampling.Sampler.count`), so those outputs never travel to the main process:
only a few hundred integers a block come back, as JSON. Events score samples with closures over fitted models (a logistic weight vector, a
gradient-boosting ensemble), which the standard pickle cannot write; :meth:`Tally.to_bytes` uses
cloudpickle, the serialiser Dask and joblib send such functions with, and a worker reads it with the
standard ``pickle.loads``. (That direction, main process to worker, is trusted; answers from the
workers are never unpickled.)
"""

from __future__ import annotations

from dataclasses import dataclass

import cloudpickle
import numpy as np

from admmcheck.audit.statistics.curve import Ladders
from admmcheck.audit.statistics.events import Event, histogram_counts, scores_of
from admmcheck.audit.inputs.outputs import Block, Encoding


@dataclass(frozen=True, eq=False)
class Tally:
    """The counts one bounding block gives: each event's count, then each event's histogram bars
    (between its ``edges``), then the bin counts of the curve's ``ladders``, then how many samples were of
    a kind the selection split never showed (``encoding``) and how many samples the block held."""

    encoding: Encoding
    events: tuple[Event, ...]
    edges: tuple[np.ndarray, ...]
    ladders: Ladders

    @property
    def size(self) -> int:
        """How many numbers :meth:`count` gives."""
        return len(self.events) + self.bars + self.ladders.bins + 2

    @property
    def bars(self) -> int:
        """How many histogram bars the events have together."""
        return sum(len(e) - 1 for e in self.edges)

    def count(self, block: Block) -> np.ndarray:
        """The block's counts, in the order the class docstring gives (each score computed once)."""
        features = self.encoding.features(block)
        members, bars, steps = [], [], []
        for k, (event, edge, scores) in enumerate(zip(self.events, self.edges, scores_of(list(self.events), features))):
            members.append(int(np.sum(event.member(scores))))
            bars.append(histogram_counts(scores, edge))
            steps.append(self.ladders.count(k, scores))
        tail = np.array([self.encoding.unseen(block), len(block)], dtype=np.int64)
        return np.concatenate([np.array(members, dtype=np.int64)] + bars + steps + [tail])

    def to_bytes(self) -> bytes:
        """The tally as a pickle a worker reads with ``pickle.loads``, closures included (module docstring)."""
        return cloudpickle.dumps(self, protocol=5)
