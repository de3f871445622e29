"""Candidate neighbour pairs built from one dataset, for the neighbour search (issue 29).

A user has a dataset and a notion of neighbour, not the pair where the leak is largest. From a
:class:`Dataset` (records as rows, optionally labels) and a kind:

* ``add-remove``: the dataset and the dataset without record i, for every record i;
* ``replace-one``: record i replaced by each extreme point of the :class:`RecordDomain` (the box
  corner farthest from it and the all-low and all-high corners; the unit ball's antipode of the
  record and the poles of its largest coordinate; every point of a finite set) and, with labels,
  its label changed to each other label seen.

For mechanisms that answer n queries (a vector of query answers, each changing by at most 1 between
neighbours), :class:`QueryAnswerPairs` gives the input patterns of StatDP (Ding et al., CCS 2018,
Table 2), which DP-Sniper (Bichsel et al., S&P 2021) also uses: one above, one below, one above rest
below, one below rest above, half half, all above, all below, X shape.

Each candidate says what it is (:meth:`CandidatePairs.describe`: which record, what change).
:class:`CandidatePairs` is a :class:`~admmcheck.audit.inputs.contract.PairSequence`: it builds pair i
only when a worker asks for it, so a hundred candidates do not hold a hundred copies of the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from admmcheck.audit.inputs.contract import Pair, PairSequence
from admmcheck.audit.inputs.datafiles import read_npz, read_table
from admmcheck.foundations.errors import InvalidConfiguration

NEIGHBOUR_KINDS = ("replace-one", "add-remove", "query-answers")
DOMAIN_FORMS = ("box:LOW:HIGH (every column), box:LOW:HIGH,LOW:HIGH,... (one per column), set:FILE.csv "
                "(the records a replacement may be), unit-ball (Euclidean norm <= 1, as the papers assume)")


@dataclass(frozen=True, eq=False)
class Dataset:
    """Records as the rows of ``features`` (n, d), with ``labels`` (n,) or None; what a mechanism
    receives is ``features``, or ``(features, labels)`` with labels."""

    features: np.ndarray
    labels: np.ndarray | None = None
    names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.features.ndim != 2 or len(self.features) < 2:
            raise InvalidConfiguration(f"a dataset needs at least two records as rows; got shape {self.features.shape}",
                                       parameter="dataset")
        if self.labels is not None and self.labels.shape != (len(self.features),):
            raise InvalidConfiguration(f"{len(self.features)} records but labels of shape {self.labels.shape}",
                                       parameter="dataset")

    def data(self, features: np.ndarray | None = None, labels: np.ndarray | None = None) -> Any:
        features = self.features if features is None else features
        if self.labels is None:
            return features
        return features, self.labels if labels is None else labels


def read_dataset(path: str | Path, label_column: str | None = None) -> Dataset:
    """A dataset from ``FILE.csv`` (a table of numbers; ``label_column`` names the labels' column of
    its header line) or ``FILE.npz`` (array ``X``, and ``y`` for labels)."""
    path = str(path)
    if path.endswith(".npz"):
        if label_column is not None:
            raise InvalidConfiguration("label_column is for CSV files; an NPZ dataset holds its labels as y",
                                       parameter="label_column")
        arrays = read_npz(path)
        if set(arrays) not in ({"X"}, {"X", "y"}):
            raise InvalidConfiguration(f"{path} holds the arrays {', '.join(sorted(arrays))}; a dataset is an array "
                                       "X (records as rows) and, for labels, y", parameter="dataset")
        features = np.asarray(arrays["X"], dtype=np.float64)
        labels = np.asarray(arrays["y"], dtype=np.float64) if "y" in arrays else None
        return Dataset(features.reshape(len(features), -1), labels)
    if not path.endswith(".csv"):
        raise InvalidConfiguration(f"{path}: a dataset is a .csv or an .npz file", parameter="dataset")
    names, table = read_table(path)
    if label_column is None:
        return Dataset(table, None, names)
    if names is None or label_column not in names:
        raise InvalidConfiguration(f"{path} has no column named {label_column!r}"
                                   + (f" (its columns: {', '.join(names)})" if names else " (it has no header line)"),
                                   parameter="label_column")
    column = names.index(label_column)
    keep = [j for j in range(table.shape[1]) if j != column]
    return Dataset(table[:, keep], table[:, column], tuple(names[j] for j in keep))


@dataclass(frozen=True, eq=False)
class RecordDomain:
    """Where a replaced record may lie: a box (``low``, ``high`` per column), a finite set of
    ``points``, or the unit ball."""

    kind: str
    low: np.ndarray | None = None
    high: np.ndarray | None = None
    points: np.ndarray | None = None

    def describe(self) -> str:
        """The domain in words, for a page's game."""
        if self.kind == "unit-ball":
            return "uniform directions on the unit sphere (unit-ball)"
        if self.kind == "box":
            return f"corners of the box [{_vector(self.low)}, {_vector(self.high)}]"
        return f"a set of {len(self.points)} points"

    def extreme_points(self, record: np.ndarray) -> list[tuple[str, np.ndarray]]:
        """(description, point) of the replacements tried for ``record``, none equal to it."""
        if self.kind == "box":
            far = np.where(np.abs(record - self.low) >= np.abs(record - self.high), self.low, self.high)
            tried = [("the box corner farthest from it", far), ("the all-low corner", self.low.copy()),
                     ("the all-high corner", self.high.copy())]
        elif self.kind == "unit-ball":
            norm = float(np.linalg.norm(record))
            k = int(np.argmax(np.abs(record)))
            pole = np.zeros_like(record)
            pole[k] = 1.0
            tried = [("its antipode on the unit sphere", -record / norm if norm > 0 else pole),
                     (f"the pole +e{k}", pole), (f"the pole -e{k}", -pole)]
        else:
            tried = [(f"set point {j}", point) for j, point in enumerate(self.points)]
        seen: list[np.ndarray] = []
        kept = []
        for text, point in tried:
            if np.array_equal(point, record) or any(np.array_equal(point, s) for s in seen):
                continue
            seen.append(point)
            kept.append((f"{text} {_vector(point)}", point))
        return kept


