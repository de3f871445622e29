"""admmcheck: verify differentially private distributed-optimization algorithms.

The names users need most are re-exported here; everything else is importable from
its module. They are imported on first use (PEP 562), so a process that needs only part of
the package (an audit worker, ``admmcheck --version``) does not load CVXPY and the solvers.
"""

from admmcheck.foundations.lazy import lazy_exports

_HOMES = {
    "admmcheck._version": ("__version__",),
    "admmcheck.algorithms": ("run_admm", "run_admm_edge", "run_dvp", "run_madmm", "run_pp", "run_private_radmm",
                             "run_pvp", "run_radmm"),
    "admmcheck.problems.datasets": ("Dataset", "breast_cancer", "load_adult", "make_problem", "partition", "synthetic"),
    "admmcheck.foundations.errors": ("AdmmcheckError", "InvalidConfiguration", "InvalidDataset", "InvalidNetwork",
                         "InvalidProblem", "PreconditionError", "SolverError"),
    "admmcheck.problems.networks": ("Network", "network_from_graph"),
    "admmcheck.solving.oracle": ("Optimum", "centralized_optimum"),
    "admmcheck.privacy": ("BoundSetting", "PrivacyBound", "pp_bound", "radmm_bound"),
    "admmcheck.problems": ("ConsensusProblem",),
    "admmcheck.solving.runs": ("Run", "trial_seeds"),
    "admmcheck.solving.schedules": ("GeometricSchedule",),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _HOMES)
