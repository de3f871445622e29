"""Exact PSD/PD decisions, certificates, intervals and R-ADMM Theorem III.1 (issue 5)."""

from __future__ import annotations

import dataclasses
from fractions import Fraction as F

import numpy as np
import pytest
import sympy

from admmcheck.conditions.certificates import (
    Certificate,
    Witness,
    certificate_defect,
    decide_positive,
    quadratic_form,
    verify_certificate,
)
from admmcheck.conditions.gamma_search import UniformWitness, minimal_gamma, verify_uniform_witness
from admmcheck.conditions.graph import exact_graph
from admmcheck.conditions.intervals import (
    Interval,
    largest_eigenvalue,
    range_projector,
    smallest_nonzero_eigenvalue,
    sqrt_interval,
    verify_threshold_interval,
)
from admmcheck.conditions.radmm import GAMMA, RadmmSetting, condition_24, condition_25, condition_27, radmm_conditions
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.problems.networks import network_by_name, ring


def test_definite_semidefinite_and_indefinite_are_decided_with_checkable_certificates():
    pd = [[2, -1, 0], [-1, 2, -1], [0, -1, 2]]
    psd = [[1, -1, 0], [-1, 2, -1], [0, -1, 1]]  # path Laplacian: singular
    indefinite = [[1, 2], [2, 1]]
    for matrix, strict, holds in [
        (pd, True, True), (pd, False, True), (psd, True, False), (psd, False, True),
        (indefinite, True, False), (indefinite, False, False),
    ]:
        cert = decide_positive(matrix, strict=strict)
        assert cert.holds is holds
        assert verify_certificate(cert, matrix)
        if not holds:
            value = quadratic_form(matrix, cert.evidence.vector)
            assert value == cert.evidence.value and (value < 0 or (strict and value == 0))


def test_non_symmetric_matrices_are_decided_on_their_quadratic_form():
    # eigenvalues 1, 1 (both positive) but x = (1, -1) gives xᵀMx = 1 - 3 + 1 = -1
    m = [[1, 3], [0, 1]]
    cert = decide_positive(m, strict=False)
    assert not cert.holds and quadratic_form(m, cert.evidence.vector) < 0
    # a rotation-like matrix with complex eigenvalues is positive definite as a form
    r = [[1, 4], [-4, 1]]
    assert decide_positive(r, strict=True).holds


def test_boundary_cases_floats_cannot_decide_are_decided_exactly():
    v = sympy.Matrix([F(1, 3), F(1, 7), F(1, 11)])
    w = sympy.Matrix([F(2, 9), F(-5, 13), F(1, 17)])
    singular = v * v.T + w * w.T  # rank 2, exactly positive semidefinite
    numeric = np.linalg.eigvalsh(np.array(singular.tolist(), dtype=float))
    assert abs(numeric[0]) < 1e-15  # floats see "zero give or take rounding"
    assert decide_positive(singular, strict=False).holds
    assert not decide_positive(singular, strict=True).holds
    # an indefinite matrix by 1e-30: floats round it to semidefinite
    nudged = singular - F(1, 10**30) * sympy.eye(3)
    assert np.linalg.eigvalsh(np.array(nudged.tolist(), dtype=float))[0] > -1e-15
    cert = decide_positive(nudged, strict=False)
    assert not cert.holds and verify_certificate(cert, nudged)


def test_tampered_certificates_are_rejected():
    matrix = [[4, 2, 0], [2, 3, 1], [0, 1, 2]]
    cert = decide_positive(matrix)
    assert cert.holds and verify_certificate(cert, matrix)
    f = cert.evidence
    pivots = list(f.pivots)
    pivots[0] += 1
    lower = [list(r) for r in f.lower]
    lower[2][0] += F(1, 1000)
    tampered = [
        dataclasses.replace(cert, evidence=dataclasses.replace(f, pivots=tuple(pivots))),
        dataclasses.replace(cert, evidence=dataclasses.replace(f, lower=tuple(map(tuple, lower)))),
        dataclasses.replace(cert, evidence=dataclasses.replace(f, order=tuple(reversed(f.order)))),
        dataclasses.replace(cert, holds=False),
    ]
    for bad in tampered:
        assert not verify_certificate(bad, matrix), bad
    # the factorization is valid for the matrix it was computed from, not another one
    assert certificate_defect(cert, [[4, 2, 0], [2, 3, 1], [0, 1, 3]]) is not None
    indefinite = [[1, 2], [2, 1]]
    w = decide_positive(indefinite, strict=False)
    assert verify_certificate(w, indefinite)
    for bad in [
        dataclasses.replace(w, evidence=Witness((F(1), F(1)), w.evidence.value)),  # form is +6
        dataclasses.replace(w, evidence=Witness(w.evidence.vector, w.evidence.value - 1)),  # wrong value
        dataclasses.replace(w, evidence=Witness((F(0), F(0)), F(0))),
    ]:
        assert not verify_certificate(bad, indefinite)
    # JSON round trip keeps a certificate checkable
    assert verify_certificate(Certificate.from_dict(cert.as_dict()), matrix)


