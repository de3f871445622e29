"""Consensus ERM problem of the M-ADMM paper, eq. (1)-(2), with the logistic loss.

The centralized problem (eq. (1)) is

    min_f  O_ERM(f) = sum_i C/B_i sum_n L(y_i^n f^T x_i^n) + rho R(f),

and node i holds the local objective of eq. (2)

    O(f_i, D_i) = C/B_i sum_n L(y_i^n f_i^T x_i^n) + (rho/N) R(f_i),

with the logistic loss L(z) = log(1 + exp(-z)) (|L'| <= 1, 0 < L'' <= c1 = 1/4) and
R(f) = 1/2 ||f||^2 (Assumptions 4-5 and §5 of the paper).

All batched methods take primal variables ``f`` of shape ``(..., N, d)`` (any leading
batch axes, typically ``(trials, nodes, dim)``) and evaluate node ``i``'s objective at
``f[..., i, :]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Sequence

import numpy as np
from scipy.special import expit, log_expit

from admmcheck.foundations.errors import InvalidProblem
from admmcheck.foundations.output import write_atomic

# Rows may exceed the unit ball by rounding after a normalisation; nothing larger passes.
NORM_SLACK = 1e-12
# Per-sample outer products x x^T are cached (for fast batched Hessians) up to this many floats.
OUTER_PRODUCT_LIMIT = 4_000_000


@dataclass(frozen=True)
class LogisticLoss:
    """The logistic loss L(z) = log(1 + exp(-z)) and its constants (paper §5).

    ``lipschitz`` bounds |L'| and ``c1`` bounds L'' (Assumption 4).
    """

    lipschitz: float = 1.0
    c1: float = 0.25

    @staticmethod
    def value(z: np.ndarray) -> np.ndarray:
        """Return L(z) = -log(sigma(z)), computed without overflow."""
        return -log_expit(z)

    @staticmethod
    def derivative(z: np.ndarray) -> np.ndarray:
        """Return L'(z) = -1 / (1 + exp(z))."""
        return -expit(-z)

    @staticmethod
    def value_and_derivatives(z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return (L(z), L'(z), L''(z)) from one exp and one log1p: with e = exp(-|z|),
        L = log1p(e) + max(-z, 0), L' = sigma(z) - 1 (-e/(1+e) for z >= 0, -1/(1+e) below),
        L'' = e / (1 + e)^2."""
        e = np.abs(z)
        np.negative(e, out=e)
        np.exp(e, out=e)
        value = np.log1p(e)
        value += np.maximum(-z, 0.0)
        inverse = e + 1.0
        np.reciprocal(inverse, out=inverse)
        second = e * inverse
        first = np.where(z >= 0, second, inverse)
        np.negative(first, out=first)
        second *= inverse
        return value, first, second

    @staticmethod
    def second_derivative(z: np.ndarray) -> np.ndarray:
        """Return L''(z) = sigma(z) sigma(-z)."""
        s = expit(z)
        return s * (1.0 - s)


LOGISTIC = LogisticLoss()


@dataclass(frozen=True, eq=False)
class PaddedData:
    """Sample data laid out for vectorised evaluation.

    ``signed_features[i, n] = y_i^n x_i^n`` with shape ``(N, B_max, d)``; ``weights[i, n]``
    is ``C / B_i`` for a real sample and 0 for padding, shape ``(N, B_max)``.
    """

    signed_features: np.ndarray
    weights: np.ndarray


def _as_node_array(value: object, name: str, node: int, ndim: int) -> np.ndarray:
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidProblem(
            f"{name} of node {node} is not numeric ({exc}); pass a float array"
        ) from exc
    if array.ndim != ndim:
        shape = "(B_i, d)" if ndim == 2 else "(B_i,)"
        raise InvalidProblem(
            f"{name} of node {node} has shape {array.shape}; expected {shape}"
        )
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class ConsensusProblem:
    """Regularized logistic-regression ERM split across N nodes (M-ADMM paper eq. (1)-(2)).

    ``features[i]`` is X_i with shape ``(B_i, d)``, ``labels[i]`` is y_i in {-1, +1}^{B_i}.
    ``C`` and ``rho`` are the constants of eq. (1); the papers require ``C <= B_i``,
    ``rho > 0`` and, for the privacy theorems, ``||x_i^n||_2 <= 1``.
    """

    features: tuple[np.ndarray, ...]
    labels: tuple[np.ndarray, ...]
    C: float
    rho: float
    loss: LogisticLoss = field(default=LOGISTIC)

    def __post_init__(self) -> None:
        if len(self.features) == 0:
            raise InvalidProblem("the problem has no nodes; pass one (X_i, y_i) pair per node")
        if len(self.features) != len(self.labels):
            raise InvalidProblem(
                f"got features for {len(self.features)} nodes but labels for "
                f"{len(self.labels)}; pass one label vector per node"
            )
        features = tuple(
            _as_node_array(x, "features", i, 2) for i, x in enumerate(self.features)
        )
        labels = tuple(_as_node_array(y, "labels", i, 1) for i, y in enumerate(self.labels))
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "labels", labels)
        self._validate_constants()
        dim = features[0].shape[1]
        for i, (x, y) in enumerate(zip(features, labels)):
            self._validate_node(i, x, y, dim)

    def _validate_constants(self) -> None:
        for name in ("C", "rho"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
                raise InvalidProblem(f"{name}={value!r} is not a number; pass a positive float")
            if not math.isfinite(value) or value <= 0:
                raise InvalidProblem(f"{name}={value!r} must be a finite positive number")
            object.__setattr__(self, name, float(value))

    def _validate_node(self, i: int, x: np.ndarray, y: np.ndarray, dim: int) -> None:
        if x.shape[0] == 0:
            raise InvalidProblem(
                f"node {i} holds no samples; every node needs B_i >= 1 (repartition the data)"
            )
        if x.shape[1] != dim:
            raise InvalidProblem(
                f"node {i} has features of dimension {x.shape[1]} but node 0 has {dim}; "
                "all nodes must share the feature dimension d"
            )
        if y.shape[0] != x.shape[0]:
            raise InvalidProblem(
                f"node {i} has {x.shape[0]} feature rows but {y.shape[0]} labels; "
                "pass one label per row"
            )
        if not np.all(np.isfinite(x)):
            bad = np.argwhere(~np.isfinite(x))[0]
            raise InvalidProblem(
                f"features of node {i} contain NaN or inf (first at row {bad[0]}, column "
                f"{bad[1]}); drop or impute those rows"
            )
        if not np.all(np.isfinite(y)):
            raise InvalidProblem(f"labels of node {i} contain NaN or inf; labels must be -1 or +1")
        bad_labels = sorted(set(np.unique(y).tolist()) - {-1.0, 1.0})
        if bad_labels:
            raise InvalidProblem(
                f"labels of node {i} contain {bad_labels[:5]}; labels must be in {{-1, +1}} "
                "(map e.g. {0, 1} to {-1, +1})"
            )
        norms = np.linalg.norm(x, axis=1)
        worst = int(np.argmax(norms))
        if norms[worst] > 1.0 + NORM_SLACK:
            raise InvalidProblem(
                f"sample {worst} of node {i} has ||x||_2 = {norms[worst]:.6g} > 1; the privacy "
                "theorems assume ||x||_2 <= 1 (normalise rows, e.g. "
                "admmcheck.problems.datasets.normalize_features)"
            )
        if self.C > x.shape[0]:
            raise InvalidProblem(
                f"C = {self.C:g} exceeds B_{i} = {x.shape[0]} (samples at node {i}); eq. (1) "
                f"requires C <= B_i for every node: lower C to at most {min(self.sizes)}"
            )

    # ----------------------------------------------------------------- shape facts
    @property
    def nodes(self) -> int:
        """Number of nodes N."""
        return len(self.features)

    @property
    def dim(self) -> int:
        """Feature dimension d."""
        return self.features[0].shape[1]

    @property
    def sizes(self) -> tuple[int, ...]:
        """Local sample counts (B_1, ..., B_N)."""
        return tuple(x.shape[0] for x in self.features)

    @cached_property
    def padded(self) -> PaddedData:
        """Node data zero-padded to ``(N, B_max, d)`` with per-sample weights C/B_i."""
        n, b_max, d = self.nodes, max(self.sizes), self.dim
        signed = np.zeros((n, b_max, d))
        weights = np.zeros((n, b_max))
        for i, (x, y) in enumerate(zip(self.features, self.labels)):
            signed[i, : len(y)] = y[:, None] * x
            weights[i, : len(y)] = self.C / len(y)
        signed.setflags(write=False)
        weights.setflags(write=False)
        return PaddedData(signed, weights)

    @cached_property
    def regularization(self) -> float:
        """Per-node regularization weight rho/N of eq. (2)."""
        return self.rho / self.nodes

    # ------------------------------------------------------- local objectives (eq. 2)
    def margins(self, f: np.ndarray) -> np.ndarray:
        """Return y_i^n x_i^n . f_i for every node's samples, shape ``(..., N, B_max)``."""
        f = np.asarray(f, dtype=np.float64)
        return np.matmul(self.padded.signed_features, f[..., None])[..., 0]

    def local_data_term(self, margins: np.ndarray) -> np.ndarray:
        """C/B_i sum_n L(margin) per node from :meth:`margins`, shape (..., N)."""
        return np.sum(self.padded.weights * self.loss.value(margins), axis=-1)

    def local_data_gradient(self, margins: np.ndarray) -> np.ndarray:
        """Gradient of the data term of eq. (2) from :meth:`margins`, shape (..., N, d)."""
        return self._data_gradient(self.padded.weights * self.loss.derivative(margins))

    def local_data_hessian(self, margins: np.ndarray) -> np.ndarray:
        """Hessian of the data term of eq. (2) from :meth:`margins`, shape (..., N, d, d)."""
        return self._data_hessian(self.padded.weights * self.loss.second_derivative(margins))

    def _data_gradient(self, scale: np.ndarray) -> np.ndarray:
        return np.matmul(scale[..., None, :], self.padded.signed_features)[..., 0, :]

    def _data_hessian(self, curvature: np.ndarray) -> np.ndarray:
        outer = self.sample_outer_products
        if outer is None:
            x = self.padded.signed_features
            return np.matmul(np.swapaxes(x, -1, -2), curvature[..., None] * x)
        # sum_n c_n x_n x_n^T as one matrix product per node over all trials at once
        n, b, d = self.padded.signed_features.shape
        flat = curvature.reshape(-1, n, b)
        hessian = np.empty((flat.shape[0], n, d * d))
        for i in range(n):
            hessian[:, i] = flat[:, i] @ outer[i]
        return hessian.reshape(curvature.shape[:-1] + (d, d))

    @cached_property
    def sample_outer_products(self) -> np.ndarray | None:
        """x x^T per sample, (N, B_max, d*d), when small enough to keep (else None)."""
        n, b, d = self.padded.signed_features.shape
        if n * b * d * d > OUTER_PRODUCT_LIMIT:
            return None
        x = self.padded.signed_features
        return (x[..., :, None] * x[..., None, :]).reshape(n, b, d * d)

    def average_loss(self, f: np.ndarray) -> np.ndarray:
        """L = 1/N sum_i 1/B_i sum_n L(y_i^n f_i^T x_i^n), the accuracy measure of §5.2.

        ``f``: (..., N, d) -> (...); the data term of eq. (2) without C and the regularizer.
        """
        f = np.asarray(f, dtype=np.float64)
        return np.mean(self.local_data_term(self.margins(f)), axis=-1) / self.C

    def local_objectives(self, f: np.ndarray) -> np.ndarray:
        """Return O(f_i, D_i) of eq. (2) for every node; ``f``: (..., N, d) -> (..., N)."""
        f = np.asarray(f, dtype=np.float64)
        return self.local_data_term(self.margins(f)) + 0.5 * self.regularization * np.sum(f * f, axis=-1)

    def local_gradients(self, f: np.ndarray) -> np.ndarray:
        """Return grad O(f_i, D_i) for every node; ``f``: (..., N, d) -> (..., N, d)."""
        f = np.asarray(f, dtype=np.float64)
        return self.local_data_gradient(self.margins(f)) + self.regularization * f

    def local_hessians(self, f: np.ndarray) -> np.ndarray:
        """Return the Hessian of O(f_i, D_i) for every node; (..., N, d) -> (..., N, d, d)."""
        f = np.asarray(f, dtype=np.float64)
        return self.local_data_hessian(self.margins(f)) + self.regularization * np.eye(self.dim)

    def local_part(self, nodes: Sequence[int]) -> "ConsensusProblem":
        """The local objectives O(., D_i) of ``nodes`` only, as a problem of len(nodes) nodes
        (rho rescaled so that each keeps its own rho/N of eq. (2))."""
        nodes = list(nodes)
        return ConsensusProblem(tuple(self.features[i] for i in nodes), tuple(self.labels[i] for i in nodes),
                                self.C, self.rho * len(nodes) / self.nodes, self.loss)

    # ---------------------------------------------------- centralized objective (eq. 1)
    @cached_property
    def stacked(self) -> PaddedData:
        """All samples in one block: ``signed_features`` (n, d), ``weights`` (n,) = C/B_i."""
        signed = np.vstack([y[:, None] * x for x, y in zip(self.features, self.labels)])
        weights = np.concatenate([np.full(len(y), self.C / len(y)) for y in self.labels])
        signed.setflags(write=False)
        weights.setflags(write=False)
        return PaddedData(signed, weights)

    def objective(self, f: np.ndarray) -> np.ndarray:
        """Return O_ERM(f, D_all) of eq. (1) for a classifier ``f`` of shape (..., d)."""
        f = np.asarray(f, dtype=np.float64)
        margins = f @ self.stacked.signed_features.T
        data_term = self.loss.value(margins) @ self.stacked.weights
        return data_term + 0.5 * self.rho * np.sum(f * f, axis=-1)

    def gradient(self, f: np.ndarray) -> np.ndarray:
        """Return grad O_ERM(f, D_all) of eq. (1); ``f``: (..., d) -> (..., d)."""
        f = np.asarray(f, dtype=np.float64)
        margins = f @ self.stacked.signed_features.T
        scale = self.stacked.weights * self.loss.derivative(margins)
        return scale @ self.stacked.signed_features + self.rho * f

    # ------------------------------------------------------------------ persistence
    def save_npz(self, path: str | Path, adjacency: np.ndarray | None = None) -> Path:
        """Write X_i, y_i per node, C, rho (and the network adjacency) to ``path``.

        The file holds exactly the data a run used, so the optimum of eq. (1) can be
        recomputed independently of admmcheck.
        """
        arrays: dict[str, np.ndarray] = {
            "nodes": np.array(self.nodes),
            "C": np.array(self.C),
            "rho": np.array(self.rho),
        }
        for i, (x, y) in enumerate(zip(self.features, self.labels)):
            arrays[f"X_{i}"] = x
            arrays[f"y_{i}"] = y
        if adjacency is not None:
            arrays["adjacency"] = np.asarray(adjacency)
        return write_atomic(path, lambda stream: np.savez(stream, **arrays))


def load_problem_npz(path: str | Path) -> tuple[ConsensusProblem, np.ndarray | None]:
    """Read a file written by :meth:`ConsensusProblem.save_npz`; returns (problem, adjacency)."""
    with np.load(Path(path)) as data:
        nodes = int(data["nodes"])
        problem = ConsensusProblem(
            features=tuple(data[f"X_{i}"] for i in range(nodes)),
            labels=tuple(data[f"y_{i}"] for i in range(nodes)),
            C=float(data["C"]),
            rho=float(data["rho"]),
        )
        adjacency = np.array(data["adjacency"]) if "adjacency" in data else None
    return problem, adjacency


def problem_from_partition(
    parts: Sequence[tuple[np.ndarray, np.ndarray]], C: float, rho: float
) -> ConsensusProblem:
    """Build a :class:`ConsensusProblem` from per-node ``(X_i, y_i)`` pairs."""
    return ConsensusProblem(
        features=tuple(x for x, _ in parts), labels=tuple(y for _, y in parts), C=C, rho=rho
    )
