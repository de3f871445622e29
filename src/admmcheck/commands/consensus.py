"""Run a registered consensus algorithm, rerun a paper's figure.

:func:`execute` runs an algorithm on a :class:`~admmcheck.mechanisms.settings.ConsensusSetting`: it builds the
dataset, partition, network and CVXPY reference, runs the algorithm and returns everything a report needs. No
argument parsing or printing happens here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from admmcheck.experiments import EXPERIMENTS, LARGE_NETWORK, Experiment, run_experiment, save_experiment
from admmcheck.networks import Network
from admmcheck.output import output_file, output_folder
from admmcheck.oracle import Optimum, centralized_optimum
from admmcheck.mechanisms.registry import REGISTRY
from admmcheck.mechanisms.settings import ConsensusSetting
from admmcheck.problems import ConsensusProblem
from admmcheck.runs import Run, describe_seed
from admmcheck.parameters import parameter
from admmcheck.setting import ProblemSetting, build_problem
from admmcheck.validation import config_from_flags, one_of



def consensus_algorithms() -> tuple[str, ...]:
    """Every registered consensus algorithm and mechanism, the ones ``admmcheck run`` runs."""
    return REGISTRY.names("consensus")


def bound_mechanisms() -> tuple[str, ...]:
    """The registered consensus mechanisms whose theorem gives a bound (``admmcheck bound``)."""
    return tuple(name for name in REGISTRY.names("consensus", private=True) if REGISTRY[name].claim is not None)


@dataclass(frozen=True, eq=False)
class Job:
    """A finished run with the problem, network and reference it was measured against."""

    algorithm: str
    setting: ConsensusSetting
    problem: ConsensusProblem
    network: Network
    optimum: Optimum
    run: Run

    def summary(self) -> dict[str, object]:
        """The JSON object ``admmcheck run --json`` prints (first trial)."""
        run = self.run
        return {
            "algorithm": self.algorithm,
            "iterations": run.iterations,
            "objective_gap": float(run.objective_gap[0, -1]),
            "consensus_error": float(run.consensus_error[0, -1]),
            "final_mean": run.final_mean[0].tolist(),
            "wall_time_s": run.wall_time_s,
            "dataset": self.setting.dataset,
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


def run_reference_algorithm(algorithm: str, setting: ConsensusSetting, problem: ConsensusProblem, network: Network,
                            optimum: Optimum | None) -> Run:
    """Run the registered consensus algorithm ``algorithm`` on ``problem`` over ``network`` (one trial, seed
    ``setting.seed``)."""
    spec = REGISTRY[algorithm]
    if spec.before_run is not None:
        spec.before_run(setting)
    return spec.run(problem, network, iterations=setting.iterations, seeds=setting.seed, reference=optimum,
                    **spec.arguments(setting))


def execute(algorithm: str, setting: ConsensusSetting, export_problem: str | Path | None = None) -> Job:
    """Build, optionally export, solve centrally and run ``algorithm`` on ``setting``."""
    if export_problem is not None:
        export_problem = output_file(export_problem, "export_problem")  # fail before the work
    one_of("algorithm", algorithm, consensus_algorithms())
    problem, network = setting.built
    if export_problem is not None:
        problem.save_npz(export_problem, adjacency=network.adjacency)
    optimum = centralized_optimum(problem)
    run = run_reference_algorithm(algorithm, setting, problem, network, optimum)
    return Job(algorithm=algorithm, setting=setting, problem=problem, network=network, optimum=optimum, run=run)


@dataclass(frozen=True)
class ExperimentConfig(ProblemSetting):
    """What ``admmcheck experiment NAME`` runs; breast-cancer by default, Adult by path."""

    name: str = "madmm-fig2"
    runs: int = parameter(10, "independent noisy runs per setting", read=int)

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
