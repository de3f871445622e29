"""The ``admmcheck`` command line: parses arguments into configurations and prints results.

    admmcheck verify [--json] [--iterations T]
    admmcheck run ALGO [--dataset synthetic|breast-cancer|adult|adult:PATH] [--nodes N] ...
    admmcheck bound pp|radmm [--eta SCHEDULE] [--theta X] [--alpha SCHEDULE] ...
    admmcheck conditions madmm|radmm --graph ring:5|FILE [--find-gamma] [--max-time S] ...
    admmcheck experiment madmm-fig1|madmm-fig2|madmm-fig3|madmm-fig4|radmm-fig1|radmm-fig2 [--out DIR] ...

``admmcheck COMMAND --help`` lists every flag with its default. Numbers, schedules and
rationals are read by the safe grammar of :mod:`admmcheck.foundations.formulas` (never evaluated as
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
from admmcheck.audit.running.settings import AuditSettings, SearchSettings
from admmcheck.audit.sequential import strict_bound
from admmcheck.commands.attack import AttackConfig, run_attack
from admmcheck.commands.audit import CodeAuditConfig, MechanismAudit, run_audit, run_mechanism_audit
from admmcheck.commands.canary_audit import (NOT_FOR_CANARIES, CanaryAuditConfig, CanarySlots, MechanismCanaryAudit,
                                             run_canary_audit, run_mechanism_canary_audit)
from admmcheck.commands.consensus import ExperimentConfig, execute_experiment
from admmcheck.commands.verify import PROFILES, collect
from admmcheck.claims.values import Claim
from admmcheck.foundations.errors import AdmmcheckError, InvalidConfiguration
from admmcheck.experiments.figures import EXPERIMENTS
from admmcheck.foundations.formulas import parse_number
from admmcheck.mechanisms.plugins import PluginWarning
from admmcheck.mechanisms.registry import REGISTRY
from admmcheck.foundations.output import output_folder, to_json
from admmcheck.foundations.parameters import flag_fields, flag_of
from admmcheck.report import render
from admmcheck.foundations.validation import config_from_flags, positive_int, said_as_flag

EXIT_OK, EXIT_CHECK_FAILED, EXIT_INVALID_INPUT, EXIT_BUG, EXIT_INCOMPLETE = 0, 1, 2, 3, 4
EXIT_STATUS = """exit status:
  0  everything ran and every check passed
  1  a check failed (verify), a bound's precondition fails (bound), a condition is refuted
     or undecided, or no gamma works (conditions), a privacy violation was found (audit)
  2  invalid input or an anticipated failure: the one-line message says what to change
  3  an unexpected error inside admmcheck: a bug, please report it (--debug shows the traceback)
  4  the time budget (--max-time) ran out before a verdict; the best result so far is printed
  130  interrupted (Ctrl-C) before a verdict"""

def _argument_type(read: Callable[[str], object], expected: str) -> Callable[[str], object]:
    """An argparse type that turns an admmcheck error into argparse's one-line message."""
    def convert(text: str) -> object:
        try:
            return read(text)
        except AdmmcheckError as exc:
            raise argparse.ArgumentTypeError(f"{exc} ({expected})") from None
    convert.__name__ = expected
    return convert


_NUMBER = _argument_type(parse_number, "a number such as 0.5 or 1/4")
_POSITIVE_INT = _argument_type(lambda text: positive_int("--iterations", int(text) if text.strip().lstrip("-").isdigit()
                                                        else text), "a whole number >= 1")


def _place(text: str) -> tuple[int, int]:
    parts = text.split(":")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: write two whole numbers as A:B, e.g. 0:3")
    return int(parts[0]), int(parts[1])


def _expected(read: Callable[[str], object]) -> str:
    """What a flag read by ``read`` takes, in words (argparse's message for a bad value)."""
    if read is parse_number:
        return "a number such as 0.5 or 1/4"
    return (read.__doc__ or "a value").strip().splitlines()[0].rstrip(".")


def _option(parser: argparse.ArgumentParser, flag: str, default: object, help: str, **kwargs: object) -> None:
    """A flag whose value reaches the configuration only when typed (default shown in --help)."""
    shown = ",".join(str(v) for v in default) if isinstance(default, tuple) else default
    suffix = "" if default is None else f" (default: {shown})"
    dest = kwargs.get("dest")
    if isinstance(dest, str) and ":" in dest and kwargs.get("action") is None and "choices" not in kwargs:
        kwargs["metavar"] = flag.lstrip("-").upper().replace("-", "_")  # --theta THETA, not SETTING:THETA
    parser.add_argument(flag, default=argparse.SUPPRESS, help=help + suffix, **kwargs)


