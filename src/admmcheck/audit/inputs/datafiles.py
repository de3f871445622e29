"""Neighbouring datasets written as data files instead of code: ``D0.csv,D1.csv`` (one table
each) or ``PAIR.npz`` (arrays ``d0`` and ``d1``, or ``X0``, ``y0``, ``X1``, ``y1`` for supervised
datasets ``(X, y)``). Files are read with ``allow_pickle=False``: reading them runs no code, so
this happens in the main process.

A CSV file is a table of numbers, one record per line, comma-separated; its first line may name
the columns (then every field of it must be a name, not a number). Anything else is refused with
a message saying how to write it.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from admmcheck.audit.inputs.contract import Pair
from admmcheck.foundations.errors import InvalidConfiguration

NPZ_LAYOUTS = "arrays d0 and d1 (one dataset each), or X0, y0, X1, y1 (datasets (X0, y0) and (X1, y1))"


def is_data_file(spec: str) -> bool:
    """Whether ``spec`` names data files (``.csv`` pair or ``.npz``) rather than code."""
    return spec.endswith(".npz") or spec.endswith(".csv")


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def read_table(path: str | Path) -> tuple[tuple[str, ...] | None, np.ndarray]:
    """(column names or None, the records as a float64 matrix, one row each) of a CSV file."""
    file = Path(path)
    if not file.is_file():
        raise InvalidConfiguration(f"{file}: no such file")
    with file.open(newline="") as handle:
        rows = [[field.strip() for field in row] for row in csv.reader(handle) if any(f.strip() for f in row)]
    if not rows:
        raise InvalidConfiguration(f"{file}: the file holds no records")
    names = None
    if all(_number(field) is None for field in rows[0]):
        names, rows = tuple(rows[0]), rows[1:]
    width = len(names) if names is not None else len(rows[0]) if rows else 0
    first_line = 2 if names is not None else 1
    values = np.empty((len(rows), width))
    for r, row in enumerate(rows):
        if len(row) != width:
            raise InvalidConfiguration(f"{file}, line {r + first_line}: {len(row)} fields where the table has {width}")
        for column, field in enumerate(row):
            number = _number(field)
            if number is None:
                raise InvalidConfiguration(f"{file}, line {r + first_line}, column {column + 1}: {field!r} is not a "
                                           "number (only the first line may hold column names, and then all of it)")
            values[r, column] = number
    return names, values


def read_npz(path: str | Path) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` file, read without pickle (so reading it runs no code)."""
    file = Path(path)
    if not file.is_file():
        raise InvalidConfiguration(f"{file}: no such file")
    try:
        with np.load(file, allow_pickle=False) as archive:
            return {key: archive[key] for key in archive.files}
    except ValueError as exc:
        raise InvalidConfiguration(f"{file}: not readable without pickle ({exc}); store plain arrays") from None


def read_pair(spec: str) -> Pair:
    """The pair of neighbouring datasets ``spec`` names: ``D0.csv,D1.csv`` or ``PAIR.npz``."""
    if spec.endswith(".npz"):
        arrays = read_npz(spec)
        keys = set(arrays)
        if keys == {"d0", "d1"}:
            return Pair(arrays["d0"], arrays["d1"])
        if keys == {"X0", "y0", "X1", "y1"}:
            return Pair((arrays["X0"], arrays["y0"]), (arrays["X1"], arrays["y1"]))
        raise InvalidConfiguration(f"{spec} holds the arrays {', '.join(sorted(keys)) or 'none'}; a pair of "
                                   f"neighbours is {NPZ_LAYOUTS}")
    files = spec.split(",")
    if len(files) != 2 or not all(f.endswith(".csv") for f in files):
        raise InvalidConfiguration(f"{spec!r}: write the two datasets of the pair as D0.csv,D1.csv (two files, one "
                                   "comma), or one PAIR.npz")
    (names0, d0), (names1, d1) = read_table(files[0]), read_table(files[1])
    if names0 != names1:
        raise InvalidConfiguration(f"{files[0]} and {files[1]} name different columns ({names0} and {names1})")
    return Pair(d0, d1)
