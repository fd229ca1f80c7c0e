"""Laplace noise with each statistic its own scale (LaplaceNoise.per_statistic)."""

import numpy as np
import pytest

from skattr.noise import LaplaceNoise


@pytest.mark.parametrize("scales", [[14.5, 3.25, 50.0, 45.0, 15.1], [1.0, 0.01],
                                    [2.0, 2.0, 0.5]])
def test_norm_and_accuracy_hold_by_simulation(scales):
    law = LaplaceNoise.per_statistic(scales)
    draws = law.sample(np.random.default_rng(0), size=200_000)
    np.testing.assert_allclose(draws.std(axis=0), np.sqrt(2) * np.array(scales),
                               rtol=0.02)
    norms = np.linalg.norm(draws, axis=1)
    assert law.expected_norm() == pytest.approx(norms.mean(), rel=0.01)
    for beta in (0.05, 0.01):
        alpha = law.alpha(beta)
        # A valid bound: the norm exceeds it at most beta of the time ...
        assert np.mean(norms > alpha) <= beta
        # ... and not a vacuous one: within 2x of the simulated quantile.
        assert alpha < 2 * np.quantile(norms, 1 - beta)
