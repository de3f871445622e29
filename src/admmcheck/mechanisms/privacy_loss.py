"""Exact privacy loss L(o) = ln p(o | D) − ln p(o | D′) of a transcript of a reference mechanism.

The transcript o is every broadcast f_i(t), t = 0..T (``Run.primal``, shape (trials, T+1, N, d)).
f(0) is drawn independently of the data and every later broadcast is a function of the
noise drawn at that step and of earlier broadcasts, so by the chain rule

    L(o) = Σ_t Σ_i [ln p_ε(ε_i(t; D)) − ln p_ε(ε_i(t; D′))] + [ln|det J_i(t; D)| − ln|det J_i(t; D′)|]

where ε_i(t; D) is the noise that makes the mechanism release o when it runs on D, recovered
from the KKT condition of the primal step, and J its Jacobian with respect to the released
value (the G(t)/H(t) terms of the proofs). With p_ε ∝ exp(−α‖ε‖₂) the first bracket is
α (‖ε(D′)‖ − ‖ε(D)‖). Nodes whose data are the same under D and D′ recover the same noise
and contribute exactly nothing; every node is computed all the same, so that this is a
result and not an assumption.

* PP and DVP (M-ADMM paper (24)-(25); supplement (58)): the KKT condition of (24) is
  ∇O(f; D_i) + 2λ_i(t) + 2η V_i ε + 2η V_i f − η Σ_j (f_i(t) + f_j(t)) = 0, so
  ε = −[∇O(f; D_i) + 2λ_i(t) + 2η V_i f − η ((D + A) f(t))_i] / (2η V_i) and
  ∂ε/∂f = −(∇²O(f; D_i) + 2η V_i I) / (2η V_i).
* private R-ADMM, odd step 2k−1 (R-ADMM paper (28)): ε = −[∇O(f; D_i) + 2λ_i + 2η V_i f −
  η ((D + A) f(2k−2))_i], ∂ε/∂f = −(∇²O(f; D_i) + 2η V_i I). Even step 2k (29): a function of
  the transcript alone (Lemma IV.1), the same under D and D′, so it contributes zero — when
  the released f(2k) is what (29) gives from the transcript; a released even iterate that is
  not (an implementation that used the data there) has loss +inf, reported as such.
* PVP (Zhang & Zhu's primal perturbation): f~ = argmin (8) + ε, so ε = f~ − m(D) with m the
  noiseless minimiser of (8) under D, and the Jacobian is the identity.

A node whose α is infinite adds no noise: its released value is a point mass, and the loss is
0 where D and D′ give the same value (to ``POINT_MASS_TOL``) and +inf where they do not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from admmcheck.algorithms.admm import admm_dual_step, admm_subproblem
from admmcheck.algorithms.madmm import madmm_dual_step
from admmcheck.algorithms.private_radmm import recycled_gradient
from admmcheck.algorithms.radmm import radmm_even_step
from admmcheck.mechanisms.consensus import ReferenceMechanism
from admmcheck.problems.networks import Network
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.solving.local_solver import solve_local
from admmcheck.problems import ConsensusProblem

#: Where a mechanism adds no noise, recovered noise below this norm counts as zero.
POINT_MASS_TOL = 1e-6
#: A released even R-ADMM iterate farther than this from (29) of the transcript is not data-free.
EVEN_STEP_TOL = 1e-8

@dataclass(frozen=True, eq=False)
class PrivacyLoss:
    """Per-step, per-node contributions to L(o): ``per_step`` has shape (trials, T, N).

    ``noise_term`` and ``jacobian_term`` split it into α(‖ε(D′)‖ − ‖ε(D)‖) and the
    log-determinant difference; ``even_step_error`` (private R-ADMM only, else None) is the
    largest distance, per trial, between a released even iterate and (29) of the transcript.
    """

    per_step: np.ndarray
    noise_term: np.ndarray
    jacobian_term: np.ndarray
    even_step_error: np.ndarray | None = None

    @property
    def total(self) -> np.ndarray:
        """L(o) of each trial, shape (trials,)."""
        return self.per_step.sum(axis=(1, 2))

    @property
    def per_node(self) -> np.ndarray:
        """Σ_t of each node's contribution, shape (trials, N)."""
        return self.per_step.sum(axis=1)


