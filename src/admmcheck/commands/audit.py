"""What ``admmcheck audit`` runs, as plain data in and an :class:`AuditResult` out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from admmcheck.audit.auditor import AuditResult, audit
from admmcheck.audit.contract import Pair, PrivacyClaim
from admmcheck.mechanisms.consensus import NEIGHBOUR_KINDS, REFERENCE_MECHANISMS, ReferenceMechanism, replace_one_record
from admmcheck.audit.sampling import RANDOMNESS_MODES, Source
from admmcheck.errors import InvalidConfiguration, PreconditionError
from admmcheck.commands.consensus import BoundConfig, constant_eta, evaluate_bound
from admmcheck.setting import SETTING_FIELDS, ProblemSetting, build_problem
from admmcheck.schedules import ScheduleLike
from admmcheck.validation import non_negative_int, positive_int, real


def check_audit_settings(samples: int, confidence: float, workers: int | None, timeout: float,
                         max_time: float | None = None, samples_flag: str = "--samples") -> None:
    """Refuse, naming the flag, what no audit can run with (every audit command uses this)."""
    positive_int(samples_flag, samples)
    if workers is not None:
        positive_int("--workers", workers)
    real("--timeout", timeout)
    if max_time is not None:
        real("--max-time", max_time)
    if not 0.5 <= confidence < 1:
        raise InvalidConfiguration(f"--confidence {confidence!r} must lie in [0.5, 1)")


@dataclass(frozen=True)
class AuditConfig:
    """A third-party audit: ``mechanism`` and ``neighbors`` are ``FILE.py:NAME`` or ``module:NAME``."""

    mechanism: str | None = None
    neighbors: str | None = None
    epsilon: float | None = None
    delta: float = 0.0
    samples: int = 100_000
    confidence: float = 0.95
    seed: int = 0
    workers: int | None = None
    timeout: float = 10.0
    max_time: float | None = None
    checkpoint: str | None = None
    scheduler: str | None = None
    randomness: str = "auto"
    exceptions_are_outputs: bool = False

    def __post_init__(self) -> None:
        for flag, value in (("--mechanism", self.mechanism), ("--neighbors", self.neighbors)):
            if value is None:
                raise InvalidConfiguration(f"{flag} is required: FILE.py:NAME or module:NAME")
        if self.epsilon is None:
            raise InvalidConfiguration("--epsilon is required: the epsilon the mechanism claims")
        PrivacyClaim(self.epsilon, self.delta)
        non_negative_int("--seed", self.seed)
        check_audit_settings(self.samples, self.confidence, self.workers, self.timeout, self.max_time)
        if self.randomness not in RANDOMNESS_MODES:
            raise InvalidConfiguration(f"--randomness {self.randomness!r}: choose one of {', '.join(RANDOMNESS_MODES)}")


def run_audit(config: AuditConfig, progress: bool = False) -> AuditResult:
    """Audit the mechanism of ``config`` (loaded only in worker processes)."""
    return audit(Source(spec=config.mechanism), Source(spec=config.neighbors),
                 PrivacyClaim(config.epsilon, config.delta), samples=config.samples, confidence=config.confidence,
                 seed=config.seed, workers=config.workers, timeout=config.timeout, max_time=config.max_time,
                 checkpoint=config.checkpoint, progress=progress, scheduler=config.scheduler,
                 randomness=config.randomness, exceptions_are_outputs=config.exceptions_are_outputs)


@dataclass(frozen=True)
class ReferenceAuditConfig(ProblemSetting):
    """An audit of one of our reference mechanisms on a small setting, against its theorem's β
    (PVP has no theorem: give ``epsilon``). The neighbours change record 0 of node 0."""

    mechanism: str = "pp"
    dataset: str = "synthetic"
    nodes: int = 3
    iterations: int = 5
    samples: int = 30
    dim: int = 2
    eta: ScheduleLike = 1.0
    theta: float = 1.0
    alpha: ScheduleLike = 5.0
    gamma: float = 0.2
    neighbours: str = "label-flip"
    epsilon: float | None = None
    audit_samples: int = 20_000
    confidence: float = 0.95
    workers: int | None = None
    timeout: float = 60.0
    max_time: float | None = None
    checkpoint: str | None = None
    scheduler: str | None = None

    ONLY_FOR: ClassVar[dict[str, tuple[str, tuple[str, ...]]]] = ProblemSetting.ONLY_FOR | {
        "theta": ("mechanism", ("pp", "dvp")),
        "gamma": ("mechanism", ("radmm",)),
        "epsilon": ("mechanism", ("pvp",)),
    }
    FLAG_NAMES: ClassVar[dict[str, str]] = {"mechanism": "MECHANISM", "audit_samples": "--samples",
                                            "neighbours": "--neighbour-kind"}

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mechanism not in REFERENCE_MECHANISMS:
            raise InvalidConfiguration(f"unknown mechanism {self.mechanism!r}; choose one of "
                                       f"{', '.join(REFERENCE_MECHANISMS)}")
        if self.neighbours not in NEIGHBOUR_KINDS[:2]:
            raise InvalidConfiguration(f"--neighbour-kind {self.neighbours!r}: the theorems use replace-one "
                                       f"neighbours; choose {' or '.join(NEIGHBOUR_KINDS[:2])}")
        if self.mechanism == "pvp" and self.epsilon is None:
            raise InvalidConfiguration("pvp has no privacy theorem to audit against; give --epsilon")
        check_audit_settings(self.audit_samples, self.confidence, self.workers, self.timeout, self.max_time)


def reference_claim(config: ReferenceAuditConfig) -> tuple[PrivacyClaim, dict[str, object], ReferenceMechanism, Pair]:
    """The claim (the theorem's β as ``admmcheck bound`` evaluates it, or ``epsilon`` for PVP),
    the bound's summary, the mechanism and the neighbour pair."""
    setting = {name: getattr(config, name) for name in SETTING_FIELDS}
    problem, network = build_problem(config)
    bound = None
    if config.mechanism in ("pp", "dvp"):
        penalty = config.theta if config.mechanism == "dvp" else config.eta
        bound, _ = evaluate_bound(BoundConfig(mechanism="pp", eta=penalty, theta=config.theta, alpha=config.alpha,
                                              **setting))
        parameters = {"alpha": config.alpha, "theta": config.theta}
        if config.mechanism == "pp":
            parameters["penalty"] = config.eta
    else:
        eta = constant_eta(config.eta, config.iterations, problem.nodes, config.mechanism)
        parameters = {"eta": eta, "alpha": config.alpha}
        if config.mechanism == "radmm":
            bound, _ = evaluate_bound(BoundConfig(mechanism="radmm", eta=eta, alpha=config.alpha, **setting))
            parameters["gamma"] = config.gamma
    if bound is not None and not bound.holds:
        raise PreconditionError(f"{bound.theorem} does not apply on this setting ({', '.join(bound.failed)} "
                                "fail); there is no claim to audit. Raise --theta/--eta or the node sizes")
    epsilon = config.epsilon if bound is None else bound.require()
    mechanism = ReferenceMechanism(config.mechanism, network, config.iterations, parameters)
    pair = Pair(*replace_one_record(problem, 0, 0, config.neighbours))
    return PrivacyClaim(epsilon), (bound.summary() if bound else {"theorem": None}), mechanism, pair


def run_reference_audit(config: ReferenceAuditConfig, progress: bool = False) -> tuple[AuditResult, dict[str, object]]:
    """Audit a reference mechanism against its theorem (the workers receive it by pickle: our own code)."""
    claim, bound, mechanism, pair = reference_claim(config)
    result = audit(Source(obj=mechanism), Source(obj=pair), claim, samples=config.audit_samples,
                   confidence=config.confidence, seed=config.seed, workers=config.workers, timeout=config.timeout,
                   max_time=config.max_time, checkpoint=config.checkpoint, progress=progress,
                   scheduler=config.scheduler, randomness="seeded")  # our own code: a difference is a bug
    return result, bound
