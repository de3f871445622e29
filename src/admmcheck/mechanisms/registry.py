"""One home per algorithm and mechanism: what ``admmcheck run``, ``bound``, ``audit`` and the
verification report look up by name, instead of choosing by name strings of their own.

An :class:`AlgorithmSpec` is a published algorithm: its ``run_*`` function and problem family.
A :class:`MechanismSpec` is a private one, which adds how its claim is computed from
:mod:`admmcheck.privacy`, its neighbours, its exact loss and worst case where the noise law is
known, and its default audit settings. :data:`REGISTRY` holds them all; :func:`register` adds
one (a researcher's own variant: see ``docs/verify-a-new-algorithm.md``).

Every algorithm reads its family's typed setting (:mod:`admmcheck.mechanisms.settings`: :class:`ConsensusSetting`,
:class:`SharingSetting`, :class:`OnlineSetting`), and every claim has one signature, ``claim(setting)``. What
differs between families is a capability each spec gets at registration (its family's default unless it gives its
own): the neighbours and the places they change, how an audit builds what it runs (``auditable``), its white box,
its convergence conditions. A capability a spec lacks is refused with a message, never defaulted at the call.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, is_dataclass
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from admmcheck.algorithms import (run_admm, run_admm_edge, run_dvp, run_madmm, run_pp, run_private_radmm, run_pvp,
                                  run_radmm)
from admmcheck.algorithms.dpsda import run_dpsda_c, run_dpsda_ps
from admmcheck.algorithms.sharing import run_dp_sharing, run_sharing
from admmcheck.audit.running.settings import AuditSettings, SearchSettings
from admmcheck.claims.values import Claim, PureDp
from admmcheck.errors import InvalidConfiguration, PreconditionError, TheoremConditionWarning
from admmcheck.mechanisms import conditions
from admmcheck.mechanisms.canaries import Canaries, ConsensusCanaries, SharingCanaries
from admmcheck.mechanisms.candidates import RegisteredPairs, registered_pairs
from admmcheck.mechanisms.consensus import NEIGHBOUR_KINDS, ReferenceMechanism, keyword_arguments, replace_one_record
from admmcheck.mechanisms.dpsda import (DpsdaMechanism, change_one_round, dpsda_privacy_loss, released_round,
                                        worst_case_loss)
from admmcheck.mechanisms.privacy_loss import privacy_loss
from admmcheck.mechanisms.releases import PenaltyPerturbation, PrimalPerturbation, RecycledOddSteps, Release
from admmcheck.mechanisms.settings import ConsensusSetting, OnlineSetting, SharingSetting
from admmcheck.mechanisms.sharing import SharingMechanism, replace_one_row, sharing_privacy_loss
from admmcheck.mechanisms.white_box import (Auditable, consensus_white_box, online_white_box,
                                            sharing_white_box)
from admmcheck.mechanisms.worst_case import worst_case
from admmcheck.networks import Network
from admmcheck.privacy import pp_bound, radmm_bound
from admmcheck.privacy.dpsda import dpsda_claims
from admmcheck.privacy.sharing import sharing_bound
from admmcheck.schedules import GeometricSchedule, schedule_table
from admmcheck.sharing_experiment import tradeoff_figure

FAMILIES = ("consensus", "sharing", "online")
CONSENSUS, SHARING, ONLINE = FAMILIES
#: what a spec without a capability was registered without, and what to do (:meth:`AlgorithmSpec.require`)
WITHOUT = {"conditions": "it was registered without conditions= (its convergence theorem's exact checks); "
                         "admmcheck conditions --help lists the algorithms that have them",
           "white_box": "it was registered without release= (a consensus mechanism: how its noise enters what it "
                        "releases) or exact_loss=; audit it as a black box",
           "canaries": "it was registered without canaries= (where canary records go in its problem: a consensus "
                       "or sharing mechanism has its family's; DPSDA's records are its rounds, whose number its claim "
                       "reads); audit it with many runs instead (without --canaries)"}
#: the typed setting each family's algorithms read
SETTINGS = {CONSENSUS: ConsensusSetting, SHARING: SharingSetting, ONLINE: OnlineSetting}


@dataclass(frozen=True)
class AlgorithmSpec:
    """A published algorithm: ``run`` is its ``run_*`` function on a problem of ``family``;
    ``parameters`` are the setting fields it reads (the others are refused where typed);
    ``arguments(setting)`` gives ``run``'s keyword arguments from a setting; ``before_run(setting)``
    warns where a run goes ahead outside its theorem; ``conditions`` decides its convergence theorem's
    conditions exactly (:class:`admmcheck.mechanisms.conditions.Conditions`; None: none registered);
    ``stands_for`` the private mechanism its name stands for in ``admmcheck bound`` and ``audit`` (the
    non-private algorithm has no claim of its own)."""

    name: str
    family: str
    title: str
    run: Callable[..., Any]
    parameters: tuple[str, ...] = ()
    arguments: Callable[[Any], dict[str, object]] | None = None
    before_run: Callable[[Any], None] | None = None
    conditions: Any | None = None
    stands_for: str | None = None
    setting: type | None = None

    private = False

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise InvalidConfiguration(f"family={self.family!r}: choose one of {', '.join(FAMILIES)}",
                                       parameter="family")
        family = SETTINGS[self.family]
        if self.setting is not None and not (isinstance(self.setting, type) and issubclass(self.setting, family)
                                             and is_dataclass(self.setting)):
            raise InvalidConfiguration(
                f"{self.name}: setting={self.setting!r} must be a frozen dataclass subclass of {family.__name__} (the "
                f"{self.family} family's setting), e.g. @dataclass(frozen=True) class MySetting({family.__name__}): "
                "clip: float = parameter(1.0, 'clip norm', read=float)", parameter="setting")

    @property
    def setting_type(self) -> type:
        """The typed setting this algorithm reads: its own ``setting`` (its family's, extended with fields of its own:
        each one a flag of ``run``, ``bound`` and ``audit``, a keyword of the assertions, a part of every replay
        command), else its family's."""
        return self.setting or SETTINGS[self.family]

    def run_arguments(self, setting: Any, stated: Any = None) -> dict[str, Any]:
        """``run``'s keyword arguments on ``setting`` beyond what its family passes (the problem, the iterations,
        the seeds; sharing's ``rho``; online's graphs): ``arguments(setting)`` (its own parameters: a noise scale, a
        clip norm, ...), with the noise scale ``sigma`` of the object ``claim(setting)`` returned (``stated``: DP
        sharing's Theorem 1, DPSDA's Lemma 1) where ``arguments`` gives none."""
        given = dict(self.arguments(setting)) if self.arguments is not None else {}
        if "sigma" not in given and hasattr(stated, "sigma"):
            given["sigma"] = stated.sigma
        return given

    def require(self, capability: str) -> Any:
        """The spec's ``capability`` (``conditions``, ``white_box``), refused with what to do where it has none, as
        dp_accounting's accountants refuse an event they do not support."""
        value = getattr(self, capability, None)
        if value is None:
            raise InvalidConfiguration(f"{self.name} has no {capability.replace('_', ' ')}: {WITHOUT[capability]}",
                                       parameter=capability)
        return value