def _command_parser(commands: argparse._SubParsersAction, name: str, help: str,
                    aliases: tuple[str, ...] = ()) -> argparse.ArgumentParser:
    return commands.add_parser(name, help=help, description=help, epilog=EXIT_STATUS, aliases=list(aliases),
                               formatter_class=argparse.RawDescriptionHelpFormatter)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="admmcheck",
        description="Verify private and non-private ADMM algorithms against their papers.",
        epilog=EXIT_STATUS, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"admmcheck {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _verify_parser(commands)
    plugins = _command_parser(commands, "plugins", "list every registered algorithm and mechanism with the package it "
                              "comes from (admmcheck's own, or an installed plugin's: entry-point group "
                              "admmcheck.plugins), and the plugins that could not be loaded")
    plugins.add_argument("--json", action="store_true", help="print one JSON object")
    report = _command_parser(commands, "report", "re-render report.html and the figures from a saved report.json")
    report.add_argument("file", metavar="FILE.json", help="a report.json written by admmcheck verify")
    report.add_argument("--out", default=None, help="folder for the rendered report (default: the file's folder)")
    _run_parser(commands)
    _bound_parser(commands)
    _conditions_parser(commands)
    _audit_parser(commands)
    _attack_parser(commands)
    _experiment_parser(commands)
    return parser


def _verify_parser(commands: argparse._SubParsersAction) -> None:
    verify = _command_parser(commands, "verify", "verify every algorithm's claims and write the report (JSON, HTML, "
                             "figures)")
    verify.add_argument("--out", default="reports/verify", help="report folder (default: reports/verify)")
    verify.add_argument("--profile", choices=tuple(PROFILES), default="quick",
                        help="quick (default, minutes), full (larger samples) or smoke (toy sizes)")
    verify.add_argument("--seed", type=int, default=0, help="seed of every random draw (default: 0)")
    verify.add_argument("--iterations", type=_POSITIVE_INT, default=None,
                        help="iterations per convergence run (default: the profile's, 200 for quick)")
    verify.add_argument("--json", action="store_true", help="print report.json instead of the verdict table")
    verify.add_argument("--only", type=_names, default=None, metavar="NAME[,NAME...]",
                        help="check only these registered algorithms and mechanisms (admmcheck plugins lists them; "
                             "one of admmcheck's own mechanisms is checked when registered with report=True, a "
                             "plugin's always)")
    verify.add_argument("--set", type=_assignment, action="append", default=[], metavar="NAME.FIELD=VALUE",
                        dest="changes", help="audit a plugin's mechanism NAME with its setting's FIELD at VALUE (as "
                        "its flag --FIELD reads it) instead of the setting it declares for its audit; repeatable")


def _assignment(text: str) -> tuple[str, str, str]:
    """``NAME.FIELD=VALUE`` of ``verify --set`` as (NAME, FIELD, VALUE) (FIELD as its field or its flag's name)."""
    target, equals, value = text.partition("=")
    name, dot, field_name = target.rpartition(".")
    if not (equals and dot and name and field_name):
        raise argparse.ArgumentTypeError(f"{text!r}: write NAME.FIELD=VALUE, e.g. my-variant.samples=4")
    return name, field_name.replace("-", "_"), value


def _targets(parser: argparse.ArgumentParser, what: str) -> argparse._SubParsersAction:
    return parser.add_subparsers(dest="target", required=True, metavar=what)


def _run_parser(commands: argparse._SubParsersAction) -> None:
    run = _command_parser(commands, "run", "run one registered algorithm and compare it with the CVXPY optimum (or, "
                          "online, the hindsight optimum)")
    targets = _targets(run, "ALGO")
    for name in REGISTRY:
        spec = REGISTRY[name]
        sub = _command_parser(targets, name, f"run {spec.title}")
        sub.set_defaults(name=name)
        _setting_flags(sub, spec.setting_type, "run", spec)
        sub.add_argument("--json", action="store_true", help="print one JSON object")
        if spec.family.exports_problem:
            sub.add_argument("--export-problem", metavar="FILE.npz", help="write the problem's data (and, consensus, "
                             "the adjacency)")


