"""Benchmark (issue 19 (e)): the exact-conditions path against python-flint, if installed.

(1) the certified minimal gamma of R-ADMM's Theorem III.1 on ring:30 and complete:12 (eta = 1/2, M_i = 1/4)
    (``admmcheck conditions radmm --graph ... --find-gamma``), end to end;
    with sympy's pure-Python ground types and with python-flint's (sympy uses flint for its
    integer and rational domains when it is installed: ``SYMPY_GROUND_TYPES``), each in a fresh
    process;
(2) the exact LDL^T decision of a 30 x 30 rational symmetric positive definite matrix
    (``decide_positive``, Python ``fractions``) against python-flint deciding the same by its
    leading principal minors (``fmpq_mat.det``, exact rationals in C) — the same verdict, and
    whether flint is fast enough to earn a dependency.

    python benchmarks/exact_conditions.py [--repeats 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

from admmcheck.conditions.certificates import decide_positive
from admmcheck.mechanisms.conditions import RadmmConditions, evaluate_radmm
from admmcheck.foundations.output import output_file, output_folder, to_json, write_text_atomic

HERE = Path(__file__).resolve().parent


def _stats(values):
    return {"median": float(np.median(values)), "min": float(min(values)), "max": float(max(values))}


def rational_spd(n: int, seed: int = 0) -> list[list[Fraction]]:
    """A random SPD matrix with small rational entries: A Aᵀ + I, A with entries k/7, |k| <= 5."""
    a = np.random.default_rng(seed).integers(-5, 6, size=(n, n))
    m = a @ a.T + 7 * 7 * np.eye(n, dtype=int)
    return [[Fraction(int(m[i, j]), 49) for j in range(n)] for i in range(n)]


def flint_positive(matrix: list[list[Fraction]]) -> bool:
    """Sylvester's criterion with python-flint: every leading principal minor > 0."""
    import flint

    n = len(matrix)
    m = flint.fmpq_mat(n, n, [flint.fmpq(x.numerator, x.denominator) for row in matrix for x in row])
    return all(flint.fmpq_mat(k, k, [m[i, j] for i in range(k) for j in range(k)]).det() > 0 for k in range(1, n + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(HERE / "out" / "exact_conditions.json"))
    parser.add_argument("--gamma", help=argparse.SUPPRESS)  # internal: time one minimal-gamma search, print JSON
    args = parser.parse_args()
    if args.gamma:
        from sympy.external.gmpy import GROUND_TYPES

        started = time.perf_counter()
        out = evaluate_radmm(RadmmConditions(graph=args.gamma, lipschitz=("1/4",), find_gamma=True))
        interval = out.get("gamma_interval")
        print(json.dumps({"seconds": time.perf_counter() - started, "status": out["status"], "ground_types":
                          GROUND_TYPES, "interval": None if interval is None else [interval["lo"], interval["hi"]]}))
        return
    output_folder(Path(args.out).parent, "--out")
    output_file(args.out, "--out")
    result: dict = {"machine": {"python": platform.python_version()}}
    try:
        import flint
        kinds = ("python", "flint")
    except ImportError:
        flint, kinds = None, ("python",)
    for kind in kinds:
        for graph in ("ring:30", "complete:12"):
            runs = [json.loads(subprocess.run([sys.executable, __file__, "--gamma", graph], check=True, text=True,
                                              capture_output=True, env=os.environ | {"SYMPY_GROUND_TYPES": kind}
                                              ).stdout) for _ in range(args.repeats)]
            result[f"minimal_gamma_{graph}_{kind}"] = runs[0] | {"seconds": _stats([r["seconds"] for r in runs])}
            print(kind, graph, result[f"minimal_gamma_{graph}_{kind}"], flush=True)
    matrix = rational_spd(30)
    times = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        ours = decide_positive(matrix).holds
        times.append(time.perf_counter() - started)
    result["ldlt_30"] = {"seconds": _stats(times), "positive": ours}
    if flint is None:
        result["flint_30"] = "python-flint not installed"
    else:
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            theirs = flint_positive(matrix)
            times.append(time.perf_counter() - started)
        result["flint_30"] = {"seconds": _stats(times), "positive": theirs, "version": flint.__version__}
    print(result["ldlt_30"], result["flint_30"])
    write_text_atomic(args.out, to_json(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
