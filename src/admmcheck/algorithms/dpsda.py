"""DPSDA-C (Algorithm 1, (11)-(14)) and DPSDA-PS (Algorithm 2, (20)-(22)) of the DPSDA paper.

Every node i keeps a dual z_i ∈ R^d (all coordinates) and a local copy y_i ∈ χ^d of the
decision; it controls the block of coordinates i (``problem.owner``), and the global decision
is x(t) = (y_1^{block 1}(t), …, y_n^{block n}(t)). At round t = 1..T, after committing x(t):

    u_i(t)  = [∇f_t(y_i(t))]_{block i} + ξ_i(t),   ξ ~ N(0, ν²)                       (14)
    h_i(t)  = z_i(t) + η_i(t),   η_i(t) ~ Lap(σ) i.i.d. per coordinate        (11), broadcast
    DPSDA-C:  z_i(t+1) = n E_i u_i(t) + Σ_j W(t)_ij h_j(t)                               (12)
              y_i(t+1) = Π^ψ(z_i(t+1), α(t)) = proj_χ(−α(t) z_i(t+1))                     (13)
    DPSDA-PS: z_i(t+1) = n E_i u_i(t) + Σ_j A(t)_ij h_j(t);  w_i(t+1) = Σ_j A(t)_ij w_j(t)  (20)-(21)
              y_i(t+1) = proj_χ(−α(t) z_i(t+1) / w_i(t+1))                                (22)

with z_i(1) = 0, w_i(1) = 1, y_i(1) = Π^ψ(0) = 0 and α(t) = 1/√t (the paper's (12) expanded:
z_i^k(t+1) = nδ_i^k u_i + h_i^k + Σ_j W_ij(h_j^k − h_i^k), equal to the form above because
W(t)1 = 1; node i's own term uses its noisy h_i, as written). ψ = ½‖·‖² (the paper leaves ψ
open). σ = 0 switches the Laplace noise off (ε = ∞).

Transcript (the one run type): ``primal`` y_i(t) and ``dual`` z_i(t), index k ↔ round k+1
(k = 0..T); extras ``broadcast`` h_i(t) (trials, T, n, d) — every message, what the adversary of
§2.3 sees — ``decision`` x(t) (trials, T+1, d), ``push_sum_weights`` w_i(t) for DPSDA-PS.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from admmcheck.algorithms.runner import RunContext, algorithm
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.problems.graph_sequences import GraphSequence
from admmcheck.solving.noise import per_trial
from admmcheck.problems.online import OnlineProblem
from admmcheck.foundations.validation import real


def _dual_averaging(context: RunContext, graphs: GraphSequence, sigma: float, gradient_noise: float,
                    push_sum: bool) -> Iterator[tuple]:
    problem: OnlineProblem = context.problem
    if not isinstance(problem, OnlineProblem):
        raise InvalidConfiguration("DPSDA runs on an OnlineProblem (problems.online)")
    if graphs.nodes != problem.nodes:
        raise InvalidConfiguration(f"the graph sequence has {graphs.nodes} nodes, the problem {problem.nodes}")
    if graphs.directed != push_sum:
        raise InvalidConfiguration("DPSDA-PS needs a directed (column-stochastic) sequence, DPSDA-C an undirected "
                                   "(row-stochastic) one")
    T, n, d = context.iterations, problem.nodes, problem.dim
    if T > problem.rounds:
        raise InvalidConfiguration(f"the problem has {problem.rounds} rounds; T = {T} needs as many functions")
    sigma = real("sigma", sigma, minimum=0.0, strict=False)
    gradient_noise = real("gradient_noise", gradient_noise, minimum=0.0, strict=False)
    laplace = per_trial(context.start.rngs, lambda rng: rng.laplace(0.0, 1.0, size=(T, n, d)))
    # the gradient errors are each trial's last draw: with nu = 0 they are not drawn, and nothing else changes
    gaussian = per_trial(context.start.rngs, lambda rng: rng.standard_normal(size=(T, n, d))) if gradient_noise \
        else np.zeros((1, T, 1, 1))
    trials = laplace.shape[0]
    broadcast = np.empty((trials, T, n, d))
    decision = np.zeros((trials, T + 1, d))
    context.extras.update(broadcast=broadcast, decision=decision)
    weights_record = None
    if push_sum:
        weights_record = np.ones((trials, T + 1, n))
        context.extras["push_sum_weights"] = weights_record
    mask = problem.block_mask  # (n, d)
    y = context.start.f.copy()  # (trials, n, d): y_i(1) = 0
    z = np.zeros_like(y)
    w = np.ones((trials, n))
    for t in range(1, T + 1):
        decision[:, t - 1] = problem.decision(y)
        u = (problem.gradient(t, y) + gradient_noise * gaussian[:, t - 1]) * mask  # (14), block i only
        h = z + sigma * laplace[:, t - 1]  # (11)
        broadcast[:, t - 1] = h
        mixing = graphs.at(t)
        z = n * u + np.einsum("ij,sjd->sid", mixing, h)  # (12) / (20)
        if push_sum:
            w = w @ mixing.T  # (21): w_i = Σ_j A_ij w_j
            weights_record[:, t] = w
            y = problem.project(-z / w[..., None] / np.sqrt(t))  # (22), α(t) = 1/√t
        else:
            y = problem.project(-z / np.sqrt(t))  # (13)
        yield y, z
    decision[:, T] = problem.decision(y)


@algorithm("dpsda-c", peers=False, zero_start=True)
def run_dpsda_c(context: RunContext, *, graphs: GraphSequence, sigma: float = 0.0,
                gradient_noise: float = 0.0) -> Iterator[tuple]:
    """Run DPSDA-C (Algorithm 1) over the undirected sequence ``graphs`` (row-stochastic W(t)),
    Laplace scale ``sigma`` (σ = Δ/ε by Theorem 2; 0 for ε = ∞) and gradient noise std ν."""
    context.parameters.update(sigma=sigma, gradient_noise=gradient_noise, window=graphs.window)
    yield from _dual_averaging(context, graphs, sigma, gradient_noise, push_sum=False)


@algorithm("dpsda-ps", peers=False, zero_start=True)
def run_dpsda_ps(context: RunContext, *, graphs: GraphSequence, sigma: float = 0.0,
                 gradient_noise: float = 0.0) -> Iterator[tuple]:
    """Run DPSDA-PS (Algorithm 2) over the directed sequence ``graphs`` (column-stochastic A(t))."""
    context.parameters.update(sigma=sigma, gradient_noise=gradient_noise, window=graphs.window)
    yield from _dual_averaging(context, graphs, sigma, gradient_noise, push_sum=True)
