"""What a kind of statistic is, the registry of kinds and of the laws built for them.

A statistic's kind is stored by name (``Query.statistic``, ``Statistic.statistic``:
what saved files hold); the code asks the kind, never the name. Each kind is a
small class, registered under its name when its module is imported
(:func:`register_kind`), and :func:`kind_of` derives it from the stored name.
A law that can be built for a kind registers its builder under the kind's
class and a family (:func:`register_law`): a Theta spec looks the builder up
(:func:`law_builder`) instead of comparing names.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar

__all__ = ["StatisticKind", "counts_records", "kind_of", "kinds", "law_builder",
           "query_kind", "register_kind", "register_law"]

#: Every registered kind, by the name a statistic stores.
_KINDS: dict[str, StatisticKind] = {}
#: Every law builder, by (family, kind class).
_LAWS: dict[tuple[str, type], Any] = {}


class StatisticKind:
    """One kind of statistic: what the code asks of it, in one place.

    Subclasses set the class attributes and override the methods their kind
    needs; one instance of each is registered (:func:`register_kind`).

    Attributes
    ----------
    name : str
        The name a statistic stores (and saved files hold), e.g. ``"mean"``.
    order : int
        Where the kind is listed among its family's names in messages.
    fields : tuple of str
        The fields of its statistic the kind reads beside ``columns``
        (``value`` for a count; ``q`` for quantiles; ``ddof`` for a std ...).
    linear : bool
        F(X) = w(n) sum_j h(x_j): a :class:`~skattr.Query` kind (mean, sum,
        count, proportion); else a :class:`~skattr.Statistic` kind.
    counts : bool
        Each record contributes the indicator of a value (0 or 1): a count or
        proportion, which takes ``value`` and needs no clipping range.
    averaged : bool
        Weighted 1 / n (a mean or a proportion) rather than 1.
    opaque : bool
        A Python callable: it may read the records' order, it runs once a
        subset, and its repr does not say what it computes.
    lazy_exact : str or None
        How a lazy backend (Dask) computes it exactly without collecting the
        rows: ``"sums"`` (column totals, one pass), ``"moments"`` (each
        column's moments, one pass), ``"order"`` (order statistics by
        histogram passes), or None (the statistic's rows are collected).
    bounded_as : str
        The word a clipping range's message uses for what it bounds.
    default_draws : int
        Datasets the resampling Theta draws by default.
    kernel : object or None
        How a :class:`~skattr.Statistic` of the kind is checked and computed
        on many row subsets at once (:mod:`skattr._kinds._kernels`); None
        for the linear kinds, which :class:`~skattr.Query` computes.
    verb : bool
        A verb of its own, with the columns (and ``value`` or ``q``) as its
        arguments: ``df.attrpriv.<name>``, ``ledger.<name>`` and the command
        line's ``--statistic``.
    aggregation : bool
        A pandas aggregation name ``agg`` takes (``df.attrpriv.agg("std")``).
    default_band_for : tuple of str or None
        The kinds of law a mechanism calibrates, one of which the default
        Theta (``theta="auto"``) needs to take this kind's band law (the
        ``"band"`` family, if one is registered) for one value of one
        column: by default ``("resampling",)``, the Wasserstein mechanisms,
        which calibrate a band law of any kind; None for every mechanism
        (the sums, means and order statistics: ``apgm`` calibrates their
        bands, and the others are told so).
    """

    name: ClassVar[str]
    order: ClassVar[int] = 100
    fields: ClassVar[tuple] = ()
    linear: ClassVar[bool] = False
    counts: ClassVar[bool] = False
    averaged: ClassVar[bool] = False
    opaque: ClassVar[bool] = False
    lazy_exact: ClassVar[str | None] = None
    bounded_as: ClassVar[str] = "statistic"
    default_draws: ClassVar[int] = 50_000
    kernel: ClassVar[Any] = None
    default_band_for: ClassVar[tuple[str, ...] | None] = ("resampling",)
    verb: ClassVar[bool] = False
    aggregation: ClassVar[bool] = False

    def weight(self, n: int) -> float:
        """w(n): 1 / n for an averaged kind, else 1."""
        return 1.0 / n if self.averaged else 1.0

    def takes_value(self) -> bool:
        """Whether the statistic reads ``value`` (the counted category)."""
        return "value" in self.fields

    def takes_levels(self) -> bool:
        """Whether the statistic reads ``q`` (the levels of its quantiles)."""
        return "q" in self.fields

    def outputs_per_column(self, stat) -> int | None:
        """Values released per column; None when not one set per column."""
        return None

    def n_outputs(self, stat, columns) -> int | None:
        """Values released on ``columns``: :meth:`outputs_per_column` each.

        None when not one set per column (a function's, unless named). The
        kernel reads it (:class:`~skattr._kinds._kernels.VectorisedKernel`).
        """
        per = self.outputs_per_column(stat)
        return None if per is None else per * len(columns)

    def output_range(self, stat, low: float, high: float,
                     n: int) -> tuple[float, float] | None:
        """Return the range of one released value of a column clipped to [low, high].

        None when nothing bounds it (a regression, a function): its released
        values are then not clamped.
        """
        return None

    def levels(self, stat) -> tuple | None:
        """Return the order statistics' levels (a median's 0.5); None for others."""
        return None

    def interpolate(self, below, above, t):
        """Combine the two order statistics around a level, as NumPy does."""
        raise NotImplementedError(f"The {self.name} is no order statistic.")

    def order_plan(self, stat, n: int) -> list | None:
        """Per level, the order statistics read on n values: (below, above, t).

        None for a kind that is no order statistic.
        """
        return None

    def record_weight(self, stat, n: int) -> float | None:
        """Return c(n): one record's value moving by d moves the statistic by c(n) d.

        At most, whatever the other records: the statistic's Lipschitz
        constant in each record, with which a band law sums the moved
        records' distances (:class:`~skattr.laws._band.BandLaw`). None when
        no such constant is known.
        """
        return None

    def min_rows(self, stat, columns=None) -> int:
        """Fewest rows the statistic is defined on (of ``columns``, else its own).

        The kernel reads it for the data and each subset
        (:class:`~skattr._kinds._kernels.VectorisedKernel`), a lazy backend
        and a band law for the data.
        """
        return 1

    def check_labels(self, columns) -> None:
        """Refuse the columns as given, in the kind's words (before any other check)."""

    def band_coordinates(self, stat, columns: int) -> list | None:
        """Return (column index, coordinate, parameter) per value over the bands.

        The coordinates of a band law
        (:class:`~skattr.laws._joint_band.JointBandLaw`): ``"linear"`` or
        ``"monotone"`` with the statistic (its :meth:`record_weight`
        weighing it), ``"order"`` at a level, ``"spread"`` with a ddof, in
        the order the statistic releases them; None for a kind the bands do
        not bound.
        """
        return None

    def band_summed(self) -> bool:
        """Whether its band coordinates are weighted sums of one column each.

        Such a statistic alone takes its own band law
        (:class:`~skattr.laws._band.BandLaw`); beside others, the joint one.
        """
        return False

    def band_spacings(self) -> bool:
        """Whether its bands also bound the spacings (an order statistic's)."""
        return False

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def register_kind(cls: type[StatisticKind]) -> type[StatisticKind]:
    """Register a kind under its name (a class decorator); one instance is kept."""
    if cls.name in _KINDS and type(_KINDS[cls.name]) is not cls:
        raise ValueError(f"A statistic kind named {cls.name!r} is registered "
                         f"already ({type(_KINDS[cls.name]).__name__}).")
    _KINDS[cls.name] = cls()
    return cls


