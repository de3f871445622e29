"""``noisy-admm``: decentralized ADMM whose broadcast carries noise (a private consensus variant).

Update equations: the primal step (8) and dual step (9) of decentralized ADMM (M-ADMM paper), except that node i
broadcasts f_i(t+1) + ε_i(t+1) with ε of density ∝ exp(−α_i(t) ‖ε‖₂), and every later step uses the broadcast
value. This is how PVP's noise enters the release (Zhang & Zhu 2017), so admmcheck's white box for PVP applies:
``release=PrimalPerturbation()``.

Claim (:func:`noisy_admm_bound`): one changed record of node i moves the gradient of (8) by at most 2C/B_i
(|L'| ≤ 1, ‖x‖ ≤ 1); (8) is (ρ/N + 2ηV_i)-strongly convex, so its minimiser moves by at most
Δ_i = 2C / (B_i (ρ/N + 2ηV_i)); a step's privacy loss is at most α_i(t) Δ_i, and β = max_i Σ_t α_i(t) Δ_i.
"""

from __future__ import annotations

import numpy as np

from admmcheck.algorithms.admm import admm_dual_step, admm_primal_step
from admmcheck.algorithms.runner import RunContext, algorithm
from admmcheck.mechanisms.conditions import MADMM
from admmcheck.mechanisms.registry import MechanismSpec, constant_eta
from admmcheck.mechanisms.releases import PrimalPerturbation
from admmcheck.solving.noise import gamma_noise_table
from admmcheck.privacy import PrivacyBound
from admmcheck.solving.schedules import schedule_table

NAME = "noisy-admm"


@algorithm(NAME)
def run_noisy_admm(context: RunContext, *, eta: float = 0.5, alpha=5.0):
    """ADMM (8)-(9) whose broadcast f_i(t+1) carries noise of density ∝ exp(−α_i(t) ‖e‖)."""
    yield from _noisy_updates(context, eta, alpha, noise_scale=1.0)


@algorithm("quiet-admm")
def run_quiet_admm(context: RunContext, *, eta: float = 0.5, alpha=5.0):
    """The deliberate bug of ``quiet-admm``: the noise is one hundredth of what α_i(t) asks (a scale taken in the
    wrong unit), while its claim is ``noisy-admm``'s for α_i(t)."""
    yield from _noisy_updates(context, eta, alpha, noise_scale=0.01)


def _noisy_updates(context: RunContext, eta: float, alpha, noise_scale: float):
    alphas = schedule_table("alpha", alpha, context.iterations, context.problem.nodes, allow_infinite=True)
    noise = gamma_noise_table(context.start.rngs, alphas, context.problem.dim) * noise_scale
    context.parameters.update(eta=eta, alpha=alphas.tolist())
    f, lam = context.start.f, np.zeros_like(context.start.f)
    for t in range(context.iterations):
        solution = admm_primal_step(context.problem, context.network, f, lam, eta, context.tol)  # (8)
        f = solution.f + noise[:, t]  # perturbed before it is broadcast
        lam = admm_dual_step(context.network, lam, f, eta)  # (9) with the broadcast values
        yield f, lam, solution.newton_steps


def noisy_admm_bound(setting) -> PrivacyBound:
    """β = max_i Σ_t α_i(t) Δ_i with Δ_i = 2C / (B_i (ρ/N + 2ηV_i)) (module docstring), on admmcheck's consensus
    setting (its ``bound_setting()``: sizes B_i, degrees V_i, C, ρ, the data's largest norm)."""
    facts, iterations = setting.bound_setting(), setting.iterations
    alphas = schedule_table("alpha", setting.alpha, iterations, facts.nodes, allow_infinite=True)
    sizes, degrees = np.asarray(facts.sizes, float), np.asarray(facts.degrees, float)
    eta = constant_eta(setting.eta, iterations, facts.nodes, NAME)
    delta = 2 * facts.C / (sizes * (facts.rho / facts.nodes + 2 * eta * degrees))
    per_step = alphas * delta  # (T, N)
    return PrivacyBound("noisy ADMM: alpha times the minimiser's sensitivity", per_step.sum(axis=0),
                        np.cumsum(per_step, axis=0).max(axis=1),
                        {"feature_norm_at_most_1": facts.max_feature_norm <= 1 + 1e-9})


SPEC = MechanismSpec(
    NAME, "consensus", "ADMM with a noisy broadcast (admmcheck-noisy-variants)", run_noisy_admm, ("eta", "alpha"),
    arguments=lambda s: {"eta": constant_eta(s.eta, s.iterations, s.nodes, NAME), "alpha": s.alpha},
    theorem="alpha x the minimiser's sensitivity", claim=noisy_admm_bound,
    release=PrimalPerturbation(),  # its noise enters as PVP's: added to the minimiser of (8)
    conditions=MADMM)  # without noise it is ADMM, M-ADMM with the constant penalty eta = theta (Theorem 3.1)


# Deliberately broken, to show admmcheck catching it: the claim of noisy-admm, the noise of quiet-admm. It registers no
# release=, since its noise does not enter as the claim says: it has no white box, and its audits are black box.
BROKEN = MechanismSpec(
    "quiet-admm", "consensus", "noisy ADMM with one hundredth of the noise it claims (deliberately broken, "
    "admmcheck-noisy-variants)", run_quiet_admm, ("eta", "alpha"),
    arguments=lambda s: {"eta": constant_eta(s.eta, s.iterations, s.nodes, NAME), "alpha": s.alpha},
    theorem="alpha x the minimiser's sensitivity (for 100 times the noise it draws)", claim=noisy_admm_bound,
    first_place=((0, 0), "--record 0:0"))
