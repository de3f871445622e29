"""The papers' experiments: the accuracy/privacy comparisons (M-ADMM paper §5.2 Fig. 2, and
Fig. 3-4 on 100 nodes; R-ADMM paper §V.B Fig. 2 and 3) and the convergence figures (M-ADMM §5.1
Fig. 1, R-ADMM §V.A Fig. 1).

For each parameter setting, ``runs`` independent noisy runs (10 in both papers) give

    L^l(t)       average training loss of run l at iteration t (§5.2)
    L_mean(t)    = 1/runs sum_l L^l(t)
    L_range(t)   = max_l L^l(t) - min_l L^l(t)
    P(t)         the paper's privacy-loss bound up to t (Thm 4.1 / Thm IV.1 curve)

Settings that are compared are tuned to the same final bound P(T), so accuracy can be read
at equal claimed privacy. The convergence figures are noiseless (no P(t)) and also record the
relative objective gap to the CVXPY optimum. :func:`save_experiment` writes JSON, CSV and a
figure.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from admmcheck.foundations.figures import Figure
from admmcheck.algorithms.madmm import run_madmm
from admmcheck.algorithms.pp import run_dvp, run_pp
from admmcheck.algorithms.radmm import run_radmm
from admmcheck.algorithms.private_radmm import run_private_radmm
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.problems.networks import Network
from admmcheck.foundations.output import output_folder, to_json, write_atomic, write_text_atomic
from admmcheck.privacy import BoundSetting, pp_alpha_for_target, pp_bound, radmm_bound
from admmcheck.privacy.bounds import LOG_FACTOR
from admmcheck.problems import ConsensusProblem
from admmcheck.solving.runs import Run, trial_seeds
from admmcheck.solving.schedules import GeometricSchedule, step_schedule
from admmcheck.foundations.validation import positive_int

EXPERIMENTS = ("madmm-fig1", "madmm-fig2", "madmm-fig3", "madmm-fig4", "radmm-fig1", "radmm-fig2", "radmm-fig3")
#: The large-network experiments: madmm-fig2's comparison at alpha(1) = 3 on 100 nodes of a random
#: graph, the data spread evenly (Fig. 3) or unevenly (Fig. 4).
LARGE_NETWORK = {"madmm-fig3": "even", "madmm-fig4": "uneven"}


@dataclass(frozen=True, eq=False)
class Curve:
    """One setting's curves: L_mean, L_range over t = 0..T and P(t) over t = 1..T."""

    label: str
    panel: str
    mechanism: str
    parameters: Mapping[str, float]
    loss_mean: np.ndarray
    loss_range: np.ndarray
    privacy: np.ndarray  # empty for the noiseless convergence figures
    bound_holds: bool | None
    final_losses: np.ndarray  # L^l(T) of every run l, in seed order (paired across settings)
    objective_gap: np.ndarray | None = None  # mean |relative objective gap| over the runs, t = 0..T

    def final(self) -> dict[str, object]:
        """Final L_mean(T), L_range(T), P(T) and the parameters."""
        return {
            "label": self.label, "panel": self.panel, "mechanism": self.mechanism,
            "parameters": dict(self.parameters), "L_mean_T": float(self.loss_mean[-1]),
            "L_range_T": float(self.loss_range[-1]),
            "P_T": float(self.privacy[-1]) if self.privacy.size else None, "bound_holds": self.bound_holds,
            **({"objective_gap_T": float(self.objective_gap[-1])} if self.objective_gap is not None else {}),
        }


@dataclass(frozen=True, eq=False)
class Experiment:
    """All curves of one experiment, with what it ran on."""

    name: str
    curves: tuple[Curve, ...]
    runs: int
    iterations: int
    seed: int
    description: Mapping[str, object] = field(default_factory=dict)

    def summary(self) -> dict[str, object]:
        """JSON-able summary: the final values of every setting."""
        return {
            "experiment": self.name, "runs": self.runs, "iterations": self.iterations,
            "seed": self.seed, **self.description, "settings": [c.final() for c in self.curves],
            "claim": paper_claim(self),
        }