def test_irrational_entries_are_refused_rather_than_rounded():
    with pytest.raises(InvalidConfiguration, match="not rational"):
        decide_positive(sympy.Matrix([[sympy.sqrt(2)]]))


@pytest.mark.parametrize("kind,n", [("ring", 5), ("path", 4), ("star", 6), ("complete", 4)])
def test_laplacian_pseudo_inverse_and_spectral_intervals(kind, n):
    graph = exact_graph(network_by_name(kind, n))
    lap = np.array(graph.laplacian.tolist(), dtype=float)
    pinv = graph.laplacian_pinv
    assert np.allclose(np.array(pinv.tolist(), dtype=float), np.linalg.pinv(lap), atol=1e-12)
    assert graph.laplacian * pinv * graph.laplacian == graph.laplacian  # Moore-Penrose, exactly
    assert pinv * graph.laplacian * pinv == pinv
    eig = np.linalg.eigvalsh(lap)
    low = smallest_nonzero_eigenvalue(graph.laplacian)
    high = largest_eigenvalue(graph.laplacian)
    assert low.width <= F(1, 10**9) and high.width <= F(1, 10**9)
    assert float(low.lo) - 1e-12 <= eig[1] <= float(low.hi) + 1e-12
    assert float(high.lo) - 1e-12 <= eig[-1] <= float(high.hi) + 1e-12
    assert verify_threshold_interval(low, graph.laplacian, range_projector(graph.laplacian))


def test_square_root_bounds_are_exact_for_squares_and_enclose_otherwise():
    assert sqrt_interval(Interval(F(9, 4), F(9, 4))) == Interval(F(3, 2), F(3, 2))
    two = sqrt_interval(Interval(F(2), F(2)))
    assert two.lo**2 <= 2 <= two.hi**2 and two.width < F(1, 10**11)


def _setting(kind: str, n: int) -> RadmmSetting:
    return RadmmSetting(exact_graph(network_by_name(kind, n)), F(1, 2), (F(1, 4),))


def test_26_27_are_24_25_at_l_equal_mu_equal_2():
    setting = _setting("ring", 5)
    assert sympy.simplify(condition_25(setting, GAMMA, 2, 2) - condition_27(setting, GAMMA)) == sympy.zeros(5, 5)
    assert condition_24(setting, F(1, 3)) == condition_24(setting, F(1, 3), 2, 2)


def test_radmm_condition_matrices_match_an_independent_float_construction():
    net = ring(5)
    eta, gamma, m = 0.5, 0.3, 0.25
    a, deg = net.adjacency.astype(float), net.degrees.astype(float)
    d, lap, sig = np.diag(deg), np.diag(deg) - a, np.diag(deg) + a
    dt_inv = np.diag(1 / (2 * eta * deg + gamma))
    sigma = min(2 * eta * deg + gamma)
    dm = m**2 * np.eye(5)
    m26 = np.eye(5) + eta * sig @ dt_inv - 4 / (2 * sigma) / eta * dm @ np.linalg.pinv(lap)
    m27 = eta * sig - 2 * eta * sig @ dt_inv * eta @ d - 2 / sigma * dm
    setting = RadmmSetting(exact_graph(net), F(1, 2), (F(1, 4),))
    assert np.allclose(np.array(condition_24(setting, F(3, 10)).tolist(), dtype=float), m26, atol=1e-12)
    assert np.allclose(np.array(condition_25(setting, F(3, 10)).tolist(), dtype=float), m27, atol=1e-12)