@dataclass(frozen=True)
class MechanismSpec(AlgorithmSpec):
    """A private algorithm, with everything the toolkit checks about it.

    ``claim(setting)`` evaluates its theorem's claim from :mod:`admmcheck.privacy` on its family's setting (None:
    no theorem, the setting's ``epsilon`` is the claim): a consensus mechanism's gives a
    :class:`~admmcheck.privacy.PrivacyBound`, DP sharing's its :class:`~admmcheck.privacy.sharing.SharingPrivacy`,
    DPSDA's its :class:`~admmcheck.privacy.dpsda.DpsdaClaims`. ``auditable(spec, setting)`` builds what an audit
    runs (:class:`~admmcheck.mechanisms.white_box.Auditable`) and ``white_box(spec, auditable, pair, place,
    options)`` its exact loss (default: the family's, where the spec has an exact loss). ``neighbours(problem, where,
    kind)`` builds a neighbour pair (``where``: the record, row or round it changes), of one of
    ``neighbour_kinds``; ``exact_loss`` and ``worst_case`` are the white-box functions (None where
    the noise law gives none); ``audit`` its default audit settings; ``report``: one of admmcheck's own is
    checked in the verification report's paper sections, in the section of the algorithm ``section`` (default: its
    own name); a plugin's mechanism is checked whatever its ``report``, at its ``audit_setting``.
    ``candidates(problem, kind)`` lists every ``where`` a neighbour pair can change, and
    ``influences(where, iterations)`` says whether that change can move what a run of ``iterations``
    releases (default: every place, as a record or row enters every step; DPSDA's last round enters
    nothing released): the neighbour search screens only the places that can (:meth:`candidate_pairs`), and a
    place given that cannot is refused with ``released_note``, why.
    ``place(where, kind)`` names one change in words, and ``search`` is the search's default budget.
    For ``admmcheck verify``: ``first_place`` is the place its audits changed before the neighbour search
    (the place and its CLI flag: the smoke profile audits it), ``bound_arguments(setting)`` the
    ``admmcheck bound`` target and flags that reproduce its claim (consensus), ``labels`` the words of its
    verdicts (keys ``preconditions``, ``audit``, ``finding``, ``regret``; a default built from its title and
    theorem otherwise),
    ``figures`` the report's figures of its own (key -> a function of the seed giving the figure's data).
    ``canaries`` (:class:`~admmcheck.mechanisms.canaries.Canaries`) where a one-run audit's canary records go (default:
    its family's; none for the online family). ``audit_setting``: the setting ``admmcheck verify`` audits it at
    (default: its setting type's audit defaults; ``verify --set NAME.FIELD=VALUE`` changes it), for a mechanism
    registered by a plugin."""

    theorem: str | None = None
    claim: Callable[..., Any] | None = None
    neighbours: Callable[..., tuple[Any, Any]] | None = None
    neighbour_kinds: tuple[str, ...] = NEIGHBOUR_KINDS[:2]
    exact_loss: Callable[..., Any] | None = None
    worst_case: Callable[..., Any] | None = None
    release: Release | None = None
    audit: AuditSettings = field(default_factory=lambda: AuditSettings(samples=20_000, timeout=60.0,
                                                                       randomness="seeded"))
    report: bool = False
    section: str | None = None
    candidates: Callable[[Any, str], list[Any]] | None = None
    influences: Callable[[Any, int], bool] = lambda where, iterations: True
    released_note: str = ""
    place: Callable[[Any, str], str] = lambda where, kind: f"{where}: {kind}"
    search: SearchSettings = field(default_factory=lambda: SearchSettings(samples=1_000))
    first_place: tuple[Any, str] | None = None
    bound_arguments: Callable[[Any], str] | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    figures: Mapping[str, Callable[[int], dict[str, object]]] = field(default_factory=dict)
    auditable: Callable[[Any, Any], Auditable] | None = None
    white_box: Callable[..., dict[str, object]] | None = None
    canaries: Canaries | None = None
    audit_setting: Any = None

    private = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.audit_setting is not None and not isinstance(self.audit_setting, self.setting_type):
            raise InvalidConfiguration(f"{self.name}: audit_setting={self.audit_setting!r} must be a "
                                       f"{self.setting_type.__name__} (the setting its audits read)",
                                       parameter="audit_setting")
        if self.auditable is None:
            object.__setattr__(self, "auditable", FAMILY_AUDITABLE[self.family])
        if self.canaries is None and self.family in FAMILY_CANARIES:
            object.__setattr__(self, "canaries", FAMILY_CANARIES[self.family])
        family = FAMILY_NEIGHBOURS[self.family]
        if self.neighbours is None:  # the family's neighbours, and every capability that goes with them
            for name, value in family.items():
                if name != "first_place" or self.first_place is None:
                    object.__setattr__(self, name, value)
        if self.first_place is None:  # the place the family's audit flag names (--record 0:0, --row 0:0, ...)
            object.__setattr__(self, "first_place", family["first_place"])
        if self.family == CONSENSUS and self.bound_arguments is None:
            flags = [name for name in self.parameters if name not in ("alpha", "epsilon")]
            object.__setattr__(self, "bound_arguments", lambda setting: " ".join(
                [self.name] + [f"--{name} {getattr(setting, name)}" for name in flags]))
        if self.release is not None:
            if self.family != CONSENSUS:
                raise InvalidConfiguration(f"{self.name}: release= describes a consensus mechanism's release; a "
                                           f"{self.family} mechanism registers exact_loss= and worst_case= of its own",
                                           parameter="release")
            self.release.check_run(self.name, keyword_arguments(self.run))
            object.__setattr__(self, "exact_loss", privacy_loss)
            object.__setattr__(self, "worst_case", worst_case)
            object.__setattr__(self, "white_box", self.white_box or consensus_white_box)
        elif self.exact_loss is privacy_loss or self.worst_case is worst_case:
            raise InvalidConfiguration(f"{self.name}: the consensus white box inverts the mechanism's release; "
                                       "register release= (admmcheck.mechanisms.releases: how its noise enters what "
                                       "it releases) instead of exact_loss= and worst_case=", parameter="release")
        if self.white_box is None and self.exact_loss is not None and self.family != CONSENSUS:
            object.__setattr__(self, "white_box", sharing_white_box if self.family == SHARING else online_white_box)

    def candidate_pairs(self, problem: Any, kind: str, iterations: int, most: int = 100,
                        seed: int = 0) -> RegisteredPairs:
        """The neighbour pairs of ``kind`` at every place :attr:`candidates` lists whose change
        :attr:`influences` what a run of ``iterations`` releases (a seeded ``most`` of them when there are
        more), each named: what the neighbour search screens."""
        if self.candidates is None:
            raise InvalidConfiguration(f"{self.name} lists no candidate neighbours to search; give the pair by hand")
        released = [where for where in self.candidates(problem, kind) if self.influences(where, iterations)]
        if not released:
            raise InvalidConfiguration(f"iterations={iterations}: no change of {self.name}'s data moves what "
                                       f"{iterations} iterations release; run more iterations",
                                       parameter="iterations")
        return registered_pairs(self.neighbours, problem, kind, released, lambda where: self.place(where, kind),
                                most, seed)

    def setting_for_audit(self) -> Any:
        """The setting ``verify`` audits this mechanism at: its ``audit_setting``, else its setting type's audit
        defaults."""
        return self.audit_setting if self.audit_setting is not None else self.setting_type.defaults("audit")

    def claim_value(self, setting: Any, stated: Any = None) -> Claim:
        """The claim audited on ``setting``, as a value of its own DP notion (:mod:`admmcheck.claims`): what
        ``claim(setting)`` returns where that is a :class:`~admmcheck.claims.Claim` (an (ε, δ), zCDP, GDP or curve
        claim, δ and all), else the claim its theorem's object makes (``as_claim``: PrivacyBound's β, DP sharing's
        composition, DPSDA's T·ε); without ``claim``, the setting's ``epsilon``. Its source is the claim's own, else
        the spec's ``theorem``, else who registered it. ``stated``: what ``claim(setting)`` returned, where the
        caller has it already."""
        if self.claim is None:
            epsilon = getattr(setting, "epsilon", None)
            if epsilon is None:
                raise InvalidConfiguration(f"epsilon is required: {self.name} has no privacy theorem to audit against",
                                           parameter="epsilon")
            return PureDp(epsilon, source="the epsilon given with the setting")
        stated = self.claim(setting) if stated is None else stated
        source = self.theorem or f"stated by {REGISTRY.origin(self.name)[0] if self.name in REGISTRY else self.name}"
        if isinstance(stated, Claim):
            return stated.with_source(source)
        if not hasattr(stated, "as_claim"):
            raise InvalidConfiguration(f"{self.name}'s claim(setting) returned {type(stated).__name__}; return a "
                                       "claim value of admmcheck.claims (PureDp, ApproxDp, ZeroConcentratedDp, "
                                       "GaussianDp, DpCurve)", parameter="claim")
        return stated.as_claim(self.theorem or "")

    def mechanism(self, network: Network, iterations: int, setting: Any) -> ReferenceMechanism:
        """The auditable mechanism (every broadcast released) on ``network`` for ``setting``."""
        if self.family != CONSENSUS or self.arguments is None:
            raise InvalidConfiguration(f"{self.name} is audited by its own command, not as a consensus mechanism")
        return ReferenceMechanism(self.name, network, iterations, self.arguments(setting), run=self.run,
                                  release=self.release)


