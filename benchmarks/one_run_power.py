"""Benchmark (issue 54): a one-run canary audit against the fixed-n audit of the same claim, on the same training.

The training is a Gaussian sum of 1,000-dimensional records of norm 1 released with the noise of ε = 8 (δ = 1e-5),
claimed (1, 1e-5): ``tests/canary_training.py:sum_for_eight``; and the same sum with the noise of its claim,
``sum_for_one``. For each:

* one run (and three pooled runs) of 1,000 canaries on 200 records, ``audit_canaries``: the ε bound, the Gaussian-DP
  μ bound, the training calls and the wall time;
* the fixed-n audit (``admmcheck.audit.audit``) of the pair (the 200 records, the 200 records and one more record of
  norm 1) at 2,000 and 20,000 samples per side: the ε bound, the training calls (2 × samples) and the wall time.

Both at 95 %, 2 workers. Also the ceiling of a one-run bound (all of m guesses right) against m, at δ = 0 and
δ = 1e-5, as ``epsilon_lower_bound`` computes it.

    python benchmarks/one_run_power.py [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from admmcheck.audit import AuditSettings, Pair, PrivacyClaim, Source, audit
from admmcheck.audit.inputs.neighbourhoods import Dataset, parse_domain
from admmcheck.audit.one_run import epsilon_lower_bound
from admmcheck.audit.one_run.canaries import audit_canaries
from admmcheck.foundations.output import output_folder, to_json, write_text_atomic

HERE = Path(__file__).resolve().parent
TRAINING = HERE.parent / "tests" / "canary_training.py"
CLAIM = PrivacyClaim(1.0, 1e-5)
WIDTH, RECORDS, CANARIES = 1000, 200, 1000


def records() -> np.ndarray:
    rows = np.random.default_rng(0).normal(size=(RECORDS + 1, WIDTH))
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def one_run(name: str, rows: np.ndarray, runs: int) -> dict:
    started = time.monotonic()
    result = audit_canaries(f"{TRAINING}:{name}", Dataset(rows[:RECORDS]), CANARIES, CLAIM,
                            parse_domain("unit-ball", WIDTH), runs=runs, settings=AuditSettings(workers=2))
    return {"audit": f"one-run, {runs} run{'s' if runs > 1 else ''} of {CANARIES} canaries",
            "verdict": result.verdict, "epsilon_lower_bound": result.epsilon_lower_bound,
            "mu_lower_bound": result.mu_lower_bound, "training_calls": runs + 1,
            "wall_time_s": time.monotonic() - started}


def fixed_n(name: str, rows: np.ndarray, samples: int) -> dict:
    started = time.monotonic()
    pair = Pair(rows[:RECORDS], rows)  # add-remove: one record more
    result = audit(Source(spec=f"{TRAINING}:{name}"), Source(obj=pair), CLAIM,
                   AuditSettings(samples=samples, workers=2))
    return {"audit": f"fixed-n, {samples} samples per side", "verdict": result.verdict,
            "epsilon_lower_bound": result.epsilon_lower_bound, "mu_lower_bound": None,
            "training_calls": 2 * samples, "wall_time_s": time.monotonic() - started}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(HERE / "out"))
    args = parser.parse_args(argv)
    out = output_folder(args.out, "--out")
    rows = records()
    table = {}
    for name in ("sum_for_eight", "sum_for_one"):
        table[name] = [one_run(name, rows, 1), one_run(name, rows, 3), fixed_n(name, rows, 2_000),
                       fixed_n(name, rows, 20_000)]
        for row in table[name]:
            print(name, row, file=sys.stderr)
    ceiling = {str(m): {"delta_0": epsilon_lower_bound(m, m, 0.95),
                        "delta_1e-5": epsilon_lower_bound(m, m, 0.95, 1e-5, canaries=m)}
               for m in (10, 100, 1_000, 10_000, 100_000)}
    document = {"claim": {"epsilon": CLAIM.epsilon, "delta": CLAIM.delta}, "confidence": 0.95, "workers": 2,
                "results": table, "one_run_ceiling": ceiling}
    write_text_atomic(out / "one_run_power.json", to_json(document, indent=2) + "\n")
    lines = ["# One run against many: the same Gaussian sum, the same claim (1, 1e-5)", "",
             "`python benchmarks/one_run_power.py` (2 workers, 95 %). `sum_for_eight` has the noise of epsilon = 8, "
             "`sum_for_one` that of its claim.", "",
             "| training | audit | verdict | epsilon bound | mu bound | training calls | wall time (s) |",
             "|---|---|---|---|---|---|---|"]
    for name, rows_ in table.items():
        for row in rows_:
            mu = "" if row["mu_lower_bound"] is None else f"{row['mu_lower_bound']:.3f}"
            lines.append(f"| {name} | {row['audit']} | {row['verdict']} | {row['epsilon_lower_bound']:.3f} | {mu} | "
                         f"{row['training_calls']} | {row['wall_time_s']:.1f} |")
    lines += ["", "The ceiling of a one-run bound: every one of m guesses right, 95 %.", "",
              "| m | delta = 0 | delta = 1e-5 |", "|---|---|---|"]
    lines += [f"| {m} | {values['delta_0']:.3f} | {values['delta_1e-5']:.3f} |" for m, values in ceiling.items()]
    write_text_atomic(out / "one_run_power.md", "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
