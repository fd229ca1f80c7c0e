"""Released values are clamped to what their statistic can take (issue 28).

Post-processing: free, recorded, and never further from the true value.
"""

import numpy as np
import pandas as pd
import pytest

import skattr

SECRET = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])


def _frames(seed=0):
    rng = np.random.default_rng(seed)
    g = np.repeat([1, 0], 1000)
    reference = pd.DataFrame({
        "g": g, "stay": np.clip(rng.exponential(2 + g, 2000), 0, 30),
        "dead": (rng.random(2000) < 0.02).astype(int)})
    return reference, reference.sample(40, random_state=seed)


@pytest.mark.slow
def test_every_release_lies_in_its_statistic_range():
    reference, private = _frames()
    kw = dict(secret=SECRET, reference=reference, epsilon=0.05)
    for seed in range(3):
        rates = private.attrpriv.proportion("dead", 1, random_state=seed, **kw)
        counts = private.attrpriv.count("dead", 1, random_state=seed, **kw)
        medians = private.attrpriv.median(["stay"], random_state=seed, **kw)
        assert 0.0 <= rates.values.iloc[0] <= 1.0
        assert 0.0 <= counts.values.iloc[0] <= len(private)
        assert 0.0 <= medians.values.iloc[0] <= 30.0
        for rel in (rates, counts, medians):
            assert rel.certified_by.steps[-1].kind == "post-processed.clamped"
    assert "clamped to what its statistic can take" in rates.summary()


def test_a_mean_with_no_clipping_range_is_not_clamped():
    reference, private = _frames(1)
    rel = private.attrpriv.mean(["stay"], secret=SECRET, reference=reference,
                                mechanism="apgm", law="gaussian", bounds=None,
                                random_state=0)
    assert all(s.kind != "post-processed.clamped" for s in rel.certified_by.steps)
    assert rel.unclamped is None


@pytest.mark.slow
def test_clamping_is_the_noisy_value_clipped_never_further_from_the_truth():
    reference, private = _frames(2)
    truth = float(private["stay"].median())
    est = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Statistic.median(["stay"]), secret=SECRET, epsilon=0.05,
        bounds={"stay": (0, 30)}, random_state=0).fit(reference)
    scale = est.plan(private).noise_scale
    # The seeded draws the releases add (one numpy Generator per fit).
    draws = np.random.default_rng(0).laplace(0.0, 1.0, 30)
    moved = 0
    for draw in draws:
        rel = est.release(private)
        value = rel.values.iloc[0]
        raw = truth + scale * draw
        assert rel.unclamped.iloc[0] == raw
        assert value == np.clip(raw, 0.0, 30.0)
        assert abs(value - truth) <= abs(raw - truth)
        moved += value != raw
    assert moved > 0          # the noise is wide: some values were clamped
