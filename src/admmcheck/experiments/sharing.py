"""The ADMM-sharing paper's experiments (§5, Fig. 1-3) on our data: objective and test log-loss
against epochs for ADMM sharing and a gradient baseline, and the DP trade-off.

The paper's baseline is FDML, an SGD method; ours is full-batch gradient descent with step
1/L_F (L_F = σ_max(DᵀD)/(4N) + λ, the Lipschitz constant of the objective's gradient), one
gradient per epoch — a deterministic stand-in that makes no claim about FDML's speed. One
epoch of ADMM sharing is one iteration (every party solves (6) once). The DP runs use
Theorem 1's σ for each ε at fixed δ (rows normalised per block, Assumption 2.3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from admmcheck.algorithms.sharing import run_dp_sharing, run_sharing
from admmcheck.foundations.figures import XY
from admmcheck.privacy.sharing import corollary1_total, theorem1_noise
from admmcheck.problems.sharing import SharingProblem


@dataclass(frozen=True)
class HeldOut:
    """Test rows in the training problem's column layout."""

    design: np.ndarray
    labels: np.ndarray

    @classmethod
    def normalised(cls, features: np.ndarray, labels: np.ndarray, widths: tuple[int, ...]) -> "HeldOut":
        """Test rows with every party's block scaled to unit row norm, as
        ``split_columns(..., normalise_rows=True)`` scales the training rows (a zero row stays zero)."""
        blocks = np.split(features, np.cumsum(widths)[:-1], axis=1)
        return cls(np.hstack([b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-300) for b in blocks]),
                   labels)

    def log_loss(self, x: np.ndarray) -> np.ndarray:
        """Mean log(1 + exp(−y ⟨d, x⟩)) over the test rows, for x (..., d)."""
        margins = self.labels * (x @ self.design.T)
        return np.mean(np.logaddexp(0.0, -margins), axis=-1)


def gradient_descent(problem: SharingProblem, iterations: int) -> np.ndarray:
    """Iterates x^0 = 0, …, x^T of full-batch gradient descent with step 1/L_F, shape (T+1, d)."""
    smoothness = np.linalg.norm(problem.design, 2) ** 2 / (4 * problem.samples) + problem.lam
    x = np.zeros(problem.dim)
    out = [x]
    for _ in range(iterations):
        x = x - problem.gradient(x) / smoothness
        out.append(x)
    return np.array(out)


def training_curves(problem: SharingProblem, test: HeldOut, rho: float, epochs: int) -> dict[str, object]:
    """Objective (1) and test log-loss per epoch for ADMM sharing and gradient descent."""
    admm = run_sharing(problem, rho=rho, iterations=epochs, seeds=[0]).primal[0, :, 0]
    baseline = gradient_descent(problem, epochs)
    return {
        "epochs": list(range(epochs + 1)), "rho": rho,
        "admm_objective": problem.objective(admm).tolist(), "admm_test_loss": test.log_loss(admm).tolist(),
        "gd_objective": problem.objective(baseline).tolist(), "gd_test_loss": test.log_loss(baseline).tolist(),
    }


def privacy_tradeoff(problem: SharingProblem, test: HeldOut, rho: float, epochs: int, epsilons: list[float],
                     delta: float = 1e-5, trials: int = 5, c1: float = 1.0, b1: float = 1.0,
                     sigmas: list[float] | None = None) -> list[dict[str, object]]:
    """Final test log-loss of DP sharing (mean and spread over ``trials``) for each ε (Theorem 1's σ),
    and for each fixed σ in ``sigmas`` (the paper's "noise levels")."""
    rows = []
    settings = [("epsilon", e, None) for e in epsilons] + [("sigma", s, s) for s in (sigmas or [])]
    for kind, value, fixed in settings:
        if fixed is None:  # Theorem 1's sigma: the figure needs no accountant
            sigma = np.array(theorem1_noise(problem.widths, rho=rho, lam=problem.lam, c1=c1, b1=b1, epsilon=value,
                                            delta=delta)[1])
        else:
            sigma = np.full(problem.parties, fixed)
        run = run_dp_sharing(problem, rho=rho, sigma=sigma, iterations=epochs,
                             seeds=np.random.SeedSequence(1).spawn(trials))
        losses = test.log_loss(run.primal[:, -1, 0])
        row = {kind: value, "sigma": sigma.tolist(), "test_loss_mean": float(losses.mean()),
               "test_loss_min": float(losses.min()), "test_loss_max": float(losses.max())}
        if fixed is None:
            total, delta_total = corollary1_total(value, delta, epochs, delta)
            row |= {"epsilon_total_corollary1": total, "delta_total": delta_total}
        rows.append(row)
    return rows


