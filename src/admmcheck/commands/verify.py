"""``admmcheck verify``: run the whole verification and collect it into a :class:`~admmcheck.report.model.Report`
(which :mod:`admmcheck.report` holds and renders).

Every check calls the same function its ``admmcheck`` command calls, with the same
configuration, and records that command, so each verdict can be reproduced alone.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, fields, replace
from functools import partial
from typing import Any, Callable, Mapping, Sequence

from admmcheck.experiments.convergence import (
    GAP_TOLERANCE,
    PAPER_ETA1,
    PAPER_GROWTH,
    SLOW_GROWTH,
    default_problems,
    paper_schedule_finding,
    verify_case,
)
from admmcheck.claims.values import ApproxDp
from admmcheck.commands.replicate import REPLICABLE, Replicable
from admmcheck.foundations.errors import InvalidConfiguration, PreconditionError
from admmcheck.mechanisms.families import CONSENSUS, ONLINE, SHARING
from admmcheck.mechanisms.registry import REGISTRY, OnlineSpec
from admmcheck.mechanisms.settings import ConsensusSetting, OnlineSetting, SharingSetting
from admmcheck.foundations.parameters import as_flags, flag_fields
from admmcheck.report.curve_figure import privacy_curve_figure
from admmcheck.report.model import Report, Verdict, package_versions
from admmcheck.foundations.figures import XY, Bars, Curves, Histograms, PrivacyBars, Table
from admmcheck.foundations.validation import non_negative_int


@dataclass(frozen=True)
class Profile:
    """How much work each check does: ``quick`` (minutes on 2 cores, the default), ``full`` (larger
    samples and horizons), ``smoke`` (every check at toy sample sizes, the audits on the hand-picked
    neighbours instead of the neighbour search: a first look, and the tests)."""

    name: str
    iterations: int
    audit_samples: int
    white_samples: int
    attack_trials: int
    dpsda_rounds: int
    experiment_iterations: int
    experiment_runs: int
    replication_runs: int  # noisy runs per setting of the papers' experiments on their data (admmcheck replicate)
    decisive_runs: int  # runs of the experiments of DECISIVE, whose comparisons 10 runs leave undecided
    large_experiments: bool = False
    workers: int | None = None
    hand_picked: bool = False  # audit the pair our audits used before the neighbour search (no search)

    def neighbours(self, name: str) -> dict[str, object]:
        """The audit's ``where`` for mechanism ``name``: none (the neighbour search, at the mechanism's registered
        budget), or its registered first place in a ``hand_picked`` profile."""
        return {"where": _first_place(name)[0]} if self.hand_picked else {}

    def neighbour_flags(self, name: str) -> str:
        """The ``admmcheck audit`` flags (each followed by a space) that choose the neighbours of :meth:`neighbours`."""
        return _first_place(name)[1] + " " if self.hand_picked else ""


def _first_place(name: str) -> tuple[object, str]:
    """(place, flag) of the place ``name``'s audits changed before the neighbour search."""
    return REGISTRY.mechanism(name).first_place  # its own, or its family's


PROFILES = {
    "smoke": Profile("smoke", iterations=200, audit_samples=2_000, white_samples=300, attack_trials=10,
                     dpsda_rounds=100, experiment_iterations=30, experiment_runs=5, replication_runs=6, decisive_runs=5,
                     hand_picked=True),
    "quick": Profile("quick", iterations=200, audit_samples=20_000, white_samples=2_000, attack_trials=50,
                     dpsda_rounds=500, experiment_iterations=100, experiment_runs=10, replication_runs=50,
                     decisive_runs=150),
    "full": Profile("full", iterations=1000, audit_samples=200_000, white_samples=20_000, attack_trials=200,
                    dpsda_rounds=500, experiment_iterations=300, experiment_runs=30, replication_runs=200, decisive_runs=300,
                    large_experiments=True),
}

CONVERGENCE_COMMANDS = {
    "admm converges": ("admm", "admmcheck run admm --dataset {ds} --eta 0.5 --iterations {T} --json"),
    "madmm converges": ("madmm", "admmcheck run madmm --dataset {ds} --theta 0.5 --eta {eta} --growth {growth} "
                                 "--iterations {T} --json"),
    "radmm converges": ("radmm", "admmcheck run radmm --dataset {ds} --eta 0.5 --gamma 0.5 --iterations {T} --json"),
    "edge = simplified": ("admm-edge", "admmcheck run admm-edge --dataset {ds} --eta 0.5 --iterations 50 --json "
                                       "(final_mean equal to admmcheck run admm ... --iterations 50)"),
    "madmm(eta=theta) = admm": ("madmm", "admmcheck run madmm --dataset {ds} --eta 0.5 --theta 0.5 --iterations 50 "
                                         "--json (final_mean equal to admmcheck run admm ... --iterations 50)"),
}