@dataclass(frozen=True)
class OnlineSpec(MechanismSpec):
    """A private online mechanism over a time-varying graph sequence (the DPSDA paper's family): ``push_sum``
    True where its graphs are directed and it runs push-sum (DPSDA-PS, Alg. 2; False: DPSDA-C, Alg. 1, doubly
    stochastic weights). Its ``run`` takes ``graphs``, ``sigma``, ``gradient_noise``, ``iterations`` and
    ``seeds``."""

    push_sum: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.family != ONLINE:
            raise InvalidConfiguration(f"{self.name}: an OnlineSpec is of family online, not {self.family}",
                                       parameter="family")


class Registry(Mapping[str, AlgorithmSpec]):
    """Algorithms and mechanisms by name, in the order they were registered: the built-ins, then what installed
    packages register through the entry-point group ``admmcheck.plugins`` (read on the first lookup,
    :meth:`load_plugins`), then what this process registers."""

    def __init__(self) -> None:
        self._specs: dict[str, AlgorithmSpec] = {}
        self._builtins: frozenset[str] = frozenset()
        self._plugins: str = "not loaded"  # "loading", "loaded"
        self.origins: dict[str, Any] = {}  # name -> plugins.Origin, for what plugins registered
        self.failures: list[Any] = []  # plugins.PluginFailure, for the plugins that could not be loaded

    def seal_builtins(self) -> None:
        """The names registered so far are admmcheck's own."""
        self._builtins = frozenset(self._specs)

    def load_plugins(self, points: Callable[[], list[Any]] | None = None) -> list[Any]:
        """Read the entry-point group ``admmcheck.plugins`` once (``points``: the entry points, for tests; reading
        them again); each plugin that fails is a :class:`~admmcheck.mechanisms.plugins.PluginWarning`. Returns
        the failures."""
        if self._plugins == "loading" or (self._plugins == "loaded" and points is None):
            return self.failures
        from admmcheck.mechanisms import plugins

        self._plugins = "loading"
        try:
            origins, failures = plugins.load(self, points)
        finally:
            self._plugins = "loaded"
        self.origins.update(origins)
        self.failures.extend(failures)
        for failure in failures:
            warnings.warn(plugins.PluginWarning(failure.line()), stacklevel=2)
        return self.failures

    def origin(self, name: str) -> tuple[str, str, str | None]:
        """(package, version, entry point) that registered ``name``: admmcheck's own, a plugin's, or this
        process's (package "registered in this process")."""
        spec = self[name]
        if spec.name in self.origins:
            found = self.origins[spec.name]
            return found.package, found.version, found.entry_point
        if spec.name in self._builtins:
            from admmcheck import __version__

            return "admmcheck", __version__, None
        return "registered in this process", "", None

    def listing(self) -> dict[str, list[dict[str, object]]]:
        """Every registered name with its family, kind and origin (package, version, entry point), and every plugin
        that failed to load: what ``admmcheck plugins`` prints."""
        registered = []
        for name in self:
            package, version, point = self.origin(name)
            registered.append({"name": name, "family": self[name].family,
                               "kind": "mechanism" if self[name].private else "algorithm",
                               "package": package, "version": version, "entry_point": point})
        failed = [{"entry_point": f.entry_point, "package": f.package, "version": f.version, "error": f.error}
                  for f in self.failures]
        return {"registered": registered, "failed": failed}

    def registered(self) -> tuple[str, ...]:
        """The names registered so far, without reading the plugins."""
        return tuple(self._specs)

    def _ready(self) -> None:
        if self._plugins == "not loaded":
            self.load_plugins()

    def register(self, spec: AlgorithmSpec, replace: bool = False) -> AlgorithmSpec:
        if spec.name in self._specs and not replace:
            raise InvalidConfiguration(f"{spec.name!r} is registered already; pass replace=True to replace it",
                                       parameter="name")
        self._specs[spec.name] = spec
        return spec

    def unregister(self, name: str) -> AlgorithmSpec:
        """Remove ``name`` (a test's or a notebook's own variant) and return its spec."""
        return self._specs.pop(self[name].name)

    def __getitem__(self, name: str) -> AlgorithmSpec:
        self._ready()
        try:
            return self._specs[name]
        except KeyError:
            raise InvalidConfiguration(f"unknown algorithm or mechanism {name!r}; choose one of "
                                       f"{', '.join(self._specs)}") from None

    def __contains__(self, name: object) -> bool:
        self._ready()
        return name in self._specs

    def __iter__(self) -> Iterator[str]:
        self._ready()
        return iter(self._specs)

    def __len__(self) -> int:
        self._ready()
        return len(self._specs)

    def names(self, family: str | None = None, private: bool | None = None, builtin: bool | None = None,
              **having: object) -> tuple[str, ...]:
        """The registered names of ``family`` (any if None), private or not, admmcheck's own (``builtin``) or not,
        whose attributes equal ``having`` (e.g. ``report=True``)."""
        self._ready()
        return tuple(name for name, spec in self._specs.items()
                     if (family is None or spec.family == family) and (private is None or spec.private == private)
                     and (builtin is None or (name in self._builtins) == builtin)
                     and all(getattr(spec, key, None) == value for key, value in having.items()))

    def mechanism(self, name: str) -> MechanismSpec:
        """The private mechanism ``name``; refuses a non-private algorithm with the names that are private."""
        spec = self[name]
        if not isinstance(spec, MechanismSpec):
            raise InvalidConfiguration(f"{name} is not private; the private mechanisms are "
                                       f"{', '.join(self.names(private=True))}")
        return spec


