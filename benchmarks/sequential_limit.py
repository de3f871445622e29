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

**The whole output, any test.** For laplace_half_scale the whole output's laws are known, so the
argument of the first floor applies to every level-α sequential test, whatever it watches, betting or
not: E_P[τ] KL(P || Q) >= kl(P(flag) || α) for every DP law Q, so with KL*_out the smallest KL per pair
from the true output laws to the laws of an ε-DP pair, a test that flags with probability 1 needs
E[τ] >= ln(1/α)/KL*_out and one that flags by m with probability 1/2 needs m >= kl(1/2 || α)/KL*_out.
KL*_out is bracketed by convex programs (CVXPY, :func:`laplace_whole_output`): below by the smallest KL
over ε-DP laws of a binned output (binning is data processing), above by the same at ε − Δ, Δ the
spread of the log-likelihood ratio within a bin (a binned law spread in each bin as the true one is
lifts to an ε-DP pair with the same KL). The log-ratio is constant below 0 and above 1, so those are
two bins and [0, 1] is cut in BINS.

Beside them: the **handed fixed-n** size, the smallest n per side at which one Clopper-Pearson bound
on this event (alpha/2 a side, its expected counts n p, the ceiling's convention) refutes the claim:
what a fixed-n test handed the event needs. And the fixed-n audit's recorded need (median over the
seeds of ``sequential_power.json``, selection and multiplicity included) and 1/10 of it.

