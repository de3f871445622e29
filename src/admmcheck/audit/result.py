"""The result of a black-box audit (:func:`admmcheck.audit.auditor.audit`): the verdict, the deciding event and its
counts, the bound on the claim's parameter and everything that qualifies it. It serialises itself
(:meth:`AuditResult.as_dict`, the ``--json`` contract) and describes itself for a terminal
(:meth:`AuditResult.lines`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from admmcheck.audit.inputs.outputs import Layout
from admmcheck.audit.running.sampling import Randomness
from admmcheck.audit.statistics.curve import PrivacyCurve
from admmcheck.audit.statistics.estimators import TWO_INTERVALS
from admmcheck.claims.values import ApproxDp, Claim
from admmcheck.foundations.results import Result


@dataclass(frozen=True)
class AuditResult(Result):
    """The verdict of one audit and the evidence behind it (see :meth:`as_dict`); :meth:`lines` for a terminal."""

    kind: ClassVar[str] = "black-box audit"

    verdict: str
    epsilon_lower_bound: float
    claim: Claim
    confidence: float
    samples: int
    selection_samples: tuple[int, int]
    bounding_samples: tuple[int, int]
    event: str
    family: str
    numerator: int
    pair: int
    counts: tuple[int, int]
    intervals: tuple[tuple[float, float], tuple[float, float]]
    delta_lower_bound: float
    candidates: tuple[dict[str, object], ...]
    intervals_bounded: int
    seed: int
    wall_time_s: float
    layout: Layout
    pairs: int
    complete: bool
    randomness: Randomness
    epsilon_estimate: float = float("nan")
    kinds: tuple[dict[str, object], ...] = ()
    histogram: dict[str, object] | None = None
    mechanism: str = ""
    notes: tuple[str, ...] = field(default=())
    findings: tuple[str, ...] = field(default=())
    search: dict[str, object] | None = None
    curve: PrivacyCurve | None = None
    mode: str = "fixed-n"  # or "sequential" (admmcheck.audit.sequential)
    leak_floor: dict[str, object] | None = None  # the rarest leak this fixed-n audit can refute (_leak_floor)
    sequential: dict[str, object] | None = None  # the sequential test: e-value, samples used, looks
    counted: tuple[int, int] | None = None  # samples per side ``counts`` are of, where not the bounding samples
    estimator: str = TWO_INTERVALS  # what the bound came from: TWO_INTERVALS or RATIO_TEST (estimators)
    #: the lower bound on the claim's own parameter (ε, ρ, μ, a curve's shift: ``claim.parameter``); None: the ε bound
    lower_bound: float | None = None
    isolation: str = ""  # which isolation the code ran under (admmcheck.audit.running.sandbox)

    @property
    def claim_lower_bound(self) -> float:
        """The lower bound on the claim's parameter that decides the verdict (``claim.parameter``)."""
        return self.epsilon_lower_bound if self.lower_bound is None else self.lower_bound

    def as_dict(self) -> dict[str, object]:
        """JSON-ready fields of the ``admmcheck audit --json`` contract; ``privacy_curve`` is the (ε, δ)
        curve (:meth:`admmcheck.audit.statistics.curve.PrivacyCurve.as_dict`): ``epsilon_grid`` with
        ``delta_lower_bound`` (and ``claimed_delta``, the most an (ε, δ)-DP claim allows) on it,
        ``delta_grid`` with ``epsilon_lower_bound`` on it, ``exceeds_claim`` (and where), how many
        ``sets`` (and ``ladders``, ``intervals``) were bounded, each interval's ``level``, the
        ``confidence`` and the ``method``: a statement of its own at the stated confidence, beside
        the verdict's."""
        def side(k: int) -> dict[str, object]:
            n = (self.counted or self.bounding_samples)[k]
            return {"count": self.counts[k], "n": n, "estimate": self.counts[k] / n if n else None,
                    "interval": list(self.intervals[k])}

        return {
            "verdict": self.verdict,
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "epsilon_estimate": self.epsilon_estimate,
            "claim": self.claim.as_dict(),
            "lower_bound": {"parameter": self.claim.parameter, "value": self.claim_lower_bound,
                            "claimed": self.claim.value},
            "claimed_epsilon": self.claim.epsilon if isinstance(self.claim, ApproxDp) else None,
            "claimed_delta": self.claim.delta if isinstance(self.claim, ApproxDp) else None,
            "delta_lower_bound_at_claimed_epsilon": self.delta_lower_bound,
            "confidence": self.confidence,
            "samples": self.samples,
            "mode": self.mode,
            "samples_used": {"selection": list(self.selection_samples), "bounding": list(self.bounding_samples),
                             "total": [s + b for s, b in zip(self.selection_samples, self.bounding_samples)]},
            "event": self.event,
            "event_family": self.family,
            "estimator": self.estimator,
            "event_more_likely_under": f"d{self.numerator}",
            "neighbour_pair": self.pair,
            "neighbour_pairs": self.pairs,
            "p_d0": side(0),
            "p_d1": side(1),
            "multiplicity": {"intervals": self.intervals_bounded, "method": self.sequential["method"]
                             if self.sequential else "weighted Bonferroni over every "
                             "bounded event: the event ranked best on the selection split gets half of 1 - confidence "
                             "(per neighbour pair), the others share the rest; each candidate's 'level' is its "
                             "share, spent on two one-sided Clopper-Pearson intervals (half each) or, for a claim "
                             "with delta = 0 where the selection split predicts more from it, on the conditional "
                             "ratio test (its 'estimator')"},
            "candidates": list(self.candidates),
            "output_layout": self.layout.as_dict(),
            "output_kinds": list(self.kinds),
            "histogram": self.histogram,
            "mechanism": self.mechanism,
            "seed": self.seed,
            "reproducible": self.randomness.reproducible,
            "randomness": self.randomness.as_dict(),
            "wall_time_s": self.wall_time_s,
            "isolation": self.isolation,
            "complete": self.complete,
            "notes": list(self.notes),
            "findings": list(self.findings),
            **({"neighbour_search": self.search} if self.search is not None else {}),
            "privacy_curve": self.curve.as_dict() if self.curve is not None else None,
            **({"sequential": self.sequential} if self.sequential is not None else {}),
            **({"leak_floor": self.leak_floor} if self.leak_floor is not None else {}),
            "caveats": list(self.caveats),
        }

    @property
    def outcome(self) -> str:
        return "failed" if self.verdict == "violation" else "passed"

    @property
    def caveats(self) -> tuple[str, ...]:
        """What qualifies the verdict, said beside it: a "no violation found" cannot speak for leaks rarer than the
        audit's leak floor (:func:`leak_note`)."""
        if self.verdict == "violation" or self.leak_floor is None:
            return ()
        return (leak_note(self.leak_floor),)

    @property
    def strict(self) -> bool:
        """Whether the bound is strict: a sequential audit that refuted the claim read it off its grid of refuted
        values, each of which the true one exceeds (shown ">" rather than ">=")."""
        return (self.sequential or {}).get("refuted_epsilon") is not None

    def headline(self, claim_used: str | None = None) -> str:
        """The verdict and the bound on the claim's parameter, with the claim (and how it follows from the theorem's:
        ``claim_used``)."""
        claimed = self.claim.claimed() + (f": {claim_used}" if claim_used else "")
        return (f"{VERDICT_WORDS[self.verdict]}: {self.claim.parameter} {'>' if self.strict else '>='} "
                f"{self.claim_lower_bound:.4f} with confidence {self.confidence} ({claimed})")

    def evidence_lines(self) -> list[str]:
        """The deciding event and its counts, the search and the sequential test that led to it."""
        out = []
        if self.epsilon_estimate == float("inf"):
            never = 1 - self.numerator
            # a zero count is what was seen, not a support mismatch: only the bound above is established
            out.append(f"  point estimate: infinite: d{never} gave no output in this event in the "
                       f"{(self.counted or self.bounding_samples)[never]} samples counted (the ratio of the frequencies; "
                       "the bound above is what the samples establish)")
        out += [f"  finding: {finding}" for finding in self.findings]
        if self.search:
            out.append(f"  neighbours found by the search: {self.search['found']['change']} (of "
                       f"{self.search['candidates_screened']} candidates screened on "
                       f"{self.search['screening_samples_per_side']} samples per side, {self.search['kept']} bounded)")
        if self.sequential:
            out.append(f"  sequential test: e-value {self.sequential['e_value']:.4g} (a violation at >= "
                       f"{self.sequential['threshold']:.4g}) after {len(self.sequential['looks'])} looks")
        out.append(f"  event: {self.event}")
        if not self.sequential:
            out.append(f"  bounded by: {self.estimator}")
        n = self.counted or self.bounding_samples
        for side in (0, 1):
            shown = (" (in the last look)" if self.sequential else
                     f", interval [{self.intervals[side][0]:.4g}, {self.intervals[side][1]:.4g}]")
            out.append(f"  P[event | d{side}] = {self.counts[side]}/{n[side]}{shown}")
        lead, *others = self.candidates or ({},)
        for leg in others if self.sequential else ():  # the deciding bet's other legs (sequential.paired_bet)
            if (leg.get("pair"), leg.get("slot")) == (lead.get("pair"), lead.get("slot")):
                out.append(f"  in the same bet: {leg['event']}: {leg['counts'][0]}/{leg['n'][0]} under d0, "
                           f"{leg['counts'][1]}/{leg['n'][1]} under d1")
        return out

    def sampling_lines(self) -> list[str]:
        """What was drawn (where it is not what was asked), the seed, the time, reproducibility and notes."""
        total = self.selection_samples[0] + self.bounding_samples[0]
        # what was drawn, where it is not what was asked: a sequential audit that stopped, or --max-time run out
        used = "" if total == self.samples else f"{total} of "
        split = ("" if self.mode != "fixed-n" or not used else
                 f" ({self.selection_samples[0]} chose the events, {self.bounding_samples[0]} bounded them)")
        out = [f"  {used}{self.samples} samples per side{split}, seed {self.seed}, {self.wall_time_s:.1f} s"]
        if not self.randomness.reproducible:
            out.append(f"  not reproducible from the seed: {self.randomness.reason}")
        out += [f"  isolation: {self.isolation}"] if self.isolation else []
        return out + [f"  note: {note}" for note in self.notes]

    def lines(self) -> list[str]:
        return [self.headline(), *(f"  caveat: {caveat}" for caveat in self.caveats), *self.evidence_lines(),
                *self.sampling_lines()]


#: How a verdict is written in words (the JSON keeps its token): on the command line and on the pages alike
VERDICT_WORDS = {"violation": "violation", "no-violation-found": "no violation found"}


def leak_note(floor: dict[str, object]) -> str:
    """What a "no violation found" cannot speak for: leaks rarer than the audit's leak floor (``floor``, the
    ``leak_floor`` of its JSON)."""
    rarer = (f"a leak confined to events of probability below {floor['probability']:.2g} under one dataset (never "
             "given by the other) would not be refuted at its expected count" if floor["probability"] < 1 else
             "no event, however likely under one dataset and never given by the other, could refute the claim")
    return (f"{rarer} with {floor['bounding_samples']} bounding samples per side, even one known in advance at this "
            "audit's best level: rarer leaks need more samples")
