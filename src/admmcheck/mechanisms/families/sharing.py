"""The sharing family (ADMM-sharing paper (1), (5)-(9)): M parties hold the column blocks D_m of one dataset and share
D_m x_m with a server; a run is ``run(problem, rho=, iterations=, seeds=, reference=, sigma=, **arguments(setting))``
with ``sigma`` one noise scale per party (from ``arguments`` or the object ``claim(setting)`` returns).

* **Setting**: :class:`~admmcheck.mechanisms.settings.SharingSetting`.
* **Neighbours**: DP sharing's Definition 2, one row of one party's block moved on the unit sphere (kind ``row``), or
  a party's column 0 negated (kind ``column``); the smoke audit changes row 0 of party 0 (``--row 0:0``).
* **At registration**: a mechanism with ``exact_loss=`` gets the support white box
  (:func:`~admmcheck.mechanisms.white_box.sharing_white_box`); every one gets the one-run canary records of
  :class:`~admmcheck.mechanisms.canaries.SharingCanaries`.
* **What an audit runs**: the shared values released (:class:`~admmcheck.mechanisms.sharing.SharingMechanism`), on
  rows normalised to norm 1 (Assumption 2.3).
* **What run measures**: the objective gap to CVXPY's optimum of (1) and the residual ‖Σ_m D_m x̃_m − z‖.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from admmcheck.claims.stated import TheoremClaim
from admmcheck.mechanisms.canaries import SharingCanaries
from admmcheck.mechanisms.families.base import Family, RunSummary, Statement, precondition_lines
from admmcheck.mechanisms.settings import SharingSetting
from admmcheck.mechanisms.sharing import SharingMechanism, replace_one_row
from admmcheck.mechanisms.white_box import Auditable, sharing_white_box
from admmcheck.foundations.output import output_file, write_atomic
from admmcheck.solving.runs import describe_seed


def _row_pair(problem: Any, where: tuple[int, int], kind: str) -> tuple[Any, Any]:
    """DP sharing's Definition 2: row ``where = (party, row)`` (or, kind ``column``, column 0 of the party)."""
    return replace_one_row(problem, *where, kind)


def _every_row(problem: Any, kind: str) -> list[tuple[int, int]]:
    rows = range(problem.samples) if kind == "row" else (0,)  # a column change is one per party
    return [(party, row) for party in range(problem.parties) for row in rows]


def _row_place(where: tuple[int, int], kind: str) -> str:
    return (f"row {where[1]} of party {where[0]} moved on the unit sphere" if kind == "row"
            else f"column 0 of party {where[0]} negated")


def party_sigma(arguments: dict[str, Any], parties: int) -> np.ndarray | None:
    """The noise scale ``sigma`` a sharing run takes, one per party, popped from ``arguments`` (None where neither
    the spec's ``arguments`` nor its claim's object gives one: a run whose noise its own arguments set)."""
    if "sigma" not in arguments:
        return None
    return np.broadcast_to(np.asarray(arguments.pop("sigma"), dtype=float), (parties,)).copy()


