"""Benchmark: an Octave mechanism against the same mechanism in Python (issue 29).

The mechanism is sum(data) + Laplace(1) on the pair of tests/octave/neighbours.m, audited end to
end (``admmcheck.audit.audit``, claim epsilon = 1) in three forms:

* ``octave per call``: tests/octave/laplace.m, one Octave call per sample;
* ``octave vectorised``: tests/octave/laplace_vec.m with laplace_vec_batch.m (n rows per call);
* ``python per call``: tests/octave/laplace_python.py.

For each: samples per side, wall time, samples per second (both sides, all workers) and the bound.

    python benchmarks/octave_speed.py [--samples 20000] [--vectorised 1000000] [--workers 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

from admmcheck.audit import PrivacyClaim, Source, audit
from admmcheck.audit.running.octave import octave_command
from admmcheck.foundations.output import output_folder, to_json, write_text_atomic

HERE = Path(__file__).resolve().parent
OCTAVE = HERE.parent / "tests" / "octave"


def _run(mechanism: str, samples: int, workers: int) -> dict[str, object]:
    started = time.perf_counter()
    result = audit(Source(mechanism), Source(f"{OCTAVE / 'neighbours.m'}:neighbours"), PrivacyClaim(1.0),
                   samples=samples, workers=workers, seed=0)
    wall = time.perf_counter() - started
    return {"mechanism": mechanism.rpartition("/")[2], "samples_per_side": samples, "wall_s": round(wall, 2),
            "samples_per_s": round(2 * samples / wall), "epsilon_lower_bound": round(result.epsilon_lower_bound, 4),
            "verdict": result.verdict}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000, help="per side, for the per-call forms")
    parser.add_argument("--vectorised", type=int, default=1_000_000, help="per side, for the vectorised form")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--out", default=str(HERE / "out" / "octave_speed.json"))
    args = parser.parse_args()
    if octave_command() is None:
        raise SystemExit("GNU Octave is needed: apt-get install octave")
    output_folder(Path(args.out).parent, "--out")
    rows = {
        "octave per call": _run(f"{OCTAVE / 'laplace.m'}:laplace", args.samples, args.workers),
        "octave vectorised": _run(f"{OCTAVE / 'laplace_vec.m'}:laplace_vec", args.vectorised, args.workers),
        "python per call": _run(f"{OCTAVE / 'laplace_python.py'}:laplace", args.samples, args.workers),
        "python per call, as many samples as vectorised": _run(f"{OCTAVE / 'laplace_python.py'}:laplace",
                                                                args.vectorised, args.workers),
    }
    for name, row in rows.items():
        print(f"{name:<48} {row['samples_per_side']:>9} per side  {row['wall_s']:>8.2f} s  "
              f"{row['samples_per_s']:>9} samples/s  epsilon >= {row['epsilon_lower_bound']}")
    write_text_atomic(args.out, to_json({"workers": args.workers, "machine": platform.platform(),
                                         "cpus": os.cpu_count(), "results": rows}))


if __name__ == "__main__":
    main()
