"""What ``admmcheck audit`` runs, as plain data in and an :class:`AuditResult` out: a third-party
mechanism (:class:`CodeAuditConfig`) or one of our registered consensus mechanisms
(:class:`ReferenceAuditConfig`). Both carry one :class:`~admmcheck.audit.running.settings.AuditSettings`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from admmcheck.audit.auditor import AuditResult, audit
from admmcheck.audit.inputs.contract import Pair, PairSequence, PrivacyClaim
from admmcheck.audit.inputs.datafiles import is_data_file, read_pair
from admmcheck.audit.inputs.neighbourhoods import (NEIGHBOUR_KINDS, QueryAnswerPairs, candidate_pairs, parse_domain,
                                            read_dataset)
from admmcheck.audit.running.octave import require_octave
from admmcheck.audit.running.sampling import Source
from admmcheck.audit.running.settings import SearchSettings
from admmcheck.audit.search import search_audit
from admmcheck.audit.running.settings import AuditSettings
from admmcheck.errors import InvalidConfiguration, PreconditionError
from admmcheck.mechanisms.consensus import ReferenceMechanism
from admmcheck.mechanisms.registry import REGISTRY, MechanismSpec
from admmcheck.privacy import BoundSetting
from admmcheck.schedules import ScheduleLike
from admmcheck.setting import ProblemSetting, build_problem


@dataclass(frozen=True)
class CodeAuditConfig:
    """A third-party audit: ``mechanism`` is ``FILE.py:NAME``, ``module:NAME`` or ``FILE.m:FUNCTION``
    (run in GNU Octave); the claim is (``epsilon``, ``delta``). The neighbours are either given,
    ``neighbors``: one of those or data files (``D0.csv,D1.csv``, ``PAIR.npz``:
    :mod:`admmcheck.audit.inputs.datafiles`), or searched (:mod:`admmcheck.audit.search`) among the candidates
    of ``neighbour_kind``: ``replace-one`` or ``add-remove`` of a record of ``dataset`` (CSV or NPZ,
    :func:`~admmcheck.audit.inputs.neighbourhoods.read_dataset`; replaced records lie in ``record_domain``), or
    ``query-answers``: StatDP's patterns on ``queries`` query answers; ``neighbour_search`` is the
    search's budget."""

    mechanism: str | None = None
    neighbors: str | None = None
    epsilon: float | None = None
    delta: float = 0.0
    dataset: str | None = None
    label_column: str | None = None
    neighbour_kind: str | None = None
    record_domain: str | None = None
    queries: int | None = None
    neighbour_search: SearchSettings = field(default_factory=SearchSettings)
    settings: AuditSettings = field(default_factory=AuditSettings)

    def __post_init__(self) -> None:
        if self.mechanism is None:
            raise InvalidConfiguration("mechanism is required: FILE.py:NAME, module:NAME or FILE.m:FUNCTION",
                                       parameter="mechanism")
        if (self.neighbors is None) == (self.neighbour_kind is None):
            raise InvalidConfiguration(
                "neighbors " + ("and neighbour_kind both given: give the neighbours one way: " if self.neighbors
                                else "or neighbour_kind is required: ")
                + "neighbors FILE.py:NAME, module:NAME, FILE.m:FUNCTION, D0.csv,D1.csv or PAIR.npz for a pair you "
                "know, or neighbour_kind replace-one or add-remove with dataset FILE (or query-answers with queries "
                "N) to have them searched", parameter="neighbors")
        for value in (self.mechanism, self.neighbors):
            if value is not None and value.rpartition(":")[0].endswith(".m"):
                require_octave(value)
        if self.neighbors is not None:
            searched = [name for name in ("dataset", "label_column", "record_domain", "queries")
                        if getattr(self, name) is not None]
            if searched:
                raise InvalidConfiguration(f"{searched[0]} is for searched neighbours (neighbour_kind); with neighbors "
                                           "the pair is given", parameter=searched[0])
            if is_data_file(self.neighbors):
                read_pair(self.neighbors)  # data, not code: refused here, before any worker starts, when malformed
        else:
            self.candidates()  # the dataset and domain are read and refused here, before any worker starts
        if self.epsilon is None:
            raise InvalidConfiguration("epsilon is required: the epsilon the mechanism claims", parameter="epsilon")
        PrivacyClaim(self.epsilon, self.delta)

    def candidates(self) -> PairSequence:
        """The candidate pairs the search screens (``neighbour_kind`` given)."""
        if self.neighbour_kind not in NEIGHBOUR_KINDS:
            raise InvalidConfiguration(f"neighbour_kind={self.neighbour_kind!r}: choose {', '.join(NEIGHBOUR_KINDS)}",
                                       parameter="neighbour_kind")
        if self.neighbour_kind == "query-answers":
            for name in ("dataset", "label_column", "record_domain"):
                if getattr(self, name) is not None:
                    raise InvalidConfiguration(f"{name} does not apply to query-answers neighbours (StatDP's patterns "
                                               "on queries N answers); remove it", parameter=name)
            if self.queries is None:
                raise InvalidConfiguration("queries is required with query-answers neighbours: how many query "
                                           "answers the mechanism takes", parameter="queries")
            return QueryAnswerPairs(self.queries)
        if self.queries is not None:
            raise InvalidConfiguration("queries is for query-answers neighbours; remove it", parameter="queries")
        if self.dataset is None:
            raise InvalidConfiguration(f"dataset is required with {self.neighbour_kind} neighbours: the records "
                                       "(CSV or NPZ) whose neighbours are searched", parameter="dataset")
        data = read_dataset(self.dataset, self.label_column)
        if self.record_domain is not None and self.neighbour_kind != "replace-one":
            raise InvalidConfiguration("record_domain is where replaced records lie: it applies to replace-one "
                                       "neighbours only; remove it", parameter="record_domain")
        domain = None if self.record_domain is None else parse_domain(self.record_domain, data.features.shape[1])
        return candidate_pairs(data, self.neighbour_kind, domain, most=self.neighbour_search.candidates,
                               seed=self.settings.seed)


