"""Recycled ADMM (R-ADMM), recycled-admm paper eq. (10)-(13) and Algorithm 1.

Odd iterations are conventional ADMM steps (eq. (12)-(13) = M-ADMM paper (8)-(9)).
Even iterations linearise O around f_i(2k-1) with proximal weight gamma >= 0 and update
the primal only, reusing results of the odd step:

    f_i(2k) = f_i(2k-1) - 1/(2 eta V_i + gamma) { grad O(f_i(2k-1), D_i) + 2 lambda_i(2k-1)
              + eta sum_{j in V_i} (f_i(2k-1) - f_j(2k-1)) }                        (10)
    lambda_i(2k) = lambda_i(2k-1)                                                   (11)

``iterations`` counts both kinds of step: the transcript is f(0), f(1) (odd), f(2) (even), ...
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from admmcheck.algorithms.admm import admm_dual_step, admm_primal_step
from admmcheck.algorithms.runner import RunContext, algorithm
from admmcheck.problems.networks import Network
from admmcheck.foundations.validation import real


def radmm_even_step(
    network: Network,
    f_odd: np.ndarray,
    lam_odd: np.ndarray,
    gradient_odd: np.ndarray,
    eta: float,
    gamma: float,
) -> np.ndarray:
    """Eq. (10): the gradient-like even update from the odd iteration's results.

    ``gradient_odd`` is grad O(f_i(2k-1), D_i) (in private R-ADMM, eq. (29), it is
    replaced by the KKT-recycled eps_i + grad O). Shapes (trials, N, d).
    """
    step_size = 1.0 / (2.0 * eta * network.degrees + gamma)  # 1 / (2 eta V_i + gamma)
    disagreement = network.laplacian @ f_odd  # sum_j (f_i(2k-1) - f_j(2k-1))
    direction = gradient_odd + 2.0 * lam_odd + eta * disagreement
    return f_odd - step_size[:, None] * direction


@algorithm("radmm")
def run_radmm(context: RunContext, *, eta: float = 0.5, gamma: float = 0.5) -> Iterator[tuple]:
    """Run R-ADMM (Algorithm 1) for ``iterations`` = T steps (odd and even alike)."""
    eta = real("eta", eta)
    gamma = real("gamma", gamma, minimum=0.0, strict=False)
    context.parameters.update(eta=eta, gamma=gamma)
    problem, network = context.problem, context.network
    f = context.start.f
    lam = np.zeros_like(f)
    for t in range(1, context.iterations + 1):
        if t % 2 == 1:
            solution = admm_primal_step(problem, network, f, lam, eta, context.tol)  # eq. (12)
            f = solution.f
            lam = admm_dual_step(network, lam, f, eta)  # eq. (13)
            yield f, lam, solution.newton_steps
        else:
            gradient = problem.local_gradients(f)  # grad O(f_i(2k-1), D_i), Alg. 1
            f = radmm_even_step(network, f, lam, gradient, eta, gamma)  # eq. (10), (11)
            yield f, lam
