"""What ``admmcheck run`` and ``admmcheck bound`` run for the online family (DPSDA paper), on an
:class:`~admmcheck.mechanisms.settings.OnlineSetting`."""

from __future__ import annotations

import numpy as np

from admmcheck.errors import InvalidConfiguration
from admmcheck.mechanisms.registry import REGISTRY
from admmcheck.mechanisms.settings import OnlineSetting
from admmcheck.oracle import hindsight_optimum
from admmcheck.runs import describe_seed
from admmcheck.validation import one_of


def dpsda_bound_summary(algorithm: str, setting: OnlineSetting) -> dict[str, object]:
    """Theorem 2/4 (epsilon, sigma, preconditions) and Theorem 3/5 (regret bound) of ``algorithm`` on ``setting``."""
    one_of("algorithm", algorithm, REGISTRY.names("online"))
    return REGISTRY.mechanism(algorithm).claim(setting).as_dict(setting.iterations)


def execute_dpsda(algorithm: str, setting: OnlineSetting) -> dict[str, object]:
    """Run ``setting.trials`` independent runs of ``algorithm`` on the same function sequence and report the pseudo-regret
    (3), the running-average regret (19) and the bound of Theorem 3/5."""
    one_of("algorithm", algorithm, REGISTRY.names("online"))
    trials = setting.trials
    spec = REGISTRY.mechanism(algorithm)
    problem, graphs = setting.problem(), setting.graphs(spec.push_sum)
    claims = spec.claim(setting)
    arguments = spec.run_arguments(setting, claims)
    run = spec.run(
        problem, graphs=graphs, gradient_noise=setting.gradient_noise, iterations=setting.iterations,
        seeds=np.random.SeedSequence(setting.seed).spawn(trials), **arguments)
    T = setting.iterations
    decisions = run.extras["decision"][:, :T]
    losses = np.stack([problem.value(t, decisions[:, t - 1]) for t in range(1, T + 1)], axis=1)  # (trials, T)
    running = np.cumsum(decisions, axis=1) / np.arange(1, T + 1)[None, :, None]
    running_losses = np.stack([problem.value(t, running[:, t - 1]) for t in range(1, T + 1)], axis=1)
    best = hindsight_optimum(problem, T).objective
    regret = float(losses.sum(axis=1).mean() - best)
    average_regret = float(running_losses.sum(axis=1).mean() - best)
    # the regret bound of the claim's object where it states one (DPSDA's Theorem 3/5); a variant's claim may not
    stated = hasattr(claims, "regret_bound")
    bound = claims.regret_bound(T) if stated else None
    try:
        claim = spec.claim_value(setting, claims).as_dict()
    except InvalidConfiguration as refused:  # no finite claim: step_epsilon = inf draws no noise
        claim = {"none": f"no finite claim ({refused})"}
    return {
        "algorithm": algorithm, "nodes": setting.nodes, "dim": problem.dim, "iterations": T,
        "epsilon": setting.step_epsilon, "sigma": arguments.get("sigma"), "trials": trials,
        "regret": regret, "regret_over_T": regret / T, "average_regret": average_regret,
        "regret_bound": bound, "regret_within_bound": None if bound is None else regret <= bound,
        "hindsight_optimum": best, "claim": claim,
        "claims": claims.as_dict(T) if stated else None, "seed": describe_seed(run.seeds[0]),
        "wall_time_s": run.wall_time_s,
        "definitions": {"regret": "mean over trials of sum_t f_t(x(t)) - min_v sum_t f_t(v), eq. (3)",
                        "average_regret": "the same for the running average x~(t), eq. (19)"},
    }
