"""The sharing problem over vertically partitioned features, ADMM-sharing paper eq. (1)-(4).

M parties hold feature blocks D_m ∈ R^{N×d_m} of the same N samples (D = [D_1 … D_M]) and a
public label vector Y ∈ {−1, +1}^N. The problem is

    minimize_x  l(Σ_m D_m x_m) + λ Σ_m R_m(x_m)   s.t.  x_m ∈ X_m                     (1)-(2)

with, as in the paper's experiments (§5), the logistic loss averaged over samples,
l(z) = (1/N) Σ_i log(1 + exp(−Y_i z_i)) (the 1/N of the ERM form; L = 1/(4N) in
Assumption 1.1), R_m = ½‖·‖² (so c1 = 1 in Assumption 2.2) and an optional box
X_m = [−b, b]^{d_m}.

Validation: every block non-empty with N rows; full column rank (Assumption 1.1:
σ_min(D_mᵀD_m) > 0, which the DP noise covariance σ²(D_mᵀD_m)⁻¹ of (10) needs), unless
``require_full_rank`` is False (the paper's own a9a experiment: its one-hot blocks are rank-deficient; the
non-private updates (6)-(8) stay well posed, the DP run refuses such a problem); and, for the
privacy analysis, rows of each block with unit norm (Assumption 2.3) — checked by
:meth:`SharingProblem.normalisation_error`, enforced where a bound is computed, since the
non-private algorithm does not need it.

A sharing problem presents itself to the shared run machinery as one "node" whose decision is
the concatenation x = (x_1, …, x_M) of dimension d = Σ d_m.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.special import expit, log_expit

from admmcheck.foundations.errors import InvalidProblem

#: Relative tolerance on ‖row‖ = 1 (Assumption 2.3) and on the smallest eigenvalue of D_mᵀD_m.
NORM_TOLERANCE = 1e-9
RANK_TOLERANCE = 1e-10


@dataclass(frozen=True, eq=False)
class SharingProblem:
    """``parts[m]`` is D_m (N, d_m); ``labels`` Y (N,) in {−1, +1}; ``lam`` λ; ``box`` b of
    X_m = [−b, b]^{d_m} (None: unconstrained); ``require_full_rank``: refuse a block of less than full column
    rank (Assumption 1.1; the module docstring says when not to)."""

    parts: tuple[np.ndarray, ...]
    labels: np.ndarray
    lam: float
    box: float | None = None
    require_full_rank: bool = True

    def __post_init__(self) -> None:
        if len(self.parts) == 0:
            raise InvalidProblem("the sharing problem has no parties; pass one feature block D_m per party")
        labels = np.asarray(self.labels, dtype=np.float64)
        if labels.ndim != 1 or not np.all(np.isin(labels, (-1.0, 1.0))):
            raise InvalidProblem("labels must be a vector of -1/+1 values, one per sample")
        blocks = []
        for m, block in enumerate(self.parts):
            array = np.array(block, dtype=np.float64)
            if array.ndim != 2 or array.shape[1] == 0:
                raise InvalidProblem(f"party {m} holds an empty or non-matrix block (shape {array.shape}); "
                                     "give every party at least one feature column")
            if array.shape[0] != len(labels):
                raise InvalidProblem(f"party {m} has {array.shape[0]} rows but there are {len(labels)} labels; "
                                     "every block must hold the same samples, in the same order")
            if not np.all(np.isfinite(array)):
                raise InvalidProblem(f"party {m}'s block contains NaN or inf")
            if self.require_full_rank and not _full_rank(array):
                smallest = float(np.linalg.eigvalsh(array.T @ array)[0])
                rank = int(np.linalg.matrix_rank(array))
                raise InvalidProblem(
                    f"party {m}'s block D_{m} has rank {rank} < {array.shape[1]} columns "
                    f"(sigma_min(D_mᵀD_m) = {smallest:.3g}): Assumption 1.1 needs full column rank, and the DP "
                    "noise covariance (D_mᵀD_m)⁻¹ does not exist; drop the redundant columns (e.g. one category "
                    "of each one-hot group)")
            array.setflags(write=False)
            blocks.append(array)
        labels.setflags(write=False)
        object.__setattr__(self, "parts", tuple(blocks))
        object.__setattr__(self, "labels", labels)
        if not (np.isfinite(self.lam) and self.lam > 0):
            raise InvalidProblem(f"lam (λ) must be a positive number; got {self.lam!r}")
        if self.box is not None and not (np.isfinite(self.box) and self.box > 0):
            raise InvalidProblem(f"box must be a positive bound b of X_m = [-b, b]^d_m, or None; got {self.box!r}")

    # ----------------------------------------------------------------- shape facts
    @property
    def parties(self) -> int:
        """Number of parties M."""
        return len(self.parts)

    @property
    def samples(self) -> int:
        """Number of samples N."""
        return len(self.labels)

    @property
    def widths(self) -> tuple[int, ...]:
        """(d_1, …, d_M)."""
        return tuple(block.shape[1] for block in self.parts)

    @property
    def dim(self) -> int:
        """d = Σ d_m, the length of the concatenated decision x."""
        return sum(self.widths)

    @property
    def nodes(self) -> int:
        """1: the run machinery sees one decision vector (see the module docstring)."""
        return 1

    @cached_property
    def offsets(self) -> np.ndarray:
        """x_m = x[offsets[m]:offsets[m+1]]."""
        return np.concatenate([[0], np.cumsum(self.widths)])

    @cached_property
    def design(self) -> np.ndarray:
        """The full design D = [D_1 … D_M], (N, d)."""
        return np.hstack(self.parts)

    @cached_property
    def lipschitz(self) -> float:
        """L of Assumption 1.1 for l: ∇²l = diag(σ(1−σ))/N ≤ 1/(4N)."""
        return 0.25 / self.samples

    def block(self, x: np.ndarray, m: int) -> np.ndarray:
        """x_m from the concatenated x (any leading axes)."""
        return x[..., self.offsets[m]:self.offsets[m + 1]]

    # ------------------------------------------------------------- objective (1)
    def loss(self, z: np.ndarray) -> np.ndarray:
        """l(z) = (1/N) Σ_i log(1 + exp(−Y_i z_i)); z (..., N) -> (...)."""
        return -np.mean(log_expit(self.labels * z), axis=-1)

    def loss_gradient(self, z: np.ndarray) -> np.ndarray:
        """∇l(z) = −Y σ(−Y z) / N, shape of z."""
        return -self.labels * expit(-self.labels * z) / self.samples

    def loss_curvature(self, z: np.ndarray) -> np.ndarray:
        """Diagonal of ∇²l(z): σ(Yz) σ(−Yz) / N."""
        s = expit(self.labels * z)
        return s * (1.0 - s) / self.samples

    def objective(self, x: np.ndarray) -> np.ndarray:
        """Objective (1) at x (..., d) -> (...)."""
        x = np.asarray(x, dtype=np.float64)
        return self.loss(x @ self.design.T) + 0.5 * self.lam * np.sum(x * x, axis=-1)

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """∇ of (1) at x (..., d) (unconstrained)."""
        return self.loss_gradient(x @ self.design.T) @ self.design + self.lam * x

    @cached_property
    def full_rank(self) -> tuple[bool, ...]:
        """Whether each block D_m has full column rank (Assumption 1.1), to :data:`RANK_TOLERANCE`."""
        return tuple(_full_rank(block) for block in self.parts)

    # ----------------------------------------------------------- Assumption 2.3
    def normalisation_error(self) -> str | None:
        """None when every row of every block has unit norm (Assumption 2.3); otherwise a message."""
        for m, block in enumerate(self.parts):
            norms = np.linalg.norm(block, axis=1)
            worst = int(np.argmax(np.abs(norms - 1.0)))
            if abs(norms[worst] - 1.0) > NORM_TOLERANCE:
                return (f"row {worst} of party {m}'s block has norm {norms[worst]:.6g}; Assumption 2.3 (used by "
                        "Lemma 1 and Theorem 1) asks every row of every D_m to have norm 1: normalise each block's "
                        "rows (normalise_rows=True when building the problem)")
        return None


def _full_rank(block: np.ndarray) -> bool:
    """σ_min(D_mᵀD_m) above :data:`RANK_TOLERANCE` times σ_max(D_m)² (at least 1)."""
    smallest = float(np.linalg.eigvalsh(block.T @ block)[0])
    return smallest > RANK_TOLERANCE * max(float(np.linalg.norm(block, 2)) ** 2, 1.0)


def split_columns(design: np.ndarray, labels: np.ndarray, widths: tuple[int, ...] | int, lam: float,
                  box: float | None = None, normalise_rows: bool = False,
                  require_full_rank: bool = True) -> SharingProblem:
    """A sharing problem from a design (N, d): ``widths`` (d_1, …, d_M) of consecutive column
    blocks, or M for near-equal blocks; ``normalise_rows`` scales every row of every block to
    norm 1 (Assumption 2.3; a zero row cannot be and is refused); ``require_full_rank`` as
    :class:`SharingProblem`'s."""
    design = np.asarray(design, dtype=np.float64)
    if isinstance(widths, (int, np.integer)):
        if not 1 <= widths <= design.shape[1]:
            raise InvalidProblem(f"cannot split {design.shape[1]} columns among {widths} parties")
        base, extra = divmod(design.shape[1], int(widths))
        widths = tuple(base + (m < extra) for m in range(int(widths)))
    if sum(widths) != design.shape[1] or min(widths) <= 0:
        raise InvalidProblem(f"party widths {widths} must be positive and sum to the {design.shape[1]} columns")
    cuts = np.cumsum((0,) + tuple(widths))
    parts = [design[:, cuts[m]:cuts[m + 1]] for m in range(len(widths))]
    if normalise_rows:
        normalised = []
        for m, block in enumerate(parts):
            norms = np.linalg.norm(block, axis=1, keepdims=True)
            if np.any(norms == 0):
                raise InvalidProblem(f"party {m}'s block has an all-zero row {int(np.argmin(norms))}, which cannot be "
                                     "normalised to norm 1 (Assumption 2.3); give that party other columns")
            normalised.append(block / norms)
        parts = normalised
    return SharingProblem(tuple(parts), np.asarray(labels, dtype=np.float64), lam, box, require_full_rank)
