"""Benchmark runner of issue 19: side by side, in one process run, JSON plus a Markdown table
(medians of repeats, min/max, peak memory).

(a) PP transcripts/s (N=5 ring, d=5, B_i=50, T=20, eta(t)=0.5*1.03^(t-1), alpha(t)=5*1.03^(t-1)):
    the batched engine (one process; and ``admmcheck.solving.parallel.run_blocks`` on every core) against
    the straightforward loop a new user writes — per trial, per t, per node one
    ``scipy.optimize.minimize`` (BFGS) of the objective (24) as printed — and a stronger loop,
    ``scipy.optimize.root`` on (24)'s stationarity condition with its Hessian. ``minimize`` stops
    ~1e-9 short of the minimiser (BFGS, Newton-CG and trust-exact alike: the objective's value
    cannot resolve smaller steps), so only the root loop can confirm the transcripts to 1e-8 — on the same seeds
    (f(0) and noise drawn by the same code), every process with one BLAS thread; the
    transcripts must agree to 1e-8;
(b) one noiseless M-ADMM run on Adult (N=5 ring, eta = theta = 1, to relative objective gap 1e-6)
    against one CVXPY solve of the centralized problem;
(c) N=100 nodes on Adult, even and uneven splits, T=100 (M-ADMM, eta = theta = 0.5; random graph, p = 0.05);
(d) black-box audits end to end at 10^6 samples per side: a scalar Laplace mechanism written
    as a plain per-call function, and ``admmcheck audit pp`` (wall time, peak memory of the main
    process and the largest worker; ``benchmarks/audit_speed.py`` adds a 500-number release);
(e) the exact-conditions path: certified minimal gamma on ring:30 and complete:12 with sympy's
    pure-Python and python-flint ground types, and a 30 x 30 exact LDL^T against flint
    (``benchmarks/exact_conditions.py``).

    python benchmarks/performance.py [--sections a,b,c,d,e] [--pp-trials 100000] [--loop-trials 20]
                                     [--audit-samples 1000000] [--repeats 3] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from scipy import optimize
from threadpoolctl import threadpool_limits

from admmcheck.algorithms import run_madmm
from admmcheck.algorithms.pp import run_pp
from admmcheck.problems.datasets import bundled_adult, make_problem, synthetic, uneven_sizes
from admmcheck.problems.networks import ring
from admmcheck.solving.noise import gamma_noise_table
from admmcheck.solving.oracle import centralized_optimum
from admmcheck.foundations.output import output_folder, to_json, write_text_atomic
from admmcheck.audit.running.limits import available_cores
from admmcheck.solving.parallel import concatenate_runs, run_blocks
from admmcheck.solving.runs import initial_state, trial_seeds
from admmcheck.solving.schedules import GeometricSchedule, schedule_table

HERE = Path(__file__).resolve().parent
PP = dict(penalty=GeometricSchedule(0.5, 1.03), theta=0.5, alpha=GeometricSchedule(5.0, 1.03), iterations=20)


def _stats(values: list[float]) -> dict[str, float]:
    return {"median": float(np.median(values)), "min": float(min(values)), "max": float(max(values))}


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pp_by_loop(problem, network, seeds, penalty, theta, alpha, iterations, method: str = "minimize") -> np.ndarray:
    """The straightforward PP, per trial, t and node: ``minimize`` BFGS on (24) as printed, or
    ``root``: scipy's root of (24)'s gradient with its Hessian; primal (S, T+1, N, d)."""
    start = initial_state(problem, seeds)
    eta = schedule_table("penalty", penalty, iterations, problem.nodes)
    noise = gamma_noise_table(start.rngs, schedule_table("alpha", alpha, iterations, problem.nodes), problem.dim)
    neighbours = [np.flatnonzero(row) for row in network.adjacency]
    out = np.empty((len(seeds), iterations + 1, problem.nodes, problem.dim))
    for s in range(len(seeds)):
        f = start.f[s].copy()
        lam = np.zeros_like(f)
        out[s, 0] = f
        for t in range(iterations):
            new = np.empty_like(f)
            for i, (x, y) in enumerate(zip(problem.features, problem.labels)):
                targets = [(f[i] + f[j]) / 2 for j in neighbours[i]]
                C_B, reg = problem.C / len(y), problem.rho / problem.nodes

                shift = eta[t, i] * sum(noise[s, t, i] - m for m in targets)
                curvature = reg + 2 * eta[t, i] * len(targets)

                def gradient(v, x=x, y=y, i=i, shift=shift, curvature=curvature):  # of (24)
                    return -C_B * x.T @ (y / (1.0 + np.exp(y * (x @ v)))) + curvature * v + 2 * lam[i] + 2 * shift

                def hessian(v, x=x, y=y, curvature=curvature):
                    p = 1.0 / (1.0 + np.exp(-y * (x @ v)))
                    return C_B * (x.T * (p * (1 - p))) @ x + curvature * np.eye(len(v))

                if method == "root":
                    new[i] = optimize.root(gradient, f[i], jac=hessian, method="hybr", options={"xtol": 1e-14}).x
                    continue

                def printed(v, x=x, y=y, i=i, targets=targets):  # (24): O + 2 lam^T f + eta sum ||f + eps - m||^2
                    value = C_B * np.sum(np.logaddexp(0.0, -y * (x @ v))) + 0.5 * reg * v @ v + 2 * lam[i] @ v
                    return value + eta[t, i] * sum(np.sum((v + noise[s, t, i] - m) ** 2) for m in targets)

                new[i] = optimize.minimize(printed, f[i], jac=gradient, method="BFGS", options={"gtol": 1e-11}).x
            f = new
            lam = lam + 0.5 * theta * np.stack([sum(f[i] - f[j] for j in neighbours[i]) for i in range(len(f))])
            out[s, t + 1] = f
    return out


def section_a(trials: int, loop_trials: int, repeats: int) -> dict:
    problem = make_problem(synthetic(250, 5, seed=0), 5, C=1.0, rho=1.0, seed=0)
    network = ring(5)
    seeds = trial_seeds(0, trials)
    out: dict = {"setting": "N=5 ring, d=5, B_i=50, T=20, eta(t)=0.5*1.03^(t-1), alpha(t)=5*1.03^(t-1); "
                            "one BLAS thread per process"}
    with threadpool_limits(1):
        one_times, single = [], seeds[:10_000]
        for _ in range(repeats):  # blocks of 1,000 trials in this process (cache-sized, measured best)
            started = time.perf_counter()
            batched = concatenate_runs(list(run_blocks(run_pp, problem, network, seeds=single, workers=1, **PP)))
            one_times.append(time.perf_counter() - started)
        out["batched_one_process"] = {"trials": len(single), "seconds": _stats(one_times),
                                      "transcripts_per_s": len(single) / float(np.median(one_times))}
        for method in ("minimize", "root"):
            times, loop = [], None
            for _ in range(repeats):
                started = time.perf_counter()
                loop = pp_by_loop(problem, network, seeds[:loop_trials], **PP, method=method)
                times.append(time.perf_counter() - started)
            rate = loop_trials / float(np.median(times))
            out[f"loop_{method}"] = {"trials": loop_trials, "seconds": _stats(times), "transcripts_per_s": rate,
                                     "max_abs_difference_to_batched":
                                         float(np.abs(batched.primal[:loop_trials] - loop).max()),
                                     "speedup_batched_one_process":
                                         out["batched_one_process"]["transcripts_per_s"] / rate}
    workers = available_cores()
    many_times = []
    for _ in range(repeats):
        started = time.perf_counter()
        count = sum(run.trials for run in run_blocks(run_pp, problem, network, seeds=seeds, workers=workers, **PP))
        many_times.append(time.perf_counter() - started)
    out["batched_all_cores"] = {"trials": count, "workers": workers, "seconds": _stats(many_times),
                                "transcripts_per_s": count / float(np.median(many_times))}
    return out


def section_b(repeats: int, etas=(0.1, 0.3, 1.0)) -> dict:
    """CVXPY against M-ADMM (eta = theta) to relative gap 1e-6; the time of M-ADMM counts every
    attempt (T doubled from 25 until the gap is reached), for each eta of ``etas``."""
    data = bundled_adult()
    problem = make_problem(data, 5, C=1.0, rho=1.0, seed=0)
    network = ring(5)
    cvx_times = []
    for _ in range(repeats):
        started = time.perf_counter()
        optimum = centralized_optimum(problem)
        cvx_times.append(time.perf_counter() - started)
    out = {"setting": f"Adult {data.features.shape[0]} x {data.features.shape[1]}, N=5 ring, eta = theta",
           "cvxpy_seconds": _stats(cvx_times), "madmm": {}}
    for eta in etas:
        times, needed, gap = [], None, None
        for _ in range(repeats):
            started = time.perf_counter()
            iterations = 25
            while iterations <= 3200:
                run = run_madmm(problem, network, penalty=eta, theta=eta, iterations=iterations, seeds=[0],
                                reference=optimum)
                gaps = np.abs(run.objective_gap[0])
                hit = np.flatnonzero(gaps <= 1e-6)
                if hit.size:
                    needed, gap = int(hit[0]), float(gaps[hit[0]])
                    break
                iterations *= 2
            times.append(time.perf_counter() - started)
        out["madmm"][f"{eta:g}"] = {"seconds_to_gap_1e-6": _stats(times), "iterations_to_gap": needed,
                                    "gap_reached": gap}
    out["peak_mib"] = _peak_mib()
    return out


def section_c(repeats: int) -> dict:
    from admmcheck.problems.networks import random_connected

    data = bundled_adult()
    network = random_connected(100, seed=0, edge_probability=0.05)
    out = {}
    uneven = uneven_sizes(data.features.shape[0], 100, seed=0, min_size=20)
    for name, sizes in (("even", None), ("uneven", uneven)):
        problem = make_problem(data, 100, C=1.0, rho=1.0, seed=0, sizes=sizes)
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            run = run_madmm(problem, network, penalty=0.5, theta=0.5, iterations=100, seeds=[0])
            times.append(time.perf_counter() - started)
        out[name] = {"sizes_min_max": [min(problem.sizes), max(problem.sizes)], "seconds": _stats(times),
                     "average_loss_T": float(problem.average_loss(run.primal[0, -1])),
                     "consensus_spread_T": float(np.ptp(run.primal[0, -1], axis=0).max())}
    out["peak_mib"] = _peak_mib()
    return out


def section_d(samples: int) -> dict:
    """``benchmarks/audit_speed.py`` for the scalar and the PP audit, each in a fresh process (so
    that the peak memory is the audit's own)."""
    out_file = HERE / "out" / "audit_speed_from_performance.json"
    output_folder(out_file.parent, "--out")
    subprocess.run([sys.executable, str(HERE / "audit_speed.py"), "--samples", str(samples), "--transcripts", "0",
                    "--pp", str(samples), "--out", str(out_file)], check=True, capture_output=True)
    return json.loads(out_file.read_text())


def section_e(repeats: int) -> dict:
    out_file = HERE / "out" / "exact_conditions_from_performance.json"
    output_folder(out_file.parent, "--out")
    subprocess.run([sys.executable, str(HERE / "exact_conditions.py"), "--repeats", str(repeats), "--out",
                    str(out_file)], check=True, capture_output=True)
    return json.loads(out_file.read_text())


def markdown(result: dict) -> str:
    lines = ["| item | measured | median s (min-max) |", "|---|---|---|"]
    a = result.get("a")
    if a:
        for key in ("loop_minimize", "loop_root", "batched_one_process", "batched_all_cores"):
            row = a[key]
            s = row["seconds"]
            extra = (f"; batched is {row['speedup_batched_one_process']:.0f}x faster, max abs diff "
                     f"{row['max_abs_difference_to_batched']:.1e}" if key.startswith("loop") else "")
            lines.append(f"| (a) PP {key.replace('_', ' ')} | {row['trials']} transcripts, "
                         f"{row['transcripts_per_s']:.1f}/s{extra} | {s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f}) |")
    b = result.get("b")
    if b:
        s = b["cvxpy_seconds"]
        lines.append(f"| (b) CVXPY (Clarabel), one solve | {b['setting']}; peak {b['peak_mib']:.0f} MiB | "
                     f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f}) |")
        for eta, row in b["madmm"].items():
            s = row["seconds_to_gap_1e-6"]
            reached = (f"gap {row['gap_reached']:.1e} at t = {row['iterations_to_gap']}" if row["iterations_to_gap"]
                       is not None else "gap 1e-6 not reached in 3,200 iterations")
            lines.append(f"| (b) M-ADMM eta = theta = {eta} to gap 1e-6 | {reached} | "
                         f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f}) |")
    c = result.get("c")
    if c:
        for key in ("even", "uneven"):
            s = c[key]["seconds"]
            lines.append(f"| (c) Adult N=100 {key}, T=100 | sizes {c[key]['sizes_min_max']}, loss "
                         f"{c[key]['average_loss_T']:.4f} | {s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f}) |")
    d = result.get("d")
    if d:
        scalar, pp = d["scalar"], d["pp"]
        lines.append(f"| (d) audit, scalar Laplace, {scalar['samples_per_side']} per side, {scalar['workers']} workers | "
                     f"epsilon >= {scalar['epsilon_lower_bound']:.4f} (true 1); peak {scalar['peak_main_mib']:.0f} MiB | "
                     f"{scalar['seconds']:.2f} |")
        lines.append(f"| (d) admmcheck audit pp, {pp['samples_per_side']} per side ({pp['numbers_per_sample']} numbers) | "
                     f"epsilon >= {pp['epsilon_lower_bound']:.4f} vs beta {pp['beta']:.4f}; peak {pp['peak_main_mib']:.0f} "
                     f"MiB main, {pp['peak_worker_mib']:.0f} MiB worker | {pp['seconds']:.2f} |")
    e = result.get("e")
    if e:
        for key, row in e.items():
            if key.startswith("minimal_gamma"):
                s = row["seconds"]
                lines.append(f"| (e) {key} | {row['status']}, interval {row['interval']} | "
                             f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f}) |")
        for key in ("ldlt_30", "flint_30"):
            row = e[key]
            if isinstance(row, dict):
                s = row["seconds"]
                lines.append(f"| (e) {key} | positive: {row['positive']} | {s['median']:.4f} ({s['min']:.4f}-{s['max']:.4f}) |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", default="a,b,c,d,e")
    parser.add_argument("--audit-samples", type=int, default=1_000_000)
    parser.add_argument("--pp-trials", type=int, default=100_000)
    parser.add_argument("--loop-trials", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(HERE / "out" / "performance"))
    args = parser.parse_args()
    folder = output_folder(args.out, "--out")
    result: dict = {"machine": {"python": platform.python_version(), "numpy": np.__version__,
                                "cpus": available_cores()}}
    sections = set(args.sections.split(","))
    if "a" in sections:
        result["a"] = section_a(args.pp_trials, args.loop_trials, args.repeats)
        print(markdown(result), flush=True)
    if "b" in sections:
        result["b"] = section_b(args.repeats)
        print(markdown(result), flush=True)
    if "c" in sections:
        result["c"] = section_c(args.repeats)
    if "d" in sections:
        result["d"] = section_d(args.audit_samples)
    if "e" in sections:
        result["e"] = section_e(args.repeats)
    write_text_atomic(folder / "performance.json", to_json(result, indent=1))
    write_text_atomic(folder / "performance.md", markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
