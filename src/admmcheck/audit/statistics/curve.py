"""The (ε, δ) curve of an audit: lower bounds on δ(ε) over a grid of ε and on ε(δ) over a grid of δ,
all valid together with probability >= the stated confidence.

**Lines.** For a set E of outputs and datasets a ≠ b of a neighbour pair, (ε, δ)-DP requires
P_a(E) <= e^ε P_b(E) + δ (Dwork & Roth 2014, Def. 2.4); δ(ε) = sup_E P_a(E) − e^ε P_b(E) is the
hockey-stick divergence (Balle & Wang 2018, Thm 5; Barthe & Olmedo 2013). With one-sided
Clopper-Pearson bounds p̲_a <= P_a(E) and p̄_b >= P_b(E), the line p̲_a − e^ε p̄_b bounds δ(ε)
from below for every ε at once, and ln((p̲_a − δ)/p̄_b) bounds ε(δ) for every δ at once
(:mod:`admmcheck.audit.statistics.estimators`). Each bounded set gets four one-sided intervals, P_d0(E) and
P_d1(E) from below and from above, which give four lines: E and its complement
(P(E^c) = 1 − P(E)), each with d0 or with d1 as the numerator. The curve is the largest line
at each ε (δ(ε) >= 0 always), its ε(δ) the largest line's bound at each δ (ε >= 0 always).

**Validity.** The sets and their number are fixed on the selection split, before any bounding
sample is drawn; 1 − confidence is split equally among the 4 × (sets) one-sided intervals
(Bonferroni), so with probability >= confidence every interval holds, hence every line, hence
the whole curve and every ε(δ) at once. The curve is a statement of its own: the ε verdict
(:func:`admmcheck.audit.auditor.event_levels`) spends its own 1 − confidence on its own intervals
and is unchanged by the curve, so the verdict and the curve each hold with probability
>= confidence, and both together with probability >= 1 − 2(1 − confidence).

**Sets.** The audit's candidate events, and a *ladder* on the scores of the best-ranked
candidate events (the first :data:`LADDERS` whose scores order the selection samples
differently): the sets {score >= c} for thresholds c at the quantiles of the pooled selection
scores whose probabilities are spaced :data:`LOGIT_STEP` apart in logit, from 1/n to 1 − 1/n
(n pooled selection scores): geometric in both tails, even in the middle. When the score is
monotone in the likelihood ratio (a Laplace or Gaussian output, a linear score of a Gaussian
vector) these are the Neyman-Pearson sets, one of which attains δ(ε) at each ε (Neyman &
Pearson 1933; Dong, Roth & Su 2022, trade-off functions).

**The claim's curve.** An (ε0, δ0)-DP mechanism has δ(ε) <= δ0 + (1 − δ0)(e^{ε0} − e^ε)/(1 + e^{ε0})
on [0, ε0] and <= δ0 beyond: the hockey-stick divergence of the
randomised-response pair whose privacy region is the whole (ε0, δ0) region (Kairouz, Oh &
Viswanath 2015, Thm 2.1), which contains the region of every (ε0, δ0)-DP pair. Where the lower
curve lies above it, the curve refutes the claim at the stated confidence. Any other claim (zCDP, GDP, a curve)
gives its own profile (:meth:`admmcheck.claims.Claim.profile`), against which the curve is compared alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from admmcheck.claims.values import Claim
from admmcheck.audit.statistics.estimators import cp_lower, cp_upper, epsilon_bound
from admmcheck.audit.statistics.events import Event, histogram_counts

LADDERS = 2  # candidate events (per neighbour pair) whose scores get a ladder of thresholds
LOGIT_STEP = 0.1  # spacing of the ladder's quantile probabilities in logit(p)
GRID_POINTS = 101  # ε grid points from 0 to the top (the claimed ε is added)
DELTA_GRID = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1)  # δ at which ε is bounded (the claimed δ is added)
#: part of a checkpoint's identity: the bounding counts of an audit hold the ladders' counts too
IDENTITY = f"privacy-curve:1,ladders={LADDERS},logit-step={LOGIT_STEP}"
METHOD = ("Bonferroni over every one-sided Clopper-Pearson interval of the curve: 4 per bounded set (P_d0 and P_d1 "
          "of the set, each from below and from above), each at level 'level' = (1 - confidence)/'intervals', the "
          "sets (the candidate events, and on the scores of the best-ranked ones the ladder sets {score >= c} at "
          f"selection quantiles {LOGIT_STEP} apart in logit) fixed on the selection split; delta(epsilon) >= "
          "max over the sets, their complements and both orders of p_a lower - e^epsilon p_b upper, and "
          "epsilon(delta) >= ln((p_a lower - delta)/p_b upper), for every epsilon and delta together at the stated "
          "confidence. A statement of its own: the epsilon verdict spends its own 1 - confidence, so verdict and "
          "curve both hold with probability >= 1 - 2(1 - confidence)")


@dataclass(frozen=True, eq=False)
class Ladder:
    """Thresholds c_1 < ... < c_m on the score of ``event`` (the ``index``-th event of its pair), fixed
    on the selection split; the ladder's sets are {score >= c_j} (a NaN score is in none)."""

    event: Event
    index: int
    thresholds: np.ndarray

    @property
    def edges(self) -> np.ndarray:
        """Bin edges whose bin counts (:func:`~admmcheck.audit.statistics.events.histogram_counts`) give every set's count."""
        return np.concatenate([[-np.inf], self.thresholds, [np.inf]])

    def set_counts(self, bins: np.ndarray) -> np.ndarray:
        """Counts of {score >= c_j}, j = 1..m, from the m + 1 bin counts between the :attr:`edges`."""
        return np.cumsum(np.asarray(bins)[::-1])[::-1][1:]