class SharingFamily(Family):
    """The sharing family (module docstring)."""

    name = "sharing"
    global_name = "SHARING"
    setting = SharingSetting
    has_optimum = True
    exports_problem = True
    run_keys = ("algorithm", "dataset", "parties", "features", "iterations", "objective_gap", "residual",
                "wall_time_s")
    canaries = SharingCanaries()
    white_box = staticmethod(sharing_white_box)

    def neighbours(self) -> dict[str, Any]:
        return {"neighbours": _row_pair, "neighbour_kinds": ("row", "column"), "candidates": _every_row,
                "place": _row_place, "first_place": ((0, 0), "--row 0:0")}

    def auditable(self, spec: Any, setting: SharingSetting) -> Auditable:
        """The shared values released (:class:`SharingMechanism`, rows normalised as Assumption 2.3 asks), against
        the spec's claim (DP sharing's: the smaller of the total and basic composition)."""
        stated = spec.claim(setting)
        tested = spec.claim_value(setting, stated)
        arguments = spec.run_arguments(setting, stated)
        sigma = party_sigma(arguments, setting.parties)
        mechanism = SharingMechanism(setting.rho, None if sigma is None else tuple(sigma), setting.iterations, name=spec.name, run=spec.run,
                                     arguments=tuple(arguments.items()))
        theorem = isinstance(stated, TheoremClaim)
        summary = stated.as_dict(setting.iterations) if theorem else tested.as_dict()
        used = f"the smaller of the total of {spec.theorem} and basic composition" if theorem else None
        return Auditable(mechanism, setting.problem(normalise_rows=True), stated, tested, {"theorem": summary}, used)

    def run(self, spec: Any, setting: SharingSetting, export_problem: Any = None) -> RunSummary:
        """One run (seed ``setting.seed``) against CVXPY; a private one draws the noise of its claim on rows
        normalised as Assumption 2.3 asks."""
        from admmcheck.solving.oracle import sharing_optimum

        problem = setting.problem(normalise_rows=spec.private)
        if export_problem is not None:
            target = output_file(export_problem, "export_problem")
            parts = np.array([f"{problem.offsets[m]}:{problem.offsets[m + 1]}" for m in range(problem.parties)])
            write_atomic(target, lambda stream: np.savez(stream, X=problem.design, y=problem.labels, parts=parts,
                                                         lam=problem.lam, rho=setting.rho))
        optimum = sharing_optimum(problem)
        stated = spec.claim(replace(setting, features=problem.widths)) if spec.private else None
        arguments = spec.run_arguments(setting, stated)
        if "sigma" in arguments:
            arguments["sigma"] = party_sigma(arguments, problem.parties)
        run = spec.run(problem, rho=setting.rho, iterations=setting.iterations,
                       seeds=[np.random.SeedSequence(setting.seed)], reference=optimum, **arguments)
        shared = run.extras["shared"][0, -1]
        summary: dict[str, object] = {
            "algorithm": spec.name, "dataset": setting.dataset, "parties": problem.parties,
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
        claim = None
        if spec.private:
            if isinstance(stated, TheoremClaim):
                summary["privacy"] = stated.as_dict(setting.iterations)
            claim = spec.claim_value(setting, stated)
            summary["claim"] = claim.as_dict()
            summary["sigma"] = arguments["sigma"].tolist() if "sigma" in arguments else None
        if export_problem is not None:
            summary["exported"] = str(export_problem)
        return RunSummary(summary, self.run_keys, claim, objective_gap=float(summary["objective_gap"]))

    def bound(self, spec: Any, setting: SharingSetting, stated: Any) -> Statement:
        """Each party's sensitivity and σ, the per-iteration (ε, δ), the composed claim and the accountants'."""
        summary = stated.as_dict(setting.iterations)
        lines = [f"{summary['theorem']}"]
        for m, sigma in enumerate(summary["sigma"]):
            sensitivity = f"sensitivity C = {summary['sensitivity'][m]:.6g}, " if "sensitivity" in summary else ""
            lines.append(f"  party {m} (d_m = {summary['features'][m]}): {sensitivity}sigma = {sigma:.6g}")
        line = (f"  per iteration ({summary['epsilon']}, {summary['delta']:g}); over T = {summary['iterations']}: "
                f"claimed ({summary['epsilon_total']:.6g}, {summary['delta_total']:.3g}), basic composition "
                f"({summary['basic_composition']['epsilon']:.6g}, {summary['basic_composition']['delta']:.3g})")
        accounted = [f"{key[len('epsilon_'):].upper()} {value:.6g}"
                     for key, value in summary.get("accountant", {}).items() if key.startswith("epsilon_")]
        lines.append(line + (", dp-accounting " + " / ".join(accounted) if accounted else ""))
        return Statement(summary, (*lines, *precondition_lines(summary["preconditions"])), stated.holds)


SHARING = SharingFamily()
