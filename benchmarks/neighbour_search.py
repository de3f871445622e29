"""Benchmark: what the neighbour search costs, and what it changes for our reference audits (issue 29).

1. **Search against a fixed pair.** tests/search_mechanisms.py:one_record_leaks on 20 records in
   [0, 1]: only record 13 leaks (epsilon 4). Audited (a) on the leaking pair given by hand (record
   13 replaced by 0, what an auditor who already knew would write) and (b) through the search over
   all 40 replace-one candidates, at the same audit samples per side. Reported: the bound, the
   wall time, every mechanism call made (screening included), and the pair found.
2. **Reference audits: the search against the hand-picked record.** Each of our registered
   mechanisms audited at its registered settings on the pair the audits used before (record 0 of
   node 0, row 0 of party 0, round 1) and with the search over every record, row or round: does the
   bound go up? Both at the same audit samples and seed.

    python benchmarks/neighbour_search.py [--samples 20000] [--seeds 0,1,2] [--workers 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np

from admmcheck.audit import Pair, PrivacyClaim, Source, audit
from admmcheck.audit.inputs.neighbourhoods import Dataset, candidate_pairs, parse_domain
from admmcheck.audit.search import search_audit
from admmcheck.audit.running.settings import AuditSettings
from admmcheck.foundations.output import output_folder, to_json, write_text_atomic

HERE = Path(__file__).resolve().parent
MECHANISMS = HERE.parent / "tests" / "search_mechanisms.py"
RECORDS = np.linspace(0.05, 0.95, 20).reshape(20, 1)


def _timed(run):
    started = time.perf_counter()
    result = run()
    return result, time.perf_counter() - started


def search_against_fixed_pair(samples: int, seed: int, workers: int) -> dict[str, object]:
    settings = AuditSettings(samples=samples, seed=seed, workers=workers)
    mechanism = Source(f"{MECHANISMS}:one_record_leaks")
    leaking = RECORDS.copy()
    leaking[13] = 0.0
    fixed, fixed_s = _timed(lambda: audit(mechanism, Source(obj=Pair(RECORDS, leaking)), PrivacyClaim(1.0), settings))
    pairs = candidate_pairs(Dataset(RECORDS), "replace-one", parse_domain("box:0:1", 1))
    searched, searched_s = _timed(lambda: search_audit(mechanism, pairs, PrivacyClaim(1.0), settings))
    screening = searched.search["screening_samples_per_side"] * 2 * len(pairs)
    return {"seed": seed, "samples_per_side": samples,
            "fixed_pair": {"epsilon_lower_bound": fixed.epsilon_lower_bound, "wall_s": fixed_s,
                           "mechanism_calls": 2 * samples},
            "search": {"epsilon_lower_bound": searched.epsilon_lower_bound, "wall_s": searched_s,
                       "screening_s": searched.search["screening_wall_time_s"], "candidates": len(pairs),
                       "mechanism_calls": 2 * samples + screening, "found": searched.search["found"]["change"]}}


def reference_with_and_without_search(name: str, samples: int, seed: int, workers: int) -> dict[str, object]:
    from dataclasses import replace

    from admmcheck.commands.audit import MechanismAudit, run_mechanism_audit
    from admmcheck.mechanisms.registry import REGISTRY

    spec = REGISTRY.mechanism(name)
    settings = spec.audit.but(samples=samples, seed=seed, workers=workers)
    extra = {"epsilon": 1.0} if spec.claim is None else {}  # a mechanism without a theorem: audited against 1
    setting = replace(spec.setting_type.DEFAULTS["audit"], seed=seed, **extra)

    def run(where):
        return run_mechanism_audit(MechanismAudit(name, setting, where=where, settings=settings)).as_dict()
    hand = spec.first_place[0]
    given, given_s = _timed(lambda: run(hand))
    searched, searched_s = _timed(lambda: run(None))
    return {"mechanism": name, "seed": seed, "samples_per_side": samples, "claimed_epsilon": given["claimed_epsilon"],
            "hand_picked": {"epsilon_lower_bound": given["epsilon_lower_bound"], "wall_s": given_s,
                            "verdict": given["verdict"]},
            "search": {"epsilon_lower_bound": searched["epsilon_lower_bound"], "wall_s": searched_s,
                       "verdict": searched["verdict"], "found": searched["neighbour_search"]["found"]["change"],
                       "candidates": searched["neighbour_search"]["candidates_screened"]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000, help="audit samples per side")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--mechanisms", default="pp,dvp,pvp,private-radmm,dp-sharing,dpsda-c,dpsda-ps")
    parser.add_argument("--out", default=str(HERE / "out" / "neighbour_search.json"))
    args = parser.parse_args()
    output_folder(Path(args.out).parent, "--out")
    seeds = [int(s) for s in args.seeds.split(",")]
    fixed = []
    for seed in seeds:
        row = search_against_fixed_pair(args.samples, seed, args.workers)
        fixed.append(row)
        print(f"one leaking record, seed {seed}: fixed pair epsilon >= {row['fixed_pair']['epsilon_lower_bound']:.3f} "
              f"in {row['fixed_pair']['wall_s']:.1f} s; search epsilon >= {row['search']['epsilon_lower_bound']:.3f} "
              f"in {row['search']['wall_s']:.1f} s ({row['search']['mechanism_calls']} calls), "
              f"found {row['search']['found']}", flush=True)
    reference = []
    for name in args.mechanisms.split(","):
        for seed in seeds:
            row = reference_with_and_without_search(name, args.samples, seed, args.workers)
            reference.append(row)
            print(f"{name} seed {seed}: hand-picked epsilon >= {row['hand_picked']['epsilon_lower_bound']:.3f} "
                  f"({row['hand_picked']['wall_s']:.1f} s); search epsilon >= "
                  f"{row['search']['epsilon_lower_bound']:.3f} ({row['search']['wall_s']:.1f} s, "
                  f"{row['search']['candidates']} candidates, found {row['search']['found']}); "
                  f"claim {row['claimed_epsilon']:.3f}", flush=True)
    write_text_atomic(args.out, to_json({"workers": args.workers, "machine": platform.platform(),
                                         "cpus": os.cpu_count(), "search_against_fixed_pair": fixed,
                                         "reference_audits": reference}))


if __name__ == "__main__":
    main()
