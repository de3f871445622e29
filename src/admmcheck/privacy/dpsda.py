"""The claims of the DPSDA paper: privacy (Lemma 1, Theorems 2 and 4) and regret (Theorems 3, 5).

* Lemma 1 (15): Δ(t) ≤ 2nL̂, with L̂² = L² + ν² bounding E|g̃_i|² (Assumption 2; the text's
  "L̂ = L² + ν²" is read as L̂²). For blocks of d_i coordinates Remark 5 adds a factor √d_i and
  E‖g̃_i‖² ≤ L² + d_i ν². σ = Δ/ε.
* Theorems 2 / 4: each round ε-DP, T rounds Tε-DP (pure DP, δ = 0), under Definition 1 (one
  f_{t0} changed).
* Theorem 3: R̄ ≤ M₁√T with M₁ = 16n²L̂²/ε² + 2nL̂² + C + 2(L + √n D_χ G)·√(3n⁵L̂²/(θ²(1−θ)²)
  + 3n⁵L̂² + 24n⁷L̂²/(θ²(1−θ)²ε²)), θ = 1 − ϕ/(4n²).
* Theorem 5: R̄ ≤ M₂√T with M₂ = 16n²L̂²/ε² + 2nL̂² + C + 2(L + √n D_χ G)·√(8n³β²L̂²/(γ²λ²(1−λ)²)
  + 64n⁵β²L̂²/(γ²(1−λ)²ε²)), β = 2, λ = (1 − 1/n^{nB})^{1/B}, γ = inf_t min_i [A(t:0)1]_i
  (computed here over the sequence's steps).

ε = inf drops the 1/ε terms. The proofs rest on facts the paper does not state as assumptions:
Lemma 2(a) needs W(t) symmetric (doubly stochastic) and the rate θ^{t−s−1} a connected graph at
every step; they are reported as preconditions beside the bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from admmcheck.claims.stated import TheoremClaim
from admmcheck.claims.values import PureDp
from admmcheck.problems.graph_sequences import GraphSequence, connected_every_step
from admmcheck.problems.online import OnlineProblem
from admmcheck.foundations.validation import real


@dataclass(frozen=True)
class DpsdaClaims(TheoremClaim):
    """Every constant and claim for one problem, sequence, ε and gradient noise ν."""

    algorithm: str
    epsilon: float
    sensitivity: float
    sigma: float
    epsilon_total: float
    constants: dict[str, float]
    regret_constant: float
    preconditions: dict[str, bool]

    theorem = "DPSDA Lemma 1, Theorem 2/4 (privacy), Theorem 3/5 (regret)"
    capabilities = frozenset({"sigma", "regret_bound"})

    @property
    def holds(self) -> bool:
        return all(self.preconditions.values())

    def regret_bound(self, rounds: int) -> float:
        """M√T."""
        return self.regret_constant * math.sqrt(rounds)

    def as_claim(self, source: str = "") -> PureDp:
        """The pure T·ε claim of the whole transcript (Theorem 2/4)."""
        return PureDp(self.epsilon_total, source=source or "DPSDA Theorem 2/4: T epsilon")

    def as_dict(self, iterations: int) -> dict[str, object]:
        """Every constant and claim, with the regret bound at T = ``iterations``."""
        rounds = iterations
        return {"algorithm": self.algorithm, "theorem": self.theorem,
                "epsilon": self.epsilon, "sensitivity": self.sensitivity, "sigma": self.sigma,
                "epsilon_total": self.epsilon_total, "delta": 0.0, "constants": self.constants,
                "regret_constant": self.regret_constant, "regret_bound": self.regret_bound(rounds),
                "preconditions": self.preconditions,
                "failed": [k for k, ok in self.preconditions.items() if not ok]}


def lemma1_sensitivity(problem: OnlineProblem, gradient_noise: float) -> float:
    """Lemma 1's Δ = 2nL̂√d_i (15) with Remark 5's block factor: L̂² = L² + d_i ν², d_i the largest block."""
    block = int(np.bincount(problem.owner).max())
    return 2 * problem.nodes * math.sqrt(problem.gradient_bound ** 2 + block * gradient_noise**2) * math.sqrt(block)


def dpsda_claims(problem: OnlineProblem, graphs: GraphSequence, epsilon: float, gradient_noise: float,
                 rounds: int) -> DpsdaClaims:
    """Lemma 1, Theorem 2/4 and Theorem 3/5 (module docstring) for ``rounds`` = T."""
    epsilon = math.inf if isinstance(epsilon, (int, float)) and epsilon == math.inf else real("epsilon", epsilon)
    n = problem.nodes
    block = int(np.bincount(problem.owner).max())
    L = problem.gradient_bound
    L_hat = math.sqrt(L * L + block * gradient_noise**2)
    sensitivity = lemma1_sensitivity(problem, gradient_noise)
    sigma = 0.0 if math.isinf(epsilon) else sensitivity / epsilon
    inv_eps2 = 0.0 if math.isinf(epsilon) else 1.0 / epsilon**2
    C, D, G = problem.psi_bound, problem.diameter, problem.smoothness
    head = 16 * n**2 * L_hat**2 * inv_eps2 + 2 * n * L_hat**2 + C
    constants = {"n": n, "block": block, "L": L, "L_hat": L_hat, "G": G, "C": C, "D_chi": D,
                 "phi": graphs.smallest_weight}
    preconditions = {"epsilon_positive": epsilon > 0}
    if not graphs.directed:
        theta = 1 - graphs.smallest_weight / (4 * n * n)
        q = theta**2 * (1 - theta) ** 2
        tail = 3 * n**5 * L_hat**2 / q + 3 * n**5 * L_hat**2 + 24 * n**7 * L_hat**2 * inv_eps2 / q
        constants["theta"] = theta
        preconditions["W_row_stochastic"] = bool(np.allclose(graphs.matrices.sum(axis=2), 1.0))
        preconditions["W_symmetric (Lemma 2(a) needs it)"] = bool(np.allclose(graphs.matrices,
                                                                              np.swapaxes(graphs.matrices, 1, 2)))
        preconditions["connected_every_step (the rate theta needs it)"] = connected_every_step(graphs)
        name = "dpsda-c"
    else:
        B, beta = graphs.window, 2.0
        gap = -math.expm1(math.log1p(-float(n) ** (-n * B)) / B)  # 1 − λ, without cancellation
        lam = 1.0 - gap
        product, gamma = np.eye(n), math.inf
        for t in range(1, rounds + 1):
            product = graphs.at(t) @ product
            gamma = min(gamma, float(np.min(product.sum(axis=1))))
        q = gamma**2 * gap**2
        tail = 8 * n**3 * beta**2 * L_hat**2 / (q * lam**2) + 64 * n**5 * beta**2 * L_hat**2 * inv_eps2 / q
        constants.update(beta=beta, lam=lam, one_minus_lam=gap, gamma=gamma, B=B)
        preconditions["A_column_stochastic"] = bool(np.allclose(graphs.matrices.sum(axis=1), 1.0))
        name = "dpsda-ps"
    regret_constant = head + 2 * (L + math.sqrt(n) * D * G) * math.sqrt(tail)
    total = math.inf if math.isinf(epsilon) else rounds * epsilon
    return DpsdaClaims(name, epsilon, sensitivity, sigma, total, constants, regret_constant, preconditions)


def message_centres(problem: OnlineProblem, graphs: GraphSequence, push_sum: bool, broadcast: np.ndarray) -> np.ndarray:
    """z_i(t; F) for t = 1..T implied by the transcript ``broadcast`` (trials, T, n, d) of messages h_i(t), with
    noise-free gradients: z_i(1) = 0, y_i(t) = Π^ψ(z_i(t)[/w_i(t)], α(t−1)), z_i(t+1) = n E_i ∂_i f_t(y_i(t)) +
    Σ_j W(t)_ij h_j(t) ((12)-(13); (20)-(22) with ``push_sum``)."""
    trials, T, n, d = broadcast.shape
    centres = np.zeros_like(broadcast)
    z = np.zeros((trials, n, d))
    w = np.ones((trials, n))
    for t in range(1, T + 1):
        centres[:, t - 1] = z
        if t == 1:
            y = np.zeros_like(z)  # y_i(1) = Π^ψ(0) = 0
        else:
            y = problem.project(-z / (w[..., None] if push_sum else 1.0) / np.sqrt(t - 1))
        u = problem.gradient(t, y) * problem.block_mask
        mixing = graphs.at(t)
        z = n * u + np.einsum("ij,sjd->sid", mixing, broadcast[:, t - 1])
        if push_sum:
            w = w @ mixing.T
    return centres


def transcript_loss(broadcast: np.ndarray, centres_f: np.ndarray, centres_g: np.ndarray, sigma: float) -> np.ndarray:
    """The exact privacy loss log p_F(o)/p_F′(o) per round and node (trials, T, n) of transcripts ``broadcast``
    (trials, T, n, d) whose messages carry Laplace noise of scale ``sigma`` (11), from the centres z(t; F) and
    z(t; F′) they imply (:func:`message_centres`): Σ_k (|h_i^k(t) − z_i^k(t; F′)| − |h_i^k(t) − z_i^k(t; F)|) / σ."""
    broadcast = np.asarray(broadcast, dtype=np.float64)
    return (np.abs(broadcast - centres_g) - np.abs(broadcast - centres_f)).sum(axis=-1) / sigma


def history_gap(centres_f: np.ndarray, centres_g: np.ndarray) -> np.ndarray:
    """Σ_t ‖z(t; F) − z(t; F′)‖₁ for each history (trials,), from the centres of :func:`message_centres`: divided by
    σ, the largest loss any transcript with that history can have (each message's term is at most its centres'
    distance over σ)."""
    return np.abs(centres_f - centres_g).sum(axis=(1, 2, 3))
