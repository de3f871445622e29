"""The proof lemmas of admmcheck.conditions.lemmas against independently computed values."""

from __future__ import annotations

import math
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
import scipy.linalg

from admmcheck.conditions.certificates import verify_certificate
from admmcheck.conditions.lemmas import (
    graph_laplacian_checks,
    jacobian_eigenvalue_checks,
    ln2_bounds,
    log_inequality_check,
)
from admmcheck.problems.datasets import make_problem, synthetic
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.problems.networks import network_by_name, path, ring

# ----------------------------------------------------------------------------- log inequality


def test_log_inequality_holds_with_a_tight_ln2_interval():
    check = log_inequality_check()
    assert check.holds is True
    lo, hi = Fraction(check.details["ln2_lower"]), Fraction(check.details["ln2_upper"])
    assert lo <= Fraction(math.log(2)) <= hi
    assert hi - lo < Fraction(1, 10**9)
    assert (lo, hi) == ln2_bounds()
    g_half = Fraction(check.details["g_at_half_lower_bound"])
    assert g_half == Fraction(7, 10) - hi and g_half > 0
    assert 0 < 0.7 - math.log(2) and abs(float(g_half) - (0.7 - math.log(2))) < 1e-9
    assert check.details["g_second_derivative"] == "-1/(x - 1)**2"
    assert check.details["concave_on_interval"] is True


def test_log_inequality_reports_equality_at_zero_and_holds_on_a_grid():
    check = log_inequality_check()
    assert check.details["g_at_zero"] == "0"
    assert "x = 0" in check.details["at_zero"] and "equality" in check.details["at_zero"]
    assert check.details["interval"] == "(0, 1/2]"
    x = np.linspace(0.0, 0.5, 100_001)[1:]
    assert np.all(1.4 * x + np.log1p(-x) > 0)
    # the concavity bound g(x) >= 2x g(1/2) that the proof yields, checked numerically
    assert np.all(1.4 * x + np.log1p(-x) >= 2 * x * float(Fraction(check.details["g_at_half_lower_bound"])) - 1e-15)


def test_ln2_bounds_widths_and_validation():
    for n in (1, 5, 20):
        lo, hi = ln2_bounds(n)
        assert lo <= Fraction(math.log(2)) <= hi
        assert hi - lo == Fraction(1, (n + 1) * 2**n)
    with pytest.raises(InvalidConfiguration):
        ln2_bounds(0)


# ----------------------------------------------------------------------------- graph matrices

GRAPHS = ["ring:4", "ring:5", "path:5", "star:6", "complete:4"]


@pytest.mark.parametrize("spec", GRAPHS)
def test_graph_laplacian_checks(spec):
    kind, nodes = spec.split(":")
    network = network_by_name(kind, int(nodes))
    laplacian_psd, signless_psd, kernel, signless_pd = graph_laplacian_checks(network)
    adjacency = network.adjacency.astype(float)
    degree = np.diag(adjacency.sum(axis=1))

    for check, expected in ((laplacian_psd, degree - adjacency), (signless_psd, degree + adjacency)):
        assert check.holds is True
        assert verify_certificate(check.certificate, check.matrix) and check.verify()
        assert np.array_equal(np.array(check.matrix, dtype=float), expected)
        assert np.linalg.eigvalsh(expected).min() > -1e-12

    assert kernel.holds is True and kernel.details["nullity"] == 1
    (basis,) = kernel.details["basis"]
    assert len(set(basis)) == 1 and Fraction(basis[0]) != 0  # a non-zero multiple of 1

    bipartite = nx.is_bipartite(network.to_networkx())
    assert signless_pd.details["bipartite"] is bipartite
    assert signless_pd.holds is (not bipartite)
    assert verify_certificate(signless_pd.certificate, signless_pd.matrix) and signless_pd.verify()
    smallest = np.linalg.eigvalsh(degree + adjacency).min()
    assert bool(abs(smallest) < 1e-9) is bipartite
    if bipartite:  # the kernel of D + A is the ±1 two-colouring
        (sign_vector,) = signless_pd.details["basis"]
        v = np.array([float(Fraction(s)) for s in sign_vector])
        assert np.allclose((degree + adjacency) @ v, 0) and np.allclose(np.abs(v), np.abs(v[0]))
        assert signless_pd.certificate.evidence.value == 0  # a null direction as witness
    else:
        assert signless_pd.details["nullity"] == 0 and smallest > 1e-6


