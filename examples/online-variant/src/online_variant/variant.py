"""``gaussian-dual-averaging``: distributed online dual averaging whose nodes clip their gradient and broadcast their
dual with Gaussian noise (a private online variant).

Update equations: Algorithm 1 of the DPSDA paper (DPSDA-C, (11)-(14); admmcheck's ``docs/dpsda.md``) with two
changes, a clipped gradient and Gaussian noise in place of Laplace noise. Node i keeps a dual z_i ∈ R^d
(z_i(1) = 0) and a local copy y_i of the decision (y_i(1) = 0); it controls the coordinates of block i. At round
t = 1..T, after f_t is revealed,

    u_i(t) = clip([∇f_t(y_i(t))]_{block i} + ξ_i(t)),   clip(v) = v · min(1, c/‖v‖₂)          (14), clipped
    h_i(t) = z_i(t) + N(0, σ² I_d)                                                            (11), broadcast
    z_i(t+1) = n E_i u_i(t) + Σ_j W(t)_ij h_j(t)                                              (12)
    y_i(t+1) = proj_χ(−α(t) z_i(t+1)),   α(t) = 1/√t                                          (13)

with c = ``--clip`` and σ = ``--sigma`` (parameters of its own, :class:`ClippedOnlineSetting`), ξ the gradient error
of ``--gradient-noise`` (0 in an audit), W(t) the doubly stochastic weights of the family's undirected graph
sequence and E_i u the vector that is u on block i and 0 elsewhere.

Privacy (:func:`zcdp_claim`). Neighbours are the online family's (the paper's Definition 1): two function sequences
that differ in one round's function f_t0 (admmcheck changes round t0's target b into −b). What is released is every
message h_i(t) of every node, t = 1..T. Condition on the messages of rounds 1..t. Then z_i(t+1) = n E_i u_i(t) +
(a function of those messages), and u_i(t) is a function of f_t and of y_i(t), itself a function of z_i(t); so the
two sequences can move z_i(t+1) only through u_i(t), whose two values lie in the ball of radius c: by at most
n · 2c, in block i. The n messages of round t+1 therefore have L2 sensitivity Δ = 2c n √n (n nodes, each moved by
at most 2cn), and each round is a Gaussian mechanism of sensitivity Δ and noise σ on a function chosen from what was
released before: (Δ²/(2σ²))-zCDP (Bun & Steinke 2016, Prop. 1.6). Messages of rounds 1..t0 do not depend on f_t0
(its gradient first enters z(t0+1)), and h(1) = η(1) depends on no function at all, so at most T − 1 rounds carry
f_t0 (all of 2..T when t0 = 1; a change of f_t0 reaches every later round through the unreleased y_i). Adaptive
composition adds ρ (Bun & Steinke 2016, Lemma 2.3):

    ρ = (T − 1) Δ² / (2σ²) = 4 (T − 1) c² n³ / σ²,

claimed as a :class:`~admmcheck.claims.ZeroConcentratedDp` value, which every audit tests in zCDP (its Rényi
divergences at every order), not as an ε. Without the clip no such bound holds: a gradient of the squared loss grows
with |b|.

``gaussian-dual-averaging-quiet`` is the same algorithm with the bug this package exists to show being caught: it
draws σ/100 while its claim is the one for σ.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator

import numpy as np

from admmcheck.algorithms.runner import RunContext, algorithm
from admmcheck.claims import ZeroConcentratedDp
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.formulas import parse_number
from admmcheck.problems.graph_sequences import GraphSequence
from admmcheck.mechanisms.registry import OnlineSpec
from admmcheck.mechanisms.settings import OnlineSetting
from admmcheck.solving.noise import clip_norm, per_trial
from admmcheck.foundations.parameters import parameter
from admmcheck.problems.online import OnlineProblem
from admmcheck.foundations.validation import real

NAME = "gaussian-dual-averaging"
QUIET = "gaussian-dual-averaging-quiet"


@dataclass(frozen=True)
class ClippedOnlineSetting(OnlineSetting):
    """admmcheck's online setting with this variant's two parameters: each is a flag of ``run``, ``bound`` and
    ``audit`` (``--clip``, ``--sigma``), a keyword of the assertions' settings and a part of every replay command."""

    clip: float = parameter(1.0, "clip norm c: each node clips its block of the gradient to norm <= c",
                            read=parse_number)
    sigma: float = parameter(10.0, "standard deviation sigma of the Gaussian noise on each coordinate of a message "
                             "h_i(t)", read=parse_number)

    def __post_init__(self) -> None:
        super().__post_init__()
        real("clip", self.clip)
        real("sigma", self.sigma)


@algorithm(NAME, peers=False, zero_start=True)
def run_gaussian_dual_averaging(context: RunContext, *, graphs: GraphSequence, sigma: float = 10.0,
                                clip: float = 1.0, gradient_noise: float = 0.0) -> Iterator[tuple]:
    """Online dual averaging (11)-(14) with clipped gradients and Gaussian messages (module docstring) over the
    undirected sequence ``graphs``. Extras as admmcheck's online runs: ``broadcast`` (trials, T, n, d), every
    message h_i(t), and ``decision`` (trials, T+1, d), the decisions x(t)."""
    yield from _updates(context, graphs, sigma, clip, gradient_noise)