@dataclass(frozen=True)
class Ladders:
    """The ladders of one neighbour pair's events, in event order (:func:`fit_ladders`)."""

    ladders: tuple[Ladder, ...] = ()

    @property
    def bins(self) -> int:
        """How many bin counts :meth:`count` gives per block, over all events."""
        return sum(len(ladder.thresholds) + 1 for ladder in self.ladders)

    def count(self, index: int, scores: np.ndarray) -> np.ndarray:
        """The bin counts of the ladder on event ``index`` for these scores (none when it has no ladder)."""
        for ladder in self.ladders:
            if ladder.index == index:
                return histogram_counts(scores, ladder.edges)
        return np.zeros(0, dtype=np.int64)

    def split(self, bins: np.ndarray) -> list[np.ndarray]:
        """Each ladder's set counts from the bin counts of every ladder, concatenated in event order."""
        out, offset = [], 0
        for ladder in self.ladders:
            size = len(ladder.thresholds) + 1
            out.append(ladder.set_counts(bins[offset:offset + size]))
            offset += size
        return out


def ladder_thresholds(scores: np.ndarray) -> np.ndarray:
    """Distinct quantiles of the finite ``scores`` at probabilities LOGIT_STEP apart in logit, 1/n to 1 − 1/n."""
    finite = scores[np.isfinite(scores)]
    if len(finite) < 2:
        return np.zeros(0)
    half = np.arange(LOGIT_STEP, math.log(len(finite)) + LOGIT_STEP / 2, LOGIT_STEP)
    logits = np.concatenate([-half[::-1], [0.0], half])
    return np.unique(np.quantile(finite, special.expit(logits)))


def _same_order(a: np.ndarray, b: np.ndarray) -> bool:
    """True when ``b`` is monotone (either way) along the order of ``a`` on the rows where both are finite:
    its ladder would hold no set that ``a``'s could not."""
    finite = np.isfinite(a) & np.isfinite(b)
    steps = np.diff(b[finite][np.argsort(a[finite], kind="stable")])
    return bool(np.all(steps >= 0) or np.all(steps <= 0))