def test_proof_claims_fail_where_the_algebra_says_they_must():
    # bipartite graph: D + A is singular, so η(D+A)D̃⁻¹ is not positive definite, and
    # R_2 of (42) vanishes on the all-ones vector for every graph
    checks = {c.name: c for c in radmm_conditions(_setting("ring", 4), F(1))}
    assert checks["App. I (35): η(D+A)D̃⁻¹ ≻ 0"].holds is False
    assert checks["App. I (42): R_2 ≻ 0 on R^N"].holds is False
    assert checks["App. I (42): R_2 ≻ 0 on range(D-A)"].holds is True
    assert all(c.verify() for c in checks.values())
    odd = {c.name: c for c in radmm_conditions(_setting("ring", 5), F(1))}
    assert odd["App. I (35): η(D+A)D̃⁻¹ ≻ 0"].holds is True


def test_minimal_gamma_is_certified_at_both_ends():
    setting = _setting("complete", 4)
    search = minimal_gamma(setting)
    lo, hi = search.interval
    assert lo == F(1, 8) and hi - lo <= F(1, 10**6)  # det of (27) has the rational root 1/8
    for name, cert in search.fails_at_lo.items():
        builder = condition_24 if name == "(26)" else condition_25
        assert not cert.holds and verify_certificate(cert, builder(setting, lo))
    assert set(search.holds_at_hi) == {"(26)", "(27)"}
    assert verify_certificate(search.holds_at_hi["(26)"], condition_24(setting, hi))
    assert verify_certificate(search.holds_at_hi["(27)"], condition_25(setting, hi))
    # independent float check just above and below the certified interval
    above = np.array(condition_25(setting, hi + F(1, 1000)).tolist(), dtype=float)
    below = np.array(condition_25(setting, lo - F(1, 1000)).tolist(), dtype=float)
    assert np.linalg.eigvalsh((above + above.T) / 2)[0] > 0 > np.linalg.eigvalsh((below + below.T) / 2)[0]


def test_no_gamma_certificate_for_a_bipartite_graph_and_its_verifier():
    setting = _setting("ring", 4)
    search = minimal_gamma(setting)
    assert search.interval is None
    witness = search.no_gamma_certificate
    assert isinstance(witness, UniformWitness) and witness.condition == "(27)"
    assert verify_uniform_witness(witness, lambda g: condition_25(setting, g))
    tampered = dataclasses.replace(witness, vector=tuple(F(1) for _ in witness.vector))
    assert not verify_uniform_witness(tampered, lambda g: condition_25(setting, g))


# ------------------------------------------------------------------ M-ADMM Theorems 3.1 / 3.2
from admmcheck.conditions.madmm import MadmmSetting, spectral_quantities, theorem_31_checks, theorem_32_checks  # noqa: E402

PAPER_ETA1 = (F(11, 20), F(13, 20), F(3, 5), F(11, 20), F(3, 5))  # §5.1: 0.55, 0.65, 0.6, 0.55, 0.6
PAPER_GROWTH = (F(101, 100), F(103, 100), F(11, 10), F(6, 5), F(51, 50))


def _float_madmm_matrices(eta1, growth, theta, t):
    net = ring(5)
    a, deg = net.adjacency.astype(float), net.degrees.astype(float)
    lap, sig = np.diag(deg) - a, np.diag(deg) + a
    w = lambda s: np.diag([float(e) * float(q) ** (s - 1) for e, q in zip(eta1, growth)])  # noqa: E731
    return w, lap, sig


def test_madmm_schedule_condition_is_exact_for_the_geometric_schedule():
    graph = exact_graph(ring(5))
    ok = MadmmSetting(graph, F(1, 2), PAPER_ETA1, PAPER_GROWTH, (F(1, 10),), (F(1, 4),))
    assert theorem_31_checks(ok, 5)[0].holds
    shrinking = MadmmSetting(graph, F(1, 2), PAPER_ETA1, (F(99, 100),), (F(1, 10),), (F(1, 4),))
    low = MadmmSetting(graph, F(3, 5), PAPER_ETA1, PAPER_GROWTH, (F(1, 10),), (F(1, 4),))
    assert not theorem_31_checks(shrinking, 5)[0].holds
    assert "eta_1(1)=11/20 < theta" in theorem_31_checks(low, 5)[0].details["failures"]