def privacy_loss(mechanism: ReferenceMechanism, d0: ConsensusProblem, d1: ConsensusProblem,
                 transcript: np.ndarray, every_node: bool = False) -> PrivacyLoss:
    """L(o) = ln p(o | d0) − ln p(o | d1) for each transcript o (see the module docstring).

    ``transcript`` is (trials, T+1, N, d) — ``Run.primal`` of ``mechanism`` — or one
    (T+1, N, d) transcript. d0 and d1 must have the mechanism's node count and dimension.
    Only the nodes whose data differ are evaluated unless ``every_node`` (the others recover
    the same noise under both datasets; the tests evaluate them to show they give zero).
    The loss is that of the mechanism's ``release`` (:mod:`admmcheck.mechanisms.releases`): how its noise enters
    what it releases; a mechanism registered without one has no exact loss and is refused.
    """
    transcript = np.asarray(transcript, dtype=np.float64)
    if transcript.ndim == 3:
        transcript = transcript[None]
    network, T = mechanism.network, mechanism.iterations
    expected = (T + 1, network.nodes, d0.dim)
    if transcript.ndim != 4 or transcript.shape[1:] != expected:
        raise InvalidConfiguration(f"the transcript has shape {transcript.shape}; {mechanism.name} with T={T} on "
                                   f"{network.nodes} nodes in dimension {d0.dim} releases (trials,) + {expected}")
    for problem in (d0, d1):
        if problem.nodes != network.nodes or problem.dim != d0.dim:
            raise InvalidConfiguration(f"both datasets need {network.nodes} nodes in dimension {d0.dim}; got "
                                       f"{problem.nodes} nodes in dimension {problem.dim}")
    nodes = changed_nodes(d0, d1)
    if every_node or len(nodes) == 0:
        nodes = np.arange(network.nodes)
    return released_by(mechanism).loss(mechanism, mechanism.arguments, d0, d1, transcript, nodes)


def released_by(mechanism: ReferenceMechanism):
    """The mechanism's release, the capability of its white box; refuses a mechanism registered without one."""
    if mechanism.release is None:
        raise InvalidConfiguration(f"{mechanism.name} has no white box: it was registered without release= (how its "
                                   "noise enters what it releases: see admmcheck.mechanisms.releases), so its exact "
                                   "loss and worst case are unknown; audit it as a black box", parameter="release")
    return mechanism.release


def changed_nodes(d0: ConsensusProblem, d1: ConsensusProblem) -> np.ndarray:
    """Indices of the nodes whose records differ between the two datasets."""
    return np.array([i for i in range(d0.nodes)
                     if d0.features[i].shape != d1.features[i].shape or np.any(d0.features[i] != d1.features[i])
                     or np.any(d0.labels[i] != d1.labels[i])], dtype=int)


def _noise_density_term(alpha: np.ndarray, eps0: np.ndarray, eps1: np.ndarray) -> np.ndarray:
    """ln p_ε(eps0) − ln p_ε(eps1) for p_ε ∝ exp(−α‖ε‖); a point mass where α is infinite."""
    norm0, norm1 = np.linalg.norm(eps0, axis=-1), np.linalg.norm(eps1, axis=-1)
    finite = np.isfinite(alpha)
    safe = np.where(finite, alpha, 0.0)
    noisy = safe * (norm1 - norm0)
    point_mass = np.where((norm0 <= POINT_MASS_TOL) & (norm1 <= POINT_MASS_TOL), 0.0,
                          np.where(norm0 <= POINT_MASS_TOL, np.inf, -np.inf))
    return np.where(finite, noisy, point_mass)


def _log_det(matrices: np.ndarray) -> np.ndarray:
    sign, value = np.linalg.slogdet(matrices)
    if np.any(sign <= 0):
        raise InvalidConfiguration("a primal-step Jacobian is singular; the loss is undefined there")
    return value