REGISTRY = Registry()
register = REGISTRY.register

#: the words of the M-ADMM and R-ADMM mechanisms' verdicts in the report
PAPER_LABELS = {"preconditions": "theorem preconditions (Thm 4.1 / IV.1)"}


def _one(values: object) -> object:
    """A per-node tuple of one value as that value (one eta for every node)."""
    return values[0] if isinstance(values, tuple) and len(values) == 1 else values


def constant_eta(eta: object, iterations: int, nodes: int, mechanism: str) -> float:
    """``eta`` (a number, one per node, a schedule) as one number, refusing one that varies (R-ADMM and
    PVP have a fixed eta)."""
    table = schedule_table("eta", _one(eta), iterations, nodes)
    if not np.all(table == table[0, 0]):
        raise InvalidConfiguration(f"eta={eta!r}: {mechanism} takes one constant eta (its algorithm has a fixed "
                                   "eta)", parameter="eta")
    return float(table[0, 0])


def reference_mechanism(name: str, network: Network, iterations: int,
                        parameters: Mapping[str, object] | None = None) -> ReferenceMechanism:
    """The registered consensus mechanism ``name`` with ``run``'s keyword arguments ``parameters``."""
    spec = REGISTRY.mechanism(name)
    return ReferenceMechanism(name, network, iterations, dict(parameters or {}), run=spec.run, release=spec.release)