def fit_ladders(events: list[Event], scores: list[np.ndarray]) -> Ladders:
    """Ladders on the first LADDERS of ``events`` (best first) whose pooled selection ``scores`` vary
    and order the samples unlike an earlier ladder's score."""
    chosen: list[Ladder] = []
    for index, (event, pooled) in enumerate(zip(events, scores)):
        if len(chosen) == LADDERS:
            break
        thresholds = ladder_thresholds(pooled)
        if len(thresholds) < 2 or any(_same_order(scores[ladder.index], pooled) for ladder in chosen):
            continue
        chosen.append(Ladder(event, index, thresholds))
    return Ladders(tuple(chosen))


@dataclass(frozen=True, eq=False)
class CurveSet:
    """One set bounded for the curve: a candidate ``event`` itself (``threshold`` None) or a ladder's
    {event score >= threshold}, with its bounding ``counts`` and sample sizes ``n`` under d0 and d1."""

    pair: int
    description: str
    event: Event = field(repr=False)
    threshold: float | None
    counts: tuple[int, int]
    n: tuple[int, int]


def pair_sets(pair: int, events: list[Event], counts: tuple[np.ndarray, np.ndarray], n: tuple[int, int],
              ladders: Ladders, bins: tuple[np.ndarray, np.ndarray]) -> list[CurveSet]:
    """The sets of one pair: its events with their ``counts`` per side, then every ladder set, whose counts
    come from the ladders' ``bins`` per side."""
    sets = [CurveSet(pair, e.description, e, None, (int(counts[0][k]), int(counts[1][k])), n)
            for k, e in enumerate(events)]
    for ladder, c0, c1 in zip(ladders.ladders, ladders.split(bins[0]), ladders.split(bins[1])):
        sets.extend(CurveSet(pair, f"{ladder.event.axis or ladder.event.description} >= {c:.6g}", ladder.event,
                             float(c), (int(k0), int(k1)), n)
                    for c, k0, k1 in zip(ladder.thresholds, c0, c1))
    return sets


