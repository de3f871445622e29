"""The §5.2 / §V.B comparison experiments: statistics, equal-privacy tuning, saved files."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from admmcheck.algorithms.pp import run_pp
from admmcheck.cli import main
from admmcheck.experiments.figures import madmm_fig2, radmm_fig2, save_experiment
from admmcheck.solving.runs import trial_seeds
from admmcheck.solving.schedules import GeometricSchedule


def test_madmm_fig2_statistics_and_matched_privacy(synthetic_case):
    problem, network, _ = synthetic_case
    experiment = madmm_fig2(problem, network, iterations=6, runs=3, seed=4, initial_alphas=(3.0,), growths=((1.05, 1.02),))
    pp, dvp = experiment.curves
    assert pp.mechanism == "pp" and dvp.mechanism == "dvp"
    # recompute L_mean / L_range from an independent run with the same seeds, sample by sample
    run = run_pp(problem, network, penalty=GeometricSchedule(0.5, 1.05), theta=0.5,
                 alpha=GeometricSchedule(3.0, 1.02), iterations=6, seeds=trial_seeds(4, 3))
    losses = np.array([[np.mean([np.mean(np.log1p(np.exp(-y * (x @ run.primal[l, t, i]))))
                                 for i, (x, y) in enumerate(zip(problem.features, problem.labels))])
                        for t in range(7)] for l in range(3)])
    np.testing.assert_allclose(pp.loss_mean, losses.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(pp.loss_range, np.ptp(losses, axis=0), rtol=1e-10, atol=1e-14)
    assert dvp.privacy[-1] == pytest.approx(pp.privacy[-1], rel=1e-12)  # same final P(T)
    assert pp.bound_holds and dvp.bound_holds


def test_radmm_fig2_matches_all_three_bounds(synthetic_case, tmp_path):
    problem, network, _ = synthetic_case
    experiment = radmm_fig2(problem, network, iterations=7, runs=2, alphas=(2.0,))
    labels = [c.label for c in experiment.curves]
    assert labels == ["private R-ADMM", "DVP (same P(T))", "PP (same P(T))"]
    finals = [c.privacy[-1] for c in experiment.curves]
    np.testing.assert_allclose(finals, finals[0], rtol=1e-12)
    paths = save_experiment(experiment, tmp_path)
    document = json.loads(paths["json"].read_text())
    assert document["runs"] == 2 and len(document["curves"]) == 3
    assert len(document["curves"][0]["L_mean"]) == 8 and len(document["curves"][0]["P"]) == 7
    rows = list(csv.DictReader(paths["csv"].open()))
    assert len(rows) == 3 * 8 and float(rows[7]["P"]) == pytest.approx(finals[0])
    assert paths["png"].stat().st_size > 10_000 and paths["png"].read_bytes()[:4] == b"\x89PNG"


def test_experiment_cli_writes_its_files(capsys, tmp_path):
    code = main(["experiment", "madmm-fig2", "--dataset", "synthetic", "--iterations", "4", "--runs", "2",
                 "--out", str(tmp_path), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["experiment"] == "madmm-fig2" and out["dataset"] == "synthetic"
    assert len(out["settings"]) == 8  # 2 panels x (2 PP + 2 matched DVP)
    assert all((tmp_path / f"madmm-fig2.{kind}").exists() for kind in ("json", "csv", "png"))


def _with_finals(experiment, finals):
    from dataclasses import replace

    return replace(experiment, curves=tuple(replace(c, final_losses=np.asarray(f, float))
                                            for c, f in zip(experiment.curves, finals)))


def test_paper_claim_is_a_paired_wilcoxon_test_with_bonferroni(synthetic_case):
    from admmcheck.experiments.figures import paper_claim

    problem, network, _ = synthetic_case
    experiment = madmm_fig2(problem, network, iterations=2, runs=10, seed=1, initial_alphas=(3.0,),
                            growths=((1.05, 1.02),))
    pp, dvp = experiment.curves
    np.testing.assert_allclose(pp.final_losses, problem.average_loss(run_pp(
        problem, network, penalty=GeometricSchedule(0.5, 1.05), theta=0.5, alpha=GeometricSchedule(3.0, 1.02),
        iterations=2, seeds=trial_seeds(1, 10)).primal)[:, -1], rtol=1e-12)
    base = np.linspace(1.0, 2.0, 10)
    # PP lower in every run: exact one-sided signed-rank p = 1 / 2^10, below 0.05 / 2
    better = paper_claim(_with_finals(experiment, [base - 0.1 * np.arange(1, 11), base]))
    assert better["verdict"] == "pass" and better["comparisons"][0]["p_supports"] == pytest.approx(2.0 ** -10)
    worse = paper_claim(_with_finals(experiment, [base + 0.1 * np.arange(1, 11), base]))
    assert worse["verdict"] == "fail" and worse["comparisons"][0]["outcome"] == "contradicts"
    # signs alternating with growing size: W+ = 25, W- = 30, far from significant either way
    mixed = paper_claim(_with_finals(experiment, [base + 0.1 * np.arange(1, 11) * (-1.0) ** np.arange(10), base]))
    assert mixed["verdict"] == "inconclusive"
    assert 0.3 < mixed["comparisons"][0]["p_supports"] < 0.8
    # with 4 runs even a unanimous difference cannot reach 0.025 (min p = 1/16): honest 'inconclusive'
    short = madmm_fig2(problem, network, iterations=2, runs=4, seed=1, initial_alphas=(3.0,), growths=((1.05, 1.02),))
    assert paper_claim(_with_finals(short, [base[:4] - 1.0, base[:4]]))["verdict"] == "inconclusive"


def test_madmm_fig1_curves_are_the_runs_they_name_and_its_claim_orders_the_gaps(synthetic_case):
    from admmcheck.algorithms import run_madmm
    from admmcheck.experiments.figures import madmm_fig1, paper_claim

    problem, network, optimum = synthetic_case
    experiment = madmm_fig1(problem, network, iterations=15, runs=2, seed=3, growths=(1.0, 1.2))
    assert [c.panel for c in experiment.curves] == ["(a) private penalties"] + ["(b) common penalty"] * 2
    run = run_madmm(problem, network, penalty=GeometricSchedule(0.5, 1.2), theta=0.5, iterations=15,
                    seeds=trial_seeds(3, 2), reference=optimum)
    last = experiment.curves[-1]
    np.testing.assert_allclose(last.objective_gap, np.abs(run.objective_gap).mean(axis=0), rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(last.loss_mean, problem.average_loss(run.primal).mean(axis=0), rtol=1e-12)
    assert last.privacy.size == 0 and last.final()["P_T"] is None
    claim = paper_claim(experiment)
    assert claim["verdict"] == "pass" and len(claim["comparisons"]) == 1  # panel (b) only
    slow_first = madmm_fig1(problem, network, iterations=15, runs=1, seed=3, growths=(1.2, 1.0))
    assert paper_claim(slow_first)["verdict"] == "fail"  # the claim can fail: listed the wrong way round


def test_radmm_fig1_runs_its_own_networks_and_large_experiments_default_to_100_nodes(tmp_path):
    from admmcheck.experiments.figures import radmm_fig1
    from admmcheck.commands.consensus import ExperimentConfig, experiment_of
    from admmcheck.problems.setting import build_problem

    config = ExperimentConfig.from_flags({"name": "radmm-fig1", "dataset": "synthetic", "samples": 200, "dim": 3,
                                          "iterations": 6, "runs": 1})
    problem, network = build_problem(config)
    experiment = radmm_fig1(problem, network, iterations=6, gammas=(0.2, 2.0))
    assert [c.parameters["nodes"] for c in experiment.curves] == [5, 5, 20, 20]
    large = ExperimentConfig.from_flags({"name": "madmm-fig4", "dataset": "synthetic", "samples": 6000, "dim": 3,
                                         "iterations": 3, "runs": 2})
    assert (large.nodes, large.graph) == (100, "random")
    assert ExperimentConfig.from_flags({"name": "madmm-fig4", "nodes": 7}).nodes == 7  # a typed flag wins
    fig4 = experiment_of(large)
    sizes = fig4.description["samples_per_node"]
    assert len(sizes) == 100 and min(sizes) >= 20 and max(sizes) > 2 * min(sizes) and sum(sizes) == 6000
    assert fig4.name == "madmm-fig4" and {c.parameters["alpha1"] for c in fig4.curves if "alpha1" in c.parameters} == {3.0}
    paths = save_experiment(experiment, tmp_path)
    rows = list(csv.DictReader(paths["csv"].open()))
    assert rows[0]["P"] == "" and float(rows[-1]["objective_gap"]) >= 0


def test_private_radmm_step_schedules_and_radmm_fig3_keeps_the_bound_equal(synthetic_case):
    from admmcheck.algorithms import run_private_radmm
    from admmcheck.experiments.figures import radmm_fig3
    from admmcheck.privacy import BoundSetting

    problem, network, _ = synthetic_case
    constant = run_private_radmm(problem, network, eta=1.0, gamma=0.2, alpha=3.0, iterations=5, seeds=[4])
    same = run_private_radmm(problem, network, eta=[1.0] * 5, gamma=GeometricSchedule(0.2, 1.0), alpha=3.0,
                             iterations=5, seeds=[4])
    np.testing.assert_array_equal(same.primal, constant.primal)
    grown = run_private_radmm(problem, network, eta=GeometricSchedule(1.01, 1.01), gamma=GeometricSchedule(0.202, 1.01),
                              alpha=3.0, iterations=4, seeds=[4])
    # (29) at t = 2 by hand, with eta(2) = 1.01^2, gamma(2) = 0.202 * 1.01: from f(1), lambda(1), eps(1)
    f1, lam1, eps1 = grown.primal[0, 1], grown.dual[0, 1], grown.extras["noise"][0, 0]
    eta2, gamma2 = 1.01 ** 2, 0.202 * 1.01
    degrees = network.adjacency.sum(axis=1)[:, None]
    pull = degrees * f1 - network.adjacency @ f1
    expected = f1 - (2 * lam1 + eps1 + problem.local_gradients(f1) + eta2 * pull) / (2 * eta2 * degrees + gamma2)
    np.testing.assert_allclose(grown.primal[0, 2], expected, rtol=1e-12, atol=1e-12)
    experiment = radmm_fig3(problem, network, iterations=6, runs=2, alphas=(2.0,))
    flat, rising = experiment.curves
    np.testing.assert_allclose(rising.privacy, flat.privacy, rtol=1e-12)
    setting = BoundSetting.from_problem(problem, network)
    sizes, V = np.array(setting.sizes, float), np.array(setting.degrees, float)
    per_odd = 2 * setting.C / sizes * (1.4 * setting.c1 / (setting.rho / setting.nodes + 2 * V) + 2.0)
    assert flat.privacy[-1] == pytest.approx(3 * per_odd.max(), rel=1e-12)  # K = 3 odd steps, eq. (30)
