"""The online family (DPSDA paper (4)-(23)): n nodes learn online over a time-varying graph sequence, one function f_t
per round; a run is ``run(problem, graphs=, gradient_noise=, iterations=, seeds=, sigma=, **arguments(setting))``
and returns a :class:`~admmcheck.solving.runs.Run` whose ``extras`` hold ``broadcast`` (trials, T, n, d), the messages
released, and ``decision`` (trials, T+1, n, d), the decisions x_i(t) the regret reads. ``sigma`` is the noise scale,
from ``arguments`` or the object ``claim(setting)`` returns. Its spec is an :class:`~admmcheck.mechanisms.specs.OnlineSpec`, which says whether
its graphs are directed (``push_sum``).

* **Setting**: :class:`~admmcheck.mechanisms.settings.OnlineSetting` (the problem is §6.1's online linear
  regression, :class:`~admmcheck.problems.online.OnlineProblem`; the graphs a
  :class:`~admmcheck.problems.graph_sequences.GraphSequence`).
* **Neighbours**: DPSDA's Definition 1, one round's function f_t0 replaced (its target b negated); the smoke audit
  changes round 1 (``--changed-round 1``). The last round enters nothing released, so it is never a candidate.
* **At registration**: a mechanism with ``exact_loss=`` and ``worst_case=`` gets the Laplace white box
  (:func:`~admmcheck.mechanisms.white_box.online_white_box`). The family has no one-run canary records.
* **What an audit runs**: the full transcript of messages (:class:`~admmcheck.mechanisms.dpsda.DpsdaMechanism`).
* **What run measures**: the pseudo-regret (3) against the hindsight optimum, and the running average's (19); the
  regret bound where the claim's object gives one.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from admmcheck.claims.stated import TheoremClaim, gives
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.mechanisms.dpsda import DpsdaMechanism, change_one_round, released_round
from admmcheck.mechanisms.families.base import Family, RunSummary, Statement, precondition_lines
from admmcheck.mechanisms.settings import OnlineSetting
from admmcheck.mechanisms.white_box import Auditable, online_white_box
from admmcheck.solving.runs import describe_seed


def _round_pair(problem: Any, t0: int, kind: str = "negated-target") -> tuple[Any, Any]:
    """DPSDA's Definition 1: f_t0 replaced by the function of the same features and target -b."""
    return change_one_round(problem, t0, problem.features[t0 - 1], -problem.targets[t0 - 1])


def _every_round(problem: Any, kind: str) -> list[int]:
    return list(range(1, problem.rounds + 1))


def _round_place(t0: int, kind: str) -> str:
    return f"round {t0}: target b -> -b (Definition 1: one f_t0 changed)"


@dataclass(frozen=True)
class RegretSummary(RunSummary):
    """An online run measured by its ``regret`` (eq. (3), mean over trials) against the theorem's ``regret_bound``
    (None: the theorem gives none)."""

    regret: float = 0.0
    regret_bound: float | None = None

    @property
    def within_bound(self) -> bool | None:
        return None if self.regret_bound is None else self.regret <= self.regret_bound


