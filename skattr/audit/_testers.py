"""Distinguishing tests: an event chosen on half the releases, tested on the rest.

The threshold and histogram testers project the outputs on a few directions
chosen from the selection half (the difference of the two sides' means, the
same difference whitened by their pooled covariance, and each statistic's
own axis), and look for an event S on the projection whose probabilities
under the two secrets are far apart: a threshold test (one tail, either
side) or a histogram test (the union of the bins with the largest estimated
likelihood ratio). The likelihood-ratio tester thresholds the log-ratio of
two Gaussians fitted to the selection half instead, a quadratic function of
the outputs: it sees secrets that change only the spread or the correlation
of the outputs, which no direction does. Each event is fixed before the
test half is looked at, so its Clopper-Pearson bounds need no correction
for the many events tried.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from skattr.audit._bounds import epsilon_lower_bound

__all__ = ["Event", "EventBound", "directions", "histogram_test",
           "likelihood_ratio_test", "threshold_test"]

# Thresholds tried on each projection: pooled quantiles at these levels,
# denser in the tails where large likelihood ratios live.
_LEVELS = np.unique(np.concatenate([
    np.geomspace(1e-4, 0.05, 40), np.linspace(0.05, 0.95, 91),
    1 - np.geomspace(1e-4, 0.05, 40)]))


@dataclass(frozen=True)
class Event:
    """An event on the releases: a set of intervals of one projection.

    Attributes
    ----------
    tester : str
        ``"threshold"``, ``"histogram"`` or ``"likelihood-ratio"``.
    direction : ndarray of shape (d,)
        The releases are projected on it (``outputs @ direction``).
    direction_name : str
        Where the direction comes from, in words.
    intervals : tuple of (float, float)
        The event is the projection in one of these half-open intervals
        ``(low, high]``.
    top : str
        ``"a"`` or ``"b"``: the side whose probability is the numerator.
    quadratic : ndarray of shape (d, d) or None
        When given, the projection is ``x @ direction + x @ quadratic @ x``
        (the likelihood-ratio tester's log-ratio of two Gaussians, up to a
        constant).
    """

    tester: str
    direction: np.ndarray
    direction_name: str
    intervals: tuple
    top: str
    quadratic: np.ndarray | None = None

    def contains(self, outputs: np.ndarray) -> np.ndarray:
        """Return whether each release (a row of ``outputs``) is in the event."""
        z = _projected(np.asarray(outputs, dtype=float), self.direction,
                       self.quadratic)
        inside = np.zeros(z.shape[0], dtype=bool)
        for low, high in self.intervals:
            inside |= (z > low) & (z <= high)
        return inside

    def describe(self) -> str:
        """Say what the event is, in one line."""
        parts = []
        for low, high in self.intervals:
            if math.isinf(low):
                parts.append(f"<= {high:.6g}")
            elif math.isinf(high):
                parts.append(f"> {low:.6g}")
            else:
                parts.append(f"in ({low:.6g}, {high:.6g}]")
        where = " or ".join(parts) if len(parts) < 4 else (
            f"in one of {len(parts)} intervals")
        other = "b" if self.top == "a" else "a"
        return (f"{self.tester}: projection on {self.direction_name} {where} "
                f"(P_{self.top} over P_{other})")


@dataclass(frozen=True)
class EventBound:
    """What one tester found on the test half.

    Attributes
    ----------
    tester : str
        The tester's name.
    epsilon_lower_bound : float
        The lower bound on epsilon the chosen event gives on the test half
        (0 when it shows nothing).
    event : Event or None
        The event chosen on the selection half (None if no direction).
    count_top, count_bottom : int
        Test-half releases in the event on the numerator's side and the
        other.
    total_top, total_bottom : int
        Test-half releases on each side.
    alpha : float
        Failure probability of this tester's bound.
    """

    tester: str
    epsilon_lower_bound: float
    event: Event | None
    count_top: int
    count_bottom: int
    total_top: int
    total_bottom: int
    alpha: float


def directions(outputs_a: np.ndarray, outputs_b: np.ndarray, names=None
               ) -> list[tuple[np.ndarray, str]]:
    """Return unit directions to project the releases on, from selection draws.

    The difference of the two sides' means, the same whitened by their pooled
    covariance (Fisher's discriminant: the most separating direction for two
    Gaussians of one covariance), and each statistic's axis.
    """
    d = outputs_a.shape[1]
    names = [f"statistic {i}" for i in range(d)] if names is None else list(names)
    found = []
    if d == 1:
        return [(np.ones(1), f"{names[0]!s}")]
    diff = outputs_a.mean(axis=0) - outputs_b.mean(axis=0)
    if np.linalg.norm(diff) > 0:
        found.append((diff / np.linalg.norm(diff), "the difference of the means"))
        cov = 0.5 * (np.cov(outputs_a, rowvar=False)
                     + np.cov(outputs_b, rowvar=False))
        try:
            whitened = np.linalg.solve(cov, diff)
        except np.linalg.LinAlgError:
            whitened = None
        if (whitened is not None and np.all(np.isfinite(whitened))
                and np.linalg.norm(whitened) > 0):
            found.append((whitened / np.linalg.norm(whitened),
                          "the whitened difference of the means"))
    for i in range(d):
        axis = np.zeros(d)
        axis[i] = 1.0
        found.append((axis, f"{names[i]!s}"))
    return found


def _projected(outputs: np.ndarray, direction: np.ndarray,
               quadratic: np.ndarray | None) -> np.ndarray:
    z = outputs @ direction
    if quadratic is not None:
        z = z + np.einsum("ij,jk,ik->i", outputs, quadratic, outputs)
    return z


def _split(outputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    half = outputs.shape[0] // 2
    return outputs[:half], outputs[half:]


def _test(tester: str, event: Event | None, test_a: np.ndarray,
          test_b: np.ndarray, delta: float, alpha: float) -> EventBound:
    if event is None:
        return EventBound(tester, 0.0, None, 0, 0, test_a.shape[0],
                            test_b.shape[0], alpha)
    top, bottom = (test_a, test_b) if event.top == "a" else (test_b, test_a)
    count_top = int(event.contains(top).sum())
    count_bottom = int(event.contains(bottom).sum())
    bound = float(epsilon_lower_bound(count_top, count_bottom, top.shape[0],
                                      bottom.shape[0], delta, alpha))
    return EventBound(tester, bound, event, count_top, count_bottom,
                        top.shape[0], bottom.shape[0], alpha)


def _best(candidates: list) -> tuple | None:
    """Return the candidate (score, event) with the highest score, if positive."""
    if not candidates:
        return None
    return max(candidates, key=lambda c: c[0])


def threshold_test(outputs_a, outputs_b, delta: float, alpha: float, *,
                   names=None) -> EventBound:
    """Return the epsilon lower bound of the best threshold event.

    On the first half of each side's releases, every projection of
    :func:`directions` and every threshold at the pooled quantiles (denser
    in the tails) is tried, for both tails and both orientations (P_a over
    P_b and P_b over P_a); the event with the largest lower bound there is
    then tested on the second halves (Jagielski et al. 2020, Nasr et al.
    2021).

    Parameters
    ----------
    outputs_a, outputs_b : ndarray of shape (m, d)
        Releases on datasets with the secret's value a, and b.
    delta : float
        The certified delta.
    alpha : float
        Failure probability of the returned bound.
    names : list of str, optional
        The statistics' names (for the event's description).

    Returns
    -------
    EventBound

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(2.0, 1, (20_000, 1)), rng.normal(0.0, 1, (20_000, 1))
    >>> found = threshold_test(a, b, 0.0, 0.05)
    >>> bool(found.epsilon_lower_bound > 3.0), found.event.tester
    (True, 'threshold')
    """
    outputs_a = np.asarray(outputs_a, dtype=float)
    outputs_b = np.asarray(outputs_b, dtype=float)
    select_a, test_a = _split(outputs_a)
    select_b, test_b = _split(outputs_b)
    candidates = []
    for direction, label in directions(select_a, select_b, names):
        candidates += _thresholds("threshold", select_a @ direction,
                                  select_b @ direction, delta, alpha,
                                  direction, label)
    best = _best(candidates)
    return _test("threshold", None if best is None else best[1], test_a,
                 test_b, delta, alpha)


def _thresholds(tester: str, za, zb, delta: float, alpha: float, direction,
                label: str, quadratic=None) -> list:
    """Score every threshold event on a projection of the selection half.

    Both tails, both orientations, at the pooled quantiles: (score, Event)
    of each's best.
    """
    ma, mb = za.size, zb.size
    za, zb = np.sort(za), np.sort(zb)
    t = np.unique(np.quantile(np.concatenate([za, zb]), _LEVELS))
    below_a = np.searchsorted(za, t, side="right")
    below_b = np.searchsorted(zb, t, side="right")
    found = []
    for (ca, cb), interval in (
            ((ma - below_a, mb - below_b), lambda x: (x, math.inf)),
            ((below_a, below_b), lambda x: (-math.inf, x))):
        for top, (ct, cbot, mt, mbot) in (("a", (ca, cb, ma, mb)),
                                          ("b", (cb, ca, mb, ma))):
            score = epsilon_lower_bound(ct, cbot, mt, mbot, delta, alpha)
            j = int(np.argmax(score))
            found.append((float(score[j]), Event(
                tester, direction, label, (interval(float(t[j])),), top,
                quadratic)))
    return found


def likelihood_ratio_test(outputs_a, outputs_b, delta: float, alpha: float,
                          *, names=None) -> EventBound:
    """Return the epsilon lower bound of a threshold on a fitted likelihood ratio.

    On the first half of each side's releases, a Gaussian is fitted to each
    side (its mean and covariance) and the outputs are mapped to the
    log-ratio of the two fitted densities, log N(x; m_a, S_a) -
    log N(x; m_b, S_b) = x^T Q x + w^T x + const, with
    Q = (S_b^-1 - S_a^-1) / 2 and w = S_a^-1 m_a - S_b^-1 m_b: the most
    powerful test when the releases are Gaussian (Neyman-Pearson), and a
    quadratic one, so it sees a secret that changes only the spread or the
    correlation of the outputs. Every threshold on it is scored as
    :func:`threshold_test` scores a projection; the best is tested on the
    second halves.

    Parameters
    ----------
    outputs_a, outputs_b : ndarray of shape (m, d)
        Releases on datasets with the secret's value a, and b.
    delta : float
        The certified delta.
    alpha : float
        Failure probability of the returned bound.
    names : list of str, optional
        Unused (the statistic is not one projection); for a uniform call.

    Returns
    -------
    EventBound

    Examples
    --------
    Two means whose correlation alone the secret flips (+0.9 or -0.9), the
    same means and variances: no projection on a direction separates them.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> a = rng.multivariate_normal([0, 0], [[1, .9], [.9, 1]], 20_000)
    >>> b = rng.multivariate_normal([0, 0], [[1, -.9], [-.9, 1]], 20_000)
    >>> found = likelihood_ratio_test(a, b, 0.0, 0.05)
    >>> bool(found.epsilon_lower_bound > 2.0)
    True
    """
    outputs_a = np.asarray(outputs_a, dtype=float)
    outputs_b = np.asarray(outputs_b, dtype=float)
    select_a, test_a = _split(outputs_a)
    select_b, test_b = _split(outputs_b)
    d = outputs_a.shape[1]
    fitted = []
    for side in (select_a, select_b):
        cov = np.atleast_2d(np.cov(side, rowvar=False))
        # A ridge of 1e-9 of the mean variance: a constant output (no noise
        # along some direction) keeps the log-ratio finite.
        ridge = 1e-9 * max(float(np.trace(cov)) / d, 1e-300)
        fitted.append((side.mean(axis=0), cov + ridge * np.eye(d)))
    (mean_a, cov_a), (mean_b, cov_b) = fitted
    try:
        inv_a, inv_b = np.linalg.inv(cov_a), np.linalg.inv(cov_b)
    except np.linalg.LinAlgError:
        return _test("likelihood-ratio", None, test_a, test_b, delta, alpha)
    quadratic = (inv_b - inv_a) / 2
    linear = inv_a @ mean_a - inv_b @ mean_b
    if not (np.all(np.isfinite(quadratic)) and np.all(np.isfinite(linear))):
        return _test("likelihood-ratio", None, test_a, test_b, delta, alpha)
    label = "the log-ratio of Gaussians fitted to the selection half"
    candidates = _thresholds(
        "likelihood-ratio", _projected(select_a, linear, quadratic),
        _projected(select_b, linear, quadratic), delta, alpha, linear, label,
        quadratic)
    best = _best(candidates)
    return _test("likelihood-ratio", None if best is None else best[1],
                 test_a, test_b, delta, alpha)


def _merged(edges: np.ndarray, bins: np.ndarray) -> tuple:
    """Return the union of bins (by index) as sorted, merged intervals."""
    intervals = []
    for i in np.sort(bins):
        low, high = float(edges[i]), float(edges[i + 1])
        if intervals and intervals[-1][1] == low:
            intervals[-1] = (intervals[-1][0], high)
        else:
            intervals.append((low, high))
    return tuple(intervals)


def histogram_test(outputs_a, outputs_b, delta: float, alpha: float, *,
                   bins: int | None = None, names=None) -> EventBound:
    """Return the epsilon lower bound of the best union of histogram bins.

    In the spirit of Gilbert and McMillan's histogram tester (2018): on the
    first half of each side's releases, each projection of
    :func:`directions` is cut into ``bins`` bins of equal pooled mass; the
    bins are ranked by their estimated likelihood ratio and the unions of the
    top j bins (both orientations) scored by the lower bound they give; the
    best union is tested on the second halves. Unlike a threshold, a union
    of bins finds events where the likelihood ratio is not monotone along
    the projection (two laws of different spread, discrete laws).

    Parameters
    ----------
    outputs_a, outputs_b : ndarray of shape (m, d)
        Releases on datasets with the secret's value a, and b.
    delta : float
        The certified delta.
    alpha : float
        Failure probability of the returned bound.
    bins : int, optional
        Bins per projection; by default about one per 500 selection
        releases, between 10 and 100.
    names : list of str, optional
        The statistics' names (for the event's description).

    Returns
    -------
    EventBound

    References
    ----------
    .. [1] A. C. Gilbert and A. McMillan. "Property Testing for Differential
       Privacy." Allerton 2018.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(0, 1, (20_000, 1)), rng.normal(0, 3, (20_000, 1))
    >>> found = histogram_test(a, b, 0.0, 0.05)
    >>> bool(found.epsilon_lower_bound > 3.0), len(found.event.intervals)
    (True, 2)
    """
    outputs_a = np.asarray(outputs_a, dtype=float)
    outputs_b = np.asarray(outputs_b, dtype=float)
    select_a, test_a = _split(outputs_a)
    select_b, test_b = _split(outputs_b)
    ma, mb = select_a.shape[0], select_b.shape[0]
    if bins is None:
        bins = int(np.clip((ma + mb) // 1000, 10, 100))
    candidates = []
    for direction, label in directions(select_a, select_b, names):
        za, zb = select_a @ direction, select_b @ direction
        inner = np.unique(np.quantile(np.concatenate([za, zb]),
                                      np.arange(1, bins) / bins))
        edges = np.concatenate([[-math.inf], inner, [math.inf]])
        ca = np.bincount(np.searchsorted(inner, za, side="left"),
                         minlength=edges.size - 1)
        cb = np.bincount(np.searchsorted(inner, zb, side="left"),
                         minlength=edges.size - 1)
        ratio = (ca + 0.5) / (cb + 0.5) * (mb / ma)
        for top, order in (("a", np.argsort(-ratio, kind="stable")),
                           ("b", np.argsort(ratio, kind="stable"))):
            ct, cbot = (ca, cb) if top == "a" else (cb, ca)
            mt, mbot = (ma, mb) if top == "a" else (mb, ma)
            score = epsilon_lower_bound(np.cumsum(ct[order]),
                                        np.cumsum(cbot[order]), mt, mbot,
                                        delta, alpha)
            j = int(np.argmax(score))
            candidates.append((float(score[j]), Event(
                "histogram", direction, label,
                _merged(edges, order[:j + 1]), top)))
    best = _best(candidates)
    return _test("histogram", None if best is None else best[1], test_a,
                 test_b, delta, alpha)
