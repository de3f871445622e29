"""Problem families: the consensus ERM of the M-ADMM / R-ADMM papers and the sharing problem
over vertically partitioned features (ADMM sharing paper)."""

from admmcheck.problems.consensus import (
    LOGISTIC,
    NORM_SLACK,
    ConsensusProblem,
    LogisticLoss,
    PaddedData,
    load_problem_npz,
    problem_from_partition,
)

__all__ = [
    "LOGISTIC", "NORM_SLACK", "ConsensusProblem", "LogisticLoss", "PaddedData", "load_problem_npz",
    "problem_from_partition",
]
