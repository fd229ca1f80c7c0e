"""Empirical privacy audits: release many times on each side of a secret pair."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pandas as pd
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from skattr._data import clip_frame, record_contributions, secret_indicator
from skattr._kinds import query_kind
from skattr._random import check_random_state, seed_of
from skattr._release import Plan, Release
from skattr._secret import Secret, as_secrets, grid_counts, grid_tolerance
from skattr.audit._result import AuditResult
from skattr.audit._testers import (
    histogram_test,
    likelihood_ratio_test,
    threshold_test,
)
from skattr.backends import backend_of, is_frame
from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
    NotCertifiableError,
)
from skattr.laws._draws import CHUNK_POSITIONS, draw_subsets
from skattr.noise import GaussianNoise, LaplaceNoise, NoiseLaw, SumOfNoises
from skattr.theta._resample import row_evaluator
from skattr.utils._param_validation import (
    Interval,
    Options,
    validate_parameter_constraints,
)

__all__ = ["audit", "audit_ledger"]

#: The testers, by name.
TESTERS = {"threshold": threshold_test, "histogram": histogram_test,
           "likelihood-ratio": likelihood_ratio_test}
#: The testers an audit runs by default: all of them.
DEFAULT_TESTERS = ("threshold", "histogram", "likelihood-ratio")

_SHARED_CONSTRAINTS = {
    "pair": [tuple, list, np.ndarray, None],
    "releases": [Interval("integral", 20, None, closed="left")],
    "confidence": [Interval("real", 0, 1, closed="neither")],
    "testers": [tuple, list],
    "noise_scale_factor": [Interval("real", 0, None, closed="neither")],
    "replace": [Options(frozenset({"auto"})), bool],
    "privacy": [Options(frozenset({"auto", "dataset", "distributional"}))],
    "random_state": ["random_state"],
}

_AUDIT_CONSTRAINTS = {
    **_SHARED_CONSTRAINTS,
    "n": [Interval("integral", 1, None, closed="left")],
    "secret": [Secret, None],
    "mode": [Options(frozenset({"vectorised", "release"}))],
    "plan": [Plan, Release, NoiseLaw, None],
}


# ------------------------------------------------------------------- noise
def scaled_noise(law: NoiseLaw, factor: float) -> NoiseLaw:
    """Return the noise law with every scale multiplied by ``factor``.

    For positive controls: ``factor = 0.5`` is the mechanism with half its
    noise, which its certificate does not cover. A subclass of a law (the
    exact discrete Laplace noise of ``secure=True``) is scaled as its base
    law, which it approximates.

    Examples
    --------
    >>> import numpy as np
    >>> from skattr.noise import GaussianNoise
    >>> scaled_noise(GaussianNoise(4.0 * np.eye(1)), 0.5).covariance.tolist()
    [[1.0]]
    """
    if factor == 1:
        return law
    if isinstance(law, GaussianNoise):
        return GaussianNoise(np.asarray(law.covariance) * factor**2)
    if isinstance(law, LaplaceNoise):
        return LaplaceNoise(law.scale * factor, law.basis)
    if isinstance(law, SumOfNoises):
        return SumOfNoises(tuple(scaled_noise(p, factor) for p in law.parts))
    raise InvalidParameterError(
        f"noise_scale_factor cannot scale {type(law).__name__} noise; pass the "
        "noise law to audit as plan= instead.")


def _noisy(law: NoiseLaw, values: np.ndarray, rng) -> np.ndarray:
    """Return ``values`` (m, k) plus m independent draws of the noise."""
    perturb = getattr(type(law), "perturb", None)
    if perturb is not None and perturb is not getattr(NoiseLaw, "perturb", None):
        # A law that does more than add its draw (exact sampling on a grid
        # rounds the values): one release at a time, as a release does it.
        return np.array([law.perturb(v, rng) for v in values], dtype=float)
    if "size" in inspect.signature(law.sample).parameters:
        noise = law.sample(rng, size=values.shape[0])
    else:
        noise = np.array([law.sample(rng) for _ in range(values.shape[0])])
    return values + np.asarray(noise, dtype=float).reshape(values.shape)


# -------------------------------------------------------------- datasets
class _Resampling:
    """Datasets of n reference records with the secret's exact property value.

    As the resampling Theta draws them (:mod:`skattr.theta._resample`):
    round(v n) records of the secret's group (dataset privacy) or a
    Binomial(n, v) number of them (distributional privacy), uniformly without
    replacement (or i.i.d. with ``replace``).
    """

    def __init__(self, frame: pd.DataFrame, secret: Secret, n: int, privacy: str,
                 replace: bool):
        if secret.property != "proportion":
            raise InvalidParameterError(
                f"The secret {secret.label} protects a mean; resampling draws "
                "datasets with an exact share of a group, so it needs "
                "Secret.proportion. Pass data= a callable that draws datasets "
                "(or statistic values) for each value of the secret instead.")
        inside = secret_indicator(frame, secret, what="the audit's data") == 1
        positions = np.arange(len(frame))
        self.inside, self.outside = positions[inside], positions[~inside]
        if min(self.inside.size, self.outside.size) < 1:
            raise DataValidationError(
                f"The audit's data has no record on one side of the secret "
                f"{secret.label}; pass data holding records of both groups.")
        self.frame, self.n = frame, n
        self.privacy, self.replace = privacy, replace
        how = "with" if replace else "without"
        self.description = (
            f"resampled {how} replacement from {len(frame)} records "
            f"({self.inside.size} in the secret's group), {privacy} privacy")

    def _counts(self, value: float, m: int, rng) -> np.ndarray:
        n = self.n
        if not 0 <= value <= 1:
            raise InvalidParameterError(
                f"The secret's property is a proportion; {value:g} is not in "
                "[0, 1]. Pass a pair of proportions.")
        if self.privacy == "distributional":
            return rng.binomial(n, value, size=m)
        k = round(value * n)
        if abs(k - value * n) > grid_tolerance(n):
            # audit reads the pair on the grid first (_widest_on_grid): fail
            # closed on a value that did not come through it.
            raise InvalidParameterError(
                f"A dataset of n = {n} records cannot have the property "
                f"{value:g} exactly ({value * n:g} records); pass a pair on "
                f"the grid of multiples of 1/{n}.")
        return np.full(m, k)

    def rows(self, value: float, m: int, rng, *, shuffle: bool):
        """Yield row positions (chunk, n), at most ``CHUNK_POSITIONS`` at once."""
        step = max(1, CHUNK_POSITIONS // self.n)
        counts = self._counts(value, m, rng)
        for start in range(0, m, step):
            rows = draw_subsets(self.inside, self.outside,
                                counts[start:start + step], self.n, rng,
                                replace=self.replace)
            yield rng.permuted(rows, axis=1) if shuffle else rows


def _clipped(frame: pd.DataFrame, clipping) -> pd.DataFrame:
    """Return the frame as a release reads it: clipped to its ``bounds=``.

    ``clipping`` is a mechanism's ``clipping_`` or a release's ``clipping``
    (None when nothing is clipped).
    """
    clip = clipping.as_dict() if clipping is not None else {}
    if not clip:
        return frame

    return clip_frame(frame, clip, what="the audit's data")


def _local(data) -> pd.DataFrame:
    """Return the data in memory: a lazy frame collected once (every column)."""
    return backend_of(data).collect(data, list(data.columns))


def _as_dask_like(frame: pd.DataFrame, like):
    """Hand a drawn dataset over as the user's data came: Dask if it was."""
    return frame if like is None else backend_of(like).like(frame, like)