class Selection:
    """Which registered names ``admmcheck verify --only`` checks (``names`` None: all), and which of them a check
    has covered so far: a name asked for that no check covers is refused, not passed over in silence."""

    def __init__(self, names: Sequence[str] | None = None):
        if names is not None:
            unknown = [name for name in names if name not in REGISTRY]
            if unknown or not names:
                what = f"no registered name {', '.join(unknown)}" if unknown else "no name"
                raise InvalidConfiguration(f"--only {','.join(names)}: {what}; choose among {', '.join(REGISTRY)}",
                                           parameter="only")
            silent = [name for name in names if REGISTRY[name].private and not REGISTRY.mechanism(name).report
                      and not isinstance(REGISTRY[name], OnlineSpec) and name in REGISTRY.names(builtin=True)]
            if silent:
                raise InvalidConfiguration(f"--only {', '.join(silent)}: verify checks a private mechanism registered "
                                           "with report=True, and these are not; register them so, or audit them with "
                                           "admmcheck audit", parameter="only")
        self.names = None if names is None else frozenset(names)
        self.covered: set[str] = set()

    def has(self, name: str) -> bool:
        """Whether ``name`` is checked (and, if so, it counts as covered)."""
        if self.names is not None and name not in self.names:
            return False
        self.covered.add(name)
        return True

    def __call__(self, names: Sequence[str]) -> tuple[str, ...]:
        """Those of ``names`` that are checked."""
        return tuple(name for name in names if self.has(name))

    def uncovered(self) -> list[str]:
        return [] if self.names is None else sorted(self.names - self.covered)


def _timed(report: Report, make: Callable[[], Verdict]) -> Verdict:
    started = time.perf_counter()
    verdict = make()
    report.add(verdict, time.perf_counter() - started)
    return verdict


PARTS = ("convergence", "privacy", "conditions", "sharing", "dpsda", "registered", "attack", "experiments")
#: The papers' datasets this report cannot rerun on, said once (issue 63) where the experiments of ADMM sharing's or
#: DPSDA's paper run
UNOBTAINABLE = ("Mushroom (the DPSDA paper's Table II), CIFAR-10 (its Table IV) and gisette (the ADMM-sharing paper's "
                "Fig. 2) are not obtainable offline: no package admmcheck installs ships them, and admmcheck downloads "
                "nothing at run time, so those experiments are not rerun.")


def collect(profile: Profile | str = "quick", seed: int = 0, progress: Callable[[str], None] | None = None,
            command_line: str = "", parts: Sequence[str] = PARTS, only: Sequence[str] | None = None,
            changes: Mapping[str, Mapping[str, str]] | None = None) -> Report:
    """Run every check of the profile (see the module docstring), or only those of ``parts``
    (names of :data:`PARTS`; "privacy" checks every mechanism of admmcheck's registered with ``report=True``,
    "registered" every mechanism a plugin registered), and of those only the checks of the registered names ``only``
    (None: all; a name no check covers is refused). ``changes``: {name: {field: text}}, the fields of a plugin's
    audit setting that ``verify --set NAME.FIELD=VALUE`` changes."""
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise InvalidConfiguration(f"parts={unknown!r}: choose among {', '.join(PARTS)}", parameter="parts")
    if isinstance(profile, str):
        if profile not in PROFILES:
            raise InvalidConfiguration(f"unknown profile {profile!r}; choose {' or '.join(PROFILES)}")
        profile = PROFILES[profile]
    non_negative_int("seed", seed)
    select = Selection(only)
    changes = {name: dict(texts) for name, texts in (changes or {}).items()}
    refused = [name for name in changes if name not in REGISTRY.names(private=True, builtin=False)]
    if refused:
        raise InvalidConfiguration(f"--set {refused[0]}.FIELD: verify changes the audit setting of a mechanism a plugin "
                                   "registered; admmcheck's own are checked at the papers' settings (admmcheck audit "
                                   "NAME --FIELD VALUE audits one at another)", parameter="set")
    say = progress or (lambda message: None)
    report = Report(profile.name, seed)
    report.reproducibility = {"versions": package_versions(), "seed": seed, "profile": vars(profile),
                              "command_line": command_line}
    steps = (("convergence", "convergence against CVXPY", lambda: _convergence(report, profile, select)),
             ("privacy", "privacy of the reference mechanisms (bounds, white box, black box)",
              lambda: _reference_privacy(report, profile, seed, select)),
             ("conditions", "exact convergence conditions", lambda: _conditions(report, select)),
             ("sharing", "ADMM sharing", lambda: _sharing(report, profile, seed, select)),
             ("dpsda", "DPSDA", lambda: _dpsda(report, profile, seed, select)),
             ("registered", "mechanisms registered by plugins",
              lambda: _registered(report, profile, seed, select, changes)),
             ("attack", "KKT attack", lambda: _attack(report, profile, seed, select)),
             ("experiments", "the papers' accuracy/privacy experiments",
              lambda: _experiments(report, profile, seed, select)))
    for part, message, run in steps:  # in the order of PARTS
        if part in parts:
            say(message)
            run()
    papers = {*REGISTRY.names(SHARING, builtin=True), *REGISTRY.names(ONLINE, builtin=True)}  # those datasets' papers
    if "experiments" in parts and (select.names is None or select.names & papers):
        report.data.append(UNOBTAINABLE)
    if select.uncovered():
        raise InvalidConfiguration(f"--only: verify has no check of {', '.join(select.uncovered())} in the parts run "
                                   f"({', '.join(part for part in PARTS if part in parts)}); a mechanism is checked "
                                   "when registered with report=True", parameter="only")
    return report


#: the algorithms the papers' own convergence and equivalence checks cover (:func:`~admmcheck.experiments.convergence.verify_case`)
PAPER_CHECKED = tuple(dict.fromkeys(algorithm for algorithm, _ in CONVERGENCE_COMMANDS.values()))


