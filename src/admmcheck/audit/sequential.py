"""Sequential, anytime-valid audits: testing by betting (an e-process).

``audit(..., sequential=True)`` (``admmcheck audit ... --sequential``) draws the samples in looks of
growing size (:func:`look_sizes`: EARLY_LOOK per side, then up to FIRST_LOOK, then GROWTH times more
at each look) and stops as soon as the claim is refuted, or when ``samples`` per side are spent.

**Which construction, and why.** Testing by betting, not alpha spending over the looks. Alpha
spending needs the looks and the spending fixed in advance and, at each look, an event fixed before
the samples it is bounded on, so it keeps the fixed-n audit's selection split and its Bonferroni
split of alpha, once per look. A bettor's wealth is a supermartingale whatever it bets on, as long
as each bet is fixed before the samples it is settled on: the events and the stakes are re-chosen
before every look from *all* earlier samples, every sample after the first look is both bet on and
later used for choosing (no split is lost), and Ville's inequality holds at every time at once, so
the audit may stop whenever it likes.

**The bet.** For an event E more likely under side a (b = 1 − a), (ε, δ)-DP implies
P_a(E) <= e^ε P_b(E) + δ. Sample i of side a and sample i of side b (independent draws) give
Z_i = 1[X_i ∈ E] − e^ε 1[Y_i ∈ E] − δ, with E[Z_i] <= 0 under the claim and Z_i >= −(e^ε + δ). A
bettor who stakes λ_i ∈ [0, c/(e^ε + δ)] (c = CAUTION < 1), with E and λ_i fixed before sample i
is drawn, holds W_t = ∏_{i<=t} (1 + λ_i Z_i) > 0 with E[W_t | past] <= W_{t−1}: a nonnegative
supermartingale from W_0 = 1 under the claim, so by Ville's inequality
P(sup_t W_t >= 1/α) <= α (α = 1 − confidence) under every stopping rule. The claim is refuted the
first time the wealth reaches 1/α; it is checked after every block of samples.

**Both directions in one bet.** The claim bounds both sides at once: for an event E_0 more likely under
d0 and an event E_1 more likely under d1 (both fixed before sample i), E[Z_{0,i}] <= 0 and
E[Z_{1,i}] <= 0, so a factor 1 + λ_0 Z_{0,i} + λ_1 Z_{1,i} with λ_0 + λ_1 <= c/(e^ε + δ) is again
>= 1 − c > 0 with conditional mean <= 1, and the product is a supermartingale as above
(:func:`paired_bet`). A leak that shows in both tails of a score (a shifted or widened output: most
of the power test's) is bet on with both legs of the score in one factor, which grows by both legs'
edges; an average of two bettors would grow at the faster one's rate only. On a scalar Laplace output
of half the claimed scale the growth-optimal one-event bettor gains 0.057 per pair, the two-leg one 0.079
(exact laws, ``benchmarks/sequential_limit.py``).

**Several events.** Before each look the events of :func:`~admmcheck.audit.statistics.events.candidate_events`
are chosen on every sample drawn so far (the fixed-n audit's families) and ranked by the growth
rate their bet is expected to give (below); slot k bets on the k-th best, with initial wealth
SLOT_WEIGHTS[k] / pairs (per neighbour pair). Each slot's wealth is an e-process (its event and
stake are fixed before the look), and the audit's wealth W is their average with these fixed
weights: E[W_t | past] = Σ w_k E[W^k_t | past] <= Σ w_k W^k_{t−1} = W_{t−1}, and W_0 = Σ w_k = 1,
so W is again a nonnegative supermartingale from 1 and Ville applies to it. (A weight chosen from
the data would break this; these are constants.)

**The stakes (λ).** A plug-in in the manner of GRAPA (Waudby-Smith and Ramdas, "Estimating means of
bounded random variables by betting", JRSS-B 2023: the stake that maximises the expected
log-growth E log(1 + λZ) under a law estimated from earlier samples), here under the law of
independent A ~ Bernoulli(p_a), B ~ Bernoulli(p_b) (:func:`bet`). Each candidate event's
threshold, direction and side are tuned on the samples drawn so far to the largest growth under
pessimistic (one-sigma one-sided Clopper-Pearson, the events' PESSIMISM) frequencies, which also
ranks the events; the stake is KELLY_FRACTION (half) of the growth-optimal one under the plain
frequencies at that threshold (:func:`tuned_bet`): a threshold chosen among many on the same
samples looks better than it is, and half the optimal stake keeps about 3/4 of the optimal growth
while an over-estimated edge costs little. A classifier's score is tuned on the samples it did not
learn from (``Event.learned``), and it is refitted only when the samples have doubled
(:class:`Chooser`: the fit is the costly part of a look). Stakes and events are computed from
earlier looks only and fixed within a look: predictable. An event without a predicted edge gets
no stake.

**Sure wins.** Where an event of the families that find outputs one side may never give
(SURE_FAMILIES: an output kind, an output value, a point off the affine support of the other side's
outputs) held every sample of side a drawn so far and none of side b, there is no threshold to
over-estimate (every cut between the sides counts the same), and the half stake would slow the
commonest bug of private-ADMM code, noise left out or reused, to twice the samples it needs. Such a
bet is staked at the whole growth-optimal stake under the add-½ (Krichevsky-Trofimov) frequencies
p_a = (n + ½)/(n + 1), p_b = ½/(n + 1): the largest stake c/(e^ε + δ) at ε = 1 from n = 5 on. A first
look of EARLY_LOOK (8) per side chooses such bets, and the second look (up to FIRST_LOOK, 20) bets on
them only (on so few samples a fitted score separates the sides by chance); every other event is chosen
from FIRST_LOOK samples on, as before. At ε = 1 a sure win multiplies the wealth by 1 + 0.9/e = 1.33
per sample pair, and 1.33^12 >= 20: the claim is refuted at 20 samples per side
(``benchmarks/sequential_power.py``: 40 before).

**The ε lower bound.** The same events and stakes are settled at every ε of the grid
claim·j/GRID, j = 0..GRID. The stakes (of all legs together) are below c/(e^claim + δ) <= c/(e^ε + δ),
so each W(ε) is an e-process under (ε, δ)-DP; and each factor 1 + Σ_k λ_k Z_k(ε) is non-increasing in ε
(every Z_k is), so W(ε) is non-increasing in ε. Let ε₀ be the smallest grid ε at which the mechanism is (ε, δ)-DP: reporting
any grid ε >= ε₀ as refuted means W(ε₀) reached 1/α, which has probability <= α; so the largest
refuted grid ε is a lower bound valid at the stated confidence. It never exceeds the claim: the
sequential mode decides the claim and stops, it does not measure by how much the claim fails
(the fixed-n mode does).

What is reported (:func:`run_sequential`): the verdict, the e-value W at the stopping time (at the
claim; E[W_τ] <= 1 for every stopping time τ), the samples drawn per side (``samples_used``: the
first look only chose events, every later sample was bet on) and every look with its bets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from admmcheck.audit.inputs.contract import PrivacyClaim
from admmcheck.audit.statistics.estimators import cp_lower, cp_upper, point_estimate
from admmcheck.audit.statistics.events import (FAMILIES, PESSIMISM, QUANTILES, Event, SelectionSizes, candidate_events,
                                    threshold_counts)
from admmcheck.audit.inputs.outputs import Block, Encoding, calls_repeat, seed_insensitive
from admmcheck.audit.running.sampling import Sampler, Task
from admmcheck.foundations.errors import MechanismError
from admmcheck.foundations.progress import Budget

EARLY_LOOK = 8  # samples per side of the first look: events are chosen on it, nothing is bet on it
FIRST_LOOK = 20  # the second look ends here; it bets only on sure wins (SURE_FAMILIES, every sample separated)
GROWTH = 1.25  # each later look draws this many times the samples of the look before (the third: of FIRST_LOOK)
SURE_FAMILIES = ("structure", "values", "support")  # events of outputs one side may never give
SLOT_WEIGHTS = (0.5, 0.25, 0.25)  # initial wealth of the bettors on the best, second and third event
KELLY_FRACTION = 0.5  # the stake is this share of the one that maximises the growth on the plug-in law
CANDIDATES = 10  # events asked of candidate_events at each look
CAUTION = 0.9  # c: a stake never exceeds c/(e^ε + δ), so a lost bet keeps at least 1 − c of the wealth
GRID = 20  # the ε lower bound is read on claim·j/GRID, j = 0..GRID
POOL_NUMBERS = 16_000_000  # at most this many output numbers per side are kept for choosing events
REFIT = 2  # the classifier family is fitted again when the samples drawn have grown this many times
MIN_BLOCK = 1  # samples per side of the smallest block (the wealth is checked after each)
LEGS = 2  # a bet holds at most this many events (paired_bet: a score's two directions)
LOOK_BLOCKS = 4  # a look is drawn in about this many blocks per side; the wealth is checked after each
METHOD = ("testing by betting: the wealth of bettors on events chosen from earlier samples, averaged with fixed "
          "weights, is a nonnegative supermartingale under the claim, so by Ville's inequality it reaches "
          "1/(1 - confidence) with probability <= 1 - confidence whenever the audit stops; no interval is bounded")


def look_sizes(samples: int, early: int = EARLY_LOOK, first: int = FIRST_LOOK, growth: float = GROWTH) -> list[int]:
    """Samples per side drawn at each look: ``early``, then the rest of ``first``, then ``growth`` times
    ``first``, and ``growth`` times the look before at every later look, until ``samples`` in all (the last
    look takes what is left)."""
    planned, size, sizes, drawn = [early, first - early], first, [], 0
    while drawn < samples:
        if planned:
            step = planned.pop(0)
        else:
            size = step = math.ceil(size * growth)
        sizes.append(min(step, samples - drawn))
        drawn += sizes[-1]
    return sizes


@dataclass(frozen=True)
class Bet:
    """One slot's bet for one look: the events ``legs`` (each more likely under its own numerator side),
    staked ``stakes`` in one factor 1 + Σ_k λ_k Z_k per sample pair (:func:`settle`), the log-growth per
    sample pair predicted from the samples the events were chosen on, which ranks the bets (:func:`tuned_bet`,
    :func:`paired_bet`), and whether it is a ``sure`` win there."""

    legs: tuple[Event, ...]
    stakes: tuple[float, ...]
    growth: float
    sure: bool = False

    @property
    def event(self) -> Event:
        """The leading leg: the one with the largest predicted growth on its own."""
        return self.legs[0]


def cells(legs: int) -> np.ndarray:
    """The outcome (A_k, B_k) of every leg k in every cell c = Σ_k 4^k (2 A_k + B_k): shape (4^legs, legs, 2)."""
    digits = (np.arange(4 ** legs)[:, None] // 4 ** np.arange(legs)[None, :]) % 4
    return np.stack([digits // 2, digits % 2], axis=-1)


def payoffs(epsilon: float | np.ndarray, delta: float, legs: int = 1) -> np.ndarray:
    """Z_k = A_k − e^ε B_k − δ of every leg k in every cell (:func:`cells`), per ε: shape (..., 4^legs, legs).
    With one leg the cells are (A, B) = (0, 0), (0, 1), (1, 0), (1, 1)."""
    scale = np.exp(np.asarray(epsilon, dtype=float))[..., None, None]
    outcome = cells(legs)
    return outcome[..., 0] - scale * outcome[..., 1] - delta


def bet(p_a: np.ndarray | float, p_b: np.ndarray | float, epsilon: float, delta: float,
        cap: float) -> tuple[np.ndarray, np.ndarray]:
    """(λ, growth), elementwise: the stake in [0, ``cap``] that maximises E log(1 + λZ) when
    A ~ Bernoulli(``p_a``) and B ~ Bernoulli(``p_b``) are independent, and that expected log-growth
    per sample pair (0 and 0 where E[Z] <= 0: no stake). The growth is concave in λ: its slope is
    bisected."""
    p_a, p_b = np.broadcast_arrays(np.asarray(p_a, dtype=float), np.asarray(p_b, dtype=float))
    z = payoffs(epsilon, delta)[..., 0]
    law = np.stack([(1 - p_a) * (1 - p_b), (1 - p_a) * p_b, p_a * (1 - p_b), p_a * p_b], axis=-1)
    low, high = np.zeros(p_a.shape), np.full(p_a.shape, float(cap))
    for _ in range(60):  # stays at 0 where the slope at 0 is <= 0, tends to cap where the slope there is > 0
        middle = (low + high) / 2
        rising = np.sum(law * z / (1 + middle[..., None] * z), axis=-1) > 0
        low, high = np.where(rising, middle, low), np.where(rising, high, middle)
    return low, np.sum(law * np.log1p(low[..., None] * z), axis=-1)


def joint_bet(law: np.ndarray, epsilon: float, delta: float, cap: float) -> tuple[np.ndarray, float]:
    """(λ, growth): the stakes λ_k >= 0 with Σ_k λ_k <= ``cap`` that maximise E log(1 + Σ_k λ_k Z_k)
    under ``law``, a probability for every cell of :func:`cells`, and that expected log-growth. The
    growth is concave in λ (SLSQP from no stake and from half the cap on each leg, the best kept). Below the cap
    every factor stays >= 1 − c > 0 whatever the cell."""
    legs = round(math.log(len(law), 4))
    z = payoffs(epsilon, delta, legs)
    used = law > 0
    z, law = z[used], law[used]

    def loss(stakes: np.ndarray) -> tuple[float, np.ndarray]:
        factor = 1 + z @ stakes
        return -float(law @ np.log(factor)), -(law / factor) @ z

    from scipy import optimize  # here: only a bet on several legs needs it, and every command imports this module

    starts = [np.zeros(legs)] + [np.eye(legs)[k] * cap / 2 for k in range(legs)]
    best = (0.0, np.zeros(legs))
    for start in starts:
        found = optimize.minimize(loss, start, jac=True, method="SLSQP", bounds=[(0.0, cap)] * legs,
                                  constraints=[{"type": "ineq", "fun": lambda s: cap - s.sum(),
                                                "jac": lambda s: -np.ones(legs)}],
                                  options={"ftol": 1e-15, "maxiter": 200})
        stakes = np.clip(found.x, 0.0, cap)
        stakes *= min(1.0, cap / stakes.sum()) if stakes.sum() > 0 else 1.0  # SLSQP may overstep the sum by ~1e-16
        growth = -loss(stakes)[0]
        if growth > best[0]:
            best = (growth, stakes)
    return best[1], best[0]


def cell_law(legs: tuple[Event, ...], features: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The plug-in probability of every cell (:func:`cells`) when a sample of each side is drawn
    independently from the empirical laws of ``features`` (:func:`independent_law` of the patterns' frequencies)."""
    weights = 2 ** np.arange(len(legs))
    frequency = []
    for side in (0, 1):
        inside = np.stack([leg.indicator(features[side]) for leg in legs], axis=1)
        frequency.append(np.bincount(inside.astype(np.int64) @ weights, minlength=2 ** len(legs)) / max(len(inside), 1))
    return independent_law(frequency[0], frequency[1], tuple(leg.numerator for leg in legs))