def kind_of(name) -> StatisticKind | None:
    """Return the kind a statistic's stored name names; None for no kind.

    ``name`` may be anything a caller holds (a stacked query's
    ``"stacked"``, a callable, None): only a registered name has a kind.
    """
    if isinstance(name, StatisticKind):
        return name
    return _KINDS.get(name) if isinstance(name, str) else None


def query_kind(query) -> StatisticKind | None:
    """Return the kind of a query's statistic; None for a stacked query or others."""
    return kind_of(getattr(query, "statistic", None))


def counts_records(query) -> bool:
    """Whether a query (a stacked query's part) counts the records holding a value.

    A count or proportion: each record contributes 0 or 1, so it needs no
    clipping range.
    """
    kind = query_kind(query)
    return kind is not None and kind.counts


def kinds(*, linear: bool | None = None) -> tuple[StatisticKind, ...]:
    """Return the registered kinds in their order (the linear ones, or the others)."""
    found = sorted(_KINDS.values(), key=lambda k: k.order)
    return tuple(k for k in found if linear is None or k.linear == linear)


def register_law(family: str, *classes: type[StatisticKind]) -> Callable:
    """Register a law builder of ``family`` for statistics of ``classes``.

    A decorator for the builder (a function or class); families are the
    specs' ways of building laws (``"band"``: one value over the reference's
    confidence bands; ``"order"``: the exact laws of order statistics under
    resampling; ``"exact"``: the exact law of a count or integer sum). A
    subclass of a registered kind inherits its builders.
    """
    if not classes:
        raise ValueError("register_law needs at least one kind class.")

    def register(builder):
        for cls in classes:
            _LAWS[(family, cls)] = builder
        return builder

    return register


def law_builder(family: str, kind) -> Any:
    """Return the ``family`` law builder registered for ``kind``, or None."""
    kind = kind_of(kind)
    if kind is None:
        return None
    for cls in type(kind).__mro__:
        if (family, cls) in _LAWS:
            return _LAWS[(family, cls)]
    return None
