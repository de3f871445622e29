"""Benchmark: delta-type leaks, a large privacy loss on an event of probability 1e-3 or 1e-4 under one
dataset only (issue 30: "leaks that live in events of probability 1e-3 to 1e-4 matter most for real
code").

The mechanisms are ``laplace_rare_leak`` and ``laplace_rarer_leak`` of ``tests/mechanisms.py``: the
Laplace mechanism (epsilon = 1) on the pair (0, 1), except that on data 1 it releases, with probability
p = 1e-3 (1e-4), a uniform draw from [8, 9] ([12, 13]); the claim is (1, 1e-5), which they break by
100 (10) times its delta. Each is audited in the fixed-n mode at S = 1e5, 3e5 and 1e6 samples per side
(95 %, seeds 0-4); the table gives how many seeds flag it and the median bound, beside the
event-tester ceiling at S (``dpsniper_ceiling.py``'s yardstick: the bound the exactly optimal event
{L >= t} gives with its counts at their expectations, 2.5 % on each interval, no selection split;
``dpsniper_ceiling.ceiling`` with the claim's delta), on the exact law: the output line cut into cells
0.01 wide from -60 to 60 (the leak's interval edges among them; the two outer cells reach to infinity)
with Laplace and uniform masses in closed form, L the log-ratio of each cell's masses
(``dpsniper_ceiling.law_from_cells``).

    python benchmarks/rare_leak.py [--seeds 0,1,2,3,4] [--out DIR]

writes DIR/rare_leak.json and DIR/rare_leak.md (default DIR benchmarks/out).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from admmcheck.audit import PrivacyClaim, Source, audit
from admmcheck.foundations.output import output_folder, to_json, write_text_atomic

from dpsniper_ceiling import Law, ceiling, lap_mass, law_from_cells  # the event-tester ceiling, Laplace masses

HERE = Path(__file__).resolve().parent
MECHANISMS = HERE.parent / "tests" / "mechanisms.py"
CLAIM = PrivacyClaim(1.0, 1e-5)
SIZES = (100_000, 300_000, 1_000_000)
CASES = {"laplace_rare_leak": (1e-3, 8.0), "laplace_rarer_leak": (1e-4, 12.0)}  # (p, start of the leak's interval)


def cell_masses(p: float, start: float, width: float = 0.01, reach: float = 60.0) -> tuple[np.ndarray, np.ndarray]:
    """Masses of the cells under data 0 (Laplace at 0) and data 1 (Laplace at 1, or with probability p
    uniform on [start, start + 1]); the two outer cells reach to -inf and +inf."""
    edges = np.unique(np.concatenate([np.round(np.arange(-reach, reach + width / 2, width), 9), [start, start + 1]]))
    edges = np.concatenate([[-np.inf], edges, [np.inf]])
    lo, hi = edges[:-1], edges[1:]
    leak = np.clip(np.minimum(hi, start + 1) - np.maximum(lo, start), 0, None)
    return lap_mass(lo, hi, 1.0), (1 - p) * lap_mass(lo - 1, hi - 1, 1.0) + p * leak


def exact_law(p: float, start: float) -> Law:
    """The law of the privacy loss L over the :func:`cell_masses` (binned 1e-5 wide)."""
    return law_from_cells(*cell_masses(p, start), 1e-5)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2,3,4")
    parser.add_argument("--out", default=str(HERE / "out"), help="folder for rare_leak.json/.md")
    args = parser.parse_args()
    out = output_folder(args.out, "--out")
    seeds = [int(s) for s in args.seeds.split(",")]
    rows = []
    lines = ["| mechanism | leak probability | samples per side | flagged (of seeds) | median ε_lb | bounds per seed "
             "| ceiling | median / ceiling | seconds per audit |", "|---|---|---|---|---|---|---|---|---|"]
    for name, (p, start) in CASES.items():
        law = exact_law(p, start)
        for size in SIZES:
            bounds, flagged, start_time = [], 0, time.perf_counter()
            for seed in seeds:
                result = audit(Source(f"{MECHANISMS}:{name}"), Source(f"{MECHANISMS}:scalar_pair"), CLAIM,
                               samples=size, seed=seed, workers=2)
                bounds.append(result.epsilon_lower_bound)
                flagged += result.verdict == "violation"
            seconds = (time.perf_counter() - start_time) / len(seeds)
            best = ceiling(law, size, 0.05, CLAIM.delta)
            median = statistics.median(bounds)
            rows.append({"mechanism": name, "leak_probability": p, "samples_per_side": size, "seeds": seeds,
                         "bounds": bounds, "flagged": flagged, "median_bound": median, "ceiling": best,
                         "max_loss": law.eps,
                         "seconds_per_audit": seconds})
            lines.append(f"| {name} | {p:g} | {size:.0e} | {flagged} of {len(seeds)} | {median:.3f} | "
                         f"{', '.join(f'{b:.2f}' for b in bounds)} | {best['value']:.3f} | "
                         f"{median / best['value']:.2f} | {seconds:.1f} |")
            print(lines[-1], flush=True)
            write_text_atomic(out / "rare_leak.md", "\n".join(lines) + "\n")
            write_text_atomic(out / "rare_leak.json", to_json({"claim": [CLAIM.epsilon, CLAIM.delta], "confidence": 0.95,
                                                               "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
