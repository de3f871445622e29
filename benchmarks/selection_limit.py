"""How close to the event-tester ceiling can a tester come that must find its event in the data,
even when it is told the exact likelihood-ratio ordering of the outputs?

``dpsniper_ceiling.py`` computes the ceiling: the bound ONE exactly optimal event gives at n
samples per side with no selection and no multiplicity. A tester that is handed that event
reaches it by definition, so "no valid tester can reach 0.9 x the ceiling" can only be said of
testers that choose their event from the samples. This benchmark measures the best such tester
we can describe, made as strong as possible: an **oracle-ordering tester** that knows the
mechanism's exact privacy loss L = ln p_0(y) / p_1(y) for every output (the Neyman-Pearson
ordering, the best score any learned family could find; the law is that of
``dpsniper_ceiling.py``) and has only to choose one threshold t and a direction ({L >= t} or
{L <= t}) from the samples. Every strategy below is a valid test at 1 - alpha:

* ``split f``: a fraction f of the n samples per side chooses the threshold (the event whose
  bound, predicted at n(1 - f) samples from the selection frequencies, is largest; "plug-in") or
  the same with the frequencies replaced by their pessimistic ends at z = 0.5, 1, 2 standard
  deviations ("pessimistic z"; the
  prediction uses Wilson score intervals, fast, for the choice only); the other n(1 - f) samples
  bound that one event with exact Clopper-Pearson intervals at alpha (alpha/2 a side).
  f in 0.5 %-50 %;
* ``split f + local grid h r``: as ``split f`` (pessimistic 1), and the bounding samples bound,
  together (Bonferroni), the chosen event and the 2h events whose side-a probabilities are
  r^j times its own (j = -h..h): a hedge against a threshold chosen a little off;
* ``grid r``: no split; all n samples bound, together (Bonferroni: alpha/K each), the K events
  whose side-a probability is r^-j (j = 1, 2, ... down to 10/n), in both directions; it reports
  the largest bound. The levels are placed with the exact law (an oracle's advantage), r in
  {sqrt 2, 2, 4, 8}.

For the sparse-vector variants whose output is an answer pattern (SVT1, SVT2, SVT6) it also
measures a **values tester** without the oracle: it sees the patterns as unlabelled values,
orders them by their ratio on the selection split and takes the best prefix (the auditor's
values family, alpha whole on the one event), every split and choice rule above, with and
without sizing the prefix on a held-out third. Below 0.9 x, it says what learning the order of
the values from the samples costs a tester that assumes no structure among them.

For each strategy the benchmark draws the counts R times (multinomial over the binned L law)
and takes the median bound, as ``dpsniper_compare.py`` takes the median over seeds. The
oracle's best strategy and parameter are chosen AFTER seeing every result (again in its
favour). If even that is below 0.9 x the ceiling, no tester that finds its event in the data by
a split or by a fixed family of candidate events reaches 0.9 x the ceiling at this n: the shortfall is
the cost of not knowing the event, not a weakness of the learned score. Where the oracle
reaches 0.9 x and our auditor does not, the gap is ours (learning the ordering).

**One rule for every mechanism** ("uniform" in the JSON, the last lines of the .md). A tester
meets a mechanism it has not seen with one rule; the best of all strategies above is chosen per
mechanism after the fact. So for each strategy (a grid's K, which its ratio and the law fix,
left out of its name) the benchmark also reports its worst ratio to the ceiling over the
mechanisms run and on how many it reaches 0.9 x. If no strategy reaches 0.9 x on every one of
them, no tester of this kind that applies one fixed rule does, even with the true ratio order
given to it; the account does not cover a tester that picks its rule from the selection samples.

**How likely the acceptance is met at all** ("pass_probability", "handed_event" in the JSON, the
last lines of the .md). The acceptance asks the median of SEEDS = 3 seeds to reach 0.9 x the
ceiling on every mechanism; a run's bound scatters (the ceiling event's own sd is 15-25 % of the
ceiling on the sparse-vector and parallel mechanisms). From each strategy's R bounds,
s = P(one run >= 0.9 x the ceiling) and P(median of 3 >= 0.9 x) = s^3 + 3 s^2 (1 - s); the runs of
different mechanisms are independent, so the chance of meeting it on all of them at once is the
product. It is given for one rule of the oracle-ordering tester (the likeliest), for the likeliest
rule per mechanism chosen after the fact, and for the **tester handed the optimal event** (the
ceiling's own event: no selection, all n samples and all of alpha on it; its two counts drawn
HANDED_REPEATS times), on these mechanisms and on all 20 of ``dpsniper_ceiling.CASES``.

    python benchmarks/selection_limit.py [--names a,b] [--samples 1000000] [--repeats 200] [--out DIR]

writes DIR/selection_limit.json and .md (default DIR benchmarks/out).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

from admmcheck.foundations.output import output_folder, to_json, write_text_atomic

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import dpsniper_ceiling as C  # noqa: E402  (the exact laws and the ceiling)

ALPHA = 0.05
SPLITS = (0.005, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5)
GRIDS = (math.sqrt(2), 2.0, 4.0, 8.0)
LOCAL_SPLITS = (0.02, 0.05, 0.1, 0.2, 0.3)
LOCAL_GRIDS = ((1, 2.0), (1, 4.0), (2, 2.0))
RULES = {"plug-in": 0.0, "pessimistic 0.5": 0.5, "pessimistic 1": 1.0, "pessimistic 2": 2.0}  # z of the choice
Z_SIDE = float(stats.norm.isf(ALPHA / 2))  # the z of each one-sided interval of the bound
HANDED_REPEATS = 100_000  # draws of the handed event's two counts (cheap: two binomials)
TARGET = 0.9  # the acceptance's ratio to the ceiling
SEEDS = 3  # dpsniper_compare.py takes the median over this many seeds
SHORT = ("ReportNoisyMax4", "SVT1", "SVT2", "SVT3", "SVT6", "SVT34Parallel", "NumericalSVT", "PrefixSum",
         "LaplaceParallel")


def categories(law: C.Law, per_tail: int = 1500) -> tuple[np.ndarray, np.ndarray]:
    """The outputs grouped by their binned L, in increasing L: their probabilities under d0 and d1.

    The +inf / -inf atoms are categories of their own. Adjacent bins are merged into at most
    about 2 * ``per_tail`` groups whose edges lie at pooled masses spaced geometrically from 1e-9
    to 1/2 from either end (fine in both tails, where the small events live). Every group is
    still a genuine event (a union of cells), so merging can only take choices from the oracle;
    the ceiling of the merged law is reported beside the exact one to show how little.
    """
    nz = np.nonzero((law.w0 > 0) | (law.w1 > 0))[0]
    w0, w1 = law.w0[nz], law.w1[nz]
    mass = (w0 + w1) / 2
    cum = np.cumsum(mass)
    total = cum[-1]
    edges = np.geomspace(1e-9, 0.5, per_tail) * total
    edges = np.unique(np.concatenate([edges, total - edges]))
    group = np.searchsorted(edges, cum - mass / 2)  # by the middle of each bin's mass
    _, group = np.unique(group, return_inverse=True)
    g0, g1 = np.bincount(group, w0), np.bincount(group, w1)
    p0 = np.concatenate([[0.0], g0, [law.inf0]])  # first: L = -inf (P_0 = 0), last: L = +inf (P_1 = 0)
    p1 = np.concatenate([[law.inf1], g1, [0.0]])
    return p0 / p0.sum(), p1 / p1.sum()


def merged_ceiling(p0: np.ndarray, p1: np.ndarray, n: int) -> float:
    """``dpsniper_ceiling.ceiling`` of the merged law (its categories as the bins, the end ones as the atoms)."""
    law = C.Law(1.0, 0, p0[1:-1], p1[1:-1], inf0=float(p0[-1]), inf1=float(p1[0]))
    return C.ceiling(law, n, ALPHA)["value"]


def event_masses(c0: np.ndarray, c1: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(mass on side a, mass on side b) of every threshold event, both directions.

    Direction 0: {L >= t} (suffixes), a = d0; direction 1: {L <= t} (prefixes), a = d1.
    """
    return [(np.cumsum(c0[::-1]), np.cumsum(c1[::-1])), (np.cumsum(c1), np.cumsum(c0))]


