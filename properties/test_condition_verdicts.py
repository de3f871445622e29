"""Claim: the exact condition verdicts agree with an independent float computation
(numpy eigenvalues of the symmetric part) wherever floats can tell; issue 5."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from admmcheck.conditions.certificates import decide_positive, verify_certificate
from admmcheck.conditions.graph import exact_graph
from admmcheck.conditions.madmm import MadmmSetting, theorem_31_checks
from admmcheck.conditions.radmm import RadmmSetting, radmm_conditions
from admmcheck.strategies import connected_networks

MARGIN = 1e-8  # floats decide only when the smallest eigenvalue is this far from 0

rationals = st.fractions(min_value=Fraction(1, 20), max_value=Fraction(3), max_denominator=20)


def _float_verdict(matrix, strict: bool) -> bool | None:
    m = np.array(matrix, dtype=float)
    smallest = np.linalg.eigvalsh((m + m.T) / 2)[0]
    if abs(smallest) < MARGIN:
        return None
    return bool(smallest > 0)


@given(connected_networks(min_nodes=2, max_nodes=7), rationals, st.fractions(0, 3, max_denominator=20), rationals)
def test_radmm_verdicts_match_numpy(network, eta, gamma, lipschitz):
    setting = RadmmSetting(exact_graph(network), eta, (lipschitz,))
    compared = 0
    for check in radmm_conditions(setting, gamma):
        assert check.verify()
        expected = _float_verdict(check.matrix, strict=True)
        if expected is not None:
            assert check.holds == expected, (check.name, network.adjacency.tolist(), eta, gamma, lipschitz)
            compared += 1
    assert compared >= 1


@given(
    connected_networks(min_nodes=2, max_nodes=6),
    st.lists(rationals, min_size=6, max_size=6),
    st.lists(st.fractions(1, 2, max_denominator=10), min_size=6, max_size=6),
)
def test_madmm_proof_claims_match_numpy(network, eta, growth):
    n = network.nodes
    setting = MadmmSetting(exact_graph(network), Fraction(1, 20), tuple(eta[:n]), tuple(growth[:n]), (Fraction(1, 10),), (Fraction(1, 4),))
    for check in theorem_31_checks(setting, 3)[1:]:
        assert check.verify()
        expected = _float_verdict(check.matrix, strict=False)
        if expected is not None:
            assert check.holds == expected, (check.name, network.adjacency.tolist(), eta, growth)


@given(st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_random_rational_matrices_match_numpy_and_certificates_recheck(n, seed):
    rng = np.random.default_rng(seed)
    m = rng.integers(-4, 5, size=(n, n)).astype(object)
    if seed % 2:
        m = m @ m.T  # semidefinite, often singular: the exact answer is needed there
    for strict in (True, False):
        cert = decide_positive(m.tolist(), strict=strict)
        assert verify_certificate(cert, m.tolist())
        smallest = np.linalg.eigvalsh(((m + m.T) / 2).astype(float))[0]
        if abs(smallest) > MARGIN:
            assert cert.holds == (smallest > 0)
        elif not strict and seed % 2:
            assert cert.holds  # m mᵀ is semidefinite however close to singular
