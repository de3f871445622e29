"""The white-box check of a reference mechanism (``admmcheck audit REFERENCE --white-box``).

Transcripts are sampled under D in this process (our own code), their exact losses computed
(:mod:`admmcheck.mechanisms.privacy_loss`) and summarised (:mod:`admmcheck.audit.statistics.loss_profile`);
with ``search`` the worst case over transcripts and neighbours is searched
(:mod:`admmcheck.mechanisms.worst_case`). The verdict compares both with the theorem's β: a loss
above β (beyond floating-point tolerance) is a **violation** whose evidence is the seed and
the transcript that gave it; the theorem is a pure ε-DP claim (δ = 0), so one transcript is
enough evidence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from admmcheck.commands.audit import ReferenceAuditConfig, reference_claim
from admmcheck.audit.statistics.loss_profile import loss_distribution, plot_loss_distribution
from admmcheck.errors import InvalidConfiguration
from admmcheck.progress import Budget

#: Losses above beta * (1 + RELATIVE_TOL) + ABSOLUTE_TOL exceed the claim.
RELATIVE_TOL, ABSOLUTE_TOL = 1e-9, 1e-9
BLOCK = 1000  # transcripts per batched run


@dataclass(frozen=True)
class WhiteBoxConfig:
    """``samples`` transcripts under D; ``search`` adds the worst-case search; ``plot`` a figure path."""

    samples: int = 2000
    search: bool = False
    plot: str | None = None
    records: int = 2


def exceeds(value: float, beta: float) -> bool:
    """True when ``value`` is above β beyond floating-point tolerance."""
    return bool(value > beta * (1 + RELATIVE_TOL) + ABSOLUTE_TOL)


def run_white_box(config: ReferenceAuditConfig, white: WhiteBoxConfig, progress: bool = False) -> dict[str, object]:
    """The ``white_box`` object of the audit report (see the module docstring)."""
    claim, bound, mechanism, pair = reference_claim(config)
    spec = config.spec
    if spec.exact_loss is None:
        raise InvalidConfiguration(f"{config.mechanism} has no exact loss registered: its white box cannot run; "
                                   "audit it as a black box", parameter="mechanism")
    d0, d1 = pair.d0, pair.d1
    seeds = np.random.SeedSequence([config.seed, 0x5EED]).spawn(white.samples)
    budget = Budget(show_progress=progress)
    losses, even_error, steps = [], [], []
    for start in budget.steps(range(0, white.samples, BLOCK), "white-box transcripts",
                              total=-(-white.samples // BLOCK)):
        block = seeds[start:start + BLOCK]
        primal = mechanism.batch_run(d0, block).primal
        loss = spec.exact_loss(mechanism, d0, d1, primal)
        losses.append(loss.total)
        steps.append(loss.per_step.sum(axis=2))
        if loss.even_step_error is not None:
            even_error.append(loss.even_step_error)
    losses = np.concatenate(losses)
    per_step = np.concatenate(steps)
    summary = loss_distribution(losses, confidence=config.settings.confidence)
    beta = claim.epsilon
    worst_index = summary.argmax
    report: dict[str, object] = summary.as_dict() | {
        "claimed_beta": beta, "theorem": bound.get("theorem"), "neighbours": config.spec.place(config.record or (0, 0), config.neighbours),
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
    if white.search and spec.worst_case is None:
        report["worst_case"]["note"] = f"{config.mechanism} has no worst-case search registered: the sampled maximum"
    elif white.search:
        worst = spec.worst_case(mechanism, d0, records=white.records, seed=config.seed)
        report["worst_case"] = worst.as_dict() | {"searched": True, "ratio": worst.value / beta,
                                                  "exceeds_beta": exceeds(worst.value, beta)}
        if exceeds(worst.value, beta):
            findings.append(f"the search found loss {worst.value:.6g} > beta = {beta:.6g} at {worst.change.describe()}")
        report["ratio"] = max(summary.maximum, worst.value) / beta
    report["findings"] = findings
    report["verdict"] = "violation" if findings else "within-claim"
    if white.plot:
        plot_loss_distribution(losses, summary, white.plot, beta=beta,
                               title=f"{config.mechanism}: privacy loss of {white.samples} transcripts under D")
        report["plot"] = white.plot
    return report