def _vector(point: np.ndarray) -> str:
    return "(" + ", ".join(f"{v:g}" for v in point) + ")"


def parse_domain(text: str, width: int, parameter: str = "record_domain") -> RecordDomain:
    """A :class:`RecordDomain` for records of ``width`` numbers from its text (:data:`DOMAIN_FORMS`); an error names
    ``parameter`` (the neighbour search's record domain, or a one-run audit's canary domain)."""
    def refuse(why: str) -> InvalidConfiguration:
        return InvalidConfiguration(f"{parameter}={text!r}: {why}; write {DOMAIN_FORMS}", parameter=parameter)

    if text == "unit-ball":
        return RecordDomain("unit-ball")
    form, _, rest = text.partition(":")
    if form == "set":
        _, points = read_table(rest)
        if points.shape[1] != width:
            raise refuse(f"its records have {points.shape[1]} numbers, the dataset's {width}")
        return RecordDomain("set", points=points)
    if form != "box":
        raise refuse("unknown form")
    bounds = []
    for part in rest.split(","):
        low_high = part.split(":")
        try:
            low, high = (float(v) for v in low_high)
        except ValueError:
            raise refuse(f"{part!r} is not LOW:HIGH") from None
        if not (np.isfinite(low) and np.isfinite(high) and low < high):
            raise refuse(f"{part!r} needs finite LOW < HIGH")
        bounds.append((low, high))
    if len(bounds) == 1:
        bounds *= width
    if len(bounds) != width:
        raise refuse(f"{len(bounds)} bounds for records of {width} numbers")
    low, high = (np.array(b, dtype=np.float64) for b in zip(*bounds))
    return RecordDomain("box", low=low, high=high)


@dataclass(frozen=True)
class Change:
    """Record ``record`` removed (``features`` None and ``label`` None with ``removed``), or replaced
    by ``features`` and/or given ``label``; ``text`` says which in words."""

    record: int
    text: str
    removed: bool = False
    features: np.ndarray | None = None
    label: float | None = None


class CandidatePairs(PairSequence):
    """Pairs (the dataset, the dataset with one :class:`Change`), built when asked for."""

    def __init__(self, dataset: Dataset, kind: str, changes: list[Change], total: int) -> None:
        self.dataset, self.kind, self.changes, self.total = dataset, kind, tuple(changes), total

    def __len__(self) -> int:
        return len(self.changes)

    def __getitem__(self, index: int) -> Pair:
        """Pair ``index``, each dataset its own arrays: none shares the base dataset's, so a mechanism that
        writes into its input cannot change another candidate's datasets."""
        change = self.changes[index]
        features, labels = self.dataset.features, self.dataset.labels
        if change.removed:
            keep = np.arange(len(features)) != change.record
            changed = self.dataset.data(features[keep], None if labels is None else labels[keep])
        else:
            features = features.copy()
            if change.features is not None:
                features[change.record] = change.features
            labels = None if labels is None else labels.copy()
            if change.label is not None:
                labels[change.record] = change.label
            changed = self.dataset.data(features, labels)
        base = self.dataset
        return Pair(base.data(base.features.copy(), None if base.labels is None else base.labels.copy()), changed)

    def describe(self, index: int) -> dict[str, object]:
        """Which record, what change (for the JSON and the page)."""
        change = self.changes[index]
        return {"record": change.record, "kind": self.kind, "change": change.text}