def _check_values(values, size: int, k: int, who: str) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if values.ndim == 1 and k == 1:
        values = values[:, None]
    if values.shape != (size, k) or not np.all(np.isfinite(values)):
        raise DataValidationError(
            f"{who} returned statistic values of shape {values.shape} (or "
            f"non-finite ones); an audit of {k} statistics needs a finite "
            f"array of shape ({size}, {k}), or a list of {size} DataFrames.")
    return values


def _drawn(data, value: float, size: int, rng, k: int):
    """Call the user's ``data(value, size, random_state)``: frames or values."""
    who = f"data={getattr(data, '__name__', type(data).__name__)}"
    found = data(value, size, rng)
    if isinstance(found, np.ndarray):
        return None, _check_values(found, size, k, who)
    found = list(found)
    if len(found) != size or not all(
            is_frame(f) for f in found):
        raise DataValidationError(
            f"{who} returned {len(found)} objects of types "
            f"{sorted({type(f).__name__ for f in found})}; return {size} "
            f"DataFrames, or an array ({size}, {k}) of statistic values.")
    return found, None


def _check_fitted(mechanism) -> None:
    """Refuse anything but a fitted skattr mechanism, saying what to pass."""
    from skattr.mechanisms import BaseMechanism

    if not isinstance(mechanism, BaseMechanism):
        raise InvalidParameterError(
            f"audit takes a fitted skattr mechanism (one of "
            f"skattr.utils.all_estimators()); got {type(mechanism).__name__}. "
            "Audit a ledger with skattr.audit.audit_ledger.")
    try:
        check_is_fitted(mechanism)
    except NotFittedError:
        raise InvalidParameterError(
            f"This {type(mechanism).__name__} is not fitted yet; call "
            "fit(reference) before auditing it.") from None


