"""Datasets and their partition across nodes.

* :func:`synthetic` — seeded linearly separable-with-noise data;
* :func:`breast_cancer` — scikit-learn's bundled Wisconsin breast-cancer set (offline);
* :func:`load_adult` — the UCI Adult CSV files given by path, preprocessed as in §5 of
  the M-ADMM paper; :func:`bundled_adult` — the official files shipped inside the package;
* :func:`partition` — even or uneven, seeded split of a dataset into node datasets D_i.

Every dataset returned here satisfies the papers' assumptions: labels in {-1, +1} and
rows with ||x||_2 <= 1.
"""

from __future__ import annotations

import csv
import gzip
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from admmcheck.foundations.errors import InvalidDataset
from admmcheck.foundations.inputs import read_text_file
from admmcheck.problems import ConsensusProblem, problem_from_partition


@dataclass(frozen=True, eq=False)
class Dataset:
    """A labelled dataset: ``features`` (n, d), ``labels`` (n,) in {-1, +1}."""

    features: np.ndarray
    labels: np.ndarray
    name: str

    @property
    def samples(self) -> int:
        """Number of rows n."""
        return self.features.shape[0]

    @property
    def dim(self) -> int:
        """Feature dimension d."""
        return self.features.shape[1]


def normalize_features(features: np.ndarray) -> np.ndarray:
    """Scale columns to a largest absolute value of 1, then rows to ``||x||_2 <= 1`` (M-ADMM paper §5, steps 3-4).

    Columns that are identically zero are left at zero. A row whose norm already is at
    most 1 is left as it is; longer rows are divided by their norm.
    """
    x = np.asarray(features, dtype=np.float64)
    column_max = np.max(np.abs(x), axis=0)
    x = x / np.where(column_max > 0, column_max, 1.0)
    row_norm = np.linalg.norm(x, axis=1)
    return x / np.maximum(row_norm, 1.0)[:, None]


def synthetic(
    samples: int = 250, dim: int = 10, seed: int = 0, label_noise: float = 0.1
) -> Dataset:
    """Return a seeded synthetic binary classification set with ||x||_2 <= 1.

    Features are Gaussian, labels are sign(x . w) for a random w, each flipped with
    probability ``label_noise`` (so the data are not separable and the optimum is interior).
    """
    if samples < 1 or dim < 1:
        raise InvalidDataset(f"synthetic data needs samples >= 1 and dim >= 1, got {samples}, {dim}")
    if not 0.0 <= label_noise < 0.5:
        raise InvalidDataset(f"label_noise={label_noise!r} must lie in [0, 0.5)")
    rng = np.random.default_rng(seed)
    raw = rng.standard_normal((samples, dim))
    weights = rng.standard_normal(dim)
    labels = np.where(raw @ weights >= 0.0, 1.0, -1.0)
    flip = rng.random(samples) < label_noise
    labels[flip] = -labels[flip]
    features = raw / np.maximum(np.linalg.norm(raw, axis=1), 1.0)[:, None]
    return Dataset(features, labels, name=f"synthetic(n={samples},d={dim},seed={seed})")


def breast_cancer() -> Dataset:
    """Return scikit-learn's bundled breast-cancer set (569 x 30), preprocessed like Adult.

    Labels: malignant -> -1, benign -> +1. Columns scaled to max 1, rows to norm <= 1.
    """
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer()
    labels = np.where(bunch.target == 1, 1.0, -1.0)
    return Dataset(normalize_features(bunch.data), labels, name="breast-cancer")


ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
)
ADULT_CONTINUOUS = (
    "age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week",
)


def adult_files(paths: Sequence[str | Path]) -> list[Path]:
    """The Adult files ``paths`` name: files as given, a folder's ``adult.data`` and ``adult.test`` (or their
    ``.gz``)."""
    files: list[Path] = []
    for entry in paths:
        p = Path(entry)
        if p.is_dir():
            found = [p / name for name in ("adult.data", "adult.test") if (p / name).is_file()]
            if not found:  # the gzip-compressed official files, as ../shared/data/adult holds them
                found = [p / name for name in ("adult.data.gz", "adult.test.gz") if (p / name).is_file()]
            if not found:
                raise InvalidDataset(
                    f"directory {p} holds neither adult.data nor adult.test (nor their .gz); pass the CSV files"
                )
            files.extend(found)
        elif p.is_file():
            files.append(p)
        else:
            raise InvalidDataset(f"Adult file {p} does not exist; pass the path of adult.data/adult.test")
    return files