def candidate_pairs(dataset: Dataset, kind: str, domain: RecordDomain | None = None, most: int = 100,
                    seed: int = 0) -> CandidatePairs:
    """The candidate pairs of ``kind`` (:data:`NEIGHBOUR_KINDS`); when there are more than ``most``, a
    uniformly drawn ``most`` of them (reproducibly from ``seed``; ``total`` keeps the full count)."""
    if kind not in NEIGHBOUR_KINDS[:2]:
        raise InvalidConfiguration(f"neighbour_kind={kind!r}: a dataset's neighbours are "
                                   f"{' or '.join(NEIGHBOUR_KINDS[:2])} (query-answers takes no dataset)",
                                   parameter="neighbour_kind")
    changes: list[Change] = []
    if kind == "add-remove":
        changes = [Change(i, f"record {i} removed", removed=True) for i in range(len(dataset.features))]
    else:
        if domain is None and dataset.labels is None:
            raise InvalidConfiguration("replace-one neighbours need a record domain (where a replacement may lie) "
                                       f"or labels to flip: write {DOMAIN_FORMS}", parameter="record_domain")
        values = [] if dataset.labels is None else sorted(set(dataset.labels.tolist()))
        for i, record in enumerate(dataset.features):
            if domain is not None:
                changes.extend(Change(i, f"record {i} replaced by {text}", features=point)
                               for text, point in domain.extreme_points(record))
            if dataset.labels is not None:
                changes.extend(Change(i, f"label of record {i} changed from {dataset.labels[i]:g} to {value:g}",
                                      label=value) for value in values if value != dataset.labels[i])
    if not changes:
        raise InvalidConfiguration("no candidate pair could be built: every replacement equals its record",
                                   parameter="record_domain")
    return CandidatePairs(dataset, kind, at_most(changes, most, seed), len(changes))


def at_most(items: list, most: int, seed: int) -> list:
    """``items``, or a uniformly drawn ``most`` of them in their order (reproducibly from ``seed``)
    when there are more: the search's budget of candidates."""
    if len(items) <= most:
        return list(items)
    return [items[j] for j in np.sort(np.random.default_rng(seed).choice(len(items), size=most, replace=False))]


def _patterns(n: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    ones, half = np.ones(n), n // 2
    above = np.concatenate(([2.0], np.ones(n - 1)))
    return [("one above", ones, above),
            ("one below", ones, np.concatenate(([0.0], np.ones(n - 1)))),
            ("one above rest below", ones, np.concatenate(([2.0], np.zeros(n - 1)))),
            ("one below rest above", ones, np.concatenate(([0.0], np.full(n - 1, 2.0)))),
            ("half half", ones, np.concatenate((np.zeros(half), np.full(n - half, 2.0)))),
            ("all above", ones, np.full(n, 2.0)),
            ("all below", ones, np.zeros(n)),
            ("X shape", np.concatenate((np.ones(half), np.zeros(n - half))),
             np.concatenate((np.zeros(half), np.ones(n - half))))]


class QueryAnswerPairs(PairSequence):
    """StatDP's input patterns for a mechanism on ``queries`` query answers (each answer moves by at
    most 1): the data a mechanism receives is a float array of length ``queries``."""

    def __init__(self, queries: int) -> None:
        if not isinstance(queries, int) or isinstance(queries, bool) or queries < 1:
            raise InvalidConfiguration(f"queries={queries!r}: the number of query answers the mechanism takes, "
                                       "a positive integer", parameter="queries")
        self.queries = queries
        patterns = _patterns(queries)
        if queries == 1:  # one above rest below is one above, and so on: keep each pair once
            patterns = [p for j, p in enumerate(patterns)
                        if not any(np.array_equal(p[1], q[1]) and np.array_equal(p[2], q[2]) for q in patterns[:j])]
        self.patterns = tuple(patterns)

    def __len__(self) -> int:
        return len(self.patterns)

    def __getitem__(self, index: int) -> Pair:
        _, d0, d1 = self.patterns[index]
        return Pair(d0.copy(), d1.copy())

    def describe(self, index: int) -> dict[str, object]:
        name, d0, d1 = self.patterns[index]
        return {"pattern": name, "kind": "query-answers", "change": f"{name}: {_vector(d0)} -> {_vector(d1)}"}
