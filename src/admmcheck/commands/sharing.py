"""What ``admmcheck run`` and ``admmcheck bound`` run for the sharing family, on a
:class:`~admmcheck.mechanisms.settings.SharingSetting`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from admmcheck.mechanisms.registry import REGISTRY
from admmcheck.mechanisms.settings import SharingSetting
from admmcheck.oracle import sharing_optimum
from admmcheck.output import output_file, write_atomic
from admmcheck.runs import describe_seed
from admmcheck.validation import one_of


def execute_sharing(algorithm: str, setting: SharingSetting, export_problem: str | Path | None = None
                    ) -> dict[str, object]:
    """Run the sharing ``algorithm`` once on ``setting`` (seed ``setting.seed``) and summarise it against CVXPY;
    a private one draws the noise of its claim (DP sharing: Theorem 1's sigma) on rows normalised as its
    Assumption 2.3 asks."""
    one_of("algorithm", algorithm, REGISTRY.names("sharing"))
    spec = REGISTRY[algorithm]
    problem = setting.problem(normalise_rows=spec.private)
    if export_problem is not None:
        target = output_file(export_problem, "export_problem")
        parts = np.array([f"{problem.offsets[m]}:{problem.offsets[m + 1]}" for m in range(problem.parties)])
        write_atomic(target, lambda stream: np.savez(stream, X=problem.design, y=problem.labels, parts=parts,
                                                     lam=problem.lam, rho=setting.rho))
    optimum = sharing_optimum(problem)
    seeds = [np.random.SeedSequence(setting.seed)]
    privacy = spec.claim(replace(setting, features=problem.widths)) if spec.private else None
    arguments = spec.run_arguments(setting, privacy)
    if "sigma" in arguments:
        arguments["sigma"] = np.broadcast_to(np.asarray(arguments["sigma"], dtype=float), (problem.parties,)).copy()
    run = spec.run(problem, rho=setting.rho, iterations=setting.iterations, seeds=seeds, reference=optimum,
                   **arguments)
    shared = run.extras["shared"][0, -1]
    summary: dict[str, object] = {
        "algorithm": algorithm, "dataset": setting.dataset, "parties": problem.parties,
        "features": list(problem.widths), "samples": problem.samples, "iterations": run.iterations,
        "rho": setting.rho, "lam": setting.lam,
        "objective_gap": float(run.objective_gap[0, -1]),
        "distance_to_optimum": float(run.consensus_error[0, -1]),
        "residual": float(np.linalg.norm(shared.sum(axis=0) - run.extras["z"][0, -1])),
        "final_x": run.primal[0, -1, 0].tolist(), "wall_time_s": run.wall_time_s,
        "seed": describe_seed(run.seeds[0]),
        "optimum": {"objective": optimum.objective, "solver": optimum.solver, "status": optimum.status,
                    "gradient_norm": optimum.gradient_norm},
        "definitions": {"objective_gap": "(F(x^T) - F*) / |F*|, F the objective (1), F* from CVXPY",
                        "residual": "||sum_m D_m x~_m^T - z^T||_2"},
    }
    if privacy is not None:
        summary["privacy"] = privacy.as_dict()
        summary["claim"] = spec.claim_value(setting, privacy).as_dict()
        summary["sigma"] = arguments["sigma"].tolist() if "sigma" in arguments else None
    if export_problem is not None:
        summary["exported"] = str(export_problem)
    return summary