def independent_law(side_0: np.ndarray, side_1: np.ndarray, numerators: tuple[int, ...]) -> np.ndarray:
    """The probability of every cell (:func:`cells`) of legs with these ``numerators`` when the two sides'
    samples are independent, from the law of each side's pattern (index Σ_k 2^k [the sample is in leg k]):
    side 0's pattern at its probability times side 1's."""
    k = len(numerators)
    weights = 2 ** np.arange(k)
    outcome = cells(k)  # (cells, legs, 2): A on the leg's numerator side, B on the other
    side_bits = [np.where(np.array(numerators) == side, outcome[..., 0], outcome[..., 1]) for side in (0, 1)]
    return np.asarray(side_0)[side_bits[0] @ weights] * np.asarray(side_1)[side_bits[1] @ weights]


def tuned_bet(event: Event, features: tuple[np.ndarray, np.ndarray], claim: PrivacyClaim, cap: float,
              numerators: tuple[int, ...] = (0, 1)) -> Bet:
    """The bet on ``event``'s score at the threshold, direction and side (of ``numerators``) with the largest growth that
    :func:`bet` predicts from pessimistic frequencies on ``features`` (both sides' samples), among the
    QUANTILES quantile cuts of their scores, staked at KELLY_FRACTION of the growth-optimal stake on the
    plain frequencies there. (The candidate events also try the most extreme scores of each tail,
    :func:`~admmcheck.audit.statistics.events.threshold_cuts`; as bets those were measured to help some mechanisms
    and hurt others: ``benchmarks/sequential_power.py``, issue 30's note.) The candidate events' own
    thresholds are chosen for a Clopper-Pearson bound on many samples, which favours rare events of
    large ratio; a bet at the claim grows fastest on the event that beats e^claim by the most mass. The
    pessimism and the fraction temper the optimism of a threshold chosen among many on the same samples."""
    scores = [np.asarray(event.score(side), dtype=float) for side in features]
    n = len(scores[0])
    ordered = [np.sort(s[~np.isnan(s)]) for s in scores]  # NaN (a kind never seen) is in no event
    pooled = np.concatenate(ordered)
    cuts = np.unique(np.quantile(pooled, np.linspace(0, 1, QUANTILES + 1))) if len(pooled) else np.zeros(1)
    best = (-1.0, float(cuts[0]), True, event.numerator, 0, 0)
    for above, *counts in threshold_counts(*ordered, cuts):
        for numerator in numerators:
            p_a = cp_lower(counts[numerator], n, PESSIMISM)
            p_b = cp_upper(counts[1 - numerator], n, PESSIMISM)
            growths = bet(p_a, p_b, claim.epsilon, claim.delta, cap)[1]
            k = int(np.argmax(growths))
            if growths[k] > best[0]:
                best = (float(growths[k]), float(cuts[k]), above, numerator, counts[numerator][k],
                        counts[1 - numerator][k])
    growth, threshold, above, numerator, count_a, count_b = best
    sure = bool(event.family in SURE_FAMILIES and n > 0 and count_a == n and count_b == 0)
    # a sure win: all of the growth-optimal stake under the add-1/2 law; any other bet: half of it under the plug-in law
    law = ((n + 0.5) / (n + 1), 0.5 / (n + 1)) if sure else (count_a / max(n, 1), count_b / max(n, 1))
    stake = (1.0 if sure else KELLY_FRACTION) * float(bet(*law, claim.epsilon, claim.delta, cap)[0])
    return Bet((replace(event, threshold=threshold, above=above, numerator=numerator,
                        description=_described(event, threshold, above, numerator)),), (stake,), growth, sure)


