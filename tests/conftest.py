"""Shared fixtures: the two acceptance problems and their CVXPY optima (built once)."""

from __future__ import annotations

import os

# One OpenMP/BLAS thread per process, set before scikit-learn or numpy's OpenBLAS start their
# thread pools (and inherited by the audit worker, CLI and Dask subprocesses). The audits fit
# scikit-learn's gradient boosting (OpenMP) while their worker processes and other tests keep the
# 2 cores busy; OpenMP's spin-waiting threads then slow one fit from 0.3 s to a minute or more.
# The suite's parallelism is in processes (audit workers, pytest-xdist).
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import warnings  # noqa: E402

import pytest  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from admmcheck.problems.datasets import breast_cancer, make_problem, synthetic  # noqa: E402
from admmcheck.problems.networks import ring  # noqa: E402
from admmcheck.solving.oracle import centralized_optimum  # noqa: E402

threadpool_limits(1)  # for thread pools a plugin may have started before this file ran


@pytest.fixture(autouse=True)
def _quiet_cvxpy():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Solution may be inaccurate")
        yield


@pytest.fixture(scope="session")
def synthetic_case():
    problem = make_problem(synthetic(250, 10, seed=0), 5, C=1.0, rho=1.0, seed=0)
    return problem, ring(5), centralized_optimum(problem)


@pytest.fixture(scope="session")
def breast_cancer_case():
    problem = make_problem(breast_cancer(), 5, C=1.0, rho=1.0, seed=0)
    return problem, ring(5), centralized_optimum(problem)


@pytest.fixture(scope="session")
def examples_python(tmp_path_factory):
    """The interpreter of a fresh virtual environment into which pip installed every example package of examples/
    (tests/example_packages.py): one environment for tests/test_example_plugins.py and
    tests/test_example_families.py, and for every pytest-xdist worker."""
    from pathlib import Path

    from example_packages import install_examples, once

    return Path(once(tmp_path_factory, "examples-python",
                     lambda: str(install_examples(tmp_path_factory.mktemp("examples")))))


@pytest.fixture(params=["synthetic", "breast-cancer"])
def acceptance_case(request, synthetic_case, breast_cancer_case):
    return synthetic_case if request.param == "synthetic" else breast_cancer_case


def pytest_configure(config):
    config.addinivalue_line("markers", "system_package(name): the test needs a system package (tests/system.py)")


def pytest_runtest_setup(item):
    """A test whose system package this run requires (``.ci/run`` installed it) fails where it is missing, instead
    of skipping: CI must not pass with the MATLAB or browser tests silently left out."""
    from system import HOW, missing, required

    for marker in item.iter_markers("system_package"):
        package = marker.args[0]
        if package in required() and missing(package):
            pytest.fail(f"{package} is required in this run (ADMMCHECK_REQUIRE_SYSTEM, set by .ci/run, which installs "
                        f"it) but missing: {HOW[package]}; the install step failed, see the CI log", pytrace=False)


#: The longest tests (``--durations`` of CI runs: 20 to 120 s each), started first.
LONGEST = ("test_verify_writes_a_reproducible_report_with_every_algorithm",
           "test_kkt_attack_recovers_the_direction_only_with_public_penalties",
           "test_the_examples_own_tests_use_the_pytest_plugin_and_catch_its_broken_variant",
           "test_verify_only_checks_the_variants", "test_verify_a_new_algorithm_examples_run",
           "test_a_session_shares_its_budget_records_every_result_and_a_violation_replays",
           "test_every_command_of_the_guides_ran_and_ended_with_a_verdict")


def pytest_collection_modifyitems(session, config, items):
    """The longest tests first, then the properties, then the rest, each in collection order. properties/ holds the
    longest single tests (82 s for one convergence property); collected last, one of them ran alone at the end while
    the other xdist worker stood idle for 55 s (a timestamped ``pytest -v`` run). Started first, they overlap the
    short tests. The sort is stable and the same in every worker."""
    items.sort(key=lambda item: 0 if item.originalname in LONGEST else 1 if item.path.parent.name == "properties"
               else 2)