#: What each paper says its figure shows: (claim, pairs (more accurate, less accurate) of labels
#: compared within every panel at equal P(T)).
CLAIMS = {
    "madmm-fig1": "M-ADMM paper §5.1 / Thm 3.2: a faster growing common penalty eta(t) = 0.5 q1^(t-1) converges "
                  "more slowly",
    "madmm-fig2": "M-ADMM paper §5.2: at the same privacy bound, PP (increasing eta) is more accurate than DVP",
    "madmm-fig3": "M-ADMM paper §5.2, Fig. 3 (100 nodes, data spread evenly): at the same privacy bound, PP is more "
                  "accurate than DVP",
    "madmm-fig4": "M-ADMM paper §5.2, Fig. 4 (100 nodes, data spread unevenly): at the same privacy bound, PP is "
                  "more accurate than DVP",
    "radmm-fig1": "R-ADMM paper §V.A: a larger gamma lowers the convergence rate",
    "radmm-fig2": "R-ADMM paper §V.B: at the same privacy bound, private R-ADMM is more accurate than DVP and PP",
    "radmm-fig3": "R-ADMM paper §V.B, Fig. 3: growing step sizes eta(t), gamma(t) make private R-ADMM more accurate "
                  "at the same privacy bound",
}
#: The convergence figures' claims order settings by their objective gap at T (deterministic runs).
ORDERED_BY_GAP = {"madmm-fig1": "(b) common penalty", "radmm-fig1": None}


def _claim_pairs(experiment: Experiment) -> list[tuple[Curve, Curve]]:
    pairs = []
    for panel in dict.fromkeys(c.panel for c in experiment.curves):
        curves = [c for c in experiment.curves if c.panel == panel]
        if experiment.name == "radmm-fig3":  # the growing step sizes against the constant ones
            pairs += [(curves[1], curves[0])]
        elif experiment.name != "radmm-fig2":  # each PP setting is followed by the DVP matched to it
            pairs += [(pp, dvp) for pp, dvp in zip(curves[::2], curves[1::2])]
        else:
            pairs += [(curves[0], other) for other in curves[1:]]
    return pairs


def paper_claim(experiment: Experiment, level: float = 0.05) -> dict[str, object]:
    """Test the paper's claim about its figure (:data:`CLAIMS`) on the final losses L^l(T).

    The runs of two settings share their seeds, so each comparison is a paired one: exact
    one-sided Wilcoxon signed-rank tests (``scipy.stats.wilcoxon``) of L^l_better(T) −
    L^l_other(T) < 0 (supports the claim) and > 0 (contradicts it), each at ``level`` divided by
    the number of comparisons (Bonferroni, so the verdict holds at ``level`` overall).
    Verdict: ``pass`` when every comparison supports the claim significantly, ``fail`` when one
    contradicts it significantly, ``inconclusive`` otherwise (too few runs or a small effect).
    """
    from scipy import stats

    if experiment.name in ORDERED_BY_GAP:
        return _gap_order_claim(experiment)
    pairs = _claim_pairs(experiment)
    threshold = level / (2 * len(pairs))  # two one-sided tests per pair
    comparisons = []
    for better, other in pairs:
        difference = better.final_losses - other.final_losses
        if not np.any(difference):
            supports = contradicts = 1.0
        else:
            supports = float(stats.wilcoxon(difference, alternative="less", method="exact" if len(difference) <= 50
                                            else "approx").pvalue)
            contradicts = float(stats.wilcoxon(difference, alternative="greater", method="exact"
                                               if len(difference) <= 50 else "approx").pvalue)
        outcome = "supports" if supports < threshold else ("contradicts" if contradicts < threshold else "undecided")
        means = [float(better.final_losses.mean()), float(other.final_losses.mean())]
        comparisons.append({
            "panel": better.panel, "claimed_better": better.label, "than": other.label, "L_mean_T": means,
            "p_supports": supports, "p_contradicts": contradicts, "outcome": outcome,
            "summary": f"{better.panel}: {better.label} L_mean(T) {means[0]:.4f} vs {other.label} {means[1]:.4f} "
                       f"(p = {supports:.2g} for, {contradicts:.2g} against: {outcome})",
        })
    outcomes = {c["outcome"] for c in comparisons}
    verdict = "fail" if "contradicts" in outcomes else ("pass" if outcomes == {"supports"} else "inconclusive")
    return {"claim": CLAIMS[experiment.name], "verdict": verdict, "level": level,
            "per_test_level": threshold, "test": "paired exact one-sided Wilcoxon signed-rank on L^l(T), Bonferroni",
            "comparisons": comparisons}


