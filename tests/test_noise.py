"""The noise samplers against their laws (KS tests with fixed seeds, so deterministic)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.solving.noise import gamma_norm_noise, gaussian_noise, laplace_noise, per_trial

SAMPLES = 20_000


@pytest.mark.parametrize("dim, alpha", [(1, 0.5), (5, 3.0), (30, 2.0)])
def test_gamma_norm_noise_has_gamma_norms(dim, alpha):
    eps = gamma_norm_noise(np.random.default_rng(11), (SAMPLES,), dim, alpha)
    norms = np.linalg.norm(eps, axis=-1)
    law = stats.gamma(a=dim, scale=1.0 / alpha)  # M-ADMM paper, text under eq. (24)
    assert stats.kstest(norms, law.cdf).pvalue > 0.01
    # the same test rejects a law with the wrong scale: it has power
    assert stats.kstest(norms, stats.gamma(a=dim, scale=1.3 / alpha).cdf).pvalue < 1e-6


@pytest.mark.parametrize("dim", [2, 5, 30])
def test_gamma_norm_noise_directions_are_uniform_on_the_sphere(dim):
    eps = gamma_norm_noise(np.random.default_rng(12), (SAMPLES,), dim, 1.0)
    direction = eps / np.linalg.norm(eps, axis=-1, keepdims=True)
    axis = np.ones(dim) / np.sqrt(dim)
    # for u uniform on S^(d-1) and a fixed unit a, (1 + a.u)/2 ~ Beta((d-1)/2, (d-1)/2)
    projected = (1.0 + direction @ axis) / 2.0
    law = stats.beta((dim - 1) / 2.0, (dim - 1) / 2.0)
    assert stats.kstest(projected, law.cdf).pvalue > 0.01
    # the sign pattern of the first coordinate is balanced and independent of the norm
    norms = np.linalg.norm(eps, axis=-1)
    assert abs(stats.spearmanr(norms, direction[:, 0]).statistic) < 0.03


def test_gamma_norm_noise_density_matches_exp_of_minus_alpha_norm():
    # in d=1 the density exp(-alpha |x|) is the Laplace law with scale 1/alpha
    eps = gamma_norm_noise(np.random.default_rng(13), (SAMPLES,), 1, 2.5)[:, 0]
    assert stats.kstest(eps, stats.laplace(scale=1 / 2.5).cdf).pvalue > 0.01


def test_gamma_norm_noise_broadcasts_alpha_and_infinity_is_zero_noise():
    alpha = np.array([[1.0, np.inf], [4.0, np.inf]])
    eps = gamma_norm_noise(np.random.default_rng(0), (2, 2), 3, alpha)
    assert eps.shape == (2, 2, 3)
    assert np.all(eps[:, 1] == 0.0)
    assert np.all(np.linalg.norm(eps[:, 0], axis=-1) > 0)


def test_laplace_and_gaussian_samplers_follow_their_laws():
    rng = np.random.default_rng(14)
    assert stats.kstest(laplace_noise(rng, (SAMPLES,), 0.7), stats.laplace(scale=0.7).cdf).pvalue > 0.01
    assert stats.kstest(gaussian_noise(rng, (SAMPLES,), 2.0), stats.norm(scale=2.0).cdf).pvalue > 0.01
    assert stats.kstest(gaussian_noise(rng, (SAMPLES,), 2.0), stats.norm(scale=2.2).cdf).pvalue < 1e-6


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda rng: gamma_norm_noise(rng, (3,), 2, 0.0), "alpha must be positive"),
        (lambda rng: gamma_norm_noise(rng, (3,), 2, -1.0), "alpha must be positive"),
        (lambda rng: gamma_norm_noise(rng, (3,), 0, 1.0), "dim=0 must be a positive integer"),
        (lambda rng: laplace_noise(rng, (3,), np.inf), "scale must be finite and positive"),
        (lambda rng: gaussian_noise(rng, (3,), 0.0), "sigma must be finite and positive"),
    ],
)
def test_bad_noise_parameters_are_rejected(call, message):
    with pytest.raises(InvalidConfiguration, match=message):
        call(np.random.default_rng(0))


def test_per_trial_draws_are_reproducible_trial_by_trial():
    seeds = np.random.SeedSequence(5).spawn(3)
    batch = per_trial([np.random.default_rng(s) for s in seeds], lambda r: gamma_norm_noise(r, (4,), 2, 1.0))
    alone = gamma_norm_noise(np.random.default_rng(seeds[2]), (4,), 2, 1.0)
    assert batch.shape == (3, 4, 2)
    np.testing.assert_array_equal(batch[2], alone)
    assert not np.allclose(batch[0], batch[1])
    with pytest.raises(InvalidConfiguration, match="at least one generator"):
        per_trial([], lambda r: r.random())


def test_clip_norm_projects_each_row_onto_the_ball_and_keeps_its_direction():
    from admmcheck.solving.noise import clip_norm

    rows = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])  # norms 5, 0.5, 0
    clipped = clip_norm(rows, 1.0)
    assert np.allclose(clipped, [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]], rtol=0, atol=1e-15)
    assert np.all(np.linalg.norm(clip_norm(np.random.default_rng(0).normal(size=(50, 7)) * 10, 0.25), axis=1)
                  <= 0.25 + 1e-12)
