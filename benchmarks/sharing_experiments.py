"""The ADMM-sharing paper's experiments (Fig. 1-3) on Adult and on a gisette-sized synthetic problem.

* Adult (the paper's a9a is derived from it): both official files, reference-coded (one category
  of each one-hot group dropped, so every block has full column rank), 66 / 31 columns for the
  two parties; train = adult.data rows, test = adult.test rows.
* wide: synthetic, 6,000 train + 1,000 test rows, 5,000 features in 3 parties (2000/2000/1000).

For each: objective and test log-loss per epoch, ADMM sharing vs full-batch gradient descent;
then the DP trade-off (final test log-loss vs epsilon, Theorem 1's sigma; and vs fixed sigma).
Writes JSON, a Markdown table and a PNG per dataset:

    python benchmarks/sharing_experiments.py [--adult FOLDER] [--epochs 50] [--out DIR]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from admmcheck.algorithms import run_sharing
from admmcheck.problems.datasets import bundled_adult_folder, load_adult, synthetic
from admmcheck.foundations.output import output_folder, to_json, write_atomic, write_text_atomic
from admmcheck.problems.sharing import split_columns
from admmcheck.experiments.sharing import HeldOut, privacy_tradeoff, training_curves

HERE = Path(__file__).resolve().parent


def adult(path: str):
    everything = load_adult([path], drop_first=True)
    train_rows = load_adult([str(Path(path) / "adult.data.gz")]).samples
    return everything.features, everything.labels, train_rows, (66, everything.dim - 66)


def wide(seed: int = 0):
    data = synthetic(samples=7000, dim=5000, seed=seed)
    return data.features, data.labels, 6000, (2000, 2000, 1000)


def plot(name: str, curves: dict, tradeoff: list, noiseless: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    epochs = curves["epochs"]
    axes[0].plot(epochs, curves["admm_objective"], label=f"ADMM sharing (rho={curves['rho']:g})")
    axes[0].plot(epochs, curves["gd_objective"], label="gradient descent, step 1/L")
    axes[0].set(xlabel="epoch", ylabel="training objective (1)", yscale="log", title=f"{name}: objective")
    axes[1].plot(epochs, curves["admm_test_loss"], label="ADMM sharing")
    axes[1].plot(epochs, curves["gd_test_loss"], label="gradient descent")
    axes[1].set(xlabel="epoch", ylabel="test log-loss", title=f"{name}: test log-loss")
    for a in axes[:2]:
        a.legend(fontsize=8)
    by_sigma = [r for r in tradeoff if "sigma" in r and "epsilon" not in r]
    axes[2].errorbar([r["sigma"][0] for r in by_sigma], [r["test_loss_mean"] for r in by_sigma],
                     yerr=[[r["test_loss_mean"] - r["test_loss_min"] for r in by_sigma],
                           [r["test_loss_max"] - r["test_loss_mean"] for r in by_sigma]], marker="o")
    axes[2].axhline(noiseless, color="k", ls=":", label="no noise (same row-normalised blocks)")
    axes[2].set(xscale="log", xlabel="noise sigma", ylabel="final test log-loss", title=f"{name}: DP trade-off")
    axes[2].legend(fontsize=8)
    figure.tight_layout()
    write_atomic(path, lambda stream: figure.savefig(stream, format="png", dpi=110))
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adult", default=str(bundled_adult_folder()), help="folder of the Adult files (default: the shipped ones)")
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--lam", type=float, default=1e-3)
    parser.add_argument("--rho", type=float, default=None,
                        help="ADMM penalty (default: the best final objective over 1e-6 ... 1e-2, scan recorded)")
    parser.add_argument("--out", default=str(HERE / "out" / "sharing"))
    args = parser.parse_args()
    out = output_folder(args.out, "--out")
    table = ["| dataset | parties | epochs | rho | ADMM objective | GD objective | ADMM test loss | GD test loss | seconds |",
             "|---|---|---|---|---|---|---|---|---|"]
    results = {}
    for name, (features, labels, train_rows, widths) in (("adult", adult(args.adult)), ("wide", wide())):
        start = time.perf_counter()
        train = split_columns(features[:train_rows], labels[:train_rows], widths, args.lam)
        test = HeldOut(features[train_rows:], labels[train_rows:])
        scan = {}
        for rho in ([args.rho] if args.rho else [1e-6, 1e-5, 1e-4, 1e-3, 1e-2]):
            scan[rho] = training_curves(train, test, rho, args.epochs)
        rho = min(scan, key=lambda r: scan[r]["admm_objective"][-1])
        curves = scan[rho]
        private = split_columns(features[:train_rows], labels[:train_rows], widths, args.lam, normalise_rows=True)
        test_private = HeldOut.normalised(features[train_rows:], labels[train_rows:], widths)
        tradeoff = privacy_tradeoff(private, test_private, rho, args.epochs, [0.1, 0.5, 1.0],
                                    sigmas=[1e-3, 1e-2, 1e-1, 1.0])
        noiseless = float(test_private.log_loss(run_sharing(private, rho=rho, iterations=args.epochs,
                                                            seeds=[0]).primal[0, -1, 0]))
        seconds = time.perf_counter() - start
        results[name] = {"train_rows": train_rows, "test_rows": len(labels) - train_rows, "features": list(widths),
                         "lam": args.lam, "rho": rho, "curves": curves, "noiseless_private_test_loss": noiseless, "tradeoff": tradeoff, "seconds": seconds,
                         "rho_scan": {str(r): {"final_objective": c["admm_objective"][-1],
                                               "final_test_loss": c["admm_test_loss"][-1]} for r, c in scan.items()}}
        plot(name, curves, tradeoff, noiseless, out / f"sharing_{name}.png")
        table.append(f"| {name} | {len(widths)} ({'/'.join(map(str, widths))}) | {args.epochs} | {rho:g} | "
                     f"{curves['admm_objective'][-1]:.5f} | {curves['gd_objective'][-1]:.5f} | "
                     f"{curves['admm_test_loss'][-1]:.5f} | {curves['gd_test_loss'][-1]:.5f} | {seconds:.0f} |")
        for row in tradeoff:
            label = f"epsilon {row['epsilon']}" if "epsilon" in row else f"sigma {row['sigma'][0]:g}"
            table.append(f"|   DP, {label} | sigma {row['sigma'][0]:.4g} | | | | | {row['test_loss_mean']:.5f} "
                         f"[{row['test_loss_min']:.4f}, {row['test_loss_max']:.4f}] | | |")
        table.append("|   rho scan (final objective) | " + ", ".join(f"{r:g}: {c['admm_objective'][-1]:.5f}"
                                                                   for r, c in scan.items()) + " | | | | | | | |")
        print("\n".join(table[-1 - len(tradeoff):]), flush=True)
    write_text_atomic(out / "sharing_experiments.json", to_json(results, indent=2))
    write_text_atomic(out / "sharing_experiments.md", "\n".join(table) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
