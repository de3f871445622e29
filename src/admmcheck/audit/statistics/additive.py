"""Feature maps for additive scores ``score(x) = sum_j f_j(x_j)`` of an output x, learnt by logistic
regression on one-hot codes (the ``additive`` and ``shared`` event families of
:mod:`admmcheck.audit.statistics.events`).

Why additive. When the coordinates of the output are independent given the dataset, the privacy
loss ln p_0(x)/p_1(x) is a sum of one-coordinate losses, and the Neyman-Pearson events are its level
sets: a linear score only matches them when every one-coordinate loss is linear, which Laplace noise
(a clipped, sign-like loss), atoms (a sparse-vector mechanism's "below" marker) and answer patterns
(which query fired, with what value) all break. Each coordinate is coded by its atoms (values taken
by >= ATOM_SHARE of its samples) and by quantile bins of its other values; the logistic weights of
the one-hot codes are the f_j, step functions of each coordinate.

* :class:`CoordinateCodes`: one function per coordinate (on the ``columns`` it is given: the events
  module passes at most 32, those whose laws differ most), optionally after whitening by the pooled
  covariance: cumulative releases (prefix sums) have independent increments, which whitening recovers
  (the inverse Cholesky factor of a prefix sum's covariance takes differences).
* :class:`SharedCodes`: one function f for every coordinate (the output's histogram of values): for
  outputs whose coordinates are alike (parallel compositions, noisy histograms), 20 coordinates give 20
  times the samples per weight, so a leak spread thinly over many coordinates is learnt from few samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ATOM_SHARE = 0.01  # a value taken by at least this share of a coordinate's samples is an atom
MOST_ATOMS = 4


def atoms_of(values: np.ndarray) -> np.ndarray:
    """The MOST_ATOMS most frequent values taken by at least ATOM_SHARE of ``values`` and more than once
    (among 100 values or fewer a share of 1 % is one value: every value of a continuous output)."""
    unique, counts = np.unique(values, return_counts=True)
    frequent = (counts >= ATOM_SHARE * len(values)) & (counts >= 2)
    return unique[frequent][np.argsort(-counts[frequent], kind="stable")[:MOST_ATOMS]]


def _edges(values: np.ndarray, atoms: np.ndarray, bins: int) -> np.ndarray:
    rest = values[~np.isin(values, atoms)]
    return np.unique(np.quantile(rest, np.arange(1, bins) / bins)) if len(rest) else np.empty(0)


def _code(column: np.ndarray, atoms: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Codes 0 .. len(atoms) - 1 for the atoms, then the bin of the other values among ``edges``."""
    code = len(atoms) + np.searchsorted(edges, column, side="right")
    for a, value in enumerate(atoms):
        code[column == value] = a
    return code


@dataclass(frozen=True, eq=False)
class CoordinateCodes:
    """One-hot codes of each chosen coordinate (``columns``), after ``whiten`` = (mean, matrix) if given."""

    columns: np.ndarray
    atoms: tuple[np.ndarray, ...]
    edges: tuple[np.ndarray, ...]
    whiten: tuple[np.ndarray, np.ndarray] | None
    bins: int

    @classmethod
    def fit(cls, pooled: np.ndarray, columns: list[int], bins: int, whiten: bool) -> CoordinateCodes:
        """Codes fixed on the ``pooled`` samples of both sides (their ``columns``)."""
        x = pooled[:, columns]
        transform = None
        if whiten:
            mean = x.mean(axis=0)
            covariance = np.atleast_2d(np.cov(x, rowvar=False))
            ridge = 1e-9 * max(float(np.trace(covariance)), 1e-300) / len(columns)
            factor = np.linalg.cholesky(covariance + ridge * np.eye(len(columns)))
            transform = (mean, np.linalg.inv(factor).T)
            x = (x - mean) @ transform[1]
        atoms = tuple(np.empty(0) if whiten else atoms_of(column) for column in x.T)
        edges = tuple(_edges(column, a, bins) for column, a in zip(x.T, atoms))
        return cls(np.asarray(columns), atoms, edges, transform, bins)

    @property
    def width(self) -> int:
        return int(sum(len(a) + len(e) + 1 for a, e in zip(self.atoms, self.edges)))

    def codes(self, x: np.ndarray) -> np.ndarray:
        """(n, len(columns)) column indices of the one-hot features (offsets added)."""
        x = x[:, self.columns]
        if self.whiten is not None:
            x = (x - self.whiten[0]) @ self.whiten[1]
        out = np.empty(x.shape, dtype=np.int64)
        offset = 0
        for j, (atoms, edges) in enumerate(zip(self.atoms, self.edges)):
            out[:, j] = offset + _code(x[:, j], atoms, edges)
            offset += len(atoms) + len(edges) + 1
        return out

    def features(self, x: np.ndarray):
        """Sparse (n, width) one-hot matrix."""
        from scipy import sparse

        codes = self.codes(x)
        n, k = codes.shape
        return sparse.csr_matrix((np.ones(n * k), codes.ravel(), np.arange(0, n * k + 1, k)), shape=(n, self.width))

    def score(self, x: np.ndarray, weights: np.ndarray) -> np.ndarray:
        return weights[self.codes(x)].sum(axis=1)

    def describe(self) -> str:
        whitened = ", whitened" if self.whiten is not None else ""
        return f"{self.bins} bins per coordinate on {len(self.columns)} coordinates{whitened}"


@dataclass(frozen=True, eq=False)
class SharedCodes:
    """One set of codes for every chosen coordinate (``columns``): each output becomes the counts of those
    coordinates per code."""

    columns: np.ndarray
    atoms: np.ndarray
    edges: np.ndarray
    bins: int

    @classmethod
    def fit(cls, pooled: np.ndarray, columns: list[int], bins: int) -> SharedCodes:
        values = pooled[:, columns].ravel()
        atoms = atoms_of(values)
        return cls(np.asarray(columns), atoms, _edges(values, atoms, bins), bins)

    @property
    def width(self) -> int:
        return len(self.atoms) + len(self.edges) + 1

    def features(self, x: np.ndarray) -> np.ndarray:
        """(n, width) counts of each output's chosen coordinates per code."""
        x = x[:, self.columns]
        codes = _code(x.ravel(), self.atoms, self.edges).reshape(x.shape)
        rows = np.repeat(np.arange(len(x)), x.shape[1])
        return np.bincount(rows * self.width + codes.ravel(), minlength=len(x) * self.width).reshape(
            len(x), self.width).astype(float)

    def score(self, x: np.ndarray, weights: np.ndarray) -> np.ndarray:
        return self.features(x) @ weights

    def code_names(self) -> list[str]:
        """What each code counts: "=a" for an atom a, then the bins of the other values ("<e", ">=e")."""
        edges = [f"{e:.4g}" for e in self.edges]
        bins = ([f"<{edges[0]}"] + [f"[{a}, {b})" for a, b in zip(edges, edges[1:])] + [f">={edges[-1]}"]
                if edges else ["other"])
        return [f"={a:g}" for a in self.atoms] + bins

    def describe(self) -> str:
        return f"{self.bins} bins, one function for every one of {len(self.columns)} coordinates"
