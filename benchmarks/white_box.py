"""Benchmark and figures of the white-box loss (issue 16).

(a) speed: the exact loss of S PP transcripts (N=5 ring, d=5, B_i=50, T=20; default S=10^5),
    sampled first (not timed), then ``privacy_loss`` timed alone (median of repeats);
(b) tightness: for PP and private R-ADMM at two settings each, the largest sampled loss, the
    worst case found by the search and the theorem's beta, with the ratios.

    python benchmarks/white_box.py [--transcripts 100000] [--repeats 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import platform
import resource
import statistics
import time
from pathlib import Path

import numpy as np

from admmcheck.commands.audit import MechanismAudit, audited_pair
from admmcheck.mechanisms.settings import ConsensusSetting
from admmcheck.mechanisms.privacy_loss import privacy_loss
from admmcheck.mechanisms.consensus import replace_one_record
from admmcheck.mechanisms.registry import reference_mechanism
from admmcheck.mechanisms.worst_case import worst_case
from admmcheck.problems.datasets import make_problem, synthetic
from admmcheck.problems.networks import ring
from admmcheck.foundations.output import output_file, to_json, write_text_atomic

HERE = Path(__file__).resolve().parent
SETTINGS = {  # name: the audit's mechanism, neighbours and ConsensusSetting fields (theorem preconditions hold at each)
    "pp-a": {"mechanism": "pp", "nodes": 3, "iterations": 5, "dim": 2, "eta": 1.0, "theta": 1.0, "alpha": 5.0},
    "pp-b": {"mechanism": "pp", "nodes": 5, "iterations": 10, "dim": 5, "samples": 250, "eta": 2.0, "theta": 1.0,
             "alpha": 20.0, "neighbours": "feature-move"},
    "radmm-a": {"mechanism": "private-radmm", "nodes": 3, "iterations": 5, "dim": 2, "eta": 1.0, "alpha": 5.0},
    "radmm-b": {"mechanism": "private-radmm", "nodes": 5, "iterations": 10, "dim": 5, "samples": 250, "eta": 2.0,
                "alpha": 20.0, "neighbours": "feature-move"},
}


def speed(transcripts: int, repeats: int) -> dict[str, object]:
    problem = make_problem(synthetic(250, 5, seed=0), 5)
    d0, d1 = replace_one_record(problem, 0, 0, "label-flip")
    mechanism = reference_mechanism("pp", ring(5), 20, {"penalty": 1.0, "theta": 1.0, "alpha": 5.0})
    start = time.perf_counter()
    seeds = np.random.SeedSequence(0).spawn(transcripts)
    primal = np.concatenate([mechanism.batch_run(d0, seeds[k:k + 5000]).primal for k in range(0, transcripts, 5000)])
    sampling = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        loss = privacy_loss(mechanism, d0, d1, primal)
        times.append(time.perf_counter() - start)
    return {"transcripts": transcripts, "setting": "PP, N=5 ring, d=5, B_i=50, T=20, alpha=5, label flip",
            "sampling_s": sampling, "loss_s_median": statistics.median(times), "loss_s_min": min(times),
            "loss_s_max": max(times), "mean_loss": float(loss.total.mean()), "max_loss": float(loss.total.max()),
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def tightness(samples: int) -> list[dict[str, object]]:
    rows = []
    for name, fields in SETTINGS.items():
        request = {key: fields[key] for key in ("mechanism", "neighbours") if key in fields}
        setting = ConsensusSetting(dataset="synthetic", **{k: v for k, v in fields.items() if k not in request})
        claim, pair, _ = audited_pair(MechanismAudit(setting=setting, **request))
        mechanism, d0, d1 = claim.mechanism, pair.d0, pair.d1
        losses = privacy_loss(mechanism, d0, d1,
                              mechanism.batch_run(d0, np.random.SeedSequence(1).spawn(samples)).primal).total
        worst = worst_case(mechanism, d0, records=3, seed=0)
        rows.append({"setting": name, **{k: v for k, v in fields.items()}, "beta": claim.epsilon,
                     "sampled_transcripts": samples, "max_sampled_loss": float(losses.max()),
                     "mean_loss": float(losses.mean()), "worst_case": worst.value, "worst_where": worst.change.describe(),
                     "sampled_ratio": float(losses.max()) / claim.epsilon, "worst_ratio": worst.value / claim.epsilon})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transcripts", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tightness-samples", type=int, default=20_000)
    parser.add_argument("--out", default=str(HERE / "out" / "white_box.json"))
    args = parser.parse_args()
    out = output_file(args.out, "--out")
    result = {"machine": platform.platform(), "speed": speed(args.transcripts, args.repeats),
              "tightness": tightness(args.tightness_samples)}
    write_text_atomic(out, to_json(result, indent=2))
    s = result["speed"]
    print(f"loss of {s['transcripts']} PP transcripts: median {s['loss_s_median']:.2f} s "
          f"(min {s['loss_s_min']:.2f}, max {s['loss_s_max']:.2f}); sampling them took {s['sampling_s']:.0f} s")
    print("| setting | beta | max sampled loss | ratio | worst case found | ratio | where |\n|---|---|---|---|---|---|---|")
    for row in result["tightness"]:
        print(f"| {row['setting']} | {row['beta']:.4f} | {row['max_sampled_loss']:.4f} | {row['sampled_ratio']:.3f} | "
              f"{row['worst_case']:.4f} | {row['worst_ratio']:.3f} | {row['worst_where']} |")
    print(f"written: {out}")


if __name__ == "__main__":
    main()