def _curve(label: str, panel: str, problem: ConsensusProblem, run: Run, bound, parameters) -> Curve:
    """A setting's curves; ``bound`` None for a noiseless run, which records the objective gap
    instead (``run`` then carries its CVXPY reference)."""
    losses = problem.average_loss(run.primal)  # (runs, T+1)
    mean, spread = losses.mean(axis=0), losses.max(axis=0) - losses.min(axis=0)
    if bound is None:
        return Curve(label, panel, run.algorithm, parameters, mean, spread, np.zeros(0), None, losses[:, -1],
                     np.abs(run.objective_gap).mean(axis=0))
    return Curve(label, panel, run.algorithm, parameters, mean, spread, bound.curve, bound.holds, losses[:, -1])


@dataclass(frozen=True)
class _PrivateRuns:
    """What the accuracy/privacy experiments share: the problem, network, bound setting, T and
    the trial seeds every setting reuses (so comparisons are paired); each method runs one
    private mechanism with its bound and returns its :class:`Curve`."""

    problem: ConsensusProblem
    network: Network
    setting: BoundSetting
    iterations: int
    seeds: tuple[np.random.SeedSequence, ...]

    @classmethod
    def of(cls, problem: ConsensusProblem, network: Network, iterations: int, runs: int, seed: int) -> _PrivateRuns:
        iterations, runs = positive_int("iterations", iterations), positive_int("runs", runs)
        return cls(problem, network, BoundSetting.from_problem(problem, network), iterations,
                   trial_seeds(seed, runs))

    def pp(self, label: str, panel: str, penalty, theta: float, alpha, parameters) -> Curve:
        """PP (Alg. 1) with its Theorem 4.1 bound."""
        bound = pp_bound(self.setting, penalty, alpha, theta, self.iterations)
        run = run_pp(self.problem, self.network, penalty=penalty, theta=theta, alpha=alpha,
                     iterations=self.iterations, seeds=self.seeds)
        return _curve(label, panel, self.problem, run, bound, parameters)

    def dvp(self, label: str, panel: str, theta: float, alpha, parameters) -> Curve:
        """DVP: PP with the constant penalty eta = theta."""
        bound = pp_bound(self.setting, theta, alpha, theta, self.iterations)
        run = run_dvp(self.problem, self.network, theta=theta, alpha=alpha, iterations=self.iterations,
                      seeds=self.seeds)
        return _curve(label, panel, self.problem, run, bound, parameters)

    def radmm(self, label: str, panel: str, eta, gamma, alpha, parameters) -> Curve:
        """Private R-ADMM (Alg. 2) with its Theorem IV.1 bound."""
        bound = radmm_bound(self.setting, eta, alpha, self.iterations)
        run = run_private_radmm(self.problem, self.network, eta=eta, gamma=gamma, alpha=alpha,
                                iterations=self.iterations, seeds=self.seeds)
        return _curve(label, panel, self.problem, run, bound, parameters)

    def matched_dvp_alpha(self, theta: float, target: float) -> float:
        """The constant DVP alpha whose final bound is ``target``."""
        return pp_alpha_for_target(self.setting, theta, theta, target, self.iterations)


