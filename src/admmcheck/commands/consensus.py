"""Run one non-private reference algorithm from a plain configuration.

:class:`RunConfig` is what ``admmcheck run`` parses its flags into; :func:`execute`
builds the dataset, partition, network and CVXPY reference, runs the algorithm and
returns everything a report needs. No argument parsing or printing happens here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

from admmcheck.errors import InvalidConfiguration
from admmcheck.experiments import EXPERIMENTS, LARGE_NETWORK, Experiment, run_experiment, save_experiment
from admmcheck.networks import Network
from admmcheck.output import output_file, output_folder
from admmcheck.oracle import Optimum, centralized_optimum
from admmcheck.mechanisms.registry import REGISTRY
from admmcheck.privacy import BoundSetting, PrivacyBound
from admmcheck.problems import ConsensusProblem
from admmcheck.runs import Run, describe_seed
from admmcheck.schedules import ScheduleLike
from admmcheck.setting import ProblemSetting, build_problem
from admmcheck.validation import config_from_flags, one_of



def consensus_algorithms() -> tuple[str, ...]:
    """Every registered consensus algorithm and mechanism, the ones ``admmcheck run`` runs."""
    return REGISTRY.names("consensus")


def bound_mechanisms() -> tuple[str, ...]:
    """The registered consensus mechanisms whose theorem gives a bound (``admmcheck bound``)."""
    return tuple(name for name in REGISTRY.names("consensus", private=True) if REGISTRY[name].claim is not None)


@dataclass(frozen=True)
class RunConfig(ProblemSetting):
    """Everything ``admmcheck run`` needs for a registered consensus algorithm or mechanism;
    defaults are the CLI defaults.

    ``eta`` and ``growth`` are one value or one per node: for ``madmm`` the penalty is
    eta_i(t) = eta_i * growth_i^(t-1) (§5.1); the other algorithms use a single eta. ``alpha``
    is the noise schedule alpha_i(t) of the private mechanisms (a number, one per node or a formula;
    inf: no noise).
    """

    algorithm: str = "admm"
    dataset: str = "synthetic"
    eta: tuple[float, ...] = (0.5,)
    theta: float = 0.5
    growth: tuple[float, ...] = (1.0,)
    gamma: float = 0.5
    alpha: ScheduleLike = 5.0

    FLAG_NAMES: ClassVar[dict[str, str]] = {"algorithm": "ALGO"}

    @classmethod
    def only_for(cls) -> dict[str, tuple[str, tuple[str, ...]]]:
        """Which algorithms read ``theta``, ``growth``, ``gamma`` and ``alpha`` (their registry entries)."""
        return ProblemSetting.ONLY_FOR | REGISTRY.readers("algorithm", consensus_algorithms(),
                                                          ("theta", "growth", "gamma", "alpha"))

    def __post_init__(self) -> None:
        super().__post_init__()
        one_of("algorithm", self.algorithm, consensus_algorithms())
        if "growth" not in REGISTRY[self.algorithm].parameters and (len(self.eta) != 1 or self.growth != (1.0,)):
            scheduled = ", ".join(name for name in consensus_algorithms() if "growth" in REGISTRY[name].parameters)
            raise InvalidConfiguration(f"{self.algorithm} takes one eta and no growth (per-node schedules are those "
                                       f"of {scheduled})", parameter="eta")
        for name in ("eta", "growth"):
            values = getattr(self, name)
            if len(values) not in (1, self.nodes):
                raise InvalidConfiguration(
                    f"{name} has {len(values)} values for {self.nodes} nodes; give one or one per node",
                    parameter=name)


@dataclass(frozen=True, eq=False)
class Job:
    """A finished run with the problem, network and reference it was measured against."""

    config: RunConfig
    problem: ConsensusProblem
    network: Network
    optimum: Optimum
    run: Run

    def summary(self) -> dict[str, object]:
        """The JSON object ``admmcheck run --json`` prints (first trial)."""
        run = self.run
        return {
            "algorithm": self.config.algorithm,
            "iterations": run.iterations,
            "objective_gap": float(run.objective_gap[0, -1]),
            "consensus_error": float(run.consensus_error[0, -1]),
            "final_mean": run.final_mean[0].tolist(),
            "wall_time_s": run.wall_time_s,
            "dataset": self.config.dataset,
            "samples_per_node": list(self.problem.sizes),
            "dim": self.problem.dim,
            "nodes": self.problem.nodes,
            "graph": self.network.name,
            "seed": describe_seed(run.seeds[0]),
            "C": self.problem.C,
            "rho": self.problem.rho,
            "parameters": dict(run.parameters),
            "optimum": {
                "objective": self.optimum.objective,
                "solution": self.optimum.solution.tolist(),
                "solver": self.optimum.solver,
                "status": self.optimum.status,
                "gradient_norm": self.optimum.gradient_norm,
                "suboptimality_bound": self.optimum.suboptimality_bound,
            },
            "definitions": {
                "objective_gap": "max_i (O_ERM(f_i(T)) - O*) / |O*|, eq. (1), O* from CVXPY",
                "consensus_error": "max_i ||f_i(T) - f_c*||_2",
            },
        }


def run_reference_algorithm(
    config: RunConfig, problem: ConsensusProblem, network: Network, optimum: Optimum | None
) -> Run:
    """Run ``config.algorithm`` (its registry entry) on ``problem`` over ``network`` (one trial,
    seed ``config.seed``)."""
    spec = REGISTRY[config.algorithm]
    if spec.before_run is not None:
        spec.before_run(config)
    return spec.run(problem, network, iterations=config.iterations, seeds=config.seed, reference=optimum,
                    **spec.arguments(config))


def execute(config: RunConfig, export_problem: str | Path | None = None) -> Job:
    """Build, optionally export, solve centrally and run; see :class:`RunConfig`."""
    if export_problem is not None:
        export_problem = output_file(export_problem, "export_problem")  # fail before the work
    problem, network = build_problem(config)
    if export_problem is not None:
        problem.save_npz(export_problem, adjacency=network.adjacency)
    optimum = centralized_optimum(problem)
    run = run_reference_algorithm(config, problem, network, optimum)
    return Job(config=config, problem=problem, network=network, optimum=optimum, run=run)


@dataclass(frozen=True)
class BoundConfig(ProblemSetting):
    """What ``admmcheck bound MECHANISM`` evaluates: a registered mechanism's theorem on a concrete
    setting (pp: M-ADMM Theorem 4.1; dvp: the same with eta = theta; private-radmm: R-ADMM
    Theorem IV.1).

    ``eta`` and ``alpha`` are schedules (numbers, per-node tuples or formulas, see
    :func:`admmcheck.schedules.parse_schedule`); for private R-ADMM eta must be one constant
    and alpha is indexed by the odd iteration k. The data, partition and graph are built
    as for ``admmcheck run``.
    """

    mechanism: str = "pp"
    eta: ScheduleLike = 0.5
    theta: float = 0.5
    alpha: ScheduleLike = 5.0
    c1: float = 0.25

    FLAG_NAMES: ClassVar[dict[str, str]] = {"mechanism": "MECHANISM"}

    @classmethod
    def only_for(cls) -> dict[str, tuple[str, tuple[str, ...]]]:
        """Which mechanisms read ``eta`` and ``theta`` (their registry entries)."""
        return ProblemSetting.ONLY_FOR | REGISTRY.readers("mechanism", bound_mechanisms(), ("eta", "theta"))

    def __post_init__(self) -> None:
        super().__post_init__()
        one_of("mechanism", self.mechanism, bound_mechanisms())


def evaluate_bound(config: BoundConfig) -> tuple[PrivacyBound, BoundSetting]:
    """Build the setting of ``config`` and evaluate its mechanism's theorem (the registry's ``claim``)."""
    problem, network = build_problem(config)
    setting = BoundSetting.from_problem(problem, network, c1=config.c1)
    return REGISTRY.mechanism(config.mechanism).claim(setting, config, config.iterations), setting


@dataclass(frozen=True)
class ExperimentConfig(ProblemSetting):
    """What ``admmcheck experiment NAME`` runs; breast-cancer by default, Adult by path."""

    name: str = "madmm-fig2"
    runs: int = 10

    def __post_init__(self) -> None:
        super().__post_init__()
        one_of("experiment", self.name, EXPERIMENTS)

    @classmethod
    def from_flags(cls, flags: dict[str, object]) -> "ExperimentConfig":
        """The configuration for the flags typed; madmm-fig3/4 default to the paper's 100 nodes on
        a random graph, the other experiments to :class:`ExperimentConfig`'s defaults."""
        if flags.get("name") in LARGE_NETWORK:
            flags = {"nodes": 100, "graph": "random"} | flags
        return config_from_flags(cls, flags)


def experiment_of(config: ExperimentConfig) -> Experiment:
    """Run the experiment of ``config``, its setting recorded in ``description``."""
    problem, network = build_problem(config, uneven=LARGE_NETWORK.get(config.name) == "uneven")
    experiment = run_experiment(
        config.name, problem, network, iterations=config.iterations, runs=config.runs, seed=config.seed
    )
    description = {
        "dataset": config.dataset, "nodes": config.nodes, "graph": network.name,
        "samples_per_node": list(problem.sizes), "dim": problem.dim, "C": problem.C, "rho": problem.rho,
    }
    if config.name == "radmm-fig1":  # its own random networks of 5 and 20 nodes, not config.nodes / graph
        description |= {"nodes": [5, 20], "graph": "random_connected(N, seed) for N = 5 and 20",
                        "samples_per_node": "even split over each network"}
    return replace(experiment, description=description)


def execute_experiment(config: ExperimentConfig, out: str | Path) -> tuple[Experiment, dict[str, Path]]:
    """Run the experiment of ``config`` and save its JSON, CSV and PNG under ``out``."""
    output_folder(out, "out")  # fail before the work, not after it
    experiment = experiment_of(config)
    return experiment, save_experiment(experiment, out)
