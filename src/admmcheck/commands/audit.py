"""What ``admmcheck audit`` runs, as plain data in and a result out: a third-party mechanism
(:class:`CodeAuditConfig`, an :class:`AuditResult`) or a registered mechanism of any family (:class:`MechanismAudit`,
one pipeline, :func:`run_mechanism_audit`, a :class:`MechanismAuditResult`). Both carry one
:class:`~admmcheck.audit.running.settings.AuditSettings`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from admmcheck.audit.auditor import audit
from admmcheck.audit.result import AuditResult
from admmcheck.audit.inputs.contract import Pair, PairSequence
from admmcheck.audit.inputs.datafiles import is_data_file, read_pair
from admmcheck.audit.inputs.neighbourhoods import (DOMAIN_FORMS, NEIGHBOUR_KINDS, QueryAnswerPairs, candidate_pairs,
                                                   parse_domain, read_dataset)
from admmcheck.audit.running.octave import require_octave
from admmcheck.audit.running.sampling import Source
from admmcheck.audit.running.settings import SearchSettings
from admmcheck.audit.search import search_audit
from admmcheck.audit.running.settings import AuditSettings
from admmcheck.claims.values import ApproxDp, Claim, GaussianDp, ZeroConcentratedDp
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.results import Result
from admmcheck.mechanisms.audit_request import MechanismAudit
from admmcheck.mechanisms.registry import MechanismSpec
from admmcheck.mechanisms.white_box import Auditable, WhiteBoxOptions, WhiteBoxResult
from admmcheck.foundations.formulas import parse_number
from admmcheck.foundations.parameters import parameter


@dataclass(frozen=True)
class CodeAuditConfig:
    """A third-party audit: ``mechanism`` is ``FILE.py:NAME``, ``module:NAME`` or ``FILE.m:FUNCTION``
    (run in GNU Octave); the claim is (``epsilon``, ``delta``)-DP, ``mu``-GDP or ``rho``-zCDP (:attr:`claim`). The neighbours are either given,
    ``neighbors``: one of those or data files (``D0.csv,D1.csv``, ``PAIR.npz``:
    :mod:`admmcheck.audit.inputs.datafiles`), or searched (:mod:`admmcheck.audit.search`) among the candidates
    of ``neighbour_kind``: ``replace-one`` or ``add-remove`` of a record of ``dataset`` (CSV or NPZ,
    :func:`~admmcheck.audit.inputs.neighbourhoods.read_dataset`; replaced records lie in ``record_domain``), or
    ``query-answers``: StatDP's patterns on ``queries`` query answers; ``neighbour_search`` is the
    search's budget."""

    mechanism: str | None = parameter(
        None, "FILE.py:NAME or module:NAME: mechanism(data, rng) or mechanism(data) -> what an observer sees "
        "(numbers, arrays, strings, None, lists, sets, dicts, nested); or FILE.m:FUNCTION: out = FUNCTION(data), run "
        "in GNU Octave with its generators seeded per sample (FUNCTION_batch(data, n) is used when present)")
    neighbors: str | None = parameter(
        None, "FILE.py:NAME or module:NAME: () -> admmcheck.audit.Pair(d0, d1), or Pairs([...]) for several; "
        "FILE.m:FUNCTION: [d0, d1] = FUNCTION(); or data files: D0.csv,D1.csv or PAIR.npz (arrays d0, d1, or X0, y0, "
        "X1, y1)")
    epsilon: float | None = parameter(None, "the epsilon the mechanism claims ((epsilon, delta)-DP, with --delta)",
                                      read=parse_number)
    delta: float = parameter(0.0, "the delta the mechanism claims with --epsilon", read=parse_number)
    mu: float | None = parameter(None, "instead of --epsilon: the mechanism claims mu-Gaussian DP (a trade-off curve, "
                                 "Dong, Roth & Su 2022)", read=parse_number)
    rho: float | None = parameter(None, "instead of --epsilon: the mechanism claims rho-zero-concentrated DP (Bun & "
                                  "Steinke 2016)", read=parse_number)
    dataset: str | None = parameter(None, "the records whose neighbours are searched: FILE.csv (numbers; a header "
                                    "line of names allowed) or FILE.npz (X, and y for labels); the mechanism receives "
                                    "X, or (X, y) with labels")
    label_column: str | None = parameter(None, "the CSV column (by its header name) holding the labels")
    neighbour_kind: str | None = parameter(None, "instead of --neighbors, search the neighbours: replace-one or "
                                           "add-remove of a record of --dataset, or query-answers: StatDP's patterns "
                                           "on --queries answers", choices=NEIGHBOUR_KINDS)
    record_domain: str | None = parameter(None, "replace-one: where a replaced record may lie: " + DOMAIN_FORMS)
    queries: int | None = parameter(None, "query-answers: how many query answers the mechanism takes", read=int)
    neighbour_search: SearchSettings | None = None
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
            searched = [name for name in ("dataset", "label_column", "record_domain", "queries", "neighbour_search")
                        if getattr(self, name) is not None]
            if searched:
                raise InvalidConfiguration(f"{searched[0]} is for searched neighbours (neighbour_kind); with neighbors "
                                           "the pair is given: nothing is searched; remove one of them",
                                           parameter=searched[0])
            if is_data_file(self.neighbors):
                read_pair(self.neighbors)  # data, not code: refused here, before any worker starts, when malformed
        else:
            if self.neighbour_search is None:
                object.__setattr__(self, "neighbour_search", SearchSettings())
            self.candidates()  # the dataset and domain are read and refused here, before any worker starts
        self.claim  # refused here, before any worker starts, when missing, given twice or malformed

    @property
    def claim(self) -> Claim:
        """The claim: (``epsilon``, ``delta``)-DP, ``mu``-GDP or ``rho``-zCDP, whichever one is given."""
        given = [name for name in ("epsilon", "mu", "rho") if getattr(self, name) is not None]
        if len(given) != 1:
            raise InvalidConfiguration(
                ("epsilon is required: the claim: " if not given else f"{' and '.join(given)} both given: give one "
                 "claim: ") + "epsilon (with delta) for (epsilon, delta)-DP, or instead mu for Gaussian DP, or rho for "
                "zCDP", parameter=given[-1] if given else "epsilon")
        if given != ["epsilon"] and self.delta:
            raise InvalidConfiguration(f"delta={self.delta:g} goes with epsilon; a {given[0]} claim has none of its "
                                       "own: remove delta", parameter="delta")
        if self.mu is not None:
            return GaussianDp(self.mu)
        if self.rho is not None:
            return ZeroConcentratedDp(self.rho)
        return ApproxDp(self.epsilon, self.delta)

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
    claim = config.claim
    if config.neighbors is None:
        return search_audit(Source(spec=config.mechanism), config.candidates(), claim, config.settings,
                            config.neighbour_search, progress=progress)
    return audit(Source(spec=config.mechanism), Source(spec=config.neighbors), claim, config.settings,
                 progress=progress)