def _generator(random_state, owner: str) -> np.random.Generator:
    """Return a numpy Generator: an audit's draws are no release's noise.

    None seeds one from the operating system's entropy, so that a user's
    ``data`` callable always receives a Generator.
    """
    if random_state is None:
        random_state = seed_of(None, owner=owner)
    return check_random_state(random_state, owner=owner)


def _default_pair(secret: Secret | None, n: int,
                  privacy: str) -> tuple[float, float]:
    """Return the widest pair the secret's certificate covers on n records."""
    if secret is None:
        raise InvalidParameterError(
            "The mechanism has no secret to take the pair from; pass "
            "pair=(a, b), the two values of the property to tell apart.")
    a, b = np.array(secret.certified_pairs(n, privacy), dtype=float).T
    widest = int(np.argmax(np.abs(b - a)))
    return float(a[widest]), float(b[widest])


def _widest_on_grid(a: float, b: float, n: int) -> tuple[float, float]:
    """Return the widest pair of grid values k / n around a pair (a, b).

    Dataset privacy draws datasets of whole numbers of group records; a
    pair off the grid is certified as every grid pair around it
    (:meth:`~skattr.Secret.grid_pairs`), and the one moving the most
    records is the hardest to hide.
    """
    ka, kb = grid_counts(a, n), grid_counts(b, n)
    ka, kb = (min(ka), max(kb)) if a < b else (max(ka), min(kb))
    if ka == kb:
        raise InvalidParameterError(
            f"On n = {n} records both values of the pair ({a!r}, {b!r}) are "
            f"{ka} records: no two datasets differ in it. Pass values at least "
            f"1/{n} apart.")
    return ka / n, kb / n


def _check_pair(pair) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in pair)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"pair must be two numbers (a, b); got {pair!r}.") from None
    if not (math.isfinite(a) and math.isfinite(b)) or a == b:
        raise InvalidParameterError(
            f"pair must be two different finite numbers; got {pair!r}.")
    return a, b


def _replace_of(mechanism) -> bool:
    """Whether the mechanism's law models i.i.d. records (drawn with replacement)."""
    law = getattr(mechanism, "law_", None)
    return bool(law.records_iid) if law is not None else False


