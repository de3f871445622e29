"""Online problems of the DPSDA paper (§2.2, §6): a sequence f_1, …, f_T of global convex
functions of x ∈ χ^d, nondecomposable, with node i controlling the coordinate block i of x.

* online linear regression (§6.1): f_t(x) = (a(t)ᵀx − b(t))², χ = [−5, 5]^d, a(t) uniform on
  [−0.5, 0.5]^d, b(t) = a(t)ᵀx̂ + ϱ(t), x̂ ~ N(0, I), ϱ(t) ~ N(0, 0.2) (read as variance);
* online binary classification (§6.2): f_t(x) = Σ_{j∈D_t} log(1 + exp(−b_j a_jᵀx)) over the
  batch D_t of round t, χ = {‖x‖ ≤ B}.

ψ(x) = ½‖x‖² (the paper leaves ψ open), so Π^ψ(z, α) = argmin ⟨z, x⟩ + ψ(x)/α = proj_χ(−αz).
Every method takes x with any leading axes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.special import expit

from admmcheck.foundations.errors import InvalidConfiguration, InvalidProblem
from admmcheck.foundations.validation import positive_int


@dataclass(frozen=True, eq=False)
class OnlineProblem:
    """``features`` (T, m, d) and ``targets`` (T, m): round t's m samples; ``loss`` "squared"
    (f_t = Σ_j (a_jᵀx − b_j)²) or "logistic" (f_t = Σ_j log(1 + e^{−b_j a_jᵀx})); χ a box
    [−``radius``, ``radius``]^d (``set_kind`` "box") or the ball ‖x‖ ≤ ``radius``; ``nodes``
    blocks of consecutive coordinates (near-equal sizes)."""

    features: np.ndarray
    targets: np.ndarray
    loss: str
    radius: float
    set_kind: str
    node_count: int

    def __post_init__(self) -> None:
        features = np.asarray(self.features, dtype=np.float64)
        targets = np.asarray(self.targets, dtype=np.float64)
        if features.ndim != 3 or targets.shape != features.shape[:2]:
            raise InvalidProblem(f"features must be (T, m, d) and targets (T, m); got {features.shape} and {targets.shape}")
        if self.loss not in ("squared", "logistic"):
            raise InvalidProblem(f"unknown loss {self.loss!r}; choose squared or logistic")
        if self.set_kind not in ("box", "ball"):
            raise InvalidProblem(f"unknown set {self.set_kind!r}; choose box or ball")
        if not (np.isfinite(self.radius) and self.radius > 0):
            raise InvalidProblem(f"the radius of chi must be positive; got {self.radius!r}")
        positive_int("nodes", self.node_count)
        if self.node_count > features.shape[2]:
            raise InvalidProblem(f"{self.node_count} nodes cannot each control a block of {features.shape[2]} coordinates")
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "targets", targets)

    @property
    def rounds(self) -> int:
        return self.features.shape[0]

    @property
    def dim(self) -> int:
        return self.features.shape[2]

    @property
    def nodes(self) -> int:
        return self.node_count

    @cached_property
    def owner(self) -> np.ndarray:
        """owner[k] = the node controlling coordinate k (blocks of consecutive coordinates)."""
        base, extra = divmod(self.dim, self.node_count)
        sizes = [base + (i < extra) for i in range(self.node_count)]
        return np.repeat(np.arange(self.node_count), sizes)

    @cached_property
    def block_mask(self) -> np.ndarray:
        """(n, d) mask: row i selects node i's block."""
        return (self.owner[None, :] == np.arange(self.node_count)[:, None]).astype(float)

    def decision(self, local: np.ndarray) -> np.ndarray:
        """x = (y_1^{block 1}, …, y_n^{block n}) from local copies (..., n, d) -> (..., d)."""
        return np.sum(local * self.block_mask, axis=-2)

    def value(self, t: int, x: np.ndarray) -> np.ndarray:
        """f_t(x), t = 1..T, x (..., d) -> (...)."""
        margins = x @ self.features[t - 1].T  # (..., m)
        if self.loss == "squared":
            return np.sum((margins - self.targets[t - 1]) ** 2, axis=-1)
        return np.sum(np.logaddexp(0.0, -self.targets[t - 1] * margins), axis=-1)

    def gradient(self, t: int, x: np.ndarray) -> np.ndarray:
        """∇f_t(x), x (..., d) -> (..., d)."""
        margins = x @ self.features[t - 1].T
        if self.loss == "squared":
            scale = 2.0 * (margins - self.targets[t - 1])
        else:
            scale = -self.targets[t - 1] * expit(-self.targets[t - 1] * margins)
        return scale @ self.features[t - 1]

    def project(self, x: np.ndarray) -> np.ndarray:
        """Euclidean projection onto χ."""
        if self.set_kind == "box":
            return np.clip(x, -self.radius, self.radius)
        norm = np.linalg.norm(x, axis=-1, keepdims=True)
        return x * np.minimum(1.0, self.radius / np.maximum(norm, 1e-300))

    # ------------------------------------------------ constants of Assumption 1
    @cached_property
    def gradient_bound(self) -> float:
        """L = max_t sup_{x∈χ} ‖∇f_t(x)‖, exactly for the squared loss on a box
        (sup |aᵀx − b| = r‖a‖₁ + |b|) and by the triangle inequality otherwise."""
        a, b = self.features, self.targets
        if self.loss == "squared":
            reach = self.radius * (np.abs(a).sum(axis=2) if self.set_kind == "box" else np.linalg.norm(a, axis=2))
            if a.shape[1] == 1:
                return float(np.max(2 * (reach[:, 0] + np.abs(b[:, 0])) * np.linalg.norm(a[:, 0], axis=1)))
            return float(np.max(np.sum(2 * (reach + np.abs(b)) * np.linalg.norm(a, axis=2), axis=1)))
        return float(np.max(np.sum(np.linalg.norm(a, axis=2), axis=1)))  # |σ| <= 1

    @cached_property
    def smoothness(self) -> float:
        """G = max_t λ_max(∇²f_t): 2‖A_tᵀA_t‖ (squared), ‖A_tᵀA_t‖/4 (logistic)."""
        factor = 2.0 if self.loss == "squared" else 0.25
        return float(max(factor * np.linalg.norm(a, 2) ** 2 for a in self.features))

    @property
    def psi_bound(self) -> float:
        """C = sup_χ ψ = ½ sup ‖x‖²."""
        return 0.5 * self.radius**2 * (self.dim if self.set_kind == "box" else 1)

    @property
    def diameter(self) -> float:
        """D_χ of Assumption 1(c) for the scalar set of one coordinate (box) or the ball's diameter."""
        return 2.0 * self.radius

    def prefix(self, rounds: int) -> "OnlineProblem":
        """The first ``rounds`` functions."""
        return OnlineProblem(self.features[:rounds], self.targets[:rounds], self.loss, self.radius, self.set_kind,
                             self.node_count)


