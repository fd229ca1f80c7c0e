"""Exact laws of a sum of an integer-valued attribute given a secret, and W_inf.

The multinomial companion of :mod:`skattr.laws._counts`: each of n records has a
sensitive categorical attribute X2 and a value h in a finite set of integers,
drawn independently across records with ``probs[c, j] = P(h = values[j] |
X2 = c)``. The query is F(X) = sum_j h_j. A count is the special case
``values = (0, 1)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import reduce

import numpy as np

from skattr._kinds import Count, Mean, Proportion, Sum, law_builder, register_law
from skattr._persistence import persistable
from skattr.exceptions import InvalidParameterError
from skattr.laws._counts import (
    _as_shares,
    _check_privacy,
    _record_counts,
    count_pmf,
)
from skattr.laws._lattice import _least_shift, _log_convolve_rows, _log_tails

__all__ = [
    "SumLaws",
    "bootstrap_exact_law",
    "count_frequencies",
    "fit_exact_law",
    "pair_pmfs",
    "sum_frequencies",
    "sum_pmf",
    "sum_sensitivity",
]


def _as_values(values) -> tuple[np.ndarray, int, int]:
    """Return the distinct integer values, their least value and lattice step."""
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(
            f"The 'values' parameter of sum_pmf must be integers; got {values!r} "
            f"({exc}).") from exc
    if (v.ndim != 1 or v.size < 2 or not np.all(np.isfinite(v))
            or not np.all(v == np.round(v)) or np.unique(v).size != v.size):
        raise InvalidParameterError(
            "The 'values' parameter of sum_pmf must be a 1-d array of at least 2 "
            f"distinct integers (the values h can take). Got {values!r} instead.")
    v = v.astype(np.int64)
    low = int(v.min())
    step = reduce(math.gcd, (int(x) for x in v - low))
    return v, low, step


def _as_laws(probs, r: int, name: str = "probs") -> np.ndarray:
    p = np.asarray(probs, dtype=float)
    if (p.ndim != 2 or p.shape[1] != r or p.shape[0] < 2
            or not np.all((p >= 0) & (p <= 1))
            or not np.allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-9)):
        raise InvalidParameterError(
            f"The '{name}' parameter of sum_pmf must be an array of shape (k, "
            f"{r}), k >= 2: for each category c of the sensitive attribute, the "
            f"probabilities of the {r} values, summing to 1. Got {probs!r} "
            "instead.")
    return p


def _lattice_law(row: np.ndarray, values: np.ndarray, low: int,
                 step: int) -> np.ndarray:
    """Return log P(h = low + step i), i = 0..span, -inf off the support."""
    span = int((values.max() - low) // step)
    log_law = np.full(span + 1, -np.inf)
    with np.errstate(divide="ignore"):
        log_law[(values - low) // step] = np.log(row)
    return log_law


def _log_power(log_law: np.ndarray, times: int) -> np.ndarray:
    """Return the log law of a sum of ``times`` i.i.d. draws (by squaring)."""
    result = np.zeros((1, 1))
    base = log_law[None, :]
    while times:
        if times & 1:
            result = _log_convolve_rows(result, base)
        times >>= 1
        if times:
            base = _log_convolve_rows(base, base)
    return result[0]


def _log_sum_pmf(shares: np.ndarray, n: int, laws: np.ndarray, values, low, step,
                 privacy: str) -> np.ndarray:
    """Return log pmf of F on the lattice n low + step i (one secret, theta)."""
    if privacy == "distributional":
        return _log_power(_lattice_law(shares @ laws, values, low, step), n)
    parts = [_log_power(_lattice_law(laws[c], values, low, step), int(k))
             for c, k in enumerate(_record_counts(shares, n)) if k]
    return reduce(lambda a, b: _log_convolve_rows(a[None], b[None])[0], parts,
                  np.zeros(1))


def sum_pmf(a, n: int, probs, values, *, privacy: str = "dataset"
            ) -> tuple[np.ndarray, np.ndarray]:
    """Exact pmf of the sum F = sum_j h_j of an integer attribute given a secret.

    Records are independent given their sensitive values; a record of
    sensitive category c has h = ``values[j]`` with probability
    ``probs[c, j]``. With dataset privacy exactly ``a[c] * n`` records hold
    category c, and F is a convolution of multinomial sums; with
    distributional privacy each record's category is drawn from ``a``, and F is
    the n-fold convolution of the mixture ``a @ probs``.

    Parameters
    ----------
    a : float or array-like of shape (k,)
        The secret, as in :func:`~skattr.theta.count_pmf` (a scalar is the
        share of category 1 of a binary attribute).
    n : int
        Number of records.
    probs : array-like of shape (k, r)
        Law of h given each sensitive category.
    values : array-like of int, shape (r,)
        The values h takes.
    privacy : {"dataset", "distributional"}, default="dataset"
        Which attribute privacy the secret belongs to.

    Returns
    -------
    support : ndarray of int
        The lattice n min(values) + step i on which F lives.
    pmf : ndarray of float
        P(F = support | a, probs).

    See Also
    --------
    count_pmf : the case ``values = (0, 1)``.
    sum_sensitivity : the Wasserstein sensitivity of such sums.

    Examples
    --------
    Two records, h in {0, 1, 2}; category 0 always has h = 0, category 1 has
    h = 2 with probability 1/2. One record of each:

    >>> from skattr.theta import sum_pmf
    >>> support, pmf = sum_pmf(0.5, 2, [[1, 0, 0], [0.5, 0, 0.5]], [0, 1, 2])
    >>> support.tolist(), pmf.round(3).tolist()
    ([0, 2], [0.5, 0.5])
    """
    _check_privacy(privacy, "sum_pmf")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise InvalidParameterError(
            f"The 'n' parameter of sum_pmf must be a non-negative int. Got {n!r} "
            "instead.")
    values, low, step = _as_values(values)
    laws = _as_laws(probs, values.size)
    shares = _as_shares(a, laws.shape[0])
    log_pmf = _log_sum_pmf(shares, n, laws, values, low, step, privacy)
    support = n * low + step * np.arange(log_pmf.size)
    keep = np.isfinite(log_pmf)
    return support[keep], np.exp(log_pmf[keep])


def sum_sensitivity(pairs: Iterable, n: int, thetas, values, *,
                    privacy: str = "dataset") -> float:
    """Wasserstein sensitivity W of a sum of an integer attribute (Zhang Alg. 4).

    W = max over secret pairs (a, b) and theta in a finite Theta of
    W_inf(mu_{a, theta}, mu_{b, theta}), with the laws of :func:`sum_pmf`.

    Parameters
    ----------
    pairs : iterable of (a, b)
        Discriminative pairs of secrets, each as ``sum_pmf``'s ``a``.
    n : int
        Number of records.
    thetas : array-like of shape (m, k, r)
        The distributions theta in Theta, each a ``probs`` of ``sum_pmf``.
    values : array-like of int, shape (r,)
        The values h takes.
    privacy : {"dataset", "distributional"}, default="dataset"
        Which attribute privacy the secrets belong to.

    Returns
    -------
    float
        The worst-case W, a multiple of the values' lattice step.

    Notes
    -----
    The laws are computed as log-probabilities (tails of any size keep their
    relative accuracy) and compared on both tails with the rounding allowance
    of :func:`~skattr.laws._count_sensitivity.count_sensitivity_box`,
    rounding toward the larger W; two laws computed identically are at
    distance 0.

    Examples
    --------
    Counting is the case values = (0, 1): Zhang et al.'s Example 2 at one theta.

    >>> from itertools import combinations
    >>> from skattr.laws._sums import sum_sensitivity
    >>> shares = [0, 0.25, 0.5, 0.75, 1]
    >>> sum_sensitivity(combinations(shares, 2), 4, [[[0.4, 0.6], [0.6, 0.4]]],
    ...                 [0, 1])
    1.0
    """
    _check_privacy(privacy, "sum_sensitivity")
    values, low, step = _as_values(values)
    thetas = np.asarray(thetas, dtype=float)
    if thetas.ndim == 2:
        thetas = thetas[None]
    pairs = list(pairs)
    if not pairs or thetas.shape[0] == 0:
        raise InvalidParameterError(
            "sum_sensitivity needs at least one pair of secrets and one theta; got "
            f"{len(pairs)} pairs and {thetas.shape[0]} thetas.")
    worst = 0
    for theta in thetas:
        laws = _as_laws(theta, values.size, "thetas")
        tails = {}
        for pair in pairs:
            for a in pair:
                key = tuple(np.atleast_1d(np.asarray(a, dtype=float)).tolist())
                if key not in tails:
                    log_pmf = _log_sum_pmf(_as_shares(a, laws.shape[0]), n, laws,
                                           values, low, step, privacy)
                    tails[key] = (log_pmf, _log_tails(log_pmf[None]))
            (pa, ta), (pb, tb) = (
                tails[tuple(np.atleast_1d(np.asarray(a, dtype=float)).tolist())]
                for a in pair)
            if np.array_equal(pa, pb):
                continue
            shift = max(_least_shift(ta, tb, certain=False)[0],
                        _least_shift(tb, ta, certain=False)[0])
            worst = max(worst, int(shift))
    return float(worst * step)


@persistable
@dataclass(frozen=True)
class SumLaws:
    """A finite Theta for sums of an integer attribute: its law in each group.

    Pass as ``theta=`` to the Wasserstein mechanisms with ``Query.sum`` or
    ``Query.mean`` of one integer-valued column; ``theta="moments"`` fits one
    from the reference data (the frequencies of the column's values in and out
    of the secret's group).

    Parameters
    ----------
    values : array-like of int, shape (r,)
        The values the column takes.
    probs : array-like of shape (m, 2, r) or (2, r)
        For each theta, the law of the column out of the secret's group (row 0)
        and in it (row 1).

    Examples
    --------
    >>> from skattr.theta import SumLaws
    >>> SumLaws(values=[0, 1, 2], probs=[[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]]).probs.shape
    (1, 2, 3)
    """

    values: tuple
    probs: np.ndarray

    def __post_init__(self):
        values, _, _ = _as_values(self.values)
        probs = np.asarray(self.probs, dtype=float)
        if probs.ndim == 2:
            probs = probs[None]
        if probs.ndim != 3 or probs.shape[1] != 2:
            raise InvalidParameterError(
                "The 'probs' of SumLaws must have shape (m, 2, r): for each theta, "
                f"the law out of and in the secret's group. Got shape {probs.shape}.")
        for theta in probs:
            _as_laws(theta, values.size, "probs")
        object.__setattr__(self, "values", tuple(values.tolist()))
        object.__setattr__(self, "probs", probs)

    @classmethod
    def fit(cls, column: np.ndarray, inside: np.ndarray, *,
            max_values: int = 256) -> SumLaws:
        """Frequencies of an integer column's values out of and in the group."""
        if not np.all(np.isfinite(column)) or not np.all(column == np.round(column)):
            raise InvalidParameterError(
                "Exact sum laws need an integer-valued column; use theta="
                "skattr.theta.Resample() for other columns.")
        values, codes = np.unique(column, return_inverse=True)
        if values.size > max_values:
            raise InvalidParameterError(
                f"The column takes {values.size} distinct values (more than "
                f"{max_values}); its exact sum laws would be large. Use theta="
                "skattr.theta.Resample() instead.")
        if values.size == 1:
            values, codes = np.array([values[0], values[0] + 1]), codes
        probs = np.stack([np.bincount(codes[side], minlength=values.size)
                          / max(1, side.sum()) for side in (~inside, inside)])
        return cls(values=values, probs=probs)


def fit_exact_law(h: np.ndarray, inside: np.ndarray, statistic: str):
    """Fit the exact law model of a count or an integer sum to reference records.

    Parameters
    ----------
    h : ndarray of shape (n_records,)
        Each reference record's contribution: 0/1 for a count, the column's
        value for a sum or mean.
    inside : ndarray of bool, shape (n_records,)
        Which records hold the secret's value.
    statistic : {"count", "proportion", "sum", "mean"}
        The query's statistic.

    Returns
    -------
    ndarray of shape (1, 2) or SumLaws
        For a count (or the sum of a 0/1 column),
        ``[[P(counted | out), P(counted | in)]]``; for a sum, the
        frequencies of the column's values out of and in the group. Records are
        modelled as independent draws from their group's frequencies.
    """
    builder = law_builder("exact", statistic)
    if builder is None:
        raise InvalidParameterError(
            f"The exact laws cover counts, proportions, sums and means; the "
            f"{statistic} has none (use theta=skattr.theta.Resample()).")
    if np.all((h == 0) | (h == 1)):
        # A sum of a 0/1 column is a count: binomial convolutions are cheaper.
        return count_frequencies(h, inside)
    return builder(h, inside)


@register_law("exact", Count, Proportion)
def count_frequencies(h: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """Return ``[[P(counted | out), P(counted | in)]]``: a count's exact law model."""
    return np.array([[h[~inside].mean(), h[inside].mean()]])


@register_law("exact", Sum, Mean)
def sum_frequencies(h: np.ndarray, inside: np.ndarray) -> SumLaws:
    """Return the column's value frequencies out of and in the group (a sum's)."""
    return SumLaws.fit(h, inside)


def bootstrap_exact_law(law, h: np.ndarray, inside: np.ndarray,
                        n_replicates: int, random_state) -> object:
    """Add stratified bootstrap replicates to an exact law model (a set Theta).

    A replicate resamples each group's records with replacement, so its
    frequencies are a multinomial draw of the group's size from the group's
    frequencies (a binomial one for a count); drawing them so is exact and
    needs no records. Returns the model with the reference's own fit first.
    """
    rng = np.random.default_rng(random_state)
    sizes = (int((~inside).sum()), int(inside.sum()))
    if isinstance(law, SumLaws):
        base = law.probs[0]
        reps = np.stack([rng.multinomial(size, base[g], size=n_replicates) / size
                         for g, size in enumerate(sizes)], axis=1)
        return SumLaws(values=law.values, probs=np.concatenate([base[None], reps]))
    reps = np.column_stack([rng.binomial(size, law[0, g], n_replicates) / size
                            for g, size in enumerate(sizes)])
    return np.concatenate([law, reps])


def pair_pmfs(theta, pairs, n: int, *, privacy: str = "dataset"):
    """Yield the exact laws ``((support_a, pmf_a), (support_b, pmf_b))``.

    One item per pair and per theta: ``theta`` is a :class:`SumLaws` (sums of
    an integer column) or rows of count probabilities ``[[p_out, p_in], ...]``
    (counts, :func:`~skattr.theta.count_pmf`).
    """
    if isinstance(theta, SumLaws):
        for probs in theta.probs:
            for pair in pairs:
                yield tuple(sum_pmf(a, n, probs, theta.values, privacy=privacy)
                            for a in pair)
        return
    for p in theta:
        for pair in pairs:
            yield tuple(count_pmf(a, n, p, privacy=privacy) for a in pair)
