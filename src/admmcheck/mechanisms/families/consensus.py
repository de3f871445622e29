"""The consensus family (M-ADMM paper (3)-(10), (24)-(25); R-ADMM paper (10)-(13), (28)-(29)): N nodes of a network
agree on one classifier; a run is ``run(problem, network, iterations=, seeds=, reference=, **arguments(setting))``.

* **Setting**: :class:`~admmcheck.mechanisms.settings.ConsensusSetting` (data, partition, graph, horizon and the
  consensus parameters).
* **Neighbours**: both consensus papers' replace-one record (a record of one node replaced), named
  ``record INDEX of node NODE``; the smoke audit changes record 0 of node 0 (``--record 0:0``).
* **At registration**: a mechanism with ``release=`` (how its noise enters what it releases,
  :mod:`admmcheck.mechanisms.releases`) gets the exact white box (:func:`~admmcheck.mechanisms.privacy_loss.privacy_loss`,
  :func:`~admmcheck.mechanisms.worst_case.worst_case`); every mechanism gets the ``admmcheck bound`` command that
  reproduces its claim, and the one-run canary records of :class:`~admmcheck.mechanisms.canaries.ConsensusCanaries`.
* **What an audit runs**: every broadcast f_i(t) released (:class:`~admmcheck.mechanisms.consensus.ReferenceMechanism`).
* **What run measures**: the objective gap to CVXPY's optimum of (1) and the consensus error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from admmcheck.claims.values import Claim
from admmcheck.foundations.errors import InvalidConfiguration, PreconditionError
from admmcheck.mechanisms.canaries import ConsensusCanaries
from admmcheck.mechanisms.consensus import NEIGHBOUR_KINDS, ReferenceMechanism, keyword_arguments, replace_one_record
from admmcheck.mechanisms.families.base import Family, RunSummary, Statement, precondition_lines
from admmcheck.mechanisms.privacy_loss import privacy_loss
from admmcheck.mechanisms.settings import ConsensusSetting
from admmcheck.mechanisms.white_box import Auditable, consensus_white_box
from admmcheck.mechanisms.worst_case import worst_case
from admmcheck.problems.networks import Network
from admmcheck.solving.oracle import Optimum, centralized_optimum
from admmcheck.foundations.output import output_file
from admmcheck.problems import ConsensusProblem
from admmcheck.solving.runs import Run, describe_seed
from admmcheck.solving.schedules import describe_schedule


def _record_pair(problem: Any, where: tuple[int, int], kind: str) -> tuple[Any, Any]:
    """Replace-one neighbours (both consensus papers): record ``where = (node, index)`` changed."""
    return replace_one_record(problem, *where, kind)


def _every_record(problem: Any, kind: str) -> list[tuple[int, int]]:
    return [(node, index) for node in range(problem.nodes) for index in range(problem.sizes[node])]


def _record_place(where: tuple[int, int], kind: str) -> str:
    return f"record {where[1]} of node {where[0]}: {kind}"


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


def run_on(spec: Any, setting: ConsensusSetting, problem: ConsensusProblem, network: Network,
           optimum: Optimum | None) -> Run:
    """Run the consensus algorithm of ``spec`` on ``problem`` over ``network`` (one trial, seed ``setting.seed``),
    warning first where its ``before_run`` says the run leaves its theorem."""
    if spec.supports("before_run"):
        spec.before_run(setting)
    return spec.run(problem, network, iterations=setting.iterations, seeds=setting.seed, reference=optimum,
                    **spec.run_arguments(setting))


def execute(spec: Any, setting: ConsensusSetting, export_problem: str | Path | None = None) -> Job:
    """Build, optionally export, solve centrally and run the consensus algorithm of ``spec`` on ``setting``."""
    if export_problem is not None:
        export_problem = output_file(export_problem, "export_problem")  # fail before the work
    problem, network = setting.built
    if export_problem is not None:
        problem.save_npz(export_problem, adjacency=network.adjacency)
    optimum = centralized_optimum(problem)
    run = run_on(spec, setting, problem, network, optimum)
    return Job(algorithm=spec.name, setting=setting, problem=problem, network=network, optimum=optimum, run=run)


class ConsensusFamily(Family):
    """The consensus family (module docstring)."""

    name = "consensus"
    global_name = "CONSENSUS"
    setting = ConsensusSetting
    has_optimum = True
    exports_problem = True
    run_keys = ("algorithm", "dataset", "nodes", "graph", "iterations", "objective_gap", "consensus_error",
                "wall_time_s")
    canaries = ConsensusCanaries()

    def neighbours(self) -> dict[str, Any]:
        return {"neighbours": _record_pair, "neighbour_kinds": NEIGHBOUR_KINDS[:2], "candidates": _every_record,
                "place": _record_place, "first_place": ((0, 0), "--record 0:0")}

    def complete(self, spec: Any) -> None:
        """The family's defaults, the ``bound`` command that reproduces the claim (the spec's parameters as flags),
        and the exact white box of a mechanism with ``release=`` (whose run is checked to take what the release
        reads); ``exact_loss=``/``worst_case=`` of the release's own are refused without ``release=``."""
        self.give_defaults(spec)
        if spec.bound_arguments is None:
            flags = [name for name in spec.parameters if name not in ("alpha", "epsilon")]
            object.__setattr__(spec, "bound_arguments", lambda setting: " ".join(
                [spec.name] + [f"--{name} {getattr(setting, name)}" for name in flags]))
        if spec.release is not None:
            spec.release.check_run(spec.name, keyword_arguments(spec.run))
            object.__setattr__(spec, "exact_loss", privacy_loss)
            object.__setattr__(spec, "worst_case", worst_case)
            object.__setattr__(spec, "white_box", spec.white_box or consensus_white_box)
        elif spec.exact_loss is privacy_loss or spec.worst_case is worst_case:
            raise InvalidConfiguration(f"{spec.name}: the consensus white box inverts the mechanism's release; "
                                       "register release= (admmcheck.mechanisms.releases: how its noise enters what "
                                       "it releases) instead of exact_loss= and worst_case=", parameter="release")

    def mechanism(self, spec: Any, network: Network, iterations: int, setting: Any) -> ReferenceMechanism:
        """The auditable mechanism of ``spec`` (every broadcast released) on ``network`` for ``setting``."""
        return ReferenceMechanism(spec.name, network, iterations, spec.run_arguments(setting), run=spec.run,
                                  release=spec.release)

    def auditable(self, spec: Any, setting: ConsensusSetting) -> Auditable:
        """Every broadcast released (:class:`ReferenceMechanism`), against the spec's claim on ``setting``
        (:meth:`~admmcheck.mechanisms.specs.MechanismSpec.claim_value`: the theorem's β, refused where its
        preconditions fail)."""
        problem, network = setting.built
        stated = spec.claim(setting) if spec.supports("claim") else None
        if stated is not None and not isinstance(stated, Claim) and not stated.holds:
            raise PreconditionError(f"{stated.theorem} does not apply on this setting ({', '.join(stated.failed)} "
                                    "fail); there is no claim to audit. Raise theta/eta or the node sizes")
        tested = spec.claim_value(setting, stated)
        summary = (stated.as_dict(setting.iterations) if stated is not None and not isinstance(stated, Claim)
                   else {"theorem": None, "claim": tested.as_dict()})
        return Auditable(self.mechanism(spec, network, setting.iterations, setting), problem, stated, tested,
                         {"theorem": summary})

    def run(self, spec: Any, setting: ConsensusSetting, export_problem: Any = None) -> RunSummary:
        """One run (seed ``setting.seed``) against CVXPY's optimum of (1); a private one with the claim it is for."""
        summary = execute(spec, setting, export_problem).summary()
        claim = refused = None
        if spec.private:
            try:
                claim = spec.claim_value(setting)
                summary["claim"] = claim.as_dict()
            except (InvalidConfiguration, PreconditionError) as exc:  # alpha = inf, or preconditions that fail
                refused = f"no claim on this setting ({exc})"
                summary["claim"] = {"none": refused}
        return RunSummary(summary, self.run_keys, claim, refused, float(summary["objective_gap"]))

    def bound(self, spec: Any, setting: ConsensusSetting, stated: Any) -> Statement:
        """The theorem's β with its per-node sums and preconditions, and the setting they were computed on."""
        facts = setting.bound_setting()
        parameters = {"eta": describe_schedule(setting.eta), "alpha": describe_schedule(setting.alpha),
                      "c1": setting.c1}
        if "theta" in spec.parameters:
            parameters["theta"] = setting.theta
        summary = stated.as_dict(setting.iterations) | {
            "mechanism": spec.name, "iterations": setting.iterations, "parameters": parameters,
            "setting": {"dataset": setting.dataset, "graph": setting.graph, "sizes": list(facts.sizes),
                        "degrees": list(facts.degrees), "C": facts.C, "rho": facts.rho,
                        "max_feature_norm": facts.max_feature_norm, "c1": facts.c1},
        }
        beta = summary["beta"]
        shown = "refused" if beta is None else "inf (no noise: no finite guarantee)" if beta == float("inf") else beta
        lines = [f"{stated.theorem}: beta = {shown}",
                 f"  formula value max_i sum = {summary['formula_value']}; per node: "
                 + ", ".join(str(v) for v in summary["per_node"]),
                 *precondition_lines(stated.preconditions)]
        return Statement(summary, tuple(lines), stated.holds)


CONSENSUS = ConsensusFamily()