def _convergence(report: Report, profile: Profile, select: Selection) -> None:
    _other_convergence(report, profile, select)
    if not select(PAPER_CHECKED):
        return
    T = profile.iterations
    curves = {}
    for case in default_problems():
        dataset = "synthetic" if case.name.startswith("synthetic") else "breast-cancer"
        started = time.perf_counter()
        results = verify_case(case, iterations=T)
        seconds = (time.perf_counter() - started) / len(results)
        for result in results:
            algorithm, template = CONVERGENCE_COMMANDS[result.check]
            if not select.has(algorithm):
                continue
            command = template.format(ds=dataset, T=T, eta=",".join(map(str, PAPER_ETA1)),
                                      growth=",".join(f"{q:g}" for q in SLOW_GROWTH))
            report.add(Verdict(algorithm, f"{result.check} ({case.name})", "pass" if result.passed else "fail",
                               f"{result.measured:.3e} (threshold {result.threshold:.0e})", command,
                               float(result.measured), {"claim": result.claim}), seconds)
            curves.setdefault(case.name, {})[result.check] = result.measured
        if not select.has("madmm"):  # the finding is M-ADMM's
            continue
        finding = paper_schedule_finding(case)  # 200 and 1000 steps: q up to 1.2 overflows beyond ~3,800
        if finding.stalls:
            report.findings.append({
                "algorithm": "madmm", "title": f"M-ADMM with the paper's own §5.1 schedule stalls ({case.name})",
                "evidence": f"gap {finding.gap_short:.3e} at T={finding.short} and {finding.gap_long:.3e} at "
                            f"T={finding.long}; max eta {finding.max_penalty_long:.1e}",
                "command": f"admmcheck run madmm --dataset {dataset} --theta 0.5 --eta {','.join(map(str, PAPER_ETA1))} "
                           f"--growth {','.join(map(str, PAPER_GROWTH))} --iterations {finding.long} --json "
                           "(objective_gap)"})
    report.figures["convergence"] = Bars(title="final relative gap / iterate difference", threshold=GAP_TOLERANCE,
                                         series=curves, algorithms=["admm", "madmm", "radmm", "admm-edge"])
    _convergence_curves(report, profile)


def _other_convergence(report: Report, profile: Profile, select: Selection) -> None:
    """Every other non-private algorithm whose family's problems have an optimum (a plugin's, or one registered in
    this process) run as ``admmcheck run NAME`` runs it, on its setting type's ``run`` defaults with the dataset
    synthetic and breast-cancer and at least the profile's iterations: its final relative objective gap against the
    CVXPY optimum. (The papers' own are checked in their sections; a private mechanism's noise keeps it off the
    optimum, so its convergence is its non-private algorithm's.)"""
    others = tuple(name for name in REGISTRY.names(private=False, builtin=False) if REGISTRY[name].family.has_optimum)
    for name in select(others):
        spec = REGISTRY[name]
        defaults = spec.setting_type.defaults("run")
        for dataset in ("synthetic", "breast-cancer"):
            setting = replace(defaults, dataset=dataset, iterations=max(defaults.iterations, profile.iterations))
            flags = ["--dataset", dataset, *_flags(setting, defaults, "run", skip=("dataset",))]

            def make(spec=spec, setting=setting, flags=flags) -> Verdict:
                gap = abs(spec.family.run(spec, setting).objective_gap)
                return Verdict(spec.name, f"converges to the CVXPY optimum ({' '.join(flags)})",
                               "pass" if gap <= GAP_TOLERANCE else "fail",
                               f"{gap:.3e} (threshold {GAP_TOLERANCE:.0e})",
                               shlex.join(["admmcheck", "run", spec.name, *flags, "--json"]) + " (objective_gap)",
                               float(gap))
            _timed(report, make)


def _convergence_curves(report: Report, profile: Profile) -> None:
    """|relative objective gap| against t for ADMM, M-ADMM and R-ADMM on the synthetic problem."""
    from admmcheck.algorithms import run_admm, run_madmm, run_radmm
    from admmcheck.solving.schedules import GeometricSchedule

    case = default_problems()[0]
    schedule = GeometricSchedule(PAPER_ETA1, SLOW_GROWTH)
    series = {}
    for name, run in (("admm", partial(run_admm, eta=0.5)), ("madmm", partial(run_madmm, theta=0.5, penalty=schedule)),
                      ("radmm", partial(run_radmm, eta=0.5, gamma=0.5))):
        result = run(case.problem, case.network, iterations=profile.iterations, seeds=[0], reference=case.optimum)
        series[name] = [max(abs(float(g)), 1e-17) for g in result.objective_gap[0]]
    report.figures["convergence_curves"] = Curves(log=True, xlabel="iteration t",
                                                  title=f"|relative objective gap| vs CVXPY ({case.name})",
                                                  series=series, algorithms=["admm", "madmm", "radmm"])


def _audit_settings(name: str, profile: Profile, seed: int, samples: int):
    """The registered audit settings of mechanism ``name`` with this profile's samples and workers."""
    return REGISTRY.mechanism(name).audit.but(samples=samples, seed=seed, workers=profile.workers)


