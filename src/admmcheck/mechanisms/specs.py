"""The spec of a registered algorithm (:class:`AlgorithmSpec`) and of a private one (:class:`MechanismSpec`): the run
function, the family it belongs to, the setting it reads, and every capability the toolkit checks it with.

A spec holds its family (:class:`~admmcheck.mechanisms.families.Family`, given as the object or its name), which gives
at registration what the spec leaves out (:meth:`Family.complete`). What a spec has is asked with
:meth:`AlgorithmSpec.supports` and demanded with :meth:`AlgorithmSpec.require`, which refuses what it lacks with
what to do, as dp_accounting's accountants refuse an event they do not support.
"""

from __future__ import annotations

from dataclasses import dataclass, field, is_dataclass
from typing import Any, Callable, Mapping

from admmcheck.audit.running.settings import AuditSettings, SearchSettings
from admmcheck.claims.stated import TheoremClaim, gives
from admmcheck.claims.values import Claim, PureDp
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.mechanisms.canaries import Canaries
from admmcheck.mechanisms.candidates import RegisteredPairs, registered_pairs
from admmcheck.mechanisms.consensus import NEIGHBOUR_KINDS
from admmcheck.mechanisms.families import ONLINE, Family, family_named
from admmcheck.mechanisms.releases import Release
from admmcheck.mechanisms.white_box import Auditable

#: what a spec without a capability was registered without, and what to do (:meth:`AlgorithmSpec.require`)
WITHOUT = {"conditions": "it was registered without conditions= (its convergence theorem's exact checks); "
                         "admmcheck conditions --help lists the algorithms that have them",
           "white_box": "it was registered without release= (a consensus mechanism: how its noise enters what it "
                        "releases) or exact_loss=; audit it as a black box",
           "canaries": "it was registered without canaries= (where canary records go in its problem), and its "
                       "family gives none (the online family's records are its rounds, whose number its claim "
                       "reads); audit it with many runs instead (without --canaries)",
           "claim": "it was registered without claim= (a function of the setting returning its claim); give "
                    "--epsilon, the epsilon claimed",
           "candidates": "it lists no candidate neighbours to search (candidates=); give the pair by hand",
           "release": "it was registered without release= (how a consensus mechanism's noise enters what it "
                      "releases, admmcheck.mechanisms.releases)",
           "worst_case": "it was registered without worst_case= (the searched worst case of its exact loss)",
           "exact_loss": "it was registered without exact_loss= or release=; audit it as a black box",
           "before_run": "it was registered without before_run= (the warning where a run leaves its theorem)",
           "audit_setting": "it was registered without audit_setting=; verify audits it at its setting type's "
                            "audit defaults",
           "bound_arguments": "its family gives no bound command that reproduces its claim"}
#: who registered a name (the registry sets it: a plugin's package, admmcheck, ...): the source of a claim that its
#: spec states without naming a theorem
registered_by: Callable[[str], str] = lambda name: name
#: every capability a spec may have, asked with :meth:`AlgorithmSpec.supports`
CAPABILITIES = tuple(WITHOUT)


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
    family: Any  # a Family, or its name (read once, in __post_init__)
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
        if not isinstance(self.family, Family):
            object.__setattr__(self, "family", family_named(self.family))
        family = self.family.setting
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
        return self.setting or self.family.setting

    def run_arguments(self, setting: Any, stated: Any = None) -> dict[str, Any]:
        """``run``'s keyword arguments on ``setting`` beyond what its family passes (the problem, the iterations,
        the seeds; sharing's ``rho``; online's graphs): ``arguments(setting)`` (its own parameters: a noise scale, a
        clip norm, ...), with the noise scale ``sigma`` of the object ``claim(setting)`` returned (``stated``: DP
        sharing's Theorem 1, DPSDA's Lemma 1) where ``arguments`` gives none."""
        given = dict(self.arguments(setting)) if self.arguments is not None else {}
        if "sigma" not in given and gives(stated, "sigma"):
            given["sigma"] = stated.require("sigma")
        return given

    def supports(self, capability: str) -> bool:
        """Whether the spec has ``capability`` (one of :data:`CAPABILITIES`: given at registration, or by its
        family)."""
        if capability not in CAPABILITIES:
            raise ValueError(f"unknown capability {capability!r}; the known ones are {', '.join(CAPABILITIES)}")
        return getattr(self, capability, None) is not None

    def require(self, capability: str) -> Any:
        """The spec's ``capability`` (:data:`CAPABILITIES`), refused with what to do where it has none, as
        dp_accounting's accountants refuse an event they do not support."""
        if not self.supports(capability):
            raise InvalidConfiguration(f"{self.name} has no {capability.replace('_', ' ')}: {WITHOUT[capability]}",
                                       parameter=capability)
        return getattr(self, capability)


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
    ``figures`` the report's figures of its own (key -> a function of the seed giving the figure, a
    :class:`~admmcheck.foundations.figures.Figure`),
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
    figures: Mapping[str, Callable[[int], Any]] = field(default_factory=dict)
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
        self.family.complete(self)

    def candidate_pairs(self, problem: Any, kind: str, iterations: int, most: int = 100,
                        seed: int = 0) -> RegisteredPairs:
        """The neighbour pairs of ``kind`` at every place :attr:`candidates` lists whose change
        :attr:`influences` what a run of ``iterations`` releases (a seeded ``most`` of them when there are
        more), each named: what the neighbour search screens."""
        self.require("candidates")
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
        if not self.supports("claim"):
            epsilon = getattr(setting, "epsilon", None)
            if epsilon is None:
                raise InvalidConfiguration(f"epsilon is required: {self.name} has no privacy theorem to audit against",
                                           parameter="epsilon")
            return PureDp(epsilon, source="the epsilon given with the setting")
        stated = self.claim(setting) if stated is None else stated
        source = self.theorem or f"stated by {registered_by(self.name)}"
        if isinstance(stated, Claim):
            return stated.with_source(source)
        if not isinstance(stated, TheoremClaim):
            raise InvalidConfiguration(f"{self.name}'s claim(setting) returned {type(stated).__name__}; return a "
                                       "claim value of admmcheck.claims (PureDp, ApproxDp, ZeroConcentratedDp, "
                                       "GaussianDp, DpCurve)", parameter="claim")
        return stated.as_claim(self.theorem or "")


@dataclass(frozen=True)
class OnlineSpec(MechanismSpec):
    """A private online mechanism over a time-varying graph sequence (the DPSDA paper's family): ``push_sum``
    True where its graphs are directed and it runs push-sum (DPSDA-PS, Alg. 2; False: DPSDA-C, Alg. 1, doubly
    stochastic weights). Its ``run`` takes ``graphs``, ``sigma``, ``gradient_noise``, ``iterations`` and
    ``seeds``."""

    push_sum: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.family is not ONLINE:
            raise InvalidConfiguration(f"{self.name}: an OnlineSpec is of family online, not {self.family}",
                                       parameter="family")
