"""The default std of one column: the confidence bands, valid for the population.

The truth is simulated here, with numpy alone: datasets drawn from the
population under one secret, the moved records redrawn from the other group
(the independent coupling the bound is about), and the std's move counted.
"""

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.exceptions import NotCertifiableError
from skattr.theta import ConfidenceBand

SECRET = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
N, DELTA = 60, 1e-3


def _draw(rng, group, size):
    return (rng.binomial(20, 0.6, size) if group else
            np.where(rng.random(size) < 0.2, 0, rng.binomial(20, 0.3, size)))


def _reference(rng, size):
    g = np.repeat([1, 0], size)
    x = np.concatenate([_draw(rng, 1, size), _draw(rng, 0, size)])
    return pd.DataFrame({"g": g, "x": x.astype(float)})


def _coupled_moves(rng, draws):
    """|std_b - std_a| under the independent coupling, a = 0.4, b = 0.6."""
    k_in, moved = round(0.4 * N), round(0.2 * N)
    inside = _draw(rng, 1, (draws, k_in))
    outside = _draw(rng, 0, (draws, N - k_in))
    a = np.hstack([inside, outside]).astype(float)
    b = a.copy()
    b[:, k_in:k_in + moved] = _draw(rng, 1, (draws, moved))
    return np.abs(b.std(axis=1, ddof=1) - a.std(axis=1, ddof=1))


def _fit(reference, **params):
    return skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Query.std(["x"]), secret=SECRET,
        bounds={"x": (0, 20)}, delta=DELTA, **params).fit(reference)


@pytest.mark.slow
def test_the_std_bound_holds_for_the_population():
    rng = np.random.default_rng(0)
    moves = _coupled_moves(rng, 200_000)
    truth = np.quantile(moves, 1 - DELTA)
    ratios = []
    for _ in range(20):
        w = _fit(_reference(rng, 300), theta=ConfidenceBand()).plan(n=N).sensitivity
        # P(|move| > W) under the population, with a binomial margin.
        assert np.mean(moves > w) <= DELTA + 3 * np.sqrt(DELTA / moves.size)
        ratios.append(w / truth)
    # Useful, not only valid: a few times the population's own W.
    assert np.median(ratios) < 9, ratios


def test_the_default_std_is_the_bands():
    rng = np.random.default_rng(1)
    reference = _reference(rng, 400)
    private = reference.sample(N, random_state=0)
    plan = private.attrpriv.plan(["x"], statistic="std", secret=SECRET,
                                 reference=reference, bounds={"x": (0, 20)})
    assert plan.mechanism == "approx-wasserstein"
    assert plan.assumes("reference.band")
    assert "centred squares" in plan.summary()
    with pytest.raises(NotCertifiableError, match="bounds="):
        private.attrpriv.plan(["x"], statistic="std", secret=SECRET,
                              reference=reference, bounds=None)