def _kkt_terms(part: ConsensusProblem, f: np.ndarray, curvature: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(∇O(f; D_i), ln det(∇²O(f; D_i) + curvature_i I)) for every trial and node of ``part``."""
    hessian = part.local_hessians(f) + curvature[:, None, None] * np.eye(part.dim)
    return part.local_gradients(f), _log_det(hessian)


def penalty_perturbation_loss(network: Network, eta: np.ndarray, alpha: np.ndarray, theta: float,
                              d0: ConsensusProblem, d1: ConsensusProblem, transcript: np.ndarray,
                              nodes: np.ndarray) -> PrivacyLoss:
    """PP / DVP: KKT of (24) per step, Jacobian (∇²O + 2ηV I)/(2ηV) (the constant cancels); ``eta`` and
    ``alpha`` are (T, N) tables."""
    T, N = eta.shape
    parts = (d0.local_part(nodes), d1.local_part(nodes))
    degree = network.degrees.astype(float)
    noise_term = np.zeros(transcript.shape[:1] + (T, N))
    jacobian_term = np.zeros_like(noise_term)
    lam = np.zeros_like(transcript[:, 0])
    for t in range(T):
        f_prev, f = transcript[:, t], transcript[:, t + 1]
        scale = (2.0 * eta[t] * degree)[nodes]  # 2 η_i(t+1) V_i
        public = (2.0 * lam - eta[t][:, None] * (network.signless_laplacian @ f_prev))[:, nodes]
        public = public + scale[:, None] * f[:, nodes]
        terms = [_kkt_terms(part, f[:, nodes], scale) for part in parts]
        eps = [-(gradient + public) / scale[:, None] for gradient, _ in terms]
        noise_term[:, t, nodes] = _noise_density_term(alpha[t][nodes], eps[0], eps[1])
        jacobian_term[:, t, nodes] = terms[0][1] - terms[1][1]
        lam = madmm_dual_step(network, lam, f, theta)  # (11), public values only
    return PrivacyLoss(noise_term + jacobian_term, noise_term, jacobian_term)


def recycled_loss(network: Network, eta: float, gamma: float, alpha: np.ndarray, d0: ConsensusProblem,
                  d1: ConsensusProblem, transcript: np.ndarray, nodes: np.ndarray) -> PrivacyLoss:
    """Private R-ADMM: KKT of (28) at odd steps; even steps checked against (29) and zero. ``alpha`` is a
    (odd steps, N) table."""
    T, N = transcript.shape[1] - 1, network.nodes
    parts = (d0.local_part(nodes), d1.local_part(nodes))
    scale = 2.0 * eta * network.degrees.astype(float)[nodes]
    noise_term = np.zeros(transcript.shape[:1] + (T, N))
    jacobian_term = np.zeros_like(noise_term)
    even_error = np.zeros(transcript.shape[0])
    lam = np.zeros_like(transcript[:, 0])
    for t in range(1, T + 1):
        f_prev, f = transcript[:, t - 1], transcript[:, t]
        if t % 2 == 1:
            recycled = recycled_gradient(network, f_prev, f, lam, eta)  # ε + ∇O, public (Lemma IV.1)
            terms = [_kkt_terms(part, f[:, nodes], scale) for part in parts]
            eps = [recycled[:, nodes] - gradient for gradient, _ in terms]
            noise_term[:, t - 1, nodes] = _noise_density_term(alpha[(t - 1) // 2][nodes], eps[0], eps[1])
            jacobian_term[:, t - 1, nodes] = terms[0][1] - terms[1][1]
            lam = admm_dual_step(network, lam, f, eta)  # (13)
        else:
            expected = radmm_even_step(network, f_prev, lam, recycled, eta, gamma)  # (29), no data
            gap = np.linalg.norm(f - expected, axis=-1)  # (trials, N): every node, data-free
            even_error = np.maximum(even_error, gap.max(axis=-1))
            noise_term[:, t - 1] = np.where(gap > EVEN_STEP_TOL * (1.0 + np.linalg.norm(f, axis=-1)), np.inf, 0.0)
    return PrivacyLoss(noise_term + jacobian_term, noise_term, jacobian_term, even_error)


def primal_perturbation_loss(network: Network, eta: float, alpha: np.ndarray, tol: float, d0: ConsensusProblem,
                             d1: ConsensusProblem, transcript: np.ndarray, nodes: np.ndarray) -> PrivacyLoss:
    """PVP: ε = f~ − m(D) with m the minimiser of (8); identity Jacobian. ``alpha`` is a (T, N) table."""
    T, N = alpha.shape
    parts = (d0.local_part(nodes), d1.local_part(nodes))
    noise_term = np.zeros(transcript.shape[:1] + (T, N))
    lam = np.zeros_like(transcript[:, 0])
    for t in range(T):
        f_prev, released = transcript[:, t], transcript[:, t + 1]
        linear, curvature = admm_subproblem(network, f_prev, lam, eta)
        minimisers = [solve_local(part, linear[:, nodes], curvature[nodes], f_prev[:, nodes], tol).f for part in parts]
        noise_term[:, t, nodes] = _noise_density_term(alpha[t][nodes], released[:, nodes] - minimisers[0],
                                                      released[:, nodes] - minimisers[1])
        lam = admm_dual_step(network, lam, released, eta)  # (9) with the broadcast values
    return PrivacyLoss(noise_term.copy(), noise_term, np.zeros_like(noise_term))
