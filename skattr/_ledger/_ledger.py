"""A privacy ledger: the joint guarantee of every release made on one dataset.

Pufferfish privacy does not compose: two statistics each certified alone can
reveal the secret together. The ledger certifies the *joint* release of
everything it has released (:mod:`skattr._ledger._joint`), and refuses a
release that would take the joint guarantee over its budget before any
noise is drawn.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from typing import Any

import numpy as np
import pandas as pd

from skattr._ledger._bounds import clipping_policy, release_bounds, release_ranges
from skattr._ledger._choice import check_noise, release_mechanism
from skattr._ledger._entry import LedgerEntry
from skattr._ledger._files import storable_statistic
from skattr._ledger._fitting import FitsToBudget
from skattr._ledger._joint import (
    BUDGET_RTOL,
    GaussianJoint,
    LaplaceJoint,
    planned_under_records,
    records_theta,
    single_statistics,
)
from skattr._ledger._kept import Kept
from skattr._ledger._mixed import mixed_epsilon
from skattr._ledger._reference import opened_reference
from skattr._ledger._verbs import LedgerVerbs
from skattr._query import StackedQuery
from skattr._random import base_seed, check_random_state
from skattr._release import Plan, Release
from skattr._secret import Secret
from skattr._verbs import called, statistic_query
from skattr.backends import (
    backend_of,
    is_frame,
    one_reading,
    release_frames,
)
from skattr.exceptions import (
    BudgetExceededError,
    InvalidParameterError,
    NotCertifiableError,
)
from skattr.laws import AssumeGaussian
from skattr.theta._spec import resolve_theta
from skattr.utils._param_validation import as_called, validate_parameter_constraints
from skattr.utils._stack import warnings_once

__all__ = ["Ledger", "LedgerEntry", "joint_noise"]

# The stream of a seeded ledger's noise, apart from other uses of its seed.
_NOISE_STREAM = 0x1ED6E5


def joint_noise(cls) -> str | None:
    """How a ledger certifies a mechanism's releases jointly, or None.

    ``"gaussian"``: Gaussian noise calibrated to a Gaussian or exact law of
    F, certified jointly from the statistics' joint law. ``"laplace"``:
    Laplace noise on each value calibrated to the resampling model (the
    Wasserstein mechanisms), certified jointly through couplings. Anything
    else (the differential-privacy baselines, the Markov quilt mechanisms,
    Laplace noise calibrated to a Gaussian law) is refused.
    """
    if not cls.auto_candidate:
        return None
    if cls.noise == "gaussian" and {"gaussian", "exact"} & set(cls.calibrates):
        return "gaussian"
    if cls.noise == "laplace" and "resampling" in cls.calibrates:
        return "laplace"
    return None


class _Composed:
    """The registered mechanisms a ledger certifies jointly with one noise."""

    def __init__(self, noise: str):
        self.noise = noise

    def __get__(self, obj, owner=None) -> tuple:
        from skattr.mechanisms import MECHANISMS

        return tuple(name for name, cls in MECHANISMS.items()
                     if joint_noise(cls) == self.noise)


#: From this many Laplace releases (the refused one counted), a refusal
#: says Gaussian noise would have served the budget better: about where it
#: takes less noise at the same total (docs/many_releases.rst).
_MANY = 5


class Ledger(LedgerVerbs, Kept, FitsToBudget):
    """Every release made on one private dataset, certified jointly, with a budget.

    Open one with ``df.attrpriv.ledger(secret=..., reference=...,
    budget=(epsilon, delta))``. Its ``mean``, ``sum``, ``count`` and
    ``proportion`` take the accessor's keywords (``epsilon``, ``delta``,
    ``mechanism``, ``calibration``, ...); the secret, the reference data and
    Theta are the ledger's. ``epsilon="remaining"`` gives a release the
    largest own epsilon whose joint epsilon stays within the budget. Each
    release is calibrated alone as usual, then the joint guarantee of every
    release so far, this one included, is certified from the joint law; if
    it exceeds the budget the release is refused with
    :class:`~skattr.exceptions.BudgetExceededError` before any noise is
    drawn.

    Parameters
    ----------
    data : DataFrame
        The private dataset (never modified).
    secret : Secret
        The one secret every release hides.
    reference : DataFrame, Dask DataFrame or None
        Public reference data for Theta (None with an ``ExpertTheta``). A
        Dask frame is collected to the driver once, every column.
    budget : (epsilon, delta)
        The joint guarantee never to exceed. The joint epsilon is computed
        at this delta.
    theta : str or Theta object, default="auto"
        Theta of every release and of the joint law. A
        :class:`~skattr.theta.Resample` also seeds the draws of the joint law
        of different Laplace-noise statistics (its ``random_state``; None
        draws one seed when the ledger first needs it, kept in the file).
    law : {"auto", "exact", "gaussian"} or None, default=None ("auto")
        The law of every release and of the joint release. ``"gaussian"``
        takes the statistics' joint law as Gaussian with Theta's joint
        moments (an assumption every release records); it is needed to
        certify several distinct statistics with Gaussian noise together.
        Otherwise Gaussian-noise releases of one statistic only (a count, or
        the mean or sum of one integer column: its exact law) are certified
        jointly, exactly; Laplace-noise releases (the default) of different
        statistics are certified over the reference's bands.
    random_state : None, int or Generator, default=None
        The noise of every release; None draws from the operating system
        (the default, and the only choice for real releases). A seed is for
        experiments: each release draws its own stream of it, keyed by the
        release's index, so a ledger reloaded with the same seed never
        replays a draw; a ledger kept in a store or loaded from a file also
        keys it by a nonce drawn from the operating system and kept in the
        release's record, so that a store rolled back to an older copy
        never draws a forgotten release's noise again. A seed thus
        reproduces a ledger made and used in one process (the same
        releases in the same order draw the same noise), and each kept
        release's noise from its record, not the noise a kept ledger will
        draw. A Generator gives one seed, drawn when the ledger is opened.
        Each release says whether it was seeded (``seeded``).
    bounds : "robust", "reference", dict, sequence of (low, high), \
