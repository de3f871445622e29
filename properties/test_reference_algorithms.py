"""Claims about the reference algorithms that must hold on every network and problem.

* App. A of the M-ADMM supplement: edge-based ADMM (4)-(7) and simplified ADMM (8)-(9)
  produce the same iterates;
* M-ADMM (10)-(11) with eta_i(t) = theta is conventional ADMM;
* a batch of trials is the same as separate runs with the same seeds.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from admmcheck.algorithms import run_admm, run_admm_edge, run_madmm
from admmcheck.solving.runs import trial_seeds
from admmcheck.strategies import connected_networks, networks_and_problems

#: A connected network on 2..6 nodes and a consensus problem with one partition per node.
CASES = networks_and_problems(min_nodes=2, max_nodes=6, max_dim=4, max_samples=15)


@given(CASES, st.floats(0.1, 3.0), st.integers(0, 1000))
def test_edge_based_admm_equals_simplified_admm(case, eta, seed):
    network, problem = case
    edge = run_admm_edge(problem, network, eta=eta, iterations=8, seeds=seed)
    simple = run_admm(problem, network, eta=eta, iterations=8, seeds=seed)
    scale = 1.0 + np.max(np.abs(simple.primal))
    assert np.max(np.abs(edge.primal - simple.primal)) <= 1e-9 * scale
    assert np.max(np.abs(edge.dual - simple.dual)) <= 1e-9 * scale


@given(CASES, st.floats(0.1, 3.0), st.integers(0, 1000))
def test_madmm_with_constant_penalty_theta_is_admm(case, theta, seed):
    network, problem = case
    madmm = run_madmm(problem, network, penalty=theta, theta=theta, iterations=8, seeds=seed)
    admm = run_admm(problem, network, eta=theta, iterations=8, seeds=seed)
    scale = 1.0 + np.max(np.abs(admm.primal))
    assert np.max(np.abs(madmm.primal - admm.primal)) <= 1e-11 * scale


@given(CASES, st.integers(0, 1000), st.integers(2, 6))
def test_batch_of_trials_equals_separate_runs(case, seed, trials):
    network, problem = case
    seeds = trial_seeds(seed, trials)
    batch = run_madmm(problem, network, penalty=0.7, theta=0.5, iterations=5, seeds=seeds)
    for k, s in enumerate(seeds):
        alone = run_madmm(problem, network, penalty=0.7, theta=0.5, iterations=5, seeds=[s])
        np.testing.assert_allclose(batch.primal[k], alone.primal[0], rtol=0, atol=1e-12)


@given(connected_networks(min_nodes=2, max_nodes=10))
def test_laplacian_facts_used_by_the_proofs(network):
    """D +- A is PSD and Null(D - A) = span(1) for a connected graph (§3.2)."""
    assert np.linalg.eigvalsh(network.signless_laplacian)[0] >= -1e-10
    eigenvalues = np.linalg.eigvalsh(network.laplacian)
    assert abs(eigenvalues[0]) <= 1e-10 and eigenvalues[1] > 1e-6