def _bound_parser(commands: argparse._SubParsersAction) -> None:
    bound = _command_parser(commands, "bound", "evaluate a private mechanism's claim (its theorem) and its "
                            "preconditions")
    targets = _targets(bound, "MECHANISM")
    for name in REGISTRY.names(private=True):
        spec = REGISTRY.mechanism(name)
        if not spec.supports("claim"):
            continue
        aliases = tuple(other for other in REGISTRY if REGISTRY[other].stands_for == name)
        sub = _command_parser(targets, name, f"{spec.theorem} ({spec.title})"
                              + (f"; {', '.join(aliases)}: the same" if aliases else ""), aliases)
        sub.set_defaults(name=name)
        _setting_flags(sub, spec.setting_type, "bound", spec)
        sub.add_argument("--json", action="store_true", help="print one JSON object")


def _conditions_parser(commands: argparse._SubParsersAction) -> None:
    conditions = _command_parser(commands, "conditions", "decide a convergence theorem's conditions exactly, with "
                                 "certificates")
    targets = _targets(conditions, "ALGO")
    for name in REGISTRY:
        if not REGISTRY[name].supports("conditions"):
            continue
        capability = REGISTRY[name].conditions
        sub = _command_parser(targets, name, f"{name}: {capability.theorem}")
        sub.set_defaults(name=name)
        _setting_flags(sub, capability.setting_type, "conditions")
        sub.add_argument("--json", action="store_true", help="print one JSON object")


def _audit_parser(commands: argparse._SubParsersAction) -> None:
    audit = _command_parser(commands, "audit", "test a mechanism's privacy claim on neighbouring datasets: "
                            "third-party code (audit code) or a registered mechanism (audit "
                            + ", ".join(REGISTRY.names(private=True)) + ")")
    targets = _targets(audit, "TARGET")
    code = _audit_target(targets, "code", "audit third-party code: FILE.py:NAME, module:NAME or FILE.m:FUNCTION (GNU "
                         "Octave), run only in worker processes")
    _setting_flags(code, CodeAuditConfig, "code", group="code")
    _setting_flags(code, AuditSettings, "code", defaults=AuditSettings(), group="audit")
    _setting_flags(code, SearchSettings, "code", defaults=SearchSettings(), group="search")
    canaries = _command_parser(targets, "canaries", "audit training code too expensive to run thousands of times: "
                               "one run (or a few) with canaries, each included with probability 1/2 (Steinke, Nasr & "
                               "Jagielski 2023)")
    canaries.add_argument("--json", action="store_true", help="print one JSON object")
    canaries.add_argument("--quiet", action="store_true", help="no progress bar")
    _option(canaries, "--report", None, "also write audit.html, audit.json and scores.png for this audit into this "
            "folder", dest="page")
    _setting_flags(canaries, CanaryAuditConfig, "canaries", group="code")
    _setting_flags(canaries, AuditSettings, "canaries", defaults=AuditSettings(), group="audit", skip=NOT_FOR_CANARIES)
    for name in REGISTRY.names(private=True):
        spec = REGISTRY.mechanism(name)
        aliases = tuple(other for other in REGISTRY if REGISTRY[other].stands_for == name)
        sub = _audit_target(targets, name, f"audit {spec.title} against "
                            + (f"its claim ({spec.theorem or 'stated by ' + REGISTRY.origin(name)[0]})"
                               if spec.supports("claim") else "the epsilon you give (--epsilon)")
                            + " on a small setting", aliases)
        sub.set_defaults(name=name)
        _setting_flags(sub, AuditSettings, "audit", defaults=spec.audit, group="audit")
        _setting_flags(sub, spec.setting_type, "audit", spec, skip=("seed",))  # --seed seeds data and samples
        _option(sub, "--neighbour-kind", spec.neighbour_kinds[0], " or ".join(spec.neighbour_kinds),
                dest="request:neighbours", choices=spec.neighbour_kinds)
        place, example = spec.first_place  # its own, or its family's
        _option(sub, example.split()[0], None, f"the place the neighbours change, e.g. {example} (default: the "
                "neighbour search chooses among every place whose change moves what is released)",
                dest="request:where", type=_place if isinstance(place, tuple) else _argument_type(_whole,
                                                                                                 "a whole number"))
        _setting_flags(sub, SearchSettings, "audit", defaults=spec.search, group="search")
        _setting_flags(sub, CanarySlots, "audit", group="canaries")  # a spec without canaries refuses them
        if spec.supports("white_box"):
            _option(sub, "--white-box", None, "also compute the exact privacy loss of --samples transcripts under D "
                    "against the claim", action="store_true", dest="request:white_box")
        if spec.supports("release") and spec.supports("worst_case"):
            _option(sub, "--search", None, "with --white-box: search transcripts and neighbour records for the "
                    "largest loss", action="store_true", dest="request:white_box_search")
            _option(sub, "--plot", None, "with --white-box: write the loss histogram and delta(epsilon) here "
                    "(.png or .svg)", dest="request:plot")


