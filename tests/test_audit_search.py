"""Issue 29, item 2 (partial): neighbours searched for the user, the search paid for inside the confidence."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from admmcheck.audit import PrivacyClaim, Source
from admmcheck.audit.inputs.neighbourhoods import Dataset, QueryAnswerPairs, candidate_pairs, parse_domain, read_dataset
from admmcheck.audit.running.settings import SearchSettings
from admmcheck.audit.search import search_audit
from admmcheck.audit.running.settings import AuditSettings
from admmcheck.foundations.errors import InvalidConfiguration, MechanismError

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


def test_a_fault_while_screening_names_the_candidate_and_the_screening_seed():
    pairs = candidate_pairs(Dataset(RECORDS), "add-remove")
    with pytest.raises(MechanismError, match=r"raises ValueError: expected 20 records, got 19 .*\(pair 0 is the "
                                             r"neighbour search's candidate record 0 removed, screened on seed \d+, "
                                             r"the screening's own stream\)"):
        search_audit(Source(f"{HERE / 'search_mechanisms.py'}:expects_twenty_records"), pairs, PrivacyClaim(1.0),
                     AuditSettings(samples=1_000, workers=1, seed=1), SearchSettings(samples=200))


def test_query_answer_patterns_are_statdps_table():
    """StatDP (Ding et al., CCS 2018), Table 2, for five answers, written out by hand."""
    pairs = QueryAnswerPairs(5)
    table = {pairs.describe(i)["pattern"]: (pairs[i].d0.tolist(), pairs[i].d1.tolist()) for i in range(len(pairs))}
    ones = [1.0] * 5
    assert table == {"one above": (ones, [2, 1, 1, 1, 1]), "one below": (ones, [0, 1, 1, 1, 1]),
                     "one above rest below": (ones, [2, 0, 0, 0, 0]), "one below rest above": (ones, [0, 2, 2, 2, 2]),
                     "half half": (ones, [0, 0, 2, 2, 2]), "all above": (ones, [2] * 5), "all below": (ones, [0] * 5),
                     "X shape": ([1, 1, 0, 0, 0], [0, 0, 1, 1, 1])}
    one = QueryAnswerPairs(1)  # the other patterns repeat these pairs for one answer
    assert [(one.describe(i)["pattern"], one[i].d0.tolist(), one[i].d1.tolist()) for i in range(len(one))] == [
        ("one above", [1], [2]), ("one below", [1], [0]), ("X shape", [0], [1])]
    with pytest.raises(InvalidConfiguration, match="queries=0"):
        QueryAnswerPairs(0)


def test_the_search_over_query_answer_patterns_finds_one_where_several_answers_move():
    """Laplace(1) on each of 5 answers claims epsilon 1: true for 'one above' (epsilon 1), false for the
    patterns moving k answers (epsilon k). The audit bounds only the pattern chosen, above 1 and at most 5."""
    result = search_audit(Source(f"{HERE / 'search_mechanisms.py'}:noisy_answers"), QueryAnswerPairs(5),
                          PrivacyClaim(1.0), AuditSettings(samples=4_000, workers=2, seed=3), SearchSettings(samples=1_000))
    found = result.search["found"]
    assert result.verdict == "violation" and 1.0 < result.epsilon_lower_bound <= 5.0
    assert found["pattern"] not in ("one above", "one below") and result.pairs == 1


def test_cli_searches_a_csv_dataset_names_the_pair_and_the_page_shows_it(tmp_path, capsys):
    from admmcheck.cli import main

    np.savetxt(tmp_path / "records.csv", RECORDS, delimiter=",", header="x", comments="")
    args = ["audit", "code", "--mechanism", f"{HERE / 'search_mechanisms.py'}:one_record_leaks", "--epsilon", "1",
            "--dataset", str(tmp_path / "records.csv"), "--neighbour-kind", "replace-one", "--record-domain", "box:0:1",
            "--samples", "4000", "--search-samples", "1000", "--search-candidates", "40", "--workers", "2", "--seed", "1",
            "--json", "--report", str(tmp_path / "page")]
    assert main(args) == 1
    out = json.loads(capsys.readouterr().out)
    search = out["neighbour_search"]
    assert search["found"]["change"] == "record 13 replaced by the box corner farthest from it (0)"
    assert search["candidates_screened"] == 40 and search["screening_samples_per_side"] == 1000
    assert out["wall_time_s"] >= search["screening_wall_time_s"]  # the time shown is the search's too
    page = (tmp_path / "page" / "audit.html").read_text()
    assert "Neighbours found by the search" in page and "record 13 replaced by the box corner farthest" in page


@pytest.mark.parametrize("neighbours, message", [
    ("--neighbors x.py:pair --neighbour-kind replace-one --dataset D --record-domain box:0:1",
     "--neighbors and neighbour_kind both given"),
    ("--neighbour-kind replace-one --dataset D --record-domain box:0:1 --search-keep 0",
     "--search-keep 0 must be a positive integer"),
    ("--neighbour-kind add-remove --dataset D --record-domain box:0:1", "--record-domain is where replaced records"),
    ("--neighbour-kind query-answers", "--queries is required"),
    ("--neighbour-kind query-answers --queries 3 --dataset D", "--dataset does not apply to query-answers"),
    ("--neighbour-kind replace-one --dataset D --label-column y", "no column named 'y'"),
    ("--neighbour-kind replace-one --dataset D", "need a record domain"),
])
def test_cli_refuses_what_cannot_be_searched_saying_what_to_write(tmp_path, capsys, neighbours, message):
    from admmcheck.cli import main

    np.savetxt(tmp_path / "records.csv", RECORDS, delimiter=",", header="x", comments="")
    args = ["audit", "code", "--mechanism", f"{HERE / 'search_mechanisms.py'}:correct_sum", "--epsilon", "1"]
    assert main(args + neighbours.replace(" D", f" {tmp_path / 'records.csv'}").split()) == 2
    assert message in capsys.readouterr().err


def test_reference_audits_search_every_record_and_one_given_record_is_not_searched():
    """PP on 3 nodes of 10 records: the search screens all 30 records, names the one bounded, and the
    white box's default and --record keep the hand-picked pair."""
    from admmcheck.commands.audit import MechanismAudit, run_mechanism_audit

    settings = AuditSettings(samples=2_000, workers=2, seed=0, randomness="seeded")
    searched = run_mechanism_audit(MechanismAudit("pp", settings=settings,
                                                  neighbour_search=SearchSettings(samples=200))).result
    search = searched.search
    assert search["candidates_screened"] == 30 and searched.pairs == 1
    node, index = search["found"]["where"]
    assert search["found"]["change"] == f"record {index} of node {node}: label-flip"
    given = run_mechanism_audit(MechanismAudit("pp", settings=settings, where=(2, 9))).result
    assert given.search is None and given.pairs == 1


def test_registered_candidates_list_every_place_of_each_family():
    from admmcheck.mechanisms.registry import REGISTRY
    from admmcheck.problems.online import online_linear_regression

    rounds = online_linear_regression(rounds=4, dim=3, nodes=3, seed=0)
    pairs = REGISTRY.mechanism("dpsda-c").candidate_pairs(rounds, "negated-target", 4)  # f_4 moves nothing released
    assert [pairs.describe(i)["change"] for i in range(len(pairs))] == [
        f"round {t}: target b -> -b (Definition 1: one f_t0 changed)" for t in (1, 2, 3)]
    np.testing.assert_array_equal(pairs[2].d1.targets[2], -rounds.targets[2])
    subset = REGISTRY.mechanism("dpsda-c").candidate_pairs(rounds, "negated-target", 4, most=2, seed=5)
    assert len(subset) == 2 and subset.total == 3
