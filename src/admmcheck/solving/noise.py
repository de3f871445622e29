"""Noise samplers of the private mechanisms, batched and seeded.

* :func:`gamma_norm_noise` — density proportional to exp(-alpha ||eps||_2) on R^d, drawn as
  the M-ADMM paper prescribes under eq. (24) (and the R-ADMM paper under eq. (28)): the norm
  from Gamma(shape d, scale 1/alpha), the direction uniform on the unit sphere.
* :func:`laplace_noise` and :func:`gaussian_noise` — i.i.d. coordinates, for the DPSDA and
  ADMM-sharing mechanisms.

Every sampler takes a :class:`numpy.random.Generator`. :func:`per_trial` stacks draws made
with one generator per trial, so trial k of a batch sees the same noise as a run of trial k
alone (the convention of :mod:`admmcheck.solving.runs`).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.validation import positive_int


def _positive_array(name: str, value: float | np.ndarray, allow_infinite: bool) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    finite_ok = np.isfinite(array) | (allow_infinite & np.isposinf(array))
    if not np.all(finite_ok) or np.any(array <= 0):
        allowed = "positive (inf switches the noise off)" if allow_infinite else "finite and positive"
        raise InvalidConfiguration(f"{name} must be {allowed}; got {value!r}")
    return array


def gamma_norm_noise(
    rng: np.random.Generator,
    size: tuple[int, ...],
    dim: int,
    alpha: float | np.ndarray = 1.0,
) -> np.ndarray:
    """Draw eps with density proportional to exp(-alpha ||eps||_2), shape ``size + (dim,)``.

    ``alpha`` broadcasts against ``size``; ``alpha = inf`` gives exactly zero noise. The
    norm is Gamma(dim, 1) / alpha and the direction a normalised standard Gaussian vector,
    i.e. uniform on the sphere (M-ADMM paper, text under eq. (24)).
    """
    dim = positive_int("dim", dim)
    alpha = _positive_array("alpha", alpha, allow_infinite=True)
    norm = rng.standard_gamma(dim, size=size)
    direction = rng.standard_normal(size + (dim,))
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    return (norm / alpha)[..., None] * direction


def laplace_noise(rng: np.random.Generator, size: tuple[int, ...], scale: float | np.ndarray) -> np.ndarray:
    """Draw i.i.d. Laplace(0, scale) values (density exp(-abs(x)/scale) / (2 scale))."""
    scale = _positive_array("scale", scale, allow_infinite=False)
    return rng.laplace(0.0, 1.0, size=size) * scale


def gaussian_noise(rng: np.random.Generator, size: tuple[int, ...], sigma: float | np.ndarray) -> np.ndarray:
    """Draw i.i.d. N(0, sigma^2) values."""
    sigma = _positive_array("sigma", sigma, allow_infinite=False)
    return rng.standard_normal(size=size) * sigma


def per_trial(
    rngs: Sequence[np.random.Generator],
    draw: Callable[[np.random.Generator], np.ndarray],
) -> np.ndarray:
    """Stack ``draw(rng)`` over the trials' generators: result shape (trials, ...)."""
    if len(rngs) == 0:
        raise InvalidConfiguration("per_trial needs at least one generator (one per trial)")
    return np.stack([draw(rng) for rng in rngs])


def gamma_noise_table(rngs: Sequence[np.random.Generator], alpha: np.ndarray, dim: int) -> np.ndarray:
    """Per-trial gamma-norm noise for a whole run: ``alpha`` is (T, N) -> (trials, T, N, dim)."""
    return per_trial(rngs, lambda rng: gamma_norm_noise(rng, alpha.shape, dim, alpha))


def clip_norm(vectors: np.ndarray, clip: float) -> np.ndarray:
    """Each row of ``vectors`` (..., d) scaled to Euclidean norm at most ``clip``: the projection onto the ball of
    radius ``clip``, which bounds what one changed record moves a clipped release by (2 ``clip``)."""
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors * np.minimum(1.0, clip / np.maximum(norms, 1e-300))