# ----------------------------------------------------------------------------- eigenvalue lemma

NAMES = [
    "Assumption 4: L'' in (0, c1]",
    "||x||_2 <= 1",
    "rank G <= 2",
    "λ(H) >= ρ/N + 2ηV_i",
    "λ(G) <= Cc1/B_i",
    "λ(G) >= -Cc1/B_i",
    "λ(H⁻¹G) <= κ",
    "λ(H⁻¹G) >= -κ",
    "κ <= 1/2",
]


def _float_matrices(problem, node, eta, degree, f, x_hat, y_hat):
    """H, G and κ in floats, built directly from the R-ADMM App. III definitions."""
    x, y = problem.features[node], problem.labels[node]
    size, dim = x.shape
    curv = lambda z: 1 / (1 + np.exp(-z)) * (1 - 1 / (1 + np.exp(-z)))  # noqa: E731
    alpha = problem.rho / problem.nodes + 2 * eta * degree
    c = curv(y * (x @ f))
    h = problem.C / size * (x.T * c) @ x + alpha * np.eye(dim)
    g = problem.C / size * (curv(y_hat * x_hat @ f) * np.outer(x_hat, x_hat) - c[0] * np.outer(x[0], x[0]))
    kappa = 0.25 / (size / problem.C * alpha)
    return h, g, alpha, kappa


@pytest.fixture(scope="module")
def small_problem():
    return make_problem(synthetic(60, 4, seed=0), 3, C=1.0, rho=1.0, seed=0)


@pytest.mark.parametrize("network", [ring(3), path(3)], ids=lambda n: n.name)
@pytest.mark.parametrize("node", [0, 1])
def test_jacobian_checks_agree_with_numpy(small_problem, network, node):
    problem, eta = small_problem, 0.5
    degree = int(network.degrees[node])
    f = np.random.default_rng(node).standard_normal(problem.dim)
    checks = jacobian_eigenvalue_checks(problem, node, eta, degree, f)
    assert [c.name for c in checks] == NAMES
    by_name = {c.name: c for c in checks}
    for check in checks:
        assert check.verify()
        if check.certificate is not None:
            assert verify_certificate(check.certificate, check.matrix)

    x_hat, y_hat = problem.features[node][1], -problem.labels[node][0]
    h, g, alpha, kappa = _float_matrices(problem, node, eta, degree, f, x_hat, y_hat)
    assert float(Fraction(checks[0].details["kappa"])) == pytest.approx(kappa, rel=1e-15)
    assert Fraction(checks[0].details["rho/N + 2 eta V_i"]) == Fraction(1, 3) + 2 * Fraction(eta) * degree

    # the exact matrices are the float ones up to rounding
    h_shift = np.array(by_name["λ(H) >= ρ/N + 2ηV_i"].matrix, dtype=float)
    assert np.allclose(h_shift, h - alpha * np.eye(problem.dim), rtol=0, atol=1e-14)
    assert np.allclose(np.array(by_name["rank G <= 2"].matrix, dtype=float), g, rtol=0, atol=1e-14)

    # every claim holds here and numpy agrees
    assert by_name["Assumption 4: L'' in (0, c1]"].holds is True
    assert by_name["rank G <= 2"].holds is True
    assert by_name["rank G <= 2"].details["rank"] == np.linalg.matrix_rank(g) == 2
    assert by_name["λ(H) >= ρ/N + 2ηV_i"].holds is True and np.linalg.eigvalsh(h).min() >= alpha - 1e-12
    bound = problem.C * 0.25 / problem.sizes[node]
    g_eigs = np.linalg.eigvalsh(g)
    assert by_name["λ(G) <= Cc1/B_i"].holds is True and g_eigs.max() <= bound
    assert by_name["λ(G) >= -Cc1/B_i"].holds is True and g_eigs.min() >= -bound
    generalized = scipy.linalg.eigh(g, h, eigvals_only=True)  # eigenvalues of H⁻¹G
    assert by_name["λ(H⁻¹G) <= κ"].holds is True and generalized.max() <= kappa
    assert by_name["λ(H⁻¹G) >= -κ"].holds is True and generalized.min() >= -kappa
    assert by_name["κ <= 1/2"].holds is True and by_name["κ <= 1/2"].details["theorem_condition"] is True
    assert 2 * 0.25 < problem.sizes[node] / problem.C * alpha

    # the data are normalised in floats: the exact unit-ball verdict matches the exact norms
    norms = [sum(Fraction(float(v)) ** 2 for v in row) for row in np.vstack([problem.features[node], x_hat[None]])]
    assert by_name["||x||_2 <= 1"].holds is all(n <= 1 for n in norms)


