"""Every random draw skattr makes, and the one rule turning ``random_state`` into one.

The rule, :func:`check_random_state`, for every ``random_state`` in skattr:

- ``None``: the operating system's entropy (:class:`OSEntropy`), read afresh in
  every call, so the draws cannot be predicted from any seed;
- an int ``seed >= 0``: ``np.random.default_rng(seed)``, or
  ``np.random.default_rng([seed, *stream])`` when the caller names a ``stream``
  (an int or a tuple of ints), so that separate uses of one seed (an attack's
  shadow and test datasets, a Theta's law of each property value) draw
  independent reproducible sequences (stream 0 is the seed's own sequence:
  numpy pads a seed with zero words);
- a :class:`numpy.random.Generator`: itself, shared with the caller and advanced
  by every draw;
- a :class:`numpy.random.RandomState`: a Generator seeded by one draw from it,
  which advances it;
- anything else, bools included: :class:`~skattr.exceptions.InvalidParameterError`.

Code that seeds generators of its own (a Theta estimator, whose seed keys the draws
of each property value) takes an int from :func:`seed_of` instead: the seed
itself, or a fresh one from the operating system for ``None``. The mechanisms'
noise follows the same rule (one generator per ``fit``). A seed is for
experiments: anyone who knows it can reproduce, and so subtract, the noise.

Unseeded draws keep no state between calls, so threads may draw concurrently
(``random.SystemRandom.gauss`` caches the second value of each pair in the
instance, and two threads sharing one instance can both receive it).

The noise samplers work in floating point and share its weakness: the set of
doubles a noisy value can take depends on the true value, so the low-order bits of
a release can reveal it (Mironov's least-significant-bit attack, CCS 2012).
``secure=True`` on the Laplace mechanisms draws no floating-point noise: exact
discrete Laplace noise on a power-of-two grid, the statistic rounded to it
(:mod:`skattr.noise._discrete`, which takes its uniform integers from
``secrets.randbelow`` or, seeded, from a Generator's 32-bit words).
"""

from __future__ import annotations

import math
import numbers
import os

import numpy as np

from skattr.exceptions import InvalidParameterError

__all__ = [
    "OSEntropy",
    "base_seed",
    "check_random_state",
    "draw_k_subsets",
    "gaussian_noise",
    "laplace_noise",
    "seed_of",
]

# Random keys per block of rows when k-subsets are drawn by sorting keys: 32 MB
# of float64, whatever the pool's size.
KEYS_PER_BLOCK = 1 << 22


# --------------------------------------------------------------------------------
# Operating-system entropy
# --------------------------------------------------------------------------------


def _words(count: int) -> np.ndarray:
    """Return ``count`` uniform 64-bit words, read from ``os.urandom`` at once."""
    return np.frombuffer(os.urandom(8 * count), dtype=np.uint64)


