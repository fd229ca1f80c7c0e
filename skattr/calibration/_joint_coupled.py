"""One certificate for several statistics released together through one coupling.

Per secret pair, a coupling pi of the laws of F = (F_1..F_K) under the two
secrets gives each coordinate's coupled distance |D_j| a law (or a law that
dominates it: P(law > t) >= P(|D_j| > t), t >= 0); the K laws refer to the
one coupling, but how the D_j depend on each other is unknown. Every bound
here holds for every dependence.

Gaussian noise N(0, diag(s^2)). For a fixed pair of coupled values the two
noisy releases are Gaussians at Mahalanobis distance
mu = sqrt(sum_j D_j^2 / s_j^2), whose exact profile is Balle and Wang's
g_eps(mu) (:func:`~skattr.calibration._gaussian.gaussian_delta`); the
hockey-stick divergence is jointly convex, so

    delta(eps) <= E_pi g_eps(mu) = E_pi phi(Z),  Z = sum_j Z_j,  Z_j = D_j^2 / s_j^2,

with phi(z) = g_eps(sqrt z), nondecreasing from phi(0) = 0 to 1. For any
grid 0 = z_0 < ... < z_N with P(Z > z_N) = 0 and any B(z) >= P(Z > z),
nonincreasing,

    E phi(Z) <= sum_{i=1..N} phi(z_i) (B(z_{i-1}) - B(z_i)),   B(z_N) := 0,

(Z rounded up to the grid is stochastically larger, and its law is dominated
in turn by the one B defines; every term is non-negative, so float error
stays relative). Mass a law counts at infinite distance (``missing``) is
taken out first: the event that some D_j is infinite has chance at most
sum_j missing_j, and is charged delta 1; on its complement each Z_j is its
law's finite part. B comes from the marginals alone, the least of:

(a) *union*: {sum_j Z_j > z} lies in the union of the {Z_j > t_j} whenever
    sum_j t_j <= z, so B(z) = sum_j T_j(t_j), T_j(t) = P(Z_j > t). The split
    is each law's upper lambda-quantile, for the least lambda whose split
    fits in z (a nonincreasing T_j lets any leftover go anywhere).
(b) *dual* (Meilijson and Nadas; Rueschendorf): on {sum_j Z_j > z},
    sum_j (Z_j - u_j)+ >= z - sum_j u_j > 0, so by Markov's inequality
    B(z) = sum_j E(Z_j - u_j)+ / (z - sum_j u_j) for every u with
    sum_j u_j < z; u is again the upper lambda-quantiles, least over lambda.

and, for the whole expectation at once,

(c) *Jensen*: phi is convex in z up to z_c = 2 (sqrt(1 + eps^2) - 1) and
    concave beyond (phi'(z) = varphi(sqrt z / 2 - eps / sqrt z) / (2 sqrt z),
    whose log has derivative -mu / 4 + eps^2 / mu^3 - 1 / mu in mu = sqrt z,
    positive exactly when mu^4 + 4 mu^2 < 4 eps^2). So psi = phi on
    [0, z_c], continued by its tangent at z_c, is convex and at least phi
    (a concave function lies under its tangents); so is phi on [0, z_1],
    z_1 < z_c, continued by the line from (z_1, phi(z_1)) tangent to phi's
    concave part (:func:`~skattr.calibration._jensen.majorants`; a few z_1,
    the least bound kept; the bound is :mod:`skattr.calibration._jensen`'s). For
    weights w_j >= 0 summing to 1, convexity gives
    phi(sum_j Z_j) <= psi(sum_j w_j (Z_j / w_j)) <= sum_j w_j psi(Z_j / w_j),
    so E phi(Z) <= sum_j w_j E psi(Z_j / w_j): marginals only. If each
    coordinate alone is certified against psi at scale s_j, scales
    sqrt(K) s_j certify all K with w_j = 1 / K, whatever the dependence.

The bound returned per pair is the least of (a)/(b) (pointwise least B) and
(c); over pairs, the largest.

Laplace noise of scale b_j per coordinate: for a fixed pair, the privacy
loss is at most L = sum_j |D_j| / b_j, so the hockey-stick divergence is at
most (1 - e^(eps - L))+, nondecreasing in L; the same sum over a grid with
B from (a)/(b) on Z_j = |D_j| / b_j bounds its expectation.

Scales: the noise is s = sigma c for a direction c; every evaluated delta
is a certificate, so a bisection on sigma (with the outward rounding of
:mod:`skattr.calibration._coupled`) returns a checked value, and a bounded
Nelder-Mead over the K - 1 log-ratios of c (its number of evaluations fixed
before any data is read) can stop anywhere. It lowers sum_j s_j^2 without
giving any value more noise than the union split (Laplace K W_j / epsilon,
W_j the law's upper delta / K quantile) or the proportional start.
``docs/population.md`` states the same proof.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize

from skattr.calibration._coupled import _ROUNDING, coupled_required_noise_variance
from skattr.calibration._gaussian import _bracket_up, _gaussian_delta_unchecked
from skattr.calibration._jensen import jensen_least
from skattr.exceptions import InvalidParameterError, NotCertifiableError

__all__ = ["JointCertificate", "dual_tail", "joint_gaussian_certificate",
           "joint_gaussian_delta", "joint_gaussian_epsilon",
           "joint_laplace_certificate", "joint_laplace_delta", "union_tail"]

#: Most atoms a coordinate's law keeps (each further one rounded up to the
#: next kept: a dominating law).
_ATOMS = 96
#: Most common levels lambda tried by (a) and (b) (any subset is valid).
_LEVELS = 192
#: Points of the grid in mu = sqrt(z) (or in L for Laplace).
_GRID = 160
#: Relative width at which a bisection on the common factor stops.
_SCALE_RTOL = 1e-3
#: Evaluations of the Nelder-Mead over the log-ratios (each one bisection),
#: fixed before any data is read.
_SEARCH_EVALUATIONS = 30
#: Absolute slack added to every certified delta (sums of a few hundred
#: non-negative terms, each relative within 1e-12).
_ABSOLUTE = 1e-15


# ----------------------------------------------------------------- the laws

def _compressed(law) -> tuple[np.ndarray, np.ndarray, float]:
    """Return (distances, probs, missing), at most ``_ATOMS`` atoms, dominating.

    Atoms are kept at upper quantiles on a geometric ladder of tail levels
    and at evenly spaced distances; every other atom's mass moves up to the
    next kept one, so the result is stochastically larger.
    """
    d = np.asarray(law.distances, dtype=float)
    p = np.asarray(law.probs, dtype=float)
    keep = p > 0
    d, p = d[keep], p[keep]
    missing = float(law.missing)
    if d.size <= _ATOMS:
        return d, p, missing
    tail = np.concatenate([np.cumsum(p[::-1])[::-1][1:], [0.0]])
    levels = np.geomspace(1e-18, 1.0, _ATOMS // 2)
    by_tail = np.searchsorted(-tail, -levels, side="left")
    by_distance = np.searchsorted(d, np.linspace(d[0], d[-1], _ATOMS // 2),
                                  side="left")
    kept = np.unique(np.clip(np.concatenate([by_tail, by_distance,
                                             [d.size - 1]]), 0, d.size - 1))
    home = np.searchsorted(kept, np.arange(d.size), side="left")
    return d[kept], np.bincount(home, weights=p, minlength=kept.size), missing


def _prepared(per_pair) -> list[list[tuple]]:
    """Compress every law of every entry once (checked: K laws per entry)."""
    entries = [list(laws) for laws in per_pair]
    if not entries:
        raise NotCertifiableError("No secret pair was given to certify.")
    k = len(entries[0])
    if k == 0 or any(len(laws) != k for laws in entries):
        raise NotCertifiableError(
            "Every secret pair needs one coupled distance law per statistic.")
    return [[_compressed(law) for law in laws] for laws in entries]


def _checked_scales(scales, k: int, what: str) -> np.ndarray:
    s = np.asarray(scales, dtype=float).reshape(-1)
    if s.size != k or not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise NotCertifiableError(
            f"The {what} need one finite positive value per statistic ({k}); "
            f"got {scales!r}.")
    return s


# ------------------------------------------------------- tail bounds (a), (b)

def _levels(laws) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per common level lambda: the split S, the union U and the excess sum E.

    ``laws`` are (values, probs) of the Z_j's finite parts, values
    increasing. At level lambda each t_j is the least candidate (0 or a
    value) with T_j(t_j) <= lambda; S = sum_j t_j, U = sum_j T_j(t_j),
    E = sum_j E(Z_j - t_j)+. Levels ascend, so S does not increase.
    """
    cands = []
    for v, p in laws:
        t = np.concatenate([[0.0], v])
        tail = np.concatenate([[p.sum()], np.cumsum(p[::-1])[::-1][1:], [0.0]])
        # E(Z - t_k)+ = sum_{i > k} p_i v_i - t_k T(t_k).
        upper = np.concatenate([[p @ v], np.cumsum((p * v)[::-1])[::-1][1:],
                                [0.0]])
        excess = np.maximum(upper - t * tail, 0.0)
        cands.append((t, tail, excess))
    levels = np.unique(np.concatenate([c[1] for c in cands] + [[0.0]]))
    if levels.size > _LEVELS:
        levels = np.unique(np.concatenate(
            [levels[np.linspace(0, levels.size - 1, _LEVELS).astype(int)],
             [0.0]]))
    s = np.zeros(levels.size)
    u = np.zeros(levels.size)
    e = np.zeros(levels.size)
    for t, tail, excess in cands:
        at = np.searchsorted(-tail, -levels, side="left")
        s += t[at]
        u += tail[at]
        e += excess[at]
    return s, u, e


