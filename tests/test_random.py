"""skattr._random: the random_state rule, OS entropy, k-subsets and the noise tails.

Draws from the operating system's entropy cannot be seeded, so the tests of that
path use bounds a correct sampler breaks with negligible probability (each says
how small), while a broken one (a value never drawn, a wrong scale) breaks them
for sure. Exact behaviour is checked by feeding ``os.urandom`` chosen words.
"""

import math

import numpy as np
import pytest
from scipy import special, stats

from skattr import _random
from skattr._random import (
    OSEntropy,
    check_random_state,
    draw_k_subsets,
    gaussian_noise,
    laplace_noise,
    seed_of,
)
from skattr.exceptions import InvalidParameterError


def _serve(monkeypatch, words):
    """Make ``os.urandom`` return the given 64-bit words, in order, then fail."""
    buffer = bytearray(np.array(words, dtype=np.uint64).tobytes())

    def urandom(size):
        assert size <= len(buffer), "read more entropy than expected"
        chunk = bytes(buffer[:size])
        del buffer[:size]
        return chunk

    monkeypatch.setattr(_random.os, "urandom", urandom)
    return buffer


# --------------------------------------------------------------------------------
# The rule
# --------------------------------------------------------------------------------


def test_none_reads_fresh_os_entropy_each_call(monkeypatch):
    assert isinstance(check_random_state(None), OSEntropy)
    # Two draws of 4 x 53 bits coincide with probability 2**-212.
    assert not np.array_equal(check_random_state(None).random(4),
                              check_random_state(None).random(4))
    calls = []
    real = _random.os.urandom
    monkeypatch.setattr(_random.os, "urandom",
                        lambda size: calls.append(size) or real(size))
    check_random_state(None, stream=3).random(5)
    assert calls == [40]  # the OS was asked, once, for five words


def test_int_is_a_reproducible_generator():
    a = check_random_state(5).random(3)
    np.testing.assert_array_equal(a, check_random_state(np.int64(5)).random(3))
    np.testing.assert_array_equal(a, np.random.default_rng(5).random(3))


def test_stream_gives_each_use_of_a_seed_its_own_sequence():
    first = check_random_state(5, stream=0).random(3)
    second = check_random_state(5, stream=1).random(3)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(first, np.random.default_rng([5, 0]).random(3))
    np.testing.assert_array_equal(second, np.random.default_rng([5, 1]).random(3))
    # numpy's SeedSequence pads its entropy with zero words: stream 0 is the
    # seed's own sequence, as the module says.
    np.testing.assert_array_equal(first, check_random_state(5).random(3))
    np.testing.assert_array_equal(check_random_state(5, stream=(1, 2)).random(3),
                                  np.random.default_rng([5, 1, 2]).random(3))


def test_generator_is_shared_and_advanced():
    rng = np.random.default_rng(0)
    assert check_random_state(rng) is rng
    assert check_random_state(rng, stream=4) is rng
    expected = np.random.default_rng(0)
    expected.random(2)
    check_random_state(rng).random(2)
    assert rng.random() == expected.random()


def test_random_state_seeds_a_generator_and_advances():
    legacy = np.random.RandomState(0)
    rng = check_random_state(legacy)
    assert isinstance(rng, np.random.Generator)
    twin = np.random.RandomState(0)
    seed = twin.randint(np.iinfo(np.int32).max)
    np.testing.assert_array_equal(rng.random(3),
                                  np.random.default_rng(seed).random(3))
    # The caller's RandomState moved on: the next conversion differs.
    assert legacy.randint(100) == twin.randint(100)
    assert not np.array_equal(check_random_state(legacy).random(3),
                              np.random.default_rng(seed).random(3))


@pytest.mark.parametrize("bad", [True, np.True_, 1.5, "0", -1, [1, 2], object()])
def test_other_kinds_are_refused(bad):
    with pytest.raises(InvalidParameterError, match="random_state must be None, "
                       "an int >= 0, a numpy.random.Generator or a numpy.random."
                       "RandomState. Got"):
        check_random_state(bad)
    with pytest.raises(InvalidParameterError,
                       match="The 'random_state' parameter of X must be"):
        check_random_state(bad, owner="X")


def test_seed_of_gives_an_int_seed():
    assert seed_of(7) == 7 and type(seed_of(np.int32(7))) is int
    fresh = [seed_of(None) for _ in range(2)]
    assert all(0 <= s < 2**63 for s in fresh)
    assert fresh[0] != fresh[1]  # equal with probability 2**-63