**What it covers.** Tests that watch this one event, handed to them with its probabilities known.
A test that watches the whole output, or several events, can see more (KL of the whole output law is
at least the event's), so this is not a bound on every test; it says how far from 1/10 betting on
the audit's own best event must be, even before any of it is learnt.

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
from scipy import optimize, special, stats

from admmcheck.audit.estimators import cp_lower, cp_upper, epsilon_bound
from admmcheck.audit.sequential import bet, independent_law, joint_bet
from admmcheck.output import output_folder, to_json, write_text_atomic

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from sequential_power import CONFIDENCE, SIZES, TARGET, _audit  # noqa: E402  (one definition of the audits)

SAMPLES = 100_000
SEED = 0
BINS = 2000  # equal bins of [0, 1] for laplace_whole_output


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
    under d1 in one factor, stakes summing to at most 1/e^ε), thresholds on a grid of ``step`` over [-1, 2]
    and refined to step/10 around the best; each with its floor ln(1/α)/g on the mean samples per side."""
    d0, d1 = stats.laplace(0.0, scale), stats.laplace(1.0, scale)
    cap = (1 - 1e-12) / math.exp(epsilon)
    cuts = np.arange(-1.0, 2.0 + step / 2, step)
    single = float(np.max(bet(d0.cdf(cuts), d1.cdf(cuts), epsilon, 0.0, cap)[1]))

    def two(t0: float, t1: float) -> float:  # patterns (index 2^0 [x < t0] + 2^1 [x > t1]), t0 <= t1
        laws = [np.array([d.cdf(t1) - d.cdf(t0), d.cdf(t0), d.sf(t1), 0.0]) for d in (d0, d1)]
        return joint_bet(independent_law(*laws, (0, 1)), epsilon, 0.0, cap)[1]

    best = max((two(a, b), a, b) for a in cuts for b in cuts if a <= b)
    fine = np.arange(-5, 6) * step / 10
    best = max((two(best[1] + u, best[2] + v), best[1] + u, best[2] + v) for u in fine for v in fine
               if best[1] + u <= best[2] + v)
    alpha_log = math.log(1 / (1 - CONFIDENCE))
    return {"one_event_growth": single, "one_event_floor": alpha_log / single, "two_legs_growth": best[0],
            "two_legs_floor": alpha_log / best[0], "two_legs_thresholds": [best[1], best[2]]}


def nearest_dp_law(p0: np.ndarray, p1: np.ndarray, epsilon: float) -> float:
    """min over laws (q0, q1) of one discrete output with e^-ε <= q0/q1 <= e^ε everywhere (pure ε-DP) of
    KL(p0 || q0) + KL(p1 || q1): a convex program (CVXPY)."""
    q0, q1 = cp.Variable(len(p0), nonneg=True), cp.Variable(len(p1), nonneg=True)
    scale = math.exp(epsilon)
    problem = cp.Problem(cp.Minimize(cp.sum(cp.rel_entr(p0, q0)) + cp.sum(cp.rel_entr(p1, q1))),
                         [cp.sum(q0) == 1, cp.sum(q1) == 1, q0 <= scale * q1, q1 <= scale * q0])
    problem.solve()
    if problem.status != cp.OPTIMAL:
        raise RuntimeError(f"the nearest DP law was not found: {problem.status}")
    return float(problem.value)


def laplace_whole_output(epsilon: float = 1.0, scale: float = 0.5, bins: int = BINS) -> dict[str, float]:
    """KL*_out of laplace_half_scale (Laplace(0, ``scale``) against Laplace(1, ``scale``), claim (``epsilon``, 0))
    bracketed as the module docstring says, and the floors of any level-α sequential test that follow."""
    d0, d1 = stats.laplace(0.0, scale), stats.laplace(1.0, scale)
    edges = np.linspace(0.0, 1.0, bins + 1)
    p0, p1 = ([d.cdf(0.0), *np.diff(d.cdf(edges)), d.sf(1.0)] for d in (d0, d1))
    spread = 2 * (edges[1] - edges[0]) / scale  # log(p0/p1)(x) = (1 - 2x)/scale on [0, 1]
    low, high = nearest_dp_law(np.array(p0), np.array(p1), epsilon), nearest_dp_law(np.array(p0), np.array(p1),
                                                                                     epsilon - spread)
    coarse = (d0.cdf(0.5), d1.cdf(0.5))  # a two-bin output: the convex program against nearest_null's SLSQP and grid
    two_bins = nearest_dp_law(np.array([coarse[0], 1 - coarse[0]]), np.array([coarse[1], 1 - coarse[1]]), epsilon)
    if abs(two_bins - nearest_null(coarse, epsilon, 0.0)[0]) > 1e-6 * two_bins:
        raise RuntimeError(f"CVXPY and nearest_null disagree on a two-bin output: {two_bins}")
    alpha = 1 - CONFIDENCE
    return {"bins": bins, "kl_star_low": low, "kl_star_high": high, "mean_floor": math.log(1 / alpha) / high,
            "median_floor": float(kl(0.5, alpha)) / high}


def handed_fixed_n(p_a: float, p_b: float, epsilon: float, delta: float, alpha: float, most: int = 10**9) -> int | None:
    """The smallest n per side at which the event's Clopper-Pearson bound at its expected counts
    (alpha/2 a side) exceeds ``epsilon`` (None: not below ``most``): bisection, the bound rising with n."""
    def refutes(n: int) -> bool:
        return bool(epsilon_bound(cp_lower(n * p_a, n, alpha / 2), cp_upper(n * p_b, n, alpha / 2), delta) > epsilon)

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
    exact = {**laplace_two_legs(), "whole_output": laplace_whole_output()}
    write_text_atomic(out / "sequential_limit.json", to_json({
        "samples_per_side": args.samples, "seed": SEED, "confidence": CONFIDENCE, "decisions_kl": decisions,
        "rows": rows, "laplace_half_scale_exact": exact}, indent=2) + "\n")
    write_text_atomic(out / "sequential_limit.md", markdown(rows, args.samples, exact))


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


def markdown(rows: list[dict], samples: int, exact: dict) -> str:
    whole = exact["whole_output"]
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
              "", f"Any level-{1 - CONFIDENCE:.2g} sequential test on laplace_half_scale's whole output (exact laws): "
              f"KL*_out per pair is between {whole['kl_star_low']:.5f} and {whole['kl_star_high']:.5f} "
              f"({whole['bins']} bins on [0, 1]), so a test that always flags needs at least "
              f"{whole['mean_floor']:.1f} samples per side on average, above 1/10 of the fixed-n need (20), and one "
              f"that flags by m with probability 1/2 needs m >= {whole['median_floor']:.1f}: the median target is "
              f"not ruled out by information; on the mean, no test reaches it."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