def madmm_fig2(
    problem: ConsensusProblem,
    network: Network,
    *,
    iterations: int = 100,
    runs: int = 10,
    seed: int = 0,
    theta: float = 0.5,
    initial_alphas: Sequence[float] = (3.0, 5.0),
    growths: Sequence[tuple[float, float]] = ((1.01, 1.01), (1.03, 1.03)),
) -> Experiment:
    """PP versus DVP as in Fig. 2 of the M-ADMM paper (§5.2).

    For each alpha(1) (one panel each, 3 and 5 in the paper) and each (q1, q2): PP with
    eta(t) = theta q1^(t-1), alpha(t) = alpha(1) q2^(t-1); and DVP (eta = theta) with the
    constant alpha that gives the same final bound P(T). All settings use the same
    ``runs`` seeds (so the same f(0) per run).
    """
    runs_of = _PrivateRuns.of(problem, network, iterations, runs, seed)
    curves = []
    for alpha1 in initial_alphas:
        panel = f"alpha(1)={alpha1:g}"
        for q1, q2 in growths:
            penalty, alpha = GeometricSchedule(theta, q1), GeometricSchedule(alpha1, q2)
            pp = runs_of.pp(f"PP q1={q1:g} q2={q2:g}", panel, penalty, theta, alpha,
                            {"theta": theta, "q1": q1, "alpha1": alpha1, "q2": q2})
            dvp_alpha = runs_of.matched_dvp_alpha(theta, float(pp.privacy[-1]))
            curves += [pp, runs_of.dvp(f"DVP alpha={dvp_alpha:.3g} (same P(T))", panel, theta, dvp_alpha,
                                       {"theta": theta, "alpha": dvp_alpha, "matched_to": pp.label})]
    return Experiment("madmm-fig2", tuple(curves), len(runs_of.seeds), runs_of.iterations, seed)


def radmm_fig2(
    problem: ConsensusProblem,
    network: Network,
    *,
    iterations: int = 100,
    runs: int = 10,
    seed: int = 0,
    eta: float = 1.0,
    gamma: float = 0.2,
    alphas: Sequence[float] = (2.0, 4.0),
    pp_growth: float = 1.03,
) -> Experiment:
    """Private R-ADMM versus DVP and PP at the same P(T), as Fig. 2 of the R-ADMM paper (§V.B).

    Private R-ADMM uses eta = 1, gamma = 0.2 and a constant alpha (2 and 4 in the paper);
    DVP (theta = eta) and PP (eta(t) = eta pp_growth^(t-1), alpha(t) = alpha(1) pp_growth^(t-1))
    get the alpha that makes their final bound equal to private R-ADMM's.
    """
    runs_of = _PrivateRuns.of(problem, network, iterations, runs, seed)
    curves = []
    for alpha in alphas:
        panel = f"alpha={alpha:g}"
        radmm = runs_of.radmm("private R-ADMM", panel, eta, gamma, alpha, {"eta": eta, "gamma": gamma, "alpha": alpha})
        target = float(radmm.privacy[-1])
        dvp_alpha = runs_of.matched_dvp_alpha(eta, target)
        penalty = GeometricSchedule(eta, pp_growth)
        pp_alpha = pp_alpha_for_target(runs_of.setting, penalty, eta, target, runs_of.iterations, growth=pp_growth)
        curves += [radmm, runs_of.dvp("DVP (same P(T))", panel, eta, dvp_alpha, {"theta": eta, "alpha": dvp_alpha}),
                   runs_of.pp("PP (same P(T))", panel, penalty, eta, GeometricSchedule(pp_alpha, pp_growth),
                              {"theta": eta, "q1": pp_growth, "alpha1": pp_alpha, "q2": pp_growth})]
    return Experiment("radmm-fig2", tuple(curves), len(runs_of.seeds), runs_of.iterations, seed)


