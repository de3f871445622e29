"""The ``admmcheck`` command line: parses arguments into configurations and prints results.

    admmcheck verify [--json] [--iterations T]
    admmcheck run ALGO [--dataset synthetic|breast-cancer|adult|adult:PATH] [--nodes N] ...
    admmcheck bound pp|radmm [--eta SCHEDULE] [--theta X] [--alpha SCHEDULE] ...
    admmcheck conditions madmm|radmm --graph ring:5|FILE [--find-gamma] [--max-time S] ...
    admmcheck experiment madmm-fig1|madmm-fig2|madmm-fig3|madmm-fig4|radmm-fig1|radmm-fig2 [--out DIR] ...

``admmcheck COMMAND --help`` lists every flag with its default. Numbers, schedules and
rationals are read by the safe grammar of :mod:`admmcheck.formulas` (never evaluated as
Python). Only the flags a user types reach the configuration, so a flag that does not
apply to the chosen algorithm, theorem or dataset is refused instead of ignored.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
from dataclasses import fields as dataclass_fields
from dataclasses import replace
from pathlib import Path
import select
import sys
import traceback
import warnings
from typing import Callable, Sequence

from admmcheck import __version__
from admmcheck.audit.inputs.neighbourhoods import DOMAIN_FORMS, NEIGHBOUR_KINDS
from admmcheck.audit.running.settings import FIELDS as SETTINGS_FIELDS
from admmcheck.audit.running.settings import RANDOMNESS_MODES, AuditSettings, SearchSettings
from admmcheck.audit.sequential import strict_bound
from admmcheck.commands.attack import AttackConfig, run_attack
from admmcheck.commands.audit import (CodeAuditConfig, ReferenceAuditConfig, audited_place, consensus_mechanisms,
                                      run_audit, run_reference_audit)
from admmcheck.commands.conditions import THEOREMS, ConditionsConfig, evaluate_conditions
from admmcheck.commands.consensus import (BoundConfig, ExperimentConfig, RunConfig, bound_mechanisms,
                                          consensus_algorithms, evaluate_bound, execute, execute_experiment)
from admmcheck.commands.online import (DpsdaAuditConfig, DpsdaRunConfig, dpsda_bound_summary,
                                       execute_dpsda, run_dpsda_audit)
from admmcheck.commands.sharing import (SharingAuditConfig, SharingBoundConfig,
                                        SharingConditionsConfig, SharingRunConfig, evaluate_sharing_bound,
                                        evaluate_sharing_conditions, execute_sharing, run_sharing_audit)
from admmcheck.commands.white_box import WhiteBoxConfig, run_white_box
from admmcheck.errors import AdmmcheckError, InvalidConfiguration
from admmcheck.experiments import EXPERIMENTS
from admmcheck.formulas import parse_number, parse_rational, split_top_level
from admmcheck.mechanisms.plugins import PluginWarning
from admmcheck.mechanisms.registry import ONLINE, REGISTRY, SHARING
from admmcheck.networks import GRAPH_KINDS
from admmcheck.output import output_file, output_folder, to_json
from admmcheck.commands.verify import PROFILES, collect
from admmcheck.report import render
from admmcheck.schedules import describe_schedule, parse_schedule
from admmcheck.validation import config_from_flags, positive_int, said_as_flag

EXIT_OK, EXIT_CHECK_FAILED, EXIT_INVALID_INPUT, EXIT_BUG, EXIT_INCOMPLETE = 0, 1, 2, 3, 4
EXIT_STATUS = """exit status:
  0  everything ran and every check passed
  1  a check failed (verify), a bound's precondition fails (bound), a condition is refuted
     or undecided, or no gamma works (conditions), a privacy violation was found (audit)
  2  invalid input or an anticipated failure: the one-line message says what to change
  3  an unexpected error inside admmcheck: a bug, please report it (--debug shows the traceback)
  4  the time budget (--max-time) ran out before a verdict; the best result so far is printed
  130  interrupted (Ctrl-C) before a verdict"""

#: Names the command line accepted before the registry named every mechanism once (bound and audit only
#: ever meant the private one): still accepted, and listed as aliases in --help.
OLD_NAMES = {"radmm": "private-radmm"}

OUTPUT_FLAGS = ("command", "debug", "json", "export_problem", "out", "argv", "page")  # not configuration fields


def _argument_type(read: Callable[[str], object], expected: str) -> Callable[[str], object]:
    """An argparse type that turns an admmcheck error into argparse's one-line message."""
    def convert(text: str) -> object:
        try:
            return read(text)
        except AdmmcheckError as exc:
            raise argparse.ArgumentTypeError(f"{exc} ({expected})") from None
    convert.__name__ = expected
    return convert


def _rational_text(text: str) -> str:
    parse_rational(text)  # refuse it now; the exact layer reads the text again
    return text.strip()


_NUMBER = _argument_type(parse_number, "a number such as 0.5 or 1/4")
_NUMBERS = _argument_type(lambda text: tuple(parse_number(p) for p in split_top_level(text)),
                          "one number, or one per node separated by commas")
_SCHEDULE = _argument_type(parse_schedule, "a number, one per node, or a formula in t and i")
_NOISE = _argument_type(lambda text: parse_schedule(text, allow_infinite=True),
                        "a number, one per node, a formula in t and i, or inf for no noise")
_POSITIVE_INT = _argument_type(lambda text: positive_int("--iterations", int(text) if text.strip().lstrip("-").isdigit()
                                                        else text), "a whole number >= 1")
_RATIONAL = _argument_type(_rational_text, "a rational such as 1/5 or 0.2")


def _integers(text: str) -> tuple[int, ...]:
    parts = [p.strip() for p in text.split(",")]
    if not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: give positive whole numbers separated by commas, e.g. 66,57")
    return tuple(int(p) for p in parts)


_INTEGERS = _integers


def _place(text: str) -> tuple[int, int]:
    parts = text.split(":")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: write two whole numbers as A:B, e.g. 0:3")
    return int(parts[0]), int(parts[1])
_RATIONALS = _argument_type(lambda text: tuple(_rational_text(p) for p in split_top_level(text)),
                            "one rational, or one per node separated by commas")


