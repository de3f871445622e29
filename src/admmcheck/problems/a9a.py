"""UCI Adult in LIBSVM's binary encoding (``a9a``), rebuilt from the official files shipped with admmcheck: the
data of the ADMM-sharing paper's experiments (admm-sharing-distributed-features.txt, §5: a9a, its 123 features
split into 66 and 57 between two parties).

LIBSVM's documented preprocessing (its a1a–a9a pages, after Platt 1998): "continuous features are discretized into
quantiles, and each quantile is represented by a binary feature. Also, a categorical feature with m categories is
converted to m binary features", 123 binary features in all, 32,561 training and 16,281 test rows. In LIBSVM's
feature order (:data:`LAYOUT`): age 5, workclass 8, fnlwgt 5, education 16, education-num 5, marital-status 7,
occupation 14, relationship 6, race 5, sex 2, capital-gain 2, capital-loss 2, hours-per-week 5, native-country 41.

Where this encoding may differ from LIBSVM's file:

* **bin edges.** LIBSVM does not publish them. Here each continuous feature's bins are equal-frequency on the
  training file (:func:`equal_frequency_cuts`): a cut after the first value whose cumulative share reaches j/k,
  moved to the next value where ties put it on the previous cut (education-num and hours-per-week hold few
  distinct values; capital gain and loss are 0 in 92 % and 95 % of rows, so their two bins are 0 and above 0);
* **category order** within a group: adult.names' order, which LIBSVM's files appear to follow;
* **missing values** (``?``): no feature of that group is set; every row is kept, as a9a keeps them.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from admmcheck.foundations.errors import InvalidDataset
from admmcheck.problems.datasets import ADULT_COLUMNS, ADULT_CONTINUOUS, Dataset, adult_files, read_adult_rows

#: (column, binary features) in LIBSVM's order: 123 in all
LAYOUT = (("age", 5), ("workclass", 8), ("fnlwgt", 5), ("education", 16), ("education-num", 5),
          ("marital-status", 7), ("occupation", 14), ("relationship", 6), ("race", 5), ("sex", 2),
          ("capital-gain", 2), ("capital-loss", 2), ("hours-per-week", 5), ("native-country", 41))
FEATURES = sum(width for _, width in LAYOUT)
#: The ADMM-sharing paper's split of a9a's features between its two parties (§5)
PARTIES = (66, 57)


@dataclass(frozen=True)
class A9a:
    """The training and test rows in a9a's encoding, and the bin edges used (upper ends of all bins but the last,
    of each continuous column)."""

    train: Dataset
    test: Dataset
    edges: dict[str, tuple[float, ...]]


def equal_frequency_cuts(values: np.ndarray, bins: int) -> np.ndarray:
    """The upper ends of the first ``bins`` − 1 of ``bins`` equal-frequency bins of ``values``: cut j after the
    first distinct value whose cumulative share reaches j/bins, or after the value following the previous cut
    where ties put both on one value; fewer cuts where ties leave too few distinct values after the last one
    (:func:`load_a9a` refuses that)."""
    levels, counts = np.unique(values, return_counts=True)
    shares = np.cumsum(counts) / counts.sum()
    cuts: list[int] = []
    for j in range(1, bins):
        at = int(np.searchsorted(shares, j / bins - 1e-12))
        if cuts and at <= cuts[-1]:
            at = cuts[-1] + 1
        if at >= len(levels) - 1:
            break
        cuts.append(at)
    return levels[cuts]


def _categories(names: Path) -> dict[str, list[str]]:
    """Each categorical column's categories, in adult.names' order."""
    found = {}
    for line in names.read_text(encoding="utf-8", errors="replace").splitlines():
        match = re.match(r"^([a-z-]+): (.+)\.\s*$", line)
        if match and match.group(1) in ADULT_COLUMNS and "continuous" not in match.group(2):
            found[match.group(1)] = [category.strip() for category in match.group(2).split(",")]
    return found


def _encode(rows: list[list[str]], edges: dict[str, np.ndarray], categories: dict[str, list[str]]) -> Dataset:
    index = {name: k for k, name in enumerate(ADULT_COLUMNS)}
    features = np.zeros((len(rows), FEATURES))
    start = 0
    for name, width in LAYOUT:
        column = [row[index[name]] for row in rows]
        known = np.array([value != "?" for value in column])
        if name in ADULT_CONTINUOUS:
            values = np.array([float(value) if value != "?" else np.nan for value in column])
            place = np.searchsorted(edges[name], values[known], side="left")
        else:
            lookup = {category: k for k, category in enumerate(categories[name])}
            unknown = sorted({value for value in column if value != "?" and value not in lookup})
            if unknown:
                raise InvalidDataset(f"column {name!r} holds categories adult.names does not list: {unknown[:5]}")
            place = np.array([lookup[value] for value in np.array(column)[known]], dtype=int)
        features[np.flatnonzero(known), start + place] = 1.0
        start += width
    labels = np.where(np.array([row[index["income"]].rstrip(".") for row in rows]) == ">50K", 1.0, -1.0)
    return Dataset(features, labels, name="a9a")


def load_a9a(folder: str | Path | None = None) -> A9a:
    """a9a from the official Adult files in ``folder`` (default: the ones shipped with admmcheck, which need no
    network): 32,561 training and 16,281 test rows of 123 binary features (the module docstring says how, and
    where this may differ from LIBSVM's file), labels ±1 (+1: income above 50K). Read once per process and folder
    (1.1 s); the arrays are read-only."""
    from admmcheck.problems.datasets import bundled_adult_folder

    return _load(Path(folder).resolve() if folder is not None else bundled_adult_folder())


@functools.lru_cache(maxsize=2)
def _load(folder: Path) -> A9a:
    names = folder / "adult.names"
    if not names.is_file():
        raise InvalidDataset(f"{folder} holds no adult.names, which lists the categories a9a encodes")
    categories = _categories(names)
    files = adult_files([folder])
    if len(files) != 2:
        raise InvalidDataset(f"{folder} must hold both adult.data and adult.test (or their .gz)")
    train_rows, test_rows = (read_adult_rows(file, keep_missing=True)[0] for file in files)
    index = {name: k for k, name in enumerate(ADULT_COLUMNS)}
    edges = {}
    for name, width in LAYOUT:
        if name in ADULT_CONTINUOUS:
            values = np.array([float(row[index[name]]) for row in train_rows if row[index[name]] != "?"])
            edges[name] = equal_frequency_cuts(values, width)
            if len(edges[name]) != width - 1:
                raise InvalidDataset(f"column {name!r} of the training file holds too few distinct values for "
                                     f"a9a's {width} bins")
    train, test = _encode(train_rows, edges, categories), _encode(test_rows, edges, categories)
    for array in (train.features, train.labels, test.features, test.labels):
        array.setflags(write=False)
    return A9a(train, test,
               {name: tuple(float(e) for e in cut) for name, cut in edges.items()})