@pytest.mark.parametrize("bad", [True, -3, 2.0, np.random.default_rng(0),
                                 np.random.RandomState(0)])
def test_seed_of_refuses_what_is_not_a_seed(bad):
    with pytest.raises(InvalidParameterError,
                       match="parameter of MonteCarlo must be an int >= 0 or None"):
        seed_of(bad, owner="MonteCarlo")


# --------------------------------------------------------------------------------
# OS entropy
# --------------------------------------------------------------------------------


def test_os_integers_are_in_range_and_roughly_uniform():
    draws = OSEntropy().integers(3, 10, 70_000)
    assert draws.dtype == np.int64 and draws.min() >= 3 and draws.max() <= 9
    counts = np.bincount(draws - 3, minlength=7)
    # 10,000 expected per value, standard deviation 93: a correct sampler leaves
    # this band of 10.8 standard deviations with probability below 1e-25, one
    # that never (or twice as often) draws a value always does.
    assert np.all(np.abs(counts - 10_000) < 1_000), counts


def test_os_integers_reject_the_words_a_modulo_would_favour(monkeypatch):
    # 2**64 = 1 (mod 3): the top word would make 0 likelier than 1 and 2, so it
    # is drawn again; the next word, 5, gives 5 % 3 = 2.
    _serve(monkeypatch, [2**64 - 1, 5])
    assert OSEntropy().integers(0, 3, 1).tolist() == [2]
    # A power-of-two span rejects nothing.
    _serve(monkeypatch, [2**64 - 1])
    assert OSEntropy().integers(4, size=1).tolist() == [3]


def test_os_integers_follow_numpy_shapes_and_dtypes():
    rows = OSEntropy().integers(0, 5, size=(4, 3), dtype=np.intp)
    assert rows.shape == (4, 3) and rows.dtype == np.intp
    assert np.ndim(OSEntropy().integers(2)) == 0
    with pytest.raises(ValueError, match="low < high"):
        OSEntropy().integers(3, 3, 1)


def test_os_uniforms_lie_on_numpys_grid(monkeypatch):
    _serve(monkeypatch, [0, 2**64 - 1, 3 << 11])
    np.testing.assert_array_equal(OSEntropy().random(3),
                                  [0.0, 1 - 2.0**-53, 3 * 2.0**-53])


def test_os_normals_and_laplaces_have_their_moments():
    # 20,000 draws: the mean's standard deviation is 0.007 (normal) and 0.01
    # (Laplace), the variance's 0.01 and 0.032; the bounds are 7 to 10 of
    # these (probability below 1e-11), and a sampler off by 10% in scale fails.
    normals = OSEntropy().standard_normal(20_000)
    assert abs(normals.mean()) < 0.05 and abs(normals.var() - 1.0) < 0.1
    laplaces = OSEntropy().laplace(1.0, 2.0, 20_000)
    assert abs(laplaces.mean() - 1.0) < 0.15
    assert abs(laplaces.var() - 8.0) < 1.2
    assert np.ndim(OSEntropy().standard_normal()) == 0
    assert OSEntropy().laplace(size=(2, 3)).shape == (2, 3)


def test_signed_tail_probabilities_map_the_extreme_words(monkeypatch):
    # n draws read n high words (sign bit, then 63 bits), then n low words.
    _serve(monkeypatch, [0, 2**63 - 1, 2**63, 1, 0, 2**64 - 1, 0, 0])
    sign, tail = _random._signed_tail_probabilities(4)
    np.testing.assert_array_equal(sign, [1.0, 1.0, -1.0, 1.0])
    # All zero bits: the smallest tail, 2**-129, whatever the sign; all ones:
    # the largest, 1/2; the last bit of the high word weighs 2**-64.
    np.testing.assert_array_equal(tail, [2.0**-129, 0.5, 2.0**-129,
                                         2.0**-64 + 2.0**-129])


def test_os_tails_reach_thirteen_standard_deviations(monkeypatch):
    _serve(monkeypatch, [0, 2**63, 0, 0])
    low, high = OSEntropy().standard_normal(2)
    assert low == special.ndtri(2.0**-129) and low < -13.1
    assert high == -low
    _serve(monkeypatch, [0, 0])
    assert OSEntropy().laplace(0.0, 1.0, 1)[0] == pytest.approx(-128 * math.log(2))


