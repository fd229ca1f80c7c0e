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
those of ``tests/theta/test_stacked_band.py``. A quantile's move (an order
statistic of 45 records: 18 shared in each group, 9 moved) has its exact
law from the joint distribution function of the two sides' order
statistics, P(A_(r) <= u, B_(r) <= v), summed over the shared records'
counts below u and v (binomials) with the moved records' binomial tails.
"""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import skattr
from skattr.exceptions import NotCertifiableError
from skattr.laws import _count_bound, _joint_band, _stacked_band
from skattr.laws._distances import (
    ladder_distances,
    least_survival,
    survival_law,
)
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


def _exact_moves(moved=10):
    """The laws of |D_x| (a mean: 1 / N a record) and |D_c| (a count)."""
    x = stats.binom.pmf(np.arange(40 * moved + 1), 40 * moved, 0.6)
    c = np.convolve(stats.binom.pmf(np.arange(moved + 1), moved, 0.1),
                    stats.binom.pmf(np.arange(moved + 1), moved, 0.6))
    return _abs_law(x, -20 * moved, 1.0 / N), _abs_law(c, -moved, 1.0)


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


def test_a_ladder_puts_each_chance_at_its_bound_and_refuses_without_a_largest():
    etas = 2.0 ** -np.arange(1, 6)
    # A bound that dips (3 after 4) is raised to the largest before it, so
    # from 4 on the tail is 1/16, between 2 and 4 it is 1/4.
    law = ladder_distances([1.0, 2.0, 4.0, 3.0, 5.0], etas, 9.0)
    points = np.array([0.5, 1.0, 2.5, 3.5, 4.0, 5.0, 8.0, 9.0])
    np.testing.assert_allclose(
        _survival(law.distances, law.probs, points),
        [1.0, 0.5, 0.25, 0.25, 0.0625, 2.0 ** -5, 2.0 ** -5, 0.0])
    with pytest.raises(NotCertifiableError, match="bounds="):
        ladder_distances([1.0] * 5, etas, np.inf)
    with pytest.raises(NotCertifiableError, match="not a number"):
        ladder_distances([1.0, np.nan, 2.0, 3.0, 4.0], etas, 9.0)


def test_a_staircase_is_its_tails_and_the_least_of_two_is_their_least():
    law = survival_law([0.0, 1.0, 3.0], [0.9, 0.95, 0.1], 7.0)
    # A rise (0.95 after 0.9) is lowered to 0.9; the rest at the largest.
    np.testing.assert_allclose(
        _survival(law.distances, law.probs, np.array([0.0, 1.0, 3.0, 7.0])),
        [0.9, 0.9, 0.1, 0.0])
    other = survival_law([0.0, 2.0], [0.5, 0.2], 6.0)
    least = least_survival([law, other])
    points = np.array([0.0, 1.0, 2.0, 3.0, 6.0])
    np.testing.assert_allclose(
        _survival(least.distances, least.probs, points),
        np.minimum(_survival(law.distances, law.probs, points),
                   _survival(other.distances, other.probs, points)))
    with pytest.raises(NotCertifiableError):
        survival_law([0.0, 1.0], [0.5, np.nan], 2.0)


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


def test_a_window_has_a_law_per_widest_pair_dominating_each_pair_inside():
    # Every pair of a window is kept: a sum of signed differences need not
    # grow with the records moved, so each entry must dominate the move of
    # every pair inside its widest pair (1 to 10 moved records here).
    from skattr.laws._base import widest_pairs

    window = skattr.Secret.proportion("g", 1, window=0.2, support=(0.3, 0.7))
    reference = _population(300, np.random.default_rng(5))
    law = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=QUERY, secret=window, bounds={"x": (0, 20)}, delta=DELTA,
        theta=ConfidenceBand()).fit(reference).law_
    entries = law.coupled_distances(N, "dataset")
    pairs = [(a, b) for a, b in window.certified_pairs(N, "dataset")
             if a != b]
    widest = widest_pairs(pairs)
    # An entry per widest pair, those equal to an earlier one left out (the
    # windows inside the support hold the same moves).
    assert 1 <= len(entries) <= widest.low.size > 1
    for low, high in zip(widest.low, widest.high, strict=True):
        inside = {round(abs(b - a) * N) for a, b in pairs
                  if min(a, b) >= low - 1e-12 and max(a, b) <= high + 1e-12}
        assert min(inside) == 1
        # Some entry (its own, or one equal to it) dominates every move.
        assert any(all(_violations(one, truth) == 0
                       for moved in inside
                       for one, truth in zip(laws, _exact_moves(moved),
                                             strict=True))
                   for laws in entries)


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


def test_a_std_alone_on_the_ladder_is_its_bound_at_the_same_chance():
    # A std is always read on the ladder: just above a rung, its law's
    # quantile is per_statistic's W at that rung.
    from skattr.theta._band import several_statistics_law

    reference = _population(300, np.random.default_rng(0))
    ranges = {"x": (0.0, 20.0)}
    law, _ = several_statistics_law(
        reference, [(skattr.Query.std(["x"]), ["x"], ranges),
                    (skattr.Query.mean(["x"]), ["x"], ranges)], SECRET)
    assert law.outputs[0][1] == "spread"
    std = dataclasses.replace(law, outputs=(law.outputs[0],))
    rung = 2.0 ** -10
    (laws,) = std.coupled_distances(N, "dataset")
    assert laws[0].distances.size == 24
    assert laws[0].closeness(rung * (1 + 1e-6)) == pytest.approx(
        std.per_statistic(N, "dataset", rung)[0], rel=1e-12)


@pytest.mark.parametrize("halved", [False, True])
def test_a_trimmed_mean_law_dominates_its_simulated_move(monkeypatch, halved):
    # A monotone coordinate (a trimmed mean beside a mean): its law against
    # 20,000 coupled datasets drawn from the population and scipy's
    # trim_mean, within three binomial standard errors; a law whose
    # distances are halved fails.
    from skattr.theta._band import several_statistics_law

    if halved:
        honest = _stacked_band.survival_law
        monkeypatch.setattr(_stacked_band, "survival_law",
                            lambda points, tails, largest: honest(
                                0.5 * np.asarray(points), tails, largest))
    rng = np.random.default_rng(4)
    reference = _population(300, rng)
    ranges = {"x": (0.0, 20.0)}
    law, _ = several_statistics_law(
        reference, [(skattr.Query.mean(["x"]), ["x"], ranges),
                    (skattr.Statistic.trimmed_mean(["x"], 0.1), ["x"], ranges)],
        SECRET)
    assert [output[1] for output in law.outputs] == ["linear", "monotone"]
    (laws,) = law.coupled_distances(N, "dataset")
    draws = 20_000
    shared = np.concatenate([rng.binomial(20, 0.6, (draws, 20)),
                             rng.binomial(20, 0.4, (draws, 20))], axis=1)
    a = np.concatenate([shared, rng.binomial(20, 0.4, (draws, 10))], axis=1)
    b = np.concatenate([shared, rng.binomial(20, 0.6, (draws, 10))], axis=1)
    moves = np.abs(stats.trim_mean(a, 0.1, axis=1)
                   - stats.trim_mean(b, 0.1, axis=1))
    points = np.unique(moves)
    seen = np.array([np.mean(moves > t) for t in points])
    ours = _survival(laws[1].distances, laws[1].probs, points)
    held = np.all(seen <= ours + 3 * np.sqrt(ours * (1 - ours) / draws)
                  + 1e-12)
    assert held != halved


# A quantile's move: x is Binomial(20, 0.6) in the group, (20, 0.4) outside.
ORDER_N, SHARED, MOVED = 45, 18, 9
LEVELS = [0.25, 0.5, 0.75]


def _shared_counts(records, cdf, x, y):
    """P(s records at most x, t at most y) for ``records`` records, x <= y."""
    p1, p2 = cdf[x], cdf[y] - cdf[x]
    s = np.arange(records + 1)[:, None]
    t = np.arange(records + 1)[None, :]
    rest = p2 / (1 - p1) if p1 < 1 else 0.0
    pmf = stats.binom.pmf(s, records, p1) * stats.binom.pmf(t - s,
                                                             records - s,
                                                             rest)
    return np.where(t >= s, pmf, 0.0)


def _moved_both(r, at_u, at_v, p_a, p_b, comonotone):
    """P(A's moved at most u >= r + 1 - at_u and B's at most v >= r + 1 - at_v).

    A moved record is at most u on A's side with chance p_a, at most v on
    B's with p_b: independently, or (comonotone) as U <= p_a and U <= p_b
    for one uniform U, so that the two counts are K1 + K2 and K1 (or K1 and
    K1 + K2) of a trinomial (K1 below min(p_a, p_b), K2 between).
    """
    if not comonotone:
        return (stats.binom.sf(r - at_u, MOVED, p_a)
                * stats.binom.sf(r - at_v, MOVED, p_b))
    low, high = min(p_a, p_b), max(p_a, p_b)
    total = 0.0
    for k1 in range(MOVED + 1):
        for k2 in range(MOVED + 1 - k1):
            chance = stats.multinomial.pmf([k1, k2, MOVED - k1 - k2], MOVED,
                                           [low, high - low, 1 - high])
            if chance == 0:
                continue
            on_a = k1 + (k2 if p_a >= p_b else 0)
            on_b = k1 + (k2 if p_b > p_a else 0)
            total = total + chance * ((at_u + on_a >= r + 1)
                                      & (at_v + on_b >= r + 1))
    return total


def _exact_order_move(r, comonotone=False):
    """(values, probs) of |A_(r) - B_(r)|: A's moved records drawn outside.

    ``comonotone``: each moved record's two values from one uniform (its
    value outside on A's side, inside on B's) rather than independent.
    """
    from scipy.signal import convolve2d

    cdf_in = stats.binom.cdf(np.arange(21), 20, 0.6)
    cdf_out = stats.binom.cdf(np.arange(21), 20, 0.4)
    size = cdf_in.size
    joint = np.zeros((size + 1, size + 1))     # P(A_(r) <= u, B_(r) <= v)
    for u in range(size):
        for v in range(size):
            x, y = min(u, v), max(u, v)
            shared = convolve2d(_shared_counts(SHARED, cdf_in, x, y),
                                _shared_counts(SHARED, cdf_out, x, y))
            low, high = np.ogrid[:shared.shape[0], :shared.shape[1]]
            at_u, at_v = (low, high) if u <= v else (high, low)
            # At least r + 1 records at most u (A) and at most v (B).
            joint[u + 1, v + 1] = float(np.sum(
                shared * _moved_both(r, at_u, at_v, cdf_out[u], cdf_in[v],
                                     comonotone)))
    pmf = np.diff(np.diff(joint, axis=0), axis=1)
    apart = np.abs(np.arange(size)[:, None] - np.arange(size)[None, :])
    return (np.arange(size, dtype=float),
            np.array([pmf[apart == d].sum() for d in range(size)]))


def _order_law(seed, levels=LEVELS, one_uniform=False):
    """The joint law of the quartiles, or of those of ``levels`` alone.

    Fitted for a release of one column's quantiles (whose moved records'
    values the law couples by one uniform), then, unless ``one_uniform``,
    under the records' coupling (each moved record's two values
    independent), as a ledger's is.
    """
    rng = np.random.default_rng(seed)
    g = np.repeat([1, 0], 300)
    x = np.where(g == 1, rng.binomial(20, 0.6, 600), rng.binomial(20, 0.4, 600))
    law = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Query.quantile("x", q=LEVELS), secret=SECRET,
        bounds={"x": (0, 20)}, delta=DELTA, theta=ConfidenceBand()).fit(
        pd.DataFrame({"g": g, "x": x})).law_
    assert law.one_uniform
    return dataclasses.replace(law, one_uniform=one_uniform, outputs=tuple(
        output for output in law.outputs if output[2] in levels))


def test_the_exact_order_move_is_the_simulated_one():
    # The independent computation's own check: 20,000 coupled datasets.
    rng = np.random.default_rng(0)
    draws = 20_000
    shared = np.concatenate([rng.binomial(20, 0.6, (draws, SHARED)),
                             rng.binomial(20, 0.4, (draws, SHARED))], axis=1)
    a = np.sort(np.concatenate([shared, rng.binomial(20, 0.4, (draws, MOVED))],
                               axis=1), axis=1)
    b = np.sort(np.concatenate([shared, rng.binomial(20, 0.6, (draws, MOVED))],
                               axis=1), axis=1)
    values, probs = _exact_order_move(22)
    assert probs.sum() == pytest.approx(1.0)
    simulated = np.abs(a[:, 22] - b[:, 22])
    for t in range(3):
        exact = float(probs[values > t].sum())
        assert abs(float(np.mean(simulated > t)) - exact) < 0.015
    # One uniform per moved record: its value outside on A's side, inside
    # on B's (each group's quantile function at U).
    u = rng.random((draws, MOVED))
    a = np.sort(np.concatenate([shared, stats.binom.ppf(u, 20, 0.4)], axis=1),
                axis=1)
    b = np.sort(np.concatenate([shared, stats.binom.ppf(u, 20, 0.6)], axis=1),
                axis=1)
    together = np.abs(a[:, 22] - b[:, 22])
    comonotone = _exact_order_move(22, comonotone=True)[1]
    assert comonotone.sum() == pytest.approx(1.0)
    for t in range(3):
        exact = float(comonotone[values > t].sum())
        assert abs(float(np.mean(together > t)) - exact) < 0.01
    # The check tells the couplings apart (P(move > 0): 0.855 against
    # 0.838; standard error 0.0025), and this coupling's tail is the thinner.
    assert abs(float(np.mean(simulated > 0)) - comonotone[1:].sum()) > 0.01
    assert comonotone[3:].sum() < 0.8 * probs[3:].sum()


def test_a_median_law_dominates_its_exact_move_and_fails_without_binomials(
        monkeypatch):
    # The median of 45 records is the order statistic 22 (no interpolation).
    truth = _exact_order_move(22)
    (laws,) = _order_law(0, [0.5]).coupled_distances(ORDER_N, "dataset")
    assert _violations(laws[0], truth) == 0
    # One uniform per moved record: the law of that coupling's move.
    (laws,) = _order_law(0, [0.5], one_uniform=True).coupled_distances(
        ORDER_N, "dataset")
    assert _violations(laws[0], _exact_order_move(22, comonotone=True)) == 0
    # The count bound's binomial chances dropped (only the likely range's
    # share left): the law falls below the exact move, and the check sees it.
    monkeypatch.setattr(_count_bound, "_many_at_most",
                        lambda parts, t: np.zeros(np.broadcast(
                            *[p for _, p in parts]).shape[0]))
    # (The tails are kept by the content of their bands: forgotten here, so
    # the same bands are counted again with the binomials dropped.)
    monkeypatch.setattr(_count_bound, "_TAILS", type(_count_bound._TAILS)())
    (laws,) = _order_law(0, [0.5]).coupled_distances(ORDER_N, "dataset")
    assert _violations(laws[0], truth) > 0


def test_the_count_tails_of_equal_bands_are_counted_once(monkeypatch):
    # Two laws fitted on the same reference (a release's and a ledger's)
    # hold equal bands, not the same objects: their quantiles' tails are
    # counted once; a band that differs in one value is counted anew.
    calls = []
    counted = _count_bound._count_chances
    monkeypatch.setattr(_count_bound, "_TAILS", type(_count_bound._TAILS)())
    monkeypatch.setattr(_count_bound, "_count_chances",
                        lambda *args: calls.append(1) or counted(*args))
    first = _order_law(0, [0.5]).coupled_distances(ORDER_N, "dataset")
    counted_once = len(calls)
    assert counted_once >= 1
    again = _order_law(0, [0.5]).coupled_distances(ORDER_N, "dataset")
    assert len(calls) == counted_once
    np.testing.assert_array_equal(first[0][0].distances,
                                  again[0][0].distances)
    np.testing.assert_array_equal(first[0][0].probs, again[0][0].probs)
    _order_law(1, [0.5]).coupled_distances(ORDER_N, "dataset")
    assert len(calls) > counted_once


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("one_uniform", [False, True])
def test_each_quartile_law_dominates_its_exact_move(seed, one_uniform):
    (laws,) = _order_law(seed, one_uniform=one_uniform).coupled_distances(
        ORDER_N, "dataset")
    for law, level in zip(laws, LEVELS, strict=True):
        # (n - 1) q is whole: each quartile is one order statistic.
        assert _violations(law, _exact_order_move(
            round(44 * level), comonotone=one_uniform)) == 0


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