(low, high) or None, default="robust"
        The clipping of every release and of the joint law (the mechanisms'
        ``bounds=``; one policy per ledger, so that a column is one statistic
        whichever release reads it): each released column clipped to the
        reference data's range within its far-out fences, to its whole range
        (``"reference"``), or to declared ranges; None clips nothing. A store
        resumed keeps the policy it recorded (``"reference"`` before 0.3).
        A release may declare the range of a column not released yet
        (``ledger.mean(["height"], bounds={"height": (100, 220)})``), fixed
        from then on (:mod:`skattr._ledger._bounds`); a column released
        keeps its range.
    noise : {"auto", "laplace", "gaussian"}, default="auto"
        The noise of every release that names no ``mechanism=``.
        ``"gaussian"`` (apgm, each value its own scale): the joint epsilon
        grows about as the square root of the releases' number, so a ledger
        of many releases, or of small epsilons each, takes less noise for its
        budget (five releases at epsilon 1 each on the hospital: 3.30 against
        5.24), each release alone up to 1.6x noisier at its epsilon.
        ``"laplace"`` (approx-wasserstein): the less noisy for a few releases
        near epsilon 1 or above; their epsilons about add up. ``"auto"``:
        Laplace noise, or Gaussian noise on sums, means and counts when the
        ledger's law is a stated model or the statistic was released with it
        before. A release's own ``mechanism=`` (or ``allocate=``, which is
        apgm's) is always taken. Kept in the ledger's file and store
        (docs/many_releases.rst, "Laplace or Gaussian noise in a ledger").

    Attributes
    ----------
    releases : list of LedgerEntry
        The releases, in order.

    Notes
    -----
    With no options every release is the accessor's default one
    (``approx-wasserstein``, Laplace noise over the reference's confidence
    bands). Laplace-noise releases of the Wasserstein mechanisms are
    certified jointly: one statistic released again and again by one
    coupling of its two laws, which serves every copy, so their epsilons
    add; different statistics (means, sums, counts, medians, quantiles,
    stds) from their joint law over the reference's bands, or under the
    resampling Theta (open the ledger with
    ``theta=skattr.theta.Resample(random_state=...)`` to fix its draws)
    exactly when the datasets can be enumerated and otherwise from one drawn
    coupling. Gaussian-noise releases (``"apgm"``, the default for linear
    statistics under ``law="gaussian"`` or ``"exact"``, the Expected Value
    family, ``"optimal"``; ``mechanism="auto"`` picks the one of least
    expected error among them on sums, means and counts) are certified from
    their joint law; in a ledger of the default law and Theta, apgm's
    releases of several statistics, or of medians, quantiles and stds,
    through the bands' one coupling (:mod:`skattr._ledger._mixed`, with no
    Laplace release). Laplace and Gaussian noise on one dataset are
    certified together through the bands' one coupling
    (:mod:`skattr._ledger._mixed`: dearer than either alone, ``ledger.plan``
    shows it first); any other mechanism is refused
    (fail closed). The joint certificate of different statistics is never a
    sum of epsilons: see the module notes of ``skattr/_ledger/_joint.py``.

    Examples
    --------
    >>> import skattr
    >>> from skattr.datasets import make_hospital
    >>> private = make_hospital(300, random_state=1)
    >>> reference = make_hospital(3000, random_state=0)
    >>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    >>> ledger = private.attrpriv.ledger(secret=secret, reference=reference,
    ...                                  budget=(2.0, 1e-3), law="gaussian",
    ...                                  random_state=0)
    >>> rel = ledger.mean(["weight"], epsilon=1.0)
    >>> round(ledger.spent[0], 2) <= 1.0
    True
    """

    #: How the user calls a ledger's methods, as its errors name them.
    called_as = "ledger"

    #: Gaussian-noise mechanisms whose releases the ledger certifies jointly
    #: (read off the registry: :func:`joint_noise`).
    GAUSSIAN = _Composed("gaussian")
    #: Laplace-noise mechanisms, certified jointly among themselves.
    LAPLACE = _Composed("laplace")

    def __init__(self, data: pd.DataFrame, *, secret, reference=None, budget,
                 theta="auto", law=None, random_state=None,
                 bounds="robust", noise="auto"):
        from skattr.mechanisms import BaseMechanism

        validate_parameter_constraints(
            {"bounds": BaseMechanism._parameter_constraints["bounds"]},
            {"bounds": bounds}, "Ledger")

        reference = opened_reference(reference, data)
        if not is_frame(data):
            raise InvalidParameterError(
                f"A ledger is opened on a pandas or Dask DataFrame; got "
                f"{type(data).__name__}.")
        if not isinstance(secret, Secret):
            raise InvalidParameterError(
                "A ledger hides one secret: pass secret=skattr.Secret...(...).")
        try:
            eps, delta = budget
            eps, delta = float(eps), float(delta)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(
                f"The 'budget' parameter of Ledger must be a pair (epsilon, "
                f"delta). Got {budget!r} instead.") from exc
        if not (eps > 0 and 0 < delta < 1):
            raise InvalidParameterError(
                f"The 'budget' parameter of Ledger must be a pair (epsilon, "
                f"delta) with epsilon > 0 and delta in (0, 1). Got {budget!r} "
                "instead.")
        noise = check_noise(noise)
        law = "auto" if law is None else law
        if law not in ("auto", "exact", "gaussian"):
            raise InvalidParameterError(
                f"The 'law' parameter of Ledger must be 'auto', 'exact' or "
                f"'gaussian'. Got {law!r} instead.")
        if getattr(theta, "grid_shape", None) is not None:
            raise NotCertifiableError(
                "Theta stated as parameter ranges (ExpertTheta.from_ranges) is "
                "certified on its grid only when each requirement peaks at a "
                "grid line's end, which the ledger's joint epsilon does not "
                "check; state Theta as a finite set of models.")
        self._data = data
        # n is public: a lazy frame's rows are counted once, here. Every
        # pass over it from this count on is one reading: a lazy frame that
        # changes while the ledger is open is refused, nothing released.
        with one_reading(since="since the ledger was opened") as reading:
            self._reading = reading
            self._n = backend_of(data).row_count(data, what="the private data")
        self.secret = secret
        self.reference = reference
        self.budget = (eps, delta)
        self.theta = theta
        self.law = law
        self.random_state = random_state
        self.bounds = bounds
        self.noise = noise
        self.releases: list[LedgerEntry] = []

        # Every release's noise: the operating system's entropy, or its own
        # stream of this seed (by the release's index).
        self._noise_seed = base_seed(random_state, owner="Ledger")
        self._columns: set = set()
        # The ranges the release being planned declares (bounds=), by column.
        self._pending_bounds: dict = {}
        # The joint certificates: of Gaussian-noise releases, from their
        # statistics' joint law; of Laplace-noise releases, from couplings.
        self._gaussian = GaussianJoint(self)
        self._laplace = LaplaceJoint(self)
        # The bound of each joint epsilon computed since the last release.
        self._bounds: dict = {}
        # Fitted estimators by statistic and parameters but epsilon (_build).
        self._fitted: dict = {}
        # One release at a time in this process (threads), and the store
        # that keeps the ledger between processes (Ledger.open), if any.
        self._lock = threading.RLock()
        self._store = None
        self._anchor = None
        self._stored_header = None
        # The digest of the last release the store holds for this ledger.
        self._last_stored = None
        # Whether the releases so far were loaded from a file or a store.
        self._loaded = False

    def __repr__(self) -> str:
        eps, delta = self.spent
        noise = "" if self.noise == "auto" else f", noise={self.noise!r}"
        return (f"Ledger({len(self.releases)} releases, spent ({eps:.4g}, "
                f"{delta:g}) of ({self.budget[0]:g}, {self.budget[1]:g})"
                f"{noise})")

    # ------------------------------------------------------------ accounting
    @property
    def spent(self) -> tuple[float, float]:
        """The joint (epsilon, delta) of everything released (0 when nothing is)."""
        if not self.releases:
            return 0.0, 0.0
        last = self.releases[-1]
        return (last.joint_epsilon,
                self.budget[1] if last.joint_delta is None else last.joint_delta)

    @property
    def remaining(self) -> float:
        """Epsilon left before the budget (the joint epsilon can grow by less)."""
        return max(self.budget[0] - self.spent[0], 0.0)

    def in_plain_words(self) -> str:
        """Return the joint guarantee of the releases so far in plain sentences.

        What is hidden, the factor e^epsilon by which all the releases
        together can move an observer's odds (``spent``), the probability
        delta that they move more, the budget the ledger keeps and what the
        guarantee rests on.
        """
        from skattr._plain import plain_ledger

        return plain_ledger(self)

    def summary(self) -> pd.DataFrame:
        """Return a table of the releases: values, own guarantee, joint epsilon.

        "joint bound" names the bound that gave each joint epsilon
        (:data:`skattr._plain.JOINT_BOUNDS`; empty when loaded from a file).
        """
        rows = []
        for i, entry in enumerate(self.releases):
            r = entry.as_record()
            rows.append({
                "release": i + 1,
                "statistics": ", ".join(map(str, r["values"])),
                "values": ", ".join(f"{v:.6g}" for v in r["values"].values()),
                "mechanism": r["mechanism"],
                "own (epsilon, delta)": f"({r['epsilon']:g}, {r['delta']:g})",
                "noise sd": ", ".join(
                    f"{s:.4g}" for s in (
                        np.sqrt(np.diag(entry.noise_cov)) if not entry.laplace
                        else math.sqrt(2) * np.asarray(entry.laplace.get(
                            "scales", [entry.laplace.get("scale", math.nan)]
                            * len(r["values"])), dtype=float))),
                "joint epsilon": entry.joint_epsilon,
                "joint bound": entry.joint_bound or "",
            })
        return pd.DataFrame(rows, columns=[
            "release", "statistics", "values", "mechanism",
            "own (epsilon, delta)", "noise sd", "joint epsilon",
            "joint bound"])

    def plan(self, columns=None, *, statistic="mean", value=None,
             **params) -> tuple[Plan, float]:
        """Return a release's plan and the joint epsilon it would bring; spends nothing.

        Returns
        -------
        plan : Plan
            The release's own noise and certificate.
        joint_epsilon : float
            The joint epsilon (at the budget's delta) of every release so far
            and this one; above ``budget[0]`` the release would be refused.
        """
        with one_reading(self._reading), self._lock, warnings_once(), as_called(
                called("ledger.plan", params),
                {"columns", "statistic", "value", *params}):
            self.refresh()          # the store's releases, then the fit
            found = self._planned_joint(
                statistic_query(statistic, columns, value,
                                params.pop("q", None)), params)
        return found[1], found[-1]

    def _planned(self, query, params):
        # A lazy frame: before any fit.
        backend_of(self._data).check_releasable(self._data, query)
        law = params.get("law")
        if (isinstance(law, AssumeGaussian) and self.law == "gaussian"
                and law.sampling == AssumeGaussian().sampling):
            # The ledger's Gaussian model, its covariance option chosen per
            # release (0.2's covariances=).
            pass
        elif "law" in params:
            raise InvalidParameterError(
                "law= is the ledger's own; open another ledger for another "
                "law (a ledger of law='gaussian' takes law=AssumeGaussian("
                "covariances=...) per release).")
        for key in ("secret", "reference", "theta", "sampling"):
            if key in params:
                raise InvalidParameterError(
                    f"{key}= is the ledger's own; open another ledger for "
                    f"another {key}.")
        if "random_state" in params:
            raise InvalidParameterError(
                "random_state= is the ledger's own (one noise source for every "
                "release); pass it when opening the ledger.")
        if params.get("relaxation") is not None:
            # The joint guarantee is computed from the model's laws; the gap
            # a relaxation allows between them and the data's is not carried
            # across releases (found by review: a release certified at 1.2
            # counted 1.0 in the joint).
            raise NotCertifiableError(
                "relaxation= is not available in a ledger: the joint "
                "guarantee is computed from the model's laws, and a "
                "relaxation's gap between the model and the data is not "
                "accounted across releases. Release the relaxed statistic on "
                "its own (df.attrpriv.mean(..., relaxation=...)).")
        mechanism = release_mechanism(self, query, params)
        # The columns the release reads, from each frame alike (issue 42).
        frames = release_frames(query, self.secret, self._data, self.reference,
                                bounds=self.bounds)
        policy = clipping_policy(self, query, query.resolve_columns(
            frames[self.reference is not None],
            exclude=[self.secret.column]))
        if mechanism in self.LAPLACE:
            return self._planned_laplace(query, mechanism, params, policy,
                                         frames)
        if mechanism not in self.GAUSSIAN and mechanism != "auto":
            raise NotCertifiableError(
                f"The ledger certifies releases of Gaussian-noise mechanisms "
                f"jointly ({', '.join(self.GAUSSIAN)}); mechanism={mechanism!r} "
                "has no joint certificate here, so it is refused rather than "
                "counted by a sum of epsilons.")
        # "auto": the registry's choice among the Gaussian-noise mechanisms,
        # the least expected error.
        est, plan = self._build(query, mechanism, params, policy, frames)
        if plan.noise_law.kind != "gaussian" and not plan.noise_law.is_zero:
            raise NotCertifiableError(
                f"mechanism={mechanism!r} planned {plan.noise_law.kind} noise, "
                "which the ledger does not certify jointly.")
        statistics = single_statistics(est.query_, self._n)
        return est, plan, statistics, np.asarray(plan.noise_law.covariance,
                                                 dtype=float), None

    def _released_with_gaussian(self, query) -> bool:
        """Whether every value of a linear query was released with Gaussian noise."""
        released = {base for e in self.releases if not e.laplace
                    for base, _ in e.statistics}
        parts = query.parts if isinstance(query, StackedQuery) else (query,)
        if not released or any(p.columns is None for p in parts):
            return False          # every column: not named, so not known
        return {base for base, _ in single_statistics(query, self._n)
                } <= released

    def _planned_laplace(self, query, mechanism: str, params: dict, policy,
                         frames):
        """Plan a Wasserstein-mechanism release (Laplace noise on each value)."""
        est, plan = self._build(query, mechanism, params, policy, frames)
        law = plan.noise_law
        if not (law.is_zero or (law.kind == "laplace" and np.array_equal(
                law.basis, np.diag(np.diag(law.basis))))):
            raise NotCertifiableError(
                f"mechanism={mechanism!r} planned {law.kind} noise that is not "
                "independent Laplace noise on each value; the ledger does not "
                "certify it jointly.")
        # The same statistic under the same Theta: the mechanism, the query
        # and every parameter but the privacy ones (and the progress bar,
        # which changes nothing and is not stored).
        others = {k: v for k, v in sorted(params.items())
                  if k not in ("epsilon", "delta", "progress")}
        if policy is not self.bounds:
            # Columns whose range a release fixed: the statistic is the one
            # clipped so (the ledger's own policy is implied otherwise).
            others["bounds"] = release_ranges(est)
        key = f"{mechanism} | {est.query_!r} | {others!r}"
        # The part of delta that is the chance drawn laws misjudge a tail:
        # independent between releases (each fit draws anew), so it adds up.
        from skattr.laws import ResamplingLaw

        resampled = isinstance(est.law_, ResamplingLaw)
        beta = (est.law_.laws[0].failure_share * float(plan.delta)
                if resampled else 0.0)
        laplace = {"key": key, "epsilon": float(plan.epsilon),
                   "delta": float(plan.delta), "beta": beta,
                   # Each value's noise scale; the least weighs the joint's
                   # moves (a larger weight: a larger privacy loss).
                   "scale": (0.0 if law.is_zero
                             else float(np.min(law.scales))),
                   "scales": ([0.0] * law.k if law.is_zero
                              else law.scales.tolist()),
                   "resample": resampled,
                   "coupled": planned_under_records(est),
                   "privacy": est.privacy,
                   "statistic": storable_statistic(est.query_, est.columns_)}
        self._laplace.queries.setdefault(key, (est.query_, est.columns_))
        return est, plan, (), np.zeros((0, 0)), laplace

    def _build(self, query, mechanism: str, params: dict, policy, frames):
        """Fit the release's estimator with the ledger's secret, Theta and noise.

        ``policy`` is the ``bounds=`` that clips the query's columns as the
        ledger does (:func:`~skattr._ledger._bounds.clipping_policy`);
        ``frames`` the private and reference data's columns it reads.
        """
        from skattr.mechanisms import MECHANISMS

        # The Wasserstein mechanisms take no law= (exact or resampled laws).
        params = dict(params)
        # A named mechanism is fitted once per statistic and parameters but
        # epsilon (Theta and its bounds do not depend on epsilon), and
        # replanned: releases of one statistic again, and epsilon="remaining"
        # trying many epsilons, refit nothing ("auto" may choose another
        # mechanism at another epsilon, so it is rebuilt). Shared draws make
        # failure events one event: counted apart, conservative.
        memo = None
        if mechanism != "auto" and "epsilon" in params:
            memo = (repr(query), mechanism, repr(policy),
                    repr(sorted((k, v) for k, v in params.items()
                                if k != "epsilon")))
            if memo in self._fitted:
                est = self._fitted[memo]
                est.set_params(epsilon=params["epsilon"])
                return est, est.plan(n=self._n)
        law = params.pop("law", self.law)
        law = {} if mechanism in self.LAPLACE else {"law": law}
        est = MECHANISMS.build(
            query, secret=self.secret, reference=frames[1], data=frames[0],
            n_rows=self._n, mechanism=mechanism, bounds=policy,
            among=lambda cls: joint_noise(cls) == "gaussian",
            theta=records_theta(self, query, mechanism, query.resolve_columns(
                frames[self.reference is not None],
                exclude=[self.secret.column])),
            random_state=self._noise_source(), **law, **params)
        if memo is not None:
            self._fitted[memo] = est
        return est, est.plan(n=self._n)

    def _noise_source(self) -> int | None:
        """Return the seed estimators are built with (each release has its own)."""
        return self._noise_seed

    def _noise_of(self, index: int, nonce: int | None = None):
        """Return release ``index``'s own noise stream (None: fresh entropy).

        A seeded ledger keys a stream by the release's index, so a ledger
        reloaded with the same seed draws new noise for its new releases,
        never the noise of its earlier ones again; and, with the release's
        ``nonce`` (:meth:`_nonce`), by that too, so that a store rolled back
        to an older copy does not draw a forgotten release's noise again.
        The seed and a release's record give its noise again.
        """
        if self._noise_seed is None:
            return None
        # The marker 1 before the nonce: numpy pads a seed with zero words,
        # so a nonce 0 alone would be the stream without one.
        stream = ((_NOISE_STREAM, index) if nonce is None
                  else (_NOISE_STREAM, index, 1, nonce))
        return check_random_state(self._noise_seed, stream=stream)

    def _planned_joint(self, query, params) -> tuple:
        """Plan a release and its joint epsilon; ``epsilon="remaining"`` fits it.

        Returns (est, plan, statistics, noise_cov, laplace, joint).
        """
        params = dict(params)
        if "bounds" in params:
            # Ranges for columns not released yet, fixed once released.
            self._pending_bounds = release_bounds(self, query,
                                                  params.pop("bounds"))
        try:
            return self._planned_joint_now(query, params)
        finally:
            self._pending_bounds = {}

    def _planned_joint_now(self, query, params) -> tuple:
        if params.get("secure"):
            # The joint law is computed for continuous noise; the grid's
            # widening of each release (skattr.noise._discrete) is not
            # accounted jointly, so no joint certificate would be exact.
            raise NotCertifiableError(
                "secure=True is not available in a ledger: its joint guarantee "
                "is computed for continuous noise. Release a secure statistic "
                "on its own (df.attrpriv.mean(..., secure=True)), or drop "
                "secure=True here.")
        if isinstance(params.get("epsilon"), str):
            if params["epsilon"] != "remaining":
                raise InvalidParameterError(
                    f"The 'epsilon' parameter of Ledger must be a positive "
                    f"number, or 'remaining' for the largest the budget "
                    f"allows. Got {params['epsilon']!r} instead.")
            return self._fitted_to_budget(query, params)
        found = self._planned(query, params)
        return (*found, self._joint_epsilon(found[0], *found[2:]))

    def _release(self, query, **params: Any) -> Release:
        """Release ``query`` if the joint guarantee stays within the budget.

        Every verb's call (:mod:`skattr._ledger._verbs`): its ``**params``
        are theirs.

        Planned outside the store's lock, then one transaction of the
        store, when the ledger has one (:meth:`_committed`): the releases
        other processes made are read in, the budget checked again (the
        release planned again if they moved the store), and the release
        written and committed before it is returned.
        """
        # One release: its fit, plans and noise say each warning once.
        with one_reading(self._reading), warnings_once():
            return self._committed(lambda: self._planned_joint(query, params),
                                   self._release_planned)

    def _release_planned(self, planned) -> Release:
        est, plan, statistics, noise_cov, laplace, joint = planned
        if joint > self.budget[0] * (1 + BUDGET_RTOL):
            spent = self.spent[0]
            if self._exhausted():
                raise self._exhausted_error()
            raise BudgetExceededError(
                f"Refused before any noise was drawn: with this release the "
                f"joint guarantee of the {len(self.releases) + 1} releases "
                f"would be epsilon = {joint:.4g} at delta = {self.budget[1]:g}, "
                f"over the budget epsilon = {self.budget[0]:g}. Spent so far: "
                f"epsilon = {spent:.4g} (remaining {self.remaining:.4g}). "
                "Release it with a smaller epsilon (more noise)"
                + (" or a smaller delta (the releases' deltas add up past the "
                   "budget's)" if math.isinf(joint) and self._laplace_only()
                   else "") + ", or release fewer statistics."
                + (" A ledger meant for many releases (five or more, or "
                   "small epsilons each) takes less noise for its budget with "
                   "Gaussian noise on every release, chosen when it is "
                   "opened (noise='gaussian'): the releases made stay "
                   "spent, and another ledger of the same data would not "
                   "renew the budget (docs/many_releases.rst, 'Laplace or "
                   "Gaussian noise in a ledger')."
                   if self.gaussian_over_bands and laplace
                   and self.noise != "gaussian"
                   and len(self.releases) >= _MANY - 1 and self._laplace_only()
                   else ""))
        nonce = self._nonce()
        # The private data's columns as they were planned (release_frames):
        # feature_names_in_ is set only when every label is a string.
        data = release_frames(est.query, self.secret, self._data,
                              self.reference, bounds=self.bounds)[0]
        release = dataclasses.replace(est.release(data, random_state=self._noise_of(
            len(self.releases), nonce)), in_ledger=True)
        self.releases.append(LedgerEntry(
            release, statistics, noise_cov, joint, laplace=laplace,
            joint_delta=(None if laplace is None or not self._laplace_only()
                         else self._laplace.joint_delta(
                             [e.laplace for e in self.releases] + [laplace])),
            nonce=nonce, joint_bound=self._bounds.get(float(joint))))
        self._bounds = {}
        self._columns.update(map(str, est.columns_))
        return release

    # ----------------------------------------------------------- the joint
    def _joint_epsilon(self, est, new_statistics, new_noise_cov,
                       new_laplace=None) -> float:
        """Return the joint epsilon at the budget's delta, the new release included.

        Never below what was spent: the releases so far are a function of
        the releases with this one, so their epsilon bounds nothing lower
        (a refit Theta's worst case can move by rounding), and the larger of
        two valid bounds is valid.
        """
        laplace = [e.laplace for e in self.releases if e.laplace]
        gaussian = [(e.statistics, e.noise_cov, release_ranges(e.release))
                    for e in self.releases if not e.laplace]
        if new_laplace is not None:
            laplace.append(new_laplace)
        else:
            gaussian.append((new_statistics, new_noise_cov, release_ranges(est)))
        if laplace and gaussian:
            # Both kinds of noise: through the bands' one coupling (_mixed).
            computed = mixed_epsilon(self._laplace, laplace, gaussian)
            bound = self._laplace.bound
        elif laplace:
            computed = self._laplace.epsilon(laplace)     # sets its bound
            bound = self._laplace.bound or ("alone" if len(laplace) == 1 else (
                "copies" if len({e["key"] for e in laplace}) == 1 else "resampled"))
        elif self._gaussian_over_bands(gaussian):
            # Gaussian noise on different statistics, or on medians,
            # quantiles and stds, with no stated Gaussian model: through
            # the bands' one coupling, as a mix is (_mixed).
            computed = mixed_epsilon(self._laplace, [], gaussian)
            bound = self._laplace.bound
        else:
            computed = self._gaussian.epsilon(
                [(stats, cov) for stats, cov, _ in gaussian], est.law_)
            bound = "gaussian"
        if self.releases and self.spent[0] >= computed:
            bound = self.releases[-1].joint_bound
        joint = max(computed, self.spent[0])
        self._bounds[float(joint)] = bound
        return joint

    @property
    def gaussian_over_bands(self) -> bool:
        """Whether the ledger composes Gaussian noise over the reference's bands.

        True in a ledger of the default law (``law="auto"``) and a Theta of
        bands (``theta="auto"``, the confidence sets) hiding a proportion:
        there ``mechanism="apgm"`` releases of several statistics, and of
        medians, quantiles and stds, are certified together through the
        bands' one coupling (:func:`~skattr._ledger._mixed.mixed_epsilon`).
        A ledger stating its law or Theta keeps the joint law it states.
        """
        return (self.law == "auto" and self.secret.property == "proportion"
                and getattr(resolve_theta(self.theta), "band_confidence",
                            None) is not None)

    def _gaussian_over_bands(self, gaussian: list) -> bool:
        """Whether these Gaussian-noise releases are certified over the bands.

        Releases of several distinct statistics (no exact joint law of
        theirs is computed) or of any median, quantile or std, in a ledger
        that composes them so (:attr:`gaussian_over_bands`); releases of
        one sum, mean or count, again and again, keep its exact law.
        """
        bases = {base for stats, _, _ in gaussian for base, _ in stats}
        return self.gaussian_over_bands and (
            len(bases) > 1 or not all(base.is_linear for base in bases))

    @property
    def records_iid(self) -> bool:
        """Whether the ledger's laws model i.i.d. records (drawn with replacement).

        As :func:`skattr.audit.audit_ledger` resamples them: Laplace-noise
        releases rest on the resampling model (with replacement only for
        ``Resample(replace=True)``); Gaussian-noise ones on the exact laws
        (``law="auto"`` or ``"exact"``: i.i.d. records) or on the moments of
        datasets drawn without replacement (``law="gaussian"``).
        """
        if any(e.laplace for e in self.releases):
            return bool(getattr(self.theta, "replace", False))
        return self.law != "gaussian"

    def laplace_statistic(self, entry: LedgerEntry) -> tuple:
        """Return (query, columns) of a Laplace-noise release's statistic.

        Raises
        ------
        NotCertifiableError
            The release was loaded from a file that cannot restate its
            statistic (a function).
        """
        found = self._laplace.queries.get((entry.laplace or {}).get("key"))
        if found is None:
            raise NotCertifiableError(
                "This release's statistic is not known to the ledger (loaded "
                "from a file that cannot restate a function).")
        return found

    def _laplace_only(self) -> bool:
        return all(e.laplace for e in self.releases)
