"""Certified privacy profiles of finite discrete laws released with additive noise."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from skattr.calibration._gaussian import _as_float, _check_delta
from skattr.exceptions import InvalidParameterError

__all__ = [
    "discrete_gaussian_delta",
    "discrete_laplace_delta",
    "discrete_pair_delta",
    "discrete_epsilon",
]

# Unit of every rounding-error bound below: one ulp of 1.0, twice the unit
# roundoff, so each "k ulp" bound is already conservative by a factor of 2.
_ULP = float(np.finfo(float).eps)
# Covers underflow: every term below ~5e-324 that was flushed to zero.
_TINY = 1e-300
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_PMF_ATOL = 1e-9
# The profile is non-increasing in epsilon, so delta(700) bounds delta(epsilon)
# for every larger epsilon; capping keeps e^epsilon finite with headroom.
_MAX_EPSILON = 700.0

# Gaussian noise. Atoms keep their bump within _MAX_RADIUS standard deviations at
# most (exp(-40^2 / 2) underflows); cells start _CELL_WIDTH standard deviations
# wide. The error budget of a pass is first _FIRST_BUDGET (absolute) and shrinks
# until it is below _RTOL times the profile, or reaches _LAST_BUDGET; cells
# around sign changes are narrowed until they hold _SPLIT_RTOL of the profile
# (cheap, and it keeps the profile monotone where it is flat).
_MAX_RADIUS = 40.0
_CELL_WIDTH = 0.5
_FIRST_BUDGET = 1e-20
_LAST_BUDGET = 1e-290
_RTOL = 1e-10
_SPLIT_RTOL = 1e-14
_MAX_PASSES = 6
_MAX_SPLITS = 60
_MAX_OPEN_CELLS = 1 << 14
# A bump is cut where its mass beyond the cut is below e^-713 ~ 1e-310; its
# density there is then below 40 times that (Mills ratio), and subnormal
# roundings are smaller still.
_LOG_NEGLIGIBLE = -713.0
_NEGLIGIBLE_DENSITY = 1e-306

# Epsilon search: relative and absolute width of the final bracket.
_EPSILON_RTOL = 1e-8
_EPSILON_ATOL = 1e-12


# --------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------


def _check_law(support, pmf, law: str) -> tuple[np.ndarray, np.ndarray]:
    """Return a law's support and pmf as float arrays, or raise saying what to fix."""
    arrays = []
    for value, name in ((support, f"support_{law}"), (pmf, f"pmf_{law}")):
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"The {name!r} parameter must be a 1-d array of real numbers. "
                f"Got {value!r} instead."
            ) from None
        if array.ndim != 1 or array.size == 0:
            raise InvalidParameterError(
                f"The {name!r} parameter must be a non-empty 1-d array. Got an "
                f"array of shape {array.shape} instead."
            )
        if not np.all(np.isfinite(array)):
            raise InvalidParameterError(
                f"The {name!r} parameter must hold finite numbers; remove the "
                "NaN or infinite entries."
            )
        arrays.append(array)
    x, p = arrays
    if x.size != p.size:
        raise InvalidParameterError(
            f"The 'support_{law}' and 'pmf_{law}' parameters must have the same "
            f"length (one probability per atom). Got {x.size} and {p.size}."
        )
    total = float(np.sum(p))
    if np.any(p < 0) or abs(total - 1.0) > _PMF_ATOL:
        raise InvalidParameterError(
            f"The 'pmf_{law}' parameter must hold non-negative probabilities "
            f"summing to 1 (within {_PMF_ATOL:g}). Got a minimum of "
            f"{float(p.min())!r} and a sum of {total!r}; normalise the pmf."
        )
    return x, p


def _check_nonnegative(value, name: str) -> float:
    number = _as_float(value, name)
    if not (math.isfinite(number) and number >= 0):
        raise InvalidParameterError(
            f"The {name!r} parameter must be a finite number >= 0. "
            f"Got {value!r} instead."
        )
    return number


def _check_noise(noise) -> str:
    if noise not in ("gaussian", "laplace"):
        raise InvalidParameterError(
            "The 'noise' parameter must be 'gaussian' or 'laplace'. "
            f"Got {noise!r} instead."
        )
    return noise


def _checked_laws(support_p, pmf_p, support_q, pmf_q):
    """Both laws on the sorted union of their supports (atoms equal bitwise)."""
    xp, p = _check_law(support_p, pmf_p, "p")
    xq, q = _check_law(support_q, pmf_q, "q")
    x, index = np.unique(np.concatenate([xp, xq]), return_inverse=True)
    weights_p = np.bincount(index[: xp.size], p, x.size)
    weights_q = np.bincount(index[xp.size :], q, x.size)
    alive = (weights_p > 0) | (weights_q > 0)
    return x[alive], weights_p[alive], weights_q[alive]


# --------------------------------------------------------------------------------
# Profiles on the union support (P, Q validated, epsilon >= 0)
# --------------------------------------------------------------------------------