def _audit_target(targets: argparse._SubParsersAction, name: str, help: str,
                  aliases: tuple[str, ...] = ()) -> argparse.ArgumentParser:
    sub = _command_parser(targets, name, help, aliases)
    sub.add_argument("--json", action="store_true", help="print one JSON object")
    sub.add_argument("--quiet", action="store_true", help="no progress bar")
    _option(sub, "--report", None, "also write audit.html and audit.json for this audit into this folder",
            dest="page")
    return sub


def _attack_parser(commands: argparse._SubParsersAction) -> None:
    attack = _command_parser(commands, "attack", "run a reconstruction attack on PP (M-ADMM supplement, Appendix E)")
    plain_attack = AttackConfig()
    attack.add_argument("attack", choices=["kkt"], help="kkt: recover a hidden record's direction from the KKT "
                        "condition")
    who = attack.add_mutually_exclusive_group()
    who.add_argument("--public-eta", dest="public_eta", action="store_true", default=argparse.SUPPRESS,
                     help="the attacker knows the penalties eta_i(t) (default)")
    who.add_argument("--private-eta", dest="public_eta", action="store_false", default=argparse.SUPPRESS,
                     help="node 0 draws its penalties privately; the attacker assumes theta")
    _setting_flags(attack, AttackConfig, "attack", defaults=plain_attack)
    attack.add_argument("--json", action="store_true", help="print one JSON object")


def _experiment_parser(commands: argparse._SubParsersAction) -> None:
    experiment = _command_parser(commands, "experiment", "rerun a paper's figure (accuracy/privacy or convergence)")
    plain_experiment = ExperimentConfig()
    experiment.add_argument("name", choices=EXPERIMENTS, metavar="NAME", help=", ".join(EXPERIMENTS) +
                            " (madmm-fig3/4 default to --nodes 100 --graph random; radmm-fig1 runs its own random "
                            "networks of 5 and 20 nodes)")
    _setting_flags(experiment, ExperimentConfig, "experiment", defaults=plain_experiment)
    experiment.add_argument("--out", default="experiments",
                            help="folder for NAME.json, NAME.csv, NAME.png (default: experiments)")
    experiment.add_argument("--json", action="store_true", help="print the summary as JSON")


def _whole(text: str) -> int:
    if not text.strip().isdigit():
        raise InvalidConfiguration(f"{text!r} is not a whole number")
    return int(text)


def _setting_flags(parser: argparse.ArgumentParser, setting_type: type, command: str, spec: object = None,
                   skip: tuple[str, ...] = (), defaults: object = None, group: str = "setting") -> None:
    """One flag per field of ``setting_type`` that ``command`` offers (an algorithm parameter only where ``spec``
    reads it), its help, unit and default from the field (default: ``setting_type.DEFAULTS[command]`` where the type
    names its commands' defaults, else the field's own); the value reaches the setting only when typed, under
    ``GROUP:NAME`` (:func:`_flags`)."""
    if defaults is None and hasattr(setting_type, "DEFAULTS"):
        defaults = setting_type.defaults(command)
    for item in flag_fields(setting_type, command):
        meta = item.metadata
        if item.name in skip:
            continue
        flag = flag_of(item)
        text = meta["help"] + (f" [{meta['unit']}]" if meta["unit"] else "")
        read = meta["read"]
        kind = {} if read is None else {"type": read if read is int else _argument_type(read, _expected(read))}
        if meta["algorithm_parameter"] and (spec is None or item.name not in spec.parameters):
            # not read by this algorithm: accepted only to be refused by the setting with the flags it reads
            parser.add_argument(flag, default=argparse.SUPPRESS, help=argparse.SUPPRESS, dest=f"{group}:{item.name}",
                                **kind)
            continue
        if item.type == "bool":
            _option(parser, flag, None, text, action="store_true", dest=f"{group}:{item.name}")
            continue
        if meta["choices"]:
            kind["choices"] = meta["choices"]
        _option(parser, flag, item.default if defaults is None else getattr(defaults, item.name), text,
                dest=f"{group}:{item.name}", **kind)