# ---- what an audit runs, by family (a spec may register its own auditable=) --------------------

def consensus_auditable(spec: MechanismSpec, setting: ConsensusSetting) -> Auditable:
    """Every broadcast released (:class:`ReferenceMechanism`), against the spec's claim on ``setting``
    (:meth:`MechanismSpec.claim_value`: the theorem's β, refused where its preconditions fail)."""
    problem, network = setting.built
    bound = spec.claim(setting) if spec.claim is not None else None
    if bound is not None and not isinstance(bound, Claim) and not bound.holds:
        raise PreconditionError(f"{bound.theorem} does not apply on this setting ({', '.join(bound.failed)} "
                                "fail); there is no claim to audit. Raise theta/eta or the node sizes")
    tested = spec.claim_value(setting, bound)
    summary = bound.summary() if hasattr(bound, "summary") else {"theorem": None, "claim": tested.as_dict()}
    return Auditable(spec.mechanism(network, setting.iterations, setting), problem, bound, tested,
                     {"theorem": summary})


def sharing_auditable(spec: MechanismSpec, setting: SharingSetting) -> Auditable:
    """The shared values released (:class:`SharingMechanism`, rows normalised as Assumption 2.3 asks), against the
    spec's claim (DP sharing's: the smaller of the total and basic composition)."""
    claim = spec.claim(setting)
    tested = spec.claim_value(setting, claim)
    arguments = spec.run_arguments(setting, claim)
    mechanism = SharingMechanism(setting.rho, tuple(np.broadcast_to(_sigma(spec, arguments), (setting.parties,))),
                                 setting.iterations, name=spec.name, run=spec.run, arguments=tuple(arguments.items()))
    summary = claim.as_dict() if hasattr(claim, "as_dict") and not isinstance(claim, Claim) else tested.as_dict()
    used = None if isinstance(claim, Claim) else f"the smaller of the total of {spec.theorem} and basic composition"
    return Auditable(mechanism, setting.problem(normalise_rows=True), claim, tested, {"theorem": summary}, used)


