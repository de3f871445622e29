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
import os
import shlex
from dataclasses import replace
from pathlib import Path
import sys
import traceback
import warnings
from typing import Callable, Mapping, Sequence

from admmcheck import __version__
from admmcheck.audit.running.settings import AuditSettings, SearchSettings
from admmcheck.commands.attack import AttackConfig, run_attack
from admmcheck.commands.audit import CodeAuditConfig, run_audit, run_mechanism_audit
from admmcheck.commands.audit_flags import FLAG_OF, canary_audit, code_audit, mechanism_audit, mechanism_setting
from admmcheck.commands.canary_audit import (NOT_FOR_CANARIES, CanaryAuditConfig, CanarySlots, mechanism_canary_audit,
                                             run_canary_audit, run_mechanism_canary_audit)
from admmcheck.commands.consensus import ExperimentConfig, execute_experiment
from admmcheck.commands.replicate import HELP as REPLICATE_HELP, add_arguments, replicate
from admmcheck.commands.spellings import new_spelling
from admmcheck.commands.verify import PROFILES, collect
from admmcheck.experiments.figures import EXPERIMENTS
from admmcheck.foundations import flags
from admmcheck.foundations.errors import AdmmcheckError
from admmcheck.mechanisms.plugins import PluginWarning
from admmcheck.mechanisms.registry import REGISTRY
from admmcheck.foundations.output import output_folder, printable, stdout_reader_gone, to_json
from admmcheck.foundations.results import (EXIT_BUG, EXIT_INVALID_INPUT, EXIT_OF_OUTCOME, EXIT_OK, EXIT_STATUS,
                                            Result)
from admmcheck.report import render
from admmcheck.report.model import Reproducible
from admmcheck.foundations.validation import config_from_flags, said_as_flag


