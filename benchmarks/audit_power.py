"""Benchmark: how many samples per side the auditor needs to flag each broken mechanism (issue 15).

The broken mechanisms of ``tests/mechanisms.py`` (the same list as the power test in
``tests/test_audit.py``) are audited at S = 1,000, 3,000, 10,000, 30,000 and 100,000 samples per
side (95 %, seed 7, as the test); the table gives the smallest S that gives a violation and the
bound reached at 10^5 beside the true ε where it is known in closed form.

    python benchmarks/audit_power.py [--out DIR]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from admmcheck.audit import PrivacyClaim, Source, audit
from admmcheck.foundations.output import output_folder, to_json, write_text_atomic

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
SIZES = (1_000, 3_000, 10_000, 30_000, 100_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(HERE / "out"), help="folder for audit_power.json/.md")
    args = parser.parse_args()
    out = output_folder(args.out, "--out")
    sys.path.insert(0, str(TESTS))
    from test_audit import BROKEN  # the test's list: one source of truth

    rows = []
    lines = ["| mechanism | claim (ε, δ) | true ε | smallest S flagged | ε_lb at 1e5 | event family at 1e5 |",
             "|---|---|---|---|---|---|"]
    for mechanism, neighbours, epsilon, delta, true_epsilon in BROKEN:
        found, bounds = None, {}
        for size in SIZES:
            result = audit(Source(f"{TESTS / 'mechanisms.py'}:{mechanism}"),
                           Source(f"{TESTS / 'mechanisms.py'}:{neighbours}"), PrivacyClaim(epsilon, delta),
                           samples=size, seed=7, workers=2)
            bounds[size] = result.epsilon_lower_bound
            if found is None and result.verdict == "violation":
                found = size
        true = "unknown" if true_epsilon is None else ("∞" if math.isinf(true_epsilon) else f"{true_epsilon:g}")
        rows.append({"mechanism": mechanism, "claim": [epsilon, delta], "true_epsilon": true,
                     "smallest_samples_flagged": found, "bounds": bounds, "family_at_1e5": result.family})
        lines.append(f"| {mechanism} | ({epsilon:g}, {delta:g}) | {true} | {found if found else 'not at 1e5'} | "
                     f"{bounds[SIZES[-1]]:.4g} | {result.family} |")
        print(lines[-1], flush=True)
    write_text_atomic(out / "audit_power.md", "\n".join(lines) + "\n")
    write_text_atomic(out / "audit_power.json", to_json({"sizes": list(SIZES), "seed": 7, "confidence": 0.95,
                                                         "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