def test_os_permuted_shuffles_each_row_uniformly():
    rows = OSEntropy().permuted(np.tile(np.arange(5), (20_000, 1)), axis=1)
    np.testing.assert_array_equal(np.sort(rows, axis=1),
                                  np.tile(np.arange(5), (20_000, 1)))
    # P(value v at position j) = 1/5, standard deviation 0.0028 over 20,000
    # rows: 0.03 is 10 of them.
    freq = np.stack([(rows == v).mean(axis=0) for v in range(5)])
    np.testing.assert_allclose(freq, 0.2, atol=0.03)
    column = OSEntropy().permuted(np.arange(6).reshape(3, 2), axis=0)
    np.testing.assert_array_equal(np.sort(column, axis=0),
                                  np.arange(6).reshape(3, 2))
    flat = OSEntropy().permuted(np.arange(6).reshape(2, 3))
    assert flat.shape == (2, 3) and sorted(flat.ravel()) == list(range(6))


def test_os_permuted_redraws_tied_keys(monkeypatch):
    # Keys 7, 7, 1 tie, so the row takes the next keys 3, 1, 2: order 1, 2, 0.
    _serve(monkeypatch, [7, 7, 1, 3, 1, 2])
    assert OSEntropy().permuted(np.array([[10, 11, 12]]), axis=1).tolist() == [
        [11, 12, 10]]


# --------------------------------------------------------------------------------
# k-subsets
# --------------------------------------------------------------------------------


@pytest.mark.parametrize("pool, k", [(1000, 5), (20, 15), (20, 5), (7, 7)])
@pytest.mark.parametrize("source", ["seeded", "os"])
def test_k_subsets_are_distinct_of_size_k_and_cover_the_pool(pool, k, source):
    rng = np.random.default_rng(3) if source == "seeded" else OSEntropy()
    size = 20_000
    rows = draw_k_subsets(pool, k, size, rng)
    assert rows.shape == (size, k)
    assert rows.min() >= 0 and rows.max() < pool
    ordered = np.sort(rows, axis=1)
    assert np.all(ordered[:, 1:] > ordered[:, :-1])
    # Each item is in a subset with probability k / pool; the band is at least
    # 8 standard deviations (probability below 1e-14 per item).
    freq = np.bincount(rows.ravel(), minlength=pool) / size
    p = k / pool
    band = max(8 * math.sqrt(p * (1 - p) / size), 1e-12)
    if pool <= 20:
        np.testing.assert_allclose(freq, p, atol=band)
    else:
        # Every item equally often: a chi-square test at level 1e-6.
        assert stats.chisquare(freq * size).pvalue > 1e-6


def test_k_subsets_by_keys_are_the_k_smallest_keys(monkeypatch):
    # Blocks of 2 rows (the keys' memory bound) read the generator's stream in
    # order, so they give the k smallest of one (7, 20) matrix of keys.
    monkeypatch.setattr(_random, "KEYS_PER_BLOCK", 40)
    rows = draw_k_subsets(20, 3, 7, np.random.default_rng(1), keys_only=True)
    keys = np.random.default_rng(1).random((7, 20))
    np.testing.assert_array_equal(np.sort(rows, axis=1),
                                  np.sort(np.argsort(keys, axis=1)[:, :3], axis=1))


def test_small_k_subsets_are_the_first_repeat_free_draws():
    # k**2 small against the pool: k i.i.d. positions per row (no repeat here).
    rows = draw_k_subsets(10**6, 3, 50, np.random.default_rng(2))
    np.testing.assert_array_equal(
        rows, np.random.default_rng(2).integers(0, 10**6, (50, 3), dtype=np.intp))
    assert draw_k_subsets(5, 0, 4, np.random.default_rng(2)).shape == (4, 0)


# --------------------------------------------------------------------------------
# Noise
# --------------------------------------------------------------------------------


def test_noise_follows_the_one_rule():
    # A Generator is shared, an int seeds a Generator, and a RandomState seeds
    # a Generator with one draw (and advances): the rule of check_random_state.
    for source, reference in ((np.random.default_rng(0), np.random.default_rng(0)),
                              (0, np.random.default_rng(0))):
        np.testing.assert_allclose(gaussian_noise([[4.0]], source),
                                   2.0 * reference.standard_normal(1))
    legacy = np.random.RandomState(1)
    y = laplace_noise(3.0, np.eye(2), legacy)
    seeded = np.random.default_rng(np.random.RandomState(1).randint(
        np.iinfo(np.int32).max))
    np.testing.assert_allclose(y, 3.0 * seeded.laplace(0, 1, 2))
    assert legacy.randint(1000) != np.random.RandomState(1).randint(1000)
    with pytest.raises(InvalidParameterError, match="random_state must be"):
        gaussian_noise(np.eye(2), 1.5)