def paired_bet(event: Event, features: tuple[np.ndarray, np.ndarray], claim: PrivacyClaim, cap: float) -> Bet:
    """The bet on ``event``'s score in both directions at once: the leg of :func:`tuned_bet` more likely
    under d0 and the leg more likely under d1, in one factor 1 + λ_0 Z_0 + λ_1 Z_1 (valid because
    (ε, δ)-DP bounds both: E[Z_0] <= 0 and E[Z_1] <= 0 under the claim), staked at KELLY_FRACTION of the
    stakes :func:`joint_bet` finds on the plug-in law of the two legs (:func:`cell_law`). A leak that
    shows in both tails of a score (a shifted or widened output) is bet on with both; one factor grows by
    both legs' edges, where an average of two bettors grows at the faster one's rate. Ranked by the sum of
    the two legs' pessimistic growths. A sure win, or a leg without a predicted edge, is bet on alone."""
    legs = sorted((tuned_bet(event, features, claim, cap, (numerator,)) for numerator in (0, 1)),
                  key=lambda b: -b.growth)
    if legs[0].sure or legs[1].growth <= 0:
        return legs[0]
    pair = (legs[0].event, legs[1].event)
    stakes, _ = joint_bet(cell_law(pair, features), claim.epsilon, claim.delta, cap)
    return Bet(pair, tuple(KELLY_FRACTION * float(s) for s in stakes), legs[0].growth + legs[1].growth)


