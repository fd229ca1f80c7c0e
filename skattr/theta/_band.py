"""Theta for the sum or mean of a bounded column: the reference's confidence bands."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skattr._certificate import Assumption
from skattr._persistence import persistable
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws._band import BandLaw, GroupBand
from skattr.laws._order_band import OrderBandLaw
from skattr.theta._box import ReferenceConfidence

__all__ = ["ConfidenceBand", "order_level"]


@persistable
@dataclass(frozen=True)
class ConfidenceBand(ReferenceConfidence):
    """Theta for a sum or mean: every group law the reference sample allows.

    The reference records are taken as a random sample of the population;
    each group's distribution function lies within the reference's
    confidence band (:class:`~skattr.laws._band.GroupBand`: the
    Dvoretzky-Kiefer-Wolfowitz band with Massart's constant, narrowed in the
    tails by the order statistics' Beta laws), all of them at once with
    probability at least ``confidence`` over the reference sample (each at
    1 - (1 - confidence) / 2k for the 2k groups of k secrets), and every
    value, clipped, in the clipping range (``bounds=``). It is the default
    Theta of a sum or mean (``theta="auto"``, at 0.999). ``apgm`` and the
    Wasserstein mechanisms certify the worst case over the bands through the
    swap coupling (``docs/population.md``), so the certificate holds for the
    population the reference came from, with that probability; the release
    records it. It needs a clipping range: a column with none has no bound
    that holds for the population.

    For one median or quantile of one column (also the default), the
    Wasserstein mechanisms certify the quantile coupling of its two laws,
    worst case over every pair of group laws in the bands, which then also
    bound the reference's spacings
    (:class:`~skattr.laws._order_band.OrderBandLaw`), for up to 10^7
    records; on small references the confidence set's width dominates
    (about 3x the population's distance at 300 records a group).

    Parameters
    ----------
    confidence : float, default=0.999
        The probability, over the reference sample, that the bands hold the
        population's distribution functions. It is not the certificate's
        delta (``docs/population.md`` says why).

    Examples
    --------
    >>> import numpy as np, pandas as pd, skattr
    >>> from skattr.theta import ConfidenceBand
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat([1, 0], 2000)
    >>> ref = pd.DataFrame({"g": g, "age": rng.normal(40 + 5 * g, 10)})
    >>> mech = skattr.mechanisms.AttributePrivateGaussian(
    ...     query=skattr.Query.mean(["age"]), bounds={"age": (0, 100)},
    ...     secret=skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)]),
    ...     theta=ConfidenceBand()).fit(ref)
    >>> plan = mech.plan(n=1000)
    >>> plan.assumes("reference.band")
    True
    """

    confidence: float = 0.999

    def fit_law(self, request):
        """Return the statistic's laws over the reference's confidence bands."""
        if "box" not in request.kinds:
            request.refuse("ConfidenceBand", "laws over confidence bands")
        level = order_level(request)
        if not request.summing() and level is None:
            raise InvalidParameterError(
                "ConfidenceBand covers the sum or mean of one column, or one "
                "median or quantile of one column; use ConfidenceBox for a "
                "count, theta=skattr.theta.Resample() for other statistics.")
        for s in request.secrets:
            if s.property != "proportion":
                raise InvalidParameterError(
                    f"The secret {s.label} protects a mean; ConfidenceBand "
                    "needs a proportion secret.")
        (column,) = request.columns
        ranges = {c: (lo, hi) for c, lo, hi in request.ranges}
        if column not in ranges:
            what = "sum" if level is None else "quantile"
            raise NotCertifiableError(
                f"The column {column!r} has no clipping range, so no bound on "
                f"its {what} holds for the population (a value the reference "
                "never shows may be any size). Declare one with bounds={"
                f"{column!r}: (low, high)}} or bounds='reference'.")
        low, high = (float(v) for v in ranges[column])
        reference, insides = self.groups(request)
        if level is None:
            values = reference.records()[:, 0].astype(float)
        else:
            values = request.query.prepare(reference.frame, request.columns,
                                           what="the reference data")[:, 0]
        values = np.clip(values, low, high)
        # Every group of every secret at once (Bonferroni over 2 a secret).
        alpha = (1 - self.confidence) / (2 * len(insides))
        # An order statistic's bands also bound the spacings (half of each
        # group's alpha): an interval holding many records has mass.
        spacings = level is not None
        bands = tuple((GroupBand.of(values[~inside], alpha, spacings=spacings),
                       GroupBand.of(values[inside], alpha, spacings=spacings))
                      for inside in insides)
        sizes = tuple((int((~inside).sum()), int(inside.sum()))
                      for inside in insides)
        radii = "; ".join(
            f"+-{out.radius:.4g} outside the group ({o} records), "
            f"+-{inside.radius:.4g} inside ({i})"
            for (out, inside), (o, i) in zip(bands, sizes, strict=True))
        common = dict(
            bands=bands, low=low, high=high,
            secrets=tuple(request.secrets), query=request.query,
            description=(f"every group law within the reference's simultaneous "
                         f"{self.confidence:g} bands (Dvoretzky-Kiefer-Wolfowitz, "
                         f"narrower in the tails"
                         + (", with the spacings' floors" if spacings else "")
                         + f"): {radii}, values in [{low:g}, {high:g}]"),
            assumptions=(Assumption.of("reference.band",
                                       confidence=self.confidence),),
            reference_sizes=sizes)
        if level is None:
            return BandLaw(**common)
        return OrderBandLaw(level=level, **common)


def order_level(request) -> float | None:
    """Return the level of the one median or quantile of one column, or None."""
    query = request.query
    statistic = getattr(query, "statistic", None)
    if statistic not in ("median", "quantile") or len(request.columns) != 1:
        return None
    levels = (0.5,) if statistic == "median" else tuple(query.q)
    return float(levels[0]) if len(levels) == 1 else None