def _upper_weights(p: np.ndarray, q: np.ndarray, epsilon: float) -> np.ndarray:
    """Upper bounds of d_i = P_i - e^eps Q_i (f = sum d_i k(y - x_i) only grows)."""
    scale = math.exp(min(epsilon, _MAX_EPSILON))
    scaled_q = scale * q
    # exp, the product and the difference each round once (3 ulp of P + e^eps Q);
    # 8 ulp plus the smallest subnormal covers them.
    return p - scaled_q + 8.0 * _ULP * (p + scaled_q) + 1e-323


def _noiseless_delta(p: np.ndarray, q: np.ndarray, epsilon: float) -> float:
    r"""Upper bound of :math:`\sum_x (P(x) - e^\varepsilon Q(x))_+`."""
    both = (p > 0) & (q > 0)
    only_p = math.fsum(p[(p > 0) & (q == 0)])
    log_p, log_q = np.log(p[both]), np.log(q[both])
    # P (1 - e^{eps + log Q - log P}) without forming e^eps (any epsilon works);
    # moving the exponent down by its rounding error bound rounds the term up.
    exponent = epsilon + log_q - log_p
    error = 2.0 * _ULP * (epsilon + np.abs(log_q) + np.abs(log_p) + 4.0)
    terms = p[both] * -np.expm1(np.minimum(exponent - error, 0.0))
    total = only_p + math.fsum(terms) * (1.0 + 8.0 * _ULP)
    return min(total * (1.0 + 4.0 * _ULP), 1.0)


def _pairs(lower, upper, window_lo, window_hi, active):
    """(interval, atom) index pairs whose open ranges meet; intervals sorted."""
    start = np.searchsorted(upper, window_lo, side="right")
    stop = np.searchsorted(lower, window_hi, side="left")
    counts = np.where(active, np.maximum(stop - start, 0), 0)
    atom = np.repeat(np.arange(counts.size), counts)
    first = np.cumsum(counts) - counts
    interval = np.repeat(start - first, counts) + np.arange(atom.size)
    return interval, atom


def _cell_bounds(lower, upper, atoms):
    """Rigorous bounds (U, L, error) of f_w / sigma on each cell, sigma units."""
    x, d, log_abs, window_lo, window_hi, sigma = atoms
    cell, atom = _pairs(lower, upper, window_lo, window_hi, window_hi > window_lo)
    cell_lo, cell_hi, xa = lower[cell], upper[cell], x[atom]
    lo = np.maximum(cell_lo, window_lo[atom])
    hi = np.minimum(cell_hi, window_hi[atom])
    # A bump is largest at the point of the cell (within its window) nearest to
    # its atom, smallest at the farther end; a cell the window covers only in
    # part also holds points where the windowed bump is 0.
    near = np.maximum(np.maximum(lo - xa, xa - hi), 0.0) / sigma
    far = np.maximum(xa - cell_lo, cell_hi - xa) / sigma
    log_height = log_abs[atom] - _LOG_SQRT_2PI
    big = np.exp(log_height - 0.5 * near * near)
    full = (lo == cell_lo) & (hi == cell_hi)
    small = np.where(full, np.exp(log_height - 0.5 * far * far), 0.0)
    rising = d[atom] > 0
    n = lower.size
    top = np.bincount(cell, np.where(rising, big, -small), n)
    bottom = np.bincount(cell, np.where(rising, small, -big), n)
    error = _sum_error(cell, big, _bump_ulps(log_height, far), n)
    return top, bottom, error + x.size * _NEGLIGIBLE_DENSITY


def _bump_ulps(log_height, z):
    """Relative error, in ulp, of exp(log_height - z^2 / 2) as computed."""
    # The logarithm, z (2 ulp relative, so z^2 / 2 to 3 z^2 ulp absolute), the
    # subtraction and exp itself.
    return 4.0 * (np.abs(log_height) + z * z) + 8.0


def _sum_error(index, terms, ulps, n):
    """Error bound of bincount(index, +-terms) when each term is off by ulps."""
    count = np.bincount(index, minlength=n)
    return _ULP * (
        np.bincount(index, terms * ulps, n) + count * np.bincount(index, terms, n)
    )


def _normal_mass(z_lo, z_hi):
    """Return Phi(z_hi) - Phi(z_lo) and a bound of its error, in ulp."""
    # Reflect intervals lying mostly in the upper tail: the difference is then
    # taken between small lower-tail values (no 1 - 1 cancellation).
    flip = z_lo + z_hi > 0
    z_high = np.where(flip, -z_lo, z_hi)
    z_low = np.where(flip, -z_hi, z_lo)
    high, low = special.ndtr(z_high), special.ndtr(z_low)
    # z is off by 2 ulp relative; Phi(z) then moves by 2 |z| phi(z) ulp, below
    # 2 (z^2 + 1) ulp of Phi(z) for z < 0 (Mills ratio) and 1 ulp for z >= 0.
    z_high, z_low = np.minimum(z_high, 0.0), np.minimum(z_low, 0.0)
    error = high * (2.0 * z_high**2 + 20.0) + low * (2.0 * z_low**2 + 20.0)
    return high - low, error


def _run_integral(run_lo, run_hi, atoms):
    """Integral of f_w over runs where it is >= 0, and its rounding error bound."""
    x, d, _, window_lo, window_hi, sigma = atoms
    run, atom = _pairs(run_lo, run_hi, window_lo, window_hi, window_hi > window_lo)
    lo = np.maximum(run_lo[run], window_lo[atom])
    hi = np.minimum(run_hi[run], window_hi[atom])
    mass, mass_error = _normal_mass((lo - x[atom]) / sigma, (hi - x[atom]) / sigma)
    terms = d[atom] * mass
    # fsum rounds the sum once: each product adds 1 ulp, the sum 1 ulp of itself.
    total = math.fsum(terms)
    error = _ULP * (
        math.fsum(np.abs(d[atom]) * mass_error) + math.fsum(np.abs(terms)) + abs(total)
    )
    return total, error


def _domain(window_lo, window_hi):
    """Merge the windows into disjoint sorted intervals."""
    order = np.argsort(window_lo, kind="stable")
    lo, hi = window_lo[order], np.maximum.accumulate(window_hi[order])
    starts = np.flatnonzero(np.r_[True, lo[1:] > hi[:-1]])
    ends = np.r_[starts[1:] - 1, lo.size - 1]
    return lo[starts], hi[ends]


def _grid(domain_lo, domain_hi, width):
    """Cells of width about ``width`` tiling each interval; sorted, disjoint."""
    cells = np.maximum(np.ceil((domain_hi - domain_lo) / width), 1).astype(np.int64)
    group = np.repeat(np.arange(cells.size), cells)
    k = np.arange(group.size) - np.repeat(np.cumsum(cells) - cells, cells)
    span = domain_hi[group] - domain_lo[group]
    lower = domain_lo[group] + span * (k / cells[group])
    upper = np.where(
        k + 1 == cells[group],
        domain_hi[group],
        domain_lo[group] + span * ((k + 1) / cells[group]),
    )
    keep = upper > lower
    return lower[keep], upper[keep]


def _radius(log_abs, log_level):
    """Radius K (in sigma) beyond which a bump |d| phi holds mass <= level."""
    with np.errstate(invalid="ignore"):
        radius = -special.ndtri_exp(np.minimum(log_level - log_abs, math.log(0.5)))
    return np.clip(np.nan_to_num(radius, nan=0.0), 0.0, _MAX_RADIUS)


def _point_values(points, atoms):
    """f(y) sigma at sorted points, and a bound of its error."""
    x, d, log_abs, window_lo, window_hi, sigma = atoms
    point, atom = _pairs(points, points, window_lo, window_hi, window_hi > window_lo)
    z = (points[point] - x[atom]) / sigma
    log_height = log_abs[atom] - _LOG_SQRT_2PI
    bumps = np.exp(log_height - 0.5 * z * z)
    n = points.size
    value = np.bincount(point, np.where(d[atom] > 0, bumps, -bumps), n)
    error = _sum_error(point, bumps, _bump_ulps(log_height, z), n)
    return value, error + x.size * _NEGLIGIBLE_DENSITY


def _sign_of(value, error):
    return np.where(value > error, 1, np.where(value < -error, -1, 0))


def _split_at_sign_changes(lower, upper, atoms, budget):
    """Positive cells and the bound of the rest, from the sign changes of f.

    The Gaussian kernel is totally positive, so f changes sign at most as often
    as (d_i) ordered by x_i (variation diminishing). When the signs of f at the
    cell edges (and at +-inf, those of the outer d_i) change that often, each
    cell with edges of one sign keeps that sign throughout, and each cell with
    edges of opposite signs holds exactly one sign change, narrowed by probing.
    Edges where the sign is lost in rounding are skipped (their two cells
    merge). Returns None when the count falls short.
    """
    d, sigma = atoms[1], atoms[-1]
    nodes = np.union1d(lower, upper)
    value, error = _point_values(nodes, atoms)
    sign = _sign_of(value, error)
    known = sign != 0
    nodes, value, sign = nodes[known], value[known], sign[known]
    d_sign = np.sign(d[d != 0])
    observed = np.r_[d_sign[0], sign, d_sign[-1]]
    at = np.unique(np.searchsorted(nodes, lower, side="right") - 1)
    if (
        nodes.size < 2
        or at[0] < 0
        or nodes[-1] < upper[-1]
        or np.count_nonzero(np.diff(observed)) != np.count_nonzero(np.diff(d_sign))
    ):
        return None
    lower, upper = nodes[at], nodes[at + 1]
    sign_lo, sign_hi = sign[at], sign[at + 1]
    positive = (sign_lo > 0) & (sign_hi > 0)
    positive_lo, positive_hi = [lower[positive]], [upper[positive]]
    # A rough estimate of the integral, only to set the accuracy of bisection.
    floor = math.fsum(
        ((upper - lower) / sigma * np.minimum(value[at], value[at + 1]))[positive]
    )
    target = 0.25 * max(budget, _SPLIT_RTOL * floor)
    bracket = sign_lo != sign_hi
    lower, upper = lower[bracket], upper[bracket]
    value_lo, value_hi = value[at][bracket], value[at + 1][bracket]
    settled = 0.0
    for split in range(_MAX_SPLITS + 1):
        top, _, error = _cell_bounds(lower, upper, atoms)
        slack = (upper - lower) / sigma * np.maximum(top + error, 0.0)
        if split == _MAX_SPLITS or math.fsum(slack) <= target:
            break
        # Three probes per bracket: the middle (it at least halves the bracket)
        # and both sides of the secant guess (near a simple zero they shrink it
        # 100-fold). Probes whose sign is lost in rounding are dropped.
        width = upper - lower
        guess = lower + width * (value_lo / (value_lo - value_hi))
        probes = np.sort(
            np.column_stack(
                [guess - 0.005 * width, lower + 0.5 * width, guess + 0.005 * width]
            ),
            axis=1,
        )
        values, errors = _point_values(probes.ravel(), atoms)
        values = values.reshape(probes.shape)
        probe_signs = _sign_of(values, errors.reshape(probes.shape))
        probe_signs[
            (probes <= lower[:, None])
            | (probes >= upper[:, None])
            | (np.diff(probes, axis=1, prepend=-np.inf) == 0)
        ] = 0
        chain = np.column_stack([lower, probes, upper])
        values = np.column_stack([value_lo, values, value_hi])
        signs = np.column_stack([np.sign(value_lo), probe_signs, np.sign(value_hi)])
        keep = signs != 0
        owner = np.broadcast_to(np.arange(lower.size)[:, None], chain.shape)[keep]
        chain, values, signs = chain[keep], values[keep], signs[keep]
        stuck = np.bincount(owner, minlength=lower.size) == 2
        settled += math.fsum(slack[stuck])
        # Within a bracket f changes sign once: the piece between probes of one
        # sign keeps it; the piece between probes of opposite signs is the new
        # bracket.
        piece = (owner[:-1] == owner[1:]) & ~stuck[owner[:-1]]
        rising = piece & (signs[:-1] > 0) & (signs[1:] > 0)
        positive_lo.append(chain[:-1][rising])
        positive_hi.append(chain[1:][rising])
        change = piece & (signs[:-1] != signs[1:])
        lower, upper = chain[:-1][change], chain[1:][change]
        value_lo, value_hi = values[:-1][change], values[1:][change]
    return positive_lo, positive_hi, settled + math.fsum(slack)


def _split_cells(lower, upper, atoms, budget):
    """Positive cells and the bound of the rest, from bounds of f on cells."""
    sigma = atoms[-1]
    # Bisection stops once the undecided cells hold a quarter of the budget, or
    # of _SPLIT_RTOL times `floor`, a lower bound of the integral over positive cells.
    positive_lo, positive_hi = [], []
    settled = floor = 0.0
    for split in range(_MAX_SPLITS + 1):
        top, bottom, error = _cell_bounds(lower, upper, atoms)
        width = (upper - lower) / sigma
        positive = bottom >= error
        undecided = (top + error > 0) & ~positive
        floor += math.fsum(width[positive] * (bottom - error)[positive])
        positive_lo.append(lower[positive])
        positive_hi.append(upper[positive])
        lower, upper = lower[undecided], upper[undecided]
        slack = width[undecided] * (top + error)[undecided]
        middle = lower + 0.5 * (upper - lower)
        splittable = (middle > lower) & (middle < upper)
        if (
            split == _MAX_SPLITS
            or math.fsum(slack) <= 0.25 * max(budget, _SPLIT_RTOL * floor)
            or lower.size > _MAX_OPEN_CELLS
        ):
            return positive_lo, positive_hi, settled + math.fsum(slack)
        settled += math.fsum(slack[~splittable])
        lower, middle, upper = (a[splittable] for a in (lower, middle, upper))
        lower = np.column_stack([lower, middle]).ravel()
        upper = np.column_stack([middle, upper]).ravel()


