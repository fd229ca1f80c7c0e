"""Each value's law of its move under the joint coupling, against the exact law.

``JointBandLaw.coupled_distances`` gives, per secret and widest pair, a law
per released value that must dominate |D_j|, the value's move when the
shared records are kept and each moved record's two rows are drawn
independently, one from each group's law: P(L_j > t) >= P(|D_j| > t) at
every t. The exact law of the moves is computed here from scipy's binomial
pmfs alone (no skattr code). In the population a record's x is
Binomial(20, 0.6) in the group and Binomial(20, 0.4) outside, so the sum of
10 moved records' X_in - X_out is Binomial(400, 0.6) - 200; its 0/1 column c
is 1 with chance 0.1 in the group and 0.4 outside, so the count moves by
Binomial(10, 0.1) + Binomial(10, 0.6) - 10. Both laws and the bands are
those of ``tests/theta/test_stacked_band.py``.
"""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import skattr
from skattr.laws import _joint_band, _stacked_band
from skattr.theta import ConfidenceBand

SECRET = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
QUERY = skattr.Query.mean("x") + skattr.Query.count("c", 1)
N, DELTA = 50, 1e-3


def _population(size, rng):
    g = np.repeat([1, 0], size)
    x = np.where(g == 1, rng.binomial(20, 0.6, 2 * size),
                 rng.binomial(20, 0.4, 2 * size))
    c = (rng.random(2 * size) < np.where(g == 1, 0.1, 0.4)).astype(int)
    return pd.DataFrame({"g": g, "x": x, "c": c})


def _abs_law(pmf, offset, weight):
    """(values, pmf) of weight |S|, S with ``pmf`` on offset, offset + 1, ..."""
    values = np.abs(np.arange(pmf.size) + offset) * weight
    support = np.unique(values)
    return support, np.array([pmf[values == v].sum() for v in support])


def _exact_moves():
    """The laws of |D_x| (a mean: 1 / N a record) and |D_c| (a count)."""
    x = stats.binom.pmf(np.arange(401), 400, 0.6)
    c = np.convolve(stats.binom.pmf(np.arange(11), 10, 0.1),
                    stats.binom.pmf(np.arange(11), 10, 0.6))
    return _abs_law(x, -200, 1.0 / N), _abs_law(c, -10, 1.0)


def _survival(values, probs, points):
    """P(V > p) at each of ``points`` (missing mass counted above all)."""
    above = np.concatenate([np.cumsum(probs[::-1])[::-1], [0.0]])
    missing = max(0.0, 1.0 - probs.sum())
    return above[np.searchsorted(values, points, side="right")] + missing


def _violations(law, exact) -> int:
    """Points where P(law > t) < P(|D| > t), beyond float rounding.

    Both are right-continuous steps, so the jumps of either are the only
    points to check.
    """
    values, probs = exact
    points = np.union1d(values, law.distances)
    ours = _survival(law.distances, law.probs, points)
    truth = _survival(values, probs, points)
    return int(np.sum(ours < truth * (1 - 1e-9) - 1e-15))


def _law(seed, size=300):
    reference = _population(size, np.random.default_rng(seed))
    return skattr.mechanisms.ApproximateWassersteinMechanism(
        query=QUERY, secret=SECRET, bounds={"x": (0, 20)}, delta=DELTA,
        theta=ConfidenceBand()).fit(reference).law_


def test_the_exact_moves_are_what_the_module_says():
    # The independent check's own check: the mean of the exact laws.
    (xv, xp), (cv, cp) = _exact_moves()
    assert xp.sum() == pytest.approx(1.0) and cp.sum() == pytest.approx(1.0)
    # E|Bin(400, 0.6) - 200| = about 40, over N.
    assert 0.7 < float(xv @ xp) < 0.9
    assert cv.max() == 10 and cv.min() == 0


@pytest.mark.parametrize("seed", range(3))
def test_each_move_law_dominates_the_exact_one(seed):
    exact = _exact_moves()
    (laws,) = _law(seed).coupled_distances(N, "dataset")
    assert len(laws) == 2
    for law, truth in zip(laws, exact, strict=True):
        assert _violations(law, truth) == 0
        # Useful, not only valid: within a few units of the truth's own
        # 1e-4-quantile (the bands are narrow at 300 records a group).
        values, probs = truth
        exact_w = values[np.flatnonzero(
            _survival(values, probs, values) <= 1e-4)[0]]
        assert law.closeness(1e-4) <= 1.6 * exact_w + 1e-9


def test_the_check_fails_when_a_law_is_shifted_down(monkeypatch):
    # The same laws, their distances halved inside the library: the check
    # must see it (a check that passes whatever the laws say is no check).
    exact = _exact_moves()
    honest = _stacked_band.survival_law
    monkeypatch.setattr(_stacked_band, "survival_law",
                        lambda points, tails, largest: honest(
                            0.5 * np.asarray(points), tails, largest))
    (laws,) = _law(0).coupled_distances(N, "dataset")
    assert all(_violations(law, truth) > 0
               for law, truth in zip(laws, exact, strict=True))


def test_the_ladder_dominates_the_exact_moves_and_fails_shifted(monkeypatch):
    # Without a direct law (more moves than _TAIL_MOVES), each value's
    # bound is read on the ladder of chances: valid too, and caught when
    # its rungs are shifted down.
    monkeypatch.setattr(_stacked_band, "_TAIL_MOVES", 0)
    exact = _exact_moves()
    (laws,) = _law(0).coupled_distances(N, "dataset")
    for law, truth in zip(laws, exact, strict=True):
        assert law.distances.size == 24          # 23 rungs and the largest
        assert _violations(law, truth) == 0
    honest = _joint_band.ladder_distances
    monkeypatch.setattr(_joint_band, "ladder_distances",
                        lambda widths, etas, largest: honest(
                            0.5 * np.asarray(widths), etas, largest))
    (laws,) = _law(0).coupled_distances(N, "dataset")
    assert all(_violations(law, truth) > 0
               for law, truth in zip(laws, exact, strict=True))


@pytest.mark.parametrize("j", [0, 1])
def test_one_value_on_the_ladder_is_its_bound_at_the_same_chance(monkeypatch,
                                                                 j):
    # One value alone (K = 1): the ladder's quantile at a chance just above
    # a rung is that rung's bound, per_statistic's at the rung, and at
    # least per_statistic's at the chance itself. The direct law is not
    # above it by more than a count's unit or a tenth.
    law = _law(0)
    rung = 2.0 ** -10
    chance = rung * (1 + 1e-6)

    def alone():
        return dataclasses.replace(law, outputs=(law.outputs[j],))

    direct = alone().coupled_distances(N, "dataset")[0][0].closeness(chance)
    monkeypatch.setattr(_stacked_band, "_TAIL_MOVES", 0)
    one = alone()
    ladder = one.coupled_distances(N, "dataset")[0][0].closeness(chance)
    assert ladder == pytest.approx(one.per_statistic(N, "dataset", rung)[0],
                                   rel=1e-12)
    assert ladder >= one.per_statistic(N, "dataset", chance)[0] - 1e-12
    assert direct <= ladder + 1e-12


@pytest.mark.slow
def test_no_move_law_fails_over_many_references():
    # 100 references: the bands hold with chance 0.999 each, so no law may
    # fail its exact move (at most one miss would be the bands' own chance).
    exact = _exact_moves()
    misses = 0
    for seed in range(100):
        (laws,) = _law(1000 + seed).coupled_distances(N, "dataset")
        misses += any(_violations(law, truth) > 0
                      for law, truth in zip(laws, exact, strict=True))
    assert misses == 0