def online_auditable(spec: OnlineSpec, setting: OnlineSetting) -> Auditable:
    """The full transcript of messages released (:class:`DpsdaMechanism`), against the spec's claim (DPSDA's T·ε,
    Theorem 2/4)."""
    claims = spec.claim(setting)
    tested = spec.claim_value(setting, claims)
    arguments = spec.run_arguments(setting, claims)
    mechanism = DpsdaMechanism(setting.graphs(spec.push_sum), float(_sigma(spec, arguments)), setting.iterations,
                               push_sum=spec.push_sum, name=spec.name, run=spec.run,
                               arguments=tuple(arguments.items()))
    summary = claims.as_dict(setting.iterations) if not isinstance(claims, Claim) else tested.as_dict()
    return Auditable(mechanism, setting.problem(), claims, tested, {"claims": summary})


def _sigma(spec: MechanismSpec, arguments: dict[str, Any]) -> Any:
    """The noise scale ``sigma`` a sharing or online run takes, popped from ``arguments``; refused where neither the
    spec's ``arguments`` nor its claim's object gives one."""
    if "sigma" not in arguments:
        raise InvalidConfiguration(f"{spec.name}'s run takes sigma, the scale of its noise, and neither its arguments= "
                                   "nor the object its claim(setting) returns gives one: register arguments=lambda "
                                   "setting: {'sigma': ...}", parameter="arguments")
    return arguments.pop("sigma")


FAMILY_AUDITABLE = {CONSENSUS: consensus_auditable, SHARING: sharing_auditable, ONLINE: online_auditable}
#: where a family's canary records go (one-run audits); DPSDA's family has none (:data:`WITHOUT`)
FAMILY_CANARIES = {CONSENSUS: ConsensusCanaries(), SHARING: SharingCanaries()}


# ---- the algorithms of the four papers -------------------------------------------------------

def _record_pair(problem: Any, where: tuple[int, int], kind: str) -> tuple[Any, Any]:
    """Replace-one neighbours (both consensus papers): record ``where = (node, index)`` changed."""
    return replace_one_record(problem, *where, kind)


def _every_record(problem: Any, kind: str) -> list[tuple[int, int]]:
    return [(node, index) for node in range(problem.nodes) for index in range(problem.sizes[node])]


def _row_pair(problem: Any, where: tuple[int, int], kind: str) -> tuple[Any, Any]:
    """DP sharing's Definition 2: row ``where = (party, row)`` (or, kind ``column``, column 0 of the party)."""
    return replace_one_row(problem, *where, kind)


def _every_row(problem: Any, kind: str) -> list[tuple[int, int]]:
    rows = range(problem.samples) if kind == "row" else (0,)  # a column change is one per party
    return [(party, row) for party in range(problem.parties) for row in rows]


def _round_pair(problem: Any, t0: int, kind: str = "negated-target") -> tuple[Any, Any]:
    """DPSDA's Definition 1: f_t0 replaced by the function of the same features and target -b."""
    return change_one_round(problem, t0, problem.features[t0 - 1], -problem.targets[t0 - 1])


def _every_round(problem: Any, kind: str) -> list[int]:
    return list(range(1, problem.rounds + 1))


