"""The white box of each family: the exact privacy loss of transcripts sampled under D (our own code, in this process)
against the claim. A spec's ``white_box`` is one of these, chosen at registration (its family's, where its noise law
gives an exact loss); ``admmcheck audit NAME --white-box`` calls it on the audited pair.

* :func:`consensus_white_box`: the loss of :mod:`admmcheck.mechanisms.privacy_loss` summarised
  (:mod:`admmcheck.audit.statistics.loss_profile`), and with ``search`` the worst case over transcripts and
  neighbours (:mod:`admmcheck.mechanisms.worst_case`). The theorem is a pure ε-DP claim (δ = 0): a loss above β
  (beyond floating-point tolerance) is a **violation** whose evidence is the seed and the transcript that gave it.
* :func:`sharing_white_box`: DP sharing's released D_m x̃_m lie in col(D_m) (ADMM-sharing paper (9)); a transcript
  outside col(D'_m) has infinite loss.
* :func:`online_white_box`: DPSDA's Laplace messages (Lemma 1) and their searched worst case against T·ε.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import numpy as np

from admmcheck.claims.values import ApproxDp, Claim
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.audit.statistics.loss_profile import loss_distribution, plot_loss_distribution
from admmcheck.foundations.progress import Budget
from admmcheck.foundations.results import Result

#: Losses above beta * (1 + RELATIVE_TOL) + ABSOLUTE_TOL exceed the claim.
RELATIVE_TOL, ABSOLUTE_TOL = 1e-9, 1e-9
BLOCK = 1000  # transcripts per batched run


@dataclass(frozen=True, eq=False)
class Auditable:
    """What an audit of a registered mechanism runs, built from its spec and setting (``spec.auditable``):
    ``mechanism`` the auditable run (``batch_run``), ``problem`` the data its neighbours change, ``claim`` the
    object its spec's ``claim(setting)`` gave (the theorem's, with its constants; None: none), ``claimed`` the claim
    value audited (:class:`~admmcheck.claims.Claim`: its notion, δ and source), ``summary`` the claim's JSON under its
    key (``theorem`` or ``claims``), ``claim_used`` how the audited claim follows from the theorem's where it is not
    its total."""

    mechanism: Any
    problem: Any
    claim: Any
    claimed: Claim
    summary: dict[str, object]
    claim_used: str | None = None

    def pure_epsilon(self, what: str) -> float:
        """The ε of a pure ε-DP claim, which ``what`` (an exact white box) compares its privacy loss with; refuses
        any other claim with what to do."""
        if not (isinstance(self.claimed, ApproxDp) and self.claimed.delta == 0):
            raise InvalidConfiguration(f"{what} compares the exact privacy loss with a pure epsilon claim; this claim "
                                       f"is {self.claimed.describe()}: audit it as a black box (without --white-box)",
                                       parameter="white_box")
        return self.claimed.epsilon


@dataclass(frozen=True)
class WhiteBoxOptions:
    """``samples`` transcripts under D from ``seed``; ``confidence`` of the loss law's quantile intervals;
    ``search`` adds the worst-case search; ``plot`` a figure path; ``records`` the neighbour records searched."""

    samples: int = 2000
    seed: int = 0
    confidence: float = 0.95
    search: bool = False
    plot: str | None = None
    records: int = 2
    progress: bool = False


@dataclass(frozen=True)
class WhiteBoxResult(Result):
    """What a white box found: its ``verdict`` (``within-claim`` or ``violation``), the largest exact loss and, where
    its family's white box gives them, the other figures; ``summary`` is its JSON in the order it was built (a
    family's own figures included). A spec's ``white_box`` returns one, built with :meth:`of`."""

    kind: ClassVar[str] = "white box"

    verdict: str
    max_loss: float
    summary: Mapping[str, object] = field(repr=False)
    samples: int | None = None
    mean_loss: float | None = None
    ratio: float | None = None
    infinite_fraction: float | None = None
    off_support: tuple[float, float] | None = None  # (min, median) relative distance to the other support
    quantiles: Mapping[str, object] | None = None
    worst_case: float | None = None
    worst_ratio: float | None = None
    worst_where: str | None = None
    even_steps: tuple[float, float] | None = None  # (max |loss| of an even step, max distance to (29))
    findings: tuple[str, ...] = ()
    plot: str | None = None

    @classmethod
    def of(cls, summary: Mapping[str, object]) -> "WhiteBoxResult":
        """The result whose JSON is ``summary`` (``verdict`` and ``max_loss`` required; the figures it names are
        read into their fields: ``worst_case`` a number or ``{value, ratio, where}``)."""
        worst = summary.get("worst_case")
        even = summary.get("even_steps")
        off = (summary["off_support_min"], summary["off_support_median"]) if "off_support_min" in summary else None
        return cls(verdict=str(summary["verdict"]), max_loss=float(summary["max_loss"]), summary=dict(summary),
                   samples=summary.get("samples"), mean_loss=summary.get("mean_loss"), ratio=summary.get("ratio"),
                   infinite_fraction=summary.get("infinite_fraction"), off_support=off,
                   quantiles=summary.get("quantiles"),
                   worst_case=worst["value"] if isinstance(worst, dict) else worst,
                   worst_ratio=worst.get("ratio") if isinstance(worst, dict) else None,
                   worst_where=worst.get("where") if isinstance(worst, dict) else None,
                   even_steps=(even["max_abs_loss"], even["max_distance_to_29"]) if even else None,
                   findings=tuple(summary.get("findings", ())), plot=summary.get("plot"))

    @property
    def outcome(self) -> str:
        return "failed" if self.verdict == "violation" else "passed"

    def as_dict(self) -> dict[str, object]:
        return dict(self.summary)

    def lines(self) -> list[str]:
        figures = [f"max loss {self.max_loss:.4f}" + (f" of {self.samples} transcripts" if self.samples else "")]
        if self.mean_loss is not None:
            figures.append(f"mean (KL) {self.mean_loss:.4g}")
        if self.infinite_fraction is not None and self.off_support is not None:
            figures.append(f"{self.infinite_fraction:.1%} have infinite loss; released values lie at relative "
                           f"distance >= {self.off_support[0]:.3g} (median {self.off_support[1]:.3g}) from the "
                           "support under D'")
        if self.ratio is not None:
            figures.append(f"ratio to the claim {self.ratio:.3f}")
        out = [f"white box: {self.verdict}: " + ", ".join(figures)]
        if self.quantiles is not None:
            out.append("  quantiles: " + ", ".join(f"{level}: {q['value'] if isinstance(q, dict) else q:.4g}"
                                                   for level, q in self.quantiles.items()))
        if self.worst_where is not None:
            out.append(f"  worst case found: {self.worst_case:.4f} (ratio {self.worst_ratio:.3f}) at {self.worst_where}")
        elif self.worst_case is not None:
            out.append(f"  worst case found: {self.worst_case:.4f}")
        if self.even_steps is not None:
            out.append(f"  even steps: max |loss| {self.even_steps[0]:.3g}, max distance to (29) "
                       f"{self.even_steps[1]:.3g}")
        out += [f"  finding: {finding}" for finding in self.findings]
        return out + ([f"  written: {self.plot}"] if self.plot else [])


def exceeds(value: float, beta: float) -> bool:
    """True when ``value`` is above β beyond floating-point tolerance."""
    return bool(value > beta * (1 + RELATIVE_TOL) + ABSOLUTE_TOL)


def _seeds(options: WhiteBoxOptions) -> list[np.random.SeedSequence]:
    return np.random.SeedSequence([options.seed, 0x5EED]).spawn(options.samples)


def consensus_white_box(spec: Any, audited: Auditable, pair: Any, place: str,
                        options: WhiteBoxOptions) -> WhiteBoxResult:
    """The ``white_box`` object of a consensus audit (module docstring)."""
    mechanism, (d0, d1) = audited.mechanism, (pair.d0, pair.d1)
    seeds = _seeds(options)
    budget = Budget(show_progress=options.progress)
    losses, even_error, steps = [], [], []
    for start in budget.steps(range(0, options.samples, BLOCK), "white-box transcripts",
                              total=-(-options.samples // BLOCK)):
        primal = mechanism.batch_run(d0, seeds[start:start + BLOCK]).primal
        loss = spec.exact_loss(mechanism, d0, d1, primal)
        losses.append(loss.total)
        steps.append(loss.per_step.sum(axis=2))
        if loss.even_step_error is not None:
            even_error.append(loss.even_step_error)
    losses = np.concatenate(losses)
    per_step = np.concatenate(steps)
    summary = loss_distribution(losses, confidence=options.confidence)
    beta = audited.pure_epsilon("the consensus white box")
    worst_index = summary.argmax
    report: dict[str, object] = summary.as_dict() | {
        "claimed_beta": beta, "theorem": audited.summary.get("theorem"), "neighbours": place,
        "ratio": summary.maximum / beta, "sampled_max_exceeds_beta": exceeds(summary.maximum, beta),
        "per_step_mean": per_step.mean(axis=0).tolist(),
        "argmax_evidence": {"seed_entropy": seeds[worst_index].entropy, "spawn_key": list(seeds[worst_index].spawn_key),
                            "loss": summary.maximum},
    }
    if even_error:
        even = per_step[:, 1::2]
        report["even_steps"] = {"max_abs_loss": float(np.abs(even).max()) if even.size else 0.0,
                                "max_distance_to_29": float(np.concatenate(even_error).max())}
    findings = []
    if report["sampled_max_exceeds_beta"]:
        transcript = mechanism.batch_run(d0, [seeds[worst_index]]).primal[0]
        report["argmax_evidence"]["transcript"] = transcript.tolist()
        findings.append(f"a sampled transcript has loss {summary.maximum:.6g} > beta = {beta:.6g}")
    report["worst_case"] = {"value": summary.maximum, "where": f"sampled transcript {worst_index} (the neighbour "
                            "pair above; argmax_evidence)", "searched": False, "ratio": summary.maximum / beta,
                            "exceeds_beta": exceeds(summary.maximum, beta)}
    if options.search and not spec.supports("worst_case"):
        report["worst_case"]["note"] = f"{spec.name} has no worst-case search registered: the sampled maximum"
    elif options.search:
        worst = spec.worst_case(mechanism, d0, records=options.records, seed=options.seed)
        report["worst_case"] = worst.as_dict() | {"searched": True, "ratio": worst.value / beta,
                                                  "exceeds_beta": exceeds(worst.value, beta)}
        if exceeds(worst.value, beta):
            findings.append(f"the search found loss {worst.value:.6g} > beta = {beta:.6g} at {worst.change.describe()}")
        report["ratio"] = max(summary.maximum, worst.value) / beta
    report["findings"] = findings
    report["verdict"] = "violation" if findings else "within-claim"
    if options.plot:
        plot_loss_distribution(losses, summary, options.plot, beta=beta,
                               title=f"{spec.name}: privacy loss of {options.samples} transcripts under D")
        report["plot"] = options.plot
    return WhiteBoxResult.of(report)


def sharing_white_box(spec: Any, audited: Auditable, pair: Any, place: str,
                      options: WhiteBoxOptions) -> WhiteBoxResult:
    """The exact loss of ``options.samples`` DP-sharing transcripts under D (support evidence included)."""
    run = audited.mechanism.batch_run(pair.d0, _seeds(options))
    loss = spec.exact_loss(audited.mechanism, pair.d0, pair.d1, run.extras["shared"])
    finite = np.isfinite(loss.total)
    off = loss.off_support[:, :, list(loss.changed_parties)]
    return WhiteBoxResult.of({
        "samples": options.samples, "infinite_fraction": float(np.mean(~finite)),
        "max_loss": float(np.max(loss.total)), "mean_loss": float(np.mean(loss.total)),
        "off_support_min": float(off.min()), "off_support_median": float(np.median(off)),
        "support_tolerance": 1e-8,
        "evidence": "every released D_0 x~_0^t lies in col(D_0); under D' it must lie in col(D'_0), and the "
                    "sampled transcripts are at the relative distances above from it",
        "verdict": "violation" if not finite.all() else "within-claim",
    })


def online_white_box(spec: Any, audited: Auditable, pair: Any, place: str,
                     options: WhiteBoxOptions) -> WhiteBoxResult:
    """The exact loss of ``options.samples`` DPSDA transcripts under D and its searched worst case, against T·ε."""
    mechanism, total = audited.mechanism, audited.pure_epsilon("the online white box")
    broadcast = mechanism.batch_run(pair.d0, _seeds(options)).extras["broadcast"]
    per_step = spec.exact_loss(mechanism, pair.d0, pair.d1, broadcast)
    law = loss_distribution(per_step.sum(axis=(1, 2)), confidence=options.confidence)
    worst = max(spec.worst_case(mechanism, pair.d0, pair.d1, seed=options.seed),
                spec.worst_case(mechanism, pair.d1, pair.d0, seed=options.seed))
    return WhiteBoxResult.of({
        "samples": options.samples, "max_loss": law.maximum, "mean_loss": law.mean,
        "quantiles": {f"{k:g}": v[0] for k, v in law.quantiles.items()},
        "worst_case": worst, "claimed_epsilon_total": total, "ratio": worst / total,
        "per_round_mean_abs": np.abs(per_step).sum(axis=2).mean(axis=0).tolist(),
        "nodes_contributing": int(np.sum(np.abs(per_step).max(axis=(0, 1)) > 0)),
        "verdict": "violation" if worst > total * (1 + 1e-9) else "within-claim",
    })
