"""The registry: ``mechanism=`` name -> estimator class, and ``"auto"``.

Each mechanism class declares its ``mechanism_name`` and capabilities on
:class:`~skattr.mechanisms.BaseMechanism` (``needs_reference``,
``auto_candidate``, ``accepts_statistics``) and is registered with
:func:`register` in its own module; the accessor and the command line ask the
registry which classes a name means, which parameters they take, and which
candidate of ``"auto"`` certifies a release with the least expected error.
"""

from __future__ import annotations

import difflib
import inspect
import warnings
from collections.abc import Iterator, Mapping

import pandas as pd

from skattr._persistence import persistable
from skattr._query import (
    check_counted_values,
    check_present,
    check_value_occurs,
    indicator,
)
from skattr._validation import column_sums
from skattr.backends import backend_of, is_frame
from skattr.exceptions import (
    InvalidParameterError,
    NotCertifiableError,
    PrivacyLeakWarning,
    SecretReleasedWarning,
)
from skattr.mechanisms import _fit_cache
from skattr.theta._spec import theta_reads_reference
from skattr.utils._progress import check_progress, progress_enabled
from skattr.utils._stack import caller_stacklevel, warnings_once

__all__ = ["MECHANISMS", "Registry", "register"]

#: Names of the design that this version does not implement yet: reported as
#: not available rather than as unknown.
PLANNED: tuple = ()

#: Parameters every caller may pass, whatever the mechanism: the query and
#: secret are built by the caller.
_BUILT_BY_CALLER = frozenset({"query", "secret"})

#: Display options every caller may pass: given to the classes that take them
#: (those with steps that take seconds), checked and ignored by the others,
#: since they change no release.
_DISPLAY = frozenset({"progress"})

#: Options every caller may pass: given to the classes that take them, and
#: meaningless for the others (a mechanism that takes no delta certifies
#: delta = 0, which no option needs to allow).
_ANY_MECHANISM = frozenset({"allow_large_delta"})


def _parameters(cls) -> tuple[str, ...]:
    """Return the keyword parameters of ``cls.__init__`` (its get_params)."""
    return tuple(name for name, p in
                 inspect.signature(cls.__init__).parameters.items()
                 if name != "self" and p.kind is not p.VAR_KEYWORD)