class OnlineFamily(Family):
    """The online family (module docstring)."""

    name = "online"
    global_name = "ONLINE"
    setting = OnlineSetting
    has_optimum = False
    exports_problem = False
    run_keys = ("algorithm", "nodes", "iterations", "epsilon", "sigma", "regret", "regret_over_T", "average_regret",
                "regret_bound", "wall_time_s")
    white_box = staticmethod(online_white_box)

    def neighbours(self) -> dict[str, Any]:
        return {"neighbours": _round_pair, "neighbour_kinds": ("negated-target",), "candidates": _every_round,
                "influences": released_round, "place": _round_place, "first_place": (1, "--changed-round 1"),
                "released_note": "f_t's gradient first enters z(t+1) ((12)/(20)), broadcast as h(t+1) (11), and the "
                                 "last message released is h(T)"}

    def complete(self, spec: Any) -> None:
        """The family's defaults; a spec without ``push_sum`` (whether its run's graphs are directed) is refused: an
        online mechanism is an :class:`~admmcheck.mechanisms.specs.OnlineSpec`."""
        if "push_sum" not in {item.name for item in fields(spec)}:
            raise InvalidConfiguration(f"{spec.name}: register an online mechanism as an OnlineSpec (it says with "
                                       "push_sum= whether its graphs are directed)", parameter="family")
        super().complete(spec)

    def auditable(self, spec: Any, setting: OnlineSetting) -> Auditable:
        """The full transcript of messages released (:class:`DpsdaMechanism`), against the spec's claim (DPSDA's
        T·ε, Theorem 2/4)."""
        stated = spec.claim(setting)
        tested = spec.claim_value(setting, stated)
        arguments = spec.run_arguments(setting, stated)
        sigma = arguments.pop("sigma", None)  # None: a run whose noise its own arguments set
        mechanism = DpsdaMechanism(setting.graphs(spec.push_sum), None if sigma is None else float(sigma),
                                   setting.iterations,
                                   push_sum=spec.push_sum, name=spec.name, run=spec.run,
                                   arguments=tuple(arguments.items()))
        summary = stated.as_dict(setting.iterations) if isinstance(stated, TheoremClaim) else tested.as_dict()
        return Auditable(mechanism, setting.problem(), stated, tested, {"claims": summary})

    def run(self, spec: Any, setting: OnlineSetting, export_problem: Any = None) -> RunSummary:
        """``setting.trials`` independent runs on the same function sequence: the pseudo-regret (3), the
        running-average regret (19) and the claim's regret bound where it gives one."""
        from admmcheck.solving.oracle import hindsight_optimum

        if export_problem is not None:
            raise InvalidConfiguration("--export-problem writes a consensus or sharing problem; the online "
                                       "family's function sequence is built from --seed", parameter="export_problem")
        trials, T = setting.trials, setting.iterations
        problem, graphs = setting.problem(), setting.graphs(spec.push_sum)
        stated = spec.claim(setting)
        arguments = spec.run_arguments(setting, stated)
        run = spec.run(problem, graphs=graphs, gradient_noise=setting.gradient_noise, iterations=T,
                       seeds=np.random.SeedSequence(setting.seed).spawn(trials), **arguments)
        decisions = run.extras["decision"][:, :T]
        losses = np.stack([problem.value(t, decisions[:, t - 1]) for t in range(1, T + 1)], axis=1)  # (trials, T)
        running = np.cumsum(decisions, axis=1) / np.arange(1, T + 1)[None, :, None]
        running_losses = np.stack([problem.value(t, running[:, t - 1]) for t in range(1, T + 1)], axis=1)
        best = hindsight_optimum(problem, T).objective
        regret = float(losses.sum(axis=1).mean() - best)
        average_regret = float(running_losses.sum(axis=1).mean() - best)
        bound = stated.require("regret_bound")(T) if gives(stated, "regret_bound") else None
        claim = refused = None
        try:
            claim = spec.claim_value(setting, stated)
        except InvalidConfiguration as exc:  # no finite claim: step_epsilon = inf draws no noise
            refused = f"no finite claim ({exc})"
        summary = {
            "algorithm": spec.name, "nodes": setting.nodes, "dim": problem.dim, "iterations": T,
            "epsilon": setting.step_epsilon, "sigma": arguments.get("sigma"), "trials": trials,
            "regret": regret, "regret_over_T": regret / T, "average_regret": average_regret,
            "regret_bound": bound, "regret_within_bound": None if bound is None else regret <= bound,
            "hindsight_optimum": best, "claim": {"none": refused} if claim is None else claim.as_dict(),
            "claims": stated.as_dict(T) if isinstance(stated, TheoremClaim) else None,
            "seed": describe_seed(run.seeds[0]), "wall_time_s": run.wall_time_s,
            "definitions": {"regret": "mean over trials of sum_t f_t(x(t)) - min_v sum_t f_t(v), eq. (3)",
                            "average_regret": "the same for the running average x~(t), eq. (19)"},
        }
        return RegretSummary(summary, self.run_keys, claim, refused, regret=regret, regret_bound=bound)

    def bound(self, spec: Any, setting: OnlineSetting, stated: Any) -> Statement:
        """Per-round ε, σ and sensitivity, the total claim, the regret bound and the preconditions."""
        summary = stated.as_dict(setting.iterations)
        line = (f"{summary['theorem']}: per round epsilon = {summary['epsilon']}, sigma = {summary['sigma']:.6g} "
                f"(sensitivity {summary['sensitivity']:.6g}), total {summary['epsilon_total']}; regret bound "
                f"{summary['regret_bound']:.6g} at T = {setting.iterations}")
        return Statement(summary, (line, *precondition_lines(summary["preconditions"])), not summary["failed"])


ONLINE = OnlineFamily()
