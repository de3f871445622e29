"""What the auditor audits: a mechanism, neighbouring datasets and a privacy claim.

* A **mechanism** is any callable ``mechanism(data, rng)`` returning everything an observer
  sees: numbers, arrays of any shape, strings, booleans, ``None``, lists and tuples (of
  data-dependent length too), mappings, nested (:mod:`admmcheck.audit.inputs.outputs` encodes them
  and keeps every distinction an observer could make). A mechanism may carry a vectorised
  form as the attribute ``batch``: ``mechanism.batch(data, rng, n) -> (n, k)`` numbers
  (see :func:`vectorised`); the sampler uses it when present.
* **Neighbours** are a zero-argument callable returning :class:`Pair` ``(d0, d1)``, several
  as :class:`Pairs`, or a plain 2-tuple ``(d0, d1)`` where that cannot be misread (see
  :func:`neighbour_pairs`).
* A **claim** is a :class:`~admmcheck.claims.Claim` value: ``PureDp(epsilon)``, ``ApproxDp(epsilon, delta)`` (also
  spelled :data:`PrivacyClaim`), ``ZeroConcentratedDp(rho)``, ``GaussianDp(mu)`` or a ``DpCurve``.

Mechanisms and neighbours given as text (``FILE.py:NAME`` or ``module:NAME``) are loaded
by :func:`admmcheck.audit.running.loading.load_callable` *inside the sampling worker processes only*: third-party code
never runs in the main process.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable, Sequence, Sized
from typing import Any, Callable

import numpy as np

from admmcheck.claims.values import ApproxDp
from admmcheck.foundations.errors import InvalidConfiguration


#: the (ε, δ) claim of the audits' first interface: :class:`~admmcheck.claims.ApproxDp`. Every audit takes any
#: :class:`~admmcheck.claims.Claim` (pure ε, (ε, δ), zCDP, GDP, a curve) and tests the notion claimed.
PrivacyClaim = ApproxDp


def vectorised(batch: Callable[[Any, np.random.Generator, int], np.ndarray]):
    """Decorator: attach ``batch(data, rng, n) -> (n, k)`` to a per-call mechanism."""
    def attach(mechanism):
        mechanism.batch = batch
        return mechanism
    return attach


@dataclass(frozen=True)
class Pair:
    """One pair of neighbouring datasets ``(d0, d1)``, read as exactly that whatever the datasets
    are (``Pair((X0, y0), (X1, y1))`` is one pair of supervised datasets)."""

    d0: Any
    d1: Any

    def dataset(self, side: int) -> Any:
        """``d0`` for side 0, ``d1`` for side 1."""
        return self.d1 if side else self.d0


@dataclass(frozen=True, init=False)
class Pairs:
    """Several pairs of neighbouring datasets, each audited: ``Pairs([Pair(a0, a1), (b0, b1), ...])``.
    Inside ``Pairs`` a plain 2-tuple is always one pair."""

    pairs: tuple[Pair, ...]

    def __init__(self, pairs: Iterable[Pair | tuple[Any, Any] | list[Any]]) -> None:
        if isinstance(pairs, (Pair, Pairs)) or not isinstance(pairs, Iterable):
            raise InvalidConfiguration("Pairs takes a list of pairs, e.g. Pairs([Pair(d0, d1), Pair(e0, e1)])")
        converted = []
        for position, pair in enumerate(pairs):
            if isinstance(pair, Pair):
                converted.append(pair)
            elif isinstance(pair, (tuple, list)) and len(pair) == 2:
                converted.append(Pair(pair[0], pair[1]))
            else:
                raise InvalidConfiguration(f"Pairs: item {position} is a {type(pair).__name__}, not a pair; "
                                           "write each item as Pair(d0, d1)")
        if not converted:
            raise InvalidConfiguration("Pairs: no pairs given; give at least one Pair(d0, d1)")
        object.__setattr__(self, "pairs", tuple(converted))


class PairSequence(Sequence):
    """Many pairs built on demand (the candidates of a neighbour search,
    :class:`~admmcheck.audit.inputs.neighbourhoods.CandidatePairs`): ``len(pairs)`` and ``pairs[i]`` -> :class:`Pair`;
    ``describe(i)`` says in words which pair i is, ``total`` how many there were before any subset was drawn
    (None: ``len``)."""

    total: int | None = None

    def describe(self, index: int) -> dict[str, object]:
        return {"pair": index}


PAIR_CONTRACT = ("return admmcheck.audit.Pair(d0, d1) for one pair, or admmcheck.audit.Pairs([Pair(d0, d1), ...]) "
                 "for several")


def neighbour_pairs(produced: object) -> list[Pair]:
    """What a neighbours callable returned, read one way only, as a list of :class:`Pair`.

    ``Pair`` and ``Pairs`` say what they are. A plain 2-tuple or 2-list is one pair ``(d0, d1)``,
    except when both its items are themselves 2-tuples or 2-lists: ``((X0, y0), (X1, y1))`` could be
    one pair of ``(X, y)`` datasets or two pairs, so it is refused with a message saying how to write
    either. Several pairs come only as ``Pairs``: any other iterable is refused.
    """
    if isinstance(produced, Pair):
        return [produced]
    if isinstance(produced, Pairs):
        return list(produced.pairs)
    if isinstance(produced, PairSequence):
        return produced  # type: ignore[return-value]  # a sequence of Pair, built on demand
    if isinstance(produced, (tuple, list)) and len(produced) == 2:
        first, second = produced
        if isinstance(first, Pair) or isinstance(second, Pair):
            raise InvalidConfiguration(f"the neighbours returned a plain {type(produced).__name__} of Pair objects; "
                                       "write Pairs([...]) for several pairs")
        if _two_sequence(first) and _two_sequence(second):
            raise InvalidConfiguration(
                f"the neighbours returned {_shape_of(produced)}: is that one pair of datasets that are themselves "
                "2-tuples, such as (X, y), or two pairs? It is not guessed: write Pair((X0, y0), (X1, y1)) for "
                "one pair, or Pairs([(a0, a1), (b0, b1)]) for two")
        return [Pair(first, second)]
    if isinstance(produced, (str, bytes)) or not isinstance(produced, Iterable):
        raise InvalidConfiguration(f"the neighbours returned a {type(produced).__name__}, not a pair; "
                                   + PAIR_CONTRACT)
    raise InvalidConfiguration(
        f"the neighbours returned a {type(produced).__name__}"
        + (f" of {len(produced)} items" if isinstance(produced, Sized) else "")
        + "; a plain tuple or list is read only as one pair (d0, d1) and several pairs are never guessed: "
        + PAIR_CONTRACT)


def _two_sequence(value: object) -> bool:
    return isinstance(value, (tuple, list)) and len(value) == 2


def _shape_of(value: object) -> str:
    """``((a, b), (c, d))`` with the item types named, for the ambiguity message."""
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_shape_of(v) for v in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    return type(value).__name__


class BatchedRunMechanism:
    """An auditable mechanism made of one of our batched algorithms: subclasses give
    ``batch_run(data, seeds) -> Run`` and ``released(run) -> (n, ...)`` (what the observer sees);
    ``batch`` spawns one seed per sample from ``rng``, and a single call is a batch of one."""

    def batch_run(self, data: Any, seeds: Any) -> Any:
        raise NotImplementedError

    def released(self, run: Any) -> np.ndarray:
        raise NotImplementedError

    def batch(self, data: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        """(n, k): what n independent runs release, flattened per sample."""
        seeds = np.random.SeedSequence(int(rng.integers(2**63))).spawn(n)
        return self.released(self.batch_run(data, seeds)).reshape(n, -1)

    def __call__(self, data: Any, rng: np.random.Generator) -> np.ndarray:
        return self.batch(data, rng, 1)[0]