def _names(text: str) -> tuple[str, ...]:
    """``--only pp,dvp``: the comma-separated names, each non-empty."""
    names = tuple(name.strip() for name in text.split(","))
    if not all(names):
        raise argparse.ArgumentTypeError(f"{text!r}: give registered names separated by commas, e.g. pp,dvp")
    return names


def _flags(args: argparse.Namespace) -> dict[str, dict[str, object]]:
    """The values the user typed, by group: ``setting``, ``audit``, ``search``, ``request`` (a field's dest is
    ``GROUP:NAME``)."""
    groups: dict[str, dict[str, object]] = {"setting": {}, "audit": {}, "search": {}, "request": {}, "code": {},
                                            "canaries": {}}
    for dest, value in vars(args).items():
        group, colon, name = dest.partition(":")
        if colon:
            groups[group][name] = value
    return groups


def _typed(args: argparse.Namespace, *names: str) -> dict[str, object]:
    """The plain options among ``names`` the user typed."""
    return {name: getattr(args, name) for name in names if hasattr(args, name)}


def _setting(spec: object, command: str, typed: dict[str, object]) -> object:
    """``spec``'s family setting for ``command`` with the typed values (refused, with the flag, where they do not
    apply)."""
    setting_type = spec.setting_type
    try:
        return setting_type.for_algorithm(spec, command, typed)
    except InvalidConfiguration as exc:
        raise InvalidConfiguration(said_as_flag(exc, {item.name: item.metadata.get("flag") or ""
                                                      for item in dataclass_fields(setting_type)
                                                      if item.metadata.get("flag")})) from None


def _command_verify(args: argparse.Namespace) -> int:
    profile = PROFILES[args.profile]
    if args.iterations is not None:
        profile = replace(profile, iterations=args.iterations)
    output_folder(args.out, "--out")  # fail before the work, not after it
    say = (lambda message: print(f"admmcheck verify: {message} ...", file=sys.stderr)) if sys.stderr.isatty() else None
    changes: dict[str, dict[str, str]] = {}
    for name, field_name, value in args.changes:
        changes.setdefault(name, {})[field_name] = value
    report = collect(profile, seed=args.seed, progress=say, command_line="admmcheck " + " ".join(sys.argv[1:]),
                     only=args.only, changes=changes)
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
    from admmcheck.foundations.inputs import read_text_file
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
    spec = REGISTRY[args.name]
    setting = _setting(spec, "run", _flags(args)["setting"])
    summary = spec.family.run(spec, setting, getattr(args, "export_problem", None))
    if args.json:
        print(to_json(summary))
        return EXIT_OK
    for key in spec.family.run_keys:
        print(f"{key:<16} {summary[key]}")
    claim = summary.get("claim")
    if claim is not None:  # a private run: the noise it drew and the claim it is for, in the claim's words
        if "sigma" not in spec.family.run_keys:
            print(f"{'sigma':<16} {summary['sigma']}")
        print(f"{'claimed':<16} " + (f"none: {claim['none']}" if "none" in claim else claim["describe"]
                                     + (f" ({claim['source']})" if claim["source"] else "")))
    return EXIT_OK


def _command_bound(args: argparse.Namespace) -> int:
    spec = REGISTRY.mechanism(args.name)
    setting = _setting(spec, "bound", _flags(args)["setting"])
    stated = spec.claim(setting)
    if isinstance(stated, Claim):  # a claim stated as a value: its notion, parameters and source
        claim = spec.claim_value(setting, stated)
        if args.json:
            print(to_json({"mechanism": spec.name, "claim": claim.as_dict()}))
        else:
            print(f"{spec.name}: {claim}")
        return EXIT_OK
    statement = spec.family.bound(spec, setting, stated)
    print(to_json(statement.summary) if args.json else "\n".join(statement.lines))
    return EXIT_OK if statement.holds else EXIT_CHECK_FAILED


def _command_conditions(args: argparse.Namespace) -> int:
    capability = REGISTRY[args.name].require("conditions")
    setting = config_from_flags(capability.setting_type, _flags(args)["setting"])
    report = capability.evaluate(setting, show_progress=not args.json or sys.stderr.isatty())
    if args.json:
        print(to_json(report))
    else:
        print("\n".join(capability.lines(report)))
    return {"pass": EXIT_OK, "fail": EXIT_CHECK_FAILED, "incomplete": EXIT_INCOMPLETE}[report["status"]]


