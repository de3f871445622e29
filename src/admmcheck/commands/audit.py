"""What ``admmcheck audit`` runs, as plain data in and an :class:`AuditResult` out: a third-party
mechanism (:class:`CodeAuditConfig`) or one of our registered consensus mechanisms
(:class:`ReferenceAuditConfig`). Both carry one :class:`~admmcheck.audit.settings.AuditSettings`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from admmcheck.audit.auditor import AuditResult, audit
from admmcheck.audit.contract import Pair, PrivacyClaim
from admmcheck.audit.datafiles import is_data_file, read_pair
from admmcheck.audit.octave import require_octave
from admmcheck.audit.sampling import Source
from admmcheck.audit.settings import AuditSettings
from admmcheck.errors import InvalidConfiguration, PreconditionError
from admmcheck.mechanisms.consensus import ReferenceMechanism
from admmcheck.mechanisms.registry import REGISTRY, MechanismSpec
from admmcheck.privacy import BoundSetting
from admmcheck.schedules import ScheduleLike
from admmcheck.setting import ProblemSetting, build_problem


@dataclass(frozen=True)
class CodeAuditConfig:
    """A third-party audit: ``mechanism`` is ``FILE.py:NAME``, ``module:NAME`` or ``FILE.m:FUNCTION``
    (run in GNU Octave); ``neighbors`` one of those or data files (``D0.csv,D1.csv``, ``PAIR.npz``:
    :mod:`admmcheck.audit.datafiles`); the claim is (``epsilon``, ``delta``)."""

    mechanism: str | None = None
    neighbors: str | None = None
    epsilon: float | None = None
    delta: float = 0.0
    settings: AuditSettings = field(default_factory=AuditSettings)

    def __post_init__(self) -> None:
        for name, value in (("mechanism", self.mechanism), ("neighbors", self.neighbors)):
            if value is None:
                raise InvalidConfiguration(f"{name} is required: FILE.py:NAME, module:NAME or FILE.m:FUNCTION",
                                           parameter=name)
            if value.rpartition(":")[0].endswith(".m"):
                require_octave(value)
        if is_data_file(self.neighbors):
            read_pair(self.neighbors)  # data, not code: refused here, before any worker starts, when malformed
        if self.epsilon is None:
            raise InvalidConfiguration("epsilon is required: the epsilon the mechanism claims", parameter="epsilon")
        PrivacyClaim(self.epsilon, self.delta)


def run_audit(config: CodeAuditConfig, progress: bool = False) -> AuditResult:
    """Audit the mechanism of ``config`` (loaded only in worker processes)."""
    return audit(Source(spec=config.mechanism), Source(spec=config.neighbors),
                 PrivacyClaim(config.epsilon, config.delta), config.settings, progress=progress)


def consensus_mechanisms() -> tuple[str, ...]:
    """The registered private consensus mechanisms (the ones :class:`ReferenceAuditConfig` audits)."""
    return REGISTRY.names("consensus", private=True)


@dataclass(frozen=True)
class ReferenceAuditConfig(ProblemSetting):
    """An audit of a registered consensus mechanism on a small setting, against its theorem's β
    (a mechanism without a theorem, such as PVP: give ``epsilon``). The neighbours change record 0
    of node 0. ``settings`` default to the mechanism's registered audit settings."""

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
    settings: AuditSettings | None = None

    FLAG_NAMES: ClassVar[dict[str, str]] = {"mechanism": "MECHANISM", "neighbours": "--neighbour-kind",
                                            "samples": "--rows"}

    @classmethod
    def only_for(cls) -> dict[str, tuple[str, tuple[str, ...]]]:
        """Which mechanisms read ``theta``, ``gamma`` and ``epsilon`` (from their registry entries)."""
        return ProblemSetting.ONLY_FOR | REGISTRY.readers("mechanism", consensus_mechanisms(),
                                                          ("theta", "gamma", "epsilon"))

    def __post_init__(self) -> None:
        super().__post_init__()
        spec = self.spec
        if spec.family != "consensus":
            raise InvalidConfiguration(f"mechanism={self.mechanism!r} is not a consensus mechanism; choose one of "
                                       f"{', '.join(consensus_mechanisms())}", parameter="mechanism")
        if self.neighbours not in spec.neighbour_kinds:
            raise InvalidConfiguration(f"neighbours={self.neighbours!r}: the theorems use replace-one neighbours; "
                                       f"choose {' or '.join(spec.neighbour_kinds)}", parameter="neighbours")
        if spec.claim is None and self.epsilon is None:
            raise InvalidConfiguration(f"epsilon is required: {self.mechanism} has no privacy theorem to audit against",
                                       parameter="epsilon")
        if self.settings is None:
            object.__setattr__(self, "settings", spec.audit.but(seed=self.seed))

    @property
    def spec(self) -> MechanismSpec:
        return REGISTRY.mechanism(self.mechanism)


def reference_claim(config: ReferenceAuditConfig) -> tuple[PrivacyClaim, dict[str, object], ReferenceMechanism, Pair]:
    """The claim (the theorem's β as ``admmcheck bound`` evaluates it, or ``epsilon`` where the
    mechanism has no theorem), the bound's summary, the mechanism and the neighbour pair."""
    spec = config.spec
    problem, network = build_problem(config)
    bound = None
    if spec.claim is not None:
        bound = spec.claim(BoundSetting.from_problem(problem, network, c1=0.25), config, config.iterations)
        if not bound.holds:
            raise PreconditionError(f"{bound.theorem} does not apply on this setting ({', '.join(bound.failed)} "
                                    "fail); there is no claim to audit. Raise theta/eta or the node sizes")
    epsilon = config.epsilon if bound is None else bound.require()
    mechanism = spec.mechanism(network, config.iterations, config)
    pair = Pair(*spec.neighbours(problem, (0, 0), config.neighbours))
    return PrivacyClaim(epsilon), (bound.summary() if bound else {"theorem": None}), mechanism, pair


def run_reference_audit(config: ReferenceAuditConfig, progress: bool = False) -> tuple[AuditResult, dict[str, object]]:
    """Audit a reference mechanism against its theorem (the workers receive it by pickle: our own code)."""
    claim, bound, mechanism, pair = reference_claim(config)
    settings = config.settings.but(randomness="seeded")  # our own code: a difference between draws is a bug
    return audit(Source(obj=mechanism), Source(obj=pair), claim, settings, progress=progress), bound
