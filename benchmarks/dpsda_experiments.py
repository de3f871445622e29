"""The DPSDA paper's experiments (Fig. 3 and 5) with DPSDA-C and DPSDA-PS.

* §6.1 online linear regression: n = 7, d = 21 (3 coordinates per node), T = 500, χ = [−5, 5],
  α(t) = 1/√t, gradient error N(0, 0.1), ε ∈ {inf, 1, 0.5, 0.2} with σ = Δ/ε of Lemma 1, on a
  seeded 4-connected sequence (undirected with the paper's 1/deg weights for DPSDA-C, directed
  column-stochastic for DPSDA-PS): regret(t)/t and running-average regret(t)/t (Fig. 3).
* §6.2 online binary classification on scikit-learn's digits, 6 vs 8 (a stand-in for MNIST):
  64 features scaled to [0, 1], rounds of 10 samples, χ = {‖x‖ ≤ 5}, n = 8 (8 coordinates each):
  average loss per round (Fig. 5).
Each curve is the mean of ``--trials`` runs. Writes JSON, a Markdown table and PNG figures:

    python benchmarks/dpsda_experiments.py [--trials 10] [--out DIR]
"""

from __future__ import annotations

import argparse
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

from admmcheck.algorithms.dpsda import run_dpsda_c, run_dpsda_ps
from admmcheck.problems.graph_sequences import random_sequence
from admmcheck.solving.oracle import hindsight_optimum
from admmcheck.foundations.output import output_folder, to_json, write_atomic, write_text_atomic
from admmcheck.privacy.dpsda import dpsda_claims
from admmcheck.problems.online import online_classification, online_linear_regression

HERE = Path(__file__).resolve().parent
EPSILONS = (math.inf, 1.0, 0.5, 0.2)
NU = math.sqrt(0.1)


def curves(problem, graphs, run, epsilon, trials, seed, unit: bool = False):
    """Mean cumulative losses; σ from Lemma 1 (σ = Δ/ε), or σ = 1/ε with ``unit`` (the paper's
    experiments state no σ: "the ε just characterize a corresponding proportional relationship")."""
    claims = dpsda_claims(problem, graphs, epsilon, NU, problem.rounds)
    sigma = (0.0 if math.isinf(epsilon) else 1.0 / epsilon) if unit else claims.sigma
    claims = replace(claims, sigma=sigma)
    result = run(problem, graphs=graphs, sigma=sigma, gradient_noise=NU, iterations=problem.rounds,
                 seeds=np.random.SeedSequence(seed).spawn(trials))
    T = problem.rounds
    x = result.extras["decision"][:, :T]
    running = np.cumsum(x, axis=1) / np.arange(1, T + 1)[None, :, None]
    losses = np.stack([problem.value(t, x[:, t - 1]) for t in range(1, T + 1)], axis=1).mean(axis=0)
    averaged = np.stack([problem.value(t, running[:, t - 1]) for t in range(1, T + 1)], axis=1).mean(axis=0)
    return claims, np.cumsum(losses), np.cumsum(averaged)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(HERE / "out" / "dpsda"))
    args = parser.parse_args()
    out = output_folder(args.out, "--out")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    olr = online_linear_regression(rounds=500, dim=21, nodes=7, seed=args.seed)
    checkpoints = (50, 100, 200, 500)
    best = {T: hindsight_optimum(olr, T).objective for T in range(1, 501)}
    digits = load_digits()
    keep = np.isin(digits.target, (6, 8))
    features = digits.data[keep] / 16.0
    labels = np.where(digits.target[keep] == 6, 1.0, -1.0)
    obc = online_classification(features, labels, rounds=300, batch=10, nodes=8, seed=args.seed)
    results, table = {}, ["| experiment | algorithm | epsilon | sigma | " + " | ".join(f"R({T})/{T}" for T in checkpoints)
                          + " | regret bound M sqrt(T) at 500 |", "|---" * (5 + len(checkpoints)) + "|"]
    figure, axes = plt.subplots(2, 3, figsize=(15, 8))
    for column, (name, run, directed) in enumerate((("DPSDA-C", run_dpsda_c, False), ("DPSDA-PS", run_dpsda_ps, True))):
        graphs = random_sequence(7, 500, 4, args.seed, directed=directed)
        digits_graphs = random_sequence(8, 300, 4, args.seed, directed=directed)
        for epsilon, unit in [(e, False) for e in EPSILONS] + [(e, True) for e in EPSILONS[1:]]:
            claims, cumulative, cumulative_avg = curves(olr, graphs, run, epsilon, args.trials, args.seed, unit)
            regret = np.array([cumulative[T - 1] - best[T] for T in range(1, 501)])
            regret_avg = np.array([cumulative_avg[T - 1] - best[T] for T in range(1, 501)])
            t = np.arange(1, 501)
            label = f"eps={epsilon:g}" + (", sigma=1/eps" if unit else "")
            axes[0, column].plot(t, regret / t, label=label)
            axes[1, column].plot(t, regret_avg / t, label=label)
            key = f"olr/{name}/{epsilon:g}" + ("/unit" if unit else "")
            results[key] = {"sigma": claims.sigma, "regret_over_T": (regret / t).tolist(),
                            "average_regret_over_T": (regret_avg / t).tolist(),
                            "regret_bound_500": claims.regret_bound(500), "preconditions": claims.preconditions}
            table.append(f"| OLR | {name} | {epsilon:g}{' (sigma = 1/eps)' if unit else ''} | {claims.sigma:.4g} | "
                         + " | ".join(f"{regret[T - 1] / T:.4g}" for T in checkpoints)
                         + f" | {claims.regret_bound(500):.3g} |")
            claims_d, cumulative_d, _ = curves(obc, digits_graphs, run, epsilon, args.trials, args.seed, unit)
            average_loss = cumulative_d / np.arange(1, obc.rounds + 1) / obc.features.shape[1]
            axes[column, 2].plot(np.arange(1, obc.rounds + 1), average_loss, label=label)
            results[f"digits/{name}/{epsilon:g}" + ("/unit" if unit else "")] = {"sigma": claims_d.sigma, "average_loss": average_loss.tolist()}
            table.append(f"| digits 6/8 | {name} | {epsilon:g}{' (sigma = 1/eps)' if unit else ''} | {claims_d.sigma:.4g} | "
                         "average log-loss per sample "
                         f"after 50/100/300 rounds: {average_loss[49]:.4f} / {average_loss[99]:.4f} / "
                         f"{average_loss[-1]:.4f} | | | | |")
            print(table[-2], table[-1], sep="\n", flush=True)
        axes[0, column].set(title=f"{name}: regret(T)/T (OLR)", xlabel="T", yscale="log")
        axes[1, column].set(title=f"{name}: running-average regret(T)/T", xlabel="T", yscale="log")
        axes[column, 2].set(title=f"{name}: digits 6 vs 8, average loss per sample", xlabel="round",
                            yscale="log")
        for axis in (axes[0, column], axes[1, column], axes[column, 2]):
            axis.legend(fontsize=8)
    figure.tight_layout()
    write_atomic(out / "dpsda_experiments.png", lambda stream: figure.savefig(stream, format="png", dpi=100))
    write_text_atomic(out / "dpsda_experiments.json", to_json(results))
    write_text_atomic(out / "dpsda_experiments.md", "\n".join(table) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