def _reference_privacy(report: Report, profile: Profile, seed: int, select: Selection) -> None:
    from admmcheck.commands.audit import MechanismAudit, audited_pair

    bars, profiles, histograms, curves = {}, {}, {}, {}
    setting = replace(ConsensusSetting.DEFAULTS["audit"], seed=seed)
    for mechanism in select(REGISTRY.names(CONSENSUS, private=True, report=True, builtin=True)):
        name = REGISTRY[mechanism].section or mechanism  # the report's section, and the CLI name of its audit
        config = MechanismAudit(mechanism, setting, settings=_audit_settings(mechanism, profile, seed,
                                                                             profile.audit_samples),
                                **profile.neighbours(mechanism))
        audited, _, _ = audited_pair(config)
        beta, bound = audited.pure_epsilon("the report's beta"), audited.summary["theorem"]
        target, _, step = REGISTRY[mechanism].bound_arguments(setting).partition(" ")
        checked = REGISTRY[mechanism].labels.get("preconditions", f"theorem preconditions ({REGISTRY[mechanism].theorem})")
        report.add(Verdict(name, checked, "pass" if all(bound["preconditions"].values())
                           else "fail", f"beta = {beta:.4f}", f"admmcheck bound {target} "
                           f"--dataset synthetic --nodes 3 --iterations 5 --rows 30 --dim 2 {step} --alpha "
                           f"{setting.alpha} --seed {seed} --json", beta,
                           {"preconditions": bound["preconditions"]}), 0.0)
        white_config = MechanismAudit(mechanism, setting, where=(0, 0), white_box=True, white_box_search=True,
                                      settings=_audit_settings(mechanism, profile, seed, profile.white_samples))
        white = _timed(report, lambda: _white_verdict(name, white_config, profile, seed))
        black = _timed(report, lambda: _black_verdict(name, config, seed, profile.neighbour_flags(mechanism),
                                                       curves))
        profiles[name] = white.details["privacy_profile"]
        histograms[name] = white.details["histogram"] | {"beta": beta}
        bars[name] = {"claimed_beta": beta, "white_box_worst": white.details["worst_case"],
                      "white_box_max_sampled": white.details["max_loss"], "black_box_lower_bound": black.value}
    if not bars:  # no private consensus mechanism checked (verify --only): no figures about them
        return
    report.figures["privacy"] = PrivacyBars(title="privacy loss: claim, white box, black box", series=bars,
                                            algorithms=list(bars))
    report.figures["privacy_loss"] = Histograms(xlabel="privacy loss L(o)",
                                                title="privacy-loss distribution of the sampled transcripts under D "
                                                      "(dotted: the theorem's beta)",
                                                series=histograms, algorithms=list(histograms))
    report.figures["privacy_profile"] = XY(
        algorithms=list(profiles), log=True, xlabel="epsilon", ylabel="delta(epsilon)",
        title="privacy profile delta(epsilon) = E_D[(1 - exp(epsilon - L))+] of the sampled transcripts",
        series={name: {"x": [p["epsilon"] for p in points], "y": [max(p["delta"], 1e-12) for p in points]}
                for name, points in profiles.items()})
    report.figures["privacy_curve"] = privacy_curve_figure(curves)


def _white_verdict(name, config, profile, seed) -> Verdict:
    from admmcheck.commands.audit import run_white_box

    white = run_white_box(config)
    law = white.as_dict()  # the consensus white box's loss law: its profile and histogram go to the report
    verdict = "violation" if white.outcome == "failed" else "pass"
    return Verdict(name, "white-box loss <= beta (sampled and searched)", verdict,
                   f"worst {white.worst_case:.4f} / beta {law['claimed_beta']:.4f} = {white.ratio:.3f}",
                   f"admmcheck audit {name} --white-box --search --record 0:0 --samples {profile.white_samples} --seed {seed} "
                   "--json",
                   float(white.ratio), {"max_loss": white.max_loss, "mean_loss": white.mean_loss,
                                        "privacy_profile": law["privacy_profile"], "histogram": law["histogram"],
                                        "worst_case": white.worst_case, "where": white.worst_where,
                                        "findings": list(white.findings)})


def _black_verdict(name, config, seed, neighbour_flags, curves: dict) -> Verdict:
    from admmcheck.commands.audit import run_mechanism_audit

    result = run_mechanism_audit(config).result
    curves[name] = result.curve.as_dict() if result.curve is not None else None  # for the figure
    verdict = "violation" if result.verdict == "violation" else "pass"
    return Verdict(name, "black-box audit against beta", verdict,
                   f"epsilon >= {result.epsilon_lower_bound:.4f} (claim {result.claim.epsilon:.4f})",
                   f"admmcheck audit {name} --samples {config.settings.samples} {neighbour_flags}--seed {seed} --json",
                   float(result.epsilon_lower_bound),
                   {"event": result.event, "neighbours": result.search["found"] if result.search else None})


