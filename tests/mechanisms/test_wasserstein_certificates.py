"""The Wasserstein mechanisms' certificates against their true privacy loss.

For laws of F known exactly (count laws, or every dataset of a small resampling
model), the release F + Laplace(b) given a secret has a density that is a
mixture of Laplace densities, so its exact delta at epsilon,
int max(0, p_a(y) - e^epsilon p_b(y)) dy (both ways), can be integrated
numerically. It must stay within the certified delta.
"""

import itertools

import numpy as np
import pandas as pd
import pytest

from skattr import Query, Secret, Statistic
from skattr.mechanisms import ApproximateWassersteinMechanism, WassersteinMechanism
from skattr.theta import Resample, count_pmf


def _release_density(support, mass, scale, grid):
    density = np.zeros_like(grid)
    for x, w in zip(support, mass, strict=True):
        density += w * np.exp(-np.abs(grid - x) / scale)
    return density / (2 * scale)


def _true_delta(law_a, law_b, scale, epsilon):
    """Exact delta at epsilon of the Laplace release, both directions."""
    (xa, pa), (xb, pb) = law_a, law_b
    lo = min(xa.min(), xb.min()) - 60 * scale
    hi = max(xa.max(), xb.max()) + 60 * scale
    grid = np.linspace(lo, hi, 200_001)
    da = _release_density(xa, pa, scale, grid)
    db = _release_density(xb, pb, scale, grid)
    gain = np.exp(epsilon)
    return max(np.trapezoid(np.maximum(0, da - gain * db), grid),
               np.trapezoid(np.maximum(0, db - gain * da), grid))


FRAME = pd.DataFrame({"x1": [1, 0, 1, 1], "x2": [1, 0, 0, 1]})


@pytest.mark.parametrize("delta", [0.0, 0.01, 0.05])
@pytest.mark.filterwarnings(
    "ignore:delta=.* is at least 1/n:skattr.exceptions.PrivacyLeakWarning")
def test_count_law_certificates_hold(delta):
    secret = Secret.proportion("x2", 1, pairs=[(0.4, 0.6)])
    kw = {"query": Query.count("x1", 1), "secret": secret, "theta": [[0.3, 0.5]],
          "epsilon": 1.0}
    mech = (WassersteinMechanism(**kw) if delta == 0 else
            ApproximateWassersteinMechanism(delta=delta, **kw))
    plan = mech.fit(FRAME).plan(n=100)
    support = np.arange(101)
    laws = [(support, count_pmf(a, 100, [0.3, 0.5])[1]) for a in (0.4, 0.6)]
    true = _true_delta(*laws, plan.noise_scale, 1.0)
    assert true <= delta + 1e-6
    if delta:
        # Less noise than the exact mechanism, and the loss is really spent.
        assert plan.sensitivity < 5.0 and true > 0


def _model():
    rng = np.random.default_rng(7)
    return pd.DataFrame({"g": np.repeat([1, 0], 7),
                         "x": rng.integers(0, 30, 14).astype(float)})


def _exact(frame, a, n):
    inside = frame.x[frame.g == 1].to_numpy()
    outside = frame.x[frame.g == 0].to_numpy()
    k = round(a * n)
    values = [np.median(np.concatenate([inside[list(i)], outside[list(o)]]))
              for i in itertools.combinations(range(7), k)
              for o in itertools.combinations(range(7), n - k)]
    support, counts = np.unique(values, return_counts=True)
    return support, counts / counts.sum()


@pytest.mark.parametrize("how", ["wasserstein", "exact", "drawn-0", "drawn-1"])
def test_resampling_certificates_hold(how):
    frame = _model()
    secret = Secret.proportion("g", 1, pairs=[(2 / 6, 4 / 6)])
    kw = {"query": Statistic.median("x"), "secret": secret, "epsilon": 0.5}
    if how == "wasserstein":
        mech, delta = WassersteinMechanism(theta=Resample(), **kw), 0.0
    else:
        delta = 0.05
        theta = (Resample() if how == "exact" else
                 Resample(max_exact=0, random_state=int(how[-1])))
        mech = ApproximateWassersteinMechanism(theta=theta, delta=delta, **kw)
    plan = mech.fit(frame).plan(n=6)
    assert plan.delta == delta
    true = _true_delta(_exact(frame, 2 / 6, 6), _exact(frame, 4 / 6, 6),
                       plan.noise_scale, 0.5)
    assert true <= delta + 1e-6
