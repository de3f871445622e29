"""The ADMM-sharing paper's experiments (§5, Fig. 1-3) on our data: objective and test log-loss
against epochs for ADMM sharing and a gradient baseline, and the DP trade-off.

The paper's baseline is FDML, an SGD method; ours is full-batch gradient descent with step
1/L_F (L_F = σ_max(DᵀD)/(4N) + λ, the Lipschitz constant of the objective's gradient), one
gradient per epoch — a deterministic stand-in that makes no claim about FDML's speed. One
epoch of ADMM sharing is one iteration (every party solves (6) once). The DP runs use
Theorem 1's σ for each ε at fixed δ (rows normalised per block, Assumption 2.3).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from admmcheck.algorithms.sharing import run_dp_sharing, run_sharing
from admmcheck.experiments.replication import Decided, Replication
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



#: How close (relative) ADMM sharing's test log-loss after the epochs must come to the centralised model's to have
#: "reached the same testing log loss" (§5 on a9a: ADMM and the SGD baseline "reach the same testing log loss in the
#: end"; the centralised optimum is where both should end)
REACHED = 0.01


def a9a_null_vector(features: np.ndarray, party: int) -> dict[str, object] | None:
    """A certificate that party ``party``'s block of a9a (:data:`~admmcheck.problems.a9a.PARTIES`) is rank-deficient:
    two of its one-hot groups set exactly one feature in every row, so v = (+1 on the first group's features, −1
    on the second's) has D_m v = 0, checked in integer arithmetic on the 0/1 features (normalising rows does not
    change it). None when no two groups are complete."""
    from admmcheck.problems.a9a import LAYOUT, PARTIES

    starts = np.cumsum([0] + [width for _, width in LAYOUT])
    low, high = sum(PARTIES[:party]), sum(PARTIES[:party + 1])
    binary = np.asarray(features[:, low:high]).astype(np.int64)
    complete = [(name, start - low, width) for (name, width), start in zip(LAYOUT, starts)
                if low <= start and start + width <= high
                and np.all(binary[:, start - low:start - low + width].sum(axis=1) == 1)]
    if len(complete) < 2:
        return None
    (first, a, wa), (second, b, wb) = complete[:2]
    vector = np.zeros(high - low, dtype=np.int64)
    vector[a:a + wa], vector[b:b + wb] = 1, -1
    residual = binary @ vector
    return {"party": party + 1, "plus": f"{first} (columns {low + a + 1}-{low + a + wa})",
            "minus": f"{second} (columns {low + b + 1}-{low + b + wb})", "rows_checked": int(binary.shape[0]),
            "holds": bool(np.all(residual == 0))}


@functools.lru_cache(maxsize=2)  # deterministic, and 8 s: a process that asks twice (verify, tests) computes it once
def replicate_a9a(epochs: int = 50, rho: float = 1e-5, lam: float = 1e-4) -> Replication:
    """The ADMM-sharing paper's a9a experiment (:func:`a9a_training`) with its statements decided: ADMM sharing
    reaches the centralised test log-loss (Fig. 1(a), within :data:`REACHED`), more features beat party 1's local
    model (Fig. 3(a)), and the noisy runs (Fig. 1(b), 3(a)): the noise of (10), N(0, σ²(D_mᵀD_m)⁻¹), needs every
    block of full column rank (Assumption 1.1), which a9a's one-hot blocks are not (certificate:
    :func:`a9a_null_vector`). All runs are deterministic."""
    from admmcheck.problems.a9a import PARTIES, load_a9a

    out = a9a_training(epochs, rho, lam)
    admm, central, local = out["admm_test_loss"][-1], out["centralised_test_loss"], out["local_test_loss"]
    gap = abs(admm - central) / central
    reached = Decided("sharing", f"a9a Fig. 1(a): ADMM sharing reaches the centralised model's test log-loss in "
                                 f"{epochs} epochs (within {REACHED:.0%})", "pass" if gap <= REACHED else "fail",
                      f"test log-loss {admm:.5f} vs scikit-learn on all 123 features {central:.5f} ({gap:.2%}); "
                      f"objective {out['admm_objective'][-1]:.5f} vs {out['centralised_objective']:.5f}; gradient "
                      f"descent {out['gd_test_loss'][-1]:.5f}", gap)
    better = Decided("sharing", "a9a Fig. 3(a): more features beat party 1's local model", "pass" if admm < local
                     else "fail", f"test log-loss {admm:.5f} (ADMM sharing, both parties) vs {local:.5f} (party 1's "
                     "66 features alone, scikit-learn)", local - admm)
    features = load_a9a().train.features
    certificates = [a9a_null_vector(features, party) for party in range(len(PARTIES))]
    deficient = [c for c in certificates if c is not None and c["holds"]]
    ranks = ", ".join(f"party {m + 1}: rank {r} < {w}" if r < w else f"party {m + 1}: rank {r}"
                      for m, (r, w) in enumerate(zip(out["ranks"], PARTIES)))
    assumption = Decided(
        "dp-sharing", "a9a Fig. 1(b)/3(a), the noisy runs: Assumption 1.1 (each block of full column rank), which "
                      "the noise of (10) needs", "fail" if deficient else "pass",
        f"{ranks}; certificate: D_1 v = 0 for v = +1 on {deficient[0]['plus']}, -1 on {deficient[0]['minus']}, "
        f"checked exactly on all {deficient[0]['rows_checked']} rows; the noise N(0, sigma^2 (D_m'D_m)^-1) does not "
        "exist, so DP ADMM sharing as published cannot run on the paper's own a9a" if deficient else ranks,
        None, "Assumption 1.1 fails on a9a, the paper's own data: its noisy a9a runs cannot be the algorithm as "
              "published" if deficient else None)
    setting = {"data": "a9a rebuilt from the shipped UCI Adult files (32,561 training, 16,281 test rows, 123 binary "
                       "features, LIBSVM's encoding; bin edges equal-frequency)",
               "parties": "first 66 features, last 57; rows normalised per block", "epochs": epochs, "rho": rho,
               "lambda": lam}
    epochs_axis = out["epochs"]
    figure = XY(title=f"a9a, 66/57 features (Fig. 1(a), 3(a)): test log-loss against epochs, rho = {rho:g}",
                xlabel="epoch", ylabel="test log-loss", algorithms=["sharing", "dp-sharing"], series={
                    "ADMM sharing": {"x": epochs_axis, "y": out["admm_test_loss"]},
                    "gradient descent (step 1/L)": {"x": epochs_axis, "y": out["gd_test_loss"]},
                    "centralised (scikit-learn, all features)": {"x": [0, epochs], "y": [central, central]},
                    "party 1 alone (scikit-learn)": {"x": [0, epochs], "y": [local, local]}})
    return Replication("sharing-a9a", setting, (reached, better, assumption),
                       {key: out[key] for key in ("admm_objective", "admm_test_loss", "gd_objective", "gd_test_loss",
                                                   "centralised_objective", "centralised_test_loss",
                                                   "local_test_loss", "ranks")} | {"certificates": certificates},
                       figure)