@dataclass(frozen=True, eq=False)
class MechanismAuditResult(Result):
    """What :func:`run_mechanism_audit` found: the black-box ``result``, the ``audited`` mechanism and claim, the
    place its pair changes (``where``, in words ``neighbours``) and the white box's result (None: not asked)."""

    kind: ClassVar[str] = "audit of a registered mechanism"

    result: AuditResult
    audited: Auditable
    where: Any
    neighbours: str
    white_box: WhiteBoxResult | None = None

    @property
    def outcome(self) -> str:
        white = self.white_box.outcome if self.white_box is not None else "passed"
        return "failed" if "failed" in (self.result.outcome, white) else "passed"

    def as_dict(self) -> dict[str, object]:
        """The JSON ``admmcheck audit NAME --json`` prints."""
        out = self.result.as_dict() | self.audited.summary | {"neighbours": self.neighbours}
        if self.audited.claim_used:
            out["claim_used"] = self.audited.claim_used
        if self.white_box is not None:
            out["white_box"] = self.white_box.as_dict()
            out["black_box_within_white_box"] = self.result.epsilon_lower_bound <= self.white_box.max_loss
        return out

    def lines(self) -> list[str]:
        found = self.result
        where = [] if found.search else [f"  neighbours: {self.neighbours}"]
        white = self.white_box.lines() if self.white_box is not None else []
        return [found.headline(self.audited.claim_used), *found.evidence_lines(), *where, *found.sampling_lines(),
                *white]