def tradeoff_figure(seed: int) -> XY:
    """The sharing paper's DP trade-off (§5, Fig. 3) on breast-cancer: test log-loss of DP ADMM
    sharing (2 parties, rho = 1e-3, 50 epochs, rows normalised per block, Theorem 1's sigma at
    delta = 1e-5; mean of 3 runs) against epsilon, and the noiseless run."""
    from admmcheck.problems.datasets import breast_cancer
    from admmcheck.problems.sharing import split_columns

    data = breast_cancer()
    order = np.random.default_rng(seed).permutation(data.samples)
    features, labels = data.features[order], data.labels[order]
    train_rows = int(0.8 * data.samples)
    problem = split_columns(features[:train_rows], labels[:train_rows], 2, 1e-3, normalise_rows=True)
    test = HeldOut.normalised(features[train_rows:], labels[train_rows:], problem.widths)
    epsilons = [0.1, 0.5, 1.0, 5.0]
    rows = privacy_tradeoff(problem, test, 1e-3, 50, epsilons, trials=3)
    noiseless = float(test.log_loss(run_sharing(problem, rho=1e-3, iterations=50, seeds=[0]).primal[0, -1, 0]))
    return XY(log=True, xlabel="claimed epsilon of each run (Theorem 1, delta = 1e-5)", ylabel="test log-loss",
              algorithms=["dp-sharing"],
              title="DP ADMM sharing: test log-loss against epsilon (breast-cancer, 2 parties, 50 epochs)",
              series={"DP sharing (mean of 3)": {"x": epsilons, "y": [r["test_loss_mean"] for r in rows]},
                      "noiseless": {"x": epsilons, "y": [noiseless] * len(epsilons)}})


def a9a_training(epochs: int = 50, rho: float = 1e-5, lam: float = 1e-4) -> dict[str, object]:
    """The paper's a9a experiment (§5, Fig. 1(a) and Fig. 3(a)): l2-regularised logistic regression on a9a
    (:func:`~admmcheck.problems.a9a.load_a9a`: 32,561 training and 16,281 test rows), its first 66 features held
    by party 1 and the other 57 by party 2, rows normalised per block (Assumption 2.3), λ = ``lam``. Objective (1)
    and test log-loss per epoch of ADMM sharing (ρ = ``rho``) and of gradient descent; the test log-loss of
    scikit-learn's logistic regression on all features (the centralised optimum of the same objective) and on
    party 1's alone (the paper's "local" baseline). The paper gives neither λ nor ρ for a9a; ρ = 1e-5 is of the
    order of the loss's smoothness 1/(4N) ≈ 7.7e-6 (at ρ = 1e-2 ADMM sharing barely moves in 50 epochs). a9a's
    blocks are rank-deficient (one-hot groups), so Assumption 1.1 fails on the paper's own data: the non-private
    updates run, and ``full_rank`` says so."""
    from sklearn.linear_model import LogisticRegression

    from admmcheck.problems.a9a import PARTIES, load_a9a
    from admmcheck.problems.sharing import split_columns

    data = load_a9a()
    problem = split_columns(data.train.features, data.train.labels, PARTIES, lam, normalise_rows=True,
                            require_full_rank=False)
    test = HeldOut.normalised(data.test.features, data.test.labels, problem.widths)
    curves = training_curves(problem, test, rho, epochs)

    def fitted(design: np.ndarray) -> np.ndarray:  # minimises the mean log-loss plus lam/2 |w|^2, as (1) does
        model = LogisticRegression(C=1.0 / (lam * problem.samples), fit_intercept=False, max_iter=10_000, tol=1e-10)
        return model.fit(design, problem.labels).coef_[0]

    central = fitted(problem.design)
    local = fitted(problem.parts[0])
    local_test = HeldOut(test.design[:, :problem.widths[0]], test.labels)
    return curves | {"lam": lam, "parties": list(PARTIES), "full_rank": list(problem.full_rank),
                     "ranks": [int(np.linalg.matrix_rank(block)) for block in problem.parts],
                     "centralised_objective": float(problem.objective(central)),
                     "centralised_test_loss": float(test.log_loss(central)),
                     "local_test_loss": float(local_test.log_loss(local))}

