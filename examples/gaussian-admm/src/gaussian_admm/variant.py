"""``gaussian-admm``: decentralized ADMM whose nodes clip their update and broadcast it with Gaussian noise.

Update equations (M-ADMM paper, the simplified decentralized ADMM (8)-(9) with λ_i(0) = 0). Node i keeps only public
values besides its data D_i: what it and its neighbours broadcast, b_j(t), and its dual λ_i(t). At iteration t+1 it

    m_i(t+1) = argmin_f O(f, D_i) + 2 λ_i(t)ᵀ f + η Σ_{j∈V_i} ‖(b_i(t) + b_j(t))/2 − f‖²        (8) on broadcasts
    b_i(t+1) = b_i(t) + clip(m_i(t+1) − b_i(t)) + N(0, σ² I_d),   clip(v) = v · min(1, c/‖v‖₂)   broadcast
    λ_i(t+1) = λ_i(t) + η/2 Σ_{j∈V_i} (b_i(t+1) − b_j(t+1))                                   (9) on broadcasts

with c = ``--clip`` and σ = ``--sigma`` (parameters of its own, :class:`GaussianSetting`), from b_i(0) = 0. Without
noise and with a clip no update reaches (σ = 0, c = inf: the run function takes both), b_i = f_i and this is ADMM
(8)-(9) started from f_i(0) = 0.

Privacy (:func:`gaussian_admm_claim`). Neighbours are the consensus family's: datasets that differ in one record
(x, y) of one node i (M-ADMM paper Definition 4.1's "differing in at most one data point"); what is released is every
broadcast b_j(t), j = 1..N, t = 1..T. Condition on everything released before iteration t+1. Every node j ≠ i then
computes b_j(t+1) from D_j and public values, so its broadcast has the same law on both datasets; node i's is
b_i(t) + clip(m_i(t+1) − b_i(t)) + N(0, σ²I), whose mean is a point of the ball of radius c around the public b_i(t)
on either dataset. Two such points are at most 2c apart, so iteration t+1 is a Gaussian mechanism with L2
sensitivity Δ = 2c, applied to a function chosen from what was released before (clipping is what makes Δ
independent of the data, the loss and η). T such mechanisms composed adaptively are μ-GDP with μ = √T Δ/σ (Dong,
Roth & Su 2022, Cor. 3.3), and exactly as private as T non-adaptive ones; the claim is the (ε, δ) this implies at
δ = 1e-5, as dp-accounting's PLD accountant computes it for ``SelfComposedDpEvent(GaussianDpEvent(σ/Δ), T)``:
an :class:`~admmcheck.claims.ApproxDp` value, which every audit tests as (ε, δ), δ and all. The start b_i(0) = 0
depends on no data. A smaller sensitivity would also hold, min(2c, 2C/(B_i(ρ/N + 2ηV_i))): one record moves the
gradient of O(f, D_i) = C/B_i Σ_n L(y_i^n fᵀx_i^n) + ρ/N R(f), the paper's (2), by at most 2C/B_i where |L'| <= 1
and ‖x‖ <= 1, (8) is (ρ/N + 2ηV_i)-strongly convex, and clipping, a projection, moves no two points farther apart.
The claim uses 2c, which holds whatever the data.

``gaussian-admm-quiet`` is the same algorithm with the bug this package exists to show being caught: it draws σ/100
while its claim is the one for σ.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from admmcheck.algorithms.admm import admm_dual_step, admm_primal_step
from admmcheck.algorithms.runner import RunContext, algorithm
from admmcheck.claims import ApproxDp
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.formulas import parse_number
from admmcheck.mechanisms.registry import MechanismSpec, constant_eta
from admmcheck.mechanisms.settings import ConsensusSetting
from admmcheck.solving.noise import clip_norm, per_trial
from admmcheck.foundations.parameters import parameter
from admmcheck.foundations.validation import real

NAME = "gaussian-admm"
QUIET = "gaussian-admm-quiet"
#: the δ of the claim
DELTA = 1e-5


@dataclass(frozen=True)
class GaussianSetting(ConsensusSetting):
    """admmcheck's consensus setting with this variant's two parameters: each is a flag of ``run``, ``bound`` and
    ``audit`` (``--clip``, ``--sigma``), a keyword of the assertions' settings and a part of every replay command."""

    clip: float = parameter(0.1, "clip norm c: a node's update b_i(t+1) - b_i(t) is clipped to norm <= c before "
                            "its noise is added", read=parse_number)
    sigma: float = parameter(1.0, "standard deviation sigma of the Gaussian noise on each coordinate of a "
                             "broadcast", read=parse_number)

    def __post_init__(self) -> None:
        super().__post_init__()
        real("clip", self.clip)
        real("sigma", self.sigma)


