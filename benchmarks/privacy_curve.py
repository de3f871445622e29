"""Benchmark: the audit's (ε, δ) curve against the exact curves of the Laplace and Gaussian mechanisms (issue 30).

The two mechanisms and claims of ``tests/test_audit_curve.py`` (one source of truth: Laplace(1) and
Gaussian(σ = 1) on the counting pair 0 / 1, vectorised), audited at ``--samples`` per side (default 10⁶)
with ``--workers`` processes. The exact δ(ε) is integrated numerically (scipy's quad_vec) and checked
against the closed forms, as in the test. Reported per mechanism, over the curve's ε grid:

* the gap exact δ(ε) − lower δ(ε): its maximum (and where), its mean over the whole grid, and its mean
  over the grid points where the exact δ(ε) >= 10⁻³ (the grid of the Gaussian runs to twice the
  claimed ε, where δ is ~0 and so is every gap);
* the stated distance D(ε) = min(exact, min over the finest ladder's lines of discretisation + interval
  widths) the test asserts the gap stays below, its maximum, and the ladder's discretisation alone;
* whether every interval of the finest ladder covers its set's true probability;
* at each δ of the grid, the curve's lower bound on ε(δ) against the exact ε(δ);
* the wall time of the audit.

    python benchmarks/privacy_curve.py [--samples 1000000] [--seed 0] [--workers 2] [--out benchmarks/out]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from admmcheck.audit import Source, audit
from admmcheck.foundations.output import output_folder, to_json, write_text_atomic

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000, help="audit samples per side")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default=str(HERE / "out"), help="folder for privacy_curve.json/.md")
    args = parser.parse_args()
    out = output_folder(args.out, "--out")
    sys.path.insert(0, str(TESTS))
    from test_audit_curve import CASES, MECHANISMS, measure  # the test's cases and measure: one source of truth

    rows = []
    lines = [f"Audits at {args.samples} samples per side, seed {args.seed}, {args.workers} workers, 95 % confidence. "
             "Gap = exact δ(ε) − the curve's lower bound, over the curve's ε grid; D = the stated distance "
             "(discretisation of the finest ladder (most thresholds) + its interval widths, or the exact δ where smaller).", "",
             "| mechanism | claim (ε, δ) | sets (ladder thresholds) | max gap (at ε) | mean gap, whole grid | "
             "mean gap where δ ≥ 1e-3 | max D | max discretisation | intervals cover | gap ≤ D | wall s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    tables = []
    for name, (mechanism, claim, law0, law1, closed) in CASES.items():
        started = time.perf_counter()
        result = audit(Source(f"{MECHANISMS}:{mechanism}"), Source(f"{MECHANISMS}:scalar_pair"), claim,
                       samples=args.samples, seed=args.seed, workers=args.workers)
        wall = time.perf_counter() - started
        m = measure(result, law0, law1, closed)
        summary = result.as_dict()["privacy_curve"]
        grid, gap = m["epsilon_grid"], m["gap"]
        worst = int(np.argmax(gap))
        large = m["exact"] >= 1e-3
        row = {"mechanism": name, "claimed_epsilon": claim.epsilon, "claimed_delta": claim.delta,
               "samples_per_side": args.samples, "seed": args.seed, "wall_s": wall, "sets": summary["sets"],
               "ladders": summary["ladders"], "level": summary["level"],
               "max_gap": float(gap[worst]), "max_gap_at_epsilon": float(grid[worst]),
               "mean_gap": float(gap.mean()), "mean_gap_where_delta_at_least_1e-3": float(gap[large].mean()),
               "max_distance": float(m["distance"].max()), "max_discretisation": float(m["discretisation"].max()),
               "intervals_cover": bool(m["cover"]), "gap_within_distance": bool(np.all(gap <= m["distance"] + 1e-12)),
               "below_exact_everywhere": bool(np.all(m["lower"] <= m["exact"])),
               "epsilon_grid": grid, "exact_delta": m["exact"], "delta_lower_bound": m["lower"],
               "distance": m["distance"], "delta_grid": m["delta_grid"], "epsilon_lower_bound": m["epsilon_bound"],
               "exact_epsilon": m["exact_epsilon"]}
        rows.append(row)
        ladder = ", ".join(str(entry["thresholds"]) for entry in summary["ladders"])
        lines.append(f"| {name} | ({claim.epsilon:.4g}, {claim.delta:g}) | {summary['sets']} ({ladder}) | "
                     f"{row['max_gap']:.4f} ({row['max_gap_at_epsilon']:.3f}) | {row['mean_gap']:.4f} | "
                     f"{row['mean_gap_where_delta_at_least_1e-3']:.4f} | {row['max_distance']:.4f} | "
                     f"{row['max_discretisation']:.2e} | {'yes' if row['intervals_cover'] else 'NO'} | "
                     f"{'yes' if row['gap_within_distance'] else 'NO'} | {wall:.1f} |")
        tables += ["", f"ε(δ), {name}: the curve's lower bound against the exact ε(δ)", "",
                   "| δ | lower bound on ε(δ) | exact ε(δ) |", "|---|---|---|"]
        tables += [f"| {d:g} | {b:.4f} | {e:.4f} |" for d, b, e in zip(m["delta_grid"], m["epsilon_bound"],
                                                                       m["exact_epsilon"])]
        print(lines[-1], flush=True)
    write_text_atomic(out / "privacy_curve.json", to_json({"workers": args.workers, "machine": platform.platform(),
                                                            "cpus": os.cpu_count(), "results": rows}, indent=1) + "\n")
    write_text_atomic(out / "privacy_curve.md", "\n".join(lines + tables) + "\n")


if __name__ == "__main__":
    main()
