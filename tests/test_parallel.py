"""Trial blocks on a process pool (admmcheck.solving.parallel) and the batched SPD solve of the local solver."""

from __future__ import annotations

import numpy as np
import pytest

from admmcheck.algorithms.pp import run_pp
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.solving.local_solver import solve_spd
from admmcheck.solving.parallel import concatenate_runs, run_blocks, run_parallel
from admmcheck.solving.runs import trial_seeds
from admmcheck.solving.schedules import GeometricSchedule

PP = dict(penalty=GeometricSchedule(0.5, 1.03), theta=0.5, alpha=GeometricSchedule(5.0, 1.03), iterations=6)


def test_blocks_on_two_processes_equal_one_batched_call(synthetic_case):
    problem, network, _ = synthetic_case
    seeds = trial_seeds(5, 70)
    whole = run_pp(problem, network, seeds=seeds, **PP)
    parallel = run_parallel(run_pp, problem, network, seeds=seeds, block=25, workers=2, **PP)
    assert parallel.trials == 70 and [s.spawn_key for s in parallel.seeds] == [s.spawn_key for s in seeds]
    np.testing.assert_array_equal(parallel.extras["noise"], whole.extras["noise"])  # same draws, same seeds
    np.testing.assert_allclose(parallel.primal, whole.primal, rtol=0, atol=1e-12)
    np.testing.assert_allclose(parallel.dual, whole.dual, rtol=0, atol=1e-12)
    in_process = list(run_blocks(run_pp, problem, network, seeds=seeds, block=25, workers=1, **PP))
    assert [r.trials for r in in_process] == [25, 25, 20]
    np.testing.assert_array_equal(concatenate_runs(in_process).primal, parallel.primal)  # same blocks, same bits


def test_bad_blocks_and_workers_are_refused(synthetic_case):
    problem, network, _ = synthetic_case
    with pytest.raises(InvalidConfiguration, match="block"):
        next(run_blocks(run_pp, problem, network, seeds=trial_seeds(0, 3), block=0))
    with pytest.raises(InvalidConfiguration, match="workers"):
        next(run_blocks(run_pp, problem, network, seeds=trial_seeds(0, 3), workers=0))
    with pytest.raises(InvalidConfiguration, match="same parameters"):
        concatenate_runs([run_pp(problem, network, seeds=1, iterations=2, theta=0.5),
                          run_pp(problem, network, seeds=2, iterations=2, theta=0.6)])


@pytest.mark.parametrize("dim", [1, 2, 5, 8])
def test_batched_cholesky_solves_like_lapack(dim):
    rng = np.random.default_rng(dim)
    factor = rng.normal(size=(200, dim, dim))
    hessian = factor @ np.swapaxes(factor, 1, 2) + 0.1 * np.eye(dim)
    rhs = rng.normal(size=(200, dim))
    solution = solve_spd(hessian, rhs)
    np.testing.assert_allclose(np.einsum("kij,kj->ki", hessian, solution), rhs, atol=1e-9)
    np.testing.assert_allclose(solution, np.linalg.solve(hessian, rhs[..., None])[..., 0], rtol=1e-8, atol=1e-10)


def test_indefinite_systems_fall_back_to_lapack():
    hessian = np.tile(np.diag([1.0, -2.0, 3.0]), (64, 1, 1))
    rhs = np.ones((64, 3))
    np.testing.assert_allclose(solve_spd(hessian, rhs), np.tile([1.0, -0.5, 1 / 3], (64, 1)))
