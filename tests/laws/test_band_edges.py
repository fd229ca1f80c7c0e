"""The laws over the confidence bands at the edges of floating point (issue 42).

A degenerate reference column (one value, or one value in a group) and
clipping ranges of 1e300 or 1e-300 either release validly or are refused
with a skattr error saying what to do; none raises another error.
"""

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.exceptions import NotCertifiableError

SECRET = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])


def _frames(kind):
    rng = np.random.default_rng(0)
    g = np.repeat([1, 0], 100)
    x = {"normal": rng.normal(5, 1, 200), "constant": np.full(200, 5.0),
         "group constant": np.where(g == 1, 5.0, rng.normal(5, 1, 200))}[kind]
    private = pd.DataFrame({"g": np.repeat([1, 0], 30),
                            "x": rng.normal(5, 1, 60)})
    return private, pd.DataFrame({"g": g, "x": x})


@pytest.mark.parametrize("kind", ["normal", "constant", "group constant"])
@pytest.mark.parametrize("bounds", ["reference", (0.0, 1e-300),
                                    (5.0, 5.0 + 1e-12)])
def test_a_std_of_a_degenerate_column_or_a_tiny_range_is_released(kind,
                                                                   bounds):
    private, reference = _frames(kind)
    if bounds != "reference":
        bounds = {"x": bounds}
    release = private.attrpriv.std(["x"], secret=SECRET, reference=reference,
                                   bounds=bounds, epsilon=1.0, delta=1e-3,
                                   random_state=0)
    low, high = release.clipping.ranges[0][1:]
    # Every std of values in [low, high] lies in [0, (high - low) / 2 ...]:
    # the noise is finite and no larger than the range allows.
    scale = float(np.max(release.noise_law.scale))
    assert 0.0 <= scale <= 2 * (high - low) + 1e-300
    assert np.isfinite(release.values.iloc[0])


def test_a_std_of_a_constant_reference_is_zero_without_noise():
    # Every value clipped to the one value the reference shows: the std is 0
    # on every dataset, so nothing moves.
    private, reference = _frames("constant")
    release = private.attrpriv.std(["x"], secret=SECRET, reference=reference,
                                   epsilon=1.0, delta=1e-3, random_state=0)
    assert release.values.iloc[0] == 0.0
    assert float(np.max(release.noise_law.scale)) == 0.0


@pytest.mark.parametrize("kind", ["normal", "constant"])
def test_a_std_over_a_range_too_wide_for_floating_point_is_refused(kind):
    private, reference = _frames(kind)
    with pytest.raises(NotCertifiableError, match="bounds="):
        private.attrpriv.std(["x"], secret=SECRET, reference=reference,
                             bounds={"x": (-1e300, 1e300)}, epsilon=1.0,
                             delta=1e-3, random_state=0)


def test_the_std_band_bound_is_scale_free():
    # The std's bound on a column equals its bound on the column mapped onto
    # [0, 1], times the range: so 1e300 and 1e-300 ranges give the unit
    # range's bound, scaled.
    from skattr.laws._band import GroupBand
    from skattr.laws._std_band import std_band_closeness

    rng = np.random.default_rng(1)
    unit = [rng.beta(2, 3, 150), rng.beta(3, 2, 150)]
    found = {}
    for scale in (1.0, 1e-300, 1e150):
        out, inside = (GroupBand.of(v * scale, 1e-3) for v in unit)
        found[scale] = std_band_closeness(out, inside, 0.0, scale, 50,
                                          [(0.4, 0.6)], "dataset", 1e-3, 1)
    assert found[1.0] > 0.01
    assert found[1e-300] == pytest.approx(found[1.0] * 1e-300, rel=1e-9)
    assert found[1e150] == pytest.approx(found[1.0] * 1e150, rel=1e-9)


@pytest.mark.parametrize("kind", ["constant", "group constant"])
@pytest.mark.parametrize("bounds", [(-1e300, 1e300), (0.0, 1e-300)])
def test_a_median_or_quantiles_of_a_degenerate_column_release_or_refuse(
        kind, bounds):
    private, reference = _frames(kind)
    if bounds != "reference":
        bounds = {"x": bounds}
    for verb, options in (("median", {}), ("quantile", {"q": [0.25, 0.75]})):
        try:
            release = getattr(private.attrpriv, verb)(
                ["x"], secret=SECRET, reference=reference, bounds=bounds,
                epsilon=1.0, delta=1e-3, random_state=0, **options)
        except NotCertifiableError as error:
            assert "bounds" in str(error)
            continue
        assert np.all(np.isfinite(release.values))


def test_many_quantile_levels_share_their_work(monkeypatch):
    # 99 levels on 120 rows took 27-60 s (each level's count bound alone);
    # their bisections now step together: a few hundred batches of binomial
    # tails where each level asked hundreds, and the same bounds as each
    # level alone.
    import skattr.laws._count_bound as joint
    from skattr.laws._band import GroupBand
    from skattr.laws._order import order_bracket

    rng = np.random.default_rng(0)
    out = GroupBand.of(rng.normal(5, 1, 150), 2.5e-4, spacings=True)
    inside = GroupBand.of(rng.normal(5.5, 1.2, 120), 2.5e-4, spacings=True)
    ranks = [order_bracket(120, q) for q in (0.1, 0.5, 0.9)]
    together = joint.count_bounds(out, inside, 1.0, 9.0, 120, 0.4, 0.6,
                                  ranks, 1e-4)
    alone = [joint.count_bound(out, inside, 1.0, 9.0, 120, 0.4, 0.6, r, 1e-4)
             for r in ranks]
    assert together == alone and min(alone) > 0.5
    batches = []
    tails = joint._many_at_most

    def counted(parts, t):
        batches.append(1)
        return tails(parts, t)

    monkeypatch.setattr(joint, "_many_at_most", counted)
    # 37 levels (99 asked about 26,000 batches, one level alone ~260).
    ranks = [order_bracket(120, q) for q in np.linspace(0.05, 0.95, 37)]
    joint.count_bounds(out, inside, 1.0, 9.0, 120, 0.4, 0.6, ranks, 1e-5)
    assert len(batches) <= 150
