"""Claim: correct mechanisms are never flagged; over many seeds the false-violation rate of
the auditor is at most 1 - confidence (issue 15). ``ci`` runs a few seeds, ``thorough`` 50."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from admmcheck.audit import PrivacyClaim, Source, audit

MECHANISMS = str(Path(__file__).resolve().parents[1] / "tests" / "mechanisms.py")
CORRECT = [("laplace", "scalar_pair", 1.0, 0.0), ("gaussian", "vector_pair", 0.5, 1e-5),
           ("noisy_max", "max_pair", 1.0, 0.0)]
CONFIDENCE = 0.95


@settings(max_examples=settings().max_examples // 5 or 1)
@given(seed=st.integers(0, 2**31 - 1), case=st.sampled_from(CORRECT))
def test_correct_mechanisms_are_not_flagged(seed, case):
    mechanism, neighbours, epsilon, delta = case
    result = audit(Source(f"{MECHANISMS}:{mechanism}"), Source(f"{MECHANISMS}:{neighbours}"),
                   PrivacyClaim(epsilon, delta), samples=4_000, confidence=CONFIDENCE, seed=seed, workers=2)
    assert result.verdict == "no-violation-found", result.as_dict()
    assert result.epsilon_lower_bound <= epsilon