def _gaussian_pass(x, d, sigma, budget):
    """Upper bound of delta with slack about ``budget``, and its certain core."""
    n = x.size
    log_abs = np.full(n, -np.inf)
    live = d != 0
    log_abs[live] = np.log(np.abs(d[live]))
    # Windows of radius K_i with |d_i| 2 Phi(-K_i) <= budget / (8 n): outside
    # them the positive bumps hold at most budget / 8 (added as `tails`), so only
    # the union of the positive windows (the domain) is cut into cells.
    radius = _radius(log_abs, math.log(budget / (16.0 * n)))
    window_lo, window_hi = x - radius * sigma, x + radius * sigma
    rising = d > 0
    outside = special.ndtr((window_lo - x) / sigma) + special.ndtr(
        (x - window_hi) / sigma
    )
    tails = math.fsum(d[rising] * outside[rising]) * (
        1.0 + (2.0 * _MAX_RADIUS**2 + 32.0 + n) * _ULP
    )
    covering = rising & (window_hi > window_lo)
    if not np.any(covering):
        return min(tails * (1.0 + 4.0 * _ULP) + _TINY, 1.0), 0.0
    lower, upper = _grid(
        *_domain(window_lo[covering], window_hi[covering]), _CELL_WIDTH * sigma
    )

    # First the whole of f (bumps cut only where they underflow), by its sign
    # changes; failing that, f_w, with the negative bumps cut at their windows
    # too (this only raises f, and costs at most budget / 8), by cell bounds.
    reach = _radius(log_abs, _LOG_NEGLIGIBLE) * sigma
    atoms = (x, d, log_abs, x - reach, x + reach, sigma)
    found = _split_at_sign_changes(lower, upper, atoms, budget)
    if found is None:
        atoms = (x, d, log_abs, window_lo, window_hi, sigma)
        found = _split_cells(lower, upper, atoms, budget)
    positive_lo, positive_hi, settled = found

    run_lo = np.concatenate(positive_lo)
    run_hi = np.concatenate(positive_hi)
    order = np.argsort(run_lo)
    run_lo, run_hi = run_lo[order], run_hi[order]
    starts = np.r_[True, run_lo[1:] != run_hi[:-1]][: run_lo.size]
    ends = np.r_[starts[1:], True][: run_lo.size]
    core, core_error = _run_integral(run_lo[starts], run_hi[ends], atoms)
    total = tails + core + core_error + settled * (1.0 + 4.0 * _ULP)
    return min(total * (1.0 + 8.0 * _ULP) + _TINY, 1.0), core


def _gaussian_profile(x, p, q, sigma, epsilon):
    d = _upper_weights(p, q, epsilon)
    budget, best = _FIRST_BUDGET, 1.0
    for _ in range(_MAX_PASSES):
        delta, core = _gaussian_pass(x, d, sigma, budget)
        best = min(best, delta)
        if best * _RTOL >= budget or budget <= _LAST_BUDGET:
            break
        budget = max(_RTOL * core if core > 0 else budget * 1e-60, _LAST_BUDGET)
    return best


def _decayed_cumsum(values, decay):
    """s_k = sum_{i <= k} values_i prod_{i < j <= k} decay_{j-1}, row by row."""
    # Parallel prefix scan of the recurrence s_k = decay_{k-1} s_{k-1} + values_k:
    # log2(n) vectorised steps, each doubling the window every s_k covers.
    # Factors below 1e-300 are flushed to 0, so every factor kept is a normal
    # number with a small relative error (the caller adds the dropped terms back).
    total = np.array(values, dtype=float)
    factor = np.where(decay < 1e-300, 0.0, decay)
    factor = np.concatenate([np.zeros((factor.shape[0], 1)), factor], axis=1)
    shift = 1
    while shift < total.shape[1]:
        total[:, shift:] += factor[:, shift:] * total[:, :-shift]
        factor[:, shift:] = factor[:, shift:] * factor[:, :-shift]
        factor[factor < 1e-300] = 0.0
        shift *= 2
    return total


def _laplace_profile(x, p, q, scale, epsilon):
    d = _upper_weights(p, q, epsilon)
    n = x.size
    gaps = np.diff(x) / scale
    decay, half = np.exp(-gaps), np.exp(-0.5 * gaps)
    # Sums of the positive d_i, of the negative ones, and of |d_i| at half the
    # decay rate, from the left (rows 0-2) and from the right (rows 3-5).
    rows = np.stack([np.maximum(d, 0.0), np.maximum(-d, 0.0), np.abs(d)])
    sums = _decayed_cumsum(
        np.vstack([rows, rows[:, ::-1]]),
        np.stack([decay, decay, half, decay[::-1], decay[::-1], half[::-1]]),
    )
    sums[3:] = sums[3:, ::-1]
    # A term |d_i| e^{-D} (D scales away) reached through m links is off by at
    # most (m + 2 D + 2 log2 n + 2) ulp of itself (each exp by 1 + 2 gap ulp),
    # and 2 D e^{-D} <= 1.5 e^{-D/2}: the half-rate sums bound that part.
    # Bounds are rounded so that f only grows; flushed positive terms (each
    # < 1e-300, as d_i <= 1) and subnormal roundings are added back.
    chain = (n + 2.0 * math.log2(n) + 8.0) * _ULP
    rounded = (
        sums[[0, 3]]
        - sums[[1, 4]]
        + chain * (sums[[0, 3]] + sums[[1, 4]])
        + 2.0 * _ULP * sums[[2, 5]]
        + n * 1e-299
    )
    at_left, at_right = rounded
    # On [x_k, x_k+1], with s = (y - x_k) / scale and D its length in scales,
    # 2 scale f(y) = g(s) = alpha e^{-s} + beta e^{s - D}. The sums of these
    # non-negative terms are off by at most n ulp, added at the end.
    inner, inner_error = _two_exponential_integral(at_left[:-1], at_right[1:], gaps)
    total = (
        max(at_right[0], 0.0)
        + max(at_left[-1], 0.0)
        + float(np.sum(inner))
        + float(np.sum(inner_error))
    )
    return min(0.5 * total * (1.0 + (n + 8.0) * _ULP), 1.0)


