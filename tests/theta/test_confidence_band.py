"""ConfidenceBand: Theta for a sum or mean from the reference as a sample."""

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws._band import dkw_radius, record_distance
from skattr.theta import ConfidenceBand

SECRET = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])


def _reference(per=500, seed=0):
    rng = np.random.default_rng(seed)
    g = np.repeat([1, 0], per)
    return pd.DataFrame({"g": g, "x": rng.normal(50 + 5 * g, 10)})


def _plan(statistic, n, **kw):
    query = getattr(skattr.Query, statistic)(["x"])
    mech = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=query, secret=SECRET, theta=ConfidenceBand(), **kw)
    return mech.fit(_reference()).plan(n=n)


def test_the_band_radius_is_massarts():
    # 2 exp(-2 m eps^2) = alpha.
    eps = dkw_radius(400, 1e-3)
    assert 2 * np.exp(-2 * 400 * eps**2) == pytest.approx(1e-3, rel=1e-12)


def test_a_record_distance_bounds_every_law_in_the_bands():
    # Any group laws within the bands: their quantile functions' gap at u is
    # at most U(u). Checked on laws shifted to the bands' edges and inside.
    rng = np.random.default_rng(1)
    out, inside = np.sort(rng.random(200)), np.sort(rng.random(300) + 0.2)
    eps = (0.05, 0.04)
    gap, probs = record_distance(out, inside, eps, 0.0, 1.5)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    levels = (np.arange(100_000) + 0.5) / 100_000
    for shift_out, shift_in in ((-1, 1), (1, -1), (0.5, -0.3), (0, 0)):
        # A law in each band: the empirical quantiles moved by up to eps.
        q_out = np.quantile(out, np.clip(levels + shift_out * eps[0], 0, 1),
                            method="inverted_cdf")
        q_in = np.quantile(inside, np.clip(levels + shift_in * eps[1], 0, 1),
                           method="inverted_cdf")
        true = np.abs(q_in - q_out)
        bound = np.sort(gap)[np.searchsorted(np.cumsum(probs[np.argsort(gap)]),
                                             levels, side="left").clip(
                                                 0, gap.size - 1)]
        # Compare the two laws: P(true > w) <= P(U > w) for every w.
        for w in np.quantile(true, [0.5, 0.9, 0.99, 0.999]):
            assert np.mean(true > w) <= np.mean(bound > w) + 1e-4


def test_a_mean_is_the_sum_over_n():
    s, m = _plan("sum", 200), _plan("mean", 200)
    assert m.sensitivity == pytest.approx(s.sensitivity / 200, rel=1e-12)
    assert s.assumes("reference.band")


def test_more_reference_records_need_less_noise():
    small = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Query.mean(["x"]), secret=SECRET,
        theta=ConfidenceBand()).fit(_reference(200)).plan(n=500)
    large = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Query.mean(["x"]), secret=SECRET,
        theta=ConfidenceBand()).fit(_reference(5000)).plan(n=500)
    assert large.noise_scale < 0.7 * small.noise_scale


def test_refusals_say_what_to_do():
    with pytest.raises(NotCertifiableError, match="bounds="):
        _plan("mean", 100, bounds=None)
    with pytest.raises(InvalidParameterError, match="one column"):
        skattr.mechanisms.ApproximateWassersteinMechanism(
            query=skattr.Query.median(["x"]), secret=SECRET,
            theta=ConfidenceBand()).fit(_reference())
    with pytest.raises(InvalidParameterError, match="probability in"):
        ConfidenceBand(confidence=0.0)
    with pytest.raises(NotCertifiableError, match="gives laws over confidence bands"):
        skattr.mechanisms.MECHANISMS["daum"](
            query=skattr.Query.mean(["x"]), secret=SECRET,
            theta=ConfidenceBand()).fit(_reference())