def madmm_fig1(
    problem: ConsensusProblem,
    network: Network,
    *,
    iterations: int = 100,
    runs: int = 1,
    seed: int = 0,
    theta: float = 0.5,
    growths: Sequence[float] = (1.0, 1.01, 1.03, 1.1),
) -> Experiment:
    """M-ADMM convergence as Fig. 1 of the M-ADMM paper (§5.1), noiseless.

    Panel (a): node-specific penalties eta_i(t) = eta_i(1) q_i^(t-1) with the paper's
    eta(1) = [0.55, 0.65, 0.6, 0.55, 0.6], q = [1.01, 1.03, 1.1, 1.2, 1.02] (repeated over the
    nodes when N != 5) and a fixed theta = 0.5 (the blue curve; the paper's non-fixed and
    node-specific theta are not run: Algorithm 1 and Theorem 3.1 use one theta). Panel (b): a
    common eta(t) = 0.5 q1^(t-1) for each q1 in ``growths``. Theorem 3.2 / §5.1: a faster growing
    penalty converges more slowly (tested by :func:`paper_claim` on the objective gap at T).
    """
    from admmcheck.solving.oracle import centralized_optimum

    iterations, runs = positive_int("iterations", iterations), positive_int("runs", runs)
    optimum = centralized_optimum(problem)
    seeds = trial_seeds(seed, runs)
    eta1, growth = (np.resize(np.array(v, float), problem.nodes) for v in ((0.55, 0.65, 0.6, 0.55, 0.6),
                                                                          (1.01, 1.03, 1.1, 1.2, 1.02)))
    schedule = GeometricSchedule(eta1, growth)
    run = run_madmm(problem, network, penalty=schedule, theta=theta, iterations=iterations, seeds=seeds,
                    reference=optimum)
    curves = [_curve("node-specific eta_i(t) (paper §5.1)", "(a) private penalties", problem, run, None,
                     {"theta": theta, "eta1": eta1.tolist(), "q": growth.tolist()})]
    for q1 in growths:
        run = run_madmm(problem, network, penalty=GeometricSchedule(0.5, q1), theta=theta, iterations=iterations,
                        seeds=seeds, reference=optimum)
        curves.append(_curve(f"eta(t) = 0.5 * {q1:g}^(t-1)", "(b) common penalty", problem, run, None,
                             {"theta": theta, "eta1": 0.5, "q1": q1}))
    return Experiment("madmm-fig1", tuple(curves), runs, iterations, seed)


def radmm_fig1(
    problem: ConsensusProblem,
    network: Network,
    *,
    iterations: int = 100,
    runs: int = 1,
    seed: int = 0,
    eta: float = 0.5,
    gammas: Sequence[float] = (0.1, 0.3, 0.5, 1.0),
    sizes: Sequence[int] = (5, 20),
) -> Experiment:
    """R-ADMM convergence for several gamma at eta = 0.5 on random networks of N = 5 and N = 20
    nodes, as Fig. 1 of the R-ADMM paper (§V.A), noiseless. The rows of ``problem`` are
    re-partitioned evenly over each network (``network`` is not used: the figure names its own);
    the graphs are ``random_connected(N, seed)``. §V.A: larger gamma lowers the convergence rate
    (tested by :func:`paper_claim` on the objective gap at T)."""
    from admmcheck.problems.datasets import Dataset, make_problem
    from admmcheck.problems.networks import random_connected
    from admmcheck.solving.oracle import centralized_optimum

    iterations, runs = positive_int("iterations", iterations), positive_int("runs", runs)
    data = Dataset(np.vstack(problem.features), np.concatenate(problem.labels), "experiment data")
    seeds = trial_seeds(seed, runs)
    curves = []
    for nodes in sizes:
        part = make_problem(data, nodes, C=problem.C, rho=problem.rho, seed=seed)
        graph = random_connected(nodes, seed=seed)
        optimum = centralized_optimum(part)
        for gamma in gammas:
            run = run_radmm(part, graph, eta=eta, gamma=gamma, iterations=iterations, seeds=seeds, reference=optimum)
            curves.append(_curve(f"gamma = {gamma:g}", f"N = {nodes} ({graph.name})", part, run, None,
                                 {"eta": eta, "gamma": gamma, "nodes": nodes}))
    return Experiment("radmm-fig1", tuple(curves), runs, iterations, seed)


