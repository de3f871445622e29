"""Issue 61: an estimator is one class. Registered here, in this module alone, it is chosen per event on the selection
split, and the audit's result, its JSON, the terminal and the audit page show it without an edit anywhere else; its
bound is recomputed here from the counts with SciPy's Beta quantiles."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from scipy import stats

from admmcheck.audit import AuditSettings, Source, audit
from admmcheck.audit.statistics.estimators import (ESTIMATORS, EventBound, TwoIntervals, epsilon_bound,
                                                   register_estimator)
from admmcheck.claims import ApproxDp, Claim
from admmcheck.report.audit_page import write_audit_page
from admmcheck.report.model import Reproducible

MECHANISMS = str(Path(__file__).with_name("mechanisms.py"))
SHARE = 0.7  # of an event's level, spent on the lower end of the side it is more likely under


class UnevenIntervals(TwoIntervals):
    """Two one-sided Clopper-Pearson intervals, SHARE of the level on p̲_a and the rest on p̄_b: valid by Boole's
    inequality for any share fixed before the bounding samples are drawn. It claims every event (its prediction is
    +inf), which is only a choice made on the selection split: the bound stays valid."""

    name = "uneven intervals (test)"
    method = "p_a's lower end at 0.7 of the level, p_b's upper end at 0.3"

    def bound(self, count_a: int, n_a: int, count_b: int, n_b: int, level: float, claim: Claim) -> EventBound:
        lower_a = stats.beta.ppf(SHARE * level, count_a, n_a - count_a + 1) if count_a else 0.0
        upper_b = stats.beta.ppf(1 - (1 - SHARE) * level, count_b + 1, n_b - count_b) if count_b < n_b else 1.0
        epsilon = float(epsilon_bound(lower_a, upper_b, claim.planning_point().delta))
        return EventBound(epsilon, float(claim.refuted_value(lower_a, upper_b)))

    def predicted(self, count_a: float, n_a: int, count_b: float, n_b: int, level: float) -> float:
        return math.inf


@pytest.fixture
def uneven():
    estimator = register_estimator(UnevenIntervals())
    yield estimator
    ESTIMATORS.remove(estimator)


def test_a_registered_estimator_bounds_the_events_and_the_result_the_terminal_and_the_page_show_it(uneven, tmp_path):
    result = audit(Source(spec=f"{MECHANISMS}:laplace"), Source(spec=f"{MECHANISMS}:scalar_pair"), ApproxDp(0.5),
                   AuditSettings(samples=6_000, workers=2, seed=5))
    assert result.estimator == uneven.name
    assert {row["estimator"] for row in result.candidates} == {uneven.name}
    deciding = max(result.candidates, key=lambda row: row["lower_bound"])
    (count_a, n_a), (count_b, n_b) = sorted(zip(deciding["counts"], deciding["n"]), reverse=True)  # a: more likely
    level = deciding["level"]
    # the same bound, from the quantile functions themselves: P(Bin(n, p) >= c) = level share at p = the lower end
    lower_a = stats.beta(count_a, n_a - count_a + 1).ppf(SHARE * level)
    upper_b = stats.beta(count_b + 1, n_b - count_b).isf((1 - SHARE) * level)
    assert stats.binom.sf(count_a - 1, n_a, lower_a) == pytest.approx(SHARE * level, rel=1e-6)
    assert result.epsilon_lower_bound == pytest.approx(max(math.log(lower_a / upper_b), 0.0), rel=1e-9)
    assert result.epsilon_lower_bound > 0.5  # a Laplace mechanism of epsilon 1: the claim of 0.5 is refuted
    assert result.verdict == "violation"
    assert f"  bounded by: {uneven.name}" in result.lines()
    assert result.as_dict()["estimator"] == uneven.name
    html = write_audit_page(Reproducible(result, "admmcheck audit code ..."), tmp_path)["html"].read_text()
    assert f"comes from the {uneven.name} estimator: p_a&#39;s lower end at 0.7 of the level" in html


def test_an_estimator_name_is_registered_once():
    with pytest.raises(ValueError, match="registered already"):
        register_estimator(TwoIntervals())