def _signed_tail_probabilities(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Draw n random signs and n tail probabilities uniform on (0, 1/2].

    Each draw reads 128 bits of ``os.urandom``: the top bit is the sign, the other
    127 form the probability, so it reaches 2**-129 (a Gaussian 13.1 standard
    deviations out, a Laplace 89 scales out), where ``SystemRandom.gauss`` stopped
    at 8.6 standard deviations. A cut-off leaks: a value beyond it is impossible
    under one dataset and possible under a neighbour at distance mu, with
    probability Phi(mu - cut-off), 2e-14 at 8.6 for mu = 1 but below 1e-23
    at 13.1 for mu = 3.
    """
    high, low = _words(2 * n).reshape(2, n)
    sign = np.where(high >> np.uint64(63), -1.0, 1.0)
    tail = (high & np.uint64(2**63 - 1)) * 2.0**-64 + (low + 0.5) * 2.0**-128
    return sign, tail


def _shape(size) -> tuple[int, ...]:
    """Return the shape numpy's ``size`` argument names (None is one value)."""
    if size is None:
        return ()
    return tuple(int(s) for s in np.atleast_1d(size))


class OSEntropy:
    """The draws skattr makes, from the operating system's CSPRNG.

    A drop-in for the methods of :class:`numpy.random.Generator` that skattr
    calls on ``random_state=None`` (``random``, ``integers``, ``standard_normal``,
    ``laplace`` and ``permuted``), each reading ``os.urandom`` (the source behind
    ``random.SystemRandom`` and ``secrets``) once per call, whatever the number
    of values. No state is kept between calls, so one instance can serve many
    threads. Methods that weight outcomes (``choice`` with ``p``) are not offered:
    skattr only makes such draws with a seed.

    The normal and Laplace draws invert their CDFs at tail probabilities read
    from 128 bits each, reaching 2**-129 rather than stopping at the 2**-53 of a
    53-bit uniform (see :func:`gaussian_noise`).
    """

    def random(self, size=None):
        """Draw uniforms on [0, 1), on the grid j * 2**-53 of ``Generator.random``."""
        shape = _shape(size)
        # numpy's own construction: the top 53 bits of a 64-bit word.
        words = _words(math.prod(shape)).reshape(shape)
        return (words >> np.uint64(11)) * 2.0**-53

    def integers(self, low, high=None, size=None, dtype=np.int64):
        """Draw integers exactly uniform on [low, high) (on [0, low) without high)."""
        if high is None:
            low, high = 0, low
        low, span = int(low), int(high) - int(low)
        if not 0 < span <= 2**63:
            raise ValueError(f"integers needs low < high <= low + 2**63; got "
                             f"[{low}, {int(high)}).")
        shape = _shape(size)
        count = math.prod(shape)
        # Rejection keeps every value exactly equally likely (a plain modulo would
        # favour small ones); a word is rejected with probability < span / 2**64.
        usable = 2**64 - 2**64 % span
        kept = np.empty(0, dtype=np.uint64)
        while kept.size < count:
            words = _words(count - kept.size)
            if usable < 2**64:
                words = words[words < np.uint64(usable)]
            kept = np.concatenate([kept, words])
        values = (kept % np.uint64(span)).astype(np.int64) + low
        return values.astype(dtype).reshape(shape)

    def standard_normal(self, size=None):
        """Draw standard normals by inverting the normal CDF at the drawn tail."""
        from scipy import special

        shape = _shape(size)
        sign, tail = _signed_tail_probabilities(math.prod(shape))
        return (sign * special.ndtri(tail)).reshape(shape)

    def laplace(self, loc=0.0, scale=1.0, size=None):
        """Draw Laplace(loc, scale) values by inverting the Laplace CDF."""
        shape = _shape(size)
        sign, tail = _signed_tail_probabilities(math.prod(shape))
        return loc + scale * (sign * np.log(2.0 * tail)).reshape(shape)

    def permuted(self, x, *, axis=None):
        """Return x with its entries shuffled along ``axis`` (all of them for None).

        Each slice along the axis is ordered by i.i.d. 64-bit keys, and a slice
        whose keys tie (probability below ``length**2 / 2**65``) draws new ones:
        conditional on distinct keys every order is equally likely, so each slice
        gets an exactly uniform permutation.
        """
        x = np.asarray(x)
        if axis is None:
            return self.permuted(x.ravel(), axis=0).reshape(x.shape)
        moved = np.moveaxis(x, axis, -1)
        length = moved.shape[-1]
        keys = _words(moved.size).reshape(moved.shape).copy()
        while True:
            order = np.argsort(keys, axis=-1)
            ordered = np.take_along_axis(keys, order, axis=-1)
            tied = (ordered[..., 1:] == ordered[..., :-1]).any(axis=-1)
            if not tied.any():
                break
            keys[tied] = _words(int(tied.sum()) * length).reshape(-1, length)
        return np.moveaxis(np.take_along_axis(moved, order, axis=-1), -1, axis)


# --------------------------------------------------------------------------------
# The rule
# --------------------------------------------------------------------------------


def _is_seed(value) -> bool:
    return (isinstance(value, numbers.Integral) and not isinstance(value, bool)
            and value >= 0)


def _refuse(random_state, accepted: str, owner: str | None):
    subject = ("random_state" if owner is None
               else f"The 'random_state' parameter of {owner}")
    return InvalidParameterError(
        f"{subject} must be {accepted}. Got {random_state!r} "
        f"({type(random_state).__name__}) instead.")


def check_random_state(random_state, stream=None, *, owner: str | None = None):
    """Turn ``random_state`` into the source of a computation's draws.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState
        None reads the operating system's entropy; an int ``>= 0`` seeds a new
        Generator; a Generator is used (and advanced) as it is; a RandomState
        seeds a new Generator with one draw (and so advances).
    stream : int or tuple of int, default=None
        With an int seed, the generator is ``default_rng([seed, *stream])``:
        each use of one seed names its own stream and gets an independent,
        reproducible sequence. Ignored for the other kinds, which are not
        reproducible by a seed alone or are deliberately shared.
    owner : str, default=None
        Who takes ``random_state``, named in the error message.

    Returns
    -------
    OSEntropy or numpy.random.Generator
        An object with the Generator methods skattr draws with.

    Raises
    ------
    InvalidParameterError
        If ``random_state`` is of another kind (a bool, a float, a string) or a
        negative int.

    See Also
    --------
    seed_of : An int seed, for code that seeds generators of its own.

    Notes
    -----
    Unlike :func:`sklearn.utils.check_random_state`, an int gives a
    :class:`numpy.random.Generator`, not a ``RandomState``, and None gives the
    operating system's entropy, never numpy's global state.

    Examples
    --------
    >>> from skattr._random import check_random_state
    >>> check_random_state(0).integers(10, size=3)
    array([8, 6, 5])
    >>> a = check_random_state(0, stream=0).random()
    >>> b = check_random_state(0, stream=1).random()
    >>> bool(a != b)
    True
    """
    if random_state is None:
        return OSEntropy()
    if isinstance(random_state, (np.random.Generator, OSEntropy)):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    if _is_seed(random_state):
        if stream is None:
            return np.random.default_rng(int(random_state))
        streams = (stream,) if isinstance(stream, numbers.Integral) else stream
        return np.random.default_rng([int(random_state), *map(int, streams)])
    raise _refuse(random_state, "None, an int >= 0, a numpy.random.Generator or a "
                  "numpy.random.RandomState", owner)


def seed_of(random_state, *, owner: str | None = None) -> int:
    """Return an int seed: ``random_state`` itself, or a fresh one for None.

    For code that seeds generators of its own through :func:`check_random_state`
    with a ``stream`` (a Theta estimator keys the draws of each property value
    by it, so a law never depends on the order in which laws are asked for).

    Parameters
    ----------
    random_state : None or int
        The seed; None draws 63 bits from ``os.urandom``.
    owner : str, default=None
        Who takes ``random_state``, named in the error message.

    Returns
    -------
    int
        A seed in [0, 2**63) for None, else ``random_state``.

    Raises
    ------
    InvalidParameterError
        If ``random_state`` is not None or an int ``>= 0`` (a Generator cannot
        key separate streams by a seed).

    Examples
    --------
    >>> from skattr._random import seed_of
    >>> seed_of(7)
    7
    """
    if random_state is None:
        return int.from_bytes(os.urandom(8), "little") >> 1
    if _is_seed(random_state):
        return int(random_state)
    raise _refuse(random_state, "an int >= 0 or None", owner)


def base_seed(random_state, *, owner: str | None = None) -> int | None:
    """Return the int that keys every stream of ``random_state``, or None.

    For code that draws many independent, reproducible streams from one
    ``random_state`` (a ledger: one stream per release, keyed by its index,
    so that a ledger reloaded with the same seed never replays a draw):
    None stays None (the operating system's entropy, every time); an int is
    itself; a Generator or RandomState gives one 63-bit draw (advancing it).

    Examples
    --------
    >>> from skattr._random import base_seed
    >>> base_seed(7), base_seed(None)
    (7, None)
    """
    if random_state is None:
        return None
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**63))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    if _is_seed(random_state):
        return int(random_state)
    raise _refuse(random_state, "None, an int >= 0, a numpy.random.Generator "
                  "or a numpy.random.RandomState", owner)


