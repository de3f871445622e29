"""The papers' accuracy/privacy comparisons (M-ADMM paper §5.2 Fig. 2, R-ADMM paper §V.B Fig. 2).

For each parameter setting, ``runs`` independent noisy runs (10 in both papers) give

    L^l(t)       average training loss of run l at iteration t (§5.2)
    L_mean(t)    = 1/runs sum_l L^l(t)
    L_range(t)   = max_l L^l(t) - min_l L^l(t)
    P(t)         the paper's privacy-loss bound up to t (Thm 4.1 / Thm IV.1 curve)

Settings that are compared are tuned to the same final bound P(T), so accuracy can be read
at equal claimed privacy. :func:`save_experiment` writes JSON, CSV and a figure.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from admmcheck.algorithms.pp import run_dvp, run_pp
from admmcheck.algorithms.private_radmm import run_private_radmm
from admmcheck.errors import InvalidConfiguration
from admmcheck.networks import Network
from admmcheck.output import output_folder, to_json, write_atomic, write_text_atomic
from admmcheck.privacy import BoundSetting, pp_alpha_for_target, pp_bound, radmm_bound
from admmcheck.problems import ConsensusProblem
from admmcheck.runs import Run, trial_seeds
from admmcheck.schedules import GeometricSchedule
from admmcheck.validation import positive_int

EXPERIMENTS = ("madmm-fig2", "radmm-fig2")


@dataclass(frozen=True, eq=False)
class Curve:
    """One setting's curves: L_mean, L_range over t = 0..T and P(t) over t = 1..T."""

    label: str
    panel: str
    mechanism: str
    parameters: Mapping[str, float]
    loss_mean: np.ndarray
    loss_range: np.ndarray
    privacy: np.ndarray
    bound_holds: bool
    final_losses: np.ndarray  # L^l(T) of every run l, in seed order (paired across settings)

    def final(self) -> dict[str, object]:
        """Final L_mean(T), L_range(T), P(T) and the parameters."""
        return {
            "label": self.label, "panel": self.panel, "mechanism": self.mechanism,
            "parameters": dict(self.parameters), "L_mean_T": float(self.loss_mean[-1]),
            "L_range_T": float(self.loss_range[-1]), "P_T": float(self.privacy[-1]),
            "bound_holds": self.bound_holds,
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
    "madmm-fig2": "M-ADMM paper §5.2: at the same privacy bound, PP (increasing eta) is more accurate than DVP",
    "radmm-fig2": "R-ADMM paper §V.B: at the same privacy bound, private R-ADMM is more accurate than DVP and PP",
}


def _claim_pairs(experiment: Experiment) -> list[tuple[Curve, Curve]]:
    pairs = []
    for panel in dict.fromkeys(c.panel for c in experiment.curves):
        curves = [c for c in experiment.curves if c.panel == panel]
        if experiment.name == "madmm-fig2":  # each PP setting is followed by the DVP matched to it
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
        comparisons.append({
            "panel": better.panel, "claimed_better": better.label, "than": other.label,
            "L_mean_T": [float(better.final_losses.mean()), float(other.final_losses.mean())],
            "p_supports": supports, "p_contradicts": contradicts,
            "outcome": "supports" if supports < threshold else ("contradicts" if contradicts < threshold
                                                               else "undecided"),
        })
    outcomes = {c["outcome"] for c in comparisons}
    verdict = "fail" if "contradicts" in outcomes else ("pass" if outcomes == {"supports"} else "inconclusive")
    return {"claim": CLAIMS[experiment.name], "verdict": verdict, "level": level,
            "per_test_level": threshold, "test": "paired exact one-sided Wilcoxon signed-rank on L^l(T), Bonferroni",
            "comparisons": comparisons}


