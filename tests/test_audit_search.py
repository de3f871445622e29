"""Issue 29, item 2 (partial): neighbours searched for the user, the search paid for inside the confidence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from admmcheck.audit import PrivacyClaim, Source
from admmcheck.audit.neighbourhoods import Dataset, candidate_pairs, parse_domain, read_dataset
from admmcheck.audit.search import SearchSettings, search_audit
from admmcheck.audit.settings import AuditSettings
from admmcheck.errors import InvalidConfiguration

HERE = Path(__file__).resolve().parent
RECORDS = np.linspace(0.05, 0.95, 20).reshape(20, 1)  # as tests/search_mechanisms.py


def test_replace_one_candidates_are_the_domain_corners_and_label_flips_each_named():
    dataset = Dataset(np.array([[0.2, 0.9], [1.0, 0.0]]), np.array([1.0, -1.0]))
    pairs = candidate_pairs(dataset, "replace-one", parse_domain("box:0:1", 2))
    texts = [pairs.describe(i)["change"] for i in range(len(pairs))]
    assert "record 0 replaced by the box corner farthest from it (1, 0)" in texts
    assert "label of record 1 changed from -1 to 1" in texts
    flipped = pairs[texts.index("label of record 1 changed from -1 to 1")]
    assert flipped.d1[1].tolist() == [1.0, 1.0] and flipped.d0[1].tolist() == [1.0, -1.0]
    pair = pairs[texts.index("record 0 replaced by the box corner farthest from it (1, 0)")]
    np.testing.assert_array_equal(pair.d1[0], [[1.0, 0.0], [1.0, 0.0]])
    np.testing.assert_array_equal(pair.d0[0], dataset.features)
    removed = candidate_pairs(dataset, "add-remove")
    assert len(removed) == 2 and removed[1].d1[0].tolist() == [[0.2, 0.9]]
    ball = parse_domain("unit-ball", 2).extreme_points(np.array([0.6, 0.8]))
    np.testing.assert_allclose(ball[0][1], [-0.6, -0.8])


def test_bad_domains_and_datasets_are_refused_saying_how_to_write_them(tmp_path):
    with pytest.raises(InvalidConfiguration, match="box:LOW:HIGH"):
        parse_domain("box:1:0", 1)
    with pytest.raises(InvalidConfiguration, match="3 bounds for records of 2 numbers"):
        parse_domain("box:0:1,0:1,0:1", 2)
    with pytest.raises(InvalidConfiguration, match="need a record domain"):
        candidate_pairs(Dataset(RECORDS), "replace-one")
    (tmp_path / "d.csv").write_text("a,b\n1,0\n2,1\n")
    assert read_dataset(tmp_path / "d.csv", "b").labels.tolist() == [0.0, 1.0]
    with pytest.raises(InvalidConfiguration, match="no column named 'y' \\(its columns: a, b\\)"):
        read_dataset(tmp_path / "d.csv", "y")


def test_the_search_finds_the_one_record_that_leaks_names_it_and_reports_a_violation():
    """20 records, 40 candidate pairs (each record to both ends of [0, 1]); only record 13 leaks (epsilon 4)."""
    pairs = candidate_pairs(Dataset(RECORDS), "replace-one", parse_domain("box:0:1", 1))
    assert len(pairs) == 40
    result = search_audit(Source(f"{HERE / 'search_mechanisms.py'}:one_record_leaks"), pairs, PrivacyClaim(1.0),
                          AuditSettings(samples=4_000, workers=2, seed=1), SearchSettings(samples=1_000))
    assert result.verdict == "violation" and 1.0 < result.epsilon_lower_bound <= 4.0
    found = result.as_dict()["neighbour_search"]["found"]
    assert found["record"] == 13 and found["change"] == "record 13 replaced by the box corner farthest from it (0)"
    assert result.pairs == 1  # only the chosen pair was bounded: 1 - confidence is not split forty ways