def _assess(outputs_a, outputs_b, delta: float, confidence: float, testers,
            names) -> tuple:
    """Run the testers at a Bonferroni share of 1 - confidence; return the best."""
    unknown = [t for t in testers if t not in TESTERS]
    if unknown or not testers:
        raise InvalidParameterError(
            f"testers must name one or more of {sorted(TESTERS)}; got "
            f"{list(testers)!r}.")
    alpha = (1.0 - confidence) / len(testers)
    found = tuple(TESTERS[t](outputs_a, outputs_b, delta, alpha, names=names)
                  for t in testers)
    best = max(found, key=lambda f: f.epsilon_lower_bound)
    return best, found


def _control(plan, factor: float) -> str:
    parts = []
    if plan is not None:
        parts.append("noise replaced by "
                     + (plan.noise_law if isinstance(plan, (Plan, Release)) else plan)
                     .describe())
    if factor != 1:
        parts.append(f"noise x {factor:g}")
    return "; ".join(parts)


def audit(mechanism, data, *, n: int, pair=None, secret=None,
          releases: int = 10_000, confidence: float = 0.95,
          testers=DEFAULT_TESTERS, mode: str = "vectorised",
          plan=None, noise_scale_factor: float = 1.0, replace="auto",
          privacy: str = "auto", random_state=None) -> AuditResult:
    """Return an empirical lower bound on a fitted mechanism's epsilon.

    Draws ``releases`` datasets of n records on each side of a pair (a, b)
    of the secret's values, releases each through the mechanism's plan for
    n records, and asks how well an event on the releases tells the sides
    apart: for any event S, an (epsilon, delta) guarantee implies
    ``P_a(S) <= e^epsilon P_b(S) + delta``, so Clopper-Pearson bounds on the
    two probabilities give a lower bound on epsilon with the stated
    confidence. A sound mechanism keeps the lower bound at or below its
    certified epsilon (up to the 1 - confidence chance of a bound that
    fails); a lower bound above it is evidence of a bug, or of a model
    (Theta, the law of F) that does not describe the datasets drawn.

    Parameters
    ----------
    mechanism : fitted mechanism
        Any of :func:`skattr.utils.all_estimators`, fitted.
    data : DataFrame, Dask DataFrame or callable
        Where the datasets come from. A frame is resampled: each dataset is n
        of its records, ``round(v n)`` of them in the secret's group (a
        Binomial(n, v) number under distributional privacy), as the
        resampling Theta (:class:`skattr.theta.Resample`) draws them. A
        callable ``data(value, size, random_state)`` draws from a model of
        your own: it returns ``size`` DataFrames of n records, or an array
        (size, k) of the exact statistic's values on ``size`` datasets
        (vectorised mode only), for the secret's value ``value``.
    n : int
        Records per dataset (public, as for a release).
    pair : (float, float), optional
        The two values of the secret's property to tell apart. By default
        the widest pair the mechanism's secret certifies on n records. A
        pair the mechanism does not certify makes a positive control (the
        sensitivity computed for the wrong pair). When a frame is resampled
        under dataset privacy, a pair off the grid of multiples of 1/n
        (0.4 vs 0.6 on 747 records) is audited as the widest of the grid
        pairs a release certifies around it (298 vs 449 records), the one
        recorded in the result's ``pair``.
    secret : Secret, optional
        The secret whose property the datasets are drawn by; by default the
        mechanism's first. Needed for resampling when the mechanism has none
        (the DP baselines).
    releases : int, default=10_000
        Releases per side; half choose the event, half test it.
    confidence : float, default=0.95
        Confidence of the lower bound, split equally between the testers.
    testers : tuple of str, default=("threshold", "histogram", "likelihood-ratio")
        Which testers to run (:func:`threshold_test`,
        :func:`histogram_test`, :func:`likelihood_ratio_test`).
    mode : {"vectorised", "release"}, default="vectorised"
        ``"vectorised"`` computes the exact statistic of every dataset at
        once (per-record contributions summed over index arrays for linear
        statistics, the statistics' vectorised kernels otherwise) and draws
        the plan's noise in one batch. ``"release"`` calls the mechanism's
        own ``release`` on each dataset (a Dask frame's datasets are handed
        over as Dask frames): slower, and end to end.
    plan : Plan, Release or NoiseLaw, optional
        A positive control: the noise law to add instead of the plan's (the
        certificate audited stays the mechanism's). Vectorised mode only.
    noise_scale_factor : float, default=1.0
        A positive control: multiply the plan's noise scale by this (0.5:
        half the noise). Vectorised mode only.
    replace : "auto" or bool, default="auto"
        Resample with replacement (i.i.d. records). "auto" follows the
        mechanism's model: its ``Resample`` Theta, an exact law or
        ``law=AssumeGaussian(sampling="with-replacement")`` draw with
        replacement.
    privacy : {"auto", "dataset", "distributional"}, default="auto"
        How many group records a dataset holds (see ``data``); "auto" takes
        the mechanism's ``privacy``, else dataset privacy.
    random_state : None, int or Generator, default=None
        Seed of the datasets and the noise (an audit draws no real release's
        noise, so a seed costs no privacy); None seeds a Generator from the
        operating system's entropy. A ``data`` callable receives the
        Generator.

    Returns
    -------
    AuditResult
        The lower bound, the certified (epsilon, delta), ``passed`` and the
        best event.

    Raises
    ------
    InvalidParameterError
        For a bad parameter, a pair whose two values are the same number of
        records, or a noise override in release mode.

    See Also
    --------
    audit_ledger : The joint audit of a ledger's releases.

    Notes
    -----
    Each tester chooses its event on the first half of each side's releases
    and bounds its two probabilities on the second half, each at failure
    probability ``alpha / 2`` with ``alpha = (1 - confidence) / (number of
    testers)``: since the event is fixed before the test half is seen, no
    correction is needed for the many events tried on the selection half.
    The lower bound is ``max(0, log((p_top_lower - delta) / p_bottom_upper))``
    over the testers, for the orientation (P_a over P_b or P_b over P_a)
    chosen.

    References
    ----------
    .. [1] M. Jagielski, J. Ullman and A. Oprea. "Auditing Differentially
       Private Machine Learning: How Private is Private SGD?" NeurIPS 2020.
    .. [2] M. Nasr, S. Song, A. Thakurta, N. Papernot and N. Carlini.
       "Adversary Instantiation: Lower Bounds for Differentially Private
       Machine Learning." IEEE S&P 2021.
    .. [3] A. C. Gilbert and A. McMillan. "Property Testing for Differential
       Privacy." Allerton 2018.

    Examples
    --------
    >>> import skattr
    >>> from skattr.audit import audit
    >>> from skattr.datasets import make_hospital
    >>> reference = make_hospital(5000, random_state=0)
    >>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    >>> mech = skattr.mechanisms.AttributePrivateGaussian(
    ...     query=skattr.Query.mean("blood_pressure"), secret=secret,
    ...     epsilon=1.0, delta=1e-3, law="gaussian", random_state=0).fit(reference)
    >>> result = audit(mech, reference, n=100, releases=20_000, random_state=0)
    >>> result.passed, result.epsilon
    (True, 1.0)
    >>> audit(mech, reference, n=100, releases=20_000, random_state=0,
    ...       noise_scale_factor=0.25).flagged
    True
    """
    validate_parameter_constraints(_AUDIT_CONSTRAINTS, {
        "n": n, "pair": pair, "secret": secret, "releases": releases,
        "confidence": confidence, "testers": testers, "mode": mode,
        "plan": plan, "noise_scale_factor": noise_scale_factor,
        "replace": replace, "privacy": privacy, "random_state": random_state,
    }, "audit")
    if not (callable(data) or is_frame(data)):
        raise InvalidParameterError(
            "The 'data' parameter of audit must be a DataFrame, a Dask "
            "DataFrame or a callable data(value, size, random_state). Got "
            f"{type(data).__name__} instead.")
    _check_fitted(mechanism)
    if mode == "release" and (plan is not None or noise_scale_factor != 1):
        raise InvalidParameterError(
            "plan= and noise_scale_factor= change the noise, which "
            "mode='release' leaves to the mechanism; use mode='vectorised' "
            "for positive controls.")
    certified = mechanism.plan(n=n)
    if secret is None and getattr(mechanism, "secrets_", ()):
        secret = as_secrets(mechanism.secrets_)[0]
    if privacy == "auto":
        privacy = getattr(mechanism, "privacy", "dataset")
    a, b = (_check_pair(pair) if pair is not None
            else _default_pair(secret, n, privacy))
    rng = _generator(random_state, "audit")
    names = list(certified.statistics)
    k = len(names)
    if replace == "auto":
        replace = _replace_of(mechanism)
    law = (certified.noise_law if plan is None else
           plan.noise_law if isinstance(plan, (Plan, Release)) else plan)
    law = scaled_noise(law, float(noise_scale_factor))
    if law.k != k:
        raise InvalidParameterError(
            f"plan= adds noise to {law.k} statistics; the mechanism releases "
            f"{k}. Pass a noise law of dimension {k}.")

    if callable(data):
        source, description = None, (
            f"drawn by {getattr(data, '__name__', type(data).__name__)}")
    else:
        frame = _local(data)
        mechanism._private_frame(frame)     # the mechanism's own checks
        if secret is None:
            raise InvalidParameterError(
                "Resampling draws datasets by a secret's property and the "
                "mechanism has none; pass secret=skattr.Secret.proportion(...).")
        source = _Resampling(frame, secret, n, privacy, bool(replace))
        description = source.description
        if privacy == "dataset":
            a, b = _widest_on_grid(a, b, n)

    outputs = []
    for value in (a, b):
        if mode == "vectorised":
            exact = _exact_statistics(mechanism, data, source, value, n,
                                      releases, rng, k)
            outputs.append(_noisy(law, exact, rng))
        else:
            outputs.append(_released(mechanism, data, source, value, releases,
                                     rng, k))
    best, found = _assess(outputs[0], outputs[1], certified.delta, confidence,
                          testers, names)
    return AuditResult(
        mechanism=certified.mechanism, pair=(a, b), n=int(n),
        epsilon=float(certified.epsilon), delta=float(certified.delta),
        epsilon_lower_bound=float(best.epsilon_lower_bound),
        confidence=float(confidence), releases=int(releases),
        event=best.event, testers=found, mode=mode, data=description,
        control=_control(plan, float(noise_scale_factor)))


def _exact_statistics(mechanism, data, source, value, n, m, rng, k):
    """Return the exact statistic of m datasets given ``value``, as (m, k)."""
    if source is None:
        frames, values = _drawn(data, value, m, rng, k)
        if values is not None:
            return values
        return np.array([_statistic_of(mechanism, f) for f in frames])
    query = mechanism.query_
    frame = _clipped(source.frame, getattr(mechanism, "clipping_", None))
    evaluate = row_evaluator(query, frame, mechanism.columns_)
    # Only a Python callable can read the records' order.
    kind = query_kind(query)
    ordered = kind is not None and kind.opaque
    parts = [np.asarray(evaluate(rows), dtype=float).reshape(rows.shape[0], -1)
             for rows in source.rows(value, m, rng, shuffle=ordered)]
    return np.concatenate(parts)


def _statistic_of(mechanism, frame) -> np.ndarray:
    """Return the exact statistic the mechanism would add noise to."""
    return np.asarray(mechanism._exact_statistic(
        *mechanism._private_frame(frame))[1], dtype=float)


def _released(mechanism, data, source, value, m, rng, k):
    """Return m releases of the mechanism's own ``release``, given ``value``."""
    if source is None:
        frames, values = _drawn(data, value, m, rng, k)
        if frames is None:
            raise InvalidParameterError(
                "mode='release' releases datasets; the data callable returned "
                "statistic values. Return DataFrames, or use mode='vectorised'.")
    else:
        frames = (source.frame.iloc[r] for rows in source.rows(value, m, rng,
                                                               shuffle=True)
                  for r in rows)
    like = None if callable(data) else data
    out = np.empty((m, k))
    for i, frame in enumerate(frames):
        release = mechanism.release(_as_dask_like(frame, like))
        out[i] = release.values.to_numpy(dtype=float)
    return out