def online_linear_regression(rounds: int = 500, dim: int = 21, nodes: int = 7, seed: int = 0,
                             radius: float = 5.0) -> OnlineProblem:
    """§6.1: one sample per round, a(t) ~ U[−0.5, 0.5]^d, b(t) = a(t)ᵀx̂ + ϱ(t)."""
    rng = np.random.default_rng(seed)
    truth = rng.standard_normal(dim)
    a = rng.uniform(-0.5, 0.5, size=(rounds, 1, dim))
    b = a[:, :, :] @ truth + rng.normal(0.0, np.sqrt(0.2), size=(rounds, 1))
    return OnlineProblem(a, b, "squared", radius, "box", nodes)


def online_classification(features: np.ndarray, labels: np.ndarray, rounds: int, batch: int, nodes: int,
                          seed: int = 0, radius: float = 5.0) -> OnlineProblem:
    """§6.2: rounds of ``batch`` samples drawn (seeded, without replacement while they last)."""
    rng = np.random.default_rng(seed)
    need = rounds * batch
    order = np.concatenate([rng.permutation(len(labels)) for _ in range(-(-need // len(labels)))])[:need]
    return OnlineProblem(features[order].reshape(rounds, batch, -1), labels[order].reshape(rounds, batch),
                         "logistic", radius, "ball", nodes)


def change_one_round(problem: OnlineProblem, round_: int, features: np.ndarray, targets: np.ndarray
                     ) -> tuple[OnlineProblem, OnlineProblem]:
    """(F, F′) of Definition 1 of the DPSDA paper: f_{round} replaced by the function of ``features``/``targets``."""
    if not 1 <= round_ <= problem.rounds:
        raise InvalidConfiguration(f"round {round_} does not exist (1..{problem.rounds})")
    a, b = problem.features.copy(), problem.targets.copy()
    a[round_ - 1], b[round_ - 1] = features, targets
    return problem, OnlineProblem(a, b, problem.loss, problem.radius, problem.set_kind, problem.nodes)
