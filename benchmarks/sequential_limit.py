"""Benchmark: the fewest samples per side with which ANY valid sequential test that watches one event
can flag each broken mechanism, against 1/10 of what the fixed-n audit needs (issue 30, part 3).

``sequential_power.py`` measures our sequential audit against the fixed-n one. This benchmark asks
whether the issue's target (at most 1/10 of the fixed-n samples) is within reach of any sequential
test, with an information bound that holds for every test, however it bets or stops.

**The event.** For each broken mechanism of the power test (``BROKEN`` in ``tests/test_audit.py``)
one fixed-n audit at SAMPLES per side (seed SEED, none of ``sequential_power.py``'s seeds) chooses
its candidate events; each candidate's counts on the bounding split (samples drawn after the event
was fixed) estimate its probabilities p_0, p_1 under the two datasets without selection bias. Of
the candidates, the one with the largest KL* below (the most informative for a test) is kept.

**The bound.** A test that watches the event sees, for each sample pair i, A_i = 1[X_i in E] and
B_i = 1[Y_i in E]. Every law (q_0, q_1) of these indicators with

    q_a <= e^ε q_b + δ and 1 - q_a <= e^ε (1 - q_b) + δ, for (a, b) = (0, 1) and (1, 0),

is that of an (ε, δ)-DP mechanism (the one that releases only 1[output in E]), so a valid test
rejects with probability at most α = 1 - confidence under it. Suppose a test rejects by time m
with probability at least 1/2 under the true law P. Stopped at τ ∧ m, the laws of what it has seen
differ in Kullback-Leibler divergence by E_P[τ ∧ m] KL(P || Q) <= m KL(P || Q) (Wald's identity; KL
per sample pair: kl(p_0 || q_0) + kl(p_1 || q_1)), and by data processing this is at least
kl(1/2 || α), the divergence of the two decisions. So for every null law Q

    m >= kl(1/2 || α) / KL(P || Q),    and best:    m >= kl(1/2 || α) / KL*,   KL* = min over Q.

That is the fewest samples per side by which a level-α sequential test on this event flags with
probability 1/2 (the median of its stopping time, as the benchmark takes medians over seeds).
KL* is found with SLSQP over the four linear constraints and checked on a 2001 x 2001 grid.

**The betting floor.** A narrower class, but a bound on the mean where the one above bounds the median:
a bettor on this event (any e-process of the audit's kind, ``admmcheck.audit.sequential``: wealth
∏ (1 + λ_t Z_t), Z_t = A_t − e^ε B_t − δ, stakes λ_t predictable in [0, c/(e^ε + δ)] for some c < 1, and
any fixed-weight average of such bettors, which is one bettor with a wealth-weighted stake) gains
E[log(1 + λ_t Z_t) | past] <= g per pair, g = max over λ of E_P log(1 + λZ) (:func:`sequential.bet` at
the supremum of the stakes). It stops only when log W >= ln(1/α), so by Wald's identity
g E[τ] >= E[log W_τ] >= ln(1/α): **E[τ] >= ln(1/α)/g** samples per side, however the stakes are learnt.

**Two legs.** The audit's bets hold both directions of a score in one factor (``sequential.paired_bet``:
1 + λ_0 Z_0 + λ_1 Z_1), a wider class than one event, whose growth the column above does not bound. Its
floor needs the joint law of the two legs, known here in closed form for laplace_half_scale only
(:func:`laplace_two_legs`, exact Laplace laws, both thresholds searched): reported below the table.

**The whole output, any test.** Where the output laws are known, the argument of the first floor
applies to every level-α sequential test, whatever it watches, betting or not: E_P[τ] KL(P || Q) >=
kl(P(flag) || α) for every DP law Q, so with KL*_out the smallest KL per pair from the true output laws
to the laws of an ε-DP pair, a test that flags with probability 1 needs E[τ] >= ln(1/α)/KL*_out and one
that flags by m with probability 1/2 needs m >= kl(1/2 || α)/KL*_out. Three broken mechanisms add
Laplace noise of scale b to k coordinates that differ by 1 between the datasets (LAPLACE_COORDINATES:
laplace_half_scale, histogram_wrong_scale, vector_l2_sensitivity; the other coordinates are equal and
carry nothing). Their privacy loss L = log(dP/dQ)(output) is a sum of k independent per-coordinate
losses, each 1/b or −1/b (atoms) or (1 − 2x)/b in between, and KL*_out is bracketed by the convex
program on cells of L (:func:`laplace_whole_output`): below, its value on the cells' masses at ε (merging
outputs is data processing; a dual bound, :func:`nearest_dp_law`); above, the KL of a feasible law of the
cells at ε − Δ, Δ the spread of L within a cell (an (ε − Δ)-DP law of the cells, spread inside each cell
as the true law is, is an ε-DP pair with the same KL). The cells: BINS bins of each coordinate's loss,
convolved k times with the sums grouped on a grid of STEP (Δ = k·(bin + STEP)). The solver is checked
against CVXPY and against the event solver on a two-cell output (:func:`checked_dual`). A fourth,
gaussian_wrong_sigma, adds Gaussian noise (σ = 4) to 4 such coordinates: its loss is N(±μ, 2μ), μ = 4/(2σ²),
and the claim has δ > 0, so the cells' law must keep the hockey-stick divergence at most δ; the tail cells,
where the loss is unbounded, spend their whole mass from δ (:func:`gaussian_whole_output`). A fifth,
svt_no_threshold_noise, releases which of 5 queries first crosses a fixed threshold: 6 outputs whose
probabilities are products of Laplace tails, so KL*_out is the program on them, no cells needed
(:func:`svt_whole_output`). A sixth, noisy_max_too_little_noise, releases the index of the largest of 4
noisy scores: 4 outputs whose probabilities are one-dimensional integrals (quadrature;
:func:`noisy_max_whole_output`).

**The most powerful test, any test.** Sharper on the same six, and for every stopping rule: a level-α
sequential test that flags by n with probability p gives the fixed-n test "flag iff it has stopped by n",
of level α under every (ε, δ)-DP pair, so p is at most the Neyman-Pearson power of n pairs against the law
of the bracket's upper end (:func:`most_powerful`, Monte Carlo with its standard error, checked against the
randomised test itself). The median stopping time of any valid sequential test is at least the first n at
which that power reaches 1/2; and a sequential test can need 1/10 of a fixed-n test's samples only where
that fixed-n test is at least 10 times slower than the most powerful one.

Beside them: the **handed fixed-n** size, the smallest n per side at which one Clopper-Pearson bound
on this event (alpha/2 a side, its expected counts n p, the ceiling's convention) or, for δ = 0, the
conditional ratio test (the audit's other estimator) refutes the claim:
what a fixed-n test handed the event needs. And the fixed-n audit's recorded need (median over the
seeds of ``sequential_power.json``, selection and multiplicity included) and 1/10 of it.

**What it covers.** The event floors: tests that watch this one event, handed to them with its
probabilities known. A test that watches the whole output, or several events, can see more (KL of the
whole output law is at least the event's), so they say how far from 1/10 a test on the audit's own best
event must be, even before any of it is learnt. The whole-output floors bound every test, on the six
mechanisms whose output laws are known in closed form.

    python benchmarks/sequential_limit.py [--samples 100000] [--out DIR]

writes DIR/sequential_limit.json and .md (default DIR benchmarks/out).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import cvxpy as cp
import numpy as np
from scipy import integrate, optimize, special, stats

from admmcheck.audit.statistics.estimators import cp_lower, cp_upper, epsilon_bound, ratio_epsilon_bound
from admmcheck.audit.sequential import bet, independent_law, joint_bet
from admmcheck.foundations.output import output_folder, to_json, write_text_atomic

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from sequential_power import CONFIDENCE, SIZES, TARGET, _audit  # noqa: E402  (one definition of the audits)

SAMPLES = 100_000
SEED = 0
BINS = 2000  # bins of each coordinate's privacy loss in laplace_whole_output
STEP = 0.0005  # the grid the sums of the coordinates' losses are grouped on
LAPLACE_COORDINATES = {"laplace_half_scale": (1, 0.5), "histogram_wrong_scale": (2, 1.0),
                       "vector_l2_sensitivity": (4, 2.0)}  # (coordinates that differ by 1, Laplace scale), claim ε = 1
GAUSSIAN = ("gaussian_wrong_sigma", 4, 4.0)  # Gaussian noise of this sigma on 4 coordinates that differ by 1
SVT = ("svt_no_threshold_noise", (0.0, 0.0, 0.0, 0.0, 1.0), (1.0, 1.0, 1.0, 1.0, 0.0), 2.0, 0.5)  # queries, noise, threshold
NOISY_MAX = ("noisy_max_too_little_noise", (1.0, 0.0, 0.0, 0.0), (0.0, 1.0, 1.0, 1.0), 0.5)  # scores, Laplace scale
GAUSSIAN_CELLS = 4000  # cells of its privacy loss within TAIL standard deviations, and two tail cells
TAIL = 12
POWER_REPS = 20_000  # Monte Carlo paths per set in most_powerful (three sets: choose, judge, under the null)


def kl(p: float | np.ndarray, q: float | np.ndarray) -> np.ndarray:
    """kl(Bernoulli(p) || Bernoulli(q)), elementwise (scipy's relative entropy of both outcomes)."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    return special.rel_entr(p, q) + special.rel_entr(1 - p, 1 - q)


def null_constraints(epsilon: float, delta: float) -> list[tuple[np.ndarray, float]]:
    """(w, c) with w·q <= c for every constraint of an (ε, δ)-DP law of one event's indicators (module docstring)."""
    e = math.exp(epsilon)
    return [(np.array([1.0, -e]), delta), (np.array([-e, 1.0]), delta),  # q_0 <= e q_1 + δ, q_1 <= e q_0 + δ
            (np.array([-1.0, e]), e - 1 + delta), (np.array([e, -1.0]), e - 1 + delta)]  # the complements


def nearest_null(p: tuple[float, float], epsilon: float, delta: float) -> tuple[float, tuple[float, float]]:
    """(KL*, Q): the smallest kl(p_0 || q_0) + kl(p_1 || q_1) over the DP laws Q of the event, and where.
    SLSQP from the pooled point (always a DP law), checked against a 2001 x 2001 grid."""
    constraints = null_constraints(epsilon, delta)
    inside = [{"type": "ineq", "fun": lambda q, w=w, c=c: c - w @ q} for w, c in constraints]
    edge = 1e-12

    def divergence(q):
        return float(kl(p[0], q[0]) + kl(p[1], q[1]))

    start = np.full(2, min(max((p[0] + p[1]) / 2, edge), 1 - edge))
    found = optimize.minimize(divergence, start, method="SLSQP", bounds=[(edge, 1 - edge)] * 2, constraints=inside,
                              options={"ftol": 1e-15, "maxiter": 500})
    q = np.clip(found.x, edge, 1 - edge)
    if any(w @ q > c + 1e-9 for w, c in constraints):
        raise RuntimeError(f"SLSQP left the null set for p = {p}: {q}")
    grid = np.linspace(edge, 1 - edge, 2001)
    g0, g1 = np.meshgrid(grid, grid, indexing="ij")
    feasible = np.ones(g0.shape, bool)
    for w, c in constraints:
        feasible &= w[0] * g0 + w[1] * g1 <= c
    coarse = float(np.min(np.where(feasible, kl(p[0], g0) + kl(p[1], g1), np.inf)))
    value = divergence(q)
    if coarse < value * (1 - 1e-6) - 1e-12:  # the grid found a nearer DP law: SLSQP stopped short
        raise RuntimeError(f"KL* for p = {p}: SLSQP {value}, grid {coarse}")
    return value, (float(q[0]), float(q[1]))


def betting_growth(p_a: float, p_b: float, epsilon: float, delta: float) -> float:
    """g = sup over stakes λ in [0, 1/(e^ε + δ)) of E log(1 + λZ), Z = A − e^ε B − δ, A ~ Bernoulli(p_a) and
    B ~ Bernoulli(p_b) independent: the most log-wealth per sample pair a bettor on the event can expect."""
    return float(bet(p_a, p_b, epsilon, delta, (1 - 1e-12) / (math.exp(epsilon) + delta))[1])


def laplace_two_legs(epsilon: float = 1.0, scale: float = 0.5, step: float = 0.05) -> dict[str, float]:
    """Exact laws of laplace_half_scale (Laplace(0, ``scale``) against Laplace(1, ``scale``), claim
    (``epsilon``, 0)): the growth g of the best bettor on one event {x < t} (or, by symmetry, {x > t}) and of
    the best two-leg bettor (``sequential.paired_bet``'s kind: {x < t_0} more likely under d0 and {x > t_1}
    under d1 in one factor, overlapping or not, stakes summing to at most 1/e^ε), thresholds on a grid of ``step`` over [-1, 2]
    and refined to step/10 around the best; each with its floor ln(1/α)/g on the mean samples per side."""
    d0, d1 = stats.laplace(0.0, scale), stats.laplace(1.0, scale)
    cap = (1 - 1e-12) / math.exp(epsilon)
    cuts = np.arange(-1.0, 2.0 + step / 2, step)
    single = float(np.max(bet(d0.cdf(cuts), d1.cdf(cuts), epsilon, 0.0, cap)[1]))

    def two(t0: float, t1: float) -> float:  # patterns: index 2^0 [x < t0] + 2^1 [x > t1]; the legs overlap if t1 < t0
        laws = [np.array([max(d.cdf(t1) - d.cdf(t0), 0.0), d.cdf(min(t0, t1)), d.sf(max(t0, t1)),
                          max(d.cdf(t0) - d.cdf(t1), 0.0)]) for d in (d0, d1)]
        return joint_bet(independent_law(*laws, (0, 1)), epsilon, 0.0, cap)[1]

    best = max((two(a, b), a, b) for a in cuts for b in cuts)
    fine = np.arange(-5, 6) * step / 10
    best = max((two(best[1] + u, best[2] + v), best[1] + u, best[2] + v) for u in fine for v in fine)
    alpha_log = math.log(1 / (1 - CONFIDENCE))
    return {"one_event_growth": single, "one_event_floor": alpha_log / single, "two_legs_growth": best[0],
            "two_legs_floor": alpha_log / best[0], "two_legs_thresholds": [best[1], best[2]]}


def nearest_dp_law(m0: np.ndarray, m1: np.ndarray, epsilon: float) -> dict[str, float]:
    """The smallest KL(m0 || q0) + KL(m1 || q1) over laws (q0, q1) of one discrete output with
    e^-ε <= q0/q1 <= e^ε in every cell (pure ε-DP), bracketed with certificates. Its Lagrangian splits by
    cell: for multipliers (a, b) of Σ q0 = 1 and Σ q1 = 1, a cell's minimiser is (m0/a, m1/b) where that
    ratio is allowed, else on the edge q0 = ρ q1 (ρ = e^±ε) at q1 = (m0 + m1)/(aρ + b). The dual value
    g(a, b) (those minimisers' Lagrangian) is a lower bound for any (a, b) (weak duality): ``low``. The
    minimisers at the best (a, b) (BFGS on log a, log b: the slopes are a(Σ q0 − 1), b(Σ q1 − 1)), rescaled to sum to 1,
    are a law (``law``: q0, q1) whose KL is an upper bound: ``high``, with the largest |log q0/q1| it reaches
    (``reached``, at most ε up to rounding). No cell is dropped."""
    m0, m1 = np.asarray(m0, float), np.asarray(m1, float)
    ratio = math.exp(epsilon)

    def minimisers(log_ab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a, b = np.exp(log_ab)
        with np.errstate(divide="ignore", invalid="ignore"):
            q0, q1 = m0 / a, m1 / b
            above, below = q0 > ratio * q1, q0 * ratio < q1
        for edge, rho in ((above, ratio), (below, 1 / ratio)):
            q1 = np.where(edge, (m0 + m1) / (a * rho + b), q1)
            q0 = np.where(edge, rho * q1, q0)
        return q0, q1

    def negative_dual(log_ab: np.ndarray) -> tuple[float, np.ndarray]:
        q0, q1 = minimisers(log_ab)
        a, b = np.exp(log_ab)
        value = special.rel_entr(m0, q0).sum() + special.rel_entr(m1, q1).sum() + a * (q0.sum() - 1) + b * (q1.sum() - 1)
        return -float(value), -np.array([a * (q0.sum() - 1), b * (q1.sum() - 1)])

    found = optimize.minimize(negative_dual, np.zeros(2), jac=True, method="BFGS", options={"gtol": 1e-14})
    q0, q1 = minimisers(found.x)
    q0, q1 = q0 / q0.sum(), q1 / q1.sum()
    high = float(special.rel_entr(m0, q0).sum() + special.rel_entr(m1, q1).sum())
    held = (q0 > 0) | (q1 > 0)  # cells of mass 0 under both laws (underflow) are no output at all
    with np.errstate(divide="ignore"):
        reached = float(np.max(np.abs(np.log(q0[held]) - np.log(q1[held]))))  # inf where one law is 0 alone
    return {"low": -float(found.fun), "high": high, "reached": reached, "law": (q0, q1)}


def loss_cells(coordinates: int, scale: float, bins: int = BINS, step: float = STEP) -> tuple[np.ndarray, np.ndarray, float]:
    """(masses under d0, masses under d1, Δ): exact masses of cells of the privacy loss L = Σ_i ℓ(x_i) of
    Laplace(0, ``scale``) against Laplace(1, ``scale``) on ``coordinates`` coordinates, and the most L varies
    within a cell. ℓ(x) = (|x − 1| − |x|)/scale: 1/scale for x <= 0, −1/scale for x >= 1, (1 − 2x)/scale
    between, cut in ``bins`` bins (the atoms are bins of width 0). Cells of the sum: each coordinate's bin
    added to the cell's lower end and grouped down to the grid of ``step``, so L lies within
    [cell, cell + coordinates·(bin + step)) in every cell."""
    d0, d1 = stats.laplace(0.0, scale), stats.laplace(1.0, scale)
    low = np.linspace(-1 / scale, 1 / scale, bins + 1)  # the bins' loss ends; x = (1 − scale·ℓ)/2 falls with ℓ
    x = (1 - scale * low) / 2
    masses = [np.r_[d.sf(1.0), d.cdf(x[:-1]) - d.cdf(x[1:]), d.cdf(0.0)] for d in (d0, d1)]
    ends = np.r_[-1 / scale, low[:-1], 1 / scale]
    cells, m0, m1 = np.zeros(1), np.ones(1), np.ones(1)
    for _ in range(coordinates):
        keys = np.floor((cells[:, None] + ends[None, :]).ravel() / step + 1e-9).astype(np.int64)
        unique, where = np.unique(keys, return_inverse=True)
        m0 = np.bincount(where, (m0[:, None] * masses[0][None, :]).ravel())
        m1 = np.bincount(where, (m1[:, None] * masses[1][None, :]).ravel())
        cells = unique * step
    return m0, m1, coordinates * (2 / scale / bins + step)


def floors(low: float, high: float, masses: tuple[np.ndarray, np.ndarray], nearest: tuple[np.ndarray, np.ndarray],
           **described: object) -> dict[str, object]:
    """The bracket [``low``, ``high``] of KL*_out and the floors of any level-α sequential test that follow
    from its upper end: ln(1/α)/KL (a test that always flags, mean) and kl(1/2 || α)/KL (median); and, under
    ``laws`` (taken out before the JSON is written), the cells' ``masses`` and the (ε, δ)-DP law ``nearest`` of
    the upper end, for :func:`most_powerful`."""
    alpha = 1 - CONFIDENCE
    return {**described, "kl_star_low": low, "kl_star_high": high, "mean_floor": math.log(1 / alpha) / high,
            "median_floor": float(kl(0.5, alpha)) / high, "laws": (masses, nearest)}


def pure_dp_bracket(m0: np.ndarray, m1: np.ndarray, epsilon: float,
                    spread: float) -> tuple[float, float, tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """(low, high, the cells' masses, the law of the upper end) of KL*_out on cells of masses ``m0``, ``m1`` within
    which the privacy loss varies by at most ``spread``, against pure ε-DP: the dual bound of :func:`nearest_dp_law`
    at ε, and the KL of its law at ε − spread − 1e-9 (room for the rescaling's rounding), checked to reach at most
    ε − spread, so that it lifts to an ε-DP pair of outputs (the module docstring)."""
    low, high = nearest_dp_law(m0, m1, epsilon)["low"], nearest_dp_law(m0, m1, epsilon - spread - 1e-9)
    if high["reached"] + spread > epsilon or high["high"] < low:
        raise RuntimeError(f"the bracket of KL*_out failed: {low}, {high['high']}, spread {spread}")
    return low, high["high"], (m0, m1), high["law"]


def laplace_whole_output(coordinates: int, scale: float, epsilon: float = 1.0) -> dict[str, object]:
    """KL*_out of Laplace(``scale``) noise on ``coordinates`` coordinates that differ by 1, against a claim
    (``epsilon``, 0), bracketed on the cells of :func:`loss_cells` (:func:`pure_dp_bracket`), and its floors."""
    m0, m1, spread = loss_cells(coordinates, scale)
    return floors(*pure_dp_bracket(m0, m1, epsilon, spread), coordinates=coordinates, scale=scale, cells=len(m0),
                  spread=spread)


def gaussian_whole_output(epsilon: float, delta: float, coordinates: int = GAUSSIAN[1], sigma: float = GAUSSIAN[2],
                          cells: int = GAUSSIAN_CELLS) -> dict[str, object]:
    """KL*_out of Gaussian noise of ``sigma`` on ``coordinates`` coordinates that differ by 1, against an
    (``epsilon``, ``delta``) claim, bracketed on cells of its privacy loss L ~ N(±μ, 2μ), μ = k/(2σ²): ``cells``
    cells of width w within TAIL standard deviations and one cell for each tail. Below: CVXPY's value on the
    cells at (ε, δ) (the hockey-stick divergence obeys data processing; to the solver's tolerance). Above: the
    KL of CVXPY's law at ε − w with each tail cell's whole mass counted in δ (spread inside each cell as the
    true law is, an inner cell's excess over e^ε times the other side is at most its excess at e^(ε − w), a
    tail cell's at most its mass), checked to satisfy those constraints exactly and then scored exactly."""
    mu = coordinates / (2 * sigma ** 2)
    deviation = math.sqrt(2 * mu)
    edges = np.linspace(-mu - TAIL * deviation, mu + TAIL * deviation, cells + 1)
    laws = [stats.norm(sign * mu, deviation) for sign in (1, -1)]
    m0, m1 = ([law.cdf(edges[0]), *np.diff(law.cdf(edges)), law.sf(edges[-1])] for law in laws)
    m0, m1 = np.array(m0), np.array(m1)
    width = float(edges[1] - edges[0])

    def solve(eps: float, slack: float, tails: bool) -> tuple[float, np.ndarray, np.ndarray]:
        q0, q1 = cp.Variable(len(m0), nonneg=True), cp.Variable(len(m1), nonneg=True)
        ratio = math.exp(eps)
        lost = [q0[0] + q0[-1], q1[0] + q1[-1]] if tails else [0, 0]
        where = slice(1, len(m0) - 1) if tails else slice(None)
        problem = cp.Problem(cp.Minimize(cp.sum(cp.rel_entr(m0, q0)) + cp.sum(cp.rel_entr(m1, q1))),
                             [cp.sum(q0) == 1, cp.sum(q1) == 1,
                              cp.sum(cp.pos(q0[where] - ratio * q1[where])) + lost[0] <= delta - slack,
                              cp.sum(cp.pos(q1[where] - ratio * q0[where])) + lost[1] <= delta - slack])
        problem.solve()
        if problem.status != cp.OPTIMAL:
            raise RuntimeError(f"the nearest (ε, δ)-DP law was not found: {problem.status}")
        return float(problem.value), np.maximum(q0.value, 0), np.maximum(q1.value, 0)

    low = solve(epsilon, 0.0, False)[0]
    _, q0, q1 = solve(epsilon - width, 1e-3 * delta, True)
    q0, q1 = q0 / q0.sum(), q1 / q1.sum()
    ratio = math.exp(epsilon - width)
    excess = [np.maximum(a[1:-1] - ratio * b[1:-1], 0).sum() + a[0] + a[-1] for a, b in ((q0, q1), (q1, q0))]
    if max(excess) > delta:
        raise RuntimeError(f"the law found for the upper end is not (ε − w, δ)-DP with its tails: {excess}")
    high = float(special.rel_entr(m0, q0).sum() + special.rel_entr(m1, q1).sum())
    return floors(low, high, (m0, m1), (q0, q1), coordinates=coordinates, scale=sigma, cells=len(m0), spread=width)


def log_ratio_sums(rng: np.random.Generator, draw: tuple[np.ndarray, np.ndarray], logs: tuple[np.ndarray, np.ndarray],
                   reps: int, most: int) -> np.ndarray:
    """``reps`` paths of S_n = Σ_{i<=n} (logs[0][c0_i] + logs[1][c1_i]), n = 1..``most``, with the cells c0_i, c1_i
    drawn independently from the laws ``draw`` of the two sides: shape (reps, most)."""
    total = np.zeros((reps, most))
    for law, log in zip(draw, logs):
        total += log[rng.choice(len(law), size=(reps, most), p=law / law.sum())]
    return np.cumsum(total, axis=1)


def most_powerful(masses: tuple[np.ndarray, np.ndarray], nearest: tuple[np.ndarray, np.ndarray], most: int,
                  reps: int = POWER_REPS, seed: int = SEED) -> dict[str, list[float]]:
    """The most any level-α test of the DP law ``nearest`` (Q: cells' masses q0, q1, spread inside each cell as the
    true law is) can flag by n sample pairs when the laws are ``masses`` (P: m0, m1), n = 1..``most``: the
    Neyman-Pearson power, by Monte Carlo.

    For any test φ of n pairs with E_Q φ <= α and any t > 0, with S_n = Σ log(dP/dQ) over the pairs (a function of
    the cells only), E_P φ = E_P[φ (1 − t e^(−S_n))] + t E_P[φ e^(−S_n)] <= E_P[(1 − t e^(−S_n))_+] + t α
    (E_P[φ e^(−S_n)] <= E_Q φ). Minimised over t it is the Neyman-Pearson power. A sequential level-α test that
    flags by n with probability p is such a φ (flag iff it has stopped by n: Q is an (ε, δ)-DP pair, under which
    it flags with probability <= α whenever it stops), so p is at most this power, and its median stopping time
    is at least the first n where the power reaches 1/2. t is chosen on one set of ``reps`` paths drawn from P (a
    grid of log t) and the bound evaluated on a second, independent set: an unbiased estimate of a valid bound,
    ``power``, with its standard error ``error``. Checked against a second construction, the test itself:
    ``direct`` is the power on the second set of the Neyman-Pearson test whose cut (randomised on the atoms of S_n)
    gives level α on a third set drawn from Q; the two must agree within 4 times their standard errors + 0.005 (the
    test's: its level's error on the null set times the likelihood ratio at its cut)."""
    alpha = 1 - CONFIDENCE
    rng = np.random.default_rng(seed)
    with np.errstate(divide="ignore"):
        logs = tuple(np.where(m > 0, np.log(m) - np.log(q), 0.0) for m, q in zip(masses, nearest))  # +inf: q = 0 < m
    choose, judge = (log_ratio_sums(rng, masses, logs, reps, most) for _ in range(2))
    under_null = log_ratio_sums(rng, nearest, logs, reps, most)
    log_t = np.linspace(-5.0, 15.0, 401)
    power, error, direct, spread = [], [], [], []
    for n in range(most):
        chosen = log_t[np.argmin(np.exp(log_t) * alpha
                                 + np.maximum(1 - np.exp(log_t[:, None] - choose[None, :, n]), 0).mean(axis=1))]
        slack = np.maximum(1 - np.exp(chosen - judge[:, n]), 0)
        power.append(float(math.exp(chosen) * alpha + slack.mean()))
        error.append(float(slack.std() / math.sqrt(reps)))
        null, alternative = np.round(under_null[:, n], 9), np.round(judge[:, n], 9)  # sums of equal terms: equal
        cut = np.quantile(null, 1 - alpha)
        tie = max(float(np.mean(null == cut)), 1e-300)  # randomised at the cut where S_n has atoms, to level α
        share = (alpha - float(np.mean(null > cut))) / tie
        direct.append(float(np.mean(alternative > cut) + share * np.mean(alternative == cut)))
        # the test's own error: its level, estimated on the null set, is off by about sqrt(α(1 − α)/reps), and at
        # the cut the power moves e^cut times as fast as the level
        spread.append(error[-1] + math.exp(min(cut, 50.0)) * math.sqrt(alpha * (1 - alpha) / reps))
    gap = np.abs(np.array(power) - np.array(direct)) - 4 * np.array(spread) - 0.005
    if gap.max() > 0:
        raise RuntimeError(f"the Neyman-Pearson bound and the test disagree at n = {int(np.argmax(gap)) + 1}")
    return {"power": power, "error": error, "direct": direct}


def discrete_whole_output(laws: list[np.ndarray], epsilon: float, **described: object) -> dict[str, object]:
    """KL*_out of an output with finitely many values of probabilities ``laws`` (one array per dataset), against
    pure ``epsilon``-DP: the values are the cells, with no spread (:func:`pure_dp_bracket`), and its floors."""
    return floors(*pure_dp_bracket(*laws, epsilon, 0.0), **described, cells=len(laws[0]), spread=0.0)


def svt_whole_output(epsilon: float, queries: tuple[tuple[float, ...], tuple[float, ...]] = SVT[1:3],
                     scale: float = SVT[3], threshold: float = SVT[4]) -> dict[str, object]:
    """KL*_out of svt_no_threshold_noise, whose output is discrete: the first query j with
    q_j + Laplace(``scale``) >= ``threshold`` (probability a_j ∏_{i<j} (1 − a_i)) or none (∏ (1 − a_i)),
    on each dataset's ``queries`` (:func:`discrete_whole_output`)."""
    laws = []
    for q in queries:
        above = stats.laplace(0.0, scale).sf(threshold - np.asarray(q))
        before = np.concatenate([[1.0], np.cumprod(1 - above)])
        laws.append(np.append(above * before[:-1], before[-1]))
    return discrete_whole_output(laws, epsilon, coordinates=len(queries[0]), scale=scale)


def noisy_max_whole_output(epsilon: float, scores: tuple[tuple[float, ...], tuple[float, ...]] = NOISY_MAX[1:3],
                           scale: float = NOISY_MAX[3]) -> dict[str, object]:
    """KL*_out of noisy_max_too_little_noise, whose output is discrete: the index k of the largest
    score + Laplace(``scale``), with probability ∫ f_k(x) ∏_{j≠k} F_j(x) dx on each dataset's ``scores``
    (numerical quadrature, split at the scores; the masses must sum to 1 within 1e-9;
    :func:`discrete_whole_output`)."""
    laws = []
    for q in scores:
        noise = [stats.laplace(value, scale) for value in q]
        breaks = [-math.inf, *sorted(set(q)), math.inf]

        def mass(k: int) -> float:
            def density(x: float) -> float:
                return noise[k].pdf(x) * math.prod(noise[j].cdf(x) for j in range(len(q)) if j != k)
            return sum(integrate.quad(density, low, high, epsabs=1e-13, epsrel=1e-12)[0]
                       for low, high in zip(breaks[:-1], breaks[1:]))

        law = np.array([mass(k) for k in range(len(q))])
        if abs(law.sum() - 1) > 1e-9:
            raise RuntimeError(f"the argmax law does not sum to 1: {law}")
        laws.append(law)
    return discrete_whole_output(laws, epsilon, coordinates=len(scores[0]), scale=scale)


def checked_dual(epsilon: float = 1.0) -> dict[str, float]:
    """nearest_dp_law against two independent solvers: nearest_null (SLSQP, checked on a grid) on a two-cell
    output, and CVXPY (Clarabel) on the cells of laplace_half_scale's loss. Their largest relative gaps."""
    coarse = (stats.laplace(0.0, 0.5).cdf(0.5), stats.laplace(1.0, 0.5).cdf(0.5))
    two = nearest_dp_law(np.array([coarse[0], 1 - coarse[0]]), np.array([coarse[1], 1 - coarse[1]]), epsilon)
    reference = nearest_null(coarse, epsilon, 0.0)[0]
    m0, m1, _ = loss_cells(1, 0.5)
    q0, q1 = cp.Variable(len(m0), nonneg=True), cp.Variable(len(m1), nonneg=True)
    problem = cp.Problem(cp.Minimize(cp.sum(cp.rel_entr(m0, q0)) + cp.sum(cp.rel_entr(m1, q1))),
                         [cp.sum(q0) == 1, cp.sum(q1) == 1, q0 <= math.exp(epsilon) * q1, q1 <= math.exp(epsilon) * q0])
    problem.solve()
    many = nearest_dp_law(m0, m1, epsilon)
    gaps = {"two_cells": max(abs(two["low"] - reference), abs(two["high"] - reference)) / reference,
            "cvxpy": max(abs(many["low"] - problem.value), abs(many["high"] - problem.value)) / problem.value}
    if max(gaps.values()) > 1e-6:
        raise RuntimeError(f"nearest_dp_law disagrees with an independent solver: {gaps}")
    return gaps


def handed_fixed_n(p_a: float, p_b: float, epsilon: float, delta: float, alpha: float, most: int = 10**9) -> int | None:
    """The smallest n per side at which the event's Clopper-Pearson bound at its expected counts
    (alpha/2 a side) or, for δ = 0, the conditional ratio test at the counts rounded (the audit's two
    estimators) exceeds ``epsilon`` (None: not below ``most``): bisection, the bounds rising with n."""
    def refutes(n: int) -> bool:
        if epsilon_bound(cp_lower(n * p_a, n, alpha / 2), cp_upper(n * p_b, n, alpha / 2), delta) > epsilon:
            return True
        return delta == 0 and ratio_epsilon_bound(round(n * p_a), n, round(n * p_b), n, alpha) > epsilon

    if not refutes(most):
        return None
    low, high = 1, most
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if refutes(middle) else (middle, high)
    return high


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=SAMPLES)
    parser.add_argument("--out", default=str(HERE / "out"))
    args = parser.parse_args()
    out = output_folder(args.out, "--out")
    sys.path.insert(0, str(HERE.parent / "tests"))
    from test_audit import BROKEN  # the power test's list: one source of truth

    recorded = HERE / "results" / "sequential_power.json"
    power = {row["mechanism"]: row for row in json.loads(recorded.read_text())["rows"]} if recorded.exists() else {}
    alpha = 1 - CONFIDENCE
    decisions = float(kl(0.5, alpha))  # kl(1/2 || alpha): what a test flagging half the time must see
    rows = []
    for mechanism, neighbours, epsilon, delta, _ in BROKEN:
        started = time.perf_counter()
        result = _audit(mechanism, neighbours, epsilon, delta, samples=args.samples, seed=SEED)
        best = None
        for candidate in result.candidates:
            p = tuple(count / n for count, n in zip(candidate["counts"], candidate["n"]))
            divergence, nearest = nearest_null(p, epsilon, delta)
            if best is None or divergence > best["kl_star"]:
                best = {"event": candidate["event"], "family": candidate["family"], "p": list(p),
                        "bounding_counts": candidate["counts"], "kl_star": divergence, "nearest_null": list(nearest)}
        a = int(best["p"][1] > best["p"][0])
        floor = decisions / best["kl_star"] if best["kl_star"] > 0 else math.inf
        growth = betting_growth(best["p"][a], best["p"][1 - a], epsilon, delta)
        betting = math.log(1 / alpha) / growth if growth > 0 else math.inf
        fixed = power.get(mechanism, {}).get("fixed_n_median")
        used = power.get(mechanism, {}).get("sequential_median")
        row = {"mechanism": mechanism, "claim": [epsilon, delta], **best,
               "sequential_floor": floor, "betting_growth": growth, "betting_floor": betting,
               "betting_excluded": None if fixed is None else bool(betting > TARGET * fixed),
               "handed_fixed_n": handed_fixed_n(best["p"][a], best["p"][1 - a], epsilon, delta, alpha),
               "fixed_n_median": fixed, "one_tenth": None if fixed is None else TARGET * fixed,
               "sequential_median": used,
               "one_tenth_excluded": None if fixed is None else bool(floor > TARGET * fixed),
               "seconds": time.perf_counter() - started}
        rows.append(row)
        print(_line(row), flush=True)
    exact = laplace_two_legs()
    by_name = {row["mechanism"]: row for row in rows}
    whole = []
    known = {**{name: lambda claim, shape=shape: laplace_whole_output(*shape, claim[0])
                for name, shape in LAPLACE_COORDINATES.items()},
             GAUSSIAN[0]: lambda claim: gaussian_whole_output(*claim),
             SVT[0]: lambda claim: svt_whole_output(claim[0]),
             NOISY_MAX[0]: lambda claim: noisy_max_whole_output(claim[0])}  # the laws known in closed form
    seeds = len(json.loads(recorded.read_text())["seeds"]) if recorded.exists() else 5
    for name, whole_output in known.items():
        row = by_name[name]
        bounds = whole_output(row["claim"])  # not named floors: that is the function
        masses, nearest = bounds.pop("laws")
        target = row["one_tenth"]
        most = max(math.ceil(target or 0), math.ceil(3 * bounds["median_floor"]))
        curve = most_powerful(masses, nearest, most)
        reach = [p + 2 * e for p, e in zip(curve["power"], curve["error"])]  # two standard errors up: generous to tests
        half = next((n + 1 for n, p in enumerate(reach) if p >= 0.5), None)
        at = reach[math.ceil(target) - 1] if target else None
        whole.append({"mechanism": name, **bounds, "one_tenth": target, "sequential_median": row["sequential_median"],
                      "mean_excluded": None if target is None else bool(bounds["mean_floor"] > target),
                      "median_excluded": None if target is None else bool(bounds["median_floor"] > target),
                      "most_powerful": curve, "most_powerful_half": half, "most_powerful_at_one_tenth": at,
                      "median_of_seeds_within_one_tenth": None if at is None else float(stats.binom(seeds, at).sf(seeds // 2)),
                      "seeds": seeds, "most_powerful_excluded": None if at is None else bool(at < 0.5)})
        print(name, "most powerful test: power 1/2 at", half, "pairs; at 1/10 of the need", at, flush=True)
    write_text_atomic(out / "sequential_limit.json", to_json({
        "samples_per_side": args.samples, "seed": SEED, "confidence": CONFIDENCE, "decisions_kl": decisions,
        "rows": rows, "laplace_half_scale_two_legs": exact, "whole_output": whole,
        "whole_output_solver_gaps": checked_dual()}, indent=2) + "\n")
    write_text_atomic(out / "sequential_limit.md", markdown(rows, args.samples, exact, whole))


def _line(row: dict) -> str:
    """The table row of one mechanism."""
    def number(x):
        return "-" if x is None else ("inf" if x == math.inf else f"{x:.4g}")

    p0, p1 = row["p"]
    excluded, betting = ({None: "-", True: "**yes**", False: "no"}[row[key]]
                         for key in ("one_tenth_excluded", "betting_excluded"))
    return (f"| {row['mechanism']} | ({row['claim'][0]:g}, {row['claim'][1]:g}) | {row['event'][:60]} | {p0:.4g}, "
            f"{p1:.4g} | {row['kl_star']:.3g} | {number(row['sequential_floor'])} | {number(row['betting_floor'])} | "
            f"{number(row['handed_fixed_n'])} | "
            f"{number(row['fixed_n_median'])} | {number(row['one_tenth'])} | {number(row['sequential_median'])} | "
            f"{excluded} | {betting} |")


def markdown(rows: list[dict], samples: int, exact: dict, whole: list[dict]) -> str:
    lines = [f"Events chosen by one fixed-n audit at {samples} per side (seed {SEED}); probabilities from its bounding "
             f"counts; {CONFIDENCE:.0%}.", "",
             "| mechanism | claim (ε, δ) | event (the candidate with the largest KL*) | p_0, p_1 | KL* per pair | "
             "fewest samples per side for any sequential test on it (median) | fewest for a bettor on it (mean) | "
             "handed fixed-n | fixed-n audit needs (median, sequential_power) | 1/10 of it | our sequential (median) | "
             "1/10 out of reach on this event | 1/10 out of reach for a bettor on it (mean) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [_line(row) for row in rows]
    out = [r["mechanism"] for r in rows if r["one_tenth_excluded"]]
    bettor_out = [r["mechanism"] for r in rows if r["betting_excluded"]]
    ratios = [r["sequential_floor"] / r["handed_fixed_n"] for r in rows
              if r["handed_fixed_n"] and math.isfinite(r["sequential_floor"])]
    lines += ["", f"On {len(out)} of {len(rows)} mechanisms no level-{1 - CONFIDENCE:.2g} sequential test that watches "
              f"this event can flag by 1/10 of the fixed-n audit's recorded need with probability 1/2"
              f"{': ' + ', '.join(out) if out else ''}. The floor is {min(ratios):.2f} to {max(ratios):.2f} times "
              f"the handed fixed-n size (the smallest fixed n at which the event, handed over, refutes the claim): "
              f"a sequential test on an event can meet 1/10 of a fixed-n audit's need only where that audit needs "
              f"at least {10 * min(ratios):.1f} to {10 * max(ratios):.1f} times the handed size (selection, "
              f"multiplicity, the smallest size an audit accepts: {SIZES[0]}). The floor is generous to the "
              f"sequential test, which is handed the event and its probabilities here; it does not bound a test "
              f"that watches the whole output or several events.",
              "", f"A bettor on the event alone (one event, however it learns its stakes) needs ln(1/α)/g "
              f"samples per side in expectation (Wald): more than 1/10 of the fixed-n need on {len(bettor_out)} of "
              f"{len(rows)}{': ' + ', '.join(bettor_out) if bettor_out else ''}. This bounds the mean, not the "
              f"median the table's other columns compare.",
              "", f"The audit bets on both directions of a score in one factor (two legs), a wider class. On the exact "
              f"laws of laplace_half_scale the best one-event bettor gains g = {exact['one_event_growth']:.4f} per "
              f"pair (mean floor {exact['one_event_floor']:.1f}) and the best two-leg bettor "
              f"g = {exact['two_legs_growth']:.4f} (x < {exact['two_legs_thresholds'][0]:.3f} and "
              f"x > {exact['two_legs_thresholds'][1]:.3f}; mean floor {exact['two_legs_floor']:.1f}), still above "
              f"1/10 of the fixed-n need (20). For the other mechanisms the table's betting column bounds one-event "
              f"bettors only: the joint law of two legs is not known in closed form there.",
              "", f"Any level-{1 - CONFIDENCE:.2g} sequential test on the whole output, where the laws are known "
              f"(Laplace or Gaussian noise on coordinates that differ by 1: KL*_out bracketed on cells of the privacy "
              f"loss, spread Δ within a cell; svt_no_threshold_noise: 5 queries, its 6 outputs, Δ = 0; "
              f"noisy_max_too_little_noise: 4 scores, its 4 outputs, Δ = 0; the floors "
              f"from the upper end):", "",
              "| mechanism | coordinates or queries, noise scale | cells, Δ | KL*_out per pair | any test that always flags (mean) | "
              "any test flagging half the time (median) | 1/10 of the fixed-n need | our sequential (median) |",
              "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {w['mechanism']} | {w['coordinates']}, {w['scale']:g} | {w['cells']}, {w['spread']:.4f} | "
              f"{w['kl_star_low']:.5f} to {w['kl_star_high']:.5f} | {w['mean_floor']:.1f} | {w['median_floor']:.1f} | "
              f"{w['one_tenth']:g} | {w['sequential_median']} |" for w in whole]
    mean_out = [w["mechanism"] for w in whole if w["mean_excluded"]]
    median_out = [w["mechanism"] for w in whole if w["median_excluded"]]
    lines += ["", f"On {len(mean_out)} of {len(whole)} no sequential test at all, whatever it watches, flags with "
              f"probability 1 within 1/10 of the fixed-n need on average{': ' + ', '.join(mean_out) if mean_out else ''}; "
              f"by the median, information rules it out on {len(median_out)} of them"
              f"{': ' + ', '.join(median_out) if median_out else ''}."]
    lines += ["", "**Sharper: the most powerful test against the nearest DP law.** A sequential level-α test that flags "
              "by n with probability p is a fixed-n test of level α (flag iff it has stopped by n), so p is at most "
              "the Neyman-Pearson power of n pairs against any (ε, δ)-DP pair; here the law of the table's upper end "
              f"(`most_powerful`: Monte Carlo, {POWER_REPS} paths a set, two standard errors added; checked against "
              "the test itself). The median stopping time of any valid sequential test is therefore at least the first "
              "n where that power reaches 1/2: no sequential test can need fewer than 1/10 of a fixed-n test's samples "
              "unless that fixed-n test is itself at least 10 times slower than the most powerful one.", "",
              "| mechanism | most powerful test: pairs for power 1/2 | its power at 1/10 of the fixed-n need | "
              f"chance the median of {whole[0]['seeds'] if whole else 5} seeds is within 1/10, at most | "
              "fixed-n audit's need / the most powerful test's | our sequential / the most powerful test's |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {w['mechanism']} | {w['most_powerful_half']} | {w['most_powerful_at_one_tenth']:.3f} | "
              f"{w['median_of_seeds_within_one_tenth']:.3f} | {10 * w['one_tenth'] / w['most_powerful_half']:.1f} | "
              f"{w['sequential_median'] / w['most_powerful_half']:.1f} |" for w in whole if w["one_tenth"]]
    np_out = [w["mechanism"] for w in whole if w["most_powerful_excluded"]]
    lines += ["", f"On {len(np_out)} of {len(whole)} no valid sequential test flags within 1/10 of the fixed-n need "
              f"with probability 1/2{': ' + ', '.join(np_out) if np_out else ''}. On the others a test that knew both "
              "output laws could; a black-box test learns its events from the samples it is spending."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
