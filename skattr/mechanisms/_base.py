"""The estimator shape every mechanism shares: fit Theta, plan, release."""

from __future__ import annotations

import dataclasses
import inspect
import warnings
from abc import ABCMeta, abstractmethod

import numpy as np
import pandas as pd
from sklearn import get_config
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from skattr._clipping import clip_reference, resolve_clipping
from skattr._persistence import from_json, to_json
from skattr._query import Query, StackedQuery
from skattr._random import check_random_state
from skattr._release import Certificate, Plan, Release
from skattr._secret import SECRETS, as_secrets
from skattr.backends import frame_of
from skattr.dp import check_privacy_level
from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
    NotCertifiableError,
    PrivacyLeakWarning,
)
from skattr.laws._base import grid_assumptions
from skattr.noise import DiscreteLaplaceNoise, LaplaceNoise, NoiseLaw
from skattr.theta._spec import reads_reference_rows
from skattr.utils._param_validation import (
    Interval,
    Options,
    validate_parameter_constraints,
)
from skattr.utils._scoring import check_search_scorer
from skattr.utils._stack import warnings_once

__all__ = ["BaseMechanism"]


def _secured(noise: NoiseLaw, cert: Certificate,
             owner: str) -> tuple[NoiseLaw, Certificate]:
    """Swap Laplace noise for exact discrete noise, and its certificate.

    See :mod:`skattr.noise._discrete`: the guarantee becomes (epsilon +
    2 k eta, delta e**(k eta)) with eta <= 2**-40 + 2**-83; no noise stays none.
    """
    if noise.is_zero:
        return noise, cert
    if not isinstance(noise, LaplaceNoise) or isinstance(
            noise, DiscreteLaplaceNoise):
        raise NotCertifiableError(
            f"{owner}(secure=True) adds {noise.describe()}; exact sampling is "
            "implemented for Laplace noise on each statistic only (the "
            "Wasserstein mechanisms, expm-laplace, the Markov quilt mechanisms "
            "and the Laplace baselines). Choose one of them, or secure=False.")
    law = DiscreteLaplaceNoise(noise.scale, noise.basis)
    epsilon, delta = law.certify(cert.epsilon, cert.delta)
    method = cert.certified_by.then(
        "secure", noise=law.describe(), epsilon=cert.epsilon, delta=cert.delta,
        eta=float(law.eta))
    return law, dataclasses.replace(cert, epsilon=epsilon, delta=delta,
                                    certified_by=method)