def _tail_bounds(laws, z: np.ndarray, levels=None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Return bounds (a) and (b) on P(sum_j Z_j > z), each nonincreasing in z."""
    s, u, e = _levels(laws) if levels is None else levels
    # (a): levels ascend and S descends; the feasible levels at z are those
    # from the first with S <= z on: the least U among them.
    suffix = np.minimum.accumulate(u[::-1])[::-1]
    first = np.searchsorted(-s, -z, side="left")
    union = np.where(first < s.size, suffix[np.minimum(first, s.size - 1)],
                     1.0)
    gap = z[:, None] - s[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(gap > 0, e[None, :] / np.where(gap > 0, gap, 1.0),
                         np.inf)
    dual = ratio.min(axis=1)
    return (np.minimum.accumulate(np.minimum(union, 1.0)),
            np.minimum.accumulate(np.minimum(dual, 1.0)))


def union_tail(values, probs, z: float) -> float:
    """Bound (a), the union over an equal-level split, on P(sum_j Z_j > z).

    Parameters
    ----------
    values, probs : sequence of array-like
        Per coordinate, the values of Z_j (increasing) and their chances.
    z : float

    Examples
    --------
    Two Bernoulli(0.1) coordinates of value 1: P(Z_1 + Z_2 > 0.5) is at
    most 0.2 (exact when they are never 1 together); at z = 2 the sum cannot
    exceed z:

    >>> from skattr.calibration._joint_coupled import union_tail
    >>> union_tail([[1.0], [1.0]], [[0.1], [0.1]], 0.5)
    0.2
    >>> union_tail([[1.0], [1.0]], [[0.1], [0.1]], 2.0)
    0.0
    """
    laws = [(np.asarray(v, float), np.asarray(p, float))
            for v, p in zip(values, probs, strict=True)]
    return float(_tail_bounds(laws, np.array([float(z)]))[0][0])


def dual_tail(values, probs, z: float) -> float:
    """Bound (b), the Markov dual sum_j E(Z_j - u_j)+ / (z - sum u), on P(sum Z > z).

    Examples
    --------
    Two Bernoulli(0.1) coordinates at z = 1.5: with u = 0, the bound is
    E Z_1 + E Z_2 over 1.5, 0.2 / 1.5; the exact worst case (both 1
    together) is 0.1.

    >>> from skattr.calibration._joint_coupled import dual_tail
    >>> round(dual_tail([[1.0], [1.0]], [[0.1], [0.1]], 1.5), 4)
    0.1333
    """
    laws = [(np.asarray(v, float), np.asarray(p, float))
            for v, p in zip(values, probs, strict=True)]
    return float(_tail_bounds(laws, np.array([float(z)]))[1][0])


def _grid_sum(profile_at, bound: np.ndarray) -> float:
    """Return a bound on E profile(Z) from B(z_i) >= P(Z > z_i) on a grid.

    ``profile_at`` is the nondecreasing profile at the grid z_0 < ... < z_N
    (at most 1 beyond it). By parts, E profile(Z) <= profile(z_0)
    + sum_{i<N} (profile(z_i+1) - profile(z_i)) B(z_i) + (1 - profile(z_N))
    B(z_N), that is profile(z_0) (1 - B(z_0)) + sum_{i>=1} profile(z_i)
    (B(z_i-1) - B(z_i)) + B(z_N): the mass in (z_i-1, z_i] is charged at
    the interval's upper end (its most), and the mass beyond the grid at 1.
    A step of B between grid points costs only coarseness, never validity.
    """
    drops = np.maximum(bound[:-1] - bound[1:], 0.0)
    return float(profile_at[0] * (1.0 - bound[0]) + profile_at[1:] @ drops
                 + bound[-1])


def _mu_grid(top: float, epsilon: float, breaks=()) -> np.ndarray:
    """Return 0, geometric points up to ``top`` (mu = sqrt z) and the breaks.

    ``breaks`` are the points (in mu) where the union bound steps: with them
    on the grid, the union bound's own integral is computed exactly.
    """
    if not top > 0:
        return np.array([0.0])
    low = min(max(epsilon / 9.0, top * 1e-5), top)
    breaks = np.asarray(breaks, dtype=float)
    breaks = breaks[(breaks > 0) & (breaks < top)]
    return np.unique(np.concatenate([[0.0], np.geomspace(low, top, _GRID),
                                     breaks]))


# ------------------------------------------------------------ the deltas

def _gaussian_entry(laws, scales: np.ndarray, epsilon: float, asked=None
                    ) -> tuple[float, str]:
    """Certified delta of one pair's K laws at Gaussian scales (and the bound).

    With ``asked`` (a delta): Jensen's bound (its weights searched) is
    skipped when the union or the dual bound already certifies ``asked``
    (:func:`_certified`; only whether the least bound does is asked).
    """
    finite, missing = _scaled(laws, scales, 2)
    top = math.sqrt(sum(float(v[-1]) for v, _ in finite))
    levels = _levels(finite)
    mu = _mu_grid(top, epsilon, np.sqrt(np.maximum(levels[0], 0.0)))
    z = mu ** 2
    union, dual = _tail_bounds(finite, z, levels)
    profile = _gaussian_delta_unchecked(mu, np.full(mu.shape, epsilon))
    bounds = {"union": _grid_sum(profile, union),
              "dual": _grid_sum(profile, np.minimum(union, dual))}
    name = min(bounds, key=bounds.get)
    if asked is None or not _certified(min(1.0, missing + bounds[name]),
                                       asked):
        bounds["jensen"] = jensen_least(finite, epsilon)
        name = min(bounds, key=bounds.get)
    return min(1.0, missing + bounds[name]), name


def _scaled(laws, scales, power: int) -> tuple[list, float]:
    """Return each law's (|D_j| / s_j) ** power, finite part, and the missing mass.

    A value without noise (s_j = 0) that moves, or a ratio beyond floating
    point, is at an infinite distance: its mass joins the laws' missing
    mass, charged whole (the hockey-stick is at most 1), as a law's own
    missing mass is; a value without noise that does not move is at 0.
    """
    finite, missing = [], 0.0
    for (d, p, m), s in zip(laws, scales, strict=True):
        with np.errstate(over="ignore"):
            v = ((d / s) ** power if s > 0
                 else np.where(d > 0, np.inf, 0.0))
        far = ~np.isfinite(v)
        missing += m + float(p[far].sum())
        if far.all():
            v, p = np.zeros(1), np.zeros(1)
        else:
            v, p = v[~far], p[~far]
        finite.append((v, p))
    return finite, missing


def _laplace_entry(laws, b: np.ndarray, epsilon: float, asked=None
                   ) -> tuple[float, str]:
    """Certified delta of one pair's K laws at Laplace scales (and the bound)."""
    finite, missing = _scaled(laws, b, 1)
    top = sum(float(v[-1]) for v, _ in finite)
    if top <= epsilon:
        return min(1.0, missing), "union"
    # The profile is 0 up to epsilon: the grid starts there, and holds the
    # union bound's steps (its own integral exact).
    levels = _levels(finite)
    breaks = levels[0][(levels[0] > epsilon) & (levels[0] < top)]
    loss = np.unique(np.concatenate(
        [[epsilon], epsilon + (top - epsilon)
         * np.linspace(0.0, 1.0, _GRID + 1)[1:] ** 2, breaks]))
    union, dual = _tail_bounds(finite, loss, levels)
    profile = -np.expm1(epsilon - loss)
    bounds = {"union": _grid_sum(profile, union),
              "dual": _grid_sum(profile, np.minimum(union, dual))}
    name = min(bounds, key=bounds.get)
    return min(1.0, missing + bounds[name]), name


def _worst(prepared, entry, scales, epsilon) -> tuple[float, str]:
    worst, name = 0.0, "union"
    for laws in prepared:
        delta, bound = entry(laws, scales, epsilon)
        if not math.isfinite(delta):
            raise NotCertifiableError(
                "A joint certificate's delta is not finite; nothing is "
                "certified.")
        if delta >= worst:
            worst, name = delta, bound
    return worst * (1 + _ROUNDING) + _ABSOLUTE, name


def _certified(found: float, delta: float) -> bool:
    """Whether a pair's delta ``found`` is at most ``delta``.

    Rounded outward as :func:`_worst` rounds the largest over the pairs.
    """
    return found * (1 + _ROUNDING) + _ABSOLUTE <= delta


def _certifies(prepared, entry, scales, epsilon, delta) -> bool:
    """Whether ``_worst(...)[0] <= delta``, each pair's bounds cut short.

    A pair is certified as soon as one bound is small enough, and the first
    pair that is not ends the check: the same answer, with less work. (A
    pair not reached is checked for a finite delta by the certificate's
    final ``_worst``.)
    """
    for laws in prepared:
        found, _ = entry(laws, scales, epsilon, delta)
        if not math.isfinite(found):
            raise NotCertifiableError(
                "A joint certificate's delta is not finite; nothing is "
                "certified.")
        if not _certified(found, delta):
            return False
    return True


def joint_gaussian_delta(per_pair, scales, epsilon: float) -> float:
    """Certified delta of K statistics plus N(0, diag(scales^2)) at ``epsilon``.

    Parameters
    ----------
    per_pair : sequence of tuple of CoupledDistances
        Per secret pair, one law per statistic, each dominating |D_j| under
        the pair's one coupling (any dependence across statistics).
    scales : array-like of shape (K,)
        The noise's standard deviation per statistic.
    epsilon : float

    Examples
    --------
    Two statistics whose coupled distances are each 1 with chance 0.01:

    >>> import numpy as np
    >>> from skattr.laws._distances import CoupledDistances
    >>> from skattr.calibration._joint_coupled import joint_gaussian_delta
    >>> law = CoupledDistances(np.array([0.0, 1.0]), np.array([0.99, 0.01]))
    >>> d = joint_gaussian_delta([(law, law)], [1.0, 1.0], 1.0)
    >>> bool(0.01 * 0.13 < d < 0.02)
    True
    """
    prepared = _prepared(per_pair)
    s = _checked_scales(scales, len(prepared[0]), "scales")
    return _worst(prepared, _gaussian_entry, s, float(epsilon))[0]


def joint_laplace_delta(per_pair, b, epsilon: float) -> float:
    """Certified delta of K statistics plus Laplace noise of scales ``b``."""
    prepared = _prepared(per_pair)
    s = _checked_scales(b, len(prepared[0]), "Laplace scales")
    return _worst(prepared, _laplace_entry, s, float(epsilon))[0]


def joint_gaussian_epsilon(per_pair, scales, delta: float, *,
                           rtol: float = 1e-6) -> float:
    """Least epsilon (rounded up) at which the joint Gaussian delta is <= ``delta``.

    ``inf`` when none is. Bisection to a relative ``rtol``; only an epsilon
    whose delta was computed to fit is returned (a NaN never fits).
    """
    prepared = _prepared(per_pair)
    s = _checked_scales(scales, len(prepared[0]), "scales")

    def gap(epsilon: float) -> float:
        return delta - _worst(prepared, _gaussian_entry, s, epsilon)[0]

    if gap(0.0) >= 0:
        return 0.0
    hi = _bracket_up(gap, 1.0)
    if hi is None:
        return math.inf
    lo = 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if gap(mid) >= 0:
            hi = mid
        else:
            lo = mid
        if hi - lo <= rtol * hi:
            break
    return hi


class JointCertificate:
    """Scales found by :func:`joint_gaussian_certificate` or its Laplace twin.

    Attributes
    ----------
    scales : ndarray of shape (K,)
        Per statistic, the Gaussian sd or the Laplace scale.
    delta : float
        The certified delta at those scales (at most the one asked for).
    bound : {"union", "dual", "jensen"}
        The bound that certified the worst pair.
    evaluations : int
        Deltas computed.
    alone : ndarray of shape (K,)
        Per statistic, its scale certified alone at the same epsilon and
        delta (the search's start; 0 for a value that cannot move).
    """

    def __init__(self, scales, delta, bound, evaluations, alone=None):
        self.scales = scales
        self.delta = delta
        self.bound = bound
        self.evaluations = evaluations
        self.alone = np.zeros(len(scales)) if alone is None else alone

    def __repr__(self) -> str:
        return (f"JointCertificate(scales={self.scales!r}, delta={self.delta!r}, "
                f"bound={self.bound!r})")


def _search(prepared, entry, epsilon, delta, start, allocate, targets):
    """Least common factor on a direction, then a bounded search on the ratios."""
    k = start.size
    # The union split's noise on each value: Laplace(K W_j / epsilon), W_j
    # each law's upper delta / K quantile; in sds for the Gaussian.
    union = k * np.array([max(_quantile(laws[j], delta / k)
                              for laws in prepared)
                          for j in range(k)]) / epsilon
    if entry is _gaussian_entry:
        union = math.sqrt(2.0) * union
    counter = [0]

    def at(scales):
        counter[0] += 1
        return _worst(prepared, entry, scales, epsilon)

    def certificate(direction, guess):
        """Least sigma (checked) with direction sigma certified, from ``guess``."""
        def ok(sigma):
            counter[0] += 1
            return _certifies(prepared, entry, sigma * direction, epsilon,
                              delta)

        lo = hi = guess
        factor = 1.05
        if ok(guess):
            while lo > 1e-300:
                lo = hi / factor
                if not ok(lo):
                    break
                hi, factor = lo, factor * factor
        else:
            while True:
                lo, hi = hi, hi * factor
                if not hi < 1e300:
                    raise NotCertifiableError(
                        "No noise on these statistics certifies the joint "
                        f"release at delta={delta:g}: too much of the coupled "
                        "distance is unbounded.")
                if ok(hi):
                    break
                factor *= factor
        while hi - lo > _SCALE_RTOL * hi:
            mid = 0.5 * (lo + hi)
            if ok(mid):
                hi = mid
            else:
                lo = mid
        certified, bound = at(hi * direction)
        if not certified <= delta:  # pragma: no cover - checked by ok(hi)
            raise NotCertifiableError("The joint certificate did not check.")
        return hi * direction, certified, bound, hi

    if allocate == "relative":
        base = np.abs(targets) / np.exp(np.mean(np.log(np.abs(targets))))
        guess = float(np.max(start / base))
    else:
        base = start / np.exp(np.mean(np.log(start)))
        guess = float(np.exp(np.mean(np.log(start))))
    best = certificate(base, guess)
    if allocate == "error" and k > 1:
        # No value gets more noise than the union split gives it (each
        # value's W_j at delta / K, Laplace K W_j / epsilon: its scale, or
        # its sd against Gaussian sds), nor than the proportional start:
        # the sum of variances mixes the values' units, and unchecked it
        # would buy a little less noise on a value of large units with much
        # more on one of small units.
        cap = np.maximum(best[0], union) * (1 + 1e-9)

        def cost(ratios):
            nonlocal best
            direction = base * np.exp(np.concatenate([[0.0], ratios]))
            direction /= np.exp(np.mean(np.log(direction)))
            found = certificate(direction, best[3])
            total = float(np.sum(found[0] ** 2))
            # A value capped at no noise may take none (0 / 0 is not over).
            over = float(np.max(np.divide(
                found[0], cap, out=np.where(found[0] > 0, np.inf, 0.0),
                where=cap > 0)))
            if over > 1:
                return total * over * over
            if total < np.sum(best[0] ** 2):
                best = found
            return total

        optimize.minimize(cost, np.zeros(k - 1), method="Nelder-Mead",
                          bounds=[(-3.0, 3.0)] * (k - 1),
                          options={"maxfev": _SEARCH_EVALUATIONS,
                                   "xatol": 1e-3, "fatol": 1e-4,
                                   "initial_simplex": _simplex(k - 1)})
    return JointCertificate(*best[:3], counter[0])


def _simplex(m: int) -> np.ndarray:
    return np.vstack([np.zeros(m), 0.3 * np.eye(m)])


def _check_request(epsilon, delta, allocate, targets, k):
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InvalidParameterError(
            f"A joint certificate needs a finite epsilon > 0; got {epsilon!r}.")
    if not 0 < delta < 1:
        raise InvalidParameterError(
            f"A joint certificate needs a delta in (0, 1); got {delta!r}.")
    if allocate not in ("error", "relative"):
        raise InvalidParameterError(
            "allocate must be 'error' (least total variance) or 'relative' "
            f"(noise in proportion to public targets); got {allocate!r}.")
    if allocate == "relative":
        t = np.asarray(targets if targets is not None else [], dtype=float)
        if t.shape != (k,) or not np.all(np.isfinite(t)) or np.any(t == 0):
            raise InvalidParameterError(
                "allocate='relative' needs targets: one finite non-zero "
                f"public value per statistic ({k}); got {targets!r}.")
        return t
    return None


def joint_gaussian_certificate(per_pair, epsilon: float, delta: float, *,
                               allocate: str = "error", targets=None
                               ) -> JointCertificate:
    """Per-statistic Gaussian sds, their certified delta and the bound used.

    The start is each statistic's own coupled sd (its law alone, at
    ``delta``, worst over the pairs); ``allocate="error"`` then searches the
    ratios for the least sum of variances, ``"relative"`` fixes them to the
    public ``targets``.
    """
    def start(prepared, k):
        return np.array([max(math.sqrt(coupled_required_noise_variance(
            tuple(laws)[j], epsilon, delta)) for laws in per_pair)
            for j in range(k)])

    return _certificate(per_pair, _gaussian_entry, start, epsilon, delta,
                        allocate, targets)


def joint_laplace_certificate(per_pair, epsilon: float, delta: float, *,
                              allocate: str = "error", targets=None
                              ) -> JointCertificate:
    """Per-statistic Laplace scales, their certified delta and the bound used.

    The start is each statistic's W at delta / K over epsilon (the union
    bound's split); ``allocate`` as for the Gaussian.
    """
    def start(prepared, k):
        return np.array([max(_quantile(laws[j], delta / k)
                             for laws in prepared) for j in range(k)]) / epsilon

    return _certificate(per_pair, _laplace_entry, start, epsilon, delta,
                        allocate, targets)


def _certificate(per_pair, entry, start, epsilon, delta, allocate, targets
                 ) -> JointCertificate:
    """Check the request, then search from ``start(prepared, k)``.

    A value that cannot move (a start of 0) starts at a millionth of the
    largest.
    """
    prepared = _prepared(per_pair)
    k = len(prepared[0])
    targets = _check_request(epsilon, delta, allocate, targets, k)
    if all(missing == 0 and not np.any(values > 0)
           for laws in prepared for values, _, missing in laws):
        # No value can move (constant columns, clipped): no noise is needed,
        # and no scale is too small for the search to stop at.
        return JointCertificate(np.zeros(k), 0.0, "union", 0)
    alone = start(prepared, k)
    first = np.where(alone > 0, alone, max(alone.max(), 1.0) * 1e-6)
    found = _search(prepared, entry, float(epsilon), float(delta), first,
                    allocate, targets)
    found.alone = alone
    return found


def _quantile(law, level: float) -> float:
    """Return the least kept distance with P(D > it) <= level (else the largest)."""
    d, p, missing = law
    if d.size == 0:
        return 0.0
    tail = np.concatenate([np.cumsum(p[::-1])[::-1][1:], [0.0]]) + missing
    ok = np.flatnonzero(tail <= level)
    return float(d[ok[0]] if ok.size else d[-1])

