"""Drawn laws in chunks: the same datasets as drawn at once, in bounded memory."""

import tracemalloc

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr import Statistic
from skattr._random import OSEntropy, by_rejection, check_random_state
from skattr.laws import _draws
from skattr.laws._draws import draw_subsets, iter_subsets
from skattr.mechanisms import ApproximateWassersteinMechanism
from skattr.theta import Resample

# (inside pool, outside pool, counts, n): each of _draw's ways to draw.
CASES = {
    # k-subsets by random keys (k large against its pool).
    "keys": (300, 700, [150] * 50, 400),
    # By rejection, most rows redrawn again and again (k**2 near 2 pool ln).
    "rejection, many rounds": (5000, 5000, [200] * 300, 260),
    # Distributional privacy: many group sizes, both ways of drawing.
    "many group sizes": (5000, 5000,
                         np.random.default_rng(9).binomial(260, 0.5, 300), 260),
    # A side with no record drawn (k = 0 or k = n).
    "empty sides": (200, 200, [0] * 10 + [100] * 10 + [5] * 10, 100),
}


def at_once(inside, outside, counts, n, rng, replace, shuffle):
    rows = draw_subsets(inside, outside, counts, n, rng, replace=replace)
    return rng.permuted(rows, axis=1) if shuffle else rows


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("max_positions", [1, 777, 5000])
def test_chunks_are_the_datasets_drawn_at_once(case, replace, shuffle,
                                               max_positions):
    pool_in, pool_out, counts, n = CASES[case]
    inside = np.arange(pool_in)
    outside = np.arange(pool_in, pool_in + pool_out)
    whole_rng, chunk_rng = np.random.default_rng(3), np.random.default_rng(3)
    whole = at_once(inside, outside, counts, n, whole_rng, replace, shuffle)
    chunks = list(iter_subsets(inside, outside, counts, n, chunk_rng,
                               replace=replace, shuffle=shuffle,
                               max_positions=max_positions))
    step = max(1, max_positions // n)
    assert [start for start, _ in chunks] == list(range(0, len(counts), step))
    # Every chunk holds at most max_positions positions, or one dataset.
    assert max(rows.size for _, rows in chunks) <= max(max_positions, n)
    np.testing.assert_array_equal(np.vstack([rows for _, rows in chunks]), whole)
    # The generator is left where the one-shot draws leave it.
    assert chunk_rng.bit_generator.state == whole_rng.bit_generator.state


def test_the_cases_cover_both_ways_of_drawing_subsets():
    assert not by_rejection(300, 150) and by_rejection(5000, 200)
    # ... and rows drawn in many rounds (a repeat in most draws).
    assert 1 - np.exp(-200**2 / (2 * 5000)) > 0.98


def test_os_entropy_draws_fresh_chunks_of_the_same_law():
    inside, outside = np.arange(40), np.arange(40, 100)
    counts = np.array([10] * 30 + [25] * 30)
    chunks = list(iter_subsets(inside, outside, counts, 50, OSEntropy(),
                               max_positions=500))
    rows = np.vstack([r for _, r in chunks])
    assert len(chunks) == 6 and rows.shape == (60, 50)
    assert ((rows < 40).sum(axis=1) == counts).all()
    assert all(len(set(r)) == 50 for r in rows)


@pytest.fixture(scope="module")
def reference():
    rng = np.random.default_rng(0)
    group = rng.random(3000) < 0.5
    return pd.DataFrame({"group": group,
                         "age": rng.normal(40, 10, 3000) + 3 * group})


SECRET = skattr.Secret.proportion("group", True, pairs=[(0.4, 0.6)])


def former_drawn_law(laws, a, n, privacy, m):
    """ResampledLaws.drawn_law as it was before chunking: all at once."""
    rng = check_random_state(
        laws.seed, stream=(n, m, round(a * 2**40), privacy == "dataset"))
    ks, pk = laws._counts_law(a, n, privacy)
    counts = rng.choice(ks, size=m, p=pk) if ks.size > 1 else np.full(m, ks[0])
    rows = draw_subsets(laws.inside, laws.outside, counts, n, rng,
                        replace=laws.replace)
    if laws.ordered:
        rows = rng.permuted(rows, axis=1)
    return laws._evaluate(rows)


@pytest.mark.slow
@pytest.mark.parametrize("privacy", ["dataset", "distributional"])
@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("statistic", [
    Statistic.std("age"),
    Statistic.function(lambda d: d["age"].iloc[:3].mean(), names=["age"],
                       columns=["age"])])
def test_drawn_laws_keep_their_seeded_values(reference, privacy, replace,
                                             statistic):
    # The function reads the records' order, so its datasets are shuffled.
    m = 400 if statistic.statistic == "function" else 3000
    laws = Resample(random_state=5, replace=replace).fit(
        reference, statistic, ["age"], SECRET)
    expected = former_drawn_law(laws, 0.4, 100, privacy, m)
    for max_positions in (100, 12_345, None):
        fresh = Resample(random_state=5, replace=replace).fit(
            reference, statistic, ["age"], SECRET)
        drawn = fresh.drawn_law(0.4, 100, privacy, m,
                                max_positions=max_positions)
        np.testing.assert_array_equal(drawn, expected)


@pytest.mark.slow
@pytest.mark.filterwarnings(
    "ignore:delta=.* is at least 1/n:skattr.exceptions.PrivacyLeakWarning")
def test_a_certificate_does_not_depend_on_the_chunks(reference, monkeypatch):
    def plan():
        return ApproximateWassersteinMechanism(
            query=Statistic.trimmed_mean("age"), secret=SECRET, delta=0.01,
            theta=Resample(random_state=1, n_draws=3000)).fit(reference).plan(
                n=200)

    whole = plan()
    monkeypatch.setattr(_draws, "CHUNK_POSITIONS", 3000)
    chunked = plan()
    assert chunked.sensitivity == whole.sensitivity
    assert chunked.certified_by == whole.certified_by


@pytest.mark.slow
def test_memory_is_bounded_by_the_chunk_size(reference):
    # 20,000 datasets of 1,000 records: 160 MB of row positions drawn at
    # once. In chunks of 2**18 positions (2 MB), every array of the draws
    # (positions, random keys, the statistic's values) is a few times that.
    n, m, cap = 1000, 20_000, 1 << 18
    laws = Resample(random_state=0).fit(reference, Statistic.std("age"),
                                        ["age"], SECRET)
    tracemalloc.start()
    try:
        laws.drawn_law(0.4, n, "dataset", m, max_positions=cap)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Under 64 bytes a position of a chunk: an eighth of the positions alone.
    assert peak < 64 * cap < (8 * n * m) / 8
