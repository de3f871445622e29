"""Benchmark (issue 54, item 2): one-run canary audits of our mechanisms (``admmcheck audit NAME --canaries M``)
against the fixed-n audit of the same claim.

* DP ADMM sharing as published (ε = ∞: its noise lives in col(D_m)), the audit setting (2 parties, 40 rows, T = 2);
* PP with α 100 times its setting's (noise 100 times too small: the Gamma-norm noise has scale 1/α) against the
  claim β of its setting's α, a variant registered in this process (``pp-quiet``), and PP itself; the audit setting
  (3 nodes on a ring, 10 records each, d = 2, T = 5), and a wide one (100 nodes on a ring, 10 records each, d = 10,
  T = 5), where each node holds 10 of the 1,000 canaries and its broadcasts have 60 numbers to show them in.

For each: one run of 1,000 canaries (``spread`` over the nodes or parties), 50 pooled runs of 20 canaries (1,000 in
all; audit setting only), and the fixed-n audit of the first record's replace-one pair at the mechanism's registered
samples; the ε bound, the Gaussian-DP μ bound, the training calls and the wall time. 95 %, 2 workers, seed 0.

    python benchmarks/one_run_registered.py [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from admmcheck.commands.audit import MechanismAudit, run_mechanism_audit
from admmcheck.commands.canary_audit import CanarySlots, MechanismCanaryAudit, run_mechanism_canary_audit
from admmcheck.mechanisms.registry import REGISTRY, register
from admmcheck.mechanisms.settings import ConsensusSetting
from admmcheck.foundations.output import output_folder, to_json, write_text_atomic

HERE = Path(__file__).resolve().parent
CANARIES = 1_000
QUIET = 100  # how many times too little noise pp-quiet adds


def register_quiet() -> None:
    """``pp-quiet``: PP run with α·QUIET, claiming PP's β at α."""
    pp = REGISTRY.mechanism("pp")
    register(replace(pp, name="pp-quiet", title=f"PP with {QUIET} times too little noise",
                     arguments=lambda s: pp.arguments(s) | {"alpha": QUIET * pp.arguments(s)["alpha"]}),
             replace=True)


def wide(setting: ConsensusSetting) -> ConsensusSetting:
    """100 nodes of 10 records in d = 10: 10 of 1,000 spread canaries a node."""
    return replace(setting, nodes=100, samples=1000, dim=10)


def one_run(name: str, canaries: int, runs: int, setting: object = None) -> dict:
    spec = REGISTRY.mechanism(name)
    setting = setting or spec.setting_type.DEFAULTS["audit"]
    started = time.monotonic()
    result = run_mechanism_canary_audit(MechanismCanaryAudit(
        name, setting, CanarySlots(canaries, runs, "spread"), spec.audit.but(seed=0, workers=2)))
    calls = runs + spec.canaries.reference_run(spec.auditable(spec, setting).mechanism)
    where = "" if setting == spec.setting_type.DEFAULTS["audit"] else ", wide setting"
    return {"audit": f"one-run, {runs} run{'s' if runs > 1 else ''} of {canaries} canaries (spread{where})",
            "verdict": result.verdict, "epsilon_lower_bound": result.epsilon_lower_bound,
            "claimed_epsilon": result.claim.epsilon, "mu_lower_bound": result.mu_lower_bound,
            "training_calls": calls, "wall_time_s": time.monotonic() - started}


def fixed_n(name: str, setting: object = None) -> dict:
    spec = REGISTRY.mechanism(name)
    started = time.monotonic()
    found = run_mechanism_audit(MechanismAudit(name, setting, where=spec.first_place[0],
                                               settings=spec.audit.but(seed=0, workers=2)))
    samples = found.result.samples
    where = "" if setting is None else ", wide setting"
    return {"audit": f"fixed-n, {samples} samples per side ({spec.first_place[1]}{where})",
            "verdict": found.result.verdict,
            "epsilon_lower_bound": found.result.epsilon_lower_bound, "claimed_epsilon": found.audited.epsilon,
            "mu_lower_bound": None, "training_calls": 2 * samples, "wall_time_s": time.monotonic() - started}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(HERE / "out"))
    args = parser.parse_args(argv)
    out = output_folder(args.out, "--out")
    register_quiet()
    table = {}
    for name in ("dp-sharing", "pp-quiet", "pp"):
        table[name] = [one_run(name, CANARIES, 1), one_run(name, CANARIES // 50, 50), fixed_n(name)]
        if name != "dp-sharing":
            setting = wide(ConsensusSetting.DEFAULTS["audit"])
            table[name] += [one_run(name, CANARIES, 1, setting), fixed_n(name, setting)]
        for row in table[name]:
            print(name, row, file=sys.stderr)
    document = {"confidence": 0.95, "workers": 2, "seed": 0, "quiet_factor": QUIET, "results": table}
    write_text_atomic(out / "one_run_registered.json", to_json(document, indent=2) + "\n")
    lines = ["# One run against many: our mechanisms, canaries in their problems", "",
             "`python benchmarks/one_run_registered.py` (2 workers, 95 %, seed 0, each mechanism's audit setting). "
             f"`pp-quiet` runs PP with alpha {QUIET} times its setting's (noise {QUIET} times too small) and claims "
             "PP's beta at the setting's alpha. The claims differ between rows: the canaries' slots raise the node "
             "sizes that beta reads.", "",
             "| mechanism | audit | verdict | epsilon bound | claimed epsilon | mu bound | training calls | wall time (s) |",
             "|---|---|---|---|---|---|---|---|"]
    for name, rows in table.items():
        for row in rows:
            mu = "" if row["mu_lower_bound"] is None else f"{row['mu_lower_bound']:.3f}"
            lines.append(f"| {name} | {row['audit']} | {row['verdict']} | {row['epsilon_lower_bound']:.3f} | "
                         f"{row['claimed_epsilon']:.4g} | {mu} | {row['training_calls']} | {row['wall_time_s']:.1f} |")
    write_text_atomic(out / "one_run_registered.md", "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