def _option(parser: argparse.ArgumentParser, flag: str, default: object, help: str, **kwargs: object) -> None:
    """A flag whose value reaches the configuration only when typed (default shown in --help)."""
    shown = ",".join(str(v) for v in default) if isinstance(default, tuple) else default
    suffix = "" if default is None else f" (default: {shown})"
    parser.add_argument(flag, default=argparse.SUPPRESS, help=help + suffix, **kwargs)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="admmcheck",
        description="Verify private and non-private ADMM algorithms against their papers.",
        epilog=EXIT_STATUS, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"admmcheck {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=help, description=help, epilog=EXIT_STATUS,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)

    verify = command("verify", "verify every algorithm's claims and write the report (JSON, HTML, figures)")
    verify.add_argument("--out", default="reports/verify", help="report folder (default: reports/verify)")
    verify.add_argument("--profile", choices=tuple(PROFILES), default="quick",
                        help="quick (default, minutes), full (larger samples) or smoke (toy sizes)")
    verify.add_argument("--seed", type=int, default=0, help="seed of every random draw (default: 0)")
    verify.add_argument("--iterations", type=_POSITIVE_INT, default=None,
                        help="iterations per convergence run (default: the profile's, 200 for quick)")
    verify.add_argument("--json", action="store_true", help="print report.json instead of the verdict table")
    verify.add_argument("--only", type=_names, default=None, metavar="NAME[,NAME...]",
                        help="check only these registered algorithms and mechanisms (admmcheck plugins lists them; "
                             "a mechanism is checked when registered with report=True)")

    plugins = command("plugins", "list every registered algorithm and mechanism with the package it comes from "
                      "(admmcheck's own, or an installed plugin's: entry-point group admmcheck.plugins), and the "
                      "plugins that could not be loaded")
    plugins.add_argument("--json", action="store_true", help="print one JSON object")

    report = command("report", "re-render report.html and the figures from a saved report.json")
    report.add_argument("file", metavar="FILE.json", help="a report.json written by admmcheck verify")
    report.add_argument("--out", default=None, help="folder for the rendered report (default: the file's folder)")

    run = command("run", "run one reference algorithm and compare it with the CVXPY optimum")
    defaults = RunConfig()
    runnable = consensus_algorithms() + REGISTRY.names("sharing") + REGISTRY.names("online")
    run.add_argument("algorithm", choices=runnable, metavar="ALGO",
                     help="; ".join(f"{name}: {REGISTRY[name].title}" for name in runnable))
    _setting_options(run, defaults)
    sharing = SharingRunConfig()
    _option(run, "--parties", sharing.parties, "sharing: parties M (consecutive column blocks)", type=int)
    _option(run, "--lam", sharing.lam, "sharing: lambda of eq. (1) (--rho is then the ADMM penalty, default "
            f"{sharing.rho}; --iterations default {sharing.iterations})", type=_NUMBER)
    for flag, default, text in (("--epsilon", sharing.epsilon, "dp-sharing: epsilon per iteration (Theorem 1); dpsda: per round (default inf)"),
                                ("--delta", sharing.delta, "dp-sharing: delta per iteration"),
                                ("--c1", sharing.c1, "dp-sharing: bound on R_m'' (Assumption 2.2)"),
                                ("--b1", sharing.b1, "dp-sharing: bound on ||x||, ||y||, ||z|| (Assumption 2.1)"),
                                ("--delta-prime", sharing.delta_prime, "dp-sharing: delta' of Corollary 1")):
        _option(run, flag, default, text, type=_NUMBER)
    online = DpsdaRunConfig()
    _option(run, "--trials", online.trials, "dpsda: independent runs on the same function sequence", type=int)
    _option(run, "--window", online.window, "dpsda: connectivity window B of the graph sequence", type=int)
    _option(run, "--weights", online.weights, "dpsda-c: uniform (the paper's 1/deg) or metropolis (symmetric W)")
    _option(run, "--gradient-noise", online.gradient_noise, "dpsda: std of the gradient error xi (§6)", type=_NUMBER)
    _option(run, "--eta", defaults.eta, "penalty eta; madmm: eta_i(1), one or one per node", type=_NUMBERS)
    _option(run, "--theta", defaults.theta, "madmm, pp, dvp: dual step size theta", type=_NUMBER)
    _option(run, "--growth", defaults.growth, "madmm: q_i in eta_i(1) q_i^(t-1), one or one per node", type=_NUMBERS)
    _option(run, "--gamma", defaults.gamma, "radmm, private-radmm: even-step weight gamma", type=_NUMBER)
    _option(run, "--alpha", defaults.alpha, "pp, dvp, pvp, private-radmm: noise parameter alpha_i(t), a number, "
            "one per node or a formula in t and i (inf: no noise)", type=_NOISE)
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.add_argument("--export-problem", metavar="FILE.npz", help="write X_i, y_i, C, rho and the adjacency")

    bound = command("bound", "evaluate a paper's privacy-loss bound and its preconditions")
    bounds = BoundConfig()
    bounded = bound_mechanisms()
    bound.add_argument("mechanism", choices=bounded + tuple(OLD_NAMES) + REGISTRY.names("sharing")
                       + REGISTRY.names("online"),
                       metavar="MECHANISM", help="; ".join(f"{name}: {REGISTRY[name].theorem}" for name in bounded)
                       + "; " + "; ".join(f"{name}: {REGISTRY[name].theorem}"
                                          for name in REGISTRY.names("sharing", private=True) + REGISTRY.names("online"))
                       + " (radmm: the old name of private-radmm; sharing: the claim of dp-sharing)")
    _setting_options(bound, bounds)
    _option(bound, "--eta", bounds.eta, "eta_i(t): a number, one per node or a formula in t, i (radmm: one number)",
            type=_SCHEDULE)
    _option(bound, "--theta", bounds.theta, "pp, dvp: dual step size theta", type=_NUMBER)
    _option(bound, "--alpha", bounds.alpha, "alpha_i(t) (radmm: alpha_i(k)); inf means no noise", type=_NOISE)
    _option(bound, "--c1", bounds.c1, "bound on L'' used in the theorem (logistic loss: 0.25); sharing: bound on "
            "R_m'' (1 for R = ||x||^2/2)", type=_NUMBER)
    sharing_bound = SharingBoundConfig()
    _option(bound, "--features", sharing_bound.features, "sharing: d_m per party, e.g. 66,57", type=_INTEGERS)
    for flag, default, text in (("--lam", sharing_bound.lam, "sharing: lambda"),
                                ("--b1", sharing_bound.b1, "sharing: bound b1 of Assumption 2.1"),
                                ("--epsilon", sharing_bound.epsilon, "sharing: epsilon per iteration"),
                                ("--delta", sharing_bound.delta, "sharing: delta per iteration"),
                                ("--delta-prime", sharing_bound.delta_prime, "sharing: delta' of Corollary 1")):
        _option(bound, flag, default, text, type=_NUMBER)
    bound.add_argument("--json", action="store_true", help="print one JSON object")

    conditions = command("conditions", "decide a convergence theorem's conditions exactly, with certificates")
    plain = ConditionsConfig(lipschitz=("1",))
    conditions.add_argument("theorem", choices=THEOREMS + ("sharing",), metavar="THEOREM",
                            help="madmm: M-ADMM Thm 3.1/3.2; radmm: R-ADMM Thm III.1; sharing: ADMM-sharing "
                            "Assumption 1.2 and Lemma 4")
    plain_sharing = SharingConditionsConfig()
    _option(conditions, "--parties", plain_sharing.parties, "sharing: parties M", type=int)
    _option(conditions, "--lam", plain_sharing.lam, "sharing: lambda (the penalty is --rho)", type=_RATIONAL)
    _option(conditions, "--graph", plain.graph, "ring:N, path:N, star:N, complete:N or an edge-list file")
    _option(conditions, "--eta", plain.eta, "eta (madmm: eta_i(1)), one or one per node", type=_RATIONALS)
    _option(conditions, "--gamma", plain.gamma, "radmm: gamma >= 0", type=_RATIONAL)
    _option(conditions, "--theta", plain.theta, "madmm: dual step theta", type=_RATIONAL)
    _option(conditions, "--growth", plain.growth, "madmm: q_i in eta_i(1) q_i^(t-1)", type=_RATIONALS)
    _option(conditions, "--lipschitz", None, "M_i, one or one per node (else from --dataset)", type=_RATIONALS)
    _option(conditions, "--strong-convexity", None, "madmm: m_i (else rho/N from --dataset)", type=_RATIONALS)
    _option(conditions, "--dataset", None, "compute m_i, M_i from synthetic, breast-cancer, adult or adult:PATH")
    _option(conditions, "--C", plain.C, "C of eq. (1), with --dataset", type=_RATIONAL)
    _option(conditions, "--rho", plain.rho, "rho of eq. (1), with --dataset", type=_RATIONAL)
    _option(conditions, "--seed", plain.seed, "data seed, with --dataset", type=int)
    _option(conditions, "--L", plain.big_l, "radmm: L > 0 in (24)-(25)", type=_RATIONAL, dest="big_l")
    _option(conditions, "--mu", plain.mu, "mu > 1 in (24)-(25) / (21)-(23)", type=_RATIONAL)
    _option(conditions, "--delta", plain.delta, "madmm: delta in (21)-(22)", type=_RATIONAL)
    _option(conditions, "--at", plain.at, "madmm: t for Theorem 3.2", type=int)
    _option(conditions, "--horizon", plain.horizon, "madmm: check the proof claims for t = 1..T", type=int)
    _option(conditions, "--find-gamma", None, "radmm: certified minimal gamma", action="store_true")
    _option(conditions, "--max-time", None, "stop long exact work after this many seconds and report "
            "the best certified result so far (exit status 4)", type=_NUMBER)
    conditions.add_argument("--json", action="store_true", help="print one JSON object")

    audit = command("audit", "test a mechanism's (epsilon, delta)-DP claim on neighbouring datasets: third-party "
                    "code (audit code) or a registered mechanism (audit "
                    + ", ".join(REGISTRY.names(private=True)) + ")")
    targets = audit.add_subparsers(dest="target", required=True, metavar="TARGET")

    def target(name: str, help: str, aliases: tuple[str, ...] = ()) -> argparse.ArgumentParser:
        sub = targets.add_parser(name, help=help, description=help, epilog=EXIT_STATUS, aliases=list(aliases),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
        sub.add_argument("--json", action="store_true", help="print one JSON object")
        sub.add_argument("--quiet", action="store_true", help="no progress bar")
        _option(sub, "--report", None, "also write audit.html and audit.json for this audit into this folder")
        return sub

    code = target("code", "audit third-party code: FILE.py:NAME, module:NAME or FILE.m:FUNCTION (GNU Octave), run "
                  "only in worker processes")
    plain_audit = AuditSettings()
    _option(code, "--mechanism", None, "FILE.py:NAME or module:NAME: mechanism(data, rng) or mechanism(data) -> what "
            "an observer sees (numbers, arrays, strings, None, lists, sets, dicts, nested); or FILE.m:FUNCTION: out = "
            "FUNCTION(data), run in GNU Octave with its generators seeded per sample (FUNCTION_batch(data, n) is used "
            "when present)")
    _option(code, "--neighbors", None, "FILE.py:NAME or module:NAME: () -> admmcheck.audit.Pair(d0, d1), or "
            "Pairs([...]) for several; FILE.m:FUNCTION: [d0, d1] = FUNCTION(); or data files: D0.csv,D1.csv or "
            "PAIR.npz (arrays d0, d1, or X0, y0, X1, y1)")
    _option(code, "--epsilon", None, "the epsilon the mechanism claims", type=_NUMBER)
    _option(code, "--delta", 0.0, "the delta the mechanism claims", type=_NUMBER)
    _option(code, "--neighbour-kind", None, "instead of --neighbors, search the neighbours: replace-one or "
            "add-remove of a record of --dataset, or query-answers: StatDP's patterns on --queries answers",
            choices=NEIGHBOUR_KINDS)
    _option(code, "--dataset", None, "the records whose neighbours are searched: FILE.csv (numbers; a header line "
            "of names allowed) or FILE.npz (X, and y for labels); the mechanism receives X, or (X, y) with labels")
    _option(code, "--label-column", None, "the CSV column (by its header name) holding the labels")
    _option(code, "--record-domain", None, "replace-one: where a replaced record may lie: " + DOMAIN_FORMS)
    _option(code, "--queries", None, "query-answers: how many query answers the mechanism takes", type=int)
    _audit_settings_options(code, plain_audit, third_party=True)
    _search_options(code, SearchSettings())

    reference = ReferenceAuditConfig()
    for name in consensus_mechanisms():
        spec = REGISTRY.mechanism(name)
        sub = target(name, f"audit our {spec.title} on a small setting against "
                     + (f"its theorem's beta ({spec.theorem})" if spec.claim else "the epsilon you give (--epsilon)"),
                     aliases=tuple(old for old, new in OLD_NAMES.items() if new == name))
        if spec.claim is None:
            _option(sub, "--epsilon", None, "the epsilon to audit against (this mechanism has no theorem)",
                    type=_NUMBER)
        _audit_settings_options(sub, spec.audit)
        for flag, default, text in (("--dataset", reference.dataset, "synthetic, breast-cancer, adult or adult:PATH"),
                                    ("--graph", reference.graph, "network")):
            _option(sub, flag, default, text)
        for flag, dest, default, text in (("--nodes", "nodes", reference.nodes, "nodes N"),
                                          ("--iterations", "iterations", reference.iterations, "iterations T"),
                                          ("--rows", "samples", reference.samples, "synthetic rows"),
                                          ("--dim", "dim", reference.dim, "synthetic dimension")):
            _option(sub, flag, default, text, type=int, dest=dest)
        for flag, default, text in (("--C", reference.C, "C of eq. (1)"), ("--rho", reference.rho, "rho of eq. (1)")):
            _option(sub, flag, default, text, type=_NUMBER)
        if "theta" in spec.parameters:
            _option(sub, "--theta", reference.theta, "dual step size theta", type=_NUMBER)
        if "gamma" in spec.parameters:
            _option(sub, "--gamma", reference.gamma, "even-step weight gamma", type=_NUMBER)
        if "eta" in spec.parameters:
            _option(sub, "--eta", reference.eta, "penalty eta (a schedule eta_i(t) where the algorithm allows one)",
                    type=_SCHEDULE)
        _option(sub, "--alpha", reference.alpha, "noise parameter alpha_i(t)", type=_SCHEDULE)
        _option(sub, "--neighbour-kind", reference.neighbours, " or ".join(spec.neighbour_kinds) + " of one record",
                dest="neighbours")
        _option(sub, "--record", None, "NODE:INDEX: change this record (default: the neighbour search chooses among "
                "every record of every node)", type=_place)
        _search_options(sub, spec.search)
        if spec.exact_loss is not None:
            _option(sub, "--white-box", None, "also compute the exact privacy loss of --samples transcripts under D "
                    "(loss law, privacy profile) against beta", action="store_true")
        if spec.worst_case is not None:
            _option(sub, "--search", None, "with --white-box: search transcripts and neighbour records for the "
                    "largest loss", action="store_true")
            _option(sub, "--plot", None, "with --white-box: write the loss histogram and delta(epsilon) here "
                    "(.png or .svg)")

    sharing_audit = SharingAuditConfig()
    for name in REGISTRY.names("sharing", private=True):
        spec = REGISTRY.mechanism(name)
        sub = target(name, f"audit {spec.title} against its claim ({spec.theorem}) on a small problem")
        _audit_settings_options(sub, spec.audit)
        for flag, dest, default, text in (("--parties", "parties", sharing_audit.parties, "parties M"),
                                          ("--rows", "samples", sharing_audit.samples, "synthetic rows"),
                                          ("--dim", "dim", sharing_audit.dim, "synthetic dimension"),
                                          ("--iterations", "iterations", sharing_audit.iterations, "iterations T")):
            _option(sub, flag, default, text, type=int, dest=dest)
        for flag, default, text in (("--epsilon", sharing_audit.epsilon, "epsilon per iteration that sets sigma "
                                     "(dp-sharing: Theorem 1); the audited claim is the total over the iterations"),
                                    ("--delta", sharing_audit.delta, "delta per iteration"),
                                    ("--delta-prime", sharing_audit.delta_prime, "delta' of the composition "
                                     "(dp-sharing: Corollary 1)"),
                                    ("--rho", sharing_audit.rho, "ADMM penalty rho"),
                                    ("--lam", sharing_audit.lam, "lambda"),
                                    ("--c1", sharing_audit.c1, "bound on R_m'' (Assumption 2.2)"),
                                    ("--b1", sharing_audit.b1, "bound b1 of Assumption 2.1")):
            _option(sub, flag, default, text, type=_NUMBER)
        _option(sub, "--neighbour-kind", sharing_audit.neighbours, " or ".join(spec.neighbour_kinds)
                + " (row: one row of a party moved on the unit sphere; column: column 0 of a party negated)",
                dest="neighbours")
        _option(sub, "--row", None, "PARTY:ROW: change this row (default: the neighbour search chooses among every "
                "row of every party)", type=_place)
        _search_options(sub, spec.search)
        if spec.exact_loss is not None:
            _option(sub, "--white-box", None, "also compute the exact loss of --samples transcripts",
                    action="store_true")

    online_audit = DpsdaAuditConfig()
    for name in REGISTRY.names("online", private=True):
        sub = target(name, f"audit {REGISTRY[name].title}'s full transcript against T*epsilon ({REGISTRY[name].theorem})")
        _audit_settings_options(sub, REGISTRY.mechanism(name).audit)
        for flag, dest, default, text in (("--nodes", "nodes", online_audit.nodes, "nodes n"),
                                          ("--iterations", "iterations", online_audit.iterations, "rounds T"),
                                          ("--window", "window", online_audit.window, "connectivity window B"),
                                          ("--changed-round", "changed_round", online_audit.changed_round,
                                           "the round t0 whose function the neighbour changes, one of 1..T-1 (f_T "
                                           "moves no released message; default: the neighbour search chooses)")):
            _option(sub, flag, default, text, type=int, dest=dest)
        _search_options(sub, REGISTRY.mechanism(name).search)
        _option(sub, "--epsilon", online_audit.epsilon, "epsilon per round that sets the Laplace scale (Lemma 1); "
                "the audited claim is T*epsilon", type=_NUMBER)
        _option(sub, "--white-box", None, "also compute the exact loss of --samples transcripts and its worst case",
                action="store_true")

    attack = command("attack", "run a reconstruction attack on PP (M-ADMM supplement, Appendix E)")
    plain_attack = AttackConfig()
    attack.add_argument("attack", choices=["kkt"], help="kkt: recover a hidden record's direction from the KKT condition")
    who = attack.add_mutually_exclusive_group()
    who.add_argument("--public-eta", dest="public_eta", action="store_true", default=argparse.SUPPRESS,
                     help="the attacker knows the penalties eta_i(t) (default)")
    who.add_argument("--private-eta", dest="public_eta", action="store_false", default=argparse.SUPPRESS,
                     help="node 0 draws its penalties privately; the attacker assumes theta")
    for flag, dest, default, text in (("--nodes", "nodes", plain_attack.nodes, "nodes N"),
                                      ("--iterations", "iterations", plain_attack.iterations, "iterations T"),
                                      ("--rows", "samples", plain_attack.samples, "synthetic rows (all nodes)"),
                                      ("--dim", "dim", plain_attack.dim, "synthetic dimension"),
                                      ("--trials", "trials", plain_attack.trials, "independent runs"),
                                      ("--seed", "seed", plain_attack.seed, "seed of data, noise and penalties")):
        _option(attack, flag, default, text, type=int, dest=dest)
    for flag, default, text in (("--eta", plain_attack.eta, "public penalty eta_i(t)"),
                                ("--theta", plain_attack.theta, "dual step theta"),
                                ("--alpha", plain_attack.alpha, "noise parameter alpha_i(t)"),
                                ("--C", plain_attack.C, "C of eq. (1)"), ("--rho", plain_attack.rho, "rho of eq. (1)")):
        _option(attack, flag, default, text, type=_NUMBER)
    _option(attack, "--dataset", plain_attack.dataset, "synthetic, breast-cancer, adult or adult:PATH")
    _option(attack, "--graph", plain_attack.graph, "network")
    attack.add_argument("--json", action="store_true", help="print one JSON object")

    experiment = command("experiment", "rerun a paper's figure (accuracy/privacy or convergence)")
    plain_experiment = ExperimentConfig()
    experiment.add_argument("name", choices=EXPERIMENTS, metavar="NAME", help=", ".join(EXPERIMENTS) +
                            " (madmm-fig3/4 default to --nodes 100 --graph random; radmm-fig1 runs its own random "
                            "networks of 5 and 20 nodes)")
    _setting_options(experiment, plain_experiment)
    _option(experiment, "--runs", plain_experiment.runs, "independent noisy runs per setting", type=int)
    experiment.add_argument("--out", default="experiments",
                            help="folder for NAME.json, NAME.csv, NAME.png (default: experiments)")
    experiment.add_argument("--json", action="store_true", help="print the summary as JSON")
    return parser


def _audit_settings_options(parser: argparse.ArgumentParser, defaults: AuditSettings, third_party: bool = False) -> None:
    """The flags of :class:`~admmcheck.audit.running.settings.AuditSettings` (defaults: this target's)."""
    _option(parser, "--samples", defaults.samples, "samples per side", type=int, dest="audit_samples")
    _option(parser, "--confidence", defaults.confidence, "confidence of the lower bound", type=_NUMBER)
    _option(parser, "--seed", defaults.seed, "seed of every sample" + ("" if third_party else " and of the data"),
            type=int)
    _option(parser, "--workers", None, "worker processes (default: every core; with --scheduler, the cluster's "
            "threads)", type=int)
    _option(parser, "--scheduler", None, "draw the blocks on the Dask cluster at this address (tcp://HOST:8786); "
            'needs pip install "admmcheck[dask]"')
    _option(parser, "--timeout", defaults.timeout, "seconds one mechanism call may take", type=_NUMBER)
    _option(parser, "--max-time", None, "stop drawing after this many seconds and bound what was drawn", type=_NUMBER)
    _option(parser, "--memory-limit", None, "MiB of memory each worker process may allocate (default: half the "
            "machine's memory shared out among the workers); past it an allocation fails and the audit stops",
            type=_NUMBER)
    _option(parser, "--max-output", defaults.max_output, "MiB one output may take as float64 numbers", type=_NUMBER)
    _option(parser, "--checkpoint", None, "store finished blocks here; rerun the same command to resume")
    _option(parser, "--sequential", None, "draw in growing looks and stop as soon as a violation is established (an "
            "anytime-valid test by betting), else at --samples; the JSON gives the samples used", action="store_true")
    if third_party:
        _option(parser, "--randomness", defaults.randomness, "seeded: outputs must be functions of the sample's seed "
                "(same seed, same result); unseeded: the mechanism draws its own randomness (secrets, os.urandom), "
                "samples are independent but not reproducible, never probed; auto: probe, and go on unseeded with a "
                "warning if the same seed gives different outputs", choices=RANDOMNESS_MODES)
        parser.add_argument("--exceptions-are-outputs", action="store_true", default=argparse.SUPPRESS,
                            help="a call that raises releases the exception's type (an output like any other) "
                                 "instead of stopping the audit")


def _search_options(parser: argparse.ArgumentParser, defaults: SearchSettings) -> None:
    """The flags of :class:`~admmcheck.audit.search.SearchSettings`: the neighbour search's budget."""
    _option(parser, "--search-candidates", defaults.candidates, "neighbour search: candidate pairs screened at most "
            "(a seeded subset when there are more)", type=int)
    _option(parser, "--search-samples", defaults.samples, "neighbour search: screening samples per side for each "
            "candidate (drawn apart from the audit's)", type=int)
    _option(parser, "--search-keep", defaults.keep, "neighbour search: the best-screened pairs bounded on fresh "
            "samples (1 - confidence is shared among them only)", type=int)


def _setting_options(parser: argparse.ArgumentParser, defaults: object) -> None:
    """The flags every command that builds a problem shares (defaults from its config)."""
    _option(parser, "--dataset", defaults.dataset, "synthetic, breast-cancer, adult or adult:PATH[,PATH]")
    _option(parser, "--nodes", defaults.nodes, "number of nodes N", type=int)
    _option(parser, "--graph", defaults.graph, "network: " + ", ".join(GRAPH_KINDS), choices=GRAPH_KINDS)
    _option(parser, "--iterations", defaults.iterations, "iterations T", type=int)
    _option(parser, "--seed", defaults.seed, "seed of the data, partition, random graph and f(0)", type=int)
    _option(parser, "--C", defaults.C, "C of eq. (1)", type=_NUMBER)
    _option(parser, "--rho", defaults.rho, "rho of eq. (1)", type=_NUMBER)
    _option(parser, "--samples", defaults.samples, "synthetic: rows", type=int)
    _option(parser, "--dim", defaults.dim, "synthetic: feature dimension", type=int)


def _names(text: str) -> tuple[str, ...]:
    """``--only pp,dvp``: the comma-separated names, each non-empty."""
    names = tuple(name.strip() for name in text.split(","))
    if not all(names):
        raise argparse.ArgumentTypeError(f"{text!r}: give registered names separated by commas, e.g. pp,dvp")
    return names


def _flags(args: argparse.Namespace) -> dict[str, object]:
    """The configuration fields the user typed (and the positional choice)."""
    return {name: value for name, value in vars(args).items() if name not in OUTPUT_FLAGS}


def _command_verify(args: argparse.Namespace) -> int:
    profile = PROFILES[args.profile]
    if args.iterations is not None:
        profile = replace(profile, iterations=args.iterations)
    if args.seed < 0:
        raise InvalidConfiguration(f"--seed {args.seed} must be >= 0")
    output_folder(args.out, "--out")  # fail before the work, not after it
    say = (lambda message: print(f"admmcheck verify: {message} ...", file=sys.stderr)) if sys.stderr.isatty() else None
    report = collect(profile, seed=args.seed, progress=say, command_line="admmcheck " + " ".join(sys.argv[1:]),
                     only=args.only)
    paths = render(report, args.out)
    if args.json:
        print(to_json(report.to_dict() | {"files": {k: str(v) for k, v in paths.items()}}))
    else:
        print(f"{'algorithm':<11} {'verdict':<15} {'check':<58} key figure")
        for v in report.verdicts:
            print(f"{v.algorithm:<11} {v.verdict:<15} {v.check[:58]:<58} {v.figure}")
        for finding in report.findings:
            print(f"\nFinding ({finding['algorithm']}): {finding['title']}\n  {finding['evidence']}")
        counts = report.counts()
        print("\n" + ", ".join(f"{n} {name}" for name, n in counts.items() if n))
        print(f"report: {paths['html']} (and {paths['json']}, figures beside them)")
    counts = report.counts()
    return EXIT_CHECK_FAILED if counts["fail"] or counts["violation"] else EXIT_OK


def _command_report(args: argparse.Namespace) -> int:
    from admmcheck.inputs import read_text_file
    from admmcheck.report.model import Report

    text = read_text_file(args.file, "report file", InvalidConfiguration, "the JSON that admmcheck verify wrote")
    try:
        report = Report.from_dict(json.loads(text))
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidConfiguration(f"{args.file} is not a report.json written by admmcheck verify ({exc})") from None
    paths = render(report, args.out or Path(args.file).parent)
    print(f"report: {paths['html']}")
    return EXIT_OK


def _command_run(args: argparse.Namespace) -> int:
    flags = _flags(args)
    if flags["algorithm"] in REGISTRY.names("online"):
        summary = execute_dpsda(config_from_flags(DpsdaRunConfig, flags))
        keys = ("algorithm", "nodes", "iterations", "epsilon", "sigma", "regret", "regret_over_T", "average_regret",
                "regret_bound", "wall_time_s")
    elif flags["algorithm"] in REGISTRY.names("sharing"):
        summary = execute_sharing(config_from_flags(SharingRunConfig, flags), export_problem=args.export_problem)
        keys = ("algorithm", "dataset", "parties", "features", "iterations", "objective_gap", "residual", "wall_time_s")
    else:
        summary = execute(config_from_flags(RunConfig, flags), export_problem=args.export_problem).summary()
        keys = ("algorithm", "dataset", "nodes", "graph", "iterations", "objective_gap", "consensus_error", "wall_time_s")
    if args.json:
        print(to_json(summary))
    else:
        for key in keys:
            print(f"{key:<16} {summary[key]}")
        if "privacy" in summary:
            privacy = summary["privacy"]
            print(f"{'sigma':<16} {privacy['sigma']} (Theorem 1 for epsilon = {privacy['epsilon']} per iteration)")
            print(f"{'claimed total':<16} epsilon' = {privacy['epsilon_total']:.4g}, delta = {privacy['delta_total']:.3g} "
                  "(Corollary 1)")
    return EXIT_OK


def _command_bound(args: argparse.Namespace) -> int:
    if args.mechanism in REGISTRY.names("sharing"):
        return _command_sharing_bound(args)
    if args.mechanism in REGISTRY.names("online"):
        flags = {k: v for k, v in _flags(args).items() if k != "mechanism"}
        config = config_from_flags(DpsdaRunConfig, flags | {"algorithm": args.mechanism})
        summary = dpsda_bound_summary(config)
        if args.json:
            print(to_json(summary))
        else:
            print(f"{summary['theorem']}: per round epsilon = {summary['epsilon']}, sigma = {summary['sigma']:.6g} "
                  f"(sensitivity {summary['sensitivity']:.6g}), total {summary['epsilon_total']}; regret bound "
                  f"{summary['regret_bound']:.6g} at T = {config.iterations}")
            for name, ok in summary["preconditions"].items():
                print(f"  {'holds' if ok else 'FAILS':<6} {name}")
        return EXIT_OK if not summary["failed"] else EXIT_CHECK_FAILED
    flags = _flags(args)
    config = config_from_flags(BoundConfig, flags | {"mechanism": OLD_NAMES.get(args.mechanism, args.mechanism)})
    bound, setting = evaluate_bound(config)
    parameters = {"eta": describe_schedule(config.eta), "alpha": describe_schedule(config.alpha), "c1": config.c1}
    if "theta" in REGISTRY[config.mechanism].parameters:
        parameters["theta"] = config.theta
    summary = bound.summary() | {
        "mechanism": config.mechanism,
        "iterations": config.iterations,
        "parameters": parameters,
        "setting": {
            "dataset": config.dataset, "graph": config.graph, "sizes": list(setting.sizes),
            "degrees": list(setting.degrees), "C": setting.C, "rho": setting.rho,
            "max_feature_norm": setting.max_feature_norm, "c1": setting.c1,
        },
    }
    if args.json:
        print(to_json(summary))
    else:
        beta = summary["beta"]
        shown = "refused" if beta is None else "inf (no noise: no finite guarantee)" if beta == float("inf") else beta
        print(f"{bound.theorem}: beta = {shown}")
        print(f"  formula value max_i sum = {summary['formula_value']}; per node: "
              + ", ".join(str(v) for v in summary["per_node"]))
        for name, ok in bound.preconditions.items():
            print(f"  {'holds' if ok else 'FAILS':<6} {name}")
    return EXIT_OK if bound.holds else EXIT_CHECK_FAILED


def _command_sharing_bound(args: argparse.Namespace) -> int:
    privacy = evaluate_sharing_bound(config_from_flags(SharingBoundConfig, _flags(args)))
    summary = privacy.as_dict()
    if args.json:
        print(to_json(summary))
    else:
        print(f"{summary['theorem']}")
        for m, sigma in enumerate(summary["sigma"]):
            sensitivity = f"sensitivity C = {summary['sensitivity'][m]:.6g}, " if "sensitivity" in summary else ""
            print(f"  party {m} (d_m = {summary['features'][m]}): {sensitivity}sigma = {sigma:.6g}")
        line = (f"  per iteration ({summary['epsilon']}, {summary['delta']:g}); over T = {summary['iterations']}: "
                f"claimed ({summary['epsilon_total']:.6g}, {summary['delta_total']:.3g}), basic composition "
                f"({summary['basic_composition']['epsilon']:.6g}, {summary['basic_composition']['delta']:.3g})")
        accounted = [f"{key[len('epsilon_'):].upper()} {value:.6g}" for key, value in summary.get("accountant", {}).items()
                     if key.startswith("epsilon_")]
        if accounted:
            line += ", dp-accounting " + " / ".join(accounted)
        print(line)
        for name, ok in summary["preconditions"].items():
            print(f"  {'holds' if ok else 'FAILS':<6} {name}")
    return EXIT_OK if privacy.holds else EXIT_CHECK_FAILED


def _command_sharing_conditions(args: argparse.Namespace) -> int:
    report = evaluate_sharing_conditions(config_from_flags(SharingConditionsConfig, _flags(args)))
    if args.json:
        print(to_json(report))
    else:
        print(f"ADMM sharing, Assumption 1.2 / Lemma 4 at rho = {report['rho_float']:.6g} on {report['dataset']} "
              f"({report['parties']} parties, widths {report['features']})")
        for name, check in report["checks"].items():
            verdict = {True: "holds", False: "FAILS", None: "undecided"}[check["holds"]]
            print(f"  {verdict:<9} {name}: {check['statement']}")
        low, high = report["minimal_rho"]["lo_float"], report["minimal_rho"]["hi_float"]
        print(f"  smallest rho satisfying (b) and (c): in [{low:.10g}, {high:.10g}]")
    return EXIT_OK if report["holds"] else EXIT_CHECK_FAILED  # undecided counts as not shown to hold


def _command_conditions(args: argparse.Namespace) -> int:
    if args.theorem == "sharing":
        return _command_sharing_conditions(args)
    config = config_from_flags(ConditionsConfig, _flags(args))
    report = evaluate_conditions(config, show_progress=not args.json or sys.stderr.isatty())
    if args.json:
        print(to_json(report))
    else:
        print(f"{report['theorem']} on {report['graph']}: {report['parameters']}")
        for check in report["conditions"]:
            verdict = {True: "holds", False: "FAILS", None: "undecided"}[check["holds"]]
            where = f" (t={check['t']})" if "t" in check else ""
            print(f"  {verdict:<9} {check['name']}{where}")
            if "stopped" in check:
                print(f"            {check['stopped']}; every t in {check['checked_t']} holds")
        if "gamma_interval" in report:
            interval = report["gamma_interval"]
            if interval is not None:
                note = "" if report["complete"] else " -- time budget ran out: best certified bracket so far"
                print(f"  minimal gamma: in [{interval['lo']}, {interval['hi']}] (width {interval['width']:.2e}){note}")
            elif report["complete"]:
                print("  minimal gamma: none: no gamma >= 0 satisfies the conditions")
            else:
                print("  minimal gamma: not found before the time budget ran out (no verdict; raise --max-time)")
    return {"pass": EXIT_OK, "fail": EXIT_CHECK_FAILED, "incomplete": EXIT_INCOMPLETE}[report["status"]]


def _command_experiment(args: argparse.Namespace) -> int:
    config = ExperimentConfig.from_flags(_flags(args))
    experiment, paths = execute_experiment(config, args.out)
    summary = experiment.summary() | {"files": {kind: str(path) for kind, path in paths.items()}}
    if args.json:
        print(to_json(summary))
    else:
        print(f"{'panel':<16} {'setting':<34} {'L_mean(T)':>10} {'L_range(T)':>10} {'P(T)':>8}")
        for row in summary["settings"]:
            print(f"{row['panel']:<16} {row['label']:<34} {row['L_mean_T']:>10.4f} "
                  f"{row['L_range_T']:>10.4f} {row['P_T']:>8.4f}")
        print("written: " + ", ".join(summary["files"].values()))
    return EXIT_OK


SETTINGS_FLAGS = {"audit_samples": "samples"} | {name: name for name in SETTINGS_FIELDS if name != "samples"}
SEARCH_FLAGS = ("search_candidates", "search_samples", "search_keep")
#: the field of each audit configuration that gives the neighbours by hand (None: they are searched)
GIVEN_PAIR = {CodeAuditConfig: "neighbors", ReferenceAuditConfig: "record", SharingAuditConfig: "row",
              DpsdaAuditConfig: "changed_round"}


def _audit_config(config_type: type, flags: dict):
    """``config_type`` from the typed flags; its settings are its own defaults (a registered mechanism's,
    seeded by the configuration's seed) with the typed audit-setting flags. ``--seed`` seeds both the
    data and the samples where the configuration has a seed of its own."""
    own = {f.name for f in dataclass_fields(config_type)}
    typed = {SETTINGS_FLAGS[name]: (flags[name] if name in own else flags.pop(name))
             for name in list(flags) if name in SETTINGS_FLAGS}
    search = {name.removeprefix("search_"): flags.pop(name) for name in list(flags) if name in SEARCH_FLAGS}
    config = config_from_flags(config_type, flags)
    config = replace(config, settings=config.settings.but(**typed))
    if search:
        given = GIVEN_PAIR[config_type]
        if getattr(config, given) is not None:
            raise InvalidConfiguration(f"--search-{next(iter(search))} is the neighbour search's budget, but "
                                       f"--{given.replace('_', '-')} gives the neighbours: nothing is searched; "
                                       "remove one of them")
        try:
            config = replace(config, neighbour_search=replace(config.neighbour_search, **search))
        except InvalidConfiguration as exc:
            raise InvalidConfiguration(f"--search-{exc.parameter} {str(exc).partition('=')[2]}") from None
    return config


def _command_audit(args: argparse.Namespace) -> int:
    flags = {name: value for name, value in _flags(args).items() if name not in ("quiet", "target")}
    target = OLD_NAMES.get(args.target, args.target)
    page = args.page = flags.pop("report", None)
    if page is not None:
        output_folder(page, "--report")  # refused before any sampling
    progress = not args.quiet and sys.stderr.isatty()
    if target == "code":
        result, extra = run_audit(_audit_config(CodeAuditConfig, flags), progress=progress), {}
    elif REGISTRY.mechanism(target).family == SHARING:
        return _command_sharing_audit(args, flags | {"mechanism": target}, progress)
    elif REGISTRY.mechanism(target).family == ONLINE:
        return _command_dpsda_audit(args, flags | {"algorithm": target}, progress)
    else:
        white = {name: flags.pop(name) for name in ("white_box", "search", "plot") if name in flags}
        if white and not white.get("white_box"):
            raise InvalidConfiguration(f"--{next(iter(white)).replace('_', '-')} needs --white-box")
        config = _audit_config(ReferenceAuditConfig, flags | {"mechanism": target})
        if white.get("plot"):
            output_file(white["plot"], "--plot")
        result, bound = run_reference_audit(config, progress=progress)
        extra = {"theorem": bound}
        if white:
            config = replace(config, record=audited_place(result, config.record))  # the pair the audit used
            extra["white_box"] = run_white_box(config, WhiteBoxConfig(config.settings.samples, bool(white.get("search")),
                                                                      white.get("plot")), progress=progress)
            extra["black_box_within_white_box"] = result.epsilon_lower_bound <= extra["white_box"]["max_loss"]
    summary = result.as_dict() | extra
    if page is not None:
        _write_audit_page(summary, page, args)
    if args.json:
        print(to_json(summary))
    else:
        _print_audit_head(summary, f"claimed epsilon = {summary['claimed_epsilon']}, delta = {summary['claimed_delta']}")
        drawn = summary["samples_used"]
        # what was drawn, where it is not what was asked: a sequential audit that stopped, or --max-time run out
        used = "" if drawn["total"][0] == summary["samples"] else f"{drawn['total'][0]} of "
        split = ("" if summary["mode"] != "fixed-n" or not used else
                 f" ({drawn['selection'][0]} chose the events, {drawn['bounding'][0]} bounded them)")
        print(f"  {used}{summary['samples']} samples per side{split}, seed {summary['seed']}, "
              f"{summary['wall_time_s']:.1f} s")
        if not summary["reproducible"]:
            print(f"  not reproducible from the seed: {summary['randomness']['reason']}")
        for note in summary["notes"]:
            print(f"  note: {note}")
        if "white_box" in summary:
            _print_white_box(summary["white_box"])
    white_violation = summary.get("white_box", {}).get("verdict") == "violation"
    return EXIT_CHECK_FAILED if result.verdict == "violation" or white_violation else EXIT_OK


def _write_audit_page(summary: dict, folder: str, args: argparse.Namespace) -> None:
    from admmcheck.report.audit_page import write_audit_page
    from admmcheck.report.model import package_versions

    summary.update(command="admmcheck " + shlex.join(args.argv), versions=package_versions())
    paths = write_audit_page(summary, folder)
    if not args.json:
        print(f"written: {paths['html']}")


def _print_audit_head(summary: dict, claim: str) -> None:
    print(f"{summary['verdict']}: epsilon {'>' if strict_bound(summary) else '>='} {summary['epsilon_lower_bound']:.4f} "
          f"with confidence "
          f"{summary['confidence']} ({claim})")
    if summary.get("epsilon_estimate") == float("inf"):
        never = "d1" if summary["event_more_likely_under"] == "d0" else "d0"
        # a zero count is what was seen, not a support mismatch: only the bound above is established
        print(f"  point estimate: infinite: {never} gave no output in this event in the "
              f"{summary[f'p_{never}']['n']} samples counted (the ratio of the frequencies; the bound above is what "
              "the samples establish)")
    for finding in summary.get("findings", ()):
        print(f"  finding: {finding}")
    search = summary.get("neighbour_search")
    if search:
        print(f"  neighbours found by the search: {search['found']['change']} (of {search['candidates_screened']} "
              f"candidates screened on {search['screening_samples_per_side']} samples per side, {search['kept']} "
              "bounded)")
    sequential = summary.get("sequential")
    if sequential:
        print(f"  sequential test: e-value {sequential['e_value']:.4g} (a violation at >= {sequential['threshold']:.4g}) "
              f"after {len(sequential['looks'])} looks")
    print(f"  event: {summary['event']}")
    for side in ("p_d0", "p_d1"):
        p = summary[side]
        shown = " (in the last look)" if sequential else (f", interval [{p['interval'][0]:.4g}, "
                                                                     f"{p['interval'][1]:.4g}]")
        print(f"  P[event | {side[2:]}] = {p['count']}/{p['n']}{shown}")
    lead, *others = summary.get("candidates") or [{}]
    for leg in others if sequential else ():  # the deciding bet's other legs (sequential.paired_bet)
        if (leg.get("pair"), leg.get("slot")) == (lead.get("pair"), lead.get("slot")):
            print(f"  in the same bet: {leg['event']}: {leg['counts'][0]}/{leg['n'][0]} under d0, "
                  f"{leg['counts'][1]}/{leg['n'][1]} under d1")


def _family_audit(args: argparse.Namespace, flags: dict, progress: bool, config_type, runner, claim_text,
                  white_text) -> int:
    """An audit of dp-sharing or dpsda: the black-box verdict, and the white-box one if asked."""
    summary = runner(_audit_config(config_type, flags), progress=progress)
    if args.page is not None:
        _write_audit_page(summary, args.page, args)
    white = summary.get("white_box", {})
    if args.json:
        print(to_json(summary))
    else:
        _print_audit_head(summary, claim_text(summary))
        if white:
            print(f"white box: {white['verdict']}: {white_text(white)}")
    violation = summary["verdict"] == "violation" or white.get("verdict") == "violation"
    return EXIT_CHECK_FAILED if violation else EXIT_OK


def _command_sharing_audit(args: argparse.Namespace, flags: dict, progress: bool) -> int:
    return _family_audit(
        args, flags, progress, SharingAuditConfig, run_sharing_audit,
        lambda s: (f"claimed ({s['claimed_epsilon']:.4g}, {s['claimed_delta']:.3g}), {s['claim_used']} "
                   f"for sigma = {s['theorem']['sigma']}"),
        lambda w: (f"{w['infinite_fraction']:.1%} of {w['samples']} transcripts have infinite loss; released values lie "
                   f"at relative distance >= {w['off_support_min']:.3g} (median {w['off_support_median']:.3g}) "
                   "from col(D'_0)"))


def _command_dpsda_audit(args: argparse.Namespace, flags: dict, progress: bool) -> int:
    return _family_audit(
        args, flags, progress, DpsdaAuditConfig, run_dpsda_audit,
        lambda s: (f"claimed T*epsilon = {s['claimed_epsilon']:.4g}, sigma = {s['claims']['sigma']:.4g}; "
                   f"{s['neighbours']}"),
        lambda w: (f"max sampled loss {w['max_loss']:.4f}, mean (KL) {w['mean_loss']:.4g}, worst case "
                   f"{w['worst_case']:.4f} = {w['ratio']:.3f} x the claim; {w['nodes_contributing']} nodes contribute"))


def _print_white_box(white: dict) -> None:
    print(f"white box: {white['verdict']}: max loss {white['max_loss']:.4f} of {white['samples']} transcripts, "
          f"mean (KL) {white['mean_loss']:.4g}, beta = {white['claimed_beta']:.4f}, ratio {white['ratio']:.3f}")
    print("  quantiles: " + ", ".join(f"{level}: {q['value']:.4g}" for level, q in white["quantiles"].items()))
    if "worst_case" in white:
        worst = white["worst_case"]
        print(f"  worst case found: {worst['value']:.4f} (ratio {worst['ratio']:.3f}) at {worst['where']}")
    if "even_steps" in white:
        print(f"  even steps: max |loss| {white['even_steps']['max_abs_loss']:.3g}, "
              f"max distance to (29) {white['even_steps']['max_distance_to_29']:.3g}")
    for finding in white["findings"]:
        print(f"  finding: {finding}")
    if "plot" in white:
        print(f"  written: {white['plot']}")


def _command_attack(args: argparse.Namespace) -> int:
    summary = run_attack(config_from_flags(AttackConfig, _flags(args)))
    if args.json:
        print(to_json(summary))
        return EXIT_OK
    print(f"KKT attack on record 0 of node {summary['node']}, {summary['setting']}, {summary['trials']} trials "
          f"(alpha = {summary['alpha']}, eta = {summary['eta']}, {summary['records_per_node']} records per node)")
    print(f"{'t':>6} {'|cos|':>8} {'std':>8}")
    T = len(summary["cosine"])
    for t in sorted({1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, T} & set(range(1, T + 1))):
        print(f"{t:>6} {summary['cosine'][t - 1]:>8.3f} {summary['cosine_std'][t - 1]:>8.3f}")
    return EXIT_OK


def _command_plugins(args: argparse.Namespace) -> int:
    listing = REGISTRY.listing()
    if args.json:
        print(to_json(listing))
        return EXIT_OK
    for entry in listing["registered"]:
        source = f"{entry['package']} {entry['version']}".strip()
        point = f" (entry point {entry['entry_point']})" if entry["entry_point"] else ""
        print(f"{entry['name']:<18} {entry['family']:<10} {entry['kind']:<10} {source}{point}")
    for failure in listing["failed"]:
        print(f"failed: {failure['entry_point']} of {failure['package']} {failure['version']}: {failure['error']}")
    return EXIT_OK


COMMANDS = {
    "verify": _command_verify, "run": _command_run, "bound": _command_bound,
    "conditions": _command_conditions, "experiment": _command_experiment, "audit": _command_audit,
    "attack": _command_attack, "report": _command_report, "plugins": _command_plugins,
}


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"admmcheck: warning: {message}", file=sys.stderr)


