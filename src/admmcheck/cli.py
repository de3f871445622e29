"""The ``admmcheck`` command line: parses arguments into configurations and prints results.

    admmcheck verify [--json] [--iterations T]
    admmcheck run ALGO [--dataset synthetic|breast-cancer|adult:PATH] [--nodes N]
                       [--graph ring|path|star|complete|random] [--iterations T] [--seed S]
                       [--eta X[,X...]] [--theta X] [--growth Q[,Q...]] [--gamma X]
                       [--C X] [--rho X] [--json] [--export-problem FILE.npz]
    admmcheck bound pp|radmm [--dataset ...] [--nodes N] [--graph ...] [--iterations T]
                       [--eta SCHEDULE] [--theta X] [--alpha SCHEDULE] [--c1 X] [--json]

    admmcheck conditions madmm|radmm --graph ring:5|path:4|star:6|complete:4|FILE
                       [--eta 1/2[,...]] [--gamma 1/5] [--theta 1/2] [--growth Q[,...]]
                       [--lipschitz 1/4[,...]] [--strong-convexity 1/10[,...]]
                       [--dataset NAME --C X --rho X] [--find-gamma] [--json]

    admmcheck experiment madmm-fig2|radmm-fig2 [--dataset ...] [--nodes N] [--graph ...]
                       [--iterations T] [--runs R] [--seed S] [--out DIR] [--json]

A SCHEDULE is a number, comma-separated values (one per node) or a formula in t and i,
e.g. "0.5*1.1^(t-1)".

Exit status: 0 when everything ran and every check passed, 1 when a check failed,
2 on invalid input (the message says what to change).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Sequence

from admmcheck.conditions.job import THEOREMS, ConditionsConfig, evaluate_conditions
from admmcheck.convergence import default_problems, paper_schedule_finding, verify_case
from admmcheck.errors import AdmmcheckError
from admmcheck.experiments import EXPERIMENTS
from admmcheck.jobs import (
    ALGORITHMS,
    BOUND_MECHANISMS,
    BoundConfig,
    ExperimentConfig,
    SETTING_FIELDS,
    RunConfig,
    evaluate_bound,
    execute,
    execute_experiment,
)
from admmcheck.networks import GRAPH_KINDS
from admmcheck.schedules import parse_schedule


def _float_list(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(part) for part in text.split(","))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected a number or comma-separated numbers, got {text!r}") from exc


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="admmcheck", description="Verify private and non-private ADMM algorithms against their papers."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    verify = commands.add_parser("verify", help="run the convergence checks on the built-in problems")
    verify.add_argument("--iterations", type=int, default=200, help="iterations per convergence run (default 200)")
    verify.add_argument("--json", action="store_true", help="print one JSON object instead of a table")

    run = commands.add_parser("run", help="run one reference algorithm and compare with the CVXPY optimum")
    defaults = RunConfig()
    run.add_argument("algorithm", choices=ALGORITHMS)
    _add_setting_arguments(run, defaults)
    run.add_argument("--eta", type=_float_list, default=defaults.eta, help="penalty; madmm: eta_i(1), one or one per node")
    run.add_argument("--theta", type=float, default=defaults.theta, help="M-ADMM dual step size")
    run.add_argument("--growth", type=_float_list, default=defaults.growth, help="madmm: q_i in eta_i(1) q_i^(t-1)")
    run.add_argument("--gamma", type=float, default=defaults.gamma, help="R-ADMM even-step weight")
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.add_argument("--export-problem", metavar="FILE.npz", help="write X_i, y_i, C, rho, adjacency")

    bound = commands.add_parser("bound", help="evaluate a paper's privacy-loss bound and its preconditions")
    bounds = BoundConfig()
    bound.add_argument("mechanism", choices=BOUND_MECHANISMS, help="pp: M-ADMM Thm 4.1; radmm: R-ADMM Thm IV.1")
    _add_setting_arguments(bound, bounds)
    bound.add_argument("--eta", type=_schedule, default=bounds.eta, help="eta_i(t) schedule (radmm: one number)")
    bound.add_argument("--theta", type=float, default=bounds.theta, help="pp: dual step size theta")
    bound.add_argument("--alpha", type=_schedule, default=bounds.alpha, help="alpha_i(t) (radmm: alpha_i(k))")
    bound.add_argument("--c1", type=float, default=bounds.c1, help="bound on L'' used (logistic: 0.25)")
    bound.add_argument("--json", action="store_true", help="print one JSON object")

    conditions = commands.add_parser("conditions", help="decide a convergence theorem's conditions exactly")
    plain_conditions = ConditionsConfig(lipschitz=("1",))
    conditions.add_argument("theorem", choices=THEOREMS, help="madmm: M-ADMM Thm 3.1/3.2; radmm: R-ADMM Thm III.1")
    conditions.add_argument("--graph", default=plain_conditions.graph, help="ring:N, path:N, star:N, complete:N or an edge-list file")
    conditions.add_argument("--eta", type=_rationals, default=plain_conditions.eta, help="eta (madmm: eta_i(1), one or one per node)")
    conditions.add_argument("--gamma", default=plain_conditions.gamma, help="radmm: gamma >= 0")
    conditions.add_argument("--theta", default=plain_conditions.theta, help="madmm: dual step theta")
    conditions.add_argument("--growth", type=_rationals, default=plain_conditions.growth, help="madmm: q_i in eta_i(1) q_i^(t-1)")
    conditions.add_argument("--lipschitz", type=_rationals, help="M_i, one or one per node (else from --dataset)")
    conditions.add_argument("--strong-convexity", type=_rationals, help="madmm: m_i (else rho/N from --dataset)")
    conditions.add_argument("--dataset", help="compute m_i, M_i from synthetic, breast-cancer or adult:PATH")
    conditions.add_argument("--C", default=plain_conditions.C)
    conditions.add_argument("--rho", default=plain_conditions.rho)
    conditions.add_argument("--seed", type=int, default=plain_conditions.seed)
    conditions.add_argument("--L", dest="big_l", default=plain_conditions.big_l, help="radmm: L > 0 in (24)-(25)")
    conditions.add_argument("--mu", default=plain_conditions.mu, help="mu > 1 in (24)-(25) / (21)-(23)")
    conditions.add_argument("--delta", default=plain_conditions.delta, help="madmm: delta in (21)-(22)")
    conditions.add_argument("--at", type=int, default=plain_conditions.at, help="madmm: t for Theorem 3.2")
    conditions.add_argument("--horizon", type=int, default=plain_conditions.horizon, help="madmm: check t = 1..T")
    conditions.add_argument("--find-gamma", action="store_true", help="radmm: certified minimal gamma")
    conditions.add_argument("--json", action="store_true", help="print one JSON object")

    experiment = commands.add_parser("experiment", help="rerun a paper's accuracy/privacy figure")
    plain = ExperimentConfig()
    experiment.add_argument("name", choices=EXPERIMENTS)
    _add_setting_arguments(experiment, plain)
    experiment.add_argument("--runs", type=int, default=plain.runs, help="independent noisy runs per setting")
    experiment.add_argument("--out", default="experiments", help="directory for NAME.json, NAME.csv, NAME.png")
    experiment.add_argument("--json", action="store_true", help="print the summary as JSON")
    return parser


def _add_setting_arguments(parser: argparse.ArgumentParser, defaults: object) -> None:
    """The flags every command that builds a problem shares (defaults from its config)."""
    parser.add_argument("--dataset", default=defaults.dataset, help="synthetic, breast-cancer or adult:PATH[,PATH]")
    parser.add_argument("--nodes", type=int, default=defaults.nodes)
    parser.add_argument("--graph", choices=GRAPH_KINDS, default=defaults.graph)
    parser.add_argument("--iterations", type=int, default=defaults.iterations)
    parser.add_argument("--seed", type=int, default=defaults.seed, help="data, partition, graph and f(0) seed")
    parser.add_argument("--C", type=float, default=defaults.C)
    parser.add_argument("--rho", type=float, default=defaults.rho)
    parser.add_argument("--samples", type=int, default=defaults.samples, help="synthetic rows")
    parser.add_argument("--dim", type=int, default=defaults.dim, help="synthetic feature dimension")


def _setting(args: argparse.Namespace) -> dict[str, object]:
    return {name: getattr(args, name) for name in SETTING_FIELDS}


def _rationals(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(","))


def _command_conditions(args: argparse.Namespace) -> int:
    fields = ("theorem", "graph", "eta", "gamma", "theta", "growth", "lipschitz", "strong_convexity", "dataset",
              "C", "rho", "seed", "big_l", "mu", "delta", "at", "horizon", "find_gamma")
    report = evaluate_conditions(ConditionsConfig(**{name: getattr(args, name) for name in fields}))
    if args.json:
        print(json.dumps(report, allow_nan=False))
    else:
        print(f"{report['theorem']} on {report['graph']}: {report['parameters']}")
        for check in report["conditions"]:
            verdict = {True: "holds", False: "FAILS", None: "undecided"}[check["holds"]]
            where = f" (t={check['t']})" if "t" in check else ""
            print(f"  {verdict:<9} {check['name']}{where}")
        if "gamma_interval" in report:
            interval = report["gamma_interval"]
            print("  minimal gamma: " + ("none: no gamma >= 0 satisfies the conditions" if interval is None
                                         else f"in [{interval['lo']}, {interval['hi']}] (width {interval['width']:.2e})"))
    return 0 if report["all_hold"] else 1


def _schedule(text: str) -> object:
    try:
        return parse_schedule(text)
    except AdmmcheckError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _command_verify(args: argparse.Namespace) -> int:
    results, findings = [], []
    for case in default_problems():
        results.extend(verify_case(case, iterations=args.iterations))
        findings.append(paper_schedule_finding(case))
    failed = sum(not r.passed for r in results)
    if args.json:
        print(json.dumps({
            "checks": [r.as_dict() for r in results],
            "findings": [vars(f) | {"stalls": f.stalls} for f in findings],
            "passed": len(results) - failed,
            "failed": failed,
        }, indent=2))
    else:
        print(f"{'problem':<20} {'check':<24} {'measured':>11} {'threshold':>9}  verdict")
        for r in results:
            print(f"{r.problem:<20} {r.check:<24} {r.measured:>11.3e} {r.threshold:>9.0e}  {r.verdict}")
        print("\nFinding: M-ADMM with the paper's own §5.1 schedule (eta_i(1) q_i^(t-1), q up to 1.2)")
        for f in findings:
            state = "stalls" if f.stalls else "does not stall"
            print(
                f"  {f.problem:<20} gap {f.gap_short:.3e} at T={f.short}, {f.gap_long:.3e} at T={f.long} "
                f"(max eta {f.max_penalty_long:.1e}): {state}"
            )
        print(f"\n{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


def _command_run(args: argparse.Namespace) -> int:
    config = RunConfig(
        algorithm=args.algorithm, eta=args.eta, theta=args.theta, growth=args.growth, gamma=args.gamma,
        **_setting(args),
    )
    summary = execute(config, export_problem=args.export_problem).summary()
    if args.json:
        print(json.dumps(summary))
    else:
        for key in ("algorithm", "dataset", "nodes", "graph", "iterations", "objective_gap", "consensus_error", "wall_time_s"):
            print(f"{key:<16} {summary[key]}")
    return 0


def _command_bound(args: argparse.Namespace) -> int:
    config = BoundConfig(
        mechanism=args.mechanism, eta=args.eta, theta=args.theta, alpha=args.alpha, c1=args.c1, **_setting(args)
    )
    bound, setting = evaluate_bound(config)
    summary = bound.summary() | {
        "mechanism": args.mechanism,
        "iterations": args.iterations,
        "setting": {
            "dataset": args.dataset, "graph": args.graph, "sizes": list(setting.sizes),
            "degrees": list(setting.degrees), "C": setting.C, "rho": setting.rho,
            "max_feature_norm": setting.max_feature_norm, "c1": setting.c1,
        },
    }
    if args.json:
        print(json.dumps(summary, allow_nan=False))
    else:
        print(f"{bound.theorem}: beta = {summary['beta'] if bound.holds else 'refused'}")
        print(f"  formula value max_i sum = {summary['formula_value']}; per node: "
              + ", ".join(str(v) for v in summary["per_node"]))
        for name, ok in bound.preconditions.items():
            print(f"  {'holds' if ok else 'FAILS':<6} {name}")
    return 0 if bound.holds else 1


def _command_experiment(args: argparse.Namespace) -> int:
    config = ExperimentConfig(name=args.name, runs=args.runs, **_setting(args))
    experiment, paths = execute_experiment(config, args.out)
    summary = experiment.summary() | {"files": {kind: str(path) for kind, path in paths.items()}}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{'panel':<16} {'setting':<34} {'L_mean(T)':>10} {'L_range(T)':>10} {'P(T)':>8}")
        for row in summary["settings"]:
            print(f"{row['panel']:<16} {row['label']:<34} {row['L_mean_T']:>10.4f} "
                  f"{row['L_range_T']:>10.4f} {row['P_T']:>8.4f}")
        print("written: " + ", ".join(summary["files"].values()))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``admmcheck`` console script."""
    args = _parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            # CVXPY warns about inaccurate solutions; the oracle decides on them itself.
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            if args.command == "verify":
                return _command_verify(args)
            if args.command == "bound":
                return _command_bound(args)
            if args.command == "conditions":
                return _command_conditions(args)
            if args.command == "experiment":
                return _command_experiment(args)
            return _command_run(args)
    except AdmmcheckError as exc:
        print(f"admmcheck: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
