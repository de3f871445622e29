"""Issue 27, item 0: what a neighbours callable returns is read one way only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from admmcheck.audit import Pair, Pairs, PrivacyClaim, Source, audit
from admmcheck.audit.inputs.contract import neighbour_pairs
from admmcheck.foundations.errors import InvalidConfiguration, MechanismError

THIRD_PARTY = Path(__file__).resolve().parent / "third_party.py"
X, Y0, Y1 = np.eye(2), np.array([1.0, -1.0]), np.array([-1.0, -1.0])


def test_a_pair_of_xy_datasets_is_one_pair():
    [pair] = neighbour_pairs(Pair((X, Y0), (X, Y1)))
    assert pair.d0[1] is Y0 and pair.d1[1] is Y1 and pair.dataset(1) is pair.d1


def test_a_plain_tuple_of_xy_datasets_is_refused_with_both_ways_to_write_it():
    with pytest.raises(InvalidConfiguration) as raised:
        neighbour_pairs(((X, Y0), (X, Y1)))
    message = str(raised.value)
    assert "((ndarray, ndarray), (ndarray, ndarray))" in message
    assert "Pair((X0, y0), (X1, y1))" in message and "Pairs([(a0, a1), (b0, b1)])" in message


def test_datasets_that_are_2_tuples_of_scalars():
    [pair] = neighbour_pairs(Pair((3.0, 1.5), (4.0, 1.5)))
    assert (pair.d0, pair.d1) == ((3.0, 1.5), (4.0, 1.5))
    with pytest.raises(InvalidConfiguration, match=r"\(\(float, float\), \(float, float\)\).*not guessed"):
        neighbour_pairs(((3.0, 1.5), (4.0, 1.5)))
    pairs = neighbour_pairs(Pairs([(3.0, 4.0), (1.5, 2.5)]))  # inside Pairs a 2-tuple is a pair
    assert [(p.d0, p.d1) for p in pairs] == [(3.0, 4.0), (1.5, 2.5)]


def test_plain_pairs_that_cannot_be_misread_are_one_pair():
    [pair] = neighbour_pairs((0.0, 1.0))
    assert (pair.d0, pair.d1) == (0.0, 1.0)
    [pair] = neighbour_pairs((np.zeros(2), np.ones(2)))
    assert pair.d1.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("produced, fix", [
    ([(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)], "Pairs"),      # three pairs as a plain list: never guessed
    ([(0.0, 1.0)], "Pairs"),
    ((p for p in [(0.0, 1.0)]), "Pairs"),
    ([Pair(0, 1), Pair(1, 2)], "Pairs"),
    (3.0, "Pair(d0, d1)"),
    ("ab", "Pair(d0, d1)"),
])
def test_anything_else_is_refused_with_the_fix(produced, fix):
    with pytest.raises(InvalidConfiguration, match=fix.replace("(", r"\(").replace(")", r"\)")):
        neighbour_pairs(produced)


def test_pairs_validates_its_items():
    with pytest.raises(InvalidConfiguration, match="item 1 is a float"):
        Pairs([(0, 1), 2.0])
    with pytest.raises(InvalidConfiguration, match="no pairs"):
        Pairs([])


def _audit(neighbours: str, mechanism: str = "label_sum_laplace", **kwargs):
    kwargs = {"samples": 4_000, "workers": 1, "seed": 1} | kwargs
    return audit(Source(f"{THIRD_PARTY}:{mechanism}"), Source(f"{THIRD_PARTY}:{neighbours}"), PrivacyClaim(1.0),
                 **kwargs)


def test_an_xy_audit_runs_on_the_one_pair_it_was_given():
    result = _audit("xy_pair")
    assert result.pairs == 1 and result.verdict == "no-violation-found"
    two = _audit("xy_pairs")
    assert two.pairs == 2


@pytest.mark.parametrize("neighbours", ["xy_plain", "scalar_tuple_plain"])
def test_an_ambiguous_return_stops_the_audit_before_any_sample(neighbours):
    with pytest.raises(MechanismError, match="not guessed: write Pair"):
        _audit(neighbours)


def test_scalar_tuple_datasets_audited_as_one_pair():
    result = _audit("scalar_tuple_pair", mechanism="count_laplace")
    assert result.pairs == 1 and result.verdict == "no-violation-found"
