"""Shared fixtures: the two acceptance problems and their CVXPY optima (built once)."""

from __future__ import annotations

import warnings

import pytest

from admmcheck.datasets import breast_cancer, make_problem, synthetic
from admmcheck.networks import ring
from admmcheck.oracle import centralized_optimum


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


@pytest.fixture(params=["synthetic", "breast-cancer"])
def acceptance_case(request, synthetic_case, breast_cancer_case):
    return synthetic_case if request.param == "synthetic" else breast_cancer_case