# ------------------------------------------------------------------ ledger
def audit_ledger(ledger, data=None, *, pair=None, releases: int = 10_000,
                 confidence: float = 0.95,
                 testers=DEFAULT_TESTERS,
                 noise_scale_factor: float = 1.0, replace="auto",
                 privacy: str = "auto", random_state=None) -> AuditResult:
    """Return an empirical lower bound on the joint epsilon of a ledger's releases.

    Every release made so far through the ledger is replayed on each drawn
    dataset (vectorised: the statistics of all datasets at once, each
    release's own noise law in one batch), and the releases' values,
    side by side, are audited against ``ledger.spent``, the joint
    certificate: Pufferfish guarantees do not add up, so the joint release
    is what an adversary sees.

    Parameters
    ----------
    ledger : Ledger
        A ledger with at least one release.
    data : DataFrame, optional
        The records to resample datasets of the ledger's n records from
        (see :func:`audit`); by default the ledger's reference data.
    pair : (float, float), optional
        The secret's two values; by default the widest pair the ledger's
        secret certifies. Under dataset privacy, read on the grid as for
        :func:`audit`.
    releases, confidence, testers, noise_scale_factor, replace, privacy,\
random_state
        As for :func:`audit`. ``noise_scale_factor`` scales every release's
        noise; ``replace="auto"`` follows a ``Resample`` Theta of the
        ledger (else draws without replacement, as the moment Theta
        models).

    Returns
    -------
    AuditResult
        Its ``epsilon`` and ``delta`` are ``ledger.spent``.

    Examples
    --------
    >>> import skattr
    >>> from skattr.audit import audit_ledger
    >>> from skattr.datasets import make_hospital
    >>> private = make_hospital(100, random_state=1)
    >>> reference = make_hospital(5000, random_state=0)
    >>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    >>> ledger = private.attrpriv.ledger(secret=secret, reference=reference,
    ...                                  budget=(2.0, 1e-3), law="gaussian",
    ...                                  random_state=0)
    >>> _ = ledger.mean(["blood_pressure"], epsilon=1.0)
    >>> _ = ledger.mean(["blood_pressure"], epsilon=1.0)
    >>> result = audit_ledger(ledger, releases=20_000, random_state=0)
    >>> result.passed, round(result.epsilon, 2) == round(ledger.spent[0], 2)
    (True, True)
    """
    validate_parameter_constraints(_SHARED_CONSTRAINTS, {
        "pair": pair, "releases": releases, "confidence": confidence,
        "testers": testers, "noise_scale_factor": noise_scale_factor,
        "replace": replace, "privacy": privacy, "random_state": random_state,
    }, "audit_ledger")
    from skattr._ledger import Ledger

    if not isinstance(ledger, Ledger):
        raise InvalidParameterError(
            f"audit_ledger audits a skattr Ledger; got {type(ledger).__name__}. "
            "Audit a single mechanism with skattr.audit.audit.")
    if not ledger.releases:
        raise InvalidParameterError(
            "The ledger has released nothing yet; audit it after its releases.")
    data = ledger.reference if data is None else data
    if data is None:
        raise InvalidParameterError(
            "The ledger has no reference data to resample (its Theta is an "
            "expert's); pass data= records to draw datasets from.")
    n = int(ledger._n)
    secret = ledger.secret
    if privacy == "auto":
        privacy = next((e.laplace["privacy"] for e in ledger.releases
                        if e.laplace), "dataset")
    a, b = (_check_pair(pair) if pair is not None
            else _default_pair(secret, n, privacy))
    if replace == "auto":
        replace = ledger.records_iid
    frame = _local(data)
    source = _Resampling(frame, secret, n, privacy, bool(replace))
    if privacy == "dataset":
        a, b = _widest_on_grid(a, b, n)
    evaluate, laws, names = _ledger_releases(ledger, frame, n)
    rng = _generator(random_state, "audit_ledger")
    factor = float(noise_scale_factor)
    outputs = []
    for value in (a, b):
        exact = np.concatenate([evaluate(rows)
                                for rows in source.rows(value, releases, rng,
                                                        shuffle=False)])
        at, noisy = 0, []
        for law in laws:
            part = exact[:, at:at + law.k]
            noisy.append(_noisy(scaled_noise(law, factor), part, rng))
            at += law.k
        outputs.append(np.hstack(noisy))
    epsilon, delta = ledger.spent
    best, found = _assess(outputs[0], outputs[1], delta, confidence, testers,
                          names)
    mechanisms = ", ".join(
        e.as_record()["mechanism"] for e in ledger.releases)
    return AuditResult(
        mechanism=f"ledger of {len(ledger.releases)} releases ({mechanisms})",
        pair=(a, b), n=n, epsilon=float(epsilon), delta=float(delta),
        epsilon_lower_bound=float(best.epsilon_lower_bound),
        confidence=float(confidence), releases=int(releases),
        event=best.event, testers=found, mode="vectorised",
        data=source.description,
        control=_control(None, factor))