def test_madmm_proof_claims_on_the_paper_schedule_agree_with_floats():
    setting = MadmmSetting(exact_graph(ring(5)), F(1, 2), PAPER_ETA1, PAPER_GROWTH, (F(1, 10),), (F(1, 4),))
    checks = theorem_31_checks(setting, 20)
    w, lap, sig = _float_madmm_matrices(PAPER_ETA1, PAPER_GROWTH, 0.5, 1)
    floats = {
        "App. B (38)": lambda t: (w(t + 1) - 0.5 * np.eye(5)) @ lap,
        "App. B (41)": lambda t: (w(t + 1) - w(t)) @ sig,
        "App. B: W(t)(D+A)": lambda t: w(t) @ sig,
    }
    for check in checks[1:]:
        assert check.verify()
        build = next(f for prefix, f in floats.items() if check.name.startswith(prefix))
        m = build(check.details["t"])
        smallest = np.linalg.eigvalsh((m + m.T) / 2)[0]
        assert (smallest >= -1e-12) == check.holds, (check.name, smallest)
        if not check.holds:  # the float eigenvalues of the product itself are all >= 0
            assert np.all(np.linalg.eigvals(m).real >= -1e-12) or check.name.startswith("App. B: W")


def test_madmm_spectral_quantities_enclose_numpy_singular_values():
    setting = MadmmSetting(exact_graph(ring(5)), F(1, 2), PAPER_ETA1, PAPER_GROWTH, (F(1, 10),), (F(1, 4),))
    q = spectral_quantities(setting, 3)
    w, lap, sig = _float_madmm_matrices(PAPER_ETA1, PAPER_GROWTH, 0.5, 3)
    bar = np.linalg.svd((w(3) - 0.5 * np.eye(5)) @ lap, compute_uv=False)
    checks = [
        (q.sigma_tilde_max, np.linalg.svd(w(3) @ sig, compute_uv=False).max()),
        (q.sigma_bar_max_sq, bar.max() ** 2),
        (q.sigma_bar_min, bar[bar > 1e-9].min()),
        (q.sigma_min_laplacian, np.linalg.eigvalsh(lap)[1]),
    ]
    for interval, value in checks:
        assert float(interval.lo) - 1e-12 <= value <= float(interval.hi) + 1e-12 and interval.width < F(1, 10**8)


def test_theorem_32_lower_bound_23_violates_22_on_the_paper_setting():
    """(23) is claimed to be an admissible δ; at t = 1 of §5.1 it is not (checked in floats too)."""
    setting = MadmmSetting(exact_graph(ring(5)), F(1, 2), PAPER_ETA1, PAPER_GROWTH, (F(1, 10),), (F(1, 4),))
    checks = {c.name: c for c in theorem_32_checks(setting, 1, F(1, 100), 2)}
    assert checks["(21)"].holds and checks["(22)"].holds
    claim = checks["(23) satisfies (21)-(22)"]
    assert claim.holds is False and claim.verify()
    delta = float(F(claim.details["delta_23"]["lo"]))
    w, lap, sig = _float_madmm_matrices(PAPER_ETA1, PAPER_GROWTH, 0.5, 1)
    s = np.linalg.svd
    tilde = s(w(1) @ sig, compute_uv=False).max()
    bar = s((w(1) - 0.5 * np.eye(5)) @ lap, compute_uv=False)
    lam2 = np.linalg.eigvalsh(lap)[1]
    bar_min = bar[bar > 1e-9].min()
    delta_float = min(0.5 * lam2 / (4 * tilde), (0.2 + 2 * bar_min) / ((4 * 0.25**2 + 2 * bar.max() ** 2) / (0.5 * lam2) + tilde))
    bounds = claim.details["delta_23"]
    assert bounds["lo_float"] - 1e-12 <= delta_float <= bounds["hi_float"] + 1e-12
    coefficient = (2 * bar.max() ** 2 + 4 * 0.25**2) / (0.5 * lam2) * np.eye(5)
    r = 2 * (w(1) - 0.5 * np.eye(5)) @ lap + 0.2 * np.eye(5) - delta * (coefficient + w(1) @ sig)
    assert np.linalg.eigvalsh((r + r.T) / 2)[0] < -1e-3