def _two_exponential_integral(alpha, beta, length):
    """Integral over [0, D] of (alpha e^{-s} + beta e^{s-D})_+, and error bounds."""
    # g(s) = alpha e^{-s} + beta e^{s-D} has at most one zero (g e^{s} is
    # monotone in e^{2s}); mirroring s -> D - s puts the larger coefficient first,
    # so g is >= 0 on [0, root] and <= 0 after it.
    mirror = alpha < beta
    a = np.where(mirror, beta, alpha)
    c = np.where(mirror, alpha, beta)
    mixed = (a > 0) & (c < 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_a = np.log(np.where(mixed, a, 1.0))
        log_c = np.log(np.where(mixed, -c, 1.0))
        root = 0.5 * (length + log_a - log_c)
    # The computed root is off by at most `drift`; g being monotone, integrating
    # to it misses at most drift |g(end)|, unless the root is clearly outside.
    drift = _ULP * (length + np.abs(log_a) + np.abs(log_c) + 8.0)
    drift = np.where(mixed & (root > -drift) & (root < length + drift), drift, 0.0)
    end = np.where(mixed, np.clip(root, 0.0, length), np.where(a > 0, length, 0.0))
    grown = np.exp(end - length)
    shrunk = np.exp(-end)
    width = -np.expm1(-end)
    value = np.maximum(width * (a + c * grown), 0.0)
    magnitude = np.abs(a) * shrunk + np.abs(c) * grown
    height = np.abs(a * shrunk + c * grown) + 4.0 * _ULP * magnitude
    error = drift * height + 16.0 * _ULP * width * (np.abs(a) + np.abs(c) * grown)
    return value, error


def _profile(x, p, q, noise: str, scale: float, epsilon: float) -> float:
    if np.array_equal(p, q):
        return 0.0
    if scale == 0:
        return float(_noiseless_delta(p, q, epsilon))
    if noise == "gaussian":
        return float(_gaussian_profile(x, p, q, scale, epsilon))
    return float(_laplace_profile(x, p, q, scale, epsilon))


# --------------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------------


def discrete_gaussian_delta(
    support_p, pmf_p, support_q, pmf_q, sigma: float, epsilon: float
) -> float:
    r"""Certified privacy profile of two discrete laws plus Gaussian noise.

    Parameters
    ----------
    support_p, pmf_p : array_like of shape (n_atoms_p,)
        Atoms and probabilities of the law :math:`P` of the statistic under the
        first secret.
    support_q, pmf_q : array_like of shape (n_atoms_q,)
        The same for :math:`Q`, under the second secret. Atoms of the two laws
        are matched by exact equality of their values.
    sigma : float
        Standard deviation :math:`\sigma \ge 0` of the noise; 0 releases the
        statistic as it is.
    epsilon : float
        :math:`\varepsilon \ge 0`.

    Returns
    -------
    float
        An upper bound of :math:`H_\varepsilon(P * N(0, \sigma^2) \|
        Q * N(0, \sigma^2))`, above it by about :math:`10^{-10}` of its value
        (more where :math:`p` and :math:`e^\varepsilon q` agree to many digits),
        plus at most :math:`10^{-290}`.

    Raises
    ------
    InvalidParameterError
        If a support or pmf is not a finite 1-d array, a pmf is negative or does
        not sum to 1 within 1e-9, or ``sigma`` or ``epsilon`` is negative or not
        finite.

    See Also
    --------
    discrete_laplace_delta : The same with Laplace noise.
    discrete_pair_delta : Both directions at once.

    Notes
    -----
    With :math:`d_i = P_i - e^{\varepsilon} Q_i` on the union of the supports,

    .. math::

        \delta(\varepsilon) = \int (f(y))_+ \, dy, \qquad
        f(y) = \sum_i d_i \, \varphi_\sigma(y - x_i),

    and for :math:`\sigma = 0`, :math:`\delta = \sum_i (d_i)_+`.

    The weights :math:`d_i` are rounded up, so :math:`f` only grows, and every
    later step bounds its own rounding error and adds it. Each positive bump is
    kept within :math:`K_i` standard deviations, with :math:`2 d_i \Phi(-K_i)`
    below a share of an error budget; their mass beyond is added to the result,
    and :math:`f` is integrated only over the union of these windows, cut into
    cells of :math:`\sigma / 2`.

    The Gaussian kernel is totally positive, so :math:`f` changes sign at most
    as often as :math:`(d_i)` ordered by :math:`x_i` [2]_. The signs of
    :math:`f` at the cell edges are computed with error bounds; when they
    change that often, a cell whose edges share a sign keeps it throughout, and
    each other cell holds exactly one sign change, narrowed by probing its
    middle and both sides of the secant guess. Otherwise, cells are classified
    by bounds :math:`U \ge f \ge L` built from each bump's largest and smallest
    values on the cell (the negative bumps cut at their own windows, which only
    raises :math:`f`): :math:`U \le 0` adds nothing, :math:`L \ge 0` is
    positive, and the rest are bisected, all at once. Positive stretches add
    their exact integral :math:`\sum_i d_i [\Phi(\cdot) - \Phi(\cdot)]` (taken
    in the lower tail); the cells left around the sign changes, narrowed until
    they hold a quarter of the budget or of :math:`10^{-10}` times the profile,
    add their width times :math:`U`. The result is never below the true
    profile, to the accuracy of ``exp`` and ``ndtr`` (taken within a few ulp).
    The budget starts at :math:`10^{-20}` and, for smaller profiles, shrinks in
    further passes below :math:`10^{-10} \delta`. The profile is non-increasing
    in :math:`\varepsilon`, which is capped at 700.

    References
    ----------
    .. [1] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
       Differential Privacy: Analytical Calibration and Optimal Denoising",
       ICML 2018, Section 4 (privacy profiles and the hockey-stick divergence).
    .. [2] S. Karlin, "Total Positivity", Vol. I, Stanford University Press,
       1968, Chapter 5 (the variation-diminishing property).

    Examples
    --------
    A single atom moved by one standard deviation is the Gaussian mechanism:

    >>> round(discrete_gaussian_delta([0.0], [1.0], [1.0], [1.0], 1.0, 1.0), 6)
    0.126937
    """
    law = _checked_laws(support_p, pmf_p, support_q, pmf_q)
    sigma = _check_nonnegative(sigma, "sigma")
    return _profile(*law, "gaussian", sigma, _check_nonnegative(epsilon, "epsilon"))


def discrete_laplace_delta(
    support_p, pmf_p, support_q, pmf_q, scale: float, epsilon: float
) -> float:
    r"""Certified privacy profile of two discrete laws plus Laplace noise.

    Parameters
    ----------
    support_p, pmf_p, support_q, pmf_q : array_like
        The two laws, as in :func:`discrete_gaussian_delta`.
    scale : float
        Scale :math:`b \ge 0` of the Laplace noise (density
        :math:`e^{-|z|/b} / 2b`); 0 releases the statistic as it is.
    epsilon : float
        :math:`\varepsilon \ge 0`.

    Returns
    -------
    float
        An upper bound of :math:`H_\varepsilon(P * \mathrm{Lap}(b) \|
        Q * \mathrm{Lap}(b))`, exact up to a bound of the rounding errors.

    Raises
    ------
    InvalidParameterError
        On an invalid law (see :func:`discrete_gaussian_delta`), or a negative or
        infinite ``scale`` or ``epsilon``.

    See Also
    --------
    discrete_gaussian_delta : The same with Gaussian noise.
    discrete_pair_delta : Both directions at once.

    Notes
    -----
    With :math:`d_i = P_i - e^{\varepsilon} Q_i` on the sorted union
    :math:`x_1 < \dots < x_n` of the supports, on :math:`[x_k, x_{k+1}]`

    .. math::

        2b \, f(y) = \alpha_k e^{-(y - x_k)/b} + \beta_k e^{-(x_{k+1} - y)/b},
        \quad \alpha_k = \sum_{i \le k} d_i e^{-(x_k - x_i)/b}, \quad
        \beta_k = \sum_{i > k} d_i e^{-(x_i - x_{k+1})/b}.

    Such a function has at most one zero, :math:`s_0 = (D + \ln(\alpha /
    -\beta)) / 2` in :math:`s = (y - x_k)/b`, with :math:`D = (x_{k+1} -
    x_k)/b`; on the side where it is positive it integrates in closed form,
    :math:`\int_0^{s_0} = (1 - e^{-s_0})(\alpha + \beta e^{s_0 - D})`. The two
    unbounded pieces add :math:`(\beta_0)_+ / 2` and :math:`(\alpha_n)_+ / 2`.
    The sums, shifted to each interval's end points (no overflow however wide
    the support), come from a vectorised prefix scan of the recurrence
    :math:`\alpha_k = e^{-(x_k - x_{k-1})/b} \alpha_{k-1} + d_k` run
    separately on the positive and negative :math:`d_i`, so their rounding
    errors are relative and rounded into a larger :math:`f`; the error of the
    computed zero is bounded, and so is every rounding after it. For
    ``scale == 0`` see :func:`discrete_gaussian_delta`.

    References
    ----------
    .. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
       Privacy", Foundations and Trends in Theoretical Computer Science 9 (3-4),
       2014, Section 3.3 (the Laplace mechanism).

    Examples
    --------
    A single atom moved by one scale: :math:`\delta = 1 - e^{(\varepsilon -
    1)/2}`.

    >>> round(discrete_laplace_delta([0.0], [1.0], [1.0], [1.0], 1.0, 0.5), 6)
    0.221199
    """
    law = _checked_laws(support_p, pmf_p, support_q, pmf_q)
    scale = _check_nonnegative(scale, "scale")
    return _profile(*law, "laplace", scale, _check_nonnegative(epsilon, "epsilon"))


def discrete_pair_delta(
    support_p, pmf_p, support_q, pmf_q, *, noise: str, scale: float, epsilon: float
) -> float:
    r"""Certified delta of a pair of discrete laws, in both directions.

    Parameters
    ----------
    support_p, pmf_p, support_q, pmf_q : array_like
        The two laws, as in :func:`discrete_gaussian_delta`.
    noise : {"gaussian", "laplace"}
        The law of the additive noise.
    scale : float
        Its standard deviation (Gaussian) or scale (Laplace), :math:`\ge 0`.
    epsilon : float
        :math:`\varepsilon \ge 0`.

    Returns
    -------
    float
        An upper bound of :math:`\max(H_\varepsilon(P' \| Q'), H_\varepsilon(Q'
        \| P'))` with :math:`P'`, :math:`Q'` the laws of the release.

    Raises
    ------
    InvalidParameterError
        On an invalid law, ``noise``, ``scale`` or ``epsilon``.

    Notes
    -----
    The hockey-stick divergence is not symmetric; a release is
    :math:`(\varepsilon, \delta)`-indistinguishable for the pair when both
    directions are at most :math:`\delta`.

    Examples
    --------
    At :math:`\varepsilon = 0` the profile is the total variation distance;
    here :math:`P - Q = (\delta_0 - \delta_1) / 4`, so it is
    :math:`(1 - e^{-1/2}) / 4`:

    >>> delta = discrete_pair_delta([0, 1], [0.5, 0.5], [0, 1], [0.25, 0.75],
    ...                             noise="laplace", scale=1.0, epsilon=0.0)
    >>> round(delta, 6)
    0.098367
    """
    x, p, q = _checked_laws(support_p, pmf_p, support_q, pmf_q)
    noise = _check_noise(noise)
    scale = _check_nonnegative(scale, "scale")
    epsilon = _check_nonnegative(epsilon, "epsilon")
    return max(
        _profile(x, p, q, noise, scale, epsilon),
        _profile(x, q, p, noise, scale, epsilon),
    )


def discrete_epsilon(
    support_p, pmf_p, support_q, pmf_q, *, noise: str, scale: float, delta: float
) -> float:
    r"""Least certified epsilon of a pair of discrete laws at a given delta.

    Parameters
    ----------
    support_p, pmf_p, support_q, pmf_q : array_like
        The two laws, as in :func:`discrete_gaussian_delta`.
    noise : {"gaussian", "laplace"}
        The law of the additive noise.
    scale : float
        Its standard deviation (Gaussian) or scale (Laplace), :math:`\ge 0`.
    delta : float
        Target :math:`\delta \in [0, 1)`.

    Returns
    -------
    float
        An :math:`\varepsilon \ge 0` at which :func:`discrete_pair_delta` is at
        most ``delta``, within a relative :math:`10^{-8}` of the least such; ``inf``
        when there is none (laws told apart with probability above ``delta``
        whatever :math:`\varepsilon`).

    Raises
    ------
    InvalidParameterError
        On an invalid law, ``noise``, ``scale`` or ``delta``.

    Notes
    -----
    The profile is non-increasing in :math:`\varepsilon`. A bracket is found
    (without noise, at the largest log-ratio of common atoms, beyond which the
    profile is the mass only one law puts; with noise, by doubling up to 700),
    then bisected, always keeping an upper end at which both computed directions
    are at most :math:`\delta`: that end is returned.

    Examples
    --------
    >>> eps = discrete_epsilon([0.0], [1.0], [1.0], [1.0], noise="laplace",
    ...                        scale=1.0, delta=0.0)
    >>> round(eps, 6)
    1.0
    """
    x, p, q = _checked_laws(support_p, pmf_p, support_q, pmf_q)
    noise = _check_noise(noise)
    scale = _check_nonnegative(scale, "scale")
    delta = _check_delta(delta)

    def certified(eps: float) -> bool:
        return (
            max(
                _profile(x, p, q, noise, scale, eps),
                _profile(x, q, p, noise, scale, eps),
            )
            <= delta
        )

    if certified(0.0):
        return 0.0
    if scale == 0:
        both = (p > 0) & (q > 0)
        ratio = np.abs(np.log(p[both]) - np.log(q[both]))
        hi = float(ratio.max(initial=0.0)) * (1.0 + 1e-9) + 1e-9
        if not certified(hi):
            return math.inf
    else:
        hi = 1.0
        while not certified(hi):
            if hi >= _MAX_EPSILON:
                return math.inf
            hi = min(2.0 * hi, _MAX_EPSILON)
    lo = 0.0
    while hi - lo > _EPSILON_RTOL * hi + _EPSILON_ATOL:
        middle = 0.5 * (lo + hi)
        if certified(middle):
            hi = middle
        else:
            lo = middle
    return hi