def _new_spelling(argv: list[str]) -> list[str]:
    """``audit --mechanism ...`` (the spelling before ``audit code``) as ``audit code --mechanism ...``,
    with a one-line note: a third-party audit was the only audit without a target."""
    words = [i for i, word in enumerate(argv) if not word.startswith("-")]
    if words and argv[words[0]] == "audit":
        at = words[0] + 1
        targets = {"code", *REGISTRY.names(private=True), *OLD_NAMES}
        third_party = any(word.split("=")[0] in ("--mechanism", "--neighbors") for word in argv[at:])
        if third_party and not targets & set(argv[at:]) and argv[at].startswith("--"):
            print("admmcheck: note: a third-party audit is now spelled 'admmcheck audit code --mechanism ...'",
                  file=sys.stderr)
            return argv[:at] + ["code"] + argv[at:]
    return argv


#: Flags whose name is not the library parameter's with "--" and dashes.
FLAG_OF = {"neighbours": "--neighbour-kind", "max_time": "--max-time", "memory_limit": "--memory-limit",
           "max_output": "--max-output", "changed_round": "--changed-round",
           "widths": "--features"}


def _in_flags(exc: AdmmcheckError) -> str:
    """The error's message, with the parameter it names (``samples=10 ...``) said as its flag (``--samples 10 ...``)."""
    return said_as_flag(exc, FLAG_OF)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``admmcheck`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    with warnings.catch_warnings():  # a plugin that cannot be loaded: one line, before anything else
        warnings.simplefilter("always", PluginWarning)
        warnings.showwarning = _show_warning
        REGISTRY.load_plugins()
    try:
        args = _parser().parse_args(_new_spelling(argv))
        args.argv = argv
    except SystemExit as exc:  # argparse: --help, --version (0) or a bad flag (2, message printed)
        return exc.code if isinstance(exc.code, int) else EXIT_INVALID_INPUT
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            # CVXPY warns about inaccurate solutions; the oracle decides on them itself.
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            warnings.showwarning = _show_warning
            return COMMANDS[args.command](args)
    except AdmmcheckError as exc:
        return _fail(args, _in_flags(exc), EXIT_INVALID_INPUT)
    except MemoryError as exc:  # a size the user chose, not a bug
        return _fail(args, f"out of memory ({exc}); reduce --iterations, --nodes, --samples or the problem size",
                     EXIT_INVALID_INPUT)
    except KeyboardInterrupt:
        return _fail(args, "interrupted before a verdict", 130)
    except BrokenPipeError as exc:
        if _stdout_closed():  # the reader closed stdout early (admmcheck run ... | head): not an error of ours
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes
            return EXIT_OK
        return _bug(args, exc)  # another pipe broke: never taken for a reader that went away
    except (Exception, SystemExit) as exc:  # a bug (a SystemExit inside a command too): never exit 0 for it
        return _bug(args, exc)


def _stdout_closed() -> bool:
    """Whether stdout is a pipe whose reader has gone (poll reports an error on its write end)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _bug(args: argparse.Namespace, exc: BaseException) -> int:
    """An unexpected error inside admmcheck: one line (the traceback with --debug), exit 3."""
    if args.debug:
        traceback.print_exception(exc)
    return _fail(args, f"{type(exc).__name__}: {exc}\nThis is a bug in admmcheck; please report it with the "
                 "command line (rerun with --debug for the traceback).", EXIT_BUG, kind="internal error",
                 quiet=args.debug)


def _fail(args: argparse.Namespace, message: str, status: int, kind: str = "error", quiet: bool = False) -> int:
    """Say what went wrong on stderr and, under --json, also as a JSON object on stdout, so a script that
    parses stdout gets {"error": ..., "exit_status": ...} instead of nothing."""
    if not quiet:
        print(f"admmcheck: {kind}: {message}", file=sys.stderr)
    if getattr(args, "json", False):
        print(to_json({"error": message, "kind": kind, "exit_status": status}))
    return status


if __name__ == "__main__":
    sys.exit(main())