def _command_experiment(args: argparse.Namespace) -> int:
    config = ExperimentConfig.from_flags(_flags(args)["setting"] | {"name": args.name})
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


def _command_audit(args: argparse.Namespace) -> int:
    groups = _flags(args)
    args.page = getattr(args, "page", None)
    if args.page is not None:
        output_folder(args.page, "--report")  # refused before any sampling
    progress = not args.quiet and sys.stderr.isatty()
    if args.target == "canaries":
        config = config_from_flags(CanaryAuditConfig, groups["code"] | {"settings": AuditSettings().but(**groups["audit"])})
        return _print_canary_audit(args, run_canary_audit(config, progress=progress).as_dict())
    if args.target == "code":
        search = _search(SearchSettings(), groups["search"]) if groups["search"] else None
        config = config_from_flags(CodeAuditConfig, groups["code"] | {"settings": AuditSettings().but(**groups["audit"]),
                                                                      "neighbour_search": search})
        result = run_audit(config, progress=progress)
        return _print_audit(args, result.as_dict(), EXIT_CHECK_FAILED if result.verdict == "violation" else EXIT_OK)
    spec = REGISTRY.mechanism(args.name)
    typed = groups["setting"] | ({"seed": groups["audit"]["seed"]} if "seed" in groups["audit"] else {})
    setting = _setting(spec, "audit", typed)
    if groups["canaries"]:
        return _mechanism_canary_audit(args, spec, setting, groups, progress)
    search = _search(spec.search, groups["search"]) if groups["search"] else None
    request = MechanismAudit(spec.name, setting, neighbour_search=search,
                             settings=spec.audit.but(seed=setting.seed).but(**groups["audit"]), **groups["request"])
    found = run_mechanism_audit(request, progress=progress)
    white = found.white_box or {}
    violated = found.result.verdict == "violation" or white.get("verdict") == "violation"
    return _print_audit(args, found.as_dict(), EXIT_CHECK_FAILED if violated else EXIT_OK)


def _mechanism_canary_audit(args: argparse.Namespace, spec: object, setting: object,
                            groups: dict[str, dict[str, object]], progress: bool) -> int:
    """``admmcheck audit NAME --canaries M``: a one-run audit; the flags of the many-run audit are refused."""
    if "canaries" not in groups["canaries"]:
        given = ", ".join("--" + name.replace("_", "-") for name in groups["canaries"])
        verb = "applies" if len(groups["canaries"]) == 1 else "apply"
        raise InvalidConfiguration(f"{given} {verb} to a one-run audit: add --canaries M (e.g. --canaries 1000)",
                                   parameter="canaries")
    many = [name for name in groups["audit"] if name in NOT_FOR_CANARIES] + list(groups["search"]) + [
        name for name in groups["request"]]
    if many:
        flags = {"where": spec.first_place[1].split()[0] if spec.first_place else "--where", "neighbours":
                 "--neighbour-kind", "white_box": "--white-box", "white_box_search": "--search", "plot": "--plot"}
        named = [flags.get(name, "--" + name.replace("_", "-")) for name in many]
        raise InvalidConfiguration(f"{', '.join(named)}: not for a one-run audit (--canaries), which trains each run "
                                   "once on canaries placed by --canary-placement; remove them, or audit without "
                                   "--canaries", parameter="canaries")
    slots = config_from_flags(CanarySlots, groups["canaries"])
    settings = spec.audit.but(seed=setting.seed).but(**groups["audit"])
    audit = MechanismCanaryAudit(spec.name, setting, slots, settings)
    return _print_canary_audit(args, run_mechanism_canary_audit(audit, progress=progress).as_dict())