def _described(event: Event, threshold: float, above: bool, numerator: int) -> str:
    """The tuned event in words: its score and threshold, or the categories (values, kinds in ratio
    order: ``event.labels``) it holds or leaves out."""
    more = f"more likely under d{numerator}"
    if event.labels:
        named = [label for j, label in enumerate(event.labels) if (j <= threshold if above else j < threshold)]
        count = math.floor(threshold) + 1 if above else math.ceil(threshold)
        shown = ", ".join(named[:5]) + (" ..." if count > 5 else "")
        return f"{event.axis}: {'none' if above else 'one'} of the first {count} ({{{shown}}}; {more})"
    return f"{event.axis or event.family} {'>' if above else '<'} {threshold:.6g} ({more})"


def settle(stakes: float | tuple[float, ...], outcomes: np.ndarray, grid: np.ndarray, delta: float) -> np.ndarray:
    """The log-wealth that ``stakes`` (one per leg) gain at every ε of ``grid`` on samples whose outcomes
    are counted in ``outcomes`` (per cell of :func:`cells`; with one leg, index 2A + B)."""
    stakes = np.atleast_1d(np.asarray(stakes, dtype=float))
    return np.log1p(payoffs(grid, delta, len(stakes)) @ stakes) @ np.asarray(outcomes, dtype=float)


