"""Rerun a paper's figure (``admmcheck experiment``): the M-ADMM and R-ADMM experiments on a consensus problem.
(One run of a registered algorithm is its family's, :meth:`admmcheck.mechanisms.families.Family.run`.) No argument
parsing or printing happens here."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

from admmcheck.experiments.figures import EXPERIMENTS, LARGE_NETWORK, Experiment, run_experiment, save_experiment
from admmcheck.foundations.output import output_folder
from admmcheck.foundations.parameters import parameter
from admmcheck.foundations.results import Result
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


@dataclass(frozen=True, eq=False)
class ExperimentResult(Result):
    """A rerun figure: the ``experiment`` and the ``files`` it was saved to (JSON, CSV, PNG)."""

    kind: ClassVar[str] = "experiment"

    experiment: Experiment
    files: dict[str, Path]

    def as_dict(self) -> dict[str, object]:
        return self.experiment.summary() | {"files": {kind: str(path) for kind, path in self.files.items()}}

    def lines(self) -> list[str]:
        out = [f"{'panel':<16} {'setting':<34} {'L_mean(T)':>10} {'L_range(T)':>10} {'P(T)':>8}"]
        for row in self.experiment.summary()["settings"]:
            out.append(f"{row['panel']:<16} {row['label']:<34} {_figure(row['L_mean_T'])} {_figure(row['L_range_T'])} "
                       f"{_figure(row['P_T'], 8)}")
        return out + ["written: " + ", ".join(str(path) for path in self.files.values())]


def _figure(value: float | None, width: int = 10) -> str:
    """A figure of the table, or "-" where the setting has none (no privacy figure P(T) without noise)."""
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.4f}"


def execute_experiment(config: ExperimentConfig, out: str | Path) -> ExperimentResult:
    """Run the experiment of ``config`` and save its JSON, CSV and PNG under ``out``."""
    output_folder(out, "out")  # fail before the work, not after it
    experiment = experiment_of(config)
    return ExperimentResult(experiment, save_experiment(experiment, out))
