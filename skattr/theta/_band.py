"""Theta for the sum or mean of a bounded column: the reference's confidence bands."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skattr._certificate import Assumption
from skattr._data import numeric_values, record_contributions, secret_indicator
from skattr._kinds import law_builder, query_kind
from skattr._persistence import persistable
from skattr._query import Query, StackedQuery
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws._band import GroupBand
from skattr.laws._joint_band import JointBandLaw, one_column_orders
from skattr.theta._box import ReferenceConfidence

__all__ = ["ConfidenceBand", "band_coordinates", "banded_by_default",
           "column_coupled", "joint_statistics", "order_outputs",
           "records_coupled",
           "several_statistics_law", "stacked_statistics"]

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

    Several medians, quantiles or stds at once (quartiles, or the medians of
    several columns; also the default, for the Wasserstein mechanisms and
    apgm) are bounded together through the independent coupling of the
    moved records (:class:`~skattr.laws._joint_band.JointBandLaw`): each
    value at delta / K with its own Laplace scale, or each value's law of
    its move, for Gaussian noise certified jointly (apgm, which takes that
    law for one such value too).

    For one median or quantile of one column (also the default), the
    Wasserstein mechanisms certify the quantile coupling of its two laws,
    worst case over every pair of group laws in the bands, which then also
    bound the reference's spacings
    (:class:`~skattr.laws._order_band.OrderBandLaw`), for up to 10^7
    records; on small references the confidence set's width dominates
    (about 3x the population's distance at 300 records a group).

    One value of another kind of statistic takes the band law its kind
    registered (family ``"band"``, :func:`skattr._kinds.law_builder`): a
    trimmed mean's is the mean's, weighted 1 / (n - 2g)
    (:mod:`skattr.laws._trimmed_band`).

    Parameters
    ----------
    confidence : float, default=0.999
        The probability, over the reference sample, that the bands hold the
        population's distribution functions. It is not the certificate's
        delta (``docs/population.md`` says why).
    coupling : {"column", "records"}, default="column"
        How one sum or mean is certified: ``"column"`` through its one
        column's comonotone coupling (one uniform per moved record: the
        tightest for the statistic alone); ``"records"`` through the
        coupling of whole records that a ledger composes its releases under
        (the shared records kept, each moved record's two rows independent:
        :class:`~skattr.laws._joint_band.JointBandLaw`), on the same bands.
        Pufferfish certificates compose only under one coupling, so a
        ledger plans its releases of sums and means under ``"records"``
        (``docs/many_releases.rst``).

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
    coupling: str = "column"

    law_kinds = ("box", "bands")

    def __post_init__(self):
        super().__post_init__()
        if self.coupling not in ("column", "records"):
            raise InvalidParameterError(
                "ConfidenceBand(coupling=...) is 'column' (one column's "
                "coupling, the default) or 'records' (the coupling of whole "
                f"records a ledger composes under); got {self.coupling!r}.")

    def fit_law(self, request):
        """Return the statistic's laws over the reference's confidence bands."""
        if stacked_statistics(request) is not None:
            return self._stacked_law(request)
        if self.coupling == "records" and records_coupled(request.query):
            # One value under the records' coupling, on the same bands as
            # its law alone: a sum's or mean's stacked law, a median's or
            # quantile's one-column joint law (the spacings' floors kept).
            query = request.query
            if query_kind(query).linear:
                return self._stacked_law(request, [(query, query.columns[0])])
            return self._joint_law(request, order_outputs(query, 1))
        if joint_statistics(request) is not None:
            return self._joint_law(request)
        if "box" not in request.kinds:
            # One median, quantile or std asked by a mechanism that calibrates
            # several values' bands only (apgm): their joint law of one value.
            if _bands_alone(request):
                return self._joint_law(request, order_outputs(
                    request.query, len(request.columns)))
            request.refuse("ConfidenceBand", "laws over confidence bands")
        # One value of one column: the law its kind registered (the "band"
        # family: skattr.laws' BandLaw, StdBandLaw, OrderBandLaw, ...).
        kind = query_kind(request.query)
        build = law_builder("band", kind)
        if build is None or not _one_value(request, kind):
            raise InvalidParameterError(
                "ConfidenceBand covers the sum, mean or trimmed mean of one "
                "column, several sums, means and counts at once, medians, "
                "quantiles or stds (several at once for the Wasserstein "
                "mechanisms and apgm); use "
                "ConfidenceBox for one count, theta=skattr.theta.Resample() "
                "for other statistics (the reference taken as the population, "
                "recorded).")
        _check_proportions(request)
        (column,) = request.columns
        low, high = _clipping_range(request, column, kind.bounded_as)
        reference, insides = self.groups(request)
        if kind.linear:
            values = reference.records()[:, 0].astype(float)
        else:
            values = request.query.prepare(reference.frame, request.columns,
                                           what="the reference data")[:, 0]
        values = np.clip(values, low, high)
        # Every group of every secret at once (Bonferroni over 2 a secret).
        alpha = (1 - self.confidence) / (2 * len(insides))
        # An order statistic's bands also bound the spacings (half of each
        # group's alpha): an interval holding many records has mass.
        spacings = kind.band_spacings()
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
        return build(request.query, common)

    def _stacked_law(self, request, outputs=None):
        """Several sums, means and counts: one band per statistic and group."""
        _check_several(request)
        outputs = outputs or stacked_statistics(request)
        ranges = [(0.0, 1.0) if part.kind.counts
                  else _clipping_range(request, column, part.statistic)
                  for part, column in outputs]
        reference, insides = self.groups(request)
        values = reference.records().astype(float)
        # Each value a sum coordinate of its own band (a mean or proportion
        # weighted 1 / n), as its kind says.
        coordinates = [part.kind.band_coordinates(part, 1)[0][1:]
                       for part, _ in outputs]
        return JointBandLaw(
            outputs=tuple((j, *coordinate)
                          for j, coordinate in enumerate(coordinates)),
            **self._per_column(request, insides, values, ranges,
                               _each(len(outputs), "statistic"),
                               spacings=False))

    def _joint_law(self, request, outputs=None):
        """Several medians, quantiles or stds: one band per column and group."""
        _check_several(request)
        outputs = outputs or joint_statistics(request)
        kind = request.query.kind
        ranges = [_clipping_range(request, column, kind.bounded_as)
                  for column in request.columns]
        reference, insides = self.groups(request)
        values = request.query.prepare(reference.frame, request.columns,
                                       what="the reference data")
        # A quantile's bands also bound the spacings (half of each group's
        # alpha): an interval holding many records has mass.
        outputs = tuple(outputs)
        # Medians and quantiles of one column alone: each moved record's two
        # values coupled by one uniform (that column's coupling); a ledger's
        # releases keep the records' coupling they are composed under.
        one_uniform = (self.coupling == "column"
                       and one_column_orders(outputs))
        return JointBandLaw(outputs=outputs, one_uniform=one_uniform,
                            **self._per_column(
            request, insides, values, ranges, _each(len(ranges), "column"),
            spacings=kind.band_spacings()))

    def _per_column(self, request, insides, values, ranges, what: str, *,
                    spacings: bool) -> dict:
        """Return a per-column bands law's fields: every group of each column.

        ``values`` holds the reference's records' values, one column per
        band (clipped to ``ranges`` here); every group of every column and
        secret at once, each band at alpha / 2 k K.
        """
        values = np.column_stack([np.clip(v, lo, hi) for v, (lo, hi) in zip(
            np.asarray(values, dtype=float).T, ranges, strict=True)])
        alpha = (1 - self.confidence) / (2 * len(insides) * len(ranges))
        bands = tuple(tuple((GroupBand.of(column[~inside], alpha,
                                          spacings=spacings),
                             GroupBand.of(column[inside], alpha,
                                          spacings=spacings))
                            for column in values.T)
                      for inside in insides)
        sizes = tuple((int((~inside).sum()), int(inside.sum()))
                      for inside in insides)
        radii = "; ".join(f"+-{max(b.radius for pair in per for b in pair):.4g}"
                          f" at most ({o} records outside the group, {i} in it)"
                          for per, (o, i) in zip(bands, sizes, strict=True))
        return dict(
            bands=bands, low=tuple(lo for lo, _ in ranges),
            high=tuple(hi for _, hi in ranges), secrets=tuple(request.secrets),
            query=request.query,
            description=(f"every group law of {what} within the "
                         f"reference's simultaneous {self.confidence:g} bands "
                         "(Dvoretzky-Kiefer-Wolfowitz, narrower in the tails"
                         + (", with the spacings' floors" if spacings else "")
                         + f"): {radii}; values in their clipping ranges"),
            assumptions=(Assumption.of("reference.band",
                                       confidence=self.confidence),),
            reference_sizes=sizes)


def _each(count: int, noun: str) -> str:
    """Return 'the column' or 'each of the 3 columns' (a law's description)."""
    return f"the {noun}" if count == 1 else f"each of the {count} {noun}s"


def banded_by_default(request) -> bool:
    """Whether the default Theta takes the request's law over the confidence bands.

    The kind decides for one value of one column: one whose kind registered
    a band law (family ``"band"``, :func:`skattr._kinds.law_builder`), for
    the mechanisms its kind names
    (:attr:`~skattr._kinds.StatisticKind.default_band_for`: a sum's, mean's,
    median's or quantile's for every mechanism; a std's, a trimmed mean's or
    a new kind's for the Wasserstein mechanisms). Several sums, means and
    counts, or several medians, quantiles or stds, for the mechanisms that
    calibrate several values' bands (``"bands"``). Every secret hiding a
    proportion.
    """
    if not all(secret.property == "proportion" for secret in request.secrets):
        return False
    kind = query_kind(request.query)
    if (kind is not None and law_builder("band", kind) is not None
            and _one_value(request, kind)):
        calibrations = kind.default_band_for
        if calibrations is None or any(k in request.kinds
                                       for k in calibrations):
            return True
    return "bands" in request.kinds and (
        stacked_statistics(request) is not None
        or joint_statistics(request) is not None
        or _bands_alone(request))


def _bands_alone(request) -> bool:
    """Whether one median, quantile or std is asked as several values' bands.

    A mechanism that calibrates the joint law of several values over the
    bands and no one value's law (apgm's Gaussian noise on order statistics
    and stds: ``"bands"`` asked, ``"box"`` not) takes that law for one value
    too: the joint certificate of one value.
    """
    return ("bands" in request.kinds and "box" not in request.kinds
            and request.columns is not None
            and order_outputs(request.query, len(request.columns)) is not None)


def _one_value(request, kind) -> bool:
    """Whether the request is for one value of one column (of ``kind``)."""
    # A linear query names its one column itself (a count, sum or mean).
    columns = request.query.columns if kind.linear else request.columns
    return (columns is not None and len(columns) == 1
            and kind.outputs_per_column(request.query) == 1)


def records_coupled(query, columns=None) -> bool:
    """Whether ``ConfidenceBand(coupling="records")`` changes ``query``'s law.

    One sum or mean, or one median or quantile, of one named column (its
    kind says) is planned under the records' coupling; other statistics
    keep their law. ``columns``: the columns the query reads, when it names
    none itself (every column but the secret's).
    """
    kind = query_kind(query)
    if columns is None:
        columns = getattr(query, "columns", None)
    if (kind is None or isinstance(query, StackedQuery) or columns is None
            or len(columns) != 1):
        return False
    if kind.linear:
        return not kind.counts
    return (kind.band_spacings()
            and len(order_outputs(query, 1) or ()) == 1)


def column_coupled(query, columns=None) -> bool:
    """Whether ``ConfidenceBand()`` couples ``query``'s moved records by one uniform.

    Medians and quantiles of one column, at one level or several
    (:class:`~skattr.laws._joint_band.JointBandLaw`'s ``one_uniform``, when
    a mechanism asks for their joint law): a coupling of that column only,
    which a ledger, composing every release under the records' coupling,
    replaces by ``ConfidenceBand(coupling="records")``. ``columns``: the
    columns the query reads, when it names none itself.
    """
    if columns is None:
        columns = getattr(query, "columns", None)
    return (not isinstance(query, StackedQuery) and columns is not None
            and len(columns) == 1
            and one_column_orders(order_outputs(query, 1)))


def _check_several(request) -> None:
    """Refuse several statistics' bands to a mechanism that cannot read them."""
    if "bands" not in request.kinds:
        request.refuse("ConfidenceBand", "several statistics' laws over "
                       "confidence bands, which the Wasserstein mechanisms "
                       "calibrate")
    _check_proportions(request)


def _check_proportions(request) -> None:
    for secret in request.secrets:
        if secret.property != "proportion":
            raise InvalidParameterError(
                f"The secret {secret.label} protects a mean; ConfidenceBand "
                "needs a proportion secret.")


def _clipping_range(request, column, what: str) -> tuple[float, float]:
    """Return the column's clipping range, or refuse: no bound holds without."""
    ranges = {c: (lo, hi) for c, lo, hi in request.ranges}
    if column not in ranges:
        raise NotCertifiableError(
            f"The column {column!r} has no clipping range, so no bound on "
            f"its {what} holds for the population (a value the reference "
            "never shows may be any size). Declare one with bounds={"
            f"{column!r}: (low, high)}} or bounds='reference'.")
    return tuple(float(v) for v in ranges[column])


def stacked_statistics(request) -> list[tuple[Query, object]] | None:
    """Return (query, column) per value of several sums, means and counts.

    None for one statistic, or another kind of statistic.
    """
    query = request.query
    parts = (query.parts if isinstance(query, StackedQuery)
             else (query,) if isinstance(query, Query) else ())
    if not parts or any(p.columns is None for p in parts):
        return None
    outputs = [(p, c) for p in parts for c in p.columns]
    return outputs if len(outputs) > 1 else None


def joint_statistics(request) -> list[tuple[int, str, float]] | None:
    """Return (column index, kind, parameter) per value of several quantiles or stds.

    Medians and quantiles ("order", the level) or stds ("spread", the ddof)
    of one or more columns, in the order the statistic releases them (a
    column's levels side by side); None for one value, or another statistic.
    """
    outputs = order_outputs(request.query, len(request.columns))
    return outputs if outputs is not None and len(outputs) > 1 else None


def order_outputs(query, columns: int) -> list[tuple[int, str, float]] | None:
    """Return (column index, kind, parameter) per value of quantiles or stds.

    In the order the statistic releases them (a column's levels side by
    side); None for another statistic.
    """
    kind = query_kind(query)
    if kind is None or kind.band_summed():
        return None
    return kind.band_coordinates(query, columns)


def band_coordinates(query, columns, ranges: dict) -> list | None:
    """Return each value of a statistic as a band law's coordinate, or None.

    A coordinate is ``(source, range, kind, parameter)``: the source of its
    per-record values (("values", column) or ("indicator", column, value)),
    their range, and the kind of coordinate (:class:`~skattr.laws.
    _joint_band.JointBandLaw`'s: "linear" or "monotone" with the statistic,
    "order" at a level, "spread" with a ddof), in the order the statistic
    releases them. None for a statistic the bands do not bound (a
    regression, a function) or a column with no clipping range.
    """
    parts = (query.parts if isinstance(query, StackedQuery)
             else (query,) if isinstance(query, Query) else None)
    found = []
    if parts is not None:
        for part in parts:
            cols = part.columns if part.columns is not None else columns
            coordinates = part.kind.band_coordinates(part, len(cols))
            for c, (_, kind, parameter) in zip(cols, coordinates, strict=True):
                if part.kind.counts:
                    found.append((("indicator", c, part.value), (0.0, 1.0),
                                  kind, parameter))
                elif c in ranges:
                    found.append((("values", c), ranges[c], kind, parameter))
                else:
                    return None
        return found
    kind = query_kind(query)
    outputs = (None if kind is None
               else kind.band_coordinates(query, len(columns)))
    if outputs is None or any(c not in ranges for c in columns):
        return None
    return [(("values", columns[c]), ranges[columns[c]], kind, parameter)
            for c, kind, parameter in outputs]


def several_statistics_law(frame, statistics, secret, *,
                           confidence: float = 0.999):
    """Return one band law over several statistics' values, and each one's.

    ``statistics`` is a list of ``(query, columns, ranges)``, every one
    bounded by the bands (:func:`band_coordinates`); the law's coordinates
    are all their values, one band per source of values and group (each at
    alpha / 2 S for S sources, so all hold at once with probability at
    least ``confidence``), under the one independent coupling of the moved
    records. Returns the :class:`~skattr.laws._joint_band.JointBandLaw` and,
    per statistic, the indices of its values among the coordinates.
    """
    if secret.property != "proportion":
        raise InvalidParameterError(
            f"The secret {secret.label} protects a mean; the bands' joint law "
            "needs a proportion secret.")
    sources, ranges, outputs, slices = {}, [], [], []
    # The sources an order statistic reads: their bands bound the spacings.
    read = set()
    for query, columns, declared in statistics:
        coordinates = band_coordinates(query, columns, declared)
        if coordinates is None:
            raise NotCertifiableError(
                f"The {query.statistic} has no bound over the reference's "
                "confidence bands jointly with other statistics (or a column "
                "has no clipping range); its joint law with them is not "
                "bounded for the population.")
        mine = []
        kind = query_kind(query)
        spaced = kind is not None and kind.band_spacings()
        for source, span, coordinate, parameter in coordinates:
            key = (repr(source), tuple(float(v) for v in span))
            if key not in sources:
                sources[key] = (len(sources), source)
                ranges.append(tuple(float(v) for v in span))
            mine.append(len(outputs))
            outputs.append((sources[key][0], coordinate, parameter))
            if spaced:
                read.add(sources[key][0])
        slices.append(np.array(mine, dtype=int))
    inside = secret_indicator(frame, secret) == 1
    if min(int(inside.sum()), int((~inside).sum())) < 2:
        raise NotCertifiableError(
            f"The reference data has fewer than two records on one side of "
            f"the secret {secret.label}; no band can be drawn.")
    values = []
    for _, source in sorted(sources.values(), key=lambda v: v[0]):
        if source[0] == "indicator":
            counted = Query.count([source[1]], source[2])
            values.append(record_contributions(frame, counted,
                                               (source[1],))[:, 0])
        else:
            values.append(numeric_values(frame, [source[1]],
                                         what="the reference data")[:, 0])
    values = np.column_stack([np.clip(np.asarray(v, dtype=float), lo, hi)
                              for v, (lo, hi) in zip(values, ranges,
                                                     strict=True)])
    alpha = (1 - confidence) / (2 * len(ranges))
    bands = (tuple((GroupBand.of(column[~inside], alpha, spacings=j in read),
                    GroupBand.of(column[inside], alpha, spacings=j in read))
                   for j, column in enumerate(values.T)),)
    law = JointBandLaw(
        bands=bands, low=tuple(lo for lo, _ in ranges),
        high=tuple(hi for _, hi in ranges), secrets=(secret,), query=None,
        outputs=tuple(outputs),
        description=(f"every group law of each of {len(ranges)} sources of "
                     f"values within the reference's simultaneous "
                     f"{confidence:g} bands"),
        assumptions=(Assumption.of("reference.band", confidence=confidence),),
        reference_sizes=((int((~inside).sum()), int(inside.sum())),))
    return law, slices