def _curve(label: str, panel: str, problem: ConsensusProblem, run: Run, bound, parameters) -> Curve:
    losses = problem.average_loss(run.primal)  # (runs, T+1)
    mean, spread = losses.mean(axis=0), losses.max(axis=0) - losses.min(axis=0)
    return Curve(label, panel, run.algorithm, parameters, mean, spread, bound.curve, bound.holds, losses[:, -1])


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
    iterations, runs = positive_int("iterations", iterations), positive_int("runs", runs)
    setting = BoundSetting.from_problem(problem, network)
    seeds = trial_seeds(seed, runs)
    curves = []
    for alpha1 in initial_alphas:
        panel = f"alpha(1)={alpha1:g}"
        for q1, q2 in growths:
            penalty, alpha = GeometricSchedule(theta, q1), GeometricSchedule(alpha1, q2)
            bound = pp_bound(setting, penalty, alpha, theta, iterations)
            run = run_pp(problem, network, penalty=penalty, theta=theta, alpha=alpha, iterations=iterations, seeds=seeds)
            params = {"theta": theta, "q1": q1, "alpha1": alpha1, "q2": q2}
            curves.append(_curve(f"PP q1={q1:g} q2={q2:g}", panel, problem, run, bound, params))
            target = float(np.max(bound.per_node))
            dvp_alpha = pp_alpha_for_target(setting, theta, theta, target, iterations)
            dvp_bound = pp_bound(setting, theta, dvp_alpha, theta, iterations)
            dvp = run_dvp(problem, network, theta=theta, alpha=dvp_alpha, iterations=iterations, seeds=seeds)
            params = {"theta": theta, "alpha": dvp_alpha, "matched_to": f"PP q1={q1:g} q2={q2:g}"}
            curves.append(_curve(f"DVP alpha={dvp_alpha:.3g} (same P(T))", panel, problem, dvp, dvp_bound, params))
    return Experiment("madmm-fig2", tuple(curves), runs, iterations, seed)


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
    iterations, runs = positive_int("iterations", iterations), positive_int("runs", runs)
    setting = BoundSetting.from_problem(problem, network)
    seeds = trial_seeds(seed, runs)
    curves = []
    for alpha in alphas:
        panel = f"alpha={alpha:g}"
        bound = radmm_bound(setting, eta, alpha, iterations)
        run = run_private_radmm(problem, network, eta=eta, gamma=gamma, alpha=alpha, iterations=iterations, seeds=seeds)
        curves.append(_curve("private R-ADMM", panel, problem, run, bound, {"eta": eta, "gamma": gamma, "alpha": alpha}))
        target = float(np.max(bound.per_node))
        dvp_alpha = pp_alpha_for_target(setting, eta, eta, target, iterations)
        dvp = run_dvp(problem, network, theta=eta, alpha=dvp_alpha, iterations=iterations, seeds=seeds)
        dvp_bound = pp_bound(setting, eta, dvp_alpha, eta, iterations)
        curves.append(_curve("DVP (same P(T))", panel, problem, dvp, dvp_bound, {"theta": eta, "alpha": dvp_alpha}))
        penalty = GeometricSchedule(eta, pp_growth)
        pp_alpha = pp_alpha_for_target(setting, penalty, eta, target, iterations, growth=pp_growth)
        noise = GeometricSchedule(pp_alpha, pp_growth)
        pp = run_pp(problem, network, penalty=penalty, theta=eta, alpha=noise, iterations=iterations, seeds=seeds)
        pp_b = pp_bound(setting, penalty, noise, eta, iterations)
        params = {"theta": eta, "q1": pp_growth, "alpha1": pp_alpha, "q2": pp_growth}
        curves.append(_curve("PP (same P(T))", panel, problem, pp, pp_b, params))
    return Experiment("radmm-fig2", tuple(curves), runs, iterations, seed)


def run_experiment(name: str, problem: ConsensusProblem, network: Network, **options) -> Experiment:
    """Run the experiment called ``name`` (one of :data:`EXPERIMENTS`)."""
    if name == "madmm-fig2":
        return madmm_fig2(problem, network, **options)
    if name == "radmm-fig2":
        return radmm_fig2(problem, network, **options)
    raise InvalidConfiguration(f"unknown experiment {name!r}; choose one of {', '.join(EXPERIMENTS)}")


def curves_document(experiment: Experiment) -> list[dict[str, object]]:
    """Every setting's curves as JSON-able lists: label, panel, L_mean, L_range (t = 0..T), P (t = 1..T)."""
    return [{"label": c.label, "panel": c.panel, "L_mean": c.loss_mean.tolist(), "L_range": c.loss_range.tolist(),
             "P": c.privacy.tolist()} for c in experiment.curves]


def save_experiment(experiment: Experiment, directory: str | Path) -> dict[str, Path]:
    """Write ``NAME.json`` (summary and curves), ``NAME.csv`` (one row per setting and t)
    and ``NAME.png`` (L_mean with L_range bars, and P(t), per panel) into ``directory``."""
    import matplotlib.pyplot as plt

    out = output_folder(directory, "--out")
    paths = {kind: out / f"{experiment.name}.{kind}" for kind in ("json", "csv", "png")}
    write_text_atomic(paths["json"], to_json(experiment.summary() | {"curves": curves_document(experiment)}, indent=1))
    rows = io.StringIO()
    writer = csv.writer(rows)
    writer.writerow(["panel", "setting", "t", "L_mean", "L_range", "P"])
    for c in experiment.curves:
        for t in range(len(c.loss_mean)):
            privacy = c.privacy[t - 1] if t > 0 else 0.0
            writer.writerow([c.panel, c.label, t, c.loss_mean[t], c.loss_range[t], privacy])
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
            privacy.plot(np.arange(1, len(bound) + 1), bound, color=line.get_color(), label=c["label"])
        accuracy.set(title=f"{name}: accuracy, {panel}", xlabel="iteration t",
                     ylabel="L_mean(t) (bars: L_range(t))")
        privacy.set(title=f"privacy bound, {panel}", xlabel="iteration t", ylabel="P(t)")
        accuracy.legend(fontsize=8)
        privacy.legend(fontsize=8)
    figure.tight_layout()
    return figure