def test_kappa_check_fails_when_the_theorem_condition_fails():
    # C = B_i and small ρ, tiny η: (B_i/C)(ρ/N + 2ηV_i) ≈ 1/30 < 2c1 = 1/2
    problem = make_problem(synthetic(60, 4, seed=0), 3, C=20.0, rho=0.1, seed=0)
    f = np.random.default_rng(3).standard_normal(problem.dim)
    checks = jacobian_eigenvalue_checks(problem, 0, 1e-6, 2, f)
    by_name = {c.name: c for c in checks}
    kappa_check = by_name["κ <= 1/2"]
    assert kappa_check.holds is False and kappa_check.details["theorem_condition"] is False
    kappa = Fraction(kappa_check.details["kappa"])
    assert kappa > Fraction(1, 2)
    _, _, alpha, kappa_float = _float_matrices(problem, 0, 1e-6, 2, f, problem.features[0][1], -problem.labels[0][0])
    assert float(kappa) == pytest.approx(kappa_float, rel=1e-12) and kappa_float > 0.5
    assert 2 * 0.25 >= problem.sizes[0] / problem.C * alpha
    # the eigenvalue bounds themselves still hold (they need no condition)
    for name in ("λ(H) >= ρ/N + 2ηV_i", "λ(G) <= Cc1/B_i", "λ(G) >= -Cc1/B_i", "λ(H⁻¹G) <= κ", "λ(H⁻¹G) >= -κ"):
        assert by_name[name].holds is True and by_name[name].verify()


def test_label_flip_replacement_gives_rank_at_most_one(small_problem):
    problem = small_problem
    x1, y1 = problem.features[0][0], problem.labels[0][0]
    f = np.random.default_rng(5).standard_normal(problem.dim)
    checks = jacobian_eigenvalue_checks(problem, 0, 0.5, 2, f, replacement=(x1, -y1))
    rank_check = next(c for c in checks if c.name == "rank G <= 2")
    # L'' is even: exactly, G would vanish; with float-evaluated curvatures G ∝ x1 x1ᵀ
    assert rank_check.holds is True and rank_check.details["rank"] <= 1


def test_curvature_at_zero_is_c1_and_bounds_still_hold(small_problem):
    checks = jacobian_eigenvalue_checks(small_problem, 2, 0.5, 2, np.zeros(small_problem.dim))
    curvature = checks[0]
    assert curvature.holds is True
    assert Fraction(curvature.details["min"]) == Fraction(curvature.details["max"]) == Fraction(1, 4)
    assert all(c.holds for c in checks[2:])


def test_jacobian_checks_validate_arguments(small_problem):
    f = np.zeros(small_problem.dim)
    with pytest.raises(InvalidConfiguration):
        jacobian_eigenvalue_checks(small_problem, 3, 0.5, 2, f)
    with pytest.raises(InvalidConfiguration):
        jacobian_eigenvalue_checks(small_problem, 0, 0.0, 2, f)
    with pytest.raises(InvalidConfiguration):
        jacobian_eigenvalue_checks(small_problem, 0, 0.5, 0, f)
    with pytest.raises(InvalidConfiguration):
        jacobian_eigenvalue_checks(small_problem, 0, 0.5, 2, np.zeros(small_problem.dim + 1))
    with pytest.raises(InvalidConfiguration):
        jacobian_eigenvalue_checks(small_problem, 0, 0.5, 2, f, replacement=(f, 0.5))