def radmm_fig3(
    problem: ConsensusProblem,
    network: Network,
    *,
    iterations: int = 100,
    runs: int = 10,
    seed: int = 0,
    alphas: Sequence[float] = (2.0, 4.0),
    growth: float = 1.01,
) -> Experiment:
    """Private R-ADMM with growing step sizes eta(t) = growth^t, gamma(t) = 0.2 growth^t against
    the constant eta = 1, gamma = 0.2 of Fig. 2, with the privacy bound kept the same at every t,
    as Fig. 3 of the R-ADMM paper (§V.B; the paper does not say how it kept the bound equal).

    Here each odd iteration's term of (30), (2C/B_i)(1.4 c1/(rho/N + 2 eta V_i) + alpha_i(k)), is
    kept equal: the growing run gets alpha_i(k) = alpha + 1.4 c1 (1/(rho/N + 2 V_i) -
    1/(rho/N + 2 eta(2k-1) V_i)), so P(t) is the same curve for both (the bound taken per
    iteration with that iteration's eta, :func:`~admmcheck.privacy.radmm_bound`)."""
    runs_of = _PrivateRuns.of(problem, network, iterations, runs, seed)
    setting = runs_of.setting
    eta_schedule, gamma_schedule = GeometricSchedule(growth, growth), GeometricSchedule(0.2 * growth, growth)
    odd_etas = step_schedule("eta", eta_schedule, runs_of.iterations)[0::2]
    base, degrees = setting.rho / setting.nodes, np.asarray(setting.degrees, float)
    curves = []
    for alpha in alphas:
        panel = f"alpha={alpha:g}"
        matched = alpha + LOG_FACTOR * setting.c1 * (1.0 / (base + 2.0 * degrees)
                                                     - 1.0 / (base + 2.0 * odd_etas[:, None] * degrees))
        curves += [runs_of.radmm("eta = 1, gamma = 0.2", panel, 1.0, 0.2, alpha, {"eta": 1.0, "gamma": 0.2, "alpha": alpha}),
                   runs_of.radmm(f"eta(t) = {growth:g}^t, gamma(t) = 0.2 * {growth:g}^t (same P(t))", panel,
                                 eta_schedule, gamma_schedule, matched,
                                 {"growth": growth, "alpha1": float(matched[0].min()), "alphaK": float(matched[-1].max())})]
    return Experiment("radmm-fig3", tuple(curves), len(runs_of.seeds), runs_of.iterations, seed)


def run_experiment(name: str, problem: ConsensusProblem, network: Network, **options) -> Experiment:
    """Run the experiment called ``name`` (one of :data:`EXPERIMENTS`); madmm-fig3 and madmm-fig4
    are madmm-fig2 at alpha(1) = 3 on the (100-node) ``problem`` and ``network`` given."""
    from dataclasses import replace

    if name == "madmm-fig1":
        return madmm_fig1(problem, network, **options)
    if name == "madmm-fig2":
        return madmm_fig2(problem, network, **options)
    if name in LARGE_NETWORK:
        return replace(madmm_fig2(problem, network, initial_alphas=(3.0,), **options), name=name)
    if name == "radmm-fig1":
        return radmm_fig1(problem, network, **options)
    if name == "radmm-fig2":
        return radmm_fig2(problem, network, **options)
    if name == "radmm-fig3":
        return radmm_fig3(problem, network, **options)
    raise InvalidConfiguration(f"unknown experiment {name!r}; choose one of {', '.join(EXPERIMENTS)}")


def _gap_order_claim(experiment: Experiment) -> dict[str, object]:
    """The convergence figures' claim: within each panel, in the order the settings are listed
    (growing q1 or gamma), the objective gap at T does not decrease. Noiseless runs from the same
    f(0), so the comparison is exact; differences below 1e-12 (both converged) count as ties."""
    wanted = ORDERED_BY_GAP[experiment.name]
    comparisons = []
    for panel in dict.fromkeys(c.panel for c in experiment.curves):
        if wanted is not None and panel != wanted:
            continue
        curves = [c for c in experiment.curves if c.panel == panel]
        for faster, slower in zip(curves, curves[1:]):
            a, b = float(faster.objective_gap[-1]), float(slower.objective_gap[-1])
            outcome = "supports" if a <= b or max(a, b) < 1e-12 else "contradicts"
            comparisons.append({"panel": panel, "claimed_faster": faster.label, "than": slower.label,
                                "objective_gap_T": [a, b], "outcome": outcome,
                                "summary": f"{panel}: {faster.label} gap {a:.2e} vs {slower.label} {b:.2e} ({outcome})"})
    verdict = "pass" if all(c["outcome"] == "supports" for c in comparisons) else "fail"
    return {"claim": CLAIMS[experiment.name], "verdict": verdict,
            "test": "objective gap at T nondecreasing along the listed settings (deterministic runs)",
            "comparisons": comparisons}