def lines(intervals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p_a lower, p_b upper) of every line from the (sets, side, lower/upper) ``intervals``: per set, E with
    d1 then d0 as the numerator, then its complement E^c likewise (P(E^c) = 1 − P(E))."""
    low, up = intervals[:, :, 0], intervals[:, :, 1]
    return (np.concatenate([low[:, 1], low[:, 0], 1 - up[:, 1], 1 - up[:, 0]]),
            np.concatenate([up[:, 0], up[:, 1], 1 - low[:, 0], 1 - low[:, 1]]))


@dataclass(frozen=True, eq=False)
class PrivacyCurve:
    """The bounded ``sets``, their ``intervals`` ((sets, side, lower/upper), each one-sided bound at error
    probability ``level``), the ``ladders`` (pair, event, thresholds), and the grids of ε and δ at which
    :meth:`as_dict` gives the curve (:func:`bound_curve`)."""

    claim: Claim
    confidence: float
    level: float
    sets: tuple[CurveSet, ...]
    intervals: np.ndarray
    ladders: tuple[dict[str, object], ...]
    epsilon_grid: np.ndarray
    delta_grid: np.ndarray

    def lines(self) -> tuple[np.ndarray, np.ndarray]:
        """(p_a lower, p_b upper) of every line (:func:`lines`)."""
        return lines(self.intervals)

    def delta_lower_bound(self, epsilon: np.ndarray | float) -> np.ndarray:
        """max(0, largest line at each ε)."""
        lower_a, upper_b = self.lines()
        epsilon = np.atleast_1d(np.asarray(epsilon, dtype=float))
        with np.errstate(over="ignore"):  # e^ε = inf: the line is -inf there
            values = lower_a[None, :] - np.exp(epsilon)[:, None] * upper_b[None, :]
        return np.maximum(values.max(axis=1, initial=0.0), 0.0)

    def epsilon_lower_bound(self, delta: np.ndarray | float) -> np.ndarray:
        """max(0, largest ln((p_a lower − δ)/p_b upper) at each δ)."""
        lower_a, upper_b = self.lines()
        delta = np.atleast_1d(np.asarray(delta, dtype=float))
        return epsilon_bound(lower_a[None, :], upper_b[None, :], delta[:, None]).max(axis=1, initial=0.0)

    def exceeding(self) -> np.ndarray:
        """The ε of the grid where the lower bound on δ(ε) lies above the most the claim allows."""
        return self.epsilon_grid[self.delta_lower_bound(self.epsilon_grid) > self.claim.profile(self.epsilon_grid)]

    def notes(self, verdict: str) -> tuple[str, ...]:
        """A note for the audit when the curve refutes the claim but the ε verdict does not."""
        above = self.exceeding()
        if verdict == "violation" or not len(above):
            return ()
        return (f"the (epsilon, delta) curve lies above the claim's curve at {len(above)} grid point(s) of epsilon "
                f"between {above.min():.4g} and {above.max():.4g}: a refutation at the stated confidence by a "
                "statement of its own (the verdict is decided by the epsilon bound alone; both together hold with "
                "probability >= 1 - 2(1 - confidence))",)

    def as_dict(self) -> dict[str, object]:
        """The ``privacy_curve`` object of the ``admmcheck audit --json`` contract (see docs/black-box-audit.md, "The (ε, δ) curve")."""
        above = self.exceeding()
        return {"epsilon_grid": self.epsilon_grid.tolist(),
                "delta_lower_bound": self.delta_lower_bound(self.epsilon_grid).tolist(),
                "claimed_delta": self.claim.profile(self.epsilon_grid).tolist(),
                "delta_grid": self.delta_grid.tolist(),
                "epsilon_lower_bound": self.epsilon_lower_bound(self.delta_grid).tolist(),
                "exceeds_claim": bool(len(above)), "exceeds_claim_at_epsilon": above.tolist(),
                "sets": len(self.sets), "ladders": list(self.ladders), "intervals": 4 * len(self.sets),
                "level": self.level, "confidence": self.confidence, "method": METHOD}


def bound_curve(sets: list[CurveSet], claim: Claim, confidence: float) -> PrivacyCurve:
    """Bound every set (four one-sided Clopper-Pearson intervals at (1 − confidence)/(4 × sets) each) and
    lay the grids: ε from 0 to the largest finite ε a line supports (at least twice the claimed ε) in
    GRID_POINTS steps, with the claimed ε; δ over DELTA_GRID with the claimed δ (for a claim with no ε or δ of its
    own, its (ε, δ) planning point's: :meth:`~admmcheck.claims.Claim.planning_point`)."""
    point = claim.planning_point()
    level = (1 - confidence) / (4 * max(1, len(sets)))
    counts = np.array([s.counts for s in sets], dtype=float).reshape(-1, 2)
    n = np.array([s.n for s in sets], dtype=float).reshape(-1, 2)
    intervals = np.stack([cp_lower(counts, n, level), cp_upper(counts, n, level)], axis=-1)
    lower_a, upper_b = lines(intervals)
    supported = epsilon_bound(lower_a, upper_b, 0.0)
    top = max(float(supported.max(initial=-np.inf)), 2 * point.epsilon)
    top = top if top > 0 else 1.0
    epsilon_grid = np.union1d(np.linspace(0.0, top, GRID_POINTS), [point.epsilon])
    delta_grid = np.union1d(DELTA_GRID, [point.delta] if point.delta > 0 else [])
    ladders: dict[tuple[int, str], int] = {}
    for s in sets:
        if s.threshold is not None:
            ladders[(s.pair, s.event.description)] = ladders.get((s.pair, s.event.description), 0) + 1
    return PrivacyCurve(claim, confidence, level, tuple(sets), intervals,
                        tuple({"pair": pair, "event": event, "thresholds": m} for (pair, event), m in ladders.items()),
                        epsilon_grid, delta_grid)