def _record_place(where: tuple[int, int], kind: str) -> str:
    return f"record {where[1]} of node {where[0]}: {kind}"


def _row_place(where: tuple[int, int], kind: str) -> str:
    return (f"row {where[1]} of party {where[0]} moved on the unit sphere" if kind == "row"
            else f"column 0 of party {where[0]} negated")


def _round_place(t0: int, kind: str) -> str:
    return f"round {t0}: target b -> -b (Definition 1: one f_t0 changed)"


#: each family's neighbours for a spec that gives none (module-level functions: the neighbour search sends them to
#: the audit's workers), and every capability that goes with them: both consensus papers' replace-one record, DP
#: sharing's Definition 2 (one row of a party), DPSDA's Definition 1 (one round's function changed)
FAMILY_NEIGHBOURS: dict[str, dict[str, Any]] = {
    CONSENSUS: {"neighbours": _record_pair, "neighbour_kinds": NEIGHBOUR_KINDS[:2], "candidates": _every_record,
                "place": _record_place, "first_place": ((0, 0), "--record 0:0")},
    SHARING: {"neighbours": _row_pair, "neighbour_kinds": ("row", "column"), "candidates": _every_row,
              "place": _row_place, "first_place": ((0, 0), "--row 0:0")},
    ONLINE: {"neighbours": _round_pair, "neighbour_kinds": ("negated-target",), "candidates": _every_round,
             "influences": released_round, "place": _round_place, "first_place": (1, "--changed-round 1"),
             "released_note": "f_t's gradient first enters z(t+1) ((12)/(20)), broadcast as h(t+1) (11), and the "
                              "last message released is h(T)"},
}


def warn_outside_theorem_31(setting: Any) -> None:
    """Warn (:class:`TheoremConditionWarning`) when eta_i(t) = eta_i q_i^(t-1) breaks Theorem 3.1's
    eta_i(t+1) >= eta_i(t) >= theta: the run goes ahead, but nothing guarantees convergence."""
    eta, growth, theta = _initial_eta(setting), setting.growth, setting.theta
    if min(eta) < theta:
        warnings.warn(TheoremConditionWarning(
            f"M-ADMM runs outside Theorem 3.1: eta_i(1) = {min(eta):g} < theta = {theta:g} "
            "(the theorem needs eta_i(t) >= theta); convergence is not guaranteed"), stacklevel=3)
    if min(growth) < 1:
        warnings.warn(TheoremConditionWarning(
            f"M-ADMM runs outside Theorem 3.1: growth q_i = {min(growth):g} < 1 makes eta_i(t) decrease "
            "(the theorem needs eta_i(t+1) >= eta_i(t)) and eventually fall below theta; "
            "convergence is not guaranteed"), stacklevel=3)


def _initial_eta(setting: Any) -> tuple[float, ...]:
    """M-ADMM's eta_i(1): one number or one per node (its schedule is eta_i(1) q_i^(t-1), §5.1)."""
    eta = setting.eta if isinstance(setting.eta, tuple) else (setting.eta,)
    if not all(isinstance(value, (int, float)) for value in eta):
        raise InvalidConfiguration(f"eta={setting.eta!r}: madmm's eta is eta_i(1), one number or one per node (its "
                                   "schedule is eta_i(1) q_i^(t-1) with --growth)", parameter="eta")
    return tuple(float(value) for value in eta)


def _fixed_eta(name: str) -> Callable[[Any], dict[str, object]]:
    """The keyword arguments of an algorithm with one constant eta (decentralized ADMM, R-ADMM)."""
    return lambda s: {"eta": constant_eta(s.eta, s.iterations, s.nodes, name)}


register(AlgorithmSpec("admm", "consensus", "decentralized ADMM (M-ADMM paper (7)-(8))", run_admm, ("eta",),
                       arguments=_fixed_eta("admm")))
register(AlgorithmSpec("admm-edge", "consensus", "edge-based ADMM (M-ADMM paper (3)-(6))", run_admm_edge, ("eta",),
                       arguments=_fixed_eta("admm-edge")))
register(AlgorithmSpec("madmm", "consensus", "M-ADMM (M-ADMM paper Alg. 1 without noise, (9)-(10))", run_madmm,
                       ("eta", "theta", "growth"),
                       arguments=lambda s: {"penalty": GeometricSchedule(initial=_initial_eta(s), growth=s.growth),
                                            "theta": s.theta},
                       before_run=warn_outside_theorem_31, conditions=conditions.MADMM))
register(AlgorithmSpec("radmm", "consensus", "R-ADMM (R-ADMM paper Alg. 1, (10)-(13))", run_radmm,
                       ("eta", "gamma"), arguments=lambda s: {"eta": constant_eta(s.eta, s.iterations, s.nodes, "radmm"),
                                                             "gamma": s.gamma},
                       conditions=conditions.RADMM, stands_for="private-radmm"))
