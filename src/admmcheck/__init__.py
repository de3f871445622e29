"""admmcheck: verify differentially private distributed-optimization algorithms.

The names users need most are re-exported here; everything else is importable from
its module. They are imported on first use (PEP 562), so a process that needs only part of
the package (an audit worker, ``admmcheck --version``) does not load CVXPY and the solvers.
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("admmcheck")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "unknown"

_HOMES = {
    "admmcheck.algorithms": ("run_admm", "run_admm_edge", "run_dvp", "run_madmm", "run_pp", "run_private_radmm",
                             "run_pvp", "run_radmm"),
    "admmcheck.datasets": ("Dataset", "breast_cancer", "load_adult", "make_problem", "partition", "synthetic"),
    "admmcheck.errors": ("AdmmcheckError", "InvalidConfiguration", "InvalidDataset", "InvalidNetwork",
                         "InvalidProblem", "PreconditionError", "SolverError"),
    "admmcheck.networks": ("Network", "network_from_graph"),
    "admmcheck.oracle": ("Optimum", "centralized_optimum"),
    "admmcheck.privacy": ("BoundSetting", "PrivacyBound", "pp_bound", "radmm_bound"),
    "admmcheck.problems": ("ConsensusProblem",),
    "admmcheck.runs": ("Run", "trial_seeds"),
    "admmcheck.schedules": ("GeometricSchedule",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_HOME_OF)


def __getattr__(name: str) -> object:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'admmcheck' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
