"""Claim: on correct mechanisms the auditor's false-violation rate is at most 1 - confidence
(issue 15). Each correct mechanism is audited with many seeds and the violations are counted:
at most (1 - confidence) x runs may be flagged. ``ci`` runs 2 seeds per seeded mechanism (so none
may be flagged), ``thorough`` 100. With seeded mechanisms the count at these seeds is fixed, so the rule
holds or fails the same way every time.

A mechanism with randomness nobody can seed gives a fresh count each run, and that rule would then be a
false alarm itself: a tester whose rate is exactly 1 - confidence breaks it in 23 % of 5-seed runs. Its
count is tested instead with a one-sided binomial test (scipy.stats.binomtest) at level :data:`LEVEL`,
failing only where a rate of 1 - confidence gives so many flagged runs less than once in a thousand
(``ci`` runs 5 seeds of these, the fewest at which the test can fail: 4 of 5; ``thorough``: 14 of 100).

A valid test at 95 % may flag a mechanism whose claim is exactly tight (the Laplace mechanism's
tail events have likelihood ratio exactly e^ε) in up to 5 % of the seeds; the property is
that rate, not "never", which no tester valid at a stated confidence can promise."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings
from scipy.stats import binomtest

from admmcheck.audit import PrivacyClaim, Source, audit

TESTS = Path(__file__).resolve().parents[1] / "tests"
MECHANISMS, THIRD_PARTY = str(TESTS / "mechanisms.py"), str(TESTS / "third_party.py")
# (module, mechanism, neighbours, epsilon, delta, options): each exactly (epsilon, delta)-DP
CORRECT = [
    (MECHANISMS, "laplace", "scalar_pair", 1.0, 0.0, {}),
    (MECHANISMS, "gaussian", "vector_pair", 0.5, 1e-5, {}),
    (MECHANISMS, "noisy_max", "max_pair", 1.0, 0.0, {}),
    # issue 27: randomness nobody can seed, in both modes that accept it
    (THIRD_PARTY, "secrets_laplace", "scalar_pair", 1.0, 0.0, {"randomness": "unseeded"}),
    (THIRD_PARTY, "secrets_laplace", "scalar_pair", 1.0, 0.0, {"randomness": "auto"}),
    # issue 27: outputs that are labels or None, and outputs whose shape changes at random
    (THIRD_PARTY, "label_or_none", "xy_pair", 1.0, 0.0, {}),
    (MECHANISMS, "changes_shape", "scalar_pair", 1.0, 0.0, {}),
]
CONFIDENCE = 0.95
LEVEL = 0.001  # the binomial test's level: how rarely a correct auditor fails the unseeded property


def _assert_rate_at_most_one_minus_confidence(flagged: dict, runs: int, seeded: bool = True) -> None:
    """Fails where ``len(flagged)`` of ``runs`` is too many for a false-violation rate of 1 - confidence:
    above (1 - confidence) x runs where the runs are seeded, by the binomial test where they are not."""
    if seeded:
        assert len(flagged) <= (1 - CONFIDENCE) * runs, f"{len(flagged)} of {runs} seeds flagged: {flagged}"
        return
    p_value = binomtest(len(flagged), runs, 1 - CONFIDENCE, alternative="greater").pvalue
    assert p_value >= LEVEL, (f"{len(flagged)} of {runs} seeds flagged (p = {p_value:.2g} against a rate of "
                              f"{1 - CONFIDENCE:.2f}): {flagged}")


@pytest.mark.filterwarnings("ignore::admmcheck.foundations.errors.UnseededRandomness")
@pytest.mark.parametrize("module, mechanism, neighbours, epsilon, delta, options", CORRECT,
                         ids=[f"{c[1]}-{c[5].get('randomness', 'seeded')}" for c in CORRECT])
def test_false_violation_rate_is_at_most_one_minus_confidence(module, mechanism, neighbours, epsilon, delta,
                                                               options):
    seeded = "randomness" not in options
    runs = settings().max_examples // 5 if settings().max_examples >= 100 else 2 if seeded else 5  # see above
    seeds = np.random.default_rng(15).integers(0, 2**31 - 1, size=runs)
    flagged = {}
    for seed in seeds:
        neighbours_module = THIRD_PARTY if neighbours == "xy_pair" else MECHANISMS
        result = audit(Source(f"{module}:{mechanism}"), Source(f"{neighbours_module}:{neighbours}"),
                       PrivacyClaim(epsilon, delta), samples=4_000, confidence=CONFIDENCE, seed=int(seed), workers=2,
                       **options)
        if result.verdict == "violation":
            flagged[int(seed)] = result.epsilon_lower_bound
    _assert_rate_at_most_one_minus_confidence(flagged, runs, seeded)


@pytest.mark.filterwarnings("ignore::admmcheck.foundations.errors.UnseededRandomness")
@pytest.mark.parametrize("module, mechanism, neighbours, epsilon, delta, options", CORRECT,
                         ids=[f"{c[1]}-{c[5].get('randomness', 'seeded')}" for c in CORRECT])
def test_the_sequential_audit_keeps_the_false_violation_rate(module, mechanism, neighbours, epsilon, delta, options):
    """Issue 30: in sequential mode (testing by betting, stopped at the first look whose wealth reaches
    1/(1 - confidence)) a correct mechanism is flagged in at most 1 - confidence of the runs, however
    often the audit looked. ``ci`` runs one seed of the tight Laplace mechanism only (a sequential audit
    of a correct mechanism runs to its budget: seconds each), ``thorough`` 100 seeds of every one."""
    runs = settings().max_examples // 5 if settings().max_examples >= 100 else int(mechanism == "laplace")
    if runs == 0:
        pytest.skip("the thorough profile runs this one (HYPOTHESIS_PROFILE=thorough)")
    flagged = {}
    for seed in np.random.default_rng(30).integers(0, 2**31 - 1, size=runs):
        neighbours_module = THIRD_PARTY if neighbours == "xy_pair" else MECHANISMS
        result = audit(Source(f"{module}:{mechanism}"), Source(f"{neighbours_module}:{neighbours}"),
                       PrivacyClaim(epsilon, delta), samples=4_000, confidence=CONFIDENCE, seed=int(seed), workers=2,
                       sequential=True, **options)
        assert result.mode == "sequential"
        if result.verdict == "violation":
            flagged[int(seed)] = result.sequential["samples_used"][0]
        else:
            assert result.sequential["samples_used"] == [4_000, 4_000]
    _assert_rate_at_most_one_minus_confidence(flagged, runs, "randomness" not in options)


def test_a_search_over_100_candidate_pairs_keeps_the_false_violation_rate():
    """Issue 29: the neighbour search screens 100 candidate pairs of a correct mechanism (the sum of 50
    records in [0, 1] plus Laplace(1): epsilon = 1 exactly, tight at the pairs that move a record from
    one end of the box to the other) and bounds the one that looks worst on fresh samples. The choice
    is made on samples of its own, so at most 1 - confidence of the runs may be flagged: a search that
    bounded its favourite on the samples it chose it with would flag far more. ``ci`` runs 2 seeds,
    ``thorough`` 40."""
    from admmcheck.audit.inputs.neighbourhoods import Dataset, candidate_pairs, parse_domain
    from admmcheck.audit.running.settings import SearchSettings
    from admmcheck.audit.search import search_audit
    from admmcheck.audit.running.settings import AuditSettings

    records = np.linspace(0.01, 0.99, 50).reshape(50, 1)
    runs = max(1, settings().max_examples // 12)
    flagged = {}
    for seed in np.random.default_rng(29).integers(0, 2**31 - 1, size=runs):
        pairs = candidate_pairs(Dataset(records), "replace-one", parse_domain("box:0:1", 1), seed=int(seed))
        assert len(pairs) == 100
        result = search_audit(Source(f"{TESTS / 'search_mechanisms.py'}:correct_sum"), pairs, PrivacyClaim(1.0),
                              AuditSettings(samples=4_000, confidence=CONFIDENCE, seed=int(seed), workers=2),
                              SearchSettings(samples=500))
        assert result.pairs == 1
        if result.verdict == "violation":
            flagged[int(seed)] = (result.epsilon_lower_bound, result.search["found"]["change"])
    _assert_rate_at_most_one_minus_confidence(flagged, runs)
