"""Datasets: generators, the bundled set, the Adult loader and partitions."""

from __future__ import annotations

import numpy as np
import pytest

from admmcheck.problems.datasets import (
    breast_cancer,
    dataset_by_name,
    even_sizes,
    load_adult,
    normalize_features,
    partition,
    synthetic,
    uneven_sizes,
)
from admmcheck.foundations.errors import InvalidDataset


def test_synthetic_is_seeded_and_satisfies_the_assumptions():
    a, b = synthetic(100, 4, seed=7), synthetic(100, 4, seed=7)
    np.testing.assert_array_equal(a.features, b.features)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert not np.array_equal(a.features, synthetic(100, 4, seed=8).features)
    assert np.all(np.linalg.norm(a.features, axis=1) <= 1 + 1e-12)
    assert set(np.unique(a.labels)) == {-1.0, 1.0}


def test_breast_cancer_is_bundled_and_normalised():
    data = breast_cancer()
    assert data.features.shape == (569, 30)
    assert np.sum(data.labels == 1.0) == 357  # benign count of the Wisconsin set
    assert np.all(np.linalg.norm(data.features, axis=1) <= 1 + 1e-12)
    assert np.max(np.abs(data.features)) <= 1.0


def test_normalize_features_scales_columns_then_rows():
    x = np.array([[2.0, 0.0, 0.0], [1.0, 4.0, 0.0], [0.5, 1.0, 0.0]])
    out = normalize_features(x)
    # columns to max 1: [[1,0,0],[.5,1,0],[.25,.25,0]]; row 2 has norm sqrt(1.25) > 1
    np.testing.assert_allclose(out[0], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(out[1], np.array([0.5, 1.0, 0.0]) / np.sqrt(1.25))
    np.testing.assert_allclose(out[2], [0.25, 0.25, 0.0])


ADULT_ROWS = [
    "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K",
    "50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 13, United-States, >50K",
    "38, Private, 215646, HS-grad, 9, Divorced, Handlers-cleaners, Not-in-family, Black, Female, 0, 0, 40, ?, <=50K",
    "53, Private, 234721, 11th, 7, Married-civ-spouse, Handlers-cleaners, Husband, Black, Male, 0, 0, 40, Cuba, >50K",
]


def test_adult_loader_applies_the_paper_preprocessing(tmp_path):
    (tmp_path / "adult.data").write_text("\n".join(ADULT_ROWS[:3]) + "\n\n")
    (tmp_path / "adult.test").write_text("|1x3 Cross validator\n" + ADULT_ROWS[3].replace(">50K", ">50K.") + "\n")
    data = load_adult([tmp_path])
    # row 3 has a missing native-country and is dropped
    assert data.samples == 3
    np.testing.assert_array_equal(data.labels, [-1.0, 1.0, 1.0])
    # 6 continuous + workclass 3 + education 2 + marital 2 + occupation 3 + relationship 2
    # + race 2 + sex 1 + country 2 + bias 1
    assert data.dim == 6 + 3 + 2 + 2 + 3 + 2 + 2 + 1 + 2 + 1
    assert np.all(np.linalg.norm(data.features, axis=1) <= 1 + 1e-12)
    assert load_adult([tmp_path / "adult.data", tmp_path / "adult.test"], bias=False).dim == data.dim - 1


def test_adult_loader_reports_bad_files(tmp_path):
    with pytest.raises(InvalidDataset, match="does not exist"):
        load_adult([tmp_path / "missing.csv"])
    bad = tmp_path / "bad.csv"
    bad.write_text("1, 2, 3\n")
    with pytest.raises(InvalidDataset, match=r"bad.csv:1 has 3 fields, expected 15"):
        load_adult([bad])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InvalidDataset, match="holds neither adult.data nor adult.test"):
        load_adult([empty])


def test_even_partition_covers_every_row_once():
    data = synthetic(103, 3, seed=0)
    parts = partition(data, 5, seed=1)
    assert [len(y) for _, y in parts] == list(even_sizes(103, 5)) == [21, 21, 21, 20, 20]
    stacked = np.vstack([x for x, _ in parts])
    assert sorted(map(tuple, stacked)) == sorted(map(tuple, data.features))


def test_uneven_partition_uses_given_sizes_and_is_seeded():
    data = synthetic(100, 3, seed=0)
    sizes = uneven_sizes(100, 4, seed=2, min_size=5)
    assert sum(sizes) == 100 and min(sizes) >= 5 and len(set(sizes)) > 1
    parts = partition(data, 4, seed=3, sizes=sizes)
    assert [len(y) for _, y in parts] == list(sizes)
    again = partition(data, 4, seed=3, sizes=sizes)
    np.testing.assert_array_equal(parts[2][0], again[2][0])


def test_partition_errors_name_the_problem():
    data = synthetic(10, 2, seed=0)
    with pytest.raises(InvalidDataset, match="fewer than nodes=11"):
        partition(data, 11)
    with pytest.raises(InvalidDataset, match="contain an empty node"):
        partition(data, 2, sizes=(10, 0))
    with pytest.raises(InvalidDataset, match="sizes sum to 12 but"):
        partition(data, 2, sizes=(6, 6))
    with pytest.raises(InvalidDataset, match="got 3 sizes for 2 nodes"):
        partition(data, 2, sizes=(3, 3, 3))


def test_dataset_spec_errors():
    with pytest.raises(InvalidDataset, match="unknown dataset 'mnist'"):
        dataset_by_name("mnist")
    with pytest.raises(InvalidDataset, match="adult: needs a path"):
        dataset_by_name("adult:")


def test_the_shipped_adult_files_are_the_official_ones_and_load_with_no_path(capsys):
    import gzip
    import hashlib
    import json

    from admmcheck.cli import main
    from admmcheck.problems.datasets import bundled_adult_folder, dataset_by_name

    folder = bundled_adult_folder()
    digests = {name: hashlib.sha256(gzip.decompress((folder / f"{name}.gz").read_bytes())).hexdigest()
               for name in ("adult.data", "adult.test")}
    assert digests == {"adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
                       "adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05"}
    assert "CC BY 4.0" in (folder / "README.md").read_text()
    data = dataset_by_name("adult")
    assert data.features.shape == (45_222, 105) and set(np.unique(data.labels)) == {-1.0, 1.0}
    assert np.linalg.norm(data.features, axis=1).max() <= 1.0 + 1e-12
    # 11,208 of the 45,222 complete rows earn >50K (UCI's own count for the two files)
    assert int((data.labels == 1).sum()) == 11_208
    assert main(["bound", "pp", "--dataset", "adult", "--nodes", "5", "--iterations", "3", "--json"]) == 0
    assert sum(json.loads(capsys.readouterr().out)["setting"]["sizes"]) == 45_222
