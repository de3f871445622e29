"""Benchmark: one batched PP run (private M-ADMM, Algorithm 1) of 10,000 trials.

Setting of the private-mechanisms issue: N=5 nodes (ring), d=5, B_i=50, T=20, theta=0.5,
eta(t)=0.5*1.03^(t-1), alpha(t)=5*1.03^(t-1). Every trial's full transcript is recorded:
f_i(t), lambda_i(t) for t=0..T and the noise eps_i(t). Prints a table and writes JSON:

    python benchmarks/pp_batch.py [--trials 10000] [--repeats 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np

from admmcheck.algorithms.pp import run_pp
from admmcheck.problems.datasets import make_problem, synthetic
from admmcheck.foundations.output import output_file, output_folder, to_json, write_text_atomic
from admmcheck.problems.networks import ring
from admmcheck.solving.runs import trial_seeds
from admmcheck.solving.schedules import GeometricSchedule


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(Path(__file__).parent / "out" / "pp_batch.json"),
                        help="JSON result (default: benchmarks/out/, untracked; the recorded figures are "
                             "benchmarks/results/pp_batch.json, replaced only when named here)")
    args = parser.parse_args()
    output_folder(Path(args.out).parent, "--out")
    output_file(args.out, "--out")  # fail before the timing, not after it

    problem = make_problem(synthetic(250, 5, seed=0), 5, C=1.0, rho=1.0, seed=0)
    network = ring(5)
    seeds = trial_seeds(0, args.trials)
    kwargs = dict(penalty=GeometricSchedule(0.5, 1.03), theta=0.5, alpha=GeometricSchedule(5.0, 1.03), iterations=20)

    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        run = run_pp(problem, network, seeds=seeds, **kwargs)
        times.append(time.perf_counter() - start)
    transcript_bytes = sum(a.nbytes for a in (run.primal, run.dual, run.extras["noise"]))
    finite = bool(np.all(np.isfinite(run.primal)))
    print(f"PP, {args.trials} trials, N=5, d=5, B_i=50, T=20 (full transcripts: {transcript_bytes / 2**20:.1f} MiB)")
    print(f"{'repeat':<8} {'seconds':>9}")
    for k, seconds in enumerate(times):
        print(f"{k:<8} {seconds:>9.3f}")
    print(f"median {np.median(times):.3f} s; {np.median(times) / args.trials * 1e6:.0f} us per trial; "
          f"primal shape {run.primal.shape}; all finite: {finite}")
    result = {
        "benchmark": "PP batch with full transcripts",
        "setting": {"nodes": 5, "dim": 5, "samples_per_node": 50, "iterations": 20, "trials": args.trials},
        "seconds": {"min": min(times), "median": float(np.median(times)), "max": max(times)},
        "transcript_mib": transcript_bytes / 2**20,
        "primal_shape": list(run.primal.shape),
        "all_finite": finite,
        "repeats": args.repeats,
        "machine": {"python": platform.python_version(), "numpy": np.__version__},
    }
    write_text_atomic(args.out, to_json(result, indent=2))


if __name__ == "__main__":
    main()