def read_adult_rows(path: Path, keep_missing: bool = False) -> tuple[list[list[str]], int]:
    """The rows of one Adult file (its fields stripped) and how many were dropped for a missing value ("?"), unless
    ``keep_missing`` (then none is: a9a keeps them)."""
    if path.name.endswith(".gz"):
        try:
            text = gzip.decompress(path.read_bytes()).decode("utf-8")
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise InvalidDataset(f"{path} is not a gzip-compressed Adult CSV file ({exc})") from None
    else:
        text = read_text_file(path, "Adult CSV file", InvalidDataset, "the official adult.data/adult.test rows")
    rows: list[list[str]] = []
    dropped = 0
    with io.StringIO(text, newline="") as handle:
        for line_number, record in enumerate(csv.reader(handle), start=1):
            fields = [field.strip() for field in record]
            if not fields or all(field == "" for field in fields):
                continue
            if len(fields) == 1 and fields[0].startswith("|"):
                continue  # the "|1x3 Cross validator" banner of adult.test
            if len(fields) != len(ADULT_COLUMNS):
                raise InvalidDataset(
                    f"{path}:{line_number} has {len(fields)} fields, expected "
                    f"{len(ADULT_COLUMNS)} ({', '.join(ADULT_COLUMNS)})"
                )
            if not keep_missing and any(field in ("?", "") for field in fields):
                dropped += 1
                continue
            rows.append(fields)
    return rows, dropped


def load_adult(paths: Sequence[str | Path], bias: bool = True, drop_first: bool = False) -> Dataset:
    """Load UCI Adult CSV files and preprocess them as in §5 of the M-ADMM paper.

    Steps: (1) drop rows with a missing value ("?"); (2) one-hot encode each categorical
    column (categories taken from the files given); (3) scale columns to max 1; (4)
    scale rows to ||x||_2 <= 1; (5) labels ">50K" -> +1, "<=50K" -> -1 (the trailing
    "." of adult.test is accepted). ``paths`` are files or a directory holding
    ``adult.data``/``adult.test``.

    On both official files this gives 45,222 rows and 104 columns from steps (1)-(2);
    with ``bias=True`` (default) a constant feature is appended, giving the 105
    dimensions the paper reports (the paper does not say where its 105th column comes
    from; an intercept is our reading).

    ``drop_first`` leaves out the first category of every categorical column (reference
    coding): with the intercept the model class is the same, and the design has full column
    rank, which the ADMM-sharing paper's Assumption 1.1 needs of every party's block.
    Files ending in ``.gz`` are read decompressed.
    """
    rows: list[list[str]] = []
    for file in adult_files(paths):
        file_rows, _ = read_adult_rows(file)
        rows.extend(file_rows)
    if not rows:
        raise InvalidDataset(f"no complete rows found in {list(paths)}")
    index = {name: k for k, name in enumerate(ADULT_COLUMNS)}
    columns: list[np.ndarray] = []
    for name in ADULT_COLUMNS[:-1]:
        values = [row[index[name]] for row in rows]
        if name in ADULT_CONTINUOUS:
            try:
                columns.append(np.array(values, dtype=np.float64)[:, None])
            except ValueError as exc:
                raise InvalidDataset(f"column {name!r} holds a non-numeric value: {exc}") from exc
        else:
            categories = sorted(set(values))
            lookup = {c: k for k, c in enumerate(categories)}
            onehot = np.zeros((len(values), len(categories)))
            onehot[np.arange(len(values)), [lookup[v] for v in values]] = 1.0
            columns.append(onehot[:, 1:] if drop_first else onehot)
    if bias:
        columns.append(np.ones((len(rows), 1)))
    labels_raw = [row[index["income"]].rstrip(".") for row in rows]
    unknown = sorted(set(labels_raw) - {">50K", "<=50K"})
    if unknown:
        raise InvalidDataset(f"unexpected income labels {unknown[:5]}; expected '>50K' or '<=50K'")
    labels = np.where(np.array(labels_raw) == ">50K", 1.0, -1.0)
    features = normalize_features(np.hstack(columns))
    return Dataset(features, labels, name="adult")


def even_sizes(total: int, nodes: int) -> tuple[int, ...]:
    """Sizes of an even split of ``total`` rows over ``nodes`` (differ by at most one)."""
    base, extra = divmod(total, nodes)
    return tuple(base + (1 if k < extra else 0) for k in range(nodes))