@algorithm(QUIET, peers=False, zero_start=True)
def run_gaussian_dual_averaging_quiet(context: RunContext, *, graphs: GraphSequence, sigma: float = 10.0,
                                      clip: float = 1.0, gradient_noise: float = 0.0) -> Iterator[tuple]:
    """The deliberate bug of ``gaussian-dual-averaging-quiet``: the noise is σ/100 (a scale taken in the wrong
    unit), while its claim is ``gaussian-dual-averaging``'s for σ."""
    yield from _updates(context, graphs, sigma / 100, clip, gradient_noise)


def _updates(context: RunContext, graphs: GraphSequence, sigma: float, clip: float,
             gradient_noise: float) -> Iterator[tuple]:
    problem: OnlineProblem = context.problem
    sigma, gradient_noise = real("sigma", sigma, strict=False), real("gradient_noise", gradient_noise, strict=False)
    clip = clip if clip == np.inf else real("clip", clip)
    if graphs.directed or graphs.nodes != problem.nodes:
        raise InvalidConfiguration(f"{NAME} runs over an undirected sequence of {problem.nodes} nodes")
    T, n, d = context.iterations, problem.nodes, problem.dim
    context.parameters.update(sigma=sigma, clip=clip, gradient_noise=gradient_noise, window=graphs.window)
    noise = per_trial(context.start.rngs, lambda rng: rng.standard_normal((T, n, d)))
    errors = per_trial(context.start.rngs, lambda rng: rng.standard_normal((T, n, d)))
    trials = noise.shape[0]
    broadcast, decision = np.empty((trials, T, n, d)), np.zeros((trials, T + 1, d))
    context.extras.update(broadcast=broadcast, decision=decision)
    mask = problem.block_mask  # (n, d): row i is node i's block
    y = context.start.f.copy()  # y_i(1) = 0
    z = np.zeros_like(y)  # z_i(1) = 0
    for t in range(1, T + 1):
        decision[:, t - 1] = problem.decision(y)
        u = clip_norm((problem.gradient(t, y) + gradient_noise * errors[:, t - 1]) * mask, clip)  # (14), clipped
        h = z + sigma * noise[:, t - 1]  # (11)
        broadcast[:, t - 1] = h
        z = n * u + np.einsum("ij,sjd->sid", graphs.at(t), h)  # (12)
        y = problem.project(-z / np.sqrt(t))  # (13)
        yield y, z
    decision[:, T] = problem.decision(y)


def sensitivity(setting: ClippedOnlineSetting) -> float:
    """Δ = 2c n √n: the L2 distance one changed function can move the n messages of one round by."""
    return 2 * setting.clip * setting.nodes ** 1.5


def zcdp_claim(setting: ClippedOnlineSetting) -> ZeroConcentratedDp:
    """ρ-zCDP with ρ = (T − 1) Δ² / (2σ²) (module docstring)."""
    if setting.iterations < 2:
        raise InvalidConfiguration("iterations=1 releases only h(1), pure noise; run at least 2 rounds",
                                   parameter="iterations")
    delta = sensitivity(setting)
    rho = (setting.iterations - 1) * delta ** 2 / (2 * setting.sigma ** 2)
    return ZeroConcentratedDp(rho, source=f"Gaussian mechanism of sensitivity 2c n^1.5 = {delta:g} and sigma = "
                                          f"{setting.sigma:g} in each of the T - 1 = {setting.iterations - 1} "
                                          "rounds a changed function can reach, composed")


def clipped_arguments(setting: ClippedOnlineSetting) -> dict[str, object]:
    """The run's own keyword arguments: its noise σ and its clip c (the family passes the graphs and the rest)."""
    return {"sigma": setting.sigma, "clip": setting.clip}


#: where ``admmcheck verify`` audits it: the online family's audit setting (n = 4 nodes, one coordinate each, T = 2
#: rounds, noise-free gradients) with a clip of 0.05, which every gradient of round 1 exceeds, so that negating round
#: 1's target moves every node's message by the whole 2cn; sigma = 0.8 (claim: 0.5-zCDP)
AUDIT_SETTING = replace(ClippedOnlineSetting.defaults("audit"), clip=0.05, sigma=0.8)

# Its neighbours are its family's (one round's function changed), and so are the rounds an audit changes
# (--changed-round 1) and the rounds that can move what is released: it registers no neighbours=.
SPEC = OnlineSpec(
    NAME, "online", "online dual averaging with clipped gradients and Gaussian messages (admmcheck-online-variant)",
    run_gaussian_dual_averaging, setting=ClippedOnlineSetting, arguments=clipped_arguments,
    theorem="Gaussian mechanism of sensitivity 2c n^1.5 per round, composed in zCDP", claim=zcdp_claim,
    audit_setting=AUDIT_SETTING)

# Deliberately broken, to show admmcheck catching it: the claim of gaussian-dual-averaging, a hundredth of its noise.
BROKEN = OnlineSpec(
    QUIET, "online", "gaussian-dual-averaging with one hundredth of the noise it claims (deliberately broken, "
    "admmcheck-online-variant)", run_gaussian_dual_averaging_quiet, setting=ClippedOnlineSetting,
    arguments=clipped_arguments, theorem="Gaussian mechanism of sensitivity 2c n^1.5 per round, composed in zCDP "
    "(for 100 times the noise it draws)", claim=zcdp_claim, audit_setting=AUDIT_SETTING)