def audited_pair(request: MechanismAudit) -> tuple[Auditable, Pair, Any]:
    """What ``request`` audits without running it: the mechanism and claim, and the pair at ``request.where``
    (the spec's first place when None: what the white box uses alone)."""
    spec = request.spec
    audited = spec.auditable(spec, request.setting)
    where = request.where if request.where is not None else (spec.first_place or ((0, 0), ""))[0]
    return audited, Pair(*spec.neighbours(audited.problem, where, request.neighbours)), where


def run_white_box(request: MechanismAudit, progress: bool = False) -> WhiteBoxResult:
    """The spec's white box alone (no black-box audit) on the pair at ``request.where`` (the spec's first place
    when None), on ``request.settings.samples`` transcripts."""
    spec = request.spec
    audited, pair, where = audited_pair(request)
    options = WhiteBoxOptions(request.settings.samples, request.setting.seed, request.settings.confidence,
                              request.white_box_search, request.plot, progress=progress)
    return spec.require("white_box")(spec, audited, pair, spec.place(where, request.neighbours), options)


def run_mechanism_audit(request: MechanismAudit, progress: bool = False) -> MechanismAuditResult:
    """Audit a registered mechanism (the workers receive it by pickle: our own code, seeded) against its claim,
    at ``request.where`` or where the neighbour search finds the pair; with ``white_box`` its exact loss too."""
    spec = request.spec
    audited = spec.auditable(spec, request.setting)
    claim = audited.claimed
    settings = request.settings.but(randomness="seeded")  # our own code: a difference between draws is a bug
    result = audit_registered(spec, audited.mechanism, audited.problem, request.neighbours, request.where, claim,
                              settings, request.neighbour_search, progress)
    where = audited_place(result, request.where)
    place = spec.place(where, request.neighbours)
    white = None
    if request.white_box:
        pair = Pair(*spec.neighbours(audited.problem, where, request.neighbours))
        options = WhiteBoxOptions(request.settings.samples, request.setting.seed, request.settings.confidence,
                                  request.white_box_search, request.plot, progress=progress)
        white = spec.require("white_box")(spec, audited, pair, place, options)
    return MechanismAuditResult(result, audited, where, place, white)


def audit_registered(spec: MechanismSpec, mechanism: object, problem: object, kind: str, where: object | None,
                     claim: Claim, settings: AuditSettings, search: SearchSettings,
                     progress: bool = False) -> AuditResult:
    """Audit our registered mechanism ``spec`` (``mechanism``: a run of ``mechanism.iterations``) on the
    neighbours of ``kind`` at ``where``, or, with ``where`` None, on the pair the neighbour search chooses
    among every place ``spec.candidates`` lists whose change ``spec.influences`` the release."""
    if where is not None:
        places = spec.candidates(problem, kind) if spec.supports("candidates") else None
        if places is not None and where not in places:
            raise InvalidConfiguration(f"where={where!r}: not a place of this problem's data: choose one of "
                                       f"{_range(places)}", parameter="where")
        if not spec.influences(where, mechanism.iterations):
            released = [w for w in places or () if spec.influences(w, mechanism.iterations)]
            why = f": {spec.released_note}" if spec.released_note else ""
            raise InvalidConfiguration(f"where={where!r}: this change of {spec.name}'s data moves nothing that "
                                       f"{mechanism.iterations} iterations release{why}; choose "
                                       + (f"one of {_range(released)}" if released else "another place, or run "
                                          "more iterations"), parameter="where")
        return audit(Source(obj=mechanism), Source(obj=Pair(*spec.neighbours(problem, where, kind))), claim, settings,
                     progress=progress)
    candidates = spec.candidate_pairs(problem, kind, mechanism.iterations, most=search.candidates, seed=settings.seed)
    return search_audit(Source(obj=mechanism), candidates, claim, settings, search, progress=progress)


def _range(places: list[Any]) -> str:
    """The places in a few words: all of them when few, else the first and last."""
    shown = [str(tuple(p) if isinstance(p, list) else p) for p in places]
    return ", ".join(shown) if len(shown) <= 6 else f"{shown[0]} .. {shown[-1]}"


def audited_place(result: AuditResult, where: object | None) -> object:
    """Where the audited pair changes the data: ``where`` when it was given, else the place the search found."""
    if where is not None:
        return where
    found = result.search["found"]["where"]
    return tuple(found) if isinstance(found, list) else found
