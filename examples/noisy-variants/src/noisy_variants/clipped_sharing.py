"""``clipped-sharing``: ADMM sharing whose parties clip what they share and add Gaussian noise to it.

Update equations (ADMM-sharing paper Algorithm 1): party m solves (6) for x_m^{t+1} from the public z^t, y^t and
the others' shared vectors, then shares

    s_m^{t+1} = clip(D_m x_m^{t+1}) + N(0, σ² I_N),    clip(v) = v · min(1, c/‖v‖),

and the server runs (7) and (8) on Σ_m s_m^{t+1}; every later use of party m's block is s_m. The paper's DP version
adds N(0, σ²(D_mᵀD_m)⁻¹) to x_m instead, which keeps D_m x̃_m inside col(D_m) (admmcheck finds that version is not
differentially private); here the noise has full support in R^N.

Claim (:func:`clipped_sharing_bound`): x_m^{t+1} is a function of D_m and of what was released before, so each
iteration releases a Gaussian mechanism of an adaptively chosen function; a clipped vector lies in the ball of
radius c (``--clip``, a parameter of its own), so its L2 sensitivity to any change of D_m (one row, Definition 2) is
at most 2c. With σ = 2c √(2 ln(1.25/δ)) / ε each iteration is (ε, δ)-DP for ε < 1 (Dwork & Roth, Theorem A.1); over
T iterations the claim is the smaller of basic composition (Tε, Tδ) and advanced composition (ε', Tδ + δ'), and
dp-accounting's PLD accountant gives the tight figure for the record.
"""

from __future__ import annotations

import numpy as np

from dataclasses import dataclass, replace

from admmcheck.algorithms.runner import RunContext, algorithm
from admmcheck.algorithms.sharing import PartySolver, z_update
from admmcheck.foundations.formulas import parse_number
from admmcheck.mechanisms.registry import MechanismSpec
from admmcheck.mechanisms.settings import SharingSetting
from admmcheck.solving.noise import clip_norm, per_trial
from admmcheck.foundations.parameters import parameter
from admmcheck.privacy.sharing import SharingPrivacy, corollary1_total, gaussian_composition, theorem1_sigma
from admmcheck.problems.sharing import SharingProblem

NAME = "clipped-sharing"


@dataclass(frozen=True)
class ClippedSetting(SharingSetting):
    """admmcheck's sharing setting and the clip norm c of this variant: a flag ``--clip`` of ``run``, ``bound`` and
    ``audit``, a keyword of the assertions' settings, part of every replay command."""

    clip: float = parameter(1.0, "clip norm c: each party shares clip(D_m x_m) of norm <= c", read=parse_number)


def _samples(problem: SharingProblem) -> int:
    return problem.samples


@algorithm(NAME, peers=False, zero_start=True, dual_dim=_samples)
def run_clipped_sharing(context: RunContext, *, rho: float = 1.0, sigma=1.0, clip: float = 1.0):
    """ADMM sharing (6)-(8) whose shared vectors are clipped to norm ``clip`` and carry N(0, σ_m² I) (module
    docstring).
    Extras as admmcheck's sharing runs: ``shared`` (trials, T+1, M, N) and ``z`` (trials, T+1, N)."""
    problem: SharingProblem = context.problem
    trials, T, M, N = context.start.f.shape[0], context.iterations, problem.parties, problem.samples
    sigma = np.broadcast_to(np.asarray(sigma, dtype=float), (M,))
    context.parameters.update(rho=rho, sigma=sigma.tolist(), clip=clip)
    solvers = [PartySolver(problem, m, rho) for m in range(M)]
    noise = per_trial(context.start.rngs, lambda rng: rng.standard_normal((T, M, N))) * sigma[None, None, :, None]
    shared, z_record = np.zeros((trials, T + 1, M, N)), np.zeros((trials, T + 1, N))
    context.extras.update(shared=shared, z=z_record)
    x, y, z = context.start.f[:, 0].copy(), np.zeros((trials, N)), np.zeros((trials, N))
    released = np.zeros((trials, M, N))  # x = 0 shares nothing
    for t in range(T):
        total = released.sum(axis=1)
        for m, solver in enumerate(solvers):  # (6), in parallel, from the others' shared vectors
            columns = slice(problem.offsets[m], problem.offsets[m + 1])
            x[:, columns] = solver.solve(z - (total - released[:, m]), y)
        released = clip_norm(np.stack([x[:, problem.offsets[m]:problem.offsets[m + 1]] @ problem.parts[m].T
                                   for m in range(M)], axis=1), clip) + noise[:, t]
        s = released.sum(axis=1)
        z = z_update(problem, s, y, rho, context.tol)  # (7)
        y = y + rho * (s - z)  # (8)
        shared[:, t + 1], z_record[:, t + 1] = released, z
        yield x[:, None, :].copy(), y[:, None, :]


def clipped_sharing_bound(setting: ClippedSetting) -> SharingPrivacy:
    """σ = 2c √(2 ln(1.25/δ)) / ε for (ε, δ) = (``step_epsilon``, ``step_delta``) per iteration; totals over
    ``setting.iterations`` (module docstring), for the variant's setting (party widths ``setting.widths``, clip norm
    ``setting.clip``)."""
    epsilon, delta, iterations, widths = setting.step_epsilon, setting.step_delta, setting.iterations, setting.widths
    sensitivity = 2 * setting.clip
    sigma = theorem1_sigma(sensitivity, epsilon, delta)
    total, delta_total = corollary1_total(epsilon, delta, iterations, setting.delta_prime)
    pld, rdp = gaussian_composition(sigma / sensitivity, iterations, delta_total)
    return SharingPrivacy(tuple(widths), (sensitivity,) * len(widths), (sigma,) * len(widths), epsilon, delta,
                          iterations, setting.delta_prime, total, delta_total, (iterations * epsilon, iterations * delta),
                          pld, rdp, {"epsilon_below_1": epsilon < 1.0, "delta_total_below_1": delta_total < 1.0},
                          theorem="Gaussian mechanism of sensitivity 2c per iteration (Dwork & Roth Thm A.1), "
                                  "composed")


# Its neighbours are its family's (Definition 2: one row of a party), and so are the places an audit changes. Its
# verify audit runs on 4 rows a party, where one changed row moves what is shared the most.
SPEC = MechanismSpec(
    NAME, "sharing", "ADMM sharing with clipped, Gaussian-perturbed shares (admmcheck-noisy-variants)",
    run_clipped_sharing, theorem="Gaussian mechanism per iteration, composed", claim=clipped_sharing_bound,
    setting=ClippedSetting, arguments=lambda s: {"clip": s.clip},
    audit_setting=replace(ClippedSetting.defaults("audit"), samples=4))