# --------------------------------------------------------------------------------
# Uniform k-subsets
# --------------------------------------------------------------------------------


def by_rejection(pool: int, k: int) -> bool:
    """Whether :func:`draw_k_subsets` draws k of ``pool`` by rejection, not keys.

    See its Notes; :func:`skattr.theta._resample.iter_subsets` replays its
    draws and asks the same question.
    """
    return k * k <= 2 * pool * math.log(3 * pool / k)


def draw_k_subsets(pool: int, k: int, size: int, rng, *,
                   keys_only: bool = False) -> np.ndarray:
    """Draw ``size`` uniform k-subsets of ``range(pool)``, one a row.

    Parameters
    ----------
    pool : int
        Number of items to choose from.
    k : int
        Items per subset, at most ``pool``.
    size : int
        Number of subsets, drawn independently.
    rng : numpy.random.Generator or OSEntropy
        Source of the draws, as :func:`check_random_state` gives it.
    keys_only : bool, default=False
        Always draw by random keys, never by rejection. Both give uniform
        subsets; the property-inference attack passes True so that its seeded
        datasets, and the accuracies its examples and tests show, stay those it
        has always drawn.

    Returns
    -------
    ndarray of int of shape (size, k)
        Distinct positions in each row, in no particular order.

    Notes
    -----
    When k is small against the pool (k**2 <= 2 pool ln(3 pool / k)) each row is
    k i.i.d. positions, and the rows with a repeat are drawn again. A row has no
    repeat with probability about exp(-k**2 / (2 pool)) (birthday), so the
    redraws cost about k exp(k**2 / (2 pool)) positions per row, less than the
    ~3 pool of the random keys below under this condition. The accepted rows are
    uniform among rows of distinct positions, hence uniform subsets.

    Otherwise the positions of the k smallest of ``pool`` i.i.d. uniform keys
    are a uniform k-subset (up to ties among keys on the 2**-53 grid, of
    probability below pool**2 / 2**54), found by one ``argpartition`` per block
    of rows; the blocks bound the keys' memory to 32 MB.

    Examples
    --------
    >>> import numpy as np
    >>> from skattr._random import draw_k_subsets
    >>> draw_k_subsets(10, 3, 2, np.random.default_rng(0)).shape
    (2, 3)
    """
    if k == 0:
        return np.empty((size, 0), dtype=np.intp)
    if not keys_only and by_rejection(pool, k):
        rows = rng.integers(0, pool, size=(size, k), dtype=np.intp)
        redraw = np.arange(size)
        while redraw.size:
            ordered = np.sort(rows[redraw], axis=1)
            repeats = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
            redraw = redraw[repeats]
            rows[redraw] = rng.integers(0, pool, size=(redraw.size, k),
                                        dtype=np.intp)
        return rows
    out = np.empty((size, k), dtype=np.intp)
    block = max(1, KEYS_PER_BLOCK // pool)
    for start in range(0, size, block):
        keys = rng.random((min(block, size - start), pool))
        out[start:start + block] = np.argpartition(keys, k - 1, axis=1)[:, :k]
    return out


# --------------------------------------------------------------------------------
# Noise
# --------------------------------------------------------------------------------


def gaussian_noise(cov: np.ndarray, random_state=None) -> np.ndarray:
    """Draw one vector from N(0, cov).

    With ``random_state=None`` every standard normal is drawn from the operating
    system's entropy (``os.urandom``, the source behind ``random.SystemRandom``)
    by inverting the normal CDF, with no state kept between calls: the noise
    cannot be predicted from any seed and concurrent calls from several threads
    are safe. An int, ``Generator`` or ``RandomState`` makes the draw
    reproducible, which is what experiments want and what a real release must
    not use: anyone who knows the seed can subtract the noise. The source
    follows :func:`check_random_state`.

    The draw is made in floating point, so, like every floating-point sampler, it
    is exposed to the least-significant-bit attack (Mironov, CCS 2012): the set of
    doubles a noisy value can take depends on the true value, and the low-order
    bits of a release can reveal it. The noise is not protected against this
    (snapping or discrete noise would be). Round releases to a coarse grid, well
    above the noise's ulp and the spacing of doubles near the release, before
    publishing them: rounding is post-processing and keeps the guarantee.
    """
    cov = np.atleast_2d(np.asarray(cov, dtype=float))
    standard = check_random_state(random_state).standard_normal(cov.shape[0])
    lam, vecs = np.linalg.eigh(cov)
    return vecs @ (np.sqrt(np.clip(lam, 0.0, None)) * standard)


def laplace_noise(scale: float, basis: np.ndarray, random_state=None) -> np.ndarray:
    """Draw ``basis @ y`` with y_i i.i.d. Laplace(0, scale), one per basis column.

    ``basis`` is (k, d) with orthonormal columns: the identity for per-component
    noise, or the directions of the mean differences for a directional mechanism.
    Randomness as in :func:`gaussian_noise` (each Laplace draw inverts the Laplace
    CDF). Like every floating-point Laplace sampler it does not address the
    least-significant-bit attacks on floating-point noise (Mironov, CCS 2012);
    the remedy in :func:`gaussian_noise` applies.
    """
    basis = np.atleast_2d(np.asarray(basis, dtype=float))
    y = check_random_state(random_state).laplace(0.0, 1.0, basis.shape[1])
    return basis @ (scale * y)