def _ledger_releases(ledger, frame: pd.DataFrame, n: int):
    """Return (evaluate(rows) -> (m, K), noise law per release, value names)."""
    pieces, laws, names = [], [], []
    bases: dict = {}
    for i, entry in enumerate(ledger.releases):
        record = entry.as_record()
        values = list(record["values"])
        clipping = getattr(entry.release, "clipping", None)
        released = _clipped(frame, clipping)
        names += [f"release {i + 1}: {v}" for v in values]
        if entry.laplace:
            query, columns = ledger.laplace_statistic(entry)
            pieces.append(("rows", row_evaluator(query, released, columns)))
            law = (entry.release.noise_law if entry.release is not None
                   else LaplaceNoise.on_each(entry.laplace["scale"], len(values)))
        else:
            columns, weights = [], []
            for base, weight in entry.statistics:
                key = (repr(base), repr(clipping))
                if key not in bases:
                    bases[key] = (len(bases), record_contributions(
                        released, base, base.columns, what="the audit's data"))
                columns.append(bases[key][0])
                weights.append(weight)
            pieces.append(("linear", (np.array(columns), np.array(weights))))
            law = (entry.release.noise_law if entry.release is not None
                   else GaussianNoise(entry.noise_cov))
        laws.append(law)
    contributions = (np.hstack([h for _, h in sorted(bases.values(),
                                                     key=lambda v: v[0])])
                     if bases else None)

    def evaluate(rows: np.ndarray) -> np.ndarray:
        sums = (contributions[rows].sum(axis=1) if contributions is not None
                else None)
        out = []
        for kind, piece in pieces:
            if kind == "linear":
                columns, weights = piece
                out.append(sums[:, columns] * weights)
            else:
                found = np.asarray(piece(rows), dtype=float)
                out.append(found.reshape(rows.shape[0], -1))
        return np.hstack(out)

    if not all(math.isfinite(float(v)) for v in ledger.spent):
        raise NotCertifiableError(
            "The ledger's joint guarantee is not finite; nothing to audit.")
    return evaluate, laws, names
