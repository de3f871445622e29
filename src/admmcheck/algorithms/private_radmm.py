"""Private R-ADMM, Algorithm 2 of the recycled-admm paper (§IV), and Lemma IV.1.

Odd iterations solve the objective-perturbed ADMM step, eps_i(2k-1) with density
proportional to exp(-alpha_i(k) ||eps||_2):

    f_i(2k-1) = argmin_f O(f, D_i) + (2 lambda_i(2k-2) + eps_i(2k-1))^T f
                         + eta sum_{j in V_i} ||(f_i(2k-2) + f_j(2k-2))/2 - f||^2     (28)
    lambda_i(2k-1) = lambda_i(2k-2) + eta/2 sum_{j in V_i} (f_i(2k-1) - f_j(2k-1))   (13)

Even iterations reuse the stored eps_i(2k-1) + grad O(f_i(2k-1), D_i):

    f_i(2k) = f_i(2k-1) - 1/(2 eta V_i + gamma) { 2 lambda_i(2k-1)
              + eps_i(2k-1) + grad O(f_i(2k-1), D_i)
              + eta sum_{j in V_i} (f_i(2k-1) - f_j(2k-1)) }                         (29)
    lambda_i(2k) = lambda_i(2k-1)

Lemma IV.1 rests on eps_i(2k-1) + grad O(f_i(2k-1), D_i) being a function of released
values only (the KKT condition of (28)); :func:`recycled_gradient` computes it that way and
:func:`even_iterates_from_transcript` rebuilds every even iterate from the broadcast
transcript alone, without the data.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from admmcheck.algorithms.admm import admm_dual_step, admm_primal_step
from admmcheck.algorithms.radmm import radmm_even_step
from admmcheck.algorithms.runner import RunContext, algorithm
from admmcheck.problems.networks import Network
from admmcheck.solving.noise import gamma_noise_table
from admmcheck.solving.schedules import ScheduleLike, schedule_table, step_schedule


def odd_steps(iterations: int) -> int:
    """K = number of odd (noisy) iterations among t = 1..T."""
    return (iterations + 1) // 2


def recycled_gradient(
    network: Network, f_prev: np.ndarray, f_odd: np.ndarray, lam_prev: np.ndarray, eta: float
) -> np.ndarray:
    """eps_i(2k-1) + grad O(f_i(2k-1), D_i) from the KKT condition of (28), public values only.

    = -2 lambda_i(2k-2) - eta sum_{j in V_i} (2 f_i(2k-1) - f_i(2k-2) - f_j(2k-2))
    = -2 Lambda(2k-2) - eta (2 D f(2k-1) - (D + A) f(2k-2)). Shapes (..., N, d).
    """
    return -2.0 * lam_prev - eta * (2.0 * network.degrees[:, None] * f_odd - network.signless_laplacian @ f_prev)


def duals_from_transcript(network: Network, primal: np.ndarray, eta: float) -> np.ndarray:
    """Rebuild lambda_i(t) from the broadcast f_i(t): (13) at odd t, unchanged at even t.

    ``primal`` is (trials, T+1, N, d); returns the same shape with lambda(0) = 0.
    """
    lam = np.zeros_like(primal)
    for t in range(1, primal.shape[1]):
        lam[:, t] = admm_dual_step(network, lam[:, t - 1], primal[:, t], eta) if t % 2 else lam[:, t - 1]
    return lam


def even_iterates_from_transcript(network: Network, primal: np.ndarray, eta: float, gamma: float) -> np.ndarray:
    """Recompute every f(2k) by (29) from the transcript f(0..2k-1), eta and gamma — no data.

    Returns (trials, number of even t, N, d), to compare with ``primal[:, 2::2]``.
    """
    lam = duals_from_transcript(network, primal, eta)
    evens = []
    for t in range(2, primal.shape[1], 2):
        recycled = recycled_gradient(network, primal[:, t - 2], primal[:, t - 1], lam[:, t - 2], eta)
        evens.append(radmm_even_step(network, primal[:, t - 1], lam[:, t - 1], recycled, eta, gamma))
    return np.stack(evens, axis=1)


@algorithm("private-radmm")
def run_private_radmm(context: RunContext, *, eta: ScheduleLike = 1.0, gamma: ScheduleLike = 0.2,
                      alpha: ScheduleLike = 5.0) -> Iterator[tuple]:
    """Run private R-ADMM (Algorithm 2) for T = ``iterations`` steps, odd and even alike.

    ``alpha`` gives alpha_i(k) for the K = ceil(T/2) odd iterations (scalar, per node,
    (K, N) table or GeometricSchedule); ``alpha = inf`` gives R-ADMM (Algorithm 1) exactly.
    ``eta`` and ``gamma`` are the constants of Algorithm 2, or a schedule over t = 1..T shared by
    all nodes (a GeometricSchedule or a length-T sequence) for the growing step sizes of the
    paper's Fig. 3 (eta(t) = 1.01^t, gamma(t) = 0.2 * 1.01^t); odd t uses eta(t) in (28) and
    (13), even t uses eta(t) and gamma(t) in (29).
    The parameter condition of Algorithm 2, 2 c1 < min_i (B_i/C)(rho/N + 2 eta V_i), is a
    precondition of the bound (:func:`admmcheck.privacy.radmm_bound`), not enforced here.
    Extras: ``noise`` eps_i(2k-1), shape (trials, K, N, d).
    """
    problem, network = context.problem, context.network
    etas = step_schedule("eta", eta, context.iterations)
    gammas = step_schedule("gamma", gamma, context.iterations, minimum=0.0)
    alphas = schedule_table("alpha", alpha, odd_steps(context.iterations), problem.nodes, allow_infinite=True)
    noise = gamma_noise_table(context.start.rngs, alphas, problem.dim)
    context.parameters.update(eta=_recorded(etas), gamma=_recorded(gammas), alpha=alphas.tolist())
    context.extras["noise"] = noise
    f = context.start.f
    lam = np.zeros_like(f)
    for t in range(1, context.iterations + 1):
        eta_t = float(etas[t - 1])
        if t % 2 == 1:
            eps = noise[:, (t - 1) // 2]
            # (2 lambda + eps)^T f  ==  2 (lambda + eps/2)^T f in the ADMM step (8)
            solution = admm_primal_step(problem, network, f, lam + 0.5 * eps, eta_t, context.tol)  # eq. (28)
            f = solution.f
            lam = admm_dual_step(network, lam, f, eta_t)  # eq. (13)
            stored = eps + problem.local_gradients(f)  # eps_i(2k-1) + grad O(f_i(2k-1)), Alg. 2
            yield f, lam, solution.newton_steps
        else:
            f = radmm_even_step(network, f, lam, stored, eta_t, float(gammas[t - 1]))  # eq. (29)
            yield f, lam


def _recorded(values: np.ndarray) -> float | list[float]:
    """A constant as one number (what the white-box loss reads), a schedule as its list."""
    return float(values[0]) if np.all(values == values[0]) else values.tolist()
