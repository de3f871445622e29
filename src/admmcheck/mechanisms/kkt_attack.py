"""The KKT reconstruction attack on PP, M-ADMM paper supplement, Appendix E.

The attacker knows every record of node i but the first, B_i, C, ρ, N, θ, the network, all
broadcasts f_j(t) of node i and its neighbours and — in the *public-η* setting — the penalties
η_i(t). From the KKT condition of (24) (supplement (58)) it computes, for every t,

    r_t = −1/(2η_i(t)V_i) [ C/B_i Σ_{n≥2} y_n L′(y_n f_i(t)ᵀx_n) x_n + ρ/N f_i(t) + 2λ_i(t−1) ]
          − 1/(2V_i) Σ_{j∈V_i} (2f_i(t) − f_i(t−1) − f_j(t−1))                         (E)
        = ε_i(t) + s_t x_i^1,    s_t = C/(2η_i(t)V_iB_i) y_1 L′(y_1 f_i(t)ᵀx_1),

with λ_i(t−1) rebuilt from the broadcasts by (11). The noise has mean zero, so the running
mean of r_t points along ±x_i^1 (for the logistic loss every s_t has the sign of −y_1): the
attack reports |cos(mean_{s≤t} r_s, x_i^1)| against t. In the *private-η* setting every
trial's node i draws its own penalty η_i(t) = η_i(1) q_i^(t−1), η_i(1) ~ U[θ, 4θ],
q_i ~ U[1, 1.05] (non-decreasing, as Theorem 3.1 asks), which the attacker does not know; it
uses θ, the only public value η_i(t) is known to exceed, in (E).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from admmcheck.algorithms import run_pp
from admmcheck.algorithms.madmm import madmm_dual_step
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.problems.networks import Network
from admmcheck.problems import ConsensusProblem
from admmcheck.foundations.validation import positive_int, real

PRIVATE_ETA_RANGE = (1.0, 4.0)  # η_i(1) / θ
PRIVATE_GROWTH_RANGE = (1.0, 1.05)


@dataclass(frozen=True)
class AttackResult:
    """|cosine| per iteration, averaged over ``trials`` (``cosine`` (T,)), its spread, the setting."""

    setting: str
    trials: int
    cosine: np.ndarray
    cosine_std: np.ndarray
    node: int

    def as_dict(self) -> dict[str, object]:
        return {"setting": self.setting, "trials": self.trials, "node": self.node, "record": 0,
                "cosine": self.cosine.tolist(), "cosine_std": self.cosine_std.tolist(),
                "final_cosine": float(self.cosine[-1])}


def kkt_residuals(problem: ConsensusProblem, network: Network, primal: np.ndarray, eta_assumed: np.ndarray,
                  theta: float, node: int) -> np.ndarray:
    """r_t of (E) for t = 1..T from the transcript ``primal`` (trials, T+1, N, d), using only
    records 2..B_i of ``node`` and ``eta_assumed`` (T,) or (trials, T) for η_i(t)."""
    x, y = problem.features[node][1:], problem.labels[node][1:]
    signed = y[:, None] * x
    weight = problem.C / problem.sizes[node]
    degree = float(network.degrees[node])
    neighbours = np.flatnonzero(network.adjacency[node])
    eta = np.broadcast_to(np.asarray(eta_assumed, float), primal.shape[:1] + (primal.shape[1] - 1,))
    lam = np.zeros_like(primal[:, 0])
    residuals = np.empty(primal.shape[:1] + (primal.shape[1] - 1, primal.shape[-1]))
    for t in range(1, primal.shape[1]):
        f, f_prev = primal[:, t, node], primal[:, t - 1]
        known = weight * problem.loss.derivative(f @ signed.T) @ signed + problem.regularization * f
        mixing = (2 * degree * f - degree * f_prev[:, node] - f_prev[:, neighbours].sum(axis=1)) / (2 * degree)
        residuals[:, t - 1] = -(known + 2 * lam[:, node]) / (2 * eta[:, t - 1:t] * degree) - mixing
        lam = madmm_dual_step(network, lam, primal[:, t], theta)  # (11) from the broadcasts
    return residuals


def kkt_attack(problem: ConsensusProblem, network: Network, *, public_eta: bool, node: int = 0,
               iterations: int = 50, penalty: float = 1.0, theta: float = 1.0, alpha: float = 5.0,
               trials: int = 200, seed: int = 0) -> AttackResult:
    """Run PP ``trials`` times and the attack of Appendix E on record 0 of ``node``.

    Public η: every node uses η_i(t) = ``penalty`` and the attacker knows it. Private η: see
    the module docstring (each trial draws node i's schedule; the attacker assumes θ)."""
    iterations, trials = positive_int("iterations", iterations), positive_int("trials", trials)
    theta, penalty = real("theta", theta), real("penalty", penalty)
    if not 0 <= node < problem.nodes or problem.sizes[node] < 2:
        raise InvalidConfiguration(f"node {node} must exist and hold at least 2 records (the attacker knows all but one)")
    rng = np.random.default_rng(seed)
    seeds = np.random.SeedSequence(seed).spawn(trials)
    eta = np.full((trials, iterations, problem.nodes), penalty)
    if not public_eta:
        start = theta * rng.uniform(*PRIVATE_ETA_RANGE, size=trials)
        growth = rng.uniform(*PRIVATE_GROWTH_RANGE, size=trials)
        eta[:, :, node] = start[:, None] * growth[:, None] ** np.arange(iterations)
    if public_eta:
        primal = run_pp(problem, network, penalty=penalty, theta=theta, alpha=alpha, iterations=iterations,
                        seeds=seeds).primal
    else:  # one run per trial: each has its own private schedule for node i
        primal = np.concatenate([run_pp(problem, network, penalty=eta[k], theta=theta, alpha=alpha,
                                        iterations=iterations, seeds=[seeds[k]]).primal for k in range(trials)])
    assumed = eta[:, :, node] if public_eta else np.full((trials, iterations), theta)
    residuals = kkt_residuals(problem, network, primal, assumed, theta, node)
    estimate = np.cumsum(residuals, axis=1) / np.arange(1, iterations + 1)[None, :, None]
    secret = problem.features[node][0]
    cosine = np.abs(estimate @ secret) / (np.linalg.norm(estimate, axis=-1) * np.linalg.norm(secret) + 1e-300)
    return AttackResult("public eta" if public_eta else "private eta", trials, cosine.mean(axis=0),
                        cosine.std(axis=0), node)