def _print_canary_audit(args: argparse.Namespace, summary: dict) -> int:
    """Print a one-run audit's summary (and write its page with --report); returns the exit status."""
    written = None
    if args.page is not None:
        from admmcheck.report.model import package_versions
        from admmcheck.report.one_run_page import write_one_run_page

        summary.update(command="admmcheck " + shlex.join(args.argv), versions=package_versions())
        written = write_one_run_page(summary, args.page)["html"]
    status = EXIT_CHECK_FAILED if summary["verdict"] == "violation" else EXIT_OK
    if args.json:
        print(to_json(summary))
        return status
    best = summary["deciding_guess"]
    word = "violation" if summary["verdict"] == "violation" else "no violation found"
    runs = f"{summary['runs']} run{'s' if summary['runs'] > 1 else ''}"
    if summary["claimed_mu"] is None:
        print(f"{word}: epsilon >= {summary['epsilon_lower_bound']:.4f} with confidence {summary['confidence']:g} "
              f"(claimed epsilon = {summary['claimed_epsilon']:.6g}, delta = {summary['claimed_delta']:.3g}), from "
              f"{runs} of {summary['canaries']} canaries")
    else:
        print(f"{word}: mu >= {summary['mu_lower_bound']:.4f} with confidence {summary['confidence']:g} (claimed "
              f"mu = {summary['claimed_mu']:.6g}, a Gaussian-DP trade-off curve), from {runs} of "
              f"{summary['canaries']} canaries")
    print(f"  deciding guess: {best['correct']} right of {best['guesses']} (the {best['guesses'] // 2} highest and "
          f"{best['guesses'] // 2} lowest of {summary['canaries_total']} scores), each guess share at level "
          f"{best['level']:.3g}")
    print(f"  Gaussian DP: mu >= {summary['mu_lower_bound']:.4f}; scores ({summary['score']}): included mean "
          f"{_mean(summary['scores']['included'])}, excluded mean {_mean(summary['scores']['excluded'])}")
    placed = ""
    if "placement" in summary:  # a registered mechanism's slots, or a dataset's node column
        whose = f"{summary['mechanism']}'s canaries" if "mechanism" in summary else "canaries at the records' nodes:"
        placed = f", {whose} at {summary['placement']}" if "mechanism" in summary else f", {whose} {summary['placement']}"
    print(f"  {summary['neighbour_kind']}{placed}, seed {summary['seed']}, {summary['wall_time_s']:.1f} s")
    for note in summary["notes"]:
        print(f"  note: {note}")
    if written is not None:
        print(f"written: {written}")
    return status


def _mean(values: list[float]) -> str:
    return f"{sum(values) / len(values):.4g}" if values else "(none)"


def _search(budget: SearchSettings, typed: dict[str, object]) -> SearchSettings:
    try:
        return replace(budget, **typed)
    except InvalidConfiguration as exc:
        raise InvalidConfiguration(f"--search-{exc.parameter} {str(exc).partition('=')[2]}") from None


def _print_audit(args: argparse.Namespace, summary: dict, status: int) -> int:
    """Print an audit's summary (and write its page with --report); returns ``status``."""
    if args.page is not None:
        _write_audit_page(summary, args.page, args)
    if args.json:
        print(to_json(summary))
        return status
    claim = summary["claim"]["claimed"]
    _print_audit_head(summary, claim + (f": {summary['claim_used']}" if "claim_used" in summary else ""))
    if "neighbours" in summary and not summary.get("neighbour_search"):
        print(f"  neighbours: {summary['neighbours']}")
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
    return status


def _write_audit_page(summary: dict, folder: str, args: argparse.Namespace) -> None:
    from admmcheck.report.audit_page import write_audit_page
    from admmcheck.report.model import package_versions

    summary.update(command="admmcheck " + shlex.join(args.argv), versions=package_versions())
    paths = write_audit_page(summary, folder)
    if not args.json:
        print(f"written: {paths['html']}")