def run_audit(config: CodeAuditConfig, progress: bool = False) -> AuditResult:
    """Audit the mechanism of ``config`` (loaded only in worker processes) on the given neighbours, or
    on the pairs the neighbour search chooses."""
    claim = PrivacyClaim(config.epsilon, config.delta)
    if config.neighbors is None:
        return search_audit(Source(spec=config.mechanism), config.candidates(), claim, config.settings,
                            config.neighbour_search, progress=progress)
    return audit(Source(spec=config.mechanism), Source(spec=config.neighbors), claim, config.settings,
                 progress=progress)


def consensus_mechanisms() -> tuple[str, ...]:
    """The registered private consensus mechanisms (the ones :class:`ReferenceAuditConfig` audits)."""
    return REGISTRY.names("consensus", private=True)


@dataclass(frozen=True)
class ReferenceAuditConfig(ProblemSetting):
    """An audit of a registered consensus mechanism on a small setting, against its theorem's β
    (a mechanism without a theorem, such as PVP: give ``epsilon``). The neighbours change one record
    (``neighbours`` says how): ``record = (node, index)`` when given, else the record the neighbour
    search chooses among every record of every node (budget ``neighbour_search``, default the
    mechanism's registered one). ``settings`` default to the mechanism's registered audit settings."""

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
    record: tuple[int, int] | None = None
    epsilon: float | None = None
    settings: AuditSettings | None = None
    neighbour_search: SearchSettings | None = None

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
        if self.record is not None and (len(self.record) != 2 or not all(isinstance(v, int) for v in self.record)):
            raise InvalidConfiguration(f"record={self.record!r}: write the record as (node, index), e.g. (0, 3)",
                                       parameter="record")
        if self.settings is None:
            object.__setattr__(self, "settings", spec.audit.but(seed=self.seed))
        if self.neighbour_search is None:
            object.__setattr__(self, "neighbour_search", spec.search)

    @property
    def spec(self) -> MechanismSpec:
        return REGISTRY.mechanism(self.mechanism)


def reference_claim(config: ReferenceAuditConfig) -> tuple[PrivacyClaim, dict[str, object], ReferenceMechanism, Pair]:
    """The claim (the theorem's β as ``admmcheck bound`` evaluates it, or ``epsilon`` where the
    mechanism has no theorem), the bound's summary, the mechanism and the neighbour pair of
    ``config.record`` (record 0 of node 0 when none is given: the white box's default)."""
    claim, bound, mechanism, problem = _reference(config)
    return claim, bound, mechanism, Pair(*config.spec.neighbours(problem, config.record or (0, 0), config.neighbours))


def _reference(config: ReferenceAuditConfig) -> tuple[PrivacyClaim, dict[str, object], ReferenceMechanism, object]:
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
    return PrivacyClaim(epsilon), (bound.summary() if bound else {"theorem": None}), mechanism, problem


def run_reference_audit(config: ReferenceAuditConfig, progress: bool = False) -> tuple[AuditResult, dict[str, object]]:
    """Audit a reference mechanism against its theorem (the workers receive it by pickle: our own code),
    on ``config.record`` or on the record the neighbour search chooses."""
    claim, bound, mechanism, problem = _reference(config)
    settings = config.settings.but(randomness="seeded")  # our own code: a difference between draws is a bug
    return audit_registered(config.spec, mechanism, problem, config.neighbours, config.record, claim, settings,
                            config.neighbour_search, progress), bound


def audit_registered(spec: MechanismSpec, mechanism: object, problem: object, kind: str, where: object | None,
                     claim: PrivacyClaim, settings: AuditSettings, search: SearchSettings,
                     progress: bool = False) -> AuditResult:
    """Audit our registered mechanism ``spec`` (``mechanism``: a run of ``mechanism.iterations``) on the
    neighbours of ``kind`` at ``where``, or, with ``where`` None, on the pair the neighbour search chooses
    among every place ``spec.candidates`` lists whose change ``spec.influences`` the release."""
    if where is not None:
        if not spec.influences(where, mechanism.iterations):
            raise InvalidConfiguration(f"where={where!r}: this change of {spec.name}'s data moves nothing that "
                                       f"{mechanism.iterations} iterations release; choose another place",
                                       parameter="where")
        return audit(Source(obj=mechanism), Source(obj=Pair(*spec.neighbours(problem, where, kind))), claim, settings,
                     progress=progress)
    candidates = spec.candidate_pairs(problem, kind, mechanism.iterations, most=search.candidates, seed=settings.seed)
    return search_audit(Source(obj=mechanism), candidates, claim, settings, search, progress=progress)


def audited_place(result: AuditResult, where: object | None) -> object:
    """Where the audited pair changes the data: ``where`` when it was given, else the place the search found."""
    if where is not None:
        return where
    found = result.search["found"]["where"]
    return tuple(found) if isinstance(found, list) else found