def uneven_sizes(total: int, nodes: int, seed: int, min_size: int = 1) -> tuple[int, ...]:
    """Seeded uneven sizes: ``min_size`` each plus a Dirichlet(1) share of the rest."""
    if nodes < 1 or total < nodes * min_size:
        raise InvalidDataset(
            f"cannot give {nodes} nodes at least {min_size} of {total} rows; "
            "use fewer nodes or a smaller min_size"
        )
    rng = np.random.default_rng(seed)
    spare = total - nodes * min_size
    shares = rng.multinomial(spare, rng.dirichlet(np.ones(nodes)))
    return tuple(int(min_size + s) for s in shares)


def partition(
    dataset: Dataset, nodes: int, seed: int = 0, sizes: Sequence[int] | None = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Shuffle rows with ``seed`` and split them into ``nodes`` local datasets D_i.

    ``sizes`` gives B_i per node (must sum to at most the number of rows); by default the
    split is even. Returns a list of ``(X_i, y_i)``.
    """
    if isinstance(nodes, bool) or not isinstance(nodes, (int, np.integer)) or nodes < 1:
        raise InvalidDataset(f"nodes={nodes!r} must be a positive integer")
    if sizes is None:
        if dataset.samples < nodes:
            raise InvalidDataset(
                f"{dataset.name} has {dataset.samples} rows, fewer than nodes={nodes}; "
                "every node needs at least one sample"
            )
        sizes = even_sizes(dataset.samples, nodes)
    sizes = tuple(int(s) for s in sizes)
    if len(sizes) != nodes:
        raise InvalidDataset(f"got {len(sizes)} sizes for {nodes} nodes; pass one size per node")
    if min(sizes) < 1:
        raise InvalidDataset(f"sizes {sizes} contain an empty node; every B_i must be >= 1")
    if sum(sizes) > dataset.samples:
        raise InvalidDataset(
            f"sizes sum to {sum(sizes)} but {dataset.name} has only {dataset.samples} rows"
        )
    order = np.random.default_rng(seed).permutation(dataset.samples)
    bounds = np.cumsum((0,) + sizes)
    return [
        (dataset.features[order[a:b]], dataset.labels[order[a:b]])
        for a, b in zip(bounds[:-1], bounds[1:])
    ]


def make_problem(
    dataset: Dataset,
    nodes: int,
    C: float = 1.0,
    rho: float = 1.0,
    seed: int = 0,
    sizes: Sequence[int] | None = None,
) -> ConsensusProblem:
    """Partition ``dataset`` over ``nodes`` and return the consensus ERM problem of eq. (1)-(2)."""
    return problem_from_partition(partition(dataset, nodes, seed=seed, sizes=sizes), C=C, rho=rho)


def bundled_adult_folder() -> Path:
    """The folder of the official UCI Adult files shipped with admmcheck (``data/adult``: the two
    gzip files, ``adult.names`` and a README with attribution, licence CC BY 4.0, and sha256)."""
    from importlib import resources

    return Path(str(resources.files("admmcheck") / "data" / "adult"))


def bundled_adult(drop_first: bool = False) -> Dataset:
    """The shipped UCI Adult data (train and test files), preprocessed as :func:`load_adult`:
    45,222 rows; no path and no network needed."""
    return load_adult([bundled_adult_folder()], drop_first=drop_first)


def dataset_by_name(spec: str, seed: int = 0, samples: int = 250, dim: int = 10, drop_first: bool = False) -> Dataset:
    """Resolve a CLI dataset spec: ``synthetic``, ``breast-cancer``, ``adult`` (the shipped files)
    or ``adult:PATH[,PATH]`` (``drop_first``: Adult's one-hot groups reference-coded, see :func:`load_adult`)."""
    if spec == "synthetic":
        return synthetic(samples=samples, dim=dim, seed=seed)
    if spec == "breast-cancer":
        return breast_cancer()
    if spec == "adult":
        return bundled_adult(drop_first=drop_first)
    if spec.startswith("adult:"):
        paths = [p for p in spec[len("adult:"):].split(",") if p]
        if not paths:
            raise InvalidDataset("adult: needs a path, e.g. adult:/data/adult.data,/data/adult.test")
        return load_adult(paths, drop_first=drop_first)
    raise InvalidDataset(
        f"unknown dataset {spec!r}; use synthetic, breast-cancer, adult or adult:PATH"
    )
