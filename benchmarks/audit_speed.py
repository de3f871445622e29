"""Benchmark: black-box audits end to end, as a user runs them (issue 15).

(a) a scalar Laplace mechanism written as a plain per-call Python function, S samples per
    side (default 10^6): wall time, samples per second per worker, the epsilon lower bound;
(b) a mechanism releasing 500 numbers per call, S' samples per side: wall time and peak
    resident memory of the main process and of the workers;
(c) ``admmcheck audit pp`` (the reference PP mechanism against Theorem 4.1's beta, its default
    setting N=3, T=5, d=2: 36 numbers per transcript), S'' transcripts per side: wall time and
    peak memory (issue 19 (d)).

    python benchmarks/audit_speed.py [--samples 1000000] [--transcripts 1000000] [--pp 1000000]
                                     [--workers 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from admmcheck.audit import PrivacyClaim, Source, audit
from admmcheck.foundations.output import output_file, output_folder, to_json, write_text_atomic

HERE = Path(__file__).resolve().parent
MECHANISMS = str(HERE / "audit_mechanisms.py")


def _peak_mib(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--transcripts", type=int, default=1_000_000)
    parser.add_argument("--pp", type=int, default=1_000_000, help="PP transcripts per side (0: skip)")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--out", default=str(HERE / "out" / "audit_speed.json"),
                        help="JSON result (default: benchmarks/out/, untracked)")
    parser.add_argument("--only", choices=("scalar", "transcripts", "pp"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    output_folder(Path(args.out).parent, "--out")
    output_file(args.out, "--out")
    if args.only is None:  # each part in a fresh process, so that its peak memory is its own
        result = {"benchmark": "audit speed", "machine": {"python": platform.python_version(),
                                                          "numpy": np.__version__, "cpus": os.cpu_count()}}
        for part, size in (("scalar", args.samples), ("transcripts", args.transcripts), ("pp", args.pp)):
            if size:
                part_file = Path(args.out).with_suffix(f".{part}.json")
                subprocess.run([sys.executable, __file__, *sys.argv[1:], "--only", part, "--out", str(part_file)],
                               check=True)
                result |= json.loads(part_file.read_text())
                part_file.unlink()
        write_text_atomic(args.out, to_json(result, indent=2) + "\n")
        return
    if args.only != "scalar":
        args.samples = 0
    if args.only != "transcripts":
        args.transcripts = 0
    if args.only != "pp":
        args.pp = 0
    result = {}
    if args.samples:
        _scalar(args, result)
    _rest(args, result)
    write_text_atomic(args.out, to_json(result, indent=2) + "\n")


def _scalar(args, result: dict) -> None:
    start = time.perf_counter()
    scalar = audit(Source(f"{MECHANISMS}:scalar_laplace"), Source(f"{MECHANISMS}:scalar_pair"), PrivacyClaim(1.0),
                   samples=args.samples, workers=args.workers)
    scalar_s = time.perf_counter() - start
    per_worker = 2 * args.samples / scalar_s / args.workers
    print(f"(a) scalar Laplace, {args.samples} samples per side, {args.workers} workers: {scalar_s:.1f} s, "
          f"{per_worker:,.0f} samples/s per worker, epsilon >= {scalar.epsilon_lower_bound:.4f} ({scalar.verdict})")

    result["scalar"] = {"samples_per_side": args.samples, "workers": args.workers, "seconds": scalar_s,
                        "samples_per_second_per_worker": per_worker, "peak_main_mib": _peak_mib(resource.RUSAGE_SELF),
                        "epsilon_lower_bound": scalar.epsilon_lower_bound, "verdict": scalar.verdict,
                        "isolation": getattr(scalar, "isolation", "")}


def _rest(args, result: dict) -> None:
    if args.transcripts:
        start = time.perf_counter()
        vector = audit(Source(f"{MECHANISMS}:transcript_500"), Source(f"{MECHANISMS}:transcript_pair"),
                       PrivacyClaim(0.05), samples=args.transcripts, workers=args.workers)
        vector_s = time.perf_counter() - start
        main_mib, workers_mib = _peak_mib(resource.RUSAGE_SELF), _peak_mib(resource.RUSAGE_CHILDREN)
        print(f"(b) 500 numbers per sample, {args.transcripts} samples per side: {vector_s:.1f} s; peak memory "
              f"{main_mib:.0f} MiB (main), {workers_mib:.0f} MiB (largest worker); "
              f"epsilon >= {vector.epsilon_lower_bound:.4f} (true 0.05)")
        result["transcripts"] = {"samples_per_side": args.transcripts, "numbers_per_sample": 500,
                                 "seconds": vector_s, "peak_main_mib": main_mib, "peak_worker_mib": workers_mib,
                                 "epsilon_lower_bound": vector.epsilon_lower_bound}
    if args.pp:
        from admmcheck.commands.audit import MechanismAudit, run_mechanism_audit

        start = time.perf_counter()
        from admmcheck.mechanisms.registry import REGISTRY

        settings = REGISTRY.mechanism("pp").audit.but(samples=args.pp, workers=args.workers)
        found = run_mechanism_audit(MechanismAudit("pp", settings=settings))
        pp, bound = found.result, found.audited.summary["theorem"]
        pp_s = time.perf_counter() - start
        main_mib, workers_mib = _peak_mib(resource.RUSAGE_SELF), _peak_mib(resource.RUSAGE_CHILDREN)
        print(f"(c) admmcheck audit pp, {args.pp} transcripts per side ({pp.layout.size} numbers each): "
              f"{pp_s:.1f} s; peak memory {main_mib:.0f} MiB (main), {workers_mib:.0f} MiB (largest worker); "
              f"epsilon >= {pp.epsilon_lower_bound:.4f} against beta = {bound['beta']:.4f} ({pp.verdict})")
        result["pp"] = {"samples_per_side": args.pp, "numbers_per_sample": pp.layout.size, "seconds": pp_s,
                        "peak_main_mib": main_mib, "peak_worker_mib": workers_mib,
                        "epsilon_lower_bound": pp.epsilon_lower_bound, "beta": bound["beta"], "verdict": pp.verdict}


if __name__ == "__main__":
    main()