bound = C.event_bound  # the bound one event gives from its counts


def wilson(count, n, z, upper):
    """Wilson score end at z standard deviations: a fast stand-in for Clopper-Pearson in the
    threshold choice (the choice is the tester's own rule; the bound itself is exact)."""
    count = np.asarray(count, float)
    centre, half = count + z * z / 2, z * np.sqrt(np.maximum(count * (1 - count / n), 0) + z * z / 4)
    return np.clip((centre + half if upper else centre - half) / (n + z * z), 0.0, 1.0)


def predicted(count_a, count_b, m, rest, rule):
    """The bound that the choice expects at ``rest`` samples from selection counts among ``m``."""
    z_pick = RULES[rule]
    qa, qb = wilson(count_a, m, z_pick, False), wilson(count_b, m, z_pick, True)
    z = Z_SIDE
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(wilson(qa * rest, rest, z, False)) - np.log(np.maximum(wilson(qb * rest, rest, z, True), 1e-300))


def split_tester(p0, p1, n, f, rule, rng, repeats, around: tuple[int, float] = (0, 1.0)) -> np.ndarray:
    """The bounds of the split tester (module docstring) over ``repeats`` draws; with ``around``
    = (h, r) it bounds, together (alpha / K each), the chosen event and the 2h events whose side-a
    masses are r^j times its own, j = -h..h (placed with the exact law: the oracle's advantage)."""
    m = max(int(round(f * n)), 1)
    rest = n - m
    exact = event_masses(p0, p1)
    h, ratio = around
    values = np.empty(repeats)
    for r in range(repeats):
        s0, s1 = rng.multinomial(m, p0), rng.multinomial(m, p1)
        best, pick = -math.inf, None
        for direction, (ca, cb) in enumerate(event_masses(s0, s1)):
            value = predicted(ca, cb, m, rest, rule)
            i = int(np.argmax(value))
            if value[i] > best:
                best, pick = value[i], (direction, i)
        direction, i = pick
        pa = exact[direction][0]
        chosen = np.unique(np.clip(np.searchsorted(pa, pa[i] * ratio ** np.arange(-h, h + 1)), 0, pa.size - 1))
        chosen = np.union1d(chosen, [i])
        b0, b1 = rng.multinomial(rest, p0), rng.multinomial(rest, p1)
        ka, kb = event_masses(b0, b1)[direction]
        values[r] = float(np.max(bound(ka[chosen], kb[chosen], rest, ALPHA / chosen.size)))
    return values