def _conditions(report: Report, select: Selection) -> None:
    """The exact convergence conditions of every consensus algorithm that registers them (on synthetic data, ring:5),
    and the certified minimal gamma where its conditions search one."""
    for name in select(tuple(n for n in REGISTRY.names(CONSENSUS) if REGISTRY[n].supports("conditions"))):
        conditions = REGISTRY[name].conditions

        def make(name=name, conditions=conditions) -> Verdict:
            result = conditions.evaluate(conditions.setting_type(dataset="synthetic"))
            failed = [c["name"] for c in result["conditions"] if c["holds"] is not True]
            verdict = {"pass": "pass", "fail": "fail"}.get(result["status"], "inconclusive")
            return Verdict(name, "exact convergence conditions (certified)", verdict,
                           "all hold" if not failed else f"not shown to hold: {', '.join(failed[:3])}"
                           + (" ..." if len(failed) > 3 else ""),
                           f"admmcheck conditions {name} --graph ring:5 --dataset synthetic --json", None,
                           {"failed": failed})
        _timed(report, make)

    for name in select(tuple(n for n in REGISTRY.names(CONSENSUS) if REGISTRY[n].supports("conditions"))):
        conditions = REGISTRY[name].conditions
        if "find_gamma" not in {item.name for item in fields(conditions.setting_type)}:
            continue

        def gamma(name=name, conditions=conditions) -> Verdict:
            result = conditions.evaluate(conditions.setting_type(dataset="synthetic", find_gamma=True))
            interval = result.get("gamma_interval")
            report.figures["gamma"] = Table(title="certified minimal gamma of R-ADMM Thm III.1 (ring:5, synthetic, "
                                            "eta = 1/2)", series={"interval": interval}, algorithms=[name])
            found = result["status"] == "pass" and interval is not None
            return Verdict(name, "certified minimal gamma (Thm III.1 at eta = 1/2)",
                           "pass" if found else ("fail" if result["status"] == "fail" else "inconclusive"),
                           f"gamma in [{interval['lo_float']:.7g}, {interval['hi_float']:.7g}]" if found
                           else "no gamma >= 0",
                           f"admmcheck conditions {name} --graph ring:5 --dataset synthetic --find-gamma --json",
                           interval["hi_float"] if found else None, {"interval": interval})
        _timed(report, gamma)


def _sharing(report: Report, profile: Profile, seed: int, select: Selection) -> None:
    from admmcheck.commands.audit import MechanismAudit, run_mechanism_audit

    def run(algorithm: str) -> Verdict:
        out = SHARING.run(REGISTRY[algorithm], SharingSetting(dataset="breast-cancer", parties=2, seed=seed))
        gap = abs(out.objective_gap)
        return Verdict(algorithm, "convergence vs CVXPY (breast-cancer, 2 parties)",
                       "pass" if gap <= GAP_TOLERANCE else "fail", f"{gap:.3e} (threshold 1e-06)",
                       f"admmcheck run {algorithm} --dataset breast-cancer --parties 2 --seed {seed} --json", gap)

    def conditions(name: str) -> Verdict:  # Assumption 1.2 / Lemma 4 at the rho its run uses
        conditions = REGISTRY[name].require("conditions")
        out = conditions.evaluate(conditions.setting_type(dataset="breast-cancer", parties=2, rho="1/1000"))
        low = out["minimal_rho"]["lo_float"]
        return Verdict(name, "Assumption 1.2 / Lemma 4 at the rho used (1/1000)",
                       {True: "pass", False: "fail", None: "inconclusive"}[out["holds"]],
                       f"smallest admissible rho >= {low:.6g}",
                       f"admmcheck conditions {name} --dataset breast-cancer --parties 2 --rho 1/1000 --json", low)

    def audit(name: str) -> Verdict:
        spec, samples = REGISTRY.mechanism(name), min(profile.audit_samples, 5000)
        white_box = spec.supports("white_box")
        setting = replace(SharingSetting.DEFAULTS["audit"], seed=seed)
        found = run_mechanism_audit(MechanismAudit(name, setting, white_box=white_box,
                                                   settings=_audit_settings(name, profile, seed, samples),
                                                   **profile.neighbours(name)))
        black, white = found.result, found.white_box
        violated = found.outcome == "failed"
        command = (f"admmcheck audit {name}{' --white-box' if white_box else ''} --samples {samples} "
                   f"{profile.neighbour_flags(name)}--seed {seed} --json")
        if violated:
            n = black.counted or black.bounding_samples
            evidence = (f"event '{black.event}': {black.counts[0]}/{n[0]} under D, {black.counts[1]}/{n[1]} under D'")
            if white is not None:
                evidence += f"; {white.infinite_fraction:.0%} of transcripts have infinite loss"
            report.findings.append({
                "algorithm": name,
                "title": spec.labels.get("finding", f"{spec.title} is not differentially private ({spec.theorem})"),
                "evidence": evidence, "command": command})
        return Verdict(name, spec.labels.get("audit", f"audit against {spec.theorem} "
                                                      f"({'black and white box' if white_box else 'black box'})"),
                       "violation" if violated else "pass",
                       f"epsilon >= {black.epsilon_lower_bound:.3f} vs claim {black.claim.epsilon:.3g}",
                       command, float(black.epsilon_lower_bound))

    algorithms = select(REGISTRY.names(SHARING, private=False))
    checks = [partial(run, name) for name in algorithms]
    checks += [partial(conditions, name) for name in algorithms if REGISTRY[name].supports("conditions")]
    checks += [partial(audit, name) for name in select(REGISTRY.names(SHARING, private=True, report=True,
                                                                      builtin=True))]
    for make in checks:
        _timed(report, make)
    for name in select(REGISTRY.names(SHARING, private=True, report=True, builtin=True)):
        for key, figure in REGISTRY.mechanism(name).figures.items():  # e.g. the paper's own trade-off
            report.figures[key] = figure(seed)


