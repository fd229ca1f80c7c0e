"""``df.attrpriv``: release DataFrame aggregates while hiding a global property."""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence
from numbers import Real
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
import pandas as pd

from skattr._accessor_verbs import AccessorVerbs
from skattr._kinds import kind_of
from skattr._release import Plan, Release
from skattr._secret import Secret
from skattr._validation import check_unique_labels, column_labels
from skattr._verbs import called, statistic_query
from skattr.backends import (
    backend_of,
    one_reading,
    registered_backends,
    release_frames,
)
from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.utils._param_validation import as_called
from skattr.utils._stack import warnings_once

if TYPE_CHECKING:
    from skattr.synth import SyntheticData

__all__ = ["AttributePrivacyAccessor", "build_mechanism"]


def build_mechanism(query, *, secret, reference, data: pd.DataFrame,
                    mechanism: str = "auto", n_rows: int | None = None,
                    **params):
    """Fit the ``mechanism=`` estimator (or, for "auto", the least-error one).

    See :meth:`skattr.mechanisms._registry.Registry.build`.
    """
    from skattr.mechanisms import MECHANISMS

    return MECHANISMS.build(query, secret=secret, reference=reference,
                            data=data, mechanism=mechanism, n_rows=n_rows,
                            **params)


@pd.api.extensions.register_dataframe_accessor("attrpriv")
class AttributePrivacyAccessor(AccessorVerbs):
    """Attribute-private aggregates of a DataFrame: ``df.attrpriv.mean(...)``.

    Every method takes the statistic's columns and the keywords ``secret``
    (a :class:`~skattr.Secret` or a list), ``reference`` (public reference data,
    or ``"self"``; omitted for the differential-privacy baselines, which fit no
    Theta), ``epsilon``, ``delta``, ``mechanism`` (default ``"auto"``),
    ``calibration``, ``theta`` and ``random_state``, plus any parameter of the
    chosen mechanism. It never modifies the frame and stores nothing.

    ``progress`` (``"auto"``, True or False; every method takes it, whatever
    the mechanism) shows a progress bar (tqdm) on the steps that take seconds,
    such as the datasets the resampling Theta draws for ``median``, ``std``
    or ``agg``: ``"auto"`` when standard error is a terminal and tqdm is
    installed, True always (``pip install "skattr[progress]"``). It changes
    no release: the same seed gives the same values and certificate.

    Examples
    --------
    >>> import skattr
    >>> from skattr.datasets import make_hospital
    >>> private = make_hospital(50, random_state=1)
    >>> reference = make_hospital(2000, random_state=0)
    >>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    >>> rel = private.attrpriv.mean(["blood_pressure"], secret=secret,
    ...                             reference=reference, random_state=0)
    >>> rel.mechanism       # certified from the resampled laws: no Gaussian model
    'approx-wasserstein'
    >>> round(rel.epsilon, 3), rel.delta
    (1.0, 0.001)
    >>> rel = private.attrpriv.mean(["blood_pressure"], secret=secret,
    ...                             reference=reference, law="gaussian",
    ...                             mechanism="apgm", random_state=0)
    >>> rel.assumes("law.gaussian"), rel.assumed[-1].option
    (True, "law='gaussian'")
    >>> rel.assumptions[-1][:26]
    "ASSUMED (law='gaussian'): "

    ``agg`` releases any statistic, a function of the records included. A
    function has no bound valid for the population, so it needs the
    resampling model, chosen (the reference's records taken as the
    population, recorded):

    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> ref = pd.DataFrame({"rich": rng.random(3000) < 0.3,
    ...                     "age": rng.normal(40, 10, 3000).round()})
    >>> sample = ref.sample(100, random_state=1)
    >>> secret = skattr.Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
    >>> rel = sample.attrpriv.agg(lambda d: d["age"].max() - d["age"].min(),
    ...                           ["age"], secret=secret, reference=ref,
    ...                           theta=skattr.theta.Resample(), delta=9e-3,
    ...                           random_state=0)
    >>> rel.mechanism, rel.delta, rel.assumes("resampling-model")
    ('approx-wasserstein', 0.009, True)
    """

    #: How the user calls this object's methods, as its errors name them.
    called_as = "df.attrpriv"

    def __init__(self, pandas_obj: pd.DataFrame):
        # Checked by each method (_frame), not here: an AttributeError is
        # what Python's hasattr and tab completion swallow, not a refusal.
        self._obj = pandas_obj

    def _frame(self):
        """Return the frame, refused first if it names a column twice."""
        check_unique_labels(self._obj, what="the private data")
        return self._obj

    def _n_rows(self) -> int:
        """Return the number of rows (public); a lazy frame's is counted once."""
        if getattr(self, "_rows", None) is None:
            self._rows = backend_of(self._obj).row_count(
                self._obj, what="the private data")
        return self._rows

    def _release(
        self, query, *, secret: Secret | Sequence[Secret] | None = None,
        reference=None, epsilon: float = 1.0, delta: float | None = None,
        mechanism: str = "auto",
        random_state: int | np.random.Generator | np.random.RandomState
        | None = None,
        **params: Any,
    ) -> Release:
        """Fit the mechanism for ``query`` and release it (every verb's call).

        Its keyword-only parameters, their defaults and type hints are the
        verbs' (:mod:`skattr._accessor_verbs`, written from them by
        ``tools/generate_verbs.py``).

        Only the columns the release reads are taken from the frame and the
        reference, in one order (:func:`skattr.backends.release_frames`):
        other columns may differ between them. Every pass over a lazy frame
        (its rows counted, a fit on it, the release's passes) is one reading:
        data that changes between them is refused
        (:func:`skattr.backends.one_reading`).
        """
        data, reference = release_frames(query, secret, self._obj, reference,
                                         bounds=params.get("bounds"))
        # Before any Theta is fitted.
        backend_of(data).check_releasable(data, query)
        # delta=None leaves the mechanism's own default (1e-3, or 0 for pure
        # Laplace mechanisms, which refuse any other).
        given = {"epsilon": epsilon, "random_state": random_state,
                 **({} if delta is None else {"delta": delta})}
        # One release: its fit, plans and noise say each warning once.
        with one_reading(), warnings_once():
            est = build_mechanism(query, secret=secret, reference=reference,
                                  data=data, n_rows=self._n_rows(),
                                  mechanism=mechanism, **given, **params)
            return est.release(data)

    def ledger(self, *, secret=None, reference=None, budget=None,
               theta="auto", law=None, random_state=None, bounds="robust",
               noise="auto", **unknown):
        """Open a :class:`~skattr.Ledger` on this frame: joint releases under a budget.

        Every release through it is certified jointly with those before it,
        and refused (:class:`~skattr.exceptions.BudgetExceededError`, before
        any noise is drawn) when the joint guarantee would exceed
        ``budget=(epsilon, delta)``. ``bounds`` is the clipping of every
        release and ``noise`` (``"auto"``, ``"laplace"`` or ``"gaussian"``)
        the noise of every release that names no mechanism (see
        :class:`~skattr.Ledger`): ``noise="gaussian"`` for a ledger of many
        releases. A mechanism's parameters (``mechanism=``, ``delta=``,
        ...) go to each release, not here.
        """
        from skattr._ledger import Ledger

        self._frame()
        given = {"secret", "reference", "budget", "theta", "law",
                 "random_state", "bounds", "noise"}
        if unknown:
            hint = (" For Gaussian noise on every release, open it with "
                    "noise='gaussian'." if "mechanism" in unknown else "")
            raise InvalidParameterError(
                f"ledger() takes no parameter(s) {sorted(unknown)}; it takes "
                "secret, reference, budget, theta, law, random_state, bounds "
                "and noise. Pass a release's own parameters to each release "
                f"(ledger.mean([...], epsilon=..., mechanism=...)).{hint}")
        if budget is None:
            raise InvalidParameterError(
                "A ledger needs budget=(epsilon, delta): the joint guarantee "
                "its releases may never exceed together.")
        with as_called("df.attrpriv.ledger", given):
            return Ledger(self._obj, secret=secret, reference=reference,
                          budget=budget, theta=theta, law=law,
                          random_state=random_state, bounds=bounds,
                          noise=noise)

    def describe(self, columns=None, *, secret=None, reference=None, epsilon=1.0,
                 delta=1e-3, percentiles=(0.25, 0.5, 0.75), theta="auto",
                 bounds="robust", allocate="error", random_state=None,
                 **unknown):
        """Release count, means and quartiles of ``columns``, certified jointly.

        The private ``DataFrame.describe()``: the row count (public), each
        column's mean and its quartiles (or ``percentiles``) through one
        ledger whose budget is ``(epsilon, delta)``, half of it on the means
        and the rest on the percentiles, so the whole table holds that
        guarantee jointly. Without ``columns``, every numeric column (as
        ``DataFrame.describe()`` takes them: numbers, not booleans) but the
        secrets' own, whose statistics the noise is set to hide.
        ``allocate="relative"`` gives each value noise in proportion to its
        value in the reference data (equal relative errors), and a dict or
        Series of public scales by column (``reference[columns].std()``)
        in proportion to its column's, instead of the least expected
        squared error.

        Returns
        -------
        Description
            ``.table`` (rows count, mean, 25%, 50%, 75%), ``.noise_std``,
            ``.ledger`` (the joint guarantee and each release's
            certificate); ``print`` it for the plain words and the table.

        Examples
        --------
        >>> import skattr
        >>> from skattr.datasets import make_hospital
        >>> private = make_hospital(200, random_state=1)
        >>> reference = make_hospital(2000, random_state=0)
        >>> secret = skattr.Secret.proportion("gender", "female",
        ...                                   pairs=[(0.4, 0.6)])
        >>> d = private.attrpriv.describe(["weight", "height"], secret=secret,
        ...                               reference=reference, epsilon=4.0,
        ...                               percentiles=[0.5], random_state=0)
        >>> d.table.index.tolist()
        ['count', 'mean', '50%']
        >>> d.ledger.spent[0] <= 4.0
        True
        """
        from skattr._describe import describe, described_columns

        caller = "df.attrpriv.describe"
        _refuse_unknown(
            AttributePrivacyAccessor.describe, unknown,
            note=" Its releases' noise is its own (Gaussian over the "
            "reference's bands, shared by allocate=); to choose each "
            "statistic's mechanism, release them through "
            "df.attrpriv.ledger(...).")
        # Its own guarantee, checked here: inside, it is a ledger's budget.
        for name, value, wanted in (
                ("epsilon", epsilon, "a positive number: the whole table's "
                 "joint guarantee"),
                ("delta", delta, "a number in (0, 1): the chance the whole "
                 "table's guarantee fails")):
            if not (isinstance(value, Real) and not isinstance(value, bool)
                    and 0 < value < (1 if name == "delta" else math.inf)):
                raise InvalidParameterError(
                    f"The {name!r} parameter of {caller} must be {wanted}. "
                    f"Got {value!r} instead.")
        frame = self._frame()
        labels = (column_labels(columns) if columns is not None
                  else described_columns(frame, secret, reference,
                                         f"{caller}()"))
        if labels is None:
            raise InvalidParameterError(
                f"{caller} needs at least one column: describe(['age', ...]).")
        with as_called(caller, {"columns", "secret", "reference", "epsilon",
                                "delta", "percentiles", "theta", "bounds",
                                "allocate", "random_state"}):
            return describe(frame, list(labels), secret=secret,
                            reference=reference, epsilon=epsilon, delta=delta,
                            percentiles=percentiles, theta=theta,
                            bounds=bounds, allocate=allocate,
                            random_state=random_state)

    # The signature and docstring are the default synthesiser's parameters,
    # written by tools/generate_verbs.py.
    # --- written by tools/generate_verbs.py: synthesize's signature ---
    @overload
    def synthesize(
        self, n=None, *, secret=None, method: Literal["rap"] = "rap", reference=None,
        categories=None, bins=None, columns=None, epsilon=1.0, delta=1e-06,
        privacy="dataset", share=None, individuals="dp", neighbours="any", k=3,
        n_marginals=64, marginals=None, n_synthetic=1000, rounds=1,
        queries_per_round=None, iterations=1000, learning_rate=0.05, progress="auto",
        random_state=None
    ) -> SyntheticData: ...

    @overload
    def synthesize(
        self, n=None, *, secret=None, method: str, reference=None, categories=None,
        bins=None, columns=None, random_state=None, **params: Any
    ) -> SyntheticData: ...

    def synthesize(
        self, n=None, *, secret=None, method="rap", reference=None, categories=None,
        bins=None, columns=None, random_state=None, **params
    ) -> SyntheticData:
        """Return a synthetic table hiding the share of a group (and each record).

        The synthesiser is the one ``method`` names in
        :data:`skattr.synth.SYNTHESIZERS`. The default, ``"rap"``
        (:class:`~skattr.synth.AttributePrivateRAP`), subsamples each group of the
        secret (its records, and the rest) to a public size, which hides the share
        exactly under the attribute-privacy model, releases its k-way marginals as
        shares of the group with differential privacy for every record, fits a
        relaxed table to each group's and draws ``n`` records. The table's share
        of the group is ``share`` (default: the middle of the pairs), never the
        data's. The categories are public: ``categories=``, ``bins=`` (numeric
        columns' edges) or read from ``reference=``.

        Parameters
        ----------
        n : int or None, default=None
            Records of the synthetic table (default: as many as the frame).
        secret : Secret
            ``Secret.proportion(column, value, pairs=...)``: the share hidden.
        method : str, default="rap"
            The synthesiser: a name of :data:`skattr.synth.SYNTHESIZERS`. The
            parameters from ``epsilon`` to ``progress`` are the default method's
            (``"rap"``, :class:`~skattr.synth.AttributePrivateRAP`), with its
            defaults; another method takes its own
            (``SYNTHESIZERS[method].parameters()``) as keywords, with its
            defaults, and refuses one it does not take.
        reference : DataFrame or None, default=None
            Public data to read the columns' categories from (and, for
            ``marginals="reference"``, RAP's workload: :func:`select_marginals`,
            no privacy spent).
        categories : dict column -> list or None, default=None
            Every category of a column, stated (public).
        bins : dict column -> list or None, default=None
            A numeric column's bin edges, chosen without the private data.
        columns : list or None, default=None
            The columns synthesised (default: all of the data's).
        epsilon : float, default=1.0
        delta : float, default=1e-6
            Each record's (epsilon, delta)-differential privacy; under
            distributional privacy ``delta`` is also the chance that a group of
            the data is smaller than its public size (then nothing is released):
            the share's delta.
        privacy : {"dataset", "distributional"}, default="dataset"
            Dataset privacy hides the realised share (pairs on the grid k / n,
            a stated pair off it as every grid pair around it); distributional
            hides the chance each record is in the group (the group's size is
            then a binomial quantile, failing with chance ``delta``).
        share : float or None, default=None
            The secret group's share in the synthetic table (None: the middle of
            the pairs' values). Stated, never read from the data.
        individuals : {"dp"} or None, default="dp"
            "dp": every record protected by differential privacy. None: the
            share hidden, no record protected (the histograms exact; a
            :class:`~skattr.exceptions.PrivacyLeakWarning` says what that
            exposes).
        neighbours : {"any", "same-group"}, default="any"
            Differential privacy's neighbouring datasets. "any": one record
            replaced by any other, its group included; such a record can move
            both groups' subsamples, so each group gets half the budget.
            "same-group": a record's group is public and kept (a recorded
            assumption); each group gets the whole budget (parallel
            composition: a record moves one group's subsample only).
        k : int, default=3
        n_marginals : int or None, default=64
            As :class:`DPRAP`: the workload, drawn from ``random_state``.
        marginals : list of tuple or None, default=None
            The workload by column names, chosen from public information (e.g.
            :func:`select_marginals` on a public reference, which spends no
            privacy); None draws ``n_marginals`` k-way marginals at random.
        n_synthetic : int, default=1000
            Records of the two groups' relaxed tables together, half each (as
            many as :class:`DPRAP`'s one table: the fit costs about as much).
        rounds : int, default=1
            As :class:`DPRAP`, in each group: more rounds choose
            ``queries_per_round`` marginals a round by report-noisy-max on that
            group's relaxed table's errors.
        queries_per_round : int or None, default=None
        iterations : int, default=1000
        learning_rate : float, default=0.05
        progress : "auto" or bool, default="auto"
        random_state : None, int or Generator, default=None
            The synthesiser's, and the sampling's (experiments only: whoever knows
            the seed can remove the noise).
        **params
            Another method's parameters (``method=``).

        Returns
        -------
        SyntheticData
            ``.data`` (the table), ``.certificate``, ``.summary()``, and the
            fitted ``.synthesizer`` (more records, ``to_json``).

        Examples
        --------
        >>> import numpy as np, pandas as pd, skattr
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"sex": rng.choice(["F", "M"], 3000, p=[0.3, 0.7]),
        ...                    "job": rng.choice(["a", "b", "c"], 3000)})
        >>> secret = skattr.Secret.proportion("sex", "F", pairs=[(0.25, 0.35)])
        >>> out = df.attrpriv.synthesize(
        ...     secret=secret, categories={"sex": ["F", "M"], "job": ["a", "b", "c"]},
        ...     k=1, privacy="distributional", n_synthetic=100, random_state=0)
        >>> out.data.shape, out.share, out.epsilon, out.certificate.epsilon
        ((3000, 2), 0.3, 1.0, 0.0)
        """
        return self._synthesize(
            n, secret=secret, method=method, reference=reference, categories=categories,
            bins=bins, columns=columns, random_state=random_state, params=params)

    def _synthesize_shown(
        self, n=None, *, secret=None, method="rap", reference=None, categories=None,
        bins=None, columns=None, epsilon=1.0, delta=1e-06, privacy="dataset",
        share=None, individuals="dp", neighbours="any", k=3, n_marginals=64,
        marginals=None, n_synthetic=1000, rounds=1, queries_per_round=None,
        iterations=1000, learning_rate=0.05, progress="auto", random_state=None,
        **params
    ):
        """Hold the signature help() shows: the default method's keywords too."""

    synthesize.__signature__ = inspect.signature(  # type: ignore[attr-defined]
        _synthesize_shown)
    del _synthesize_shown
    # --- end of what tools/generate_verbs.py writes ---

    def _synthesize(self, n, *, secret, method, reference, categories, bins,
                    columns, random_state, params):
        """Run :meth:`synthesize`: the frame's table, by ``synthesize``."""
        from skattr.synth import SYNTHESIZERS, synthesize

        SYNTHESIZERS.check_params(method, params,
                                  caller=AttributePrivacyAccessor.synthesize)
        columns = column_labels(columns)
        if not isinstance(self._frame(), pd.DataFrame):
            raise DataValidationError(
                "synthesize fits its tables in memory: call .compute() on the "
                "frame first (a synthesiser holds n x features one-hot rows).")
        return synthesize(self._obj, secret=secret, method=method,
                          reference=reference, categories=categories,
                          bins=bins,
                          columns=None if columns is None else list(columns),
                          n=n, random_state=random_state, **params)

    def group_means(self, columns=None, *, secret=None, bounds=None,
                    reference=None, epsilon=1.0, delta=1e-6,
                    privacy="dataset", neighbours="any", random_state=None,
                    **unknown):
        """Return the means of ``columns`` within each group of the secret.

        The mean weight of women and of men, without revealing the share of
        women, and protecting each record: each group is subsampled to a
        public size (the share hidden exactly under the attribute-privacy
        model) and its clipped means released with differential privacy
        (:func:`skattr.group_means`, whose parameters these are). The
        clipping ranges are public: ``bounds=`` or read from ``reference=``.

        Returns
        -------
        GroupMeans
            ``.values`` (a row a group), ``.noise_sd``, ``.conf_int()``,
            ``.summary()``, ``.in_plain_words()``.

        Examples
        --------
        >>> import numpy as np, pandas as pd, skattr
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"sex": rng.choice(["F", "M"], 4000),
        ...                    "height": rng.normal(170, 10, 4000)})
        >>> out = df.attrpriv.group_means(
        ...     "height", bounds={"height": (120, 220)}, random_state=0,
        ...     secret=skattr.Secret.proportion("sex", "F", pairs=[(0.4, 0.6)]))
        >>> out.records_certificate.epsilon, out.certificate.epsilon
        (1.0, 0.0)
        """
        from skattr._group_means import group_means

        _refuse_unknown(AttributePrivacyAccessor.group_means, unknown)
        if columns is None:
            raise InvalidParameterError(
                "group_means needs the columns whose means are released, "
                "e.g. df.attrpriv.group_means('weight', secret=...).")
        if not isinstance(self._frame(), pd.DataFrame):
            raise DataValidationError(
                "group_means reads the kept records in memory: call "
                ".compute() on the frame first.")
        return group_means(self._obj, list(column_labels(columns)),
                           secret=secret,
                           bounds=bounds, reference=reference, epsilon=epsilon,
                           delta=delta, privacy=privacy, neighbours=neighbours,
                           random_state=random_state)

    def plan(self, columns=None, *, statistic="mean", value=None,
             secret=None, reference=None, mechanism="auto", **params) -> Plan:
        """Return the noise law and expected error, without releasing anything.

        ``statistic`` is a name ("mean", "sum", "count", "proportion", "median",
        "std"), a callable, or a :class:`~skattr.Query` /
        :class:`~skattr.Statistic`.
        """
        with as_called(called("df.attrpriv.plan", {"mechanism": mechanism}),
                       {"columns", "statistic", "value", "secret",
                        "reference", "mechanism", *params}):
            query = statistic_query(statistic, columns, value,
                                    params.pop("q", None))
            data, reference = release_frames(query, secret, self._obj,
                                             reference,
                                             bounds=params.get("bounds"))
            with one_reading(), warnings_once():
                est = build_mechanism(query, secret=secret,
                                      reference=reference, data=data,
                                      n_rows=self._n_rows(),
                                      mechanism=mechanism, **params)
                return est.plan(n=self._n_rows())

    def leakage(self, columns=None, *, statistic: str = "mean", value=None,
                secret=None, reference=None, delta: float = 1e-3,
                mechanism: str = "auto", **params) -> float:
        """Epsilon, at ``delta``, of releasing the raw statistic with no noise.

        The leakage depends on Theta and the law of the statistic, not on the
        noise: ``mechanism`` names the estimator whose Theta is fit (those
        with a ``leakage`` method: the attribute-private Gaussian and Expected
        Value families); ``"auto"`` uses ``"apgm"``'s.
        """
        kind = kind_of(statistic)
        if kind is None or not kind.linear:
            raise InvalidParameterError(
                f"leakage is computed for linear statistics (mean, sum, count, "
                f"proportion), whose laws are Gaussian; got {statistic!r}. For "
                "another statistic, plan a release and read its noise.")
        self._frame()
        with as_called(called("df.attrpriv.leakage", {"mechanism": mechanism}), {
                "columns", "statistic", "value", "secret", "reference",
                "delta", "mechanism", *params}):
            return self._leakage(columns, statistic, value, secret, reference,
                                 delta, mechanism, params)

    def _leakage(self, columns, statistic, value, secret, reference, delta,
                 mechanism, params) -> float:
        from skattr.mechanisms import MECHANISMS

        query = statistic_query(statistic, columns, value)
        name = "apgm" if mechanism == "auto" else mechanism
        cls = MECHANISMS.classes_for(name, query)[name]
        if not hasattr(cls, "leakage"):
            able = [m for m, c in MECHANISMS.items() if hasattr(c, "leakage")]
            raise InvalidParameterError(
                f"mechanism={mechanism!r} computes no leakage: the leakage of a "
                "raw statistic is computed from the Theta of "
                f"{', '.join(able)} (or 'auto').")
        data, reference = release_frames(query, secret, self._obj, reference,
                                         bounds=params.get("bounds"))
        with one_reading():
            est = build_mechanism(query, secret=secret, reference=reference,
                                  data=data, n_rows=self._n_rows(),
                                  mechanism=name, delta=delta, **params)
        return est.leakage(n=self._n_rows(), delta=delta)


# ``.attrpriv`` on the frames of every other backend (Dask: when
# dask.dataframe is imported, before or after skattr; importing skattr never
# imports Dask).
for _backend in registered_backends()[1:]:
    _backend.register_accessor("attrpriv", AttributePrivacyAccessor)


def _refuse_unknown(method, unknown: dict, note: str = "") -> None:
    """Refuse keywords ``method`` does not take, naming the nearest it does.

    ``note`` ends the message (what to do instead).
    """
    if not unknown:
        return
    import difflib

    known = [p for p in inspect.signature(method).parameters
             if p not in ("self", "unknown")]
    hints = {k: difflib.get_close_matches(k, known, n=1) for k in unknown}
    raise InvalidParameterError(
        f"{method.__name__}() takes no parameter(s) {sorted(unknown)}."
        + "".join(f" Did you mean {h[0]!r} for {k!r}?"
                  for k, h in hints.items() if h)
        + f" It takes: {', '.join(known)}." + note)