def _print_audit_head(summary: dict, claim: str) -> None:
    bound = summary["lower_bound"]
    print(f"{summary['verdict']}: {bound['parameter']} {'>' if strict_bound(summary) else '>='} {bound['value']:.4f} "
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


def _print_white_box(white: dict) -> None:
    """The white box's verdict and figures (each family's white box gives some of them)."""
    figures = [f"max loss {white['max_loss']:.4f} of {white['samples']} transcripts" if "samples" in white
               else f"max loss {white['max_loss']:.4f}"]
    if "mean_loss" in white:
        figures.append(f"mean (KL) {white['mean_loss']:.4g}")
    if "infinite_fraction" in white:
        figures.append(f"{white['infinite_fraction']:.1%} have infinite loss; released values lie at relative "
                       f"distance >= {white['off_support_min']:.3g} (median {white['off_support_median']:.3g}) "
                       "from the support under D'")
    if "ratio" in white:
        figures.append(f"ratio to the claim {white['ratio']:.3f}")
    print(f"white box: {white['verdict']}: " + ", ".join(figures))
    if "quantiles" in white:
        print("  quantiles: " + ", ".join(f"{level}: {q['value'] if isinstance(q, dict) else q:.4g}"
                                          for level, q in white["quantiles"].items()))
    worst = white.get("worst_case")
    if isinstance(worst, dict):
        print(f"  worst case found: {worst['value']:.4f} (ratio {worst['ratio']:.3f}) at {worst['where']}")
    elif worst is not None:
        print(f"  worst case found: {worst:.4f}")
    if "even_steps" in white:
        print(f"  even steps: max |loss| {white['even_steps']['max_abs_loss']:.3g}, "
              f"max distance to (29) {white['even_steps']['max_distance_to_29']:.3g}")
    for finding in white.get("findings", ()):
        print(f"  finding: {finding}")
    if "plot" in white:
        print(f"  written: {white['plot']}")


def _command_attack(args: argparse.Namespace) -> int:
    summary = run_attack(config_from_flags(AttackConfig, _flags(args)["setting"] | _typed(args, "public_eta")))
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
    width = max([18] + [len(entry["name"]) + 1 for entry in listing["registered"]])
    for entry in listing["registered"]:
        source = f"{entry['package']} {entry['version']}".strip()
        point = f" (entry point {entry['entry_point']})" if entry["entry_point"] else ""
        print(f"{entry['name']:<{width}} {entry['family']:<10} {entry['kind']:<10} {source}{point}")
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
    """Old spellings as the new ones, each with a one-line note: ``audit --mechanism ...`` (before ``audit code``),
    ``--samples`` for synthetic rows (now ``--rows``: ``--samples`` is an audit's samples per side), and the
    per-iteration or per-round ``--epsilon``/``--delta`` of the sharing and online families (now ``--step-epsilon``,
    ``--step-delta``: ``--epsilon`` is a claimed total)."""
    words = [i for i, word in enumerate(argv) if not word.startswith("-")]
    if not words:
        return argv
    command = argv[words[0]]
    target = argv[words[1]] if len(words) > 1 else None
    if command == "audit" and len(argv) > words[0] + 1:
        at = words[0] + 1
        targets = {"code", "canaries", *REGISTRY.names(private=True), *(n for n in REGISTRY if REGISTRY[n].stands_for)}
        third_party = any(word.split("=")[0] in ("--mechanism", "--neighbors") for word in argv[at:])
        if third_party and not targets & set(argv[at:]) and argv[at].startswith("--"):
            _note("a third-party audit is now spelled 'admmcheck audit code --mechanism ...'")
            return argv[:at] + ["code"] + argv[at:]
    renames = {}
    if command in ("run", "bound", "experiment", "conditions"):
        renames["--samples"] = "--rows"
    if command in ("run", "bound", "audit") and target in REGISTRY.registered():
        names = {item.name for item in dataclass_fields(REGISTRY[target].setting_type)}
        renames |= {old: new for old, new in (("--epsilon", "--step-epsilon"), ("--delta", "--step-delta"))
                    if new[2:].replace("-", "_") in names and old[2:] not in names}
    out = []
    for word in argv:
        flag, equals, value = word.partition("=")
        if flag in renames:
            _note(f"{flag} of admmcheck {command} {target or ''} is now spelled {renames[flag]}".replace("  ", " "))
            word = renames[flag] + equals + value
        out.append(word)
    return out


def _note(text: str) -> None:
    print(f"admmcheck: note: {text}", file=sys.stderr)


#: Parameters whose flag is not ``--`` and the name with dashes.
FLAG_OF = {"neighbours": "--neighbour-kind", "where": "the place", "samples": "--samples",
           "neighbour_search": "--search-candidates, --search-samples or --search-keep",
           "white_box_search": "--search",
           "widths": "--features", "step_epsilon": "--step-epsilon"}


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
        args, unknown = _parser().parse_known_args(_new_spelling(argv))
        args.argv = argv
    except SystemExit as exc:  # argparse: --help, --version (0) or a bad flag (2, message printed)
        return exc.code if isinstance(exc.code, int) else EXIT_INVALID_INPUT
    if unknown:  # a flag this command does not take (argparse would say only "unrecognized arguments")
        where = " ".join(word for word in (args.command, getattr(args, "target", None)) if word)
        return _fail(args, f"{unknown[0]} does not apply to admmcheck {where}; remove it (admmcheck {where} --help "
                     "lists the flags that do)", EXIT_INVALID_INPUT)
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
