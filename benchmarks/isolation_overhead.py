"""Benchmark: what the isolation of the audited code costs: the scalar Laplace audit at 10^6 samples per side
(``audit_speed.py``'s part (a)), run interleaved with the same audit on an earlier engine, so that the machine's
drift falls on both alike. Issue 51 (the supervised workers), and issue 62 (the sandbox, a deadline for every stage,
the checks of every answer):

    git worktree add /tmp/base 69d34d7          # the engine before the supervisor (per-call SIGALRM in the worker)
    python benchmarks/isolation_overhead.py --baseline /tmp/base [--rounds 5] [--samples 1000000]
    git worktree add /tmp/base62 e2b9925        # the engine before issue 62
    python benchmarks/isolation_overhead.py --baseline /tmp/base62 --label sandboxed \
        --out benchmarks/results/sandbox_overhead.json

Each round runs ``benchmarks/audit_speed.py --only scalar`` of the baseline checkout and of this one (the order
alternating from round to round), each in a fresh process with ``PYTHONPATH`` at its own ``src`` (its workers
inherit it). Prints each run and the medians; writes ``benchmarks/out/isolation_overhead.json`` (recorded in
``benchmarks/results/`` with ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _run(tree: Path, samples: int, workers: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "scalar.json"
        subprocess.run([sys.executable, str(tree / "benchmarks" / "audit_speed.py"), "--only", "scalar", "--samples",
                        str(samples), "--workers", str(workers), "--out", str(out)], check=True,
                       env=os.environ | {"PYTHONPATH": str(tree / "src")}, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())["scalar"]


def _commit(tree: Path) -> str:
    return subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="a checkout of the engine to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--label", default="supervised", help="what this checkout is called in the result")
    parser.add_argument("--out", default=str(HERE / "out" / "isolation_overhead.json"),
                        help="JSON result (default: benchmarks/out/, untracked; the recorded one: "
                             "--out benchmarks/results/isolation_overhead.json)")
    args = parser.parse_args()
    trees = {"baseline": Path(args.baseline).resolve(), args.label: HERE.parent}
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for round_ in range(args.rounds):
        order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
        for name in order:
            result = _run(trees[name], args.samples, args.workers)
            runs[name].append(result)
            print(f"round {round_ + 1} {name:<10} {result['seconds']:6.2f} s  epsilon >= "
                  f"{result['epsilon_lower_bound']:.4f}", flush=True)
    medians = {name: statistics.median(r["seconds"] for r in runs[name]) for name in trees}
    ratio = medians[args.label] / medians["baseline"]
    print(f"medians: baseline {medians['baseline']:.2f} s, {args.label} {medians[args.label]:.2f} s: "
          f"{100 * (ratio - 1):+.1f} %")
    bounds = {name: sorted({r["epsilon_lower_bound"] for r in runs[name]}) for name in trees}
    result = {"benchmark": "isolation overhead (scalar Laplace audit)", "samples_per_side": args.samples,
              "workers": args.workers, "rounds": args.rounds,
              "commits": {name: _commit(tree) for name, tree in trees.items()},
              "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
              "seconds": {name: [r["seconds"] for r in runs[name]] for name in trees},
              "median_seconds": medians, "ratio": ratio, "epsilon_lower_bounds": bounds,
              "isolation": {name: sorted({r.get("isolation", "") for r in runs[name]}) for name in trees}}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
