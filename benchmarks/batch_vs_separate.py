"""Benchmark: one batched M-ADMM run of S trials vs S separate runs with the same seeds.

Setting of the foundation issue: N=5 nodes (ring), d=5, B_i=50, T=20, theta=0.5,
eta_i(t)=0.5*1.01^(t-1), S=1000 trials. Prints a table and writes JSON:

    python benchmarks/batch_vs_separate.py [--trials 1000] [--repeats 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np

from admmcheck.algorithms import run_madmm
from admmcheck.problems.datasets import make_problem, synthetic
from admmcheck.foundations.output import output_file, output_folder, to_json, write_text_atomic
from admmcheck.problems.networks import ring
from admmcheck.solving.runs import trial_seeds
from admmcheck.solving.schedules import GeometricSchedule


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(Path(__file__).parent / "out" / "batch_vs_separate.json"),
                        help="JSON result (default: benchmarks/out/, untracked; the recorded figures are "
                             "benchmarks/results/batch_vs_separate.json, replaced only when named here)")
    args = parser.parse_args()
    output_folder(Path(args.out).parent, "--out")
    output_file(args.out, "--out")  # fail before the timing, not after it

    problem = make_problem(synthetic(250, 5, seed=0), 5, C=1.0, rho=1.0, seed=0)
    network = ring(5)
    schedule = GeometricSchedule(0.5, 1.01)
    seeds = trial_seeds(0, args.trials)
    kwargs = dict(penalty=schedule, theta=0.5, iterations=20)

    batch_times, separate_times = [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        batch = run_madmm(problem, network, seeds=seeds, **kwargs)
        batch_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        separate = [run_madmm(problem, network, seeds=[s], **kwargs) for s in seeds]
        separate_times.append(time.perf_counter() - start)
    difference = max(float(np.max(np.abs(batch.primal[k] - r.primal[0]))) for k, r in enumerate(separate))

    result = {
        "benchmark": "madmm batch vs separate runs",
        "setting": {"nodes": 5, "dim": 5, "samples_per_node": 50, "iterations": 20, "trials": args.trials},
        "batch_s": {"min": min(batch_times), "median": float(np.median(batch_times)), "max": max(batch_times)},
        "separate_s": {"min": min(separate_times), "median": float(np.median(separate_times)), "max": max(separate_times)},
        "speedup_median": float(np.median(separate_times) / np.median(batch_times)),
        "max_abs_difference": difference,
        "repeats": args.repeats,
        "machine": {"python": platform.python_version(), "processor": platform.processor(), "numpy": np.__version__},
    }
    print(f"{'variant':<28} {'min s':>8} {'median s':>9} {'max s':>8}")
    for name, times in (("batch (1 call, S trials)", batch_times), ("separate (S calls)", separate_times)):
        print(f"{name:<28} {min(times):>8.3f} {np.median(times):>9.3f} {max(times):>8.3f}")
    print(f"speed-up (median): {result['speedup_median']:.1f}x; max |batch - separate| = {difference:.1e}")
    write_text_atomic(args.out, to_json(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