def _dpsda(report: Report, profile: Profile, seed: int, select: Selection) -> None:
    from admmcheck.commands.audit import MechanismAudit, run_mechanism_audit

    algorithms = select(REGISTRY.names(ONLINE, builtin=True))
    regrets = {}
    for algorithm in algorithms:
        labels = REGISTRY.mechanism(algorithm).labels

        def regret(algorithm=algorithm, theorem=labels.get("regret", REGISTRY[algorithm].theorem)) -> Verdict:
            out = ONLINE.run(REGISTRY[algorithm], OnlineSetting(iterations=profile.dpsda_rounds, seed=seed, trials=3))
            regrets[algorithm] = {"regret": out.regret, "bound": out.regret_bound}
            return Verdict(algorithm, f"regret <= {theorem} bound (eps = inf)",
                           "pass" if out.within_bound else "fail",
                           f"regret {out.regret:.1f} vs bound {out.regret_bound:.3g}",
                           f"admmcheck run {algorithm} --iterations {profile.dpsda_rounds} --trials 3 --seed {seed} "
                           "--json", out.regret)

        def preconditions(algorithm=algorithm) -> Verdict:
            setting = OnlineSetting(iterations=profile.dpsda_rounds, step_epsilon=1.0, seed=seed)
            out = REGISTRY.mechanism(algorithm).claim(setting).as_dict(setting.iterations)
            return Verdict(algorithm, "preconditions the proofs use", "fail" if out["failed"] else "pass",
                           "failing: " + ", ".join(out["failed"]) if out["failed"] else "all hold",
                           f"admmcheck bound {algorithm} --step-epsilon 1 --iterations {profile.dpsda_rounds} --seed {seed} "
                           "--json", None, {"preconditions": out["preconditions"]})
        _timed(report, regret)
        _timed(report, preconditions)

    def audit(name: str) -> Verdict:
        found = run_mechanism_audit(MechanismAudit(
            name, replace(OnlineSetting.DEFAULTS["audit"], seed=seed), white_box=True,
            settings=_audit_settings(name, profile, seed, profile.audit_samples), **profile.neighbours(name)))
        white = found.white_box
        violated = found.outcome == "failed"
        return Verdict(name, REGISTRY.mechanism(name).labels.get("audit", "audit of the full transcript against "
                                                                          "T*epsilon"),
                       "violation" if violated else "pass",
                       f"epsilon >= {found.result.epsilon_lower_bound:.4f}; exact worst {white.worst_case:.4f} "
                       f"vs claim {found.audited.claimed.epsilon:g}",
                       f"admmcheck audit {name} --white-box --samples {profile.audit_samples} "
                       f"{profile.neighbour_flags(name)}--seed {seed} --json",
                       float(white.worst_case), {"neighbours": found.neighbours})
    for name in select(REGISTRY.names(ONLINE, report=True, builtin=True)):
        _timed(report, partial(audit, name))
    if not algorithms:
        return
    epsilons = [0.2, 0.5, 1.0, 2.0, 5.0]
    series = {}
    for algorithm in algorithms:  # the noiseless line is the regret verdict's run (eps = inf)
        series[algorithm] = {"x": epsilons, "y": [
            ONLINE.run(REGISTRY[algorithm], OnlineSetting(iterations=profile.dpsda_rounds, step_epsilon=e, seed=seed,
                                                          trials=3)).regret / profile.dpsda_rounds
            for e in epsilons]}
        series[f"{algorithm} without noise"] = {"x": epsilons,
                                                "y": [regrets[algorithm]["regret"] / profile.dpsda_rounds] * len(epsilons)}
    report.figures["dpsda_tradeoff"] = XY(
        log=True, xlabel="epsilon per round (Lemma 1's sigma)", ylabel="regret(T) / T",
        title=f"DPSDA: regret/T against epsilon (§6.1 linear regression, T = {profile.dpsda_rounds}, 3 runs)",
        series=series, algorithms=list(algorithms))
    report.figures["dpsda"] = Table(title="DPSDA regret at T and the theorems' bounds", series=regrets,
                                    algorithms=list(algorithms))


def _replicated(report: Report, experiment: Replicable, profile: Profile, seed: int,
                algorithms: Sequence[str]) -> None:
    """The rows of ``experiment`` (a paper's experiment on the paper's data) whose algorithm is one of
    ``algorithms``, each failure's finding, and its time shared among its rows."""
    started = time.perf_counter()
    result = experiment.run(profile.replication_runs, seed)
    command = experiment.command(profile.replication_runs, seed)
    rows = [check for check in result.checks if check.algorithm in algorithms]
    if experiment.data not in report.data:
        report.data.append(experiment.data)
    if result.figure is not None:
        report.figures[f"replication_{experiment.name}"] = result.figure
    for check in rows:
        report.add(Verdict(check.algorithm, check.check, check.verdict, check.detail, command + " (field checks)",
                           check.value, {"experiment": experiment.name}), (time.perf_counter() - started) / len(rows))
        if check.finding and check.verdict in ("fail", "violation"):
            report.findings.append({"algorithm": check.algorithm, "title": check.finding,
                                    "evidence": check.detail, "command": command})


CAVEAT = "a verdict at one setting is not a proof for all settings"


