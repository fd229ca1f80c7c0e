"""Couplings of the resampling model's laws: W for the Wasserstein mechanisms.

:class:`ResamplingLaw` holds one :class:`~skattr.laws._resampled.ResampledLaws`
per secret (the laws of any statistic over datasets of reference records)
and bounds the distance between the laws of every pair, in this order of
tightness:

- exact laws (every dataset of the model enumerated): the infinity
  Wasserstein distance, or the least (W, delta)-closeness, exactly
  (:mod:`skattr.wasserstein`);
- a median or quantiles: the exact laws of the order statistics that make up
  each value (:mod:`skattr.laws._order`), read through the quantile coupling
  (one value) or boxes with exact tails (several); no draws;
- a mean, sum, count or proportion: moment bounds
  (:mod:`skattr.laws._moment_bounds`); no draws;
- otherwise drawn laws: order statistics of i.i.d. draws bound a box (or the
  quantile function) of each law, the chance they fail counted in delta
  (Chen and Ohrimenko's remark after Thm 3.2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from scipy import stats

from skattr._certificate import Assumption, MethodStep
from skattr._persistence import persistable
from skattr.exceptions import NotCertifiableError
from skattr.laws._base import Bound, StatisticLaw, secret_pairs
from skattr.laws._draws import law_of, quantile_bounds, tail_bounds
from skattr.laws._resampled import coupled_values
from skattr.utils._progress import progress_bar
from skattr.wasserstein import w_infinity, wd_closeness

__all__ = ["MAX_EXACT_POINTS", "ResamplingLaw", "joint_closeness"]

# Quantile levels (less one) at which a one-dimensional law drawn by the
# resampling Theta is bounded: finer grids cost more bounds in the union.
_BAND_LEVELS = 64

#: Most distinct values of an exact law of several statistics whose distances
#: are computed exactly (a linear program over every pair of values in R^d).
MAX_EXACT_POINTS = 300

# Records the draws of a linear statistic may hold in all before the moment
# bounds replace them (Resample(moment_bounds="auto")): about five seconds.
_DRAWN_RECORDS = 50_000_000

# The same for (W, delta)-closeness on the line (a search over the pairwise
# distances of the two supports).
_MAX_LINE_POINTS = 3000


def _small_enough(law, *, closeness: bool = False) -> bool:
    """Whether an exact law exists and its distances can be computed exactly.

    On the line W_inf is fast at any size, while (W, delta)-closeness searches
    over every pairwise distance; in R^d both are a flow over every pair of
    support points.
    """
    if law is None:
        return False
    size, dims = law[0].shape
    if dims == 1:
        return not closeness or size <= _MAX_LINE_POINTS
    return size <= MAX_EXACT_POINTS


def _points(support: np.ndarray) -> np.ndarray:
    """Support points as the distance functions read them: 1-d on the line."""
    return support[:, 0] if support.shape[1] == 1 else support


@persistable
@dataclass(frozen=True, eq=False)
class ResamplingLaw(StatisticLaw):
    """The laws of a statistic over datasets drawn from the reference records.

    Attributes
    ----------
    laws : tuple of ResampledLaws
        Per secret, the fitted resampling model
        (:meth:`skattr.theta.Resample.fit`).
    secrets : tuple of Secret
    d : int
        Values the statistic releases.
    """

    kind: ClassVar[str] = "resampling"

    laws: tuple
    secrets: tuple
    d: int
    description: str = ""
    assumptions: tuple = ()
    reads_reference: bool = True
    states_law: bool = False
    reference_sizes: tuple | None = None
    source: object = field(default=None, repr=False, compare=False)

    @property
    def records_iid(self) -> bool:
        return bool(self.laws[0].replace)

    def _assumption(self, privacy: str) -> tuple:
        return (Assumption.of("resampling-model", privacy=privacy),)

    def _pairs(self, secret, n: int, privacy: str) -> list:
        return secret_pairs(secret, n, privacy)

    # ---------------------------------------------------------- order laws
    def _order_laws(self, privacy: str):
        """Return the exact order-statistic laws of every secret, or None."""
        found = [laws.order for laws in self.laws]
        if all(o is not None and o.supports(privacy) for o in found):
            return found
        return None

    def _ordered_gap(self, n: int, privacy: str, low: float, high: float
                     ) -> float:
        """Bound sup |Q_a - Q_b| over [low, high] of a quantile, every pair."""
        return max(order.gap(0, a, b, n, privacy, low, high)
                   for s, order in zip(self.secrets, self._order_laws(privacy),
                                       strict=True)
                   for a, b in self._pairs(s, n, privacy))

    def _order_method(self, privacy: str) -> MethodStep:
        order = self._order_laws(privacy)[0]
        return MethodStep.of(
            "laws.order-statistics",
            counts="binomial" if order.replace else "hypergeometric")

    # -------------------------------------------------------------- W_inf
    def _exact_w_infinity(self, n: int, privacy: str
                          ) -> tuple[float | None, MethodStep | str]:
        """W_inf of the exact resampling laws and the laws read, or None and why not.

        On success the step's text completes "W the infinity-Wasserstein
        distance between ..."; on failure the reason is a sentence.
        """
        worst = 0.0
        for s, laws in zip(self.secrets, self.laws, strict=True):
            for pair in self._pairs(s, n, privacy):
                exact = [laws.exact_law(a, n, privacy) for a in pair]
                if any(law is None for law in exact):
                    if self._order_laws(privacy) is not None and self.d == 1:
                        # A bound: the laws' extremes below and above 1e-8.
                        return (self._ordered_gap(n, privacy, 0.0, 1.0),
                                MethodStep.of("upper-bound",
                                              laws=self._order_method(privacy)))
                    return None, (
                        "A function sees the records in a random order, so its "
                        "law spans every ordering" if laws.ordered else
                        "The resampling Theta spreads each law over more than "
                        f"max_exact = {laws.max_exact} datasets (raise "
                        "Resample(max_exact=...) to enumerate more)")
                if not all(_small_enough(law) for law in exact):
                    return None, (
                        f"The exact laws take more than {MAX_EXACT_POINTS} "
                        "distinct values, too many for an exact distance in "
                        "R^d (a flow over every pair of values)")
                (xa, pa), (xb, pb) = exact
                worst = max(worst, w_infinity(_points(xa), _points(xb), pa, pb))
        return worst, MethodStep.of("laws.resampling")

    def w_infinity(self, n: int, privacy: str) -> Bound:
        worst, how = self._exact_w_infinity(n, privacy)
        if worst is None:
            raise NotCertifiableError(
                f"{how}; an infinity-Wasserstein distance cannot be certified "
                "from draws (it depends on the rarest datasets). Use "
                "mechanism='approx-wasserstein' with delta > 0.")
        return Bound(worst, MethodStep.of("w-inf", laws=how),
                     self._assumption(privacy))

    # ---------------------------------------------------------- closeness
    def _ordered_closeness(self, n: int, privacy: str, delta: float) -> Bound:
        """W from the exact laws of a median or quantiles: no draws, no beta.

        One value: the quantile coupling over the levels [delta/2, 1 -
        delta/2]. Several: a box per law holding all but delta/2 of it, each
        face at an exact tail of mass delta / (4 d) (Chen's remark after Thm
        3.2).
        """
        d = self.d
        if d == 1:
            low = delta / 2
            worst = self._ordered_gap(n, privacy, low, 1 - low)
            how = MethodStep.of("coupling.quantile", low=low)
        else:
            tail = delta / (4 * d)
            worst = 0.0
            for s, order in zip(self.secrets, self._order_laws(privacy),
                                strict=True):
                for a, b in self._pairs(s, n, privacy):
                    gap = 0.0
                    for j in range(d):
                        la, ua = order.tail_bounds(j, a, n, privacy, tail)
                        lb, ub = order.tail_bounds(j, b, n, privacy, tail)
                        gap += max(ua - lb, ub - la)
                    worst = max(worst, gap)
            how = MethodStep.of("coupling.boxes", mass=2 * d * tail,
                                faces="exact")
        return Bound(worst, MethodStep.of(
            "closeness.order-statistics", coupling=how,
            laws=self._order_method(privacy), delta=delta),
            self._assumption(privacy))

    def _moment_closeness(self, n: int, privacy: str, values,
                          delta: float) -> Bound:
        """W of a mean, sum, count or proportion from moment bounds: no draws."""
        worst, how = 0.0, None
        for laws, pairs, _ in values:
            w, found = laws.moments.closeness(pairs, n, privacy, delta)
            if w >= worst:
                worst, how = w, found
        return Bound(worst, MethodStep.of("closeness.moments", coupling=how,
                                          delta=delta),
                     self._assumption(privacy))

    def closeness(self, n: int, privacy: str, delta: float, *,
                  progress=False, label: str = "") -> Bound:
        values = []
        for s, laws in zip(self.secrets, self.laws, strict=True):
            pairs = self._pairs(s, n, privacy)
            values.append((laws, pairs, sorted({a for pair in pairs for a in pair})))
        assumed = self._assumption(privacy)
        if all(_small_enough(laws.exact_law(a, n, privacy), closeness=True)
               for laws, _, points in values for a in points):
            worst = 0.0
            for laws, pairs, _ in values:
                for pair in pairs:
                    (xa, pa), (xb, pb) = (laws.exact_law(a, n, privacy)
                                          for a in pair)
                    worst = max(worst, wd_closeness(_points(xa), _points(xb),
                                                    delta, pa, pb))
            return Bound(worst, MethodStep.of(
                "closeness.exact", laws=MethodStep.of("laws.resampling")),
                assumed)
        d = self.d
        if self._order_laws(privacy) is not None:
            return self._ordered_closeness(n, privacy, delta)
        moments = all(laws.moments is not None for laws, _, _ in values)
        if moments and any(laws.moments.always for laws, _, _ in values):
            return self._moment_closeness(n, privacy, values, delta)
        n_values = sum(len(points) for _, _, points in values)
        # Every secret's laws come from the same Resample: one budget.
        share = values[0][0].failure_share
        disregarded, beta = (1 - share) * delta, share * delta
        if d == 1:
            # The quantile coupling, all but disregarded/2 of each tail kept:
            # W <= sup |Q_a(u) - Q_b(u)| over those levels, bounded between
            # grid levels by monotonicity of Q. The grid is even in probit
            # scale so the tails, where Q moves fast, are covered finely.
            ends = stats.norm.ppf([disregarded / 2, 1 - disregarded / 2])
            levels = stats.norm.cdf(np.linspace(*ends, _BAND_LEVELS + 1))
            levels[[0, -1]] = disregarded / 2, 1 - disregarded / 2
            failure = beta / (2 * levels.size * n_values)
            tail = disregarded / 2
        else:
            # A box per law holding all but disregarded/2 of it, split over
            # its 2 d faces (Chen's remark after Thm 3.2).
            levels = None
            failure = beta / (2 * d * n_values)
            tail = disregarded / (4 * d)
        m = values[0][0].draws_needed(tail, failure)
        if moments and m * n * n_values > _DRAWN_RECORDS:
            # Draws this large take minutes: the moment bounds take
            # milliseconds.
            return self._moment_closeness(n, privacy, values, delta)
        worst = 0.0
        bar = progress_bar(progress, total=m * n_values, unit="dataset",
                           desc=f"{label}: datasets drawn" if label
                           else "datasets drawn")
        for laws, pairs, points in values:
            bounds = {}
            for a in points:
                draws = laws.drawn_law(a, n, privacy, m, bar=bar)
                bounds[a] = (quantile_bounds(draws, levels, failure)
                             if d == 1 else tail_bounds(draws, tail, failure))
            for a, b in pairs:
                (la, ua), (lb, ub) = bounds[a], bounds[b]
                if d == 1:
                    gap = np.maximum(ua[1:] - lb[:-1], ub[1:] - la[:-1]).max()
                else:
                    gap = np.maximum(ua - lb, ub - la).sum()
                worst = max(worst, float(gap))
        bar.close()
        how = (MethodStep.of(
            "coupling.quantile.drawn",
            coupling=MethodStep.of("coupling.quantile", low=disregarded / 2),
            levels=_BAND_LEVELS + 1) if d == 1 else
            MethodStep.of("coupling.boxes", mass=2 * d * tail, faces="drawn"))
        method = MethodStep.of("closeness.drawn", coupling=how, draws=m,
                               delta=disregarded, beta=beta)
        if moments:
            # The moment bounds at the drawn bound's disregarded mass: the
            # least of two bounds valid at (disregarded, beta) is valid.
            bound = self._moment_closeness(n, privacy, values, disregarded)
            if bound.value < worst:
                worst, method = bound.value, MethodStep.of(
                    "draws.unused", bound=bound.how, beta=beta)
        exact, how = self._exact_w_infinity(n, privacy)
        if exact is not None and exact < worst:
            # Exact laws too large for closeness still give W_inf, which
            # certifies any delta: the least of two valid bounds is valid
            # (the draws' failure can only matter when theirs is used).
            worst, method = exact, MethodStep.of("closeness.w-inf", laws=how)
        return Bound(worst, method, assumed)


def joint_closeness(laws: list, weights: list, pairs: list, n: int,
                    privacy: str, delta: float) -> float:
    """Return the (W, delta)-closeness of several statistics' joint laws.

    Releases Y_j = F_c(j)(D) + L_j, F_c the distinct statistics (values in
    R^d_c, their resampling laws ``laws`` of one reference, secret and seed),
    L_j independent Laplace noise of scale b_j on each value. For datasets D
    and D', the density of Y changes by at most a factor exp(Z),
    Z = sum_c w_c ||F_c(D) - F_c(D')||_1 with ``weights`` w_c = sum of 1 / b_j
    over the releases of F_c. If a coupling of the datasets given the two
    values of a pair puts mass at least 1 - delta on Z <= W, then
    P(Y in S | a) <= e^W P(Y in S | b) + delta for every S (integrate the
    density bound over the coupling, as in Chen and Ohrimenko Thm 3.2): the
    joint release is (W, delta)-private, W the (W, delta)-closeness of the
    stacked statistic's joint laws in the noises' metric. It is computed

    - exactly, when the model's datasets are few enough to enumerate: the
      joint laws of the stacked statistic on every dataset, and
      :func:`~skattr.wasserstein.wd_closeness` in R^d;
    - otherwise from one explicit coupling: a pair of datasets that share all
      but their difference in group records
      (:func:`~skattr.laws._draws.coupled_subsets`), every statistic
      evaluated on the same pairs; an order statistic of m draws of Z bounds
      its (1 - delta')-quantile except with chance beta per pair (delta =
      delta' + beta, beta the Resample's failure_share of it).
    """
    exact = _joint_exact(laws, weights, pairs, n, privacy, delta)
    if exact is not None:
        return exact
    share = laws[0].failure_share
    disregarded, beta = (1 - share) * delta, share * delta
    failure = beta / len(pairs)
    m = max(law.draws_needed(disregarded, failure) for law in laws)
    worst = 0.0
    for a, b in pairs:
        z = np.zeros(m)
        drawn = coupled_values(laws, a, b, n, privacy, m)
        for (va, vb), weight in zip(drawn, weights, strict=True):
            moved = np.abs(va - vb).sum(axis=1)
            # A value released without noise (weight inf) may not move.
            z += np.multiply(moved, weight, out=np.zeros(m),
                             where=moved > 0)
        _, upper = quantile_bounds(z[:, None], [1 - disregarded], failure)
        worst = max(worst, float(upper[0, 0]))
    return worst


def _joint_exact(laws, weights, pairs, n, privacy, delta) -> float | None:
    """Return the exact joint (W, delta)-closeness, or None if not enumerable."""
    if any(math.isinf(w) for w in weights):
        return None                 # a value without noise: draw
    worst = 0.0
    for pair in pairs:
        sides = []
        for value in pair:
            found = [law.exact_values(value, n, privacy) for law in laws]
            if any(f is None for f in found):
                return None
            # Scaled so that the L1 distance is the noises' metric.
            stacked = np.hstack([v * w for (v, _), w in
                                 zip(found, weights, strict=True)])
            support, mass = law_of(stacked, found[0][1], privacy)
            if support.shape[0] > MAX_EXACT_POINTS:
                return None
            sides.append((support, mass))
        (xa, pa), (xb, pb) = sides
        worst = max(worst, wd_closeness(xa, xb, delta, pa, pb))
    # The values were scaled in floating point: a relative rounding.
    return worst * (1 + 1e-12)