class Registry(Mapping):
    """Name -> mechanism class, in registration order (``auto`` breaks ties in it).

    A read-only mapping (``registry["apgm"]``, ``list(registry)``), plus the
    questions callers ask: :meth:`classes_for`, :meth:`check_params` and
    :meth:`build`.
    """

    def __init__(self):
        self._classes: dict[str, type] = {}

    def register(self, cls: type) -> type:
        """Add a mechanism class under its ``mechanism_name``; return it."""
        name = getattr(cls, "mechanism_name", "")
        if not name:
            raise TypeError(f"{cls.__name__} declares no mechanism_name.")
        if name in self._classes and self._classes[name] is not cls:
            raise TypeError(
                f"mechanism_name {name!r} is already registered by "
                f"{self._classes[name].__name__}.")
        self._classes[name] = cls
        return cls

    def __getitem__(self, name: str) -> type:
        return self._classes[name]

    def __iter__(self) -> Iterator[str]:
        # auto's candidates first (their order breaks auto's ties), then the
        # baselines.
        return iter(sorted(self._classes,
                           key=lambda n: not self._classes[n].auto_candidate))

    def __len__(self) -> int:
        return len(self._classes)

    def choices(self) -> list[str]:
        """Every value ``mechanism=`` accepts: ``"auto"`` and the names."""
        return ["auto", *self]

    def _unknown(self, mechanism) -> InvalidParameterError:
        available = ", ".join(self.choices())
        if mechanism in PLANNED:
            return InvalidParameterError(
                f"mechanism={mechanism!r} is not available in this version of "
                f"skattr; available: {available}.")
        close = difflib.get_close_matches(str(mechanism), self.choices(), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        return InvalidParameterError(
            f"Unknown mechanism {mechanism!r}; available: {available}.{hint}")

    def classes_for(self, mechanism: str, query=None, secret=None
                    ) -> dict[str, type]:
        """Return the classes ``mechanism=`` means: one, or auto's candidates.

        ``"auto"``'s candidates are the attribute/distribution-private
        mechanisms (``auto_candidate``) that release the query: for a
        non-linear :class:`~skattr.Statistic`, those ``auto_takes`` for it
        and the ``secret`` (the Wasserstein mechanisms; apgm for several
        values, its pairs not nested). A named mechanism that does not
        release the statistic (``releases_statistic``) is refused, naming
        those that do.
        """
        if not isinstance(mechanism, str) or (
                mechanism != "auto" and mechanism not in self._classes):
            raise self._unknown(mechanism)
        linear = query is None or query.is_linear
        if mechanism == "auto":
            secrets = (() if secret is None else tuple(secret)
                       if isinstance(secret, (list, tuple)) else (secret,))
            return {name: cls for name, cls in self.items()
                    if cls.auto_candidate
                    and (linear or cls.auto_takes(query, secrets))}
        cls = self._classes[mechanism]
        if not linear and not cls.releases_statistic(query):
            accepting = [name for name, c in self.items()
                         if c.releases_statistic(query)]
            raise InvalidParameterError(
                f"mechanism={mechanism!r} releases linear statistics (mean, "
                f"sum, count, proportion); a {query.statistic} needs one of "
                f"{', '.join(accepting)} (or 'auto').")
        return {mechanism: cls}

    @staticmethod
    def fold_keywords_of_0_2(mechanism: str, classes: Mapping[str, type],
                             params: Mapping) -> Mapping:
        """Fold 0.2's keywords into ``law=``/``relaxation=`` (until 0.4).

        Only for ``classes`` that take them (for others the old keywords are
        refused by :meth:`check_params`, as in 0.2), with a FutureWarning;
        what cannot be folded is an InvalidParameterError here.
        """
        from skattr.mechanisms._keywords_of_0_2 import fold_keywords_of_0_2
        from skattr.mechanisms._relaxations import WassersteinGap

        takers = [cls for cls in classes.values()
                  if {"law", "relaxation"} & set(_parameters(cls))]
        if not takers:
            return params
        return fold_keywords_of_0_2(
            params, mechanism, wasserstein=any(
                WassersteinGap in cls._parameter_constraints.get("relaxation", ())
                for cls in takers))

    def check_params(self, mechanism: str, classes: Mapping[str, type],
                     params: Mapping) -> None:
        """Refuse keywords that none of ``classes`` takes, naming the valid ones.

        The rule, the same for the accessor and the command line: a parameter
        is passed to every class that takes it; one that no class takes is an
        :class:`~skattr.exceptions.InvalidParameterError` naming the parameters
        that are taken (and the closest, for a misspelling). ``delta`` and
        ``calibration`` for a mechanism with Laplace noise only (which
        certifies delta = 0) are refused the same way, with that reason.
        ``progress`` is accepted whatever the mechanism: it is checked, and
        passed only to the classes that take it (those with a step that
        takes seconds).
        """
        if "progress" in params:
            check_progress(params["progress"], f"mechanism={mechanism!r}")
        taken = {p for cls in classes.values() for p in _parameters(cls)}
        unknown = sorted(set(params) - taken - _BUILT_BY_CALLER - _DISPLAY
                         - _ANY_MECHANISM)
        if not unknown:
            _check_values(classes, params)
            return
        # The guard's option is every mechanism's: not named among them.
        valid = sorted(taken - _BUILT_BY_CALLER - _ANY_MECHANISM)
        name = unknown[0]
        if name in ("delta", "calibration") and mechanism != "auto":
            why = ("adds Laplace noise only and certifies delta = 0"
                   if name == "delta" else
                   "adds Laplace noise only, which has no Gaussian calibration")
            raise InvalidParameterError(
                f"mechanism={mechanism!r} {why}, so it takes no {name!r}; drop "
                f"{name}=, or use a mechanism with Gaussian noise. It takes: "
                f"{', '.join(valid)}.")
        if name in _BINDING:
            # allocate=: how Gaussian noise is shared among values, apgm's.
            which = ("mechanism='auto' does not fit apgm for this statistic "
                     "(on one median, quantile or std Laplace noise is the "
                     "less)" if mechanism == "auto" else
                     f"mechanism={mechanism!r} does not share its noise")
            raise InvalidParameterError(
                f"{name}= shares Gaussian noise among the values released "
                f"(apgm's), and {which}. Pass mechanism='apgm' with it, or "
                f"drop {name}=.")
        close = difflib.get_close_matches(name, valid, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise InvalidParameterError(
            f"mechanism={mechanism!r} takes no parameter(s) {unknown}.{hint} It "
            f"takes: {', '.join(valid)}.")

    def fit_candidates(self, mechanism: str, query, *, secret, reference,
                       data, params: Mapping, refusals: str = "raise",
                       fits: dict | None = None, among=None) -> dict:
        """Fit the estimators ``mechanism=`` names: ``{name: estimator or error}``.

        The one place the registry's rules are applied (the accessor's and
        the ledger's releases, and the plots, all come here): the parameters
        are checked (:meth:`check_params`); ``"auto"``'s candidates
        (:meth:`classes_for`) each get the parameters they take, and skip
        when they cannot give the privacy asked for or lack a parameter they
        need (``auto_requires``); a candidate that cannot certify, or whose
        parameters do not fit it, is kept as its error. A named mechanism's
        refusal is raised (``refusals="raise"``), or with ``"keep"`` kept
        unless it is a bad parameter. ``reference="self"`` fits Theta on
        ``data`` and warns; with it the reference's ranges are not recorded
        (``bounds=None``). ``fits`` holds outcomes already known, by name,
        and is updated.
        """
        classes = self.classes_for(mechanism, query, secret)
        params = self.fold_keywords_of_0_2(mechanism, classes, params)
        self.check_params(mechanism, classes, params)
        _check_data(query, secret, data, reference)
        # A Theta that reads no reference rows (stated: an expert's, stated
        # probabilities, a NetworkTheta) needs none: fit then reads only the
        # data's columns.
        stated = "theta" in params and not theta_reads_reference(params["theta"])
        if (isinstance(reference, str) and reference == "self"
                and params.get("bounds", "robust") in ("robust", "reference")):
            # The reference is the private data: recording a range read off
            # it on the release would publish its minimum and maximum (or
            # its quartiles).
            params = {**params, "bounds": None}
        frame = _resolve_reference(
            reference, data, mechanism,
            not stated and any(cls.needs_reference for cls in classes.values()))
        auto = mechanism == "auto"
        fits = {} if fits is None else fits
        fitted = {}
        for name, cls in classes.items():
            if auto and not _considered(cls, params, among):
                continue
            if name not in fits:
                fits[name] = _fitted(cls, query, secret, params, frame,
                                     raises=() if auto else (
                                         InvalidParameterError,
                                         *((NotCertifiableError,)
                                           if refusals == "raise" else ())))
            elif not auto and isinstance(fits[name], InvalidParameterError):
                raise fits[name]
            fitted[name] = fits[name]
        errors = [e for e in fitted.values() if isinstance(e, Exception)]
        if auto and errors and len(errors) == len(fitted) and all(
                isinstance(e, InvalidParameterError) for e in errors):
            raise errors[0]
        if auto and not fitted:
            raise InvalidParameterError(
                "No candidate of mechanism='auto' takes these parameters "
                f"({sorted(params)}); name a mechanism.")
        return fitted

    @staticmethod
    def least_error(plans: list) -> int:
        """Return the index of ``auto``'s choice among ``(anything, plan)`` pairs.

        The least expected error; mechanisms that coincide (e.g. for one
        statistic) tie up to rounding, and the first in the registry's order
        wins, so the choice is deterministic.
        """
        least = min(plan.expected_error for _, plan in plans)
        return next(i for i, (_, plan) in enumerate(plans)
                    if plan.expected_error <= least * (1 + 1e-9) + 1e-300)

    def build(self, query, *, secret, reference, data: pd.DataFrame,
              mechanism: str = "auto", n_rows: int | None = None,
              among=None, **params):
        """Fit the ``mechanism=`` estimator (or, for "auto", the least-error one).

        Returns the fitted estimator. ``n_rows`` is ``data``'s row count when
        the caller knows it (a Dask frame's is a pass to count).
        ``reference="self"`` fits Theta on ``data`` and warns, since Theta
        then depends on the private data.
        Mechanisms that fit no Theta (``needs_reference = False``: the
        differential-privacy baselines), and a Theta that reads no reference
        rows (``reads_reference = False``: a stated one), need no reference:
        with ``reference=None`` they are fitted on ``data``, of which ``fit``
        reads only the columns. ``among`` (a predicate of a class) restricts
        ``"auto"``'s candidates (a ledger's: those it certifies jointly).
        """
        with warnings_once():
            return self._build(query, secret=secret, reference=reference,
                               data=data, mechanism=mechanism, n_rows=n_rows,
                               among=among, params=params)

    def _build(self, query, *, secret, reference, data, mechanism, n_rows,
               among, params):
        # n is public; a Dask frame's is counted once, not per candidate.
        n = n_rows if n_rows is not None else backend_of(data).row_count(
            data, what="the private data")
        _check_privacy_level(self, mechanism, query, params, n)
        # progress=True without tqdm is refused whether or not a fit is reused.
        progress_enabled(params.get("progress", "auto"))
        # What was fitted before on the same data, statistic and parameters
        # (all but epsilon and the noise) is reused: copies, each with this
        # release's epsilon and noise.
        key, known = _fit_cache.cached_fits(mechanism, query, secret, reference,
                                            data, params)
        fits = dict(known)
        fitted = self.fit_candidates(mechanism, query, secret=secret,
                                     reference=reference, data=data,
                                     params=params, among=among, fits=fits)
        _fit_cache.remember(key, fits)
        fitted = {name: _fit_cache.fresh(est, params) if name in known else est
                  for name, est in fitted.items()}
        candidates, errors = [], []
        for name, est in fitted.items():
            if isinstance(est, Exception):
                errors.append((name, est))
                continue
            try:
                plan = est.plan(n=n)
            except (NotCertifiableError, InvalidParameterError) as exc:
                # "auto" skips a candidate that cannot certify, or whose
                # parameters do not fit it (delta = 0 for the Approximate
                # Wasserstein Mechanism); a bad parameter for every candidate
                # is raised below.
                if mechanism != "auto":
                    raise
                errors.append((name, exc))
                continue
            candidates.append((est, plan))
        if not candidates:
            invalid = [exc for _, exc in errors
                       if isinstance(exc, InvalidParameterError)]
            if invalid and len(invalid) == len(errors):
                raise invalid[0]
            raise NotCertifiableError(_refusal(errors))
        return candidates[self.least_error(candidates)][0]


#: Parameters whose value, other than this default, only the classes taking
#: them honour: ``"auto"`` then considers those alone (an ``allocate=`` of
#: the noise among values is not dropped for a mechanism that has none).
_BINDING = {"allocate": "error"}


def _considered(cls, params: Mapping, among) -> bool:
    """Whether ``"auto"`` considers ``cls`` for these parameters.

    Not a candidate: one the caller's ``among`` excludes, one that cannot
    give the privacy asked for, one whose Theta was not given (a Markov
    quilt mechanism without its network), or one that takes no parameter
    of :data:`_BINDING` given another value than its default.
    """
    own = _parameters(cls)
    return ((among is None or among(cls))
            and not ("privacy" in params and "privacy" not in own)
            and all(params.get(p) is not None for p in cls.auto_requires)
            and all(p in own for p, default in _BINDING.items()
                    if p in params and not _is(params[p], default)))


def _is(value, default) -> bool:
    return isinstance(value, str) and value == default


def _fitted(cls, query, secret, params: Mapping, frame, raises: tuple):
    """Return ``cls`` fitted with the parameters it takes, or its refusal.

    A refusal of a kind in ``raises`` is raised; any other is returned.
    """
    own = _parameters(cls)
    est = cls(query=query, secret=secret,
              **{k: v for k, v in params.items() if k in own})
    try:
        return est.fit(frame)
    except (NotCertifiableError, InvalidParameterError) as exc:
        if isinstance(exc, raises):
            raise
        return exc


def _check_privacy_level(registry: Registry, mechanism, query, params: Mapping,
                         n: int) -> None:
    """Refuse a delta that protects nothing, and warn, before any fit.

    Each class ``mechanism=`` names makes its own check
    (:meth:`~skattr.mechanisms.BaseMechanism._check_privacy_level`, made
    again before its plan), here on an estimator holding the parameters it
    takes, so that nothing is fitted for a release it would refuse. An
    unknown mechanism is refused by :meth:`Registry.fit_candidates`.
    """
    try:
        classes = registry.classes_for(mechanism, query)
    except InvalidParameterError:
        return
    for cls in classes.values():
        own = _parameters(cls)
        cls(**{k: v for k, v in params.items() if k in own}
            )._check_privacy_level(n)


def _check_values(classes: Mapping[str, type], params: Mapping) -> None:
    """Refuse a value that no class taking its parameter accepts.

    ``"auto"`` skips a candidate whose parameters do not fit it (delta = 0 for
    a Gaussian mechanism), so a value valid for none of them (a misspelt
    ``law="gausian"``) must be refused here, or it would be silently dropped
    with the candidates that take it. Each class checks the value itself
    (:meth:`~skattr.mechanisms.BaseMechanism._check_parameter`, as its
    ``fit`` does; one that takes no ``delta`` allows any in [0, 1)); the
    first refusal is raised.
    """
    for name, value in params.items():
        errors = []
        for cls in classes.values():
            if name not in _parameters(cls) and name != "delta":
                continue
            try:
                cls._check_parameter(name, value)
            except InvalidParameterError as exc:
                errors.append(exc)
            else:
                break
        else:
            if errors:
                raise errors[0]


def _refusal(errors) -> str:
    """Say why no candidate certifies: a line per distinct reason.

    The mechanisms that certify only under a model the user states
    (``law='gaussian'``) are named in one line at the end, when another
    reason is the one that matters.
    """
    reasons: dict[str, list] = {}
    modelled: list = []
    for name, exc in errors:
        if getattr(exc, "needs_model", False):
            modelled.append(name)
        else:
            reasons.setdefault(str(exc), []).append(name)
    if not reasons:
        reasons = {str(errors[0][1]): modelled}
        modelled = []
    lines = [f"- {', '.join(names)}: {why}" for why, names in reasons.items()]
    if modelled:
        lines.append(f"- {', '.join(modelled)}: certify only a Gaussian law of "
                     "the statistic that you state (law='gaussian', recorded "
                     "on the release).")
    return "No available mechanism certifies this release.\n" + "\n".join(lines)


def _check_data(query, secret, data, reference) -> None:
    """Refuse, before any fit, what would release a number that says nothing.

    A counted value no record can match (:func:`check_counted_values`), and
    a missing value in the private data's secret column (every record must
    be in one group or the other for the pairs to mean what they say).
    """
    check_counted_values(query, [data, reference])
    for one_secret in (secret if isinstance(secret, (list, tuple))
                       else [secret]):
        value = getattr(one_secret, "value", None)
        if (getattr(one_secret, "property", None) == "proportion"
                and value is not None
                and not callable(value)):
            check_value_occurs(
                value, one_secret.column, [data, reference],
                role="secret's value",
                numbers_may_be_absent=False,
                why="no record is in the secret's group, whose share is hidden")
    if isinstance(data, pd.DataFrame):
        for s in (secret if isinstance(secret, (list, tuple)) else [secret]):
            column = getattr(s, "column", None)
            if column is not None and column in data.columns:
                check_present(data[column], column, what="the private data")
        # A NaN in a released column (a mean's, a median's), refused now as
        # the release would, not after seconds of plans; a count matches
        # its value and reads no number. Summed where each column lies (no
        # copy of the data unless a sum is not finite, to name the column).
        for part in (getattr(query, "parts", None) or (query,)):
            columns = getattr(part, "columns", None)
            if part is None or not columns:
                continue
            if getattr(getattr(part, "kind", None), "counts", False):
                # A count of a column's 1s: a column of other numbers is
                # refused once, now, not by every mechanism tried.
                if getattr(part, "value", None) is None:
                    for column in columns:
                        if column in data.columns:
                            indicator(data, column, None,
                                      what="the private data")
                continue
            numbers = [c for c in columns if c in data.columns
                       and pd.api.types.is_numeric_dtype(data[c].dtype)]
            if numbers:
                column_sums(data, numbers, what="the private data")
    _warn_if_secret_released(query, secret)


def _warn_if_secret_released(query, secret) -> None:
    """Warn when a release reads the secret's own column.

    A share, count or mean of the secret's column (or any statistic of it)
    is the hidden property itself, or a function of it: the noise is set to
    hide exactly that, so the release is mostly noise. Not refused: it is
    still certified, and hiding what it is asked to hide.
    """
    parts = getattr(query, "parts", None) or (query,)
    read = {c for part in parts for c in (getattr(part, "columns", None) or ())}
    for s in (secret if isinstance(secret, (list, tuple)) else [secret]):
        column = getattr(s, "column", None)
        if column is not None and column in read:
            warnings.warn(
                f"This release reads column {column!r}, the secret's own: its "
                f"statistic is the property it hides ({s.label}), or a "
                "function of it. The noise is set to hide that, so the "
                "release will be mostly noise. Release other columns, or "
                "hide another property.", SecretReleasedWarning,
                stacklevel=caller_stacklevel())


def _resolve_reference(reference, data, mechanism, needs_reference):
    """Return the frame Theta is fit on, warning or refusing as the rules say."""
    if reference is None:
        if needs_reference:
            raise InvalidParameterError(
                f"mechanism={mechanism!r} fits Theta on reference data: pass "
                "reference=<a DataFrame of public data from the same "
                "population> (or 'self', with a warning). Only the "
                "differential-privacy baselines (dp-laplace, dp-gaussian, "
                "group-dp-laplace, group-dp-gaussian), and a Theta stated "
                "whole (theta= stated probabilities, an ExpertTheta, a "
                "ProbabilityBox, SumLaws or a NetworkTheta), take no "
                "reference.")
        return data
    if isinstance(reference, str) and reference == "self":
        if needs_reference:
            warnings.warn(
                "reference='self' fits Theta on the private data itself; the "
                "noise then depends on the data it protects and the certificate "
                "no longer holds exactly. Pass public reference data instead.",
                PrivacyLeakWarning, stacklevel=caller_stacklevel())
        return data
    if not is_frame(reference):
        raise InvalidParameterError(
            "reference must be a (pandas or Dask) DataFrame of public data from "
            "the same population (or 'self' to fit on the private data, with a "
            f"warning); got {type(reference).__name__}.")
    return reference


#: The registry of this installation's mechanisms.
MECHANISMS = Registry()


def register(cls: type) -> type:
    """Class decorator: add a mechanism to :data:`MECHANISMS` (and to files)."""
    return persistable(MECHANISMS.register(cls), estimator=True)