def pattern_law(name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """P(answer pattern) under d0 and d1 for the sparse-vector variants whose output is a pattern
    (``dpsniper_ceiling.svt_pattern_probs``, the same parameters as its builders), else None."""
    parameters = C.svt_pattern_settings()
    if name not in parameters:
        return None
    d0, d1 = getattr(C.M, C.CASES[name][1])()
    _, p0, p1 = C.svt_pattern_probs(np.asarray(d0, float), np.asarray(d1, float), *parameters[name])
    return p0 / p0.sum(), p1 / p1.sum()


def values_tester(p0, p1, n, f, rule, rng, repeats, held_out: bool) -> np.ndarray:
    """The bounds of a tester that sees the outputs as unlabelled values (no oracle): it orders
    the values by their ratio (c_a + 0.5) / (c_b + 0.5) on the selection split and takes the best
    prefix by ``rule``, as the auditor's values family does; with ``held_out`` it orders on 2/3 of
    the selection split and sizes the prefix on the other 1/3. The prefix is bounded on the rest."""
    m = max(int(round(f * n)), 3)
    rest = n - m
    values = np.empty(repeats)
    for r in range(repeats):
        s0, s1 = rng.multinomial(m, p0), rng.multinomial(m, p1)
        if held_out:
            fit = 2 * m // 3
            o0, o1 = rng.multivariate_hypergeometric(s0, fit), rng.multivariate_hypergeometric(s1, fit)
            j0, j1, judged = s0 - o0, s1 - o1, m - fit
        else:
            o0, o1, j0, j1, judged = s0, s1, s0, s1, m
        best, pick = -math.inf, None
        for numerator in (0, 1):
            oa, ob = (o0, o1) if numerator == 0 else (o1, o0)
            ja, jb = (j0, j1) if numerator == 0 else (j1, j0)
            order = np.argsort(-(oa + 0.5) / (ob + 0.5), kind="stable")
            value = predicted(np.cumsum(ja[order]), np.cumsum(jb[order]), judged, rest, rule)
            k = int(np.argmax(value))
            if value[k] > best:
                best, pick = value[k], (numerator, order[:k + 1])
        numerator, chosen = pick
        pa, pb = (p0, p1) if numerator == 0 else (p1, p0)
        ka, kb = rng.binomial(rest, min(pa[chosen].sum(), 1.0)), rng.binomial(rest, min(pb[chosen].sum(), 1.0))
        values[r] = bound(ka, kb, rest, ALPHA)
    return values


def grid_tester(p0, p1, n, ratio, rng, repeats) -> tuple[np.ndarray, int]:
    """The bounds of the no-split grid tester (module docstring) in ``repeats`` draws, and its K."""
    exact = event_masses(p0, p1)
    chosen = []  # (direction, index) of each event of the grid
    for direction, (pa, _) in enumerate(exact):
        level = 1.0 / ratio
        while level >= 10.0 / n:
            i = int(np.searchsorted(pa, level))  # the smallest event with side-a mass >= level
            if i < pa.size and (direction, i) not in chosen:
                chosen.append((direction, i))
            level /= ratio
    k = len(chosen)
    values = np.empty(repeats)
    for r in range(repeats):
        s0, s1 = rng.multinomial(n, p0), rng.multinomial(n, p1)
        masses = event_masses(s0, s1)
        ka = np.array([masses[d][0][i] for d, i in chosen])
        kb = np.array([masses[d][1][i] for d, i in chosen])
        values[r] = float(np.max(bound(ka, kb, n, ALPHA / k)))
    return values, k


def handed_event(p_a: float, p_b: float, n: int, rng, repeats: int) -> np.ndarray:
    """The bounds of the tester handed the ceiling's own event (side-a and side-b probabilities
    ``p_a``, ``p_b``): both counts drawn ``repeats`` times, all n samples and alpha on that one event."""
    return bound(rng.binomial(n, p_a, repeats), rng.binomial(n, min(p_b, 1.0), repeats), n, ALPHA)


def pass_probability(values: np.ndarray, ceiling: float) -> float:
    """P(the median of SEEDS independent runs >= TARGET x ``ceiling``), from the runs' bounds ``values``:
    with s = P(one run >= TARGET x ceiling), at least a majority of the SEEDS runs must reach it."""
    s = float(np.mean(np.asarray(values) >= TARGET * ceiling))
    return float(sum(math.comb(SEEDS, k) * s ** k * (1 - s) ** (SEEDS - k) for k in range(SEEDS // 2 + 1, SEEDS + 1)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", default=",".join(SHORT))
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(HERE / "out"))
    args = parser.parse_args()
    out = output_folder(args.out, "--out")
    table = C.builders(keep_bins=False)
    ours, seeds = {}, 0
    compare = HERE / "results" / "dpsniper_compare.json"
    if compare.exists():
        recorded = json.loads(compare.read_text())
        ours, seeds = {row["mechanism"]: row for row in recorded["rows"]}, len(recorded["seeds"])
    rows, n = [], args.samples
    every = handed_everywhere(table, n, args.seed)
    for name in args.names.split(","):
        start = time.perf_counter()
        mechanism, pair, _, _ = C.CASES[name]
        d0, d1 = getattr(C.M, pair)()
        law = table[name](d0, d1).law
        optimal = C.ceiling(law, n, ALPHA)
        ceiling = optimal["value"]
        p0, p1 = categories(law)
        rng = np.random.default_rng([args.seed, list(C.CASES).index(name)])
        runs = {}
        for f in SPLITS:
            for rule in RULES:
                runs[f"split {f:g} {rule}"] = split_tester(p0, p1, n, f, rule, rng, args.repeats)
        for f in LOCAL_SPLITS:
            for h, ratio in LOCAL_GRIDS:
                runs[f"split {f:g} + local grid h={h} r={ratio:.3g}"] = split_tester(
                    p0, p1, n, f, "pessimistic 1", rng, args.repeats, (h, ratio))
        for ratio in GRIDS:
            values, k = grid_tester(p0, p1, n, ratio, rng, args.repeats)
            runs[f"grid {ratio:.3g} (K={k})"] = values
        strategies = {key: float(np.median(values)) for key, values in runs.items()}
        passing = {key: pass_probability(values, ceiling) for key, values in runs.items()}
        best = max(strategies, key=strategies.get)
        learned = {}
        patterns = pattern_law(name)
        if patterns is not None:
            for f in SPLITS:
                for rule in RULES:
                    for held_out in (False, True):
                        learned[f"values split {f:g} {rule}{' held-out sizing' if held_out else ''}"] = float(
                            np.median(values_tester(*patterns, n, f, rule, rng, args.repeats, held_out)))
        row = {"mechanism": name, "ceiling": ceiling, "oracle_best": strategies[best], "oracle_strategy": best,
               "oracle_over_ceiling": strategies[best] / ceiling, "strategies": strategies,
               "pass_probability": passing, "handed_event_pass": every["pass_probability"][name],
               "ceiling_of_merged_law": merged_ceiling(p0, p1, n),
               "values_tester": learned and {"best": max(learned.values()), "strategy": max(learned, key=learned.get),
                                             "over_ceiling": max(learned.values()) / ceiling, "strategies": learned},
               "categories": int(p0.size), "seconds": time.perf_counter() - start}
        if name in ours:
            row["ours"], row["ours_seeds"] = ours[name]["epsilon_lower_bound"], seeds
        rows.append(row)
        print(f"{name}: ceiling {ceiling:.4f}, oracle-ordering best {strategies[best]:.4f} "
              f"({strategies[best] / ceiling:.2f} x, {best}) [{row['seconds']:.0f} s]", flush=True)
        rules = uniform(rows)
        write_text_atomic(out / "selection_limit.json", to_json({
            "samples_per_side": n, "alpha": ALPHA, "repeats": args.repeats, "seed": args.seed,
            "target": TARGET, "seeds": SEEDS, "rows": rows, "uniform": rules, "handed_event": every},
            indent=2) + "\n")
        write_text_atomic(out / "selection_limit.md", markdown(rows, n, rules, every))


def handed_everywhere(table: dict, n: int, seed: int) -> dict:
    """The tester handed the optimal event, on every mechanism of ``dpsniper_ceiling.CASES``: per mechanism
    the probability that the median of SEEDS runs reaches TARGET x the ceiling, and the probability that
    it does on all of them at once (the runs of different mechanisms are independent)."""
    passing = {}
    for index, (name, (_, pair, _, _)) in enumerate(C.CASES.items()):
        optimal = C.ceiling(table[name](*getattr(C.M, pair)()).law, n, ALPHA)
        rng = np.random.default_rng([seed, index, 1])
        passing[name] = pass_probability(handed_event(optimal["P_a"], optimal["P_b"], n, rng, HANDED_REPEATS),
                                         optimal["value"])
    return {"repeats": HANDED_REPEATS, "pass_probability": passing, "all_pass": math.prod(passing.values())}


def uniform(rows: list[dict]) -> dict:
    """Every strategy run on all ``rows`` as one rule for all of them: its ratio to the ceiling per
    mechanism, the worst, and the mechanisms below 0.9 x; with the best rule by its worst ratio and
    the one that reaches 0.9 x on the most mechanisms."""
    ratios = [{_rule(k): v / row["ceiling"] for k, v in row["strategies"].items()} for row in rows]
    passing = [{_rule(k): v for k, v in row["pass_probability"].items()} for row in rows]
    names = [k for k in ratios[0] if all(k in r for r in ratios)]
    rules = {k: {"ratios": {row["mechanism"]: r[k] for row, r in zip(rows, ratios)},
                 "worst": min(r[k] for r in ratios),
                 "short": [row["mechanism"] for row, r in zip(rows, ratios) if r[k] < TARGET],
                 "all_pass": math.prod(q[k] for q in passing)} for k in names}
    return {"mechanisms": [row["mechanism"] for row in rows], "rules": rules,
            "best_worst_case": max(rules, key=lambda k: rules[k]["worst"]),
            "most_reached": min(rules, key=lambda k: (len(rules[k]["short"]), -rules[k]["worst"])),
            "most_likely": max(rules, key=lambda k: rules[k]["all_pass"]),
            "all_pass_best_per_mechanism": math.prod(max(q.values()) for q in passing)}


def _rule(strategy: str) -> str:
    """A strategy's name without a grid's K (which the law fixes): the same rule on every mechanism."""
    return re.sub(r" \(K=\d+\)$", "", strategy)


def markdown(rows: list[dict], n: int, rules: dict, handed: dict) -> str:
    """The table, the one-rule lines (``rules``: :func:`uniform` of ``rows``) and the chances of meeting the
    acceptance (``handed``: :func:`handed_everywhere`)."""
    lines = [f"| mechanism | ceiling ({n:.0e}/side, 95 %) | oracle-ordering tester: best of all strategies | / ceiling "
             "| its strategy | best split | best no-split grid | values tester (order learned) / ceiling "
             f"| ours (median of {rows[0].get('ours_seeds', 'n/a')} seeds) / ceiling "
             f"| P(median of {SEEDS} >= {TARGET:g} x): handed event, oracle's likeliest rule |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        s = row["strategies"]
        split = max((k for k in s if k.startswith("split") and "local" not in k), key=s.get)
        grid = max((k for k in s if k.startswith("grid")), key=s.get)
        ours = f"{row['ours'] / row['ceiling']:.2f}" if row.get("ours") is not None else "n/a"
        learned = row.get("values_tester")
        values = f"{learned['over_ceiling']:.2f} ({learned['strategy']})" if learned else "n/a (not a pattern output)"
        likeliest = max(row["pass_probability"], key=row["pass_probability"].get)
        lines.append(f"| {row['mechanism']} | {row['ceiling']:.4f} | {row['oracle_best']:.4f} | "
                     f"{row['oracle_over_ceiling']:.2f} | {row['oracle_strategy']} | {s[split]:.4f} ({split}) | "
                     f"{s[grid]:.4f} ({grid}) | {values} | {ours} | {row['handed_event_pass']:.3f}, "
                     f"{row['pass_probability'][likeliest]:.3f} ({likeliest}) |")
    lines.append("")
    lines.append(f"One rule for all {len(rows)} mechanisms (the oracle-ordering tester, {len(rules['rules'])} rules):")
    for label, key in (("best by its worst case", "best_worst_case"), ("at 0.9 x on the most", "most_reached")):
        rule = rules["rules"][rules[key]]
        lines.append(f"* {label}: `{rules[key]}`: worst {rule['worst']:.2f} x the ceiling, "
                     f"0.9 x on {len(rows) - len(rule['short'])} of {len(rows)}; below: "
                     + ", ".join(f"{m} {rule['ratios'][m]:.3f}" for m in rule["short"]))
    reached = [k for k, rule in rules["rules"].items() if not rule["short"]]
    lines.append(f"* rules at 0.9 x on all of them: {', '.join(reached) if reached else 'none'}")
    likely = rules["most_likely"]
    lines += ["", f"How likely a tester is to meet the acceptance (the median of {SEEDS} seeds >= {TARGET:g} x the "
              f"ceiling) on all {len(rows)} at once (runs independent, so the product of the per-mechanism chances):",
              f"* the oracle-ordering tester with one rule, the likeliest: `{likely}`, "
              f"{rules['rules'][likely]['all_pass']:.3g}",
              f"* the oracle-ordering tester with the likeliest rule for each mechanism, chosen after the fact: "
              f"{rules['all_pass_best_per_mechanism']:.3g}",
              f"* the tester handed each optimal event (no selection, all of alpha on it): "
              f"{math.prod(row['handed_event_pass'] for row in rows):.3g}"]
    chances = handed["pass_probability"]
    below = sorted((q, m) for m, q in chances.items() if q < 0.999)
    lines.append(f"* the same on all {len(chances)} DP-Sniper mechanisms: {handed['all_pass']:.3g} (below 0.999: "
                 + ", ".join(f"{m} {q:.3f}" for q, m in below) + ")")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