def _registered(report: Report, profile: Profile, seed: int, select: Selection,
                changes: Mapping[str, Mapping[str, str]]) -> None:
    """Every mechanism a plugin registered (or this process did), of any family, checked as far as its capabilities
    go, at the setting its spec declares for its audit (:meth:`~admmcheck.mechanisms.registry.MechanismSpec.
    setting_for_audit`, with ``changes``): its claim there (its notion, parameters and source), the black-box audit
    always, the white box where it has one and its claim is pure ε. Its convergence conditions are checked with the
    papers' (``conditions``), its non-private algorithms' convergence with theirs (``convergence``). Every command is
    generated from the setting."""
    from admmcheck.commands.audit import MechanismAudit

    for name in select(REGISTRY.names(private=True, builtin=False)):
        spec = REGISTRY.mechanism(name)
        setting = replace(_changed(spec, spec.setting_for_audit(), changes.get(name, {})), seed=seed)
        defaults = spec.setting_type.defaults("audit")
        where = f"at {' '.join(_flags(setting, defaults, 'audit')) or 'its audit defaults'}"
        # bound starts from its own defaults: its replay gives every field by which the setting differs from them
        bound_command = shlex.join(["admmcheck", "bound", name,
                                    *_flags(setting, spec.setting_type.defaults("bound"), "bound", spec=spec), "--json"])
        try:
            claim = spec.claim_value(setting)
        except PreconditionError as refused:
            report.add(Verdict(name, f"claim {where}", "fail", str(refused), bound_command, None,
                               {"setting": _setting_dict(setting), "audited_at": where, "caveat": CAVEAT}), 0.0)
            continue
        report.add(Verdict(name, f"claim {where}", "pass", str(claim), bound_command, claim.value,
                           {"claim": claim.as_dict(), "setting": _setting_dict(setting), "audited_at": where,
                            "caveat": CAVEAT}), 0.0)
        samples = profile.audit_samples
        config = MechanismAudit(name, setting, settings=_audit_settings(name, profile, seed, samples),
                                **profile.neighbours(name))
        command = shlex.join(["admmcheck", "audit", name, *_flags(setting, defaults, "audit", skip=("seed",)),
                              "--samples", str(samples), *profile.neighbour_flags(name).split(), "--seed", str(seed),
                              "--json"])
        _timed(report, lambda: _registered_black(name, config, claim, where, command))
        if spec.supports("white_box") and isinstance(claim, ApproxDp) and claim.delta == 0:
            white = MechanismAudit(name, setting, where=_first_place(name)[0], white_box=True,
                                   settings=_audit_settings(name, profile, seed, profile.white_samples))
            white_command = shlex.join(["admmcheck", "audit", name, *_flags(setting, defaults, "audit", skip=("seed",)),
                                        "--white-box", *_first_place(name)[1].split(), "--samples",
                                        str(profile.white_samples), "--seed", str(seed), "--json"])
            _timed(report, lambda: _registered_white(name, white, claim, where, white_command))


def _registered_black(name: str, config: Any, claim: Any, where: str, command: str) -> Verdict:
    from admmcheck.commands.audit import run_mechanism_audit

    result = run_mechanism_audit(config).result
    return Verdict(name, f"black-box audit {where} against {claim.describe()}",
                   "violation" if result.verdict == "violation" else "pass",
                   f"{claim.parameter} >= {result.claim_lower_bound:.4f} (claim {claim.value:.4g})", command,
                   float(result.claim_lower_bound),
                   {"event": result.event, "claim": claim.as_dict(), "audited_at": where, "caveat": CAVEAT})


def _registered_white(name: str, config: Any, claim: Any, where: str, command: str) -> Verdict:
    from admmcheck.commands.audit import run_white_box

    white = run_white_box(config)
    return Verdict(name, f"white-box loss {where} within {claim.describe()}",
                   "violation" if white.outcome == "failed" else "pass",
                   f"largest sampled loss {white.max_loss:.4f} (claim {claim.value:.4g})", command,
                   float(white.max_loss), {"claim": claim.as_dict(), "audited_at": where, "caveat": CAVEAT})


def _flags(setting: Any, defaults: Any, command: str, skip: tuple[str, ...] = (), spec: Any = None) -> list[str]:
    """The flags of ``command`` that give ``setting`` where it differs from ``defaults`` (the replay commands); with
    ``spec``, without the algorithm parameters it does not read (its commands refuse them)."""
    offered = {item.name for item in flag_fields(type(setting), command)
               if spec is None or not item.metadata.get("algorithm_parameter") or item.name in spec.parameters}
    return as_flags(setting, defaults, skip=skip + tuple(item.name for item in fields(setting)
                                                         if item.name not in offered))


def _setting_dict(setting: Any) -> dict[str, object]:
    return {item.name: getattr(setting, item.name) for item in fields(setting)}


def _changed(spec: Any, setting: Any, texts: Mapping[str, str]) -> Any:
    """``setting`` with the fields ``texts`` names, each read as its flag reads it (``verify --set``)."""
    known = {item.name: item for item in fields(setting) if "help" in item.metadata}
    values = {}
    for name, text in texts.items():
        if name not in known:
            raise InvalidConfiguration(f"--set {spec.name}.{name}: {spec.setting_type.__name__} has no field {name!r}; "
                                       f"choose among {', '.join(known)}", parameter="set")
        read = known[name].metadata.get("read") or str
        values[name] = read(text)
    return replace(setting, **values)


