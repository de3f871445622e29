"""What ``admmcheck audit canaries`` and ``admmcheck audit NAME --canaries M`` run: a one-run canary audit
(:mod:`admmcheck.audit.one_run.canaries`) of third-party training code (:class:`CanaryAuditConfig`) or of a
registered mechanism, its canaries in slots of its problem (:class:`MechanismCanaryAudit`), as plain data in and a
result out."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from admmcheck.claims.values import ApproxDp, GaussianDp
from admmcheck.audit.inputs.neighbourhoods import parse_domain, read_dataset
from admmcheck.audit.one_run.canaries import (CANARY_KINDS, CanaryAuditResult, Placement, audit_canaries, conclude,
                                              play)
from admmcheck.audit.running.sampling import Source
from admmcheck.audit.running.settings import AuditSettings
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.formulas import parse_number
from admmcheck.foundations.parameters import parameter
from admmcheck.foundations.validation import config_from_flags

#: the audit settings a one-run audit does not use: it makes one call per run, drawn whole, fixed-n
NOT_FOR_CANARIES = ("samples", "max_time", "checkpoint", "randomness", "exceptions_are_outputs", "sequential")


@dataclass(frozen=True)
class CanaryAuditConfig:
    """A one-run audit: ``train`` (FILE.py:NAME or module:NAME) trained ``runs`` times on ``dataset`` with
    ``canaries`` canaries of ``canary_domain`` each included with probability ½ (``neighbour_kind``: added, or held
    in a slot of their own), scored by ``score`` (default: the release's alignment with each canary), against the
    claim (``epsilon``, ``delta``)."""

    train: str | None = parameter(None, "FILE.py:NAME or module:NAME: train(data, rng) (or train(data)) -> what an "
                                  "observer sees of the trained model; data is --dataset's records with the included "
                                  "canaries, as the neighbour search passes a dataset")
    dataset: str | None = parameter(None, "the records the training gets besides the canaries: FILE.csv (numbers; a "
                                    "header line of names allowed) or FILE.npz (X, and y for labels)")
    label_column: str | None = parameter(None, "the CSV column (by its header name) holding the labels")
    node_column: str | None = parameter(None, "the CSV column (by its header name) holding each record's node, for "
                                        "training that splits the records among nodes by it: a canary's record "
                                        "gets the node --canary-placement gives it")
    canary_placement: str | None = parameter(None, "with --node-column: node:I (every canary at the node of id I) "
                                             "or spread (every node in turn; the default)")
    canaries: int | None = parameter(None, "canaries per run, each included with probability 1/2", read=int)
    runs: int = parameter(1, "training runs (their canaries' guesses are pooled)", read=int)
    score: str | None = parameter(None, "FILE.py:NAME: score(release, canary) -> a number, higher for a canary more "
                                  "likely included (run in the audit's workers); default: the canary's alignment "
                                  "with the release beyond the release without canaries (one more run), for a "
                                  "release that is a vector of the records' width")
    canary_domain: str = parameter("unit-ball", "where canaries are drawn: unit-ball (directions on the unit sphere), "
                                   "box:LOW:HIGH (corners), set:FILE.csv (its records)")
    neighbour_kind: str = parameter("add-remove", "add-remove: an included canary is added; replace-one: every "
                                    "canary has a slot holding it or the domain's centre", choices=CANARY_KINDS)
    epsilon: float | None = parameter(None, "the epsilon the training claims", read=parse_number)
    delta: float = parameter(0.0, "the delta the training claims", read=parse_number)
    mu: float | None = parameter(None, "instead of --epsilon: the training claims mu-Gaussian DP (a trade-off curve, "
                                 "Dong, Roth & Su), tested as one (Mahloujifar, Melis & Chaudhuri)", read=parse_number)
    settings: AuditSettings = field(default_factory=AuditSettings)

    def __post_init__(self) -> None:
        for name, form in (("train", "FILE.py:NAME or module:NAME"), ("dataset", "FILE.csv or FILE.npz"),
                           ("canaries", "a whole number, e.g. 1000")):
            if getattr(self, name) is None:
                raise InvalidConfiguration(f"{name} is required: {form}", parameter=name)
        if (self.epsilon is None) == (self.mu is None):
            raise InvalidConfiguration("epsilon or mu is required, one of the two: epsilon (with delta) for an "
                                       "(epsilon, delta) claim, mu for a Gaussian-DP claim", parameter="epsilon")
        if self.canary_placement is not None and self.node_column is None:
            raise InvalidConfiguration("canary_placement needs node_column (--node-column), the CSV column naming "
                                       "each record's node (the training's own split of the records is unknown "
                                       "otherwise)",
                                       parameter="canary_placement")
        if self.mu is not None and self.delta != 0.0:
            raise InvalidConfiguration("delta belongs to an (epsilon, delta) claim; a Gaussian-DP claim (mu) has none",
                                       parameter="delta")
        if self.score is not None and self.train.partition(":")[0].endswith(".m"):
            raise InvalidConfiguration("score: a score function runs on a Python release; for MATLAB/Octave "
                                       "training use the default score (a release of the records' width)",
                                       parameter="score")


def run_canary_audit(config: CanaryAuditConfig, progress: bool = False) -> CanaryAuditResult:
    """Read the dataset and the domain, then run the audit (:func:`~admmcheck.audit.one_run.canaries.audit_canaries`)."""
    dataset = read_dataset(config.dataset, config.label_column)
    nodes = None
    if config.node_column is not None:
        names = dataset.names or ()
        if config.node_column not in names:
            raise InvalidConfiguration(f"{config.dataset} has no column named {config.node_column!r} besides the "
                                       "labels; give --node-column the header name of a CSV dataset's node column",
                                       parameter="node_column")
        nodes = (names.index(config.node_column), Placement.parse(config.canary_placement or "spread"))
    width = dataset.features.shape[1] - (nodes is not None)  # the canaries are drawn in the other columns
    domain = parse_domain(config.canary_domain, width, parameter="canary_domain")
    claim = ApproxDp(config.epsilon, config.delta) if config.mu is None else GaussianDp(config.mu)
    return audit_canaries(config.train, dataset, config.canaries, claim, domain,
                          runs=config.runs, score=config.score, kind=config.neighbour_kind, settings=config.settings,
                          progress=progress, nodes=nodes)


@dataclass(frozen=True)
class CanarySlots:
    """How many canaries a registered mechanism's one-run audit adds, in how many runs, where (the flags of
    ``admmcheck audit NAME --canaries M``)."""

    canaries: int | None = parameter(None, "one-run audit: add this many canary records, each in a slot of its own "
                                     "holding it with probability 1/2 (else a default record), and train once",
                                     read=int)
    runs: int = parameter(1, "with --canaries: training runs (their canaries' guesses are pooled)", read=int)
    canary_placement: str = parameter("node:0", "with --canaries: node:I (every slot in the records of node or "
                                      "party I) or spread (dealt out in turn)")


@dataclass(frozen=True)
class MechanismCanaryAudit:
    """A one-run audit of the registered mechanism ``name`` on ``setting`` (its family's typed setting): ``slots``
    canaries added to its problem by its spec's canary capability, each run trained in the audit's workers under
    ``settings`` (seed, confidence, workers, timeout, limits), against the theorem's claim on the problem with its
    slots."""

    name: str
    setting: Any
    slots: CanarySlots
    settings: AuditSettings = field(default_factory=AuditSettings)

    def __post_init__(self) -> None:
        if self.slots.canaries is None:
            raise InvalidConfiguration("canaries is required: a whole number, e.g. 1000", parameter="canaries")


def mechanism_canary_audit(spec: Any, setting: Any, slots: dict[str, object], audit: dict[str, object],
                           search: dict[str, object], request: dict[str, object]) -> MechanismCanaryAudit:
    """``admmcheck audit NAME --canaries M``: the one-run audit of ``spec`` on ``setting`` from the values typed for
    its slots, its audit settings, the neighbour search and the many-run request; what belongs to a many-run audit
    is refused, with the flags that name it."""
    if "canaries" not in slots:
        given = ", ".join("--" + name.replace("_", "-") for name in slots)
        verb = "applies" if len(slots) == 1 else "apply"
        raise InvalidConfiguration(f"{given} {verb} to a one-run audit: add --canaries M (e.g. --canaries 1000)",
                                   parameter="canaries")
    many = [name for name in audit if name in NOT_FOR_CANARIES] + list(search) + list(request)
    if many:
        flags = {"where": spec.first_place[1].split()[0] if spec.first_place else "--where", "neighbours":
                 "--neighbour-kind", "white_box": "--white-box", "white_box_search": "--search", "plot": "--plot"}
        named = [flags.get(name, "--" + name.replace("_", "-")) for name in many]
        raise InvalidConfiguration(f"{', '.join(named)}: not for a one-run audit (--canaries), which trains each run "
                                   "once on canaries placed by --canary-placement; remove them, or audit without "
                                   "--canaries", parameter="canaries")
    return MechanismCanaryAudit(spec.name, setting, config_from_flags(CanarySlots, slots),
                                spec.audit.but(seed=setting.seed).but(**audit))


def run_mechanism_canary_audit(config: MechanismCanaryAudit, progress: bool = False) -> CanaryAuditResult:
    """Draw the canaries and each run's inclusions from the seed, train every run (and, where the spec's score reads
    one, a reference run whose slots all hold their default) in isolated workers, score, guess and bound
    (:func:`~admmcheck.audit.one_run.canaries.conclude`)."""
    from admmcheck.mechanisms.canaries import SlotRuns
    from admmcheck.mechanisms.registry import REGISTRY

    spec = REGISTRY.mechanism(config.name)
    capability = spec.require("canaries")
    placement = Placement.parse(config.slots.canary_placement)
    started = time.monotonic()
    base = capability.base(spec, config.setting)
    game = capability.draw(base, config.slots.canaries, config.slots.runs, placement, config.settings.seed)
    empty = capability.fill(base, game, np.zeros(len(game.points), dtype=bool))  # every slot at its default
    auditable = capability.auditable(spec, config.setting, empty)
    released, isolation = play(Source(obj=auditable.mechanism), SlotRuns(capability, base, game),
                               game.runs + capability.reference_run(auditable.mechanism), config.settings, progress)
    context = {"mechanism": spec.name, "placement": str(placement), **auditable.summary}
    if getattr(capability, "domain", None):  # what the family's canaries are, in words (for the page's game)
        context["canary_domain"] = capability.domain
    scores = capability.score(released, game, base, auditable.mechanism)
    return conclude(scores, game, auditable.claimed, config.settings,
                    capability.score_name(auditable.mechanism), started, context, isolation)
