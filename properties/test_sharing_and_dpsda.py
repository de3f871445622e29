"""Claims about ADMM sharing and DPSDA on generated data and graph sequences:

* ADMM sharing (6)-(8) reaches the CVXPY optimum of (1) for small ρ on any generated vertically
  partitioned problem with full-rank blocks, and its residual Σ_m D_m x_m − z vanishes;
* DPSDA: without noise the average dual z̄ follows z̄(t+1) = z̄(t) + u(t)·(n/n) (Lemma 2(a)/(16)) for
  DPSDA-PS (column-stochastic A) and for DPSDA-C with a symmetric W; push-sum weights sum to n.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from admmcheck.algorithms import run_sharing
from admmcheck.algorithms.dpsda import run_dpsda_c, run_dpsda_ps
from admmcheck.problems.graph_sequences import random_sequence
from admmcheck.solving.oracle import sharing_optimum
from admmcheck.problems.online import online_linear_regression
from admmcheck.strategies import graph_sequences_and_online_problems, sharing_problems


@settings(max_examples=max(settings().max_examples // 3, 2))
@given(sharing_problems())
def test_admm_sharing_reaches_the_cvxpy_optimum(problem):
    optimum = sharing_optimum(problem)
    run = run_sharing(problem, rho=problem.lipschitz * 2, iterations=3000, seeds=[0], reference=optimum)
    assert abs(run.objective_gap[0, -1]) <= 1e-6
    residual = run.extras["shared"][0, -1].sum(axis=0) - run.extras["z"][0, -1]
    assert np.linalg.norm(residual) <= 1e-6 * (1 + np.linalg.norm(run.extras["z"][0, -1]))


@settings(max_examples=max(settings().max_examples // 3, 2))
@given(graph_sequences_and_online_problems(min_nodes=2, max_nodes=6, rounds=30, max_window=4), st.integers(0, 1000))
def test_dpsda_average_dual_follows_lemma_2a(case, seed):
    graphs, problem = case  # undirected sequences have symmetric (Metropolis) W(t)
    push_sum = graphs.directed
    T = problem.rounds
    run = (run_dpsda_ps if push_sum else run_dpsda_c)(problem, graphs=graphs, iterations=T, seeds=[seed])
    z = run.dual[0]  # z_i(t), index k <-> round k+1
    y = run.primal[0]
    for t in range(1, T + 1):
        u = problem.gradient(t, y[t - 1]) * problem.block_mask  # u_i(t) placed in block i
        np.testing.assert_allclose(z[t].mean(axis=0), z[t - 1].mean(axis=0) + u.sum(axis=0), rtol=1e-10, atol=1e-9)
    if push_sum:
        np.testing.assert_allclose(run.extras["push_sum_weights"][0].sum(axis=1), problem.nodes, atol=1e-10)


def test_with_the_papers_uniform_weights_dpsda_c_does_not_keep_the_average():
    """The experiment's W_ij = 1/deg_i is row- but not column-stochastic: (16) fails (the proof of
    Lemma 2(a) uses a symmetric W, which the paper never states)."""
    problem = online_linear_regression(rounds=10, dim=4, nodes=4, seed=1)
    graphs = random_sequence(4, 10, 1, 1, weights="uniform", extra_edges=0.0)  # spanning trees: unequal degrees
    run = run_dpsda_c(problem, graphs=graphs, iterations=10, seeds=[0])
    z, y = run.dual[0], run.primal[0]
    gaps = [np.abs(z[t].mean(axis=0) - z[t - 1].mean(axis=0)
                   - (problem.gradient(t, y[t - 1]) * problem.block_mask).sum(axis=0)).max() for t in range(1, 11)]
    assert max(gaps) > 1e-3