def curves_document(experiment: Experiment) -> list[dict[str, object]]:
    """Every setting's curves as JSON-able lists: label, panel, L_mean, L_range (t = 0..T), P (t = 1..T)."""
    return [{"label": c.label, "panel": c.panel, "L_mean": c.loss_mean.tolist(), "L_range": c.loss_range.tolist(),
             "P": c.privacy.tolist(),
             **({"objective_gap": c.objective_gap.tolist()} if c.objective_gap is not None else {})}
            for c in experiment.curves]


def save_experiment(experiment: Experiment, directory: str | Path) -> dict[str, Path]:
    """Write ``NAME.json`` (summary and curves), ``NAME.csv`` (one row per setting and t)
    and ``NAME.png`` (L_mean with L_range bars, and P(t), per panel) into ``directory``."""
    import matplotlib.pyplot as plt

    out = output_folder(directory, "directory")
    paths = {kind: out / f"{experiment.name}.{kind}" for kind in ("json", "csv", "png")}
    write_text_atomic(paths["json"], to_json(experiment.summary() | {"curves": curves_document(experiment)}, indent=1))
    rows = io.StringIO()
    writer = csv.writer(rows)
    writer.writerow(["panel", "setting", "t", "L_mean", "L_range", "P", "objective_gap"])
    for c in experiment.curves:
        for t in range(len(c.loss_mean)):
            privacy = (c.privacy[t - 1] if t > 0 else 0.0) if c.privacy.size else ""
            gap = c.objective_gap[t] if c.objective_gap is not None else ""
            writer.writerow([c.panel, c.label, t, c.loss_mean[t], c.loss_range[t], privacy, gap])
    write_text_atomic(paths["csv"], rows.getvalue())
    figure = experiment_figure(experiment.name, curves_document(experiment))
    write_atomic(paths["png"], lambda stream: figure.savefig(stream, format="png", dpi=110))
    plt.close(figure)
    return paths


def experiment_figure(name: str, curves: Sequence[Mapping[str, object]]):
    """The papers' figure from :func:`curves_document`: per panel, L_mean(t) with L_range(t)
    bars above and P(t) below; returns the matplotlib figure (the caller closes it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = list(dict.fromkeys(c["panel"] for c in curves))
    figure, axes = plt.subplots(2, len(panels), figsize=(5.5 * len(panels), 8), squeeze=False)
    for column, panel in enumerate(panels):
        accuracy, privacy = axes[0, column], axes[1, column]
        for c in (c for c in curves if c["panel"] == panel):
            mean, spread, bound = (np.asarray(c[key], float) for key in ("L_mean", "L_range", "P"))
            t = np.arange(len(mean))
            line = accuracy.plot(t, mean, label=c["label"])[0]
            every = max(1, len(t) // 20)
            accuracy.errorbar(t[::every], mean[::every], yerr=spread[::every] / 2,
                              fmt="none", ecolor=line.get_color(), capsize=2)
            if bound.size:
                privacy.plot(np.arange(1, len(bound) + 1), bound, color=line.get_color(), label=c["label"])
            else:  # a convergence figure: the objective gap to the CVXPY optimum instead of P(t)
                gap = np.maximum(np.asarray(c["objective_gap"], float), 1e-17)
                privacy.semilogy(np.arange(len(gap)), gap, color=line.get_color(), label=c["label"])
        accuracy.set(title=f"{name}: accuracy, {panel}", xlabel="iteration t",
                     ylabel="L_mean(t) (bars: L_range(t))")
        if any(len(c["P"]) for c in curves if c["panel"] == panel):
            privacy.set(title=f"privacy bound, {panel}", xlabel="iteration t", ylabel="P(t)")
        else:
            privacy.set(title=f"relative objective gap to CVXPY, {panel}", xlabel="iteration t", ylabel="|gap(t)|")
        accuracy.legend(fontsize=8)
        privacy.legend(fontsize=8)
    figure.tight_layout()
    return figure


@dataclass(frozen=True)
class ExperimentFigure(Figure):
    """A paper's figure rerun (:func:`experiment_figure`): the ``experiment``'s name and its ``curves``
    (:func:`curves_document`)."""

    kind = "experiment"
    experiment: str
    curves: list[dict[str, Any]]
    algorithms: list[str] | None = None

    def figure(self) -> Any:
        return experiment_figure(self.experiment, self.curves)