def _command_parser(commands: argparse._SubParsersAction, name: str, help: str, aliases: tuple[str, ...] = (),
                    json: str | None = "print one JSON object",
                    handler: Callable[[argparse.Namespace], int] | None = None) -> argparse.ArgumentParser:
    """A command's (or target's) parser, with ``--json`` (its help: ``json``) unless ``json`` is None; a command's
    ``handler`` is what :func:`main` calls with the parsed arguments."""
    parser = commands.add_parser(name, help=help, description=help, epilog=EXIT_STATUS, aliases=list(aliases),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    if handler is not None:
        parser.set_defaults(handler=handler)
    if json is not None:
        parser.add_argument("--json", action="store_true", help=json)
    return parser


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
    _command_parser(commands, "plugins", "list every registered algorithm and mechanism with the package it "
                              "comes from (admmcheck's own, or an installed plugin's: entry-point group "
                              "admmcheck.plugins), and the plugins that could not be loaded", handler=_command_plugins)
    report = _command_parser(commands, "report", "re-render report.html and the figures from a saved report.json",
                             json=None, handler=_command_report)
    report.add_argument("file", metavar="FILE.json", help="a report.json written by admmcheck verify")
    report.add_argument("--out", default=None, help="folder for the rendered report (default: the file's folder)")
    for add in (_run_parser, _bound_parser, _conditions_parser, _audit_parser, _attack_parser, _experiment_parser):
        add(commands)
    add_arguments(_command_parser(commands, "replicate", REPLICATE_HELP, json="print the result as JSON",
                                  handler=lambda args: _show(args, replicate(args.name, args.runs, args.seed))))
    return parser


def _verify_parser(commands: argparse._SubParsersAction) -> None:
    verify = _command_parser(commands, "verify", "verify every algorithm's claims and write the report (JSON, HTML, "
                             "figures)", json="print report.json instead of the verdict table", handler=_command_verify)
    verify.add_argument("--out", default="reports/verify", help="report folder (default: reports/verify)")
    verify.add_argument("--profile", choices=tuple(PROFILES), default="quick",
                        help="quick (default, minutes), full (larger samples) or smoke (toy sizes)")
    verify.add_argument("--seed", type=int, default=0, help="seed of every random draw (default: 0)")
    verify.add_argument("--iterations", type=flags.POSITIVE_INT, default=None,
                        help="iterations per convergence run (default: the profile's, 200 for quick)")
    verify.add_argument("--only", type=flags.names, default=None, metavar="NAME[,NAME...]",
                        help="check only these registered algorithms and mechanisms (admmcheck plugins lists them; "
                             "one of admmcheck's own mechanisms is checked when registered with report=True, a "
                             "plugin's always)")
    verify.add_argument("--set", type=flags.assignment, action="append", default=[], metavar="NAME.FIELD=VALUE",
                        dest="changes", help="audit a plugin's mechanism NAME with its setting's FIELD at VALUE (as "
                        "its flag --FIELD reads it) instead of the setting it declares for its audit; repeatable")


def _targets(parser: argparse.ArgumentParser, what: str) -> argparse._SubParsersAction:
    return parser.add_subparsers(dest="target", required=True, metavar=what)


def _target(targets: argparse._SubParsersAction, name: str, help: str, setting_type: type, command: str,
            spec: object = None, aliases: tuple[str, ...] = ()) -> argparse.ArgumentParser:
    """The parser of a registered ``name`` under ``command``, with its setting's flags."""
    sub = _command_parser(targets, name, help, aliases)
    sub.set_defaults(name=name)
    flags.setting_flags(sub, setting_type, command, spec)
    return sub


def _run_parser(commands: argparse._SubParsersAction) -> None:
    run = _command_parser(commands, "run", "run one registered algorithm and compare it with the CVXPY optimum (or, "
                          "online, the hindsight optimum)", json=None, handler=_command_run)
    targets = _targets(run, "ALGO")
    for name in REGISTRY:
        spec = REGISTRY[name]
        sub = _target(targets, name, f"run {spec.title}", spec.setting_type, "run", spec)
        if spec.family.exports_problem:
            sub.add_argument("--export-problem", metavar="FILE.npz", help="write the problem's data (and, consensus, "
                             "the adjacency)")


def _bound_parser(commands: argparse._SubParsersAction) -> None:
    bound = _command_parser(commands, "bound", "evaluate a private mechanism's claim (its theorem) and its "
                            "preconditions", json=None, handler=_command_bound)
    targets = _targets(bound, "MECHANISM")
    for name in REGISTRY.names(private=True):
        spec = REGISTRY.mechanism(name)
        if not spec.supports("claim"):
            continue
        aliases = tuple(other for other in REGISTRY if REGISTRY[other].stands_for == name)
        same = f"; {', '.join(aliases)}: the same" if aliases else ""
        _target(targets, name, f"{spec.theorem} ({spec.title}){same}", spec.setting_type, "bound", spec, aliases)


def _conditions_parser(commands: argparse._SubParsersAction) -> None:
    conditions = _command_parser(commands, "conditions", "decide a convergence theorem's conditions exactly, with "
                                 "certificates", json=None, handler=_command_conditions)
    targets = _targets(conditions, "ALGO")
    for name in REGISTRY:
        if not REGISTRY[name].supports("conditions"):
            continue
        capability = REGISTRY[name].conditions
        _target(targets, name, f"{name}: {capability.theorem}", capability.setting_type, "conditions")


def _audit_parser(commands: argparse._SubParsersAction) -> None:
    audit = _command_parser(commands, "audit", "test a mechanism's privacy claim on neighbouring datasets: "
                            "third-party code (audit code) or a registered mechanism (audit "
                            + ", ".join(REGISTRY.names(private=True)) + ")", json=None)
    targets = _targets(audit, "TARGET")
    code = _audit_target(targets, "code", "audit third-party code: FILE.py:NAME, module:NAME or FILE.m:FUNCTION (GNU "
                         "Octave), run only in worker processes", handler=_audit_code)
    flags.setting_flags(code, CodeAuditConfig, "code", group="code")
    flags.setting_flags(code, AuditSettings, "code", defaults=AuditSettings(), group="audit")
    flags.setting_flags(code, SearchSettings, "code", defaults=SearchSettings(), group="search")
    canaries = _audit_target(targets, "canaries", "audit training code too expensive to run thousands of times: one "
                             "run (or a few) with canaries, each included with probability 1/2 (Steinke, Nasr & "
                             "Jagielski 2023)", handler=_audit_canaries, page="audit.html, audit.json and scores.png")
    flags.setting_flags(canaries, CanaryAuditConfig, "canaries", group="code")
    flags.setting_flags(canaries, AuditSettings, "canaries", defaults=AuditSettings(), group="audit",
                        skip=NOT_FOR_CANARIES)
    for name in REGISTRY.names(private=True):
        spec = REGISTRY.mechanism(name)
        aliases = tuple(other for other in REGISTRY if REGISTRY[other].stands_for == name)
        sub = _audit_target(targets, name, f"audit {spec.title} against "
                            + (f"its claim ({spec.theorem or 'stated by ' + REGISTRY.origin(name)[0]})"
                               if spec.supports("claim") else "the epsilon you give (--epsilon)")
                            + " on a small setting", aliases, handler=_audit_mechanism)
        sub.set_defaults(name=name)
        flags.setting_flags(sub, AuditSettings, "audit", defaults=spec.audit, group="audit")
        flags.setting_flags(sub, spec.setting_type, "audit", spec, skip=("seed",))  # --seed seeds data and samples
        flags.option(sub, "--neighbour-kind", spec.neighbour_kinds[0], " or ".join(spec.neighbour_kinds),
                     action=flags.Typed, group="request", dest="neighbours", choices=spec.neighbour_kinds)
        place, example = spec.first_place  # its own, or its family's
        read = flags.place if isinstance(place, tuple) else flags.argument_type(flags.whole, "a whole number")
        flags.option(sub, example.split()[0], None, f"the place the neighbours change, e.g. {example} (default: the "
                     "neighbour search chooses among every place whose change moves what is released)",
                     action=flags.Typed, group="request", dest="where", type=read)
        flags.setting_flags(sub, SearchSettings, "audit", defaults=spec.search, group="search")
        flags.setting_flags(sub, CanarySlots, "audit", group="canaries")  # a spec without canaries refuses them
        if spec.supports("white_box"):
            flags.option(sub, "--white-box", None, "also compute the exact privacy loss of --samples transcripts under "
                         "D against the claim", action=flags.Typed, switch=True, group="request", dest="white_box")
        if spec.supports("release") and spec.supports("worst_case"):
            flags.option(sub, "--search", None, "with --white-box: search transcripts and neighbour records for the "
                         "largest loss", action=flags.Typed, switch=True, group="request", dest="white_box_search")
            flags.option(sub, "--plot", None, "with --white-box: write the loss histogram and delta(epsilon) here "
                         "(.png or .svg)", action=flags.Typed, group="request", dest="plot")


def _audit_target(targets: argparse._SubParsersAction, name: str, help: str, aliases: tuple[str, ...] = (),
                  handler: Callable[[argparse.Namespace], int] | None = None,
                  page: str = "audit.html and audit.json") -> argparse.ArgumentParser:
    sub = _command_parser(targets, name, help, aliases, handler=handler)
    sub.add_argument("--quiet", action="store_true", help="no progress bar")
    flags.option(sub, "--report", None, f"also write {page} for this audit into this folder", dest="page")
    return sub


def _attack_parser(commands: argparse._SubParsersAction) -> None:
    attack = _command_parser(commands, "attack", "run a reconstruction attack on PP (M-ADMM supplement, Appendix E)",
                             handler=_command_attack)
    attack.add_argument("attack", choices=["kkt"], help="kkt: recover a hidden record's direction from the KKT "
                        "condition")
    who = attack.add_mutually_exclusive_group()
    who.add_argument("--public-eta", dest="public_eta", action=flags.Typed, nargs=0, const=True,
                     default=argparse.SUPPRESS, help="the attacker knows the penalties eta_i(t) (default)")
    who.add_argument("--private-eta", dest="public_eta", action=flags.Typed, nargs=0, const=False,
                     default=argparse.SUPPRESS, help="node 0 draws its penalties privately; the attacker assumes theta")
    flags.setting_flags(attack, AttackConfig, "attack", defaults=AttackConfig())


def _experiment_parser(commands: argparse._SubParsersAction) -> None:
    experiment = _command_parser(commands, "experiment", "rerun a paper's figure (accuracy/privacy or convergence)",
                                 json="print the summary as JSON", handler=_command_experiment)
    experiment.add_argument("name", choices=EXPERIMENTS, metavar="NAME", help=", ".join(EXPERIMENTS) +
                            " (madmm-fig3/4 default to --nodes 100 --graph random; radmm-fig1 runs its own random "
                            "networks of 5 and 20 nodes)")
    flags.setting_flags(experiment, ExperimentConfig, "experiment", defaults=ExperimentConfig())
    experiment.add_argument("--out", default="experiments",
                            help="folder for NAME.json, NAME.csv, NAME.png (default: experiments)")


def _show(args: argparse.Namespace, result: Result, written: Path | str | None = None) -> int:
    """Print ``result`` (its JSON with --json, else its lines, then what was written); its outcome's exit status."""
    print(result.to_json() if args.json else result)
    if written is not None and not args.json:
        print(f"written: {written}")
    return EXIT_OF_OUTCOME[result.outcome]


def _command_verify(args: argparse.Namespace) -> int:
    profile = PROFILES[args.profile]
    if args.iterations is not None:
        profile = replace(profile, iterations=args.iterations)
    output_folder(args.out, "--out")  # fail before the work, not after it
    say = (lambda message: print(f"admmcheck verify: {message} ...", file=sys.stderr)) if sys.stderr.isatty() else None
    report = collect(profile, seed=args.seed, progress=say, command_line="admmcheck " + " ".join(sys.argv[1:]),
                     only=args.only, changes=flags.grouped(args.changes))
    paths = render(report, args.out)
    if args.json:
        print(to_json(report.as_dict() | {"files": {k: str(v) for k, v in paths.items()}}))
    else:
        print(f"{report}\nreport: {paths['html']} (and {paths['json']}, figures beside them)")
    return EXIT_OF_OUTCOME[report.outcome]


def _command_report(args: argparse.Namespace) -> int:
    from admmcheck.report.model import Report

    print(f"report: {render(Report.read(args.file), args.out or Path(args.file).parent)['html']}")
    return EXIT_OK


def _command_run(args: argparse.Namespace) -> int:
    spec = REGISTRY[args.name]
    setting = spec.setting_type.for_algorithm(spec, "run", flags.typed_values(args)["setting"])
    return _show(args, spec.family.run(spec, setting, getattr(args, "export_problem", None)))


def _command_bound(args: argparse.Namespace) -> int:
    spec = REGISTRY.mechanism(args.name)
    setting = spec.setting_type.for_algorithm(spec, "bound", flags.typed_values(args)["setting"])
    return _show(args, spec.family.state(spec, setting))


def _command_conditions(args: argparse.Namespace) -> int:
    capability = REGISTRY[args.name].require("conditions")
    setting = config_from_flags(capability.setting_type, flags.typed_values(args)["setting"])
    return _show(args, capability.decide(setting, show_progress=not args.json or sys.stderr.isatty()))


def _command_experiment(args: argparse.Namespace) -> int:
    config = ExperimentConfig.from_flags(flags.typed_values(args)["setting"] | {"name": args.name})
    return _show(args, execute_experiment(config, args.out))


def _audit_flags(args: argparse.Namespace) -> tuple[Mapping[str, Mapping[str, object]], bool]:
    """The values typed for an audit, by group, after refusing a page folder that cannot be written (before any
    sampling), and whether to show progress."""
    if getattr(args, "page", None) is not None:
        output_folder(args.page, "--report")
    return flags.typed_values(args), not args.quiet and sys.stderr.isatty()


def _audit_code(args: argparse.Namespace) -> int:
    typed, progress = _audit_flags(args)
    return _audited(args, run_audit(code_audit(typed), progress=progress))


def _audit_canaries(args: argparse.Namespace) -> int:
    typed, progress = _audit_flags(args)
    return _audited(args, run_canary_audit(canary_audit(typed), progress=progress), one_run=True)


def _audit_mechanism(args: argparse.Namespace) -> int:
    (typed, progress), spec = _audit_flags(args), REGISTRY.mechanism(args.name)
    if typed["canaries"]:  # a one-run audit: --canaries M and its slots
        audit = mechanism_canary_audit(spec, mechanism_setting(spec, typed), typed["canaries"], typed["audit"],
                                       typed["search"], typed["request"])
        return _audited(args, run_mechanism_canary_audit(audit, progress=progress), one_run=True)
    return _audited(args, run_mechanism_audit(mechanism_audit(spec, typed), progress=progress))


def _audited(args: argparse.Namespace, result: Result, one_run: bool = False) -> int:
    """Show an audit's result, after writing its page with --report (the one-run page for a one-run audit)."""
    if getattr(args, "page", None) is None:
        return _show(args, result)
    from admmcheck.report import audit_page, one_run_page

    write = one_run_page.write_one_run_page if one_run else audit_page.write_audit_page
    reproducible = Reproducible(result, "admmcheck " + shlex.join(args.argv))
    return _show(args, reproducible, write(reproducible, args.page)["html"])


def _command_attack(args: argparse.Namespace) -> int:
    return _show(args, run_attack(config_from_flags(AttackConfig, flags.typed_values(args)["setting"])))


def _command_plugins(args: argparse.Namespace) -> int:
    return _show(args, REGISTRY.listing())


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"admmcheck: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``admmcheck`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    with warnings.catch_warnings():  # a plugin that cannot be loaded: one line, before anything else
        warnings.simplefilter("always", PluginWarning)
        warnings.showwarning = _show_warning
        REGISTRY.load_plugins()
    try:
        args, unknown = _parser().parse_known_args(new_spelling(
            argv, lambda text: print(f"admmcheck: note: {text}", file=sys.stderr)))
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
            return args.handler(args)
    except AdmmcheckError as exc:
        return _fail(args, said_as_flag(exc, FLAG_OF), EXIT_INVALID_INPUT)
    except MemoryError as exc:  # a size the user chose, not a bug
        return _fail(args, f"out of memory ({exc}); reduce --iterations, --nodes, --samples or the problem size",
                     EXIT_INVALID_INPUT)
    except KeyboardInterrupt:
        return _fail(args, "interrupted before a verdict", 130)
    except BrokenPipeError as exc:
        if stdout_reader_gone():  # the reader closed stdout early: not an error of ours
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes
            return EXIT_OK
        return _bug(args, exc)  # another pipe broke: never taken for a reader that went away
    except (Exception, SystemExit) as exc:  # a bug (a SystemExit inside a command too): never exit 0 for it
        return _bug(args, exc)


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
        print(f"admmcheck: {kind}: {printable(message, keep_newlines=True)}", file=sys.stderr)  # control: shown
    if getattr(args, "json", False):
        print(to_json({"error": message, "kind": kind, "exit_status": status}))
    return status


if __name__ == "__main__":
    sys.exit(main())
