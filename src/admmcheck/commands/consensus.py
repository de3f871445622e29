"""Rerun a paper's figure (``admmcheck experiment``): the M-ADMM and R-ADMM experiments on a consensus problem.
(One run of a registered algorithm is its family's, :meth:`admmcheck.mechanisms.families.Family.run`.) No argument
parsing or printing happens here."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from admmcheck.experiments.figures import EXPERIMENTS, LARGE_NETWORK, Experiment, run_experiment, save_experiment
from admmcheck.foundations.output import output_folder
from admmcheck.foundations.parameters import parameter
from admmcheck.problems.setting import ProblemSetting, build_problem
from admmcheck.foundations.validation import config_from_flags, one_of


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