def _attack(report: Report, profile: Profile, seed: int, select: Selection) -> None:
    from admmcheck.commands.attack import AttackConfig, run_attack

    if not select.has("pp"):  # Appendix E attacks PP's released iterates
        return

    def make() -> Verdict:
        public = run_attack(AttackConfig(public_eta=True, trials=profile.attack_trials, seed=seed))
        private = run_attack(AttackConfig(public_eta=False, trials=profile.attack_trials, seed=seed))
        report.figures["kkt_attack"] = Curves(title="KKT attack: |cos| against t",
                                              series={"public eta": public.found.cosine.tolist(),
                                                      "private eta": private.found.cosine.tolist()},
                                              algorithms=["pp"])
        works = public.final_cosine >= 0.9 and private.final_cosine < public.final_cosine
        return Verdict("pp", "App. E attack: public eta leaks the record, private eta less",
                       "pass" if works else "fail",
                       f"|cos| {public.final_cosine:.3f} (public) vs {private.final_cosine:.3f} (private)",
                       f"admmcheck attack kkt --public-eta --trials {profile.attack_trials} --seed {seed} --json and "
                       f"--private-eta", public.final_cosine)
    _timed(report, make)


EXPERIMENT_ALGORITHM = {"madmm-fig1": "madmm", "madmm-fig2": "pp", "madmm-fig3": "pp", "madmm-fig4": "pp",
                        "radmm-fig1": "radmm", "radmm-fig2": "radmm", "radmm-fig3": "radmm"}


#: The experiments whose paired comparisons need more runs to be decided at the report's level (issue 63): at seed 0,
#: T = 100, 10 runs left 2 of R-ADMM Fig. 2's 4 comparisons and 1 of Fig. 3's 2 undecided, 80 runs one of Fig. 2's,
#: 150 runs none (the profile's ``decisive_runs``)
DECISIVE = ("radmm-fig2", "radmm-fig3")


def _experiments(report: Report, profile: Profile, seed: int, select: Selection) -> None:
    """The papers' figures with each paper's claim about its figure tested
    (:func:`admmcheck.experiments.figures.paper_claim`): the convergence and accuracy/privacy figures on
    the default setting (breast-cancer, ring:5; the convergence ones noiseless, one run), and in
    the ``full`` profile the 100-node figures on Adult; then the experiments rerun on the papers' own data
    (:data:`~admmcheck.commands.replicate.REPLICABLE`: DPSDA on MNIST, ADMM sharing on a9a)."""
    from admmcheck.experiments.figures import EXPERIMENTS, LARGE_NETWORK, ExperimentFigure, curves_document
    from admmcheck.commands.consensus import ExperimentConfig, experiment_of

    for name in EXPERIMENTS:
        if name in LARGE_NETWORK and not profile.large_experiments or not select.has(EXPERIMENT_ALGORITHM[name]):
            continue

        def make(name=name) -> Verdict:
            flags = {"name": name, "iterations": profile.experiment_iterations, "seed": seed,
                     "runs": 1 if name.endswith("fig1") else profile.decisive_runs if name in DECISIVE
                     else profile.experiment_runs}
            if name in LARGE_NETWORK:  # the paper's 100 nodes on Adult, its 10 runs, T = 100
                flags |= {"dataset": "adult", "runs": 10, "iterations": min(100, profile.experiment_iterations)}
            config = ExperimentConfig.from_flags(flags)
            experiment = experiment_of(config)
            claim = experiment.summary()["claim"]
            algorithm = EXPERIMENT_ALGORITHM[name]
            report.figures[f"experiment_{name}"] = ExperimentFigure(
                experiment=name, curves=curves_document(experiment),
                title=f"{name} ({config.dataset}, {experiment.description['graph']}, {config.runs} run(s)): L_mean(t) "
                      "with L_range(t) bars, and " + ("the relative objective gap to CVXPY" if name.endswith("fig1")
                                                     else "the privacy bound P(t)"), algorithms=[algorithm])
            comparisons = claim["comparisons"]
            outcomes = [c["outcome"] for c in comparisons]
            figure = ", ".join(f"{outcomes.count(o)} {o}" for o in ("supports", "contradicts", "undecided")
                               if o in outcomes) + " of " + str(len(outcomes)) + " comparisons"
            if claim["verdict"] == "fail":
                report.findings.append({
                    "algorithm": algorithm, "title": f"{name}: the paper's claim is contradicted",
                    "evidence": claim["claim"] + ". " + "; ".join(c["summary"] for c in comparisons
                                                                 if c["outcome"] == "contradicts"),
                    "command": _experiment_command(name, config)})
            return Verdict(algorithm, f"{name}: {claim['claim']}", claim["verdict"], figure,
                           _experiment_command(name, config), None, {"claim": claim})
        _timed(report, make)
    for experiment in REPLICABLE.values():  # the papers' experiments on the papers' data (issue 63)
        algorithms = select(experiment.algorithms)
        if algorithms:
            _replicated(report, experiment, profile, seed, algorithms)


def _experiment_command(name: str, config) -> str:
    return (f"admmcheck experiment {name} --dataset {config.dataset} --iterations {config.iterations} --runs "
            f"{config.runs} --seed {config.seed} --json (field claim)")