register(MechanismSpec(
    "pp", "consensus", "PP: M-ADMM with penalty perturbation (M-ADMM paper Alg. 1, (24)-(25))", run_pp,
    ("eta", "theta", "alpha"),
    arguments=lambda s: {"penalty": _one(s.eta), "theta": s.theta, "alpha": _one(s.alpha)},
    theorem="M-ADMM Theorem 4.1", claim=lambda s: pp_bound(s.bound_setting(), s.eta, s.alpha, s.theta, s.iterations),
    release=PenaltyPerturbation(), report=True, labels=PAPER_LABELS,
    bound_arguments=lambda s: f"pp --eta {s.eta} --theta {s.theta}"))
register(MechanismSpec(
    "dvp", "consensus", "DVP: dual variable perturbation, PP with eta = theta (M-ADMM paper §4)", run_dvp,
    ("theta", "alpha"),
    arguments=lambda s: {"theta": s.theta, "alpha": _one(s.alpha)},
    theorem="M-ADMM Theorem 4.1 with eta = theta",
    claim=lambda s: pp_bound(s.bound_setting(), s.theta, s.alpha, s.theta, s.iterations),
    release=PenaltyPerturbation(penalty="theta"), report=True, labels=PAPER_LABELS,
    bound_arguments=lambda s: f"pp --eta {s.theta} --theta {s.theta}"))  # Theorem 4.1 at eta = theta
register(MechanismSpec(
    "pvp", "consensus", "PVP: primal variable perturbation (Zhang & Zhu 2017, M-ADMM paper §4)", run_pvp,
    ("eta", "alpha", "epsilon"),
    arguments=lambda s: {"eta": constant_eta(s.eta, s.iterations, s.nodes, "pvp"), "alpha": _one(s.alpha)},
    release=PrimalPerturbation()))
register(MechanismSpec(
    "private-radmm", "consensus", "private R-ADMM (R-ADMM paper Alg. 2, (28)-(29))", run_private_radmm,
    ("eta", "alpha", "gamma"),
    arguments=lambda s: {"eta": constant_eta(s.eta, s.iterations, s.nodes, "private-radmm"), "alpha": _one(s.alpha),
                         "gamma": s.gamma},
    theorem="R-ADMM Theorem IV.1",
    claim=lambda s: radmm_bound(s.bound_setting(), constant_eta(s.eta, s.iterations, s.nodes, "private-radmm"),
                                s.alpha, s.iterations),
    release=RecycledOddSteps(), report=True, labels=PAPER_LABELS, section="radmm",
    bound_arguments=lambda s: f"radmm --eta {s.eta}"))
register(AlgorithmSpec("sharing", "sharing", "ADMM sharing (ADMM-sharing paper Alg. 1, (5)-(8))", run_sharing,
                       conditions=conditions.SHARING, stands_for="dp-sharing"))
register(MechanismSpec(
    "dp-sharing", "sharing", "DP ADMM sharing (ADMM-sharing paper Alg. 1 with (9))", run_dp_sharing,
    theorem="ADMM-sharing Theorem 1 / Corollary 1",
    claim=lambda s: sharing_bound(s.widths, rho=s.rho, lam=s.lam, c1=s.c1, b1=s.b1, epsilon=s.step_epsilon,
                                  delta=s.step_delta, iterations=s.iterations, delta_prime=s.delta_prime),
    exact_loss=sharing_privacy_loss, audit=AuditSettings(samples=5_000, timeout=60.0, randomness="seeded"),
    search=SearchSettings(candidates=20, samples=1_000),  # a candidate costs 0.6 s to screen: 20 of the 80 rows
    report=True,
    labels={"audit": "audit against Corollary 1 (black and white box)",
            "finding": "DP ADMM sharing is not differentially private (Theorem 1)"},
    figures={"sharing_tradeoff": tradeoff_figure}))
for _name, _run, _algorithm, _theorem in (("dpsda-c", run_dpsda_c, 1, "DPSDA Theorems 2-3"),
                                          ("dpsda-ps", run_dpsda_ps, 2, "DPSDA Theorems 4-5")):
    register(OnlineSpec(
        _name, "online", f"{_name.upper()} (DPSDA paper Alg. {_algorithm})", _run,
        theorem=_theorem,
        claim=lambda s, push_sum=_algorithm == 2: dpsda_claims(s.problem(), s.graphs(push_sum), s.step_epsilon,
                                                               s.gradient_noise, s.iterations),
        exact_loss=dpsda_privacy_loss, worst_case=worst_case_loss, push_sum=_algorithm == 2,
        report=_algorithm == 1,  # verify audits DPSDA-C; its neighbours are its family's (Definition 1)
        labels={"regret": f"Theorem {1 + 2 * _algorithm}",
                "audit": "audit of the full transcript against T*epsilon (n=4, T=2)"}))

REGISTRY.seal_builtins()
