"""admmcheck: verify differentially private distributed-optimization algorithms.

The names users need most are re-exported here; everything else is importable from
its module.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("admmcheck")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "unknown"

from admmcheck.algorithms import (
    run_admm,
    run_admm_edge,
    run_dvp,
    run_madmm,
    run_pp,
    run_private_radmm,
    run_pvp,
    run_radmm,
)
from admmcheck.datasets import Dataset, breast_cancer, load_adult, make_problem, partition, synthetic
from admmcheck.errors import (
    AdmmcheckError,
    InvalidConfiguration,
    InvalidDataset,
    InvalidNetwork,
    InvalidProblem,
    PreconditionError,
    SolverError,
)
from admmcheck.networks import Network, network_from_graph
from admmcheck.oracle import Optimum, centralized_optimum
from admmcheck.privacy import BoundSetting, PrivacyBound, pp_bound, radmm_bound
from admmcheck.problems import ConsensusProblem
from admmcheck.runs import Run, trial_seeds
from admmcheck.schedules import GeometricSchedule

__all__ = [
    "AdmmcheckError", "ConsensusProblem", "Dataset", "GeometricSchedule", "InvalidConfiguration",
    "InvalidDataset", "InvalidNetwork", "InvalidProblem", "Network", "Optimum", "Run",
    "BoundSetting", "PreconditionError", "PrivacyBound", "SolverError", "breast_cancer",
    "centralized_optimum", "load_adult", "make_problem", "network_from_graph", "partition",
    "pp_bound", "radmm_bound", "run_admm", "run_admm_edge", "run_dvp", "run_madmm", "run_pp",
    "run_private_radmm", "run_pvp", "run_radmm", "synthetic", "trial_seeds",
]