@algorithm(NAME, zero_start=True)
def run_gaussian_admm(context: RunContext, *, eta: float = 0.5, clip: float = 0.1, sigma: float = 1.0):
    """ADMM (8)-(9) whose nodes broadcast b_i(t+1) = b_i(t) + clip(m_i(t+1) − b_i(t)) + N(0, σ² I) (module
    docstring); ``sigma=0`` and ``clip=inf`` give ADMM itself."""
    yield from _updates(context, eta, clip, sigma)


@algorithm(QUIET, zero_start=True)
def run_gaussian_admm_quiet(context: RunContext, *, eta: float = 0.5, clip: float = 0.1, sigma: float = 1.0):
    """The deliberate bug of ``gaussian-admm-quiet``: the noise is σ/100 (a scale taken in the wrong unit), while
    its claim is ``gaussian-admm``'s for σ."""
    yield from _updates(context, eta, clip, sigma / 100)


def _updates(context: RunContext, eta: float, clip: float, sigma: float):
    eta, sigma = real("eta", eta), real("sigma", sigma, strict=False)
    clip = clip if clip == np.inf else real("clip", clip)
    context.parameters.update(eta=eta, clip=clip, sigma=sigma)
    problem, network = context.problem, context.network
    noise = per_trial(context.start.rngs, lambda rng: rng.standard_normal((context.iterations, problem.nodes,
                                                                          problem.dim))) * sigma
    b, lam = context.start.f, np.zeros_like(context.start.f)  # b_i(0) = 0: no data
    for t in range(context.iterations):
        solution = admm_primal_step(problem, network, b, lam, eta, context.tol)  # (8), on the broadcasts
        b = b + clip_norm(solution.f - b, clip) + noise[:, t]  # what node i broadcasts
        lam = admm_dual_step(network, lam, b, eta)  # (9), on the broadcasts
        yield b, lam, solution.newton_steps


@lru_cache(maxsize=64)
def composed_epsilon(noise_multiplier: float, iterations: int, delta: float) -> float:
    """ε at ``delta`` of ``iterations`` Gaussian mechanisms of noise multiplier σ/Δ, composed (dp-accounting's PLD
    accountant)."""
    import dp_accounting
    from dp_accounting.pld import PLDAccountant

    accountant = PLDAccountant()
    accountant.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(noise_multiplier), iterations))
    return float(accountant.get_epsilon(delta))


def gaussian_admm_claim(setting: GaussianSetting) -> ApproxDp:
    """(ε, 1e-5)-DP over ``setting.iterations`` iterations: the Gaussian mechanism of sensitivity Δ = 2c and noise σ
    at every iteration, composed (module docstring)."""
    sensitivity = 2 * setting.clip
    noise_multiplier = setting.sigma / sensitivity
    if not noise_multiplier > 0:
        raise InvalidConfiguration("sigma=0 draws no noise: there is no finite claim", parameter="sigma")
    epsilon = composed_epsilon(noise_multiplier, setting.iterations, DELTA)
    return ApproxDp(epsilon, DELTA, source=f"Gaussian mechanism of sensitivity 2c = {sensitivity:g} and sigma = "
                                           f"{setting.sigma:g} at each of {setting.iterations} iterations, composed "
                                           "(dp-accounting PLD)")


def gaussian_arguments(setting: GaussianSetting) -> dict[str, object]:
    """The run's keyword arguments on ``setting``: its constant penalty η and its own clip c and noise σ."""
    return {"eta": constant_eta(setting.eta, setting.iterations, setting.nodes, NAME), "clip": setting.clip,
            "sigma": setting.sigma}


#: where ``admmcheck verify`` audits it: 3 nodes of 2 records in 2 dimensions (C = 2, so that one record weighs on its
#: node's minimiser) for 3 iterations, with a clip of 0.05 that every update reaches, so that one changed record turns
#: what node 0 broadcasts by most of the whole 2c; sigma = 0.5 (claim: about (1.33, 1e-5)-DP)
AUDIT_SETTING = replace(GaussianSetting.defaults("audit"), samples=6, C=2.0, iterations=3, clip=0.05, sigma=0.5)

SPEC = MechanismSpec(
    NAME, "consensus", "ADMM with clipped updates and Gaussian noise on each broadcast (admmcheck-gaussian-admm)",
    run_gaussian_admm, ("eta",), setting=GaussianSetting, arguments=gaussian_arguments,
    theorem="Gaussian mechanism of sensitivity 2c per iteration, composed", claim=gaussian_admm_claim,
    audit_setting=AUDIT_SETTING)

# Deliberately broken, to show admmcheck catching it: gaussian-admm's claim and setting, a hundredth of its noise.
BROKEN = MechanismSpec(
    QUIET, "consensus", "gaussian-admm with one hundredth of the noise it claims (deliberately broken, "
    "admmcheck-gaussian-admm)", run_gaussian_admm_quiet, ("eta",), setting=GaussianSetting,
    arguments=gaussian_arguments, theorem="Gaussian mechanism of sensitivity 2c per iteration, composed (for 100 "
    "times the noise it draws)", claim=gaussian_admm_claim, audit_setting=AUDIT_SETTING)