def outcomes(legs: tuple[Event, ...], features: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Counts over the sample pairs i of every cell c = Σ_k 4^k (2 A_k + B_k) (:func:`cells`): A_k = sample
    i of leg k's numerator side is in leg k, B_k = sample i of the other side is."""
    code = np.zeros(len(features[0]), dtype=np.int64)
    for k, leg in enumerate(legs):
        a = leg.numerator
        code += 4 ** k * (2 * leg.indicator(features[a]).astype(np.int64) + leg.indicator(features[1 - a]))
    return np.bincount(code, minlength=4 ** len(legs))


def leg_outcomes(counts: np.ndarray, leg: int) -> np.ndarray:
    """The (A, B) counts (index 2A + B) of one leg, from the cell counts of :func:`outcomes`."""
    counts = np.asarray(counts)
    return np.bincount((np.arange(len(counts)) // 4 ** leg) % 4, weights=counts, minlength=4).astype(np.int64)


@dataclass
class Chooser:
    """Chooses the bets of one neighbour pair before each look (:meth:`choose`). The classifier family
    (a gradient-boosting fit, the costly one) is fitted again only when the samples drawn have grown
    REFIT times since its last fit or the encoding changed; in between, its last events are bet on again,
    tuned on the samples they did not learn from (the pool only grows at its end, so those are the same
    first samples)."""

    claim: PrivacyClaim
    alpha: float
    seed: int
    choice: tuple[Encoding, list[Bet]] | None = None
    chosen_on: int = 0
    learned: list[Event] = field(default_factory=list)
    learned_on: int = 0
    learned_for: object = None

    def choose(self, pool: tuple[Block, Block], remaining: int) -> tuple[Encoding, list[Bet]]:
        """The encoding fitted on ``pool`` and the slots' bets, best predicted growth first: the candidate
        events chosen on every sample drawn so far (planned for ``remaining`` samples per side), each tuned
        and staked by :func:`tuned_bet` on the pool, or, for a score fitted on the pool's first samples (a
        classifier's, ``Event.learned``), on the samples it did not learn from."""
        n = len(pool[0])
        if self.choice is not None and n == self.chosen_on:  # nothing new to choose on (the pool is full)
            return self.choice
        claim = self.claim
        encoding = Encoding.fit(pool)
        features = (encoding.features(pool[0]), encoding.features(pool[1]))
        kinds = encoding.category_labels() if encoding.categories else None
        early = n < FIRST_LOOK
        refit = not early and ((encoding.layout, kinds) != self.learned_for or n >= REFIT * self.learned_on)
        planned = SelectionSizes((n, n), (remaining, remaining), self.alpha * SLOT_WEIGHTS[0] / 2, claim.delta)
        skip = (tuple(f.name for f in FAMILIES if f.name not in SURE_FAMILIES) if early
                else () if refit else ("classifier",))
        events = candidate_events(features[0], features[1], encoding.layout, planned, seed=self.seed,
                                  most=CANDIDATES, kinds=kinds, skip=skip)
        if refit:
            self.learned = [event for event in events if event.family == "classifier"]
            self.learned_on, self.learned_for = n, (encoding.layout, kinds)
        elif not early:
            events += self.learned
        cap = CAUTION / (math.exp(claim.epsilon) + claim.delta)
        bets = [(tuned_bet if early else paired_bet)(event, (features[0][event.learned:], features[1][event.learned:]),
                                                     claim, cap) for event in events]
        bets = sorted((b for b in bets if b.sure or not early), key=lambda b: -b.growth)  # early: sure wins only
        self.choice, self.chosen_on = (encoding, bets[:len(SLOT_WEIGHTS)]), n
        return self.choice


@dataclass
class Wealth:
    """The log-wealth of every bettor (neighbour pair, slot) at every ε of ``grid`` (the claim last),
    and the running maximum of the log of their average with fixed weights (Ville's sup over time)."""

    grid: np.ndarray
    delta: float
    pairs: int
    log_wealth: np.ndarray = field(init=False)
    best: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.log_wealth = np.zeros((self.pairs, len(SLOT_WEIGHTS), len(self.grid)))
        self.best = np.full(len(self.grid), -np.inf)
        self.log_weights = np.log(np.array(SLOT_WEIGHTS) / self.pairs)

    def add(self, pair: int, slot: int, stakes: float | tuple[float, ...], counts: np.ndarray) -> None:
        """Settle one slot's stakes (one per leg) on samples with these outcome counts (:func:`outcomes`)."""
        self.log_wealth[pair, slot] += settle(stakes, counts, self.grid, self.delta)

    def total(self) -> np.ndarray:
        """log W(ε) of the weighted average, per grid ε."""
        terms = self.log_weights[None, :, None] + self.log_wealth
        top = terms.max(axis=(0, 1))
        return top + np.log(np.exp(terms - top).sum(axis=(0, 1)))

    def check(self) -> np.ndarray:
        """log W(ε) now, kept in the running maximum."""
        now = self.total()
        self.best = np.maximum(self.best, now)
        return now


def run_sequential(sampler: Sampler, claim: PrivacyClaim, samples: int, confidence: float, seed: int, width: int,
                   block_size: int, budget: Budget) -> dict[str, Any]:
    """The sequential audit on a probed ``sampler`` (see the module docstring): at most ``samples`` per
    side of each neighbour pair, blocks of at most ``block_size``, outputs of ``width`` numbers. Returns
    the fields of :class:`~admmcheck.audit.auditor.AuditResult` that the audit itself decides."""
    alpha = 1 - confidence
    pairs = sampler.pairs
    sizes = look_sizes(samples)
    grid = claim.epsilon * np.arange(GRID + 1) / GRID
    wealth = Wealth(grid, claim.delta, pairs)
    threshold = math.log(1 / alpha)
    pool_rows = max(FIRST_LOOK, POOL_NUMBERS // max(1, width))
    pools: list[tuple[list[Block], list[Block]]] = [([], []) for _ in range(pairs)]
    chosen: dict[int, tuple[Encoding, list[Bet]]] = {}
    choosers = [Chooser(claim, alpha, seed) for _ in range(pairs)]
    looks: list[dict[str, object]] = []
    drawn, next_block, unseen, complete, refuted = 0, 0, 0, True, False
    for look, size in enumerate(sizes):
        for pair in range(pairs) if look else ():
            pool = tuple(Block.concatenate(side) for side in pools[pair])
            chosen[pair] = choosers[pair].choose(pool, samples - drawn)
        settled = np.zeros((pairs, len(SLOT_WEIGHTS), 4 ** LEGS), dtype=np.int64)
        block = min(block_size, max(MIN_BLOCK, math.ceil(size / LOOK_BLOCKS)))
        blocks = math.ceil(size / block)
        tasks = [Task(pair, side, next_block + b, min(block, size - b * block))
                 for b in range(blocks) for pair in range(pairs) for side in (0, 1)]
        next_block += blocks
        row: dict[tuple[int, int], Block] = {}
        for task, drawn_block in budget.steps(sampler.draw(tasks), f"audit: look {look + 1} of at most {len(sizes)}",
                                              total=len(tasks)):
            row[(task.pair, task.side)] = drawn_block
            if len(row) < 2 * pairs:
                continue
            for pair in range(pairs):
                sides = (row[(pair, 0)], row[(pair, 1)])
                if sum(len(b) for b in pools[pair][0]) < pool_rows:
                    for side in (0, 1):
                        pools[pair][side].append(sides[side])
                if look:
                    encoding, bets = chosen[pair]
                    features = (encoding.features(sides[0]), encoding.features(sides[1]))
                    unseen += encoding.unseen(sides[0]) + encoding.unseen(sides[1])
                    for slot, placed in enumerate(bets):
                        counts = outcomes(placed.legs, features)
                        settled[pair, slot, :len(counts)] += counts
                        wealth.add(pair, slot, placed.stakes, counts)
            drawn += len(row[(0, 0)])
            row = {}
            if look and wealth.check()[-1] >= threshold:
                refuted = True
                break
            if budget.expired():
                complete = False
                break
        looks.append(_look_record(look, drawn, wealth, chosen if look else {}))
        if refuted or not complete:
            break
    kept = [tuple(Block.concatenate(side) for side in pools[pair]) for pair in range(pairs)]
    for pair in range(pairs):  # dependent samples void the e-value as they void any bound: no verdict is given
        repeating = calls_repeat(kept[pair], sampler.mechanism.describe(), f" of pair {pair}" if pairs > 1 else "")
        if repeating is not None:
            raise MechanismError(repeating)
    findings = [finding for pair in range(pairs)  # on every sample kept for choosing, not only the first look's
                for finding in seed_insensitive(kept[pair], pair, pairs)]
    return _outcome(claim, alpha, wealth, chosen, settled, looks, drawn, sizes[0], pools, complete, unseen, findings)


def _look_record(look: int, drawn: int, wealth: Wealth, chosen: dict[int, tuple[Encoding, list[Bet]]]) -> dict:
    """One look for the JSON: samples per side drawn by its end, the e-value at the claim, its bets."""
    return {"look": look + 1, "samples": drawn, "e_value": float(np.exp(wealth.total()[-1])) if chosen else None,
            "bets": [{"pair": pair, "slot": slot, "leg": leg, "event": event.description, "stake": stake,
                      "predicted_growth": b.growth} for pair, (_, bets) in chosen.items() for slot, b in enumerate(bets)
                     for leg, (event, stake) in enumerate(zip(b.legs, b.stakes))]}


def _outcome(claim: PrivacyClaim, alpha: float, wealth: Wealth, chosen: dict[int, tuple[Encoding, list[Bet]]],
             settled: np.ndarray, looks: list[dict], drawn: int, first: int,
             pools: list[tuple[list[Block], list[Block]]], complete: bool, unseen: int,
             findings: list[str]) -> dict[str, Any]:
    """The AuditResult fields of a finished sequential audit. The deciding bet is the bettor holding
    the largest share of the wealth at the claim; its counts are those of the last look it bet in."""
    threshold = math.log(1 / alpha)
    refuted = bool(wealth.best[-1] >= threshold)
    rejected = wealth.grid[wealth.best >= threshold]
    if not chosen:  # cut short before any bet: describe the first look's samples
        chosen = {0: (Encoding.fit(tuple(Block.concatenate(side) for side in pools[0])), [])}
    shares = wealth.log_weights[None, :, None] + wealth.log_wealth
    held = sorted(((float(shares[pair, slot, -1]), pair, slot) for pair, (_, bets) in chosen.items()
                   for slot in range(len(bets))), key=lambda h: (-h[0], h[1], h[2]))
    candidates = []
    for _, pair, slot in held:
        placed = chosen[pair][1][slot]
        n = int(settled[pair, slot].sum())
        for leg, (event, stake) in enumerate(zip(placed.legs, placed.stakes)):  # a slot's legs share its wealth
            candidates.append({"event": event.description, "family": event.family, "pair": pair, "slot": slot,
                               "leg": leg, "counts": list(_side_counts(event, leg_outcomes(settled[pair, slot], leg))),
                               "n": [n, n], "epsilon_lower_bound": None, "level": None,
                               "weight": float(np.exp(wealth.log_weights[slot])), "stake": stake,
                               "predicted_growth": placed.growth,
                               "e_value_at_claim": float(np.exp(wealth.log_wealth[pair, slot, -1]))})
    pair = held[0][1] if held else next(iter(chosen))
    event = chosen[pair][1][held[0][2]].event if held else None
    encoding = chosen[pair][0]
    counts = tuple(candidates[0]["counts"]) if held else (0, 0)
    n = candidates[0]["n"][0] if held else 0
    a = event.numerator if event else 0
    nan = float("nan")
    notes = [] if complete else ["the time budget ran out before the sample budget was spent; the verdict is valid "
                                 "at the samples drawn (the test is valid at any stopping time)"]
    if unseen:
        notes.append(f"{unseen} samples bet on were of a kind no earlier look showed; no chosen event contains them")
    return {
        "verdict": "violation" if refuted else "no-violation-found",
        "epsilon_lower_bound": float(rejected.max()) if len(rejected) else 0.0,
        "epsilon_estimate": point_estimate(counts[a] / n, counts[1 - a] / n, claim.delta) if n else nan,
        "selection_samples": (first, first) if drawn >= first else (drawn, drawn),
        "bounding_samples": (max(drawn - first, 0),) * 2,
        "event": event.description if event else "none (no look was bet on)",
        "family": event.family if event else "",
        "numerator": a, "pair": pair, "counts": counts, "counted": (n, n), "intervals": ((nan, nan), (nan, nan)),
        "delta_lower_bound": nan, "candidates": tuple(candidates), "intervals_bounded": 0,
        "complete": complete, "notes": tuple(notes), "findings": tuple(findings),
        "layout": encoding.layout, "kinds": () if encoding.single else tuple(encoding.as_dict()),
        "histogram": None, "mode": "sequential",
        "sequential": {"e_value": float(np.exp(wealth.total()[-1])), "threshold": 1 / alpha,
                       "refuted_epsilon": float(rejected.max()) if len(rejected) else None,
                       "samples_used": [drawn, drawn], "looks": looks,
                       "epsilon_grid": wealth.grid.tolist(), "method": METHOD},
    }


def strict_bound(summary: dict) -> bool:
    """Whether an audit summary's ``epsilon_lower_bound`` is strict: a sequential audit that refuted the
    claim read it off its grid of refuted ε, each of which the true ε exceeds (shown ">" rather than "≥")."""
    return (summary.get("sequential") or {}).get("refuted_epsilon") is not None


def _side_counts(event: Event, outcomes_: np.ndarray) -> tuple[int, int]:
    """(count on d0, count on d1) of the event from (A, B) outcome counts (A on the numerator side)."""
    inside_a, inside_b = int(outcomes_[2] + outcomes_[3]), int(outcomes_[1] + outcomes_[3])
    return (inside_a, inside_b) if event.numerator == 0 else (inside_b, inside_a)
