"""Bounds on the laws of a mean or sum under the resampling Theta, from moments.

Under the resampling Theta a linear statistic F = w(n) S is a weighted sum S of
per-record contributions h over n records: k drawn from the reference records
of the secret's group and n - k from the others (a Binomial(n, a) number for
distributional privacy). Its law needs no draws to bound; the groups' own
reference values give everything, exactly:

- **Chernoff tails.** With replacement the records are independent; without,
  Hoeffding (1963, Thm 4) shows E f(sum) is at most its value with
  replacement for every convex f, so the moment generating function of the
  groups' values bounds both. P(S - ES >= t) <= exp(K(lambda) - lambda t) for
  every lambda > 0, K the sum of the records' centred cumulant generating
  functions, so the least t over a grid of lambda bounds each tail.
- **Berry-Esseen** (independent records, i.e. with replacement):
  sup_x |P(S <= x) - Phi((x - ES) / s)| <= C sum_i E|h_i - E h_i|^3 / s^3
  with C = 0.5600 for independent summands not identically distributed
  (Shevtsova, 2010), which bounds the quantile function in the middle.
- **The swap coupling** (dataset privacy): a dataset with k_b > k_a group
  records is a dataset with k_a of them whose j = k_b - k_a random other
  records are replaced by j random group records not in it, which is
  uniformly distributed again. So F_b - F_a = w(n) D, D the sum of j group
  values less the sum of j other values, each set drawn as the model draws
  (distinct without replacement), and P(|D| > T) <= delta by Chernoff on D.
  With replacement and distributional privacy a record moves group when a
  shared uniform falls between a and b: D sums the switched records'
  differences, their number Binomial(n, |b - a|).

The Approximate Wasserstein Mechanism reads (W, delta)-closeness from these
three (Chen and Ohrimenko Def 3.2): the swap coupling directly; a box of each
law holding all but delta / 2 (faces at Chernoff tails of delta / (4 d), the
remark after Thm 3.2); and, for one statistic with independent records, the
quantile coupling over [delta / 2, 1 - delta / 2] with each quantile between
its Chernoff and Berry-Esseen bounds. Each is valid, so the least is. Every
grid (of lambda, of levels) only loosens a bound, and floating-point rounding
is padded on the certified side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special, stats

from skattr._certificate import MethodStep
from skattr._persistence import persistable

__all__ = ["MomentLaws"]

# Shevtsova (2010), Doklady Mathematics 82(3): the Berry-Esseen constant for
# sums of independent summands that need not be identically distributed.
BERRY_ESSEEN = 0.5600

# lambda = g / scale, g over eight decades; the ratio 1.08 between grid points
# costs at most about 0.1% of a tail bound (the objective is flat at its
# least value).
_G = np.geomspace(1e-4, 1e4, 241)

# Levels of the quantile coupling, even in probit scale between delta/2 and
# 1 - delta/2; between grid levels the quantile functions are bounded by
# monotonicity.
_LEVELS = 400

# Relative padding of every bound for floating-point rounding (far above the
# few-ulp errors of logsumexp, ppf and the sums here).
_PAD = 1e-9


@dataclass(frozen=True)
class _Group:
    """The contributions h of one side's reference records, shape (m, d)."""

    values: np.ndarray
    mean: np.ndarray = field(init=False)
    var: np.ndarray = field(init=False)
    rho: np.ndarray = field(init=False)
    spread: np.ndarray = field(init=False)
    low: np.ndarray = field(init=False)
    high: np.ndarray = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "low", self.values.min(axis=0))
        object.__setattr__(self, "high", self.values.max(axis=0))
        centred = self.values - self.values.mean(axis=0)
        object.__setattr__(self, "mean", self.values.mean(axis=0))
        object.__setattr__(self, "var", (centred ** 2).mean(axis=0))
        object.__setattr__(self, "rho", (np.abs(centred) ** 3).mean(axis=0))
        object.__setattr__(self, "spread", np.abs(centred).max(axis=0))

    def extremes(self, counts, j: int, largest: bool, replace: bool
                 ) -> np.ndarray:
        """Largest (or least) sum of ``counts`` draws of statistic j's values."""
        counts = np.asarray(counts)
        bound = counts * (self.high[j] if largest else self.low[j])
        if replace:
            return bound
        ordered = np.sort(self.values[:, j])
        sums = np.concatenate([[0.0], np.cumsum(ordered[::-1] if largest
                                                else ordered)])
        fits = counts <= ordered.size
        return np.where(fits, sums[np.minimum(counts, ordered.size)], bound)

    def extreme(self, count: int, j: int, largest: bool, replace: bool) -> float:
        """Largest (or least) sum of ``count`` draws of statistic j's values."""
        return float(self.extremes(count, j, largest, replace))

    def cgf(self, lam: np.ndarray, j: int) -> np.ndarray:
        """Centred log E exp(lam (h_j - mean_j)) at each lam (any sign)."""
        centred = self.values[:, j] - self.mean[j]
        out = np.empty(lam.size)
        block = max(1, (1 << 22) // max(1, centred.size))
        for i in range(0, lam.size, block):
            part = lam[i:i + block, None] * centred[None, :]
            out[i:i + block] = special.logsumexp(part, axis=1) - math.log(
                centred.size)
        return out


def _tail(cgf: np.ndarray, lam: np.ndarray, log_inv: np.ndarray) -> np.ndarray:
    """Least (K(lam) + log(1/tau)) / lam over the grid, per tau (lam > 0)."""
    return np.min((cgf[None, :] + log_inv[:, None]) / lam[None, :], axis=1)


@persistable
@dataclass(frozen=True)
class MomentLaws:
    """Moment bounds on the laws of a linear statistic under the resampling Theta.

    Built by :meth:`skattr.theta.Resample.fit` for a mean, sum, count or
    proportion; read by the Approximate Wasserstein Mechanism. See the module
    docstring for the three bounds and their sources.

    Parameters
    ----------
    inside, outside : ndarray of shape (m, d)
        Per-record contributions h of the reference records in, and out of,
        the secret's group.
    weight : ndarray of shape (d,)
        w(n) of each statistic, per record count: F = w(n) S.
    replace : bool
        Whether the model draws with replacement (independent records).
    always : bool
        Use these bounds alone, never draws (``Resample(moment_bounds=True)``);
        False lets the mechanism draw when draws are cheap and keep the least.

    Examples
    --------
    A 0/1 column, always 1 in the group and half the time outside it; the
    mean of n = 100 records with 40 or 60 of the group moves by 0.1 between
    the two, and disregarding 1% of the mass it moves by at most 0.17:

    >>> import numpy as np
    >>> from skattr.laws._moment_bounds import MomentLaws
    >>> laws = MomentLaws(np.ones((100, 1)), np.tile([[0.0], [1.0]], (100, 1)),
    ...                   weight=lambda n: 1 / n, replace=False)
    >>> w, how = laws.closeness([(0.4, 0.6)], 100, "dataset", 0.01)
    >>> round(w, 3), how.kind, str(how).split(":")[0]
    (0.169, 'coupling.swap', 'the swap coupling')
    """

    inside: np.ndarray
    outside: np.ndarray
    weight: object = field(repr=False)
    replace: bool = False
    always: bool = False
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def d(self) -> int:
        """Number of released statistics."""
        return self.inside.shape[1]

    def _groups(self) -> tuple[_Group, _Group]:
        if "groups" not in self._cache:
            self._cache["groups"] = (_Group(np.asarray(self.inside, float)),
                                     _Group(np.asarray(self.outside, float)))
        return self._cache["groups"]

    def _lambdas(self, j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                        np.ndarray, np.ndarray]:
        """Return the lambda grid of statistic j and both groups' cgf at it."""
        key = ("cgf", j)
        if key not in self._cache:
            gin, gout = self._groups()
            scale = max(math.sqrt(max(gin.var[j], gout.var[j])),
                        gin.spread[j], gout.spread[j], 1e-300)
            lam = _G / scale
            self._cache[key] = (lam, gin.cgf(lam, j), gin.cgf(-lam, j),
                                gout.cgf(lam, j), gout.cgf(-lam, j))
        return self._cache[key]

    # ----------------------------------------------------------- one law
    def _law_cgf(self, a: float, n: int, privacy: str, j: int):
        """Mean of S, its centred cgf at +lambda and -lambda, and its range."""
        gin, gout = self._groups()
        lam, kin_p, kin_m, kout_p, kout_m = self._lambdas(j)
        if privacy == "dataset":
            k = round(a * n)
            mean = k * gin.mean[j] + (n - k) * gout.mean[j]
            r = self.replace
            return (mean, k * kin_p + (n - k) * kout_p, k * kin_m + (n - k) * kout_m,
                    gin.extreme(k, j, False, r) + gout.extreme(n - k, j, False, r),
                    gin.extreme(k, j, True, r) + gout.extreme(n - k, j, True, r))
        # Distributional: n i.i.d. draws of the mixture (a bound without
        # replacement, by Hoeffding's theorem given the Binomial count).
        mix = a * gin.mean[j] + (1 - a) * gout.mean[j]
        with np.errstate(divide="ignore"):
            la, lb = math.log(a) if a > 0 else -np.inf, (
                math.log1p(-a) if a < 1 else -np.inf)

        def k_mix(sign, kin, kout):
            x = sign * lam
            return np.logaddexp(la + x * (gin.mean[j] - mix) + kin,
                                lb + x * (gout.mean[j] - mix) + kout)

        ks = np.arange(n + 1)
        ks = ks[(ks > 0) | (a < 1)]
        ks = ks[(ks < n) | (a > 0)]
        r = self.replace
        least = np.min(gin.extremes(ks, j, False, r)
                       + gout.extremes(n - ks, j, False, r))
        most = np.max(gin.extremes(ks, j, True, r)
                      + gout.extremes(n - ks, j, True, r))
        return (n * mix, n * k_mix(1, kin_p, kout_p), n * k_mix(-1, kin_m, kout_m),
                float(least), float(most))

    def _berry_esseen(self, a: float, n: int, privacy: str, j: int
                      ) -> tuple[float, float]:
        """(s, e): the sd of S and the Berry-Esseen distance (independent)."""
        gin, gout = self._groups()
        if privacy == "dataset":
            k = round(a * n)
            var = k * gin.var[j] + (n - k) * gout.var[j]
            rho = k * gin.rho[j] + (n - k) * gout.rho[j]
        else:
            mix = a * gin.mean[j] + (1 - a) * gout.mean[j]
            hin, hout = gin.values[:, j] - mix, gout.values[:, j] - mix
            var = n * (a * (hin ** 2).mean() + (1 - a) * (hout ** 2).mean())
            rho = n * (a * (np.abs(hin) ** 3).mean()
                       + (1 - a) * (np.abs(hout) ** 3).mean())
        s = math.sqrt(var)
        e = BERRY_ESSEEN * rho / s ** 3 * (1 + _PAD) if s > 0 else math.inf
        return s, e

    def _pad(self, n: int, j: int) -> float:
        """Absolute padding of a bound on S for rounding."""
        gin, gout = self._groups()
        return _PAD * n * (max(gin.spread[j], gout.spread[j])
                           + abs(gin.mean[j]) + abs(gout.mean[j]) + 1e-300)

    def tail_bounds(self, a: float, n: int, privacy: str, tail: float, j: int = 0
                    ) -> tuple[float, float]:
        """(L, U) with P(S < L) <= tail and P(S > U) <= tail, on the scale of F."""
        mean, kp, km, least, most = self._law_cgf(a, n, privacy, j)
        lam = self._lambdas(j)[0]
        log_inv = np.array([-math.log(tail)])
        up, down = _tail(kp, lam, log_inv)[0], _tail(km, lam, log_inv)[0]
        pad = self._pad(n, j)
        w = float(np.broadcast_to(self.weight(n), (self.d,))[j])
        low = max(mean - down, least) - pad
        high = min(mean + up, most) + pad
        return (w * low, w * high) if w >= 0 else (w * high, w * low)

    def _quantile_bounds(self, a: float, n: int, privacy: str, levels: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds on S's quantile function at ``levels`` (d = 1)."""
        mean, kp, km, least, most = self._law_cgf(a, n, privacy, 0)
        lam = self._lambdas(0)[0]
        pad = self._pad(n, 0)
        # Q(u) <= mean + t_up(1 - u); Q(u) >= mean - t_down(u); both in range.
        high = np.minimum(mean + _tail(kp, lam, -np.log1p(-levels)), most) + pad
        low = np.maximum(mean - _tail(km, lam, -np.log(levels)), least) - pad
        if self.replace:
            s, e = self._berry_esseen(a, n, privacy, 0)
            if s > 0 and e < 1:
                with np.errstate(invalid="ignore"):
                    up = np.where(levels + e < 1,
                                  mean + s * stats.norm.ppf(np.minimum(
                                      levels + e, 1)), np.inf)
                    down = np.where(levels - e > 0,
                                    mean + s * stats.norm.ppf(np.maximum(
                                        levels - e, 0)), -np.inf)
                high = np.minimum(high, up + pad + _PAD * s)
                low = np.maximum(low, down - pad - _PAD * s)
        return low, high

    # ------------------------------------------------------------ swaps
    def _swap_bound(self, a: float, b: float, n: int, privacy: str, j: int,
                    delta: float) -> float | None:
        """T with P(|F_b - F_a| > T) <= delta under the swap coupling, or None."""
        gin, gout = self._groups()
        lam, kin_p, kin_m, kout_p, kout_m = self._lambdas(j)
        log_inv = np.array([math.log(2 / delta)])
        if privacy == "dataset":
            swaps = abs(round(b * n) - round(a * n))
            if swaps == 0:
                return 0.0
            mean = swaps * (gin.mean[j] - gout.mean[j])
            # D = sum of `swaps` group values - sum of `swaps` other values.
            up = _tail(swaps * (kin_p + kout_m), lam, log_inv)[0]
            down = _tail(swaps * (kin_m + kout_p), lam, log_inv)[0]
            r = self.replace
            most = (gin.extreme(swaps, j, True, r)
                    - gout.extreme(swaps, j, False, r))
            least = (gin.extreme(swaps, j, False, r)
                     - gout.extreme(swaps, j, True, r))
        elif self.replace:
            p = abs(b - a)
            if p == 0:
                return 0.0
            diff = gin.mean[j] - gout.mean[j]
            mean = n * p * diff
            lp = math.log(p)
            lq = math.log1p(-p) if p < 1 else -np.inf

            def k_switch(sign, kin, kout):
                x = sign * lam
                # log(1 - p + p E exp(x (X_in - X_out))) - x p diff, centred.
                return n * (np.logaddexp(lq, lp + x * diff + kin + kout)
                            - x * p * diff)

            up = _tail(k_switch(1, kin_p, kout_m), lam, log_inv)[0]
            down = _tail(k_switch(-1, kin_m, kout_p), lam, log_inv)[0]
            most = n * max(gin.high[j] - gout.low[j], 0.0)
            least = n * min(gin.low[j] - gout.high[j], 0.0)
        else:
            return None
        pad = self._pad(n, j)
        w = abs(float(np.broadcast_to(self.weight(n), (self.d,))[j]))
        return w * (max(min(mean + up, most), -max(mean - down, least)) + pad)

    # ---------------------------------------------------------- closeness
    def closeness(self, pairs, n: int, privacy: str, delta: float
                  ) -> tuple[float, MethodStep]:
        """Return W such that every pair's laws are (W, delta)-close, and how.

        The least of the swap coupling, the boxes and (one statistic,
        independent records) the quantile coupling, worst case over ``pairs``.
        W is in the L1 norm over the d statistics.
        """
        d = self.d
        candidates: dict[MethodStep, float] = {}
        swap = 0.0
        for a, b in pairs:
            parts = [self._swap_bound(a, b, n, privacy, j, delta / d)
                     for j in range(d)]
            if any(p is None for p in parts):
                swap = math.inf
                break
            swap = max(swap, sum(parts))
        if math.isfinite(swap):
            candidates[MethodStep.of("coupling.swap")] = swap
        tail = delta / (4 * d)
        values = sorted({v for pair in pairs for v in pair})
        bounds = {a: [self.tail_bounds(a, n, privacy, tail, j) for j in range(d)]
                  for a in values}
        box = max(sum(max(ua - lb, ub - la) for (la, ua), (lb, ub)
                      in zip(bounds[a], bounds[b], strict=True))
                  for a, b in pairs)
        candidates[MethodStep.of("coupling.boxes", mass=2 * d * tail,
                                 faces="chernoff")] = box
        if d == 1 and self.replace:
            ends = stats.norm.ppf([delta / 2, 1 - delta / 2])
            levels = stats.norm.cdf(np.linspace(*ends, _LEVELS + 1))
            levels[[0, -1]] = delta / 2, 1 - delta / 2
            w = abs(float(np.broadcast_to(self.weight(n), (1,))[0]))
            q = {a: self._quantile_bounds(a, n, privacy, levels) for a in values}
            gap = max(float(np.max(np.maximum(q[a][1][1:] - q[b][0][:-1],
                                              q[b][1][1:] - q[a][0][:-1])))
                      for a, b in pairs)
            candidates[MethodStep.of(
                "coupling.quantile.moments",
                coupling=MethodStep.of("coupling.quantile", low=delta / 2))
            ] = w * gap
        how = min(candidates, key=candidates.get)
        return float(candidates[how]), how