class BaseMechanism(TransformerMixin, BaseEstimator, metaclass=ABCMeta,
                    auto_wrap_output_keys=None):
    """Base class of skattr's mechanisms (not used directly).

    ``fit`` learns Theta from reference data, ``plan`` calibrates the noise for a
    dataset of n records without touching its values, ``release`` adds the noise
    and returns a :class:`~skattr.Release`, and ``transform`` returns the noisy
    statistics as one row.

    A subclass implements ``_fit_theta`` (what ``fit`` learns) and ``_plan``
    (the noise law and the certificate for n records), and declares its
    ``mechanism_name`` and capabilities; this class assembles the
    :class:`~skattr.Plan`, draws the noise and builds the
    :class:`~skattr.Release`, the way imbalanced-learn's public
    ``fit_resample`` wraps an abstract ``_fit_resample``.
    """

    _parameter_constraints: dict = {
        "query": [Query, StackedQuery, None],
        "secret": [SECRETS],
        "epsilon": [Interval("real", 0, None, closed="neither")],
        "delta": [Interval("real", 0, 1, closed="left")],
        "calibration": [Options(frozenset({"analytic", "classic"}))],
        "random_state": ["random_state"],
        "bounds": [Options(frozenset({"robust", "reference"})), dict, list, tuple,
                   np.ndarray, None],
        "secure": ["boolean"],
        "allow_large_delta": ["boolean"],
    }

    #: The ``mechanism=`` name this class is registered under ("" for bases).
    mechanism_name: str = ""

    # Capabilities, read by the registry (skattr.mechanisms._registry).
    #: ``fit`` learns Theta from reference data (the DP baselines learn none).
    needs_reference: bool = True
    #: ``mechanism="auto"`` may choose it (attribute/distribution privacy only).
    auto_candidate: bool = True
    #: It releases non-linear statistics (:class:`~skattr.Statistic`).
    accepts_statistics: bool = False
    #: Parameters without which ``"auto"`` does not consider it (the Markov
    #: quilt mechanism needs its ``network``).
    auto_requires: tuple = ()
    #: ``fit`` reads a Dask reference through the data seam (its sufficient
    #: statistics in one pass); otherwise the used columns are collected.
    _reads_dask_reference: bool = False
    #: The layout of the attributes ``fit`` sets, as saved files record it
    #: (``to_json``): a file of another layout is refused on loading, with
    #: what to do. 2 since the law of F became ``law_`` (skattr 0.3).
    fitted_layout: int = 2
    #: The kinds of law of F this mechanism calibrates its noise to
    #: (:class:`~skattr.laws.StatisticLaw`), in its order of preference:
    #: ``"gaussian"``, ``"exact"``, ``"box"``, ``"network"``,
    #: ``"resampling"``. Empty for the mechanisms whose noise rests on
    #: something else (declared bounds, a network's influence).
    calibrates: tuple = ()
    #: The kind of noise it adds: ``"gaussian"`` or ``"laplace"`` (what a
    #: ledger composes: Gaussian noise through the statistics' joint
    #: Gaussian law, Laplace noise on each value through a coupling).
    noise: str = ""

    @classmethod
    def releases_statistic(cls, query) -> bool:
        """Whether it releases this non-linear ``query`` (a Statistic) at all."""
        return cls.accepts_statistics

    @classmethod
    def auto_takes(cls, query, secrets=()) -> bool:
        """Whether ``mechanism="auto"`` fits it for a non-linear ``query``."""
        return cls.releases_statistic(query)

    @property
    def _reads_pairs_on_grid(self) -> bool:
        """Whether the certificate reads the secrets' pairs on the grid k / n.

        Dataset attribute privacy hides a share of the n records at hand, a
        whole number of them (:meth:`~skattr.Secret.grid_pairs`); a plan of
        a mechanism certifying it records how stated pairs off that grid
        were read. False for the mechanisms whose noise reads no pair.
        """
        return False

    @abstractmethod
    def _fit_theta(self, frame: pd.DataFrame, secrets) -> None:
        """Learn (or take from the expert) Theta: set the fitted law ``law_``."""

    @abstractmethod
    def _plan(self, n: int) -> tuple[NoiseLaw, Certificate]:
        """Calibrate the noise for n records: its law and what it certifies."""

    @abstractmethod
    def _theta_description(self) -> str:
        """Say where Theta came from (a release's "Theta" line)."""

    def _assemble_plan(self, n: int) -> Plan:
        """Tie the noise law and certificate of ``_plan`` to this release."""
        noise, cert = self._plan(n)
        k = len(self.query_.names(self.columns_))
        if noise.k != k:
            raise AssertionError(
                f"{type(self).__name__}._plan returned noise for {noise.k} "
                f"statistics; the query releases {k}.")
        certified = {"epsilon": cert.epsilon, "delta": cert.delta,
                     "sensitivity": cert.sensitivity}
        broken = [name for name, value in certified.items()
                  if value is not None and not np.all(np.isfinite(value))]
        if broken:
            # Fail closed: a NaN compares false with every bound it should
            # meet, so a certificate holding one proves nothing.
            raise NotCertifiableError(
                f"{type(self).__name__} could not certify this release: its "
                f"{' and '.join(broken)} came out as "
                f"{', '.join(repr(certified[b]) for b in broken)}. Nothing is "
                "released. Clip the released columns to a plausible range "
                "(bounds=), or report the data's sizes if they are ordinary.")
        if not np.all(np.isfinite(noise.covariance)):
            # Fail closed: noise of no finite variance has no error to state
            # and no interval; the statistic's scale is beyond floating point.
            raise NotCertifiableError(
                f"{type(self).__name__} would add noise of no finite variance "
                f"(sensitivity {cert.sensitivity:.3g}): the released columns "
                "take values too large for floating point. Clip them to a "
                "plausible range with bounds={column: (low, high)}.")
        inherent = cert.inherent_variance
        if getattr(self, "secure", False):
            noise, cert = _secured(noise, cert, type(self).__name__)
        assumed = tuple(cert.assumed)
        if self._reads_pairs_on_grid:
            assumed += grid_assumptions(self.secrets_, n)
        return Plan(
            mechanism=self.mechanism_name,
            statistics=tuple(self.query_.names(self.columns_)),
            n=n,
            epsilon=cert.epsilon,
            delta=cert.delta,
            calibration=(cert.calibration if cert.calibration is not None
                         else self.calibration),
            secrets=tuple(s.label for s in self.secrets_),
            theta=self._theta_description(),
            sensitivity=cert.sensitivity,
            inherent_variance=(tuple(float(v) for v in inherent)
                               if inherent is not None else (0.0,) * k),
            noise_law=noise,
            certified_by=cert.certified_by,
            assumed=assumed,
            guarantee=cert.guarantee,
            error_ratio=cert.error_ratio,
            clipping=getattr(self, "clipping_", None),
            ranges=self._output_ranges(n),
        )

    def _output_ranges(self, n: int) -> tuple | None:
        """Return each statistic's public range of values, or None if unbounded.

        What a release is clamped to (:meth:`release`), recorded on the plan
        for its summary: the clipping range, 0 to 1 for a proportion, 0 to n
        for a count.
        """
        clipping = getattr(self, "clipping_", None)
        found = self.query_.output_ranges(
            self.columns_, n, clipping.as_dict() if clipping is not None else {})
        if found is None:
            return None
        return tuple(zip(np.asarray(found[0], dtype=float).tolist(),
                         np.asarray(found[1], dtype=float).tolist(), strict=True))

    @classmethod
    def _check_parameter(cls, name: str, value) -> None:
        """Refuse ``value`` for parameter ``name`` as ``fit`` would.

        The one check of a parameter's value (its ``_parameter_constraints``):
        ``fit`` makes it of every parameter, and the registry of one before
        any fit (a value no candidate of ``"auto"`` takes is refused rather
        than dropped with them). A mechanism that takes no ``delta``
        certifies delta = 0, which any delta in [0, 1) allows.
        """
        accepted = cls._parameter_constraints.get(name)
        if accepted is None and name == "delta":
            accepted = [Interval("real", 0, 1, closed="left")]
        validate_parameter_constraints({name: accepted}, {name: value},
                                       cls.__name__)

    def _validate_params(self):
        for name, value in self.get_params(deep=False).items():
            self._check_parameter(name, value)
        if getattr(self, "secure", False) and self.noise == "gaussian":
            # Decided by the class alone: refused before any fit.
            raise NotCertifiableError(
                f"{type(self).__name__}(secure=True) adds Gaussian noise; "
                "exact sampling is implemented for Laplace noise on each "
                "statistic only (the Wasserstein mechanisms, expm-laplace, the "
                "Markov quilt mechanisms and the Laplace baselines). Choose "
                "one of them, or secure=False.")

    def fit(self, X, y=None):
        """Learn the Theta summaries from reference data.

        The steps every mechanism shares (parameters, columns, clipping),
        then its own ``_fit_theta``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_records, n_columns)
            Reference data: public data from the same population, never the
            private data (see ``reference="self"`` in the accessor for the
            warning that comes with that). For a mechanism that fits no Theta
            on reference data (``needs_reference = False``: the DP baselines,
            the Markov quilt mechanisms), only X's columns are used (their
            values are checked), so X may be the private data itself.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        self : object
            The fitted mechanism.
        """
        self._validate_params()
        # Inside GridSearchCV(scoring="neg_mean_absolute_error"): every
        # candidate would score NaN (utils._scoring says why).
        check_search_scorer(self)
        # A mechanism that fits no Theta on reference data (the DP
        # baselines, the Markov quilt mechanisms) reads only X's columns and
        # checks its values: X may be the private data.
        frame, backend = frame_of(X, what=(
            "the reference data" if self.needs_reference
            else "the data passed to fit"))
        validate_data(self, backend.schema(frame) if backend.lazy else X,
                      skip_check_array=True)
        lazy = backend.lazy
        # A stated Theta (an ExpertTheta, stated probabilities) reads no
        # rows: fit may be given the private data, of any size.
        reads_rows = reads_reference_rows(self)
        if reads_rows and not lazy and len(frame) < 4:
            raise DataValidationError(
                f"The reference data has n_samples = {len(frame)}; Theta needs at "
                "least two records in each secret group. Pass more reference data."
            )
        secrets = (() if self.secret is None and not self.needs_reference
                   else as_secrets(self.secret))
        self._resolve_query(frame, secrets)
        if lazy and not self._reads_dask_reference:
            # This Theta reads the records themselves: the used columns (the
            # query's and the secrets') are collected in one pass.
            frame = backend.collect(frame, [
                c for c in (*self.columns_, *(s.column for s in secrets))
                if c in frame.columns])
            if reads_rows and len(frame) < 4:
                raise DataValidationError(
                    f"The reference data has n_samples = {len(frame)}; Theta "
                    "needs at least two records in each secret group. Pass more "
                    "reference data.")
        frame = self._clip_reference(frame, secrets)
        self._fit_theta(frame, secrets)
        self._start_releases()
        return self

    def _clip_reference(self, frame, secrets):
        """Resolve ``bounds=`` into ``clipping_``; return the reference clipped alike.

        Theta is then computed on the statistic a release computes: the
        released columns clipped (see :mod:`skattr._clipping`).
        """
        reads = reads_reference_rows(self)
        self.clipping_ = resolve_clipping(
            self.bounds, self.query_, self.columns_, frame,
            reads_reference=reads, needs_declared=not self.needs_reference,
            secret_columns=[s.column for s in secrets], warn=True)
        # A stated Theta reads no rows: the frame may be the private data,
        # whose values nothing here may depend on.
        return clip_reference(frame, self.clipping_, secrets) if reads else frame

    def _resolve_query(self, frame: pd.DataFrame, secrets) -> None:
        """Set ``columns_``, ``query_`` and ``secrets_`` from the query and data.

        By default every column but the secrets' is released.
        """
        query = self.query if self.query is not None else Query.mean()
        exclude = [s.column for s in secrets]
        if query.columns is None and all(c in exclude for c in frame.columns):
            raise DataValidationError(
                f"The data has n_features = {frame.shape[1]} and every column is a "
                "secret's, so nothing is left to release; add the columns to "
                "release or name them with Query.mean([...])."
            )
        self.columns_ = query.resolve_columns(frame, exclude=exclude)
        self.query_ = query.with_columns(self.columns_)
        self.secrets_ = secrets

    def _check_privacy_level(self, n: int) -> None:
        """Refuse a delta above 0.1, and warn of a guarantee that protects little.

        The one check of how much a release protects, whichever way it is
        made (a bare estimator, the accessor, a ledger, the command line):
        a delta above 0.1 is refused unless ``allow_large_delta=True``; a
        delta at 1/n or more, and an epsilon above 10, warn
        (``PrivacyLeakWarning``, at the user's line, once a release: see
        :func:`~skattr.dp.check_privacy_level`). Made before every plan,
        hence before any noise is drawn; the registry makes it before any
        fit. A delta left at the mechanism's default (1e-3, a choice the
        library makes, not the user) is not warned of.

        Parameters
        ----------
        n : int
            The number of records released (public).
        """
        delta = getattr(self, "delta", None)
        default = inspect.signature(type(self).__init__).parameters.get("delta")
        if default is not None and delta is not None and delta == default.default:
            delta = None
        check_privacy_level(getattr(self, "epsilon", None), delta, n,
                            large_delta=bool(getattr(self, "allow_large_delta",
                                                     False)))

    def _cached_plan(self, n: int) -> Plan:
        """Return the plan for n records, computed once per n and parameters.

        A plan depends on n and the parameters only (Theta, query and
        secrets are fixed by fit), never on the noise source: repeated
        releases reuse it, and so do the copies of one cached fit
        (:class:`~skattr.mechanisms._fit_cache.PlanMemo`, issue 42). Of
        ``random_state`` the key holds the kind alone (a bad one is still
        refused); a progress bar changes nothing.
        """
        self._check_privacy_level(n)
        given = self.get_params(deep=False)
        params = {k: v for k, v in given.items()
                  if k not in ("progress", "random_state")}
        key = (n, type(given.get("random_state")).__name__,
               *((k, repr(v)) for k, v in params.items()))
        plans = getattr(self, "_plans", None)
        if plans is None:
            plans = self._plans = {}
        if key not in plans:
            shared = getattr(self, "_shared_plans", None)
            plan = None if shared is None else shared.get(key, params)
            if plan is None:
                self._validate_params()
                plan = self._assemble_plan(n)
                if shared is not None:
                    shared.put(key, params, plan)
            plans[key] = plan
        return plans[key]

    def _private_frame(self, X):
        """Return (the private data's frame, its backend), checked."""
        check_is_fitted(self)
        frame, backend = frame_of(X, what="the private data")
        self._check_same_columns(frame)
        validate_data(self, backend.schema(frame) if backend.lazy else X,
                      reset=False, skip_check_array=True)
        backend.check_secrets(frame, self.secrets_, what="the private data")
        return frame, backend

    def _check_same_columns(self, frame: pd.DataFrame) -> None:
        """Refuse a private frame whose columns are not those seen in ``fit``.

        scikit-learn's own message ("feature names should match") names no
        remedy; this one names the missing and unexpected columns.
        """
        seen = getattr(self, "feature_names_in_", None)
        if seen is None:
            return
        columns = list(frame.columns)
        if columns == list(seen):
            return
        missing = [c for c in seen if c not in set(columns)]
        extra = [c for c in columns if c not in set(seen)]
        # An estimator fitted on a frame's columns takes the same ones
        # (scikit-learn's convention); the convenience paths select them.
        remedy = (" df.attrpriv's verbs, a ledger and describe() take from "
                  "each frame only the columns a release reads, so other "
                  "columns may differ there.")
        if not missing and not extra:
            raise DataValidationError(
                "The private data has the columns seen in fit, in another "
                "order; pass private[list(mechanism.feature_names_in_)] (the "
                f"columns it was fit on, in that order).{remedy}")
        why = ""
        if {s.column for s in self.secrets_} & set(missing):
            why = (" The secret's column is never read by a release, but the "
                   "private data must have every column the mechanism was fit "
                   "on.")
        raise DataValidationError(
            f"The private data's columns differ from those seen in fit: "
            f"missing {missing}, unexpected {extra}.{why} Pass a frame with "
            "the columns it was fit on, in that order (private[list("
            "mechanism.feature_names_in_)]), or fit it on the reference's "
            f"columns the private data has.{remedy}")

    def plan(self, X=None, *, n: int | None = None) -> Plan:
        """Return the noise law and certificate for releasing X, drawing no noise.

        Only the number of records n of X is used (n is public), so a plan spends
        no privacy. Pass ``n=`` instead of X to plan for a size.
        """
        check_is_fitted(self)
        if n is None:
            if X is None:
                raise InvalidParameterError("plan needs the private data X or n=.")
            frame, backend = self._private_frame(X)
            n = backend.row_count(frame, what="the private data")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise InvalidParameterError(f"n must be a positive int; got {n!r}.")
        return self._cached_plan(int(n))

    def release(self, X, *, random_state=None) -> Release:
        """Release the noisy statistics of the private data X.

        Parameters
        ----------
        X : DataFrame
            The private data.
        random_state : None, int or Generator, default=None
            The noise of this release alone (a ledger gives each release its
            own stream); None draws from the mechanism's ``random_state``.

        Returns
        -------
        Release
            The noisy values with their certificate, and whether the noise
            came from a seed (``seeded``). The exact statistic is never
            returned or stored.
        """
        frame, backend = self._private_frame(X)
        if random_state is None:
            source, seeded = self._noise_source, self.random_state is not None
        else:
            source = check_random_state(random_state,
                                        owner=type(self).__name__)
            seeded = True
        plan, noisy, clamped = self._noisy_statistic(frame, backend, source)
        names = self.query_.names(self.columns_)
        values = pd.Series(noisy, index=names, name=self.query_.statistic)
        if clamped is None:
            return Release.of(plan, values, seeded=seeded)
        release = Release.of(plan, pd.Series(clamped, index=names,
                                             name=values.name),
                             seeded=seeded)
        return dataclasses.replace(
            release, unclamped=values,
            certified_by=release.certified_by.then("post-processed.clamped"))

    def _noisy_statistic(self, frame, backend, source):
        """Return (plan, noisy values, clamped values or None) of one frame.

        The one computation of a release's values, shared by ``release`` and
        ``release_values``: the clipped exact statistic, the plan for its n,
        the noise drawn from ``source``, then each value clamped to what its
        statistic can take (post-processing of the noisy value, free, and
        never further from the true one); None when no range binds.
        """
        n, exact = self._exact_statistic(frame, backend)
        plan = self._cached_plan(n)
        noisy = plan.noise_law.perturb(exact, source)
        ranges = self.query_.output_ranges(self.columns_, n,
                                           self.clipping_.as_dict())
        if ranges is None or not np.any(np.isfinite(ranges)):
            return plan, noisy, None
        return plan, noisy, np.clip(noisy, *ranges)

    def release_values(self, frames) -> np.ndarray:
        """Return the released values of many private frames, one row each.

        Row i holds what ``self.release(frames[i]).values`` would hold, drawn
        in the same order from the mechanism's ``random_state`` (a seeded
        mechanism gives the very same values as those releases in turn): the
        same clipping, statistic, plan, noise and clamp, by the same code.
        Only the bookkeeping is skipped (no Release or per-frame checks: the
        frames are checked once, together). Meant for attacks, which release
        hundreds of small datasets; each value still spends the privacy of a
        release of its frame.

        Parameters
        ----------
        frames : sequence of DataFrame
            Private datasets with the columns seen in fit.

        Returns
        -------
        ndarray of shape (len(frames), n_statistics)

        Examples
        --------
        >>> import skattr
        >>> from skattr.datasets import make_hospital
        >>> secret = skattr.Secret.proportion("gender", "female",
        ...                                   pairs=[(0.4, 0.6)])
        >>> mech = skattr.mechanisms.AttributePrivateGaussian(
        ...     query=skattr.Query.mean(["weight"]), secret=secret,
        ...     law="gaussian", random_state=0).fit(make_hospital(2000))
        >>> shadows = [make_hospital(100, random_state=s) for s in range(5)]
        >>> mech.release_values(shadows).shape
        (5, 1)

        Notes
        -----
        Lazy (Dask) frames, frames that differ in columns or dtypes (a
        categorical's categories included) or are empty, and a mechanism
        whose ``release`` is overridden (by a subclass or on the instance),
        are released one frame at a time with ``release``, with its checks
        and messages.
        """
        frames = list(frames)
        check_is_fitted(self)
        if not frames:
            return np.empty((0, len(self.query_.names(self.columns_))))
        per_frame = (type(self).release is not BaseMechanism.release
                     or "release" in vars(self)
                     or not all(isinstance(f, pd.DataFrame) for f in frames)
                     or any(len(f) == 0 or list(f.columns) != list(
                         frames[0].columns) or not f.dtypes.equals(
                             frames[0].dtypes) for f in frames))
        if per_frame:
            with warnings_once():
                return np.vstack([self.release(f).values.to_numpy()
                                  for f in frames])
        # One check of every row at once (columns, dtypes, secrets); each
        # frame is then one of its parts, and a warning is said once.
        _, backend = self._private_frame(pd.concat(frames))
        rows = []
        with warnings_once():
            for frame in frames:
                _, noisy, clamped = self._noisy_statistic(
                    frame, backend, self._noise_source)
                rows.append(noisy if clamped is None else clamped)
        return np.vstack(rows)

    def _exact_statistic(self, frame, backend) -> tuple[int, np.ndarray]:
        """Return (n, F(X)), the released columns clipped (never kept)."""
        return backend.statistic(frame, self.query_, self.columns_,
                                 secrets=self.secrets_,
                                 clip=self.clipping_.as_dict())

    def _start_releases(self) -> None:
        """Reset the fitted state that releases use: the plan cache, the noise.

        ``random_state`` follows skattr's one rule
        (:func:`skattr._random.check_random_state`): None draws from the
        operating system's entropy; an int seeds one Generator per fit, so the
        sequence of releases after a fit is reproducible while successive
        releases draw fresh noise (identical noise on two datasets would reveal
        their difference exactly); a Generator is shared and advanced.
        """
        self._plans = {}
        self._shared_plans = None     # a refit shares no earlier fit's plans
        self._noise_source = check_random_state(
            self.random_state, owner=type(self).__name__)

    def transform(self, X):
        """Return the noisy statistics of X as one row (a frame with set_output).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_records, n_columns)
            The private data.

        Returns
        -------
        ndarray of shape (1, n_statistics), or DataFrame
            One row: an aggregate release, not one row per record.
        """
        values = self.release(X).values
        if self._output_kind() == "pandas":
            return pd.DataFrame([values.to_numpy()],
                                columns=self.get_feature_names_out(),
                                index=["release"])
        return values.to_numpy()[None, :]

    def fit_transform(self, X, y=None, **fit_params):
        """Fit on X and release X's statistics: Theta fit on the private data.

        This is ``fit(X).transform(X)``; because Theta then comes from the
        private data itself, a ``PrivacyLeakWarning`` is emitted.
        """
        warnings.warn(
            "fit_transform fits Theta on the data it releases, which can leak the "
            "very property the secret hides; fit on reference data and call "
            "transform on the private data instead.",
            PrivacyLeakWarning,
            stacklevel=2,
        )
        return self.fit(X, y, **fit_params).transform(X)

    def set_output(self, *, transform=None):
        """Choose the container ``transform`` returns: "default" or "pandas".

        Parameters
        ----------
        transform : {"default", "pandas"} or None
            None leaves the configuration unchanged.

        Returns
        -------
        self : object
            The mechanism.
        """
        if transform is None:
            return self
        if transform not in ("default", "pandas"):
            raise InvalidParameterError(
                f"set_output(transform=...) must be 'default' or 'pandas'; got "
                f"{transform!r}."
            )
        self._output_config = transform
        return self

    def _output_kind(self) -> str:
        kind = getattr(self, "_output_config", "default")
        if kind == "default":
            kind = get_config().get("transform_output", "default")
        return kind

    def get_feature_names_out(self, input_features=None):
        """Names of the released statistics.

        Parameters
        ----------
        input_features : None
            Ignored; the output names are the released columns.

        Returns
        -------
        ndarray of str
            One name per statistic.
        """
        check_is_fitted(self)
        return np.asarray([str(c) for c in self.query_.names(self.columns_)],
                          dtype=object)

    def score(self, X, y=None) -> float:
        """Return the utility of a release on X: minus its expected l2 error.

        Only n = len(X) is used, so scoring (e.g. inside ``GridSearchCV``)
        spends no privacy on X. Under dataset privacy the pairs are read on
        the grid of n records (:meth:`~skattr.Secret.grid_pairs`), whatever
        a cross-validation fold's size. For a score at the release's own
        size, use :func:`skattr.model_selection.expected_error_scorer`.

        Parameters
        ----------
        X : DataFrame or array-like
            The data a release would be made on.
        y : None
            Ignored.

        Returns
        -------
        float
            ``-plan(X).expected_error``; higher is better.
        """
        return -self.plan(X).expected_error

    def to_json(self) -> str:
        """Return the mechanism as JSON text (no pickle, no code): see ``from_json``.

        The text holds the parameters and, once fitted, everything ``fit``
        learned (Theta included), with a schema version and a SHA-256 content
        hash; floats, arrays and labels are kept exactly. The noise generator
        is not saved: a loaded mechanism starts its releases as after ``fit``.

        Returns
        -------
        str

        Raises
        ------
        PersistenceError
            The mechanism holds a Python function (a lambda predicate: use
            :mod:`skattr.predicates`) or a type skattr does not save.

        See Also
        --------
        from_json : Load the text back.
        """
        return to_json(self)

    @classmethod
    def from_json(cls, text: str):
        """Load a mechanism saved by :meth:`to_json`, checked before it is built.

        A loaded fitted mechanism gives the plans of the saved one; its noise
        generator restarts as after ``fit``, so with an integer
        ``random_state`` its releases are those of the mechanism freshly
        fitted. Only skattr's own classes are built, looked up in an
        allowlist; no module named in the text is imported.

        Parameters
        ----------
        text : str
            What :meth:`to_json` returned.

        Returns
        -------
        BaseMechanism
            An instance of this class (or, called on ``BaseMechanism``, of
            any mechanism).

        Raises
        ------
        PersistenceError
            The text is not valid JSON or not a skattr file, has another
            schema version, does not match its content hash (corrupted or
            edited), names a type outside skattr's allowlist, or holds another
            class.

        Examples
        --------
        >>> import skattr
        >>> from skattr.datasets import make_hospital
        >>> from skattr.mechanisms import OptimalGaussian
        >>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
        >>> mech = OptimalGaussian(query=skattr.Query.mean(["weight"]), secret=secret,
        ...                        law="gaussian", random_state=0)
        >>> mech.fit(make_hospital(2000, random_state=0))  # doctest: +ELLIPSIS
        OptimalGaussian(...)
        >>> text = mech.to_json()
        >>> loaded = OptimalGaussian.from_json(text)
        >>> private = make_hospital(200, random_state=1)
        >>> bool(loaded.release(private).values.equals(mech.release(private).values))
        True
        """
        return from_json(text, cls)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = True
        tags.non_deterministic = self.random_state is None
        tags.input_tags.allow_nan = False
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags
