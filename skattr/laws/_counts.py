"""Exact laws of a count query given a secret.

The setting of Zhang et al.'s Examples 2 and 3 (Sec. 6): each of n records has a
sensitive categorical attribute X2 (binary in the paper) and is counted by the
query F(X) = sum_j h(X1^j) with probability p[c] = P(h(X1) = 1 | X2 = c),
independently across records given X2. The secret is either the realised shares
of X2's categories (dataset attribute privacy) or the parameter phi of the law
X2 is drawn from (distributional attribute privacy).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from skattr.exceptions import InvalidParameterError
from skattr.laws._lattice import _log_binomial_pmf, _log_convolve_rows

__all__ = ["count_pmf"]

_PRIVACY = ("dataset", "distributional")


def _check_privacy(privacy, caller: str = "count_pmf") -> None:
    if privacy not in _PRIVACY:
        raise InvalidParameterError(
            f"The 'privacy' parameter of {caller} must be a str among "
            f"{set(_PRIVACY)}. Got {privacy!r} instead."
        )


def _check_count(value, name: str, caller: str, least: int) -> None:
    is_int = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if not is_int or value < least:
        kind = "non-negative" if least == 0 else "positive"
        raise InvalidParameterError(
            f"The '{name}' parameter of {caller} must be a {kind} int. Got "
            f"{value!r} instead."
        )


def _as_probabilities(p, name: str, caller: str = "count_pmf") -> np.ndarray:
    values = np.atleast_1d(np.asarray(p, dtype=float))
    if values.ndim != 1 or values.size < 2:
        raise InvalidParameterError(
            f"The '{name}' parameter of {caller} must be a 1-d array with one "
            f"entry per category of the sensitive attribute (at least 2). Got "
            f"{p!r} instead."
        )
    if not np.all((values >= 0) & (values <= 1)):
        raise InvalidParameterError(
            f"The '{name}' parameter of {caller} must hold probabilities in "
            f"[0, 1]. Got {p!r} instead."
        )
    return values


def _as_shares(a, k: int) -> np.ndarray:
    """Return the k category shares: a scalar a is the share of category 1."""
    shares = np.asarray(a, dtype=float)
    if shares.ndim == 0 and k == 2:
        shares = np.array([1.0 - shares, shares])
    if shares.shape != (k,) or not np.all((shares >= 0) & (shares <= 1)):
        raise InvalidParameterError(
            f"The 'a' parameter of count_pmf must be a share in [0, 1] (binary "
            f"attribute) or {k} shares, one per category of p. Got {a!r} instead."
        )
    if not np.isclose(shares.sum(), 1.0, rtol=0, atol=1e-9):
        raise InvalidParameterError(
            f"The 'a' parameter of count_pmf must hold shares summing to 1. Got "
            f"{a!r} (sum {shares.sum():g}) instead."
        )
    return shares


def count_pmf(a, n: int, p, *, privacy: str = "dataset"
              ) -> tuple[np.ndarray, np.ndarray]:
    """Exact pmf of the count F(X) = sum_j h(X1^j) given a secret value a.

    Zhang et al. [1]_, Sec. 6, Examples 2 and 3: the law mu_{a, theta} of F given
    the secret s_a under theta, which the Wasserstein Mechanism (Algorithm 4)
    compares across secrets. Records are independent given their sensitive
    values, and record j is counted with probability ``p[X2^j]``.

    Parameters
    ----------
    a : float or array-like of shape (k,)
        The secret. With ``privacy="dataset"``: the realised share of each
        category of X2, so exactly ``a[c] * n`` records hold category c (each
        must be an integer). With ``privacy="distributional"``: the parameter
        phi of the categorical law the records' X2 are drawn from, i.i.d. A
        scalar stands for a binary X2 and means the share (or probability) of
        category 1, i.e. ``(1 - a, a)``.
    n : int
        Number of records.
    p : array-like of shape (k,)
        ``p[c] = P(h(X1) = 1 | X2 = c)``, the probability that a record of
        sensitive category c is counted; theta in the paper's examples. For a
        binary X2 with the paper's (12), ``p = (p2, p1)``.
    privacy : {"dataset", "distributional"}, default="dataset"
        Which attribute privacy the secret belongs to (Definitions 3 and 4 of
        the long version of [1]_).

    Returns
    -------
    support : ndarray of shape (n + 1,)
        The values 0, ..., n of F.
    pmf : ndarray of shape (n + 1,)
        P(F = support | a, theta).

    Notes
    -----
    Dataset privacy: F is the sum of independent Binomial(a[c] n, p[c]) counts,
    one per category, so its pmf is their convolution. Distributional privacy:
    each record is counted with probability sum_c phi[c] p[c] independently, so
    F ~ Binomial(n, phi . p); for the paper's binary case phi_1 = p1 phi_2 +
    p2 (1 - phi_2).

    References
    ----------
    .. [1] W. Zhang, O. Ohrimenko and R. Cummings. "Attribute Privacy:
       Framework and Mechanisms." ACM FAccT 2022; long version, Section 6,
       Examples 2 and 3, Tables 1 and 2.

    Examples
    --------
    Table 1 of [1]_, first row: no one holds X2 = 1, p1 = 0.4 and p2 = 0.6.

    >>> from skattr.laws._counts import count_pmf
    >>> support, pmf = count_pmf(0.0, 4, (0.6, 0.4))
    >>> support
    array([0, 1, 2, 3, 4])
    >>> pmf.round(4)
    array([0.0256, 0.1536, 0.3456, 0.3456, 0.1296])
    """
    _check_privacy(privacy)
    _check_count(n, "n", "count_pmf", 0)
    p = _as_probabilities(p, "p")
    shares = _as_shares(a, p.size)
    support = np.arange(n + 1)
    if privacy == "distributional":
        return support, stats.binom.pmf(support, n, float(shares @ p))
    pmf = np.ones(1)
    for size, prob in zip(_record_counts(shares, n), p, strict=True):
        pmf = np.convolve(pmf, stats.binom.pmf(np.arange(size + 1), size, prob))
    return support, pmf


def _record_counts(shares: np.ndarray, n: int) -> np.ndarray:
    """Return the records per category, a * n, which dataset privacy needs whole."""
    counts = shares * n
    rounded = np.rint(counts)
    if not np.allclose(counts, rounded, rtol=0, atol=1e-9):
        raise InvalidParameterError(
            f"The 'a' parameter of count_pmf must give a whole number of records "
            f"per category for dataset privacy: a * n = {counts} with n = {n}."
        )
    return rounded.astype(int)


def _count_log_pmfs(shares: np.ndarray, n: int, points: np.ndarray,
                    privacy: str) -> np.ndarray:
    """Return log pmfs of F on 0..n per theta in ``points``, secret in ``shares``.

    ``shares`` has shape (s, k) (validated secrets), ``points`` shape (m, k);
    the result has shape (m, s, n + 1). See :func:`count_pmf` for the laws.
    """
    if privacy == "distributional":
        # phi . p may pass 1 by a rounding error; the true value is at most 1.
        success = np.clip(points @ shares.T, 0.0, 1.0)
        return _log_binomial_pmf(n, success[..., None])
    laws = []
    for counts in _record_counts(shares, n):
        log_pmf = np.zeros((points.shape[0], 1))
        for c in np.flatnonzero(counts):
            log_pmf = _log_convolve_rows(
                log_pmf, _log_binomial_pmf(counts[c], points[:, c, None]))
        laws.append(log_pmf)
    return np.stack(laws, axis=1)
