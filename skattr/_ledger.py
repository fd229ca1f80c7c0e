"""A privacy ledger: the joint guarantee of every release made on one dataset.

Pufferfish privacy does not compose: two statistics each certified alone can
reveal the secret together. The ledger certifies the *joint* release of
everything it has released, from the joint law of the stacked statistics
under the secret's pairs, and refuses a release that would take the joint
guarantee over its budget before any noise is drawn.

The joint law (Gaussian-noise releases). Let F be the d distinct statistics
released so far (a statistic released twice counts once), Y = A F + N the
K released values, A the K x d selection of each value's statistic and N the
independent noises, block-diagonal covariance Sigma_N. Under each side of a
pair, F has the joint Theta's mean and covariance (cross-covariances
included, from the same reference). When Sigma_N is invertible, the
likelihood ratio of Y depends on Y only through A^T Sigma_N^-1 Y, so the
joint release is exactly as private as F + N(0, M^-1), M = A^T Sigma_N^-1 A
(a d-dimensional release: "work in its span"). Otherwise (some value released
without noise) Y's law is taken in K dimensions and restricted to the span of
its covariances: a mean difference outside it reveals the secret (epsilon
infinite). The epsilon at the budget's delta is the exact profile of the two
Gaussians, worst case over pairs and Theta.

Laplace-noise releases (the Wasserstein mechanisms). Copies of one statistic
share one coupling of its two laws, so their epsilons add
(``Ledger._laplace_epsilon``). Different statistics are certified from their
joint law under the resampling Theta: the density of the released values
moves by at most exp(Z) between two datasets, Z the statistics' move in the
noises' metric, so a coupling of the datasets under the two values of a pair
with Z <= W on all but delta of its mass certifies (W, delta); W is the
exact (W, delta)-closeness of the stacked laws when the datasets can be
enumerated, else an order-statistic bound on one drawn coupling
(``Ledger._laplace_joint_epsilon``). Gaussian and Laplace noise on one
dataset are refused: the two certificates rest on different models (the
Gaussian joint law, a coupling of datasets), and no joint law of both is
modelled here.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from skattr._query import Query, StackedQuery
from skattr._release import Plan, Release
from skattr._statistic import Statistic
from skattr.calibration._pair_noise import raw_leakage_epsilon
from skattr.exceptions import (
    BudgetExceededError,
    DataValidationError,
    InvalidParameterError,
    NotCertifiableError,
)
from skattr.laws._gaussian import PairLaws

__all__ = ["SCHEMA_VERSION", "Ledger", "LedgerEntry"]

#: Version of the JSON a ledger is saved as (``Ledger.to_json``).
SCHEMA_VERSION = 2

# Relative tolerance of the budget check: epsilons are computed to ~1e-9.
_BUDGET_RTOL = 1e-9
# epsilon="remaining": the own epsilon found to this relative precision, and
# the largest tried (beyond it the release needs no noise in practice).
_FIT_RTOL = 1e-3
_MAX_FITTED_EPSILON = 1e4
# Eigenvalues below this fraction of the largest are outside the span.
_SPAN_RTOL = 1e-10


@dataclass(frozen=True)
class LedgerEntry:
    """One release made through a ledger.

    Attributes
    ----------
    release : Release or None
        The release, with its own certificate (of it alone); None in a
        ledger loaded from JSON, which keeps ``record`` instead.
    statistics : tuple of (Query, float)
        Per released value, its base statistic (the sum of a column or the
        count of a value) and the weight w(n) it is released with.
    noise_cov : ndarray of shape (k, k)
        The covariance of the noise added to the values.
    joint_epsilon : float
        The joint epsilon (at the budget's delta) of every release up to and
        including this one.
    record : dict or None
        ``Release.to_dict()`` of the release, for a loaded ledger.
    laplace : dict or None
        For a Laplace-noise release (the Wasserstein mechanisms): which
        statistic it is (``key``), its own ``epsilon`` and ``delta``, and
        ``beta``, the part of delta a drawn law may misjudge.
    joint_delta : float or None
        The joint delta when it is below the budget's (Laplace releases);
        None means the budget's delta.
    """

    release: Release | None
    statistics: tuple
    noise_cov: np.ndarray
    joint_epsilon: float
    record: dict | None = None
    laplace: dict | None = None
    joint_delta: float | None = None

    def as_record(self) -> dict:
        """Return the release as plain data (``Release.to_dict()``)."""
        return self.record if self.release is None else self.release.to_dict()


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


def _single_statistics(query, n: int) -> tuple:
    """Split a linear query into (base statistic, weight) per released value.

    A released value is w(n) times the sum over records of a contribution h:
    a mean and a sum of one column share h (the column), as do a count and a
    proportion of one value; the base statistic is that sum, so a mean and a
    sum of the same column are one statistic of the joint law.
    """
    parts = query.parts if isinstance(query, StackedQuery) else (query,)
    out = []
    for part in parts:
        weight = float(part.weight(n))
        for column in part.columns:
            base = (Query("sum", [column]) if part.statistic in ("mean", "sum")
                    else Query("count", [column], part.value))
            out.append((base, weight))
    return tuple(out)


def _fingerprint_v1(frame: pd.DataFrame, columns) -> dict:
    """Return schema 1's row count and SHA-256 of each named column's values."""
    hashes = {}
    for c in columns:
        match = [col for col in frame.columns if str(col) == c]
        if len(match) != 1:
            hashes[c] = None
            continue
        values = pd.util.hash_pandas_object(frame[match[0]], index=False)
        hashes[c] = hashlib.sha256(values.to_numpy().tobytes()).hexdigest()
    return {"rows": int(len(frame)), "columns": hashes}


def _fingerprint(frame, columns) -> dict:
    """Row count and 128-bit hashes of the named columns' values, pandas or Dask.

    Each column's hash, and one of its rows across all the named columns,
    is a pair of sums modulo 2^64 over the rows of a 64-bit hash of each
    value (:func:`skattr._dask.hash_sums`): partial sums add up across
    partitions, so a Dask frame and the pandas frame of the same rows have
    the same fingerprint, however they are partitioned. It identifies the
    rows and each column's values, not the order of the rows.
    """
    from skattr._dask import hash_sums

    names = {}
    for c in columns:
        match = [col for col in frame.columns if str(col) == c]
        if len(match) == 1:
            names[c] = match[0]
    rows, sums = hash_sums(frame, list(names.values()))
    hashes = {c: None for c in columns}
    hashes.update({c: sums[i] for i, c in enumerate(names)})
    return {"rows": rows, "columns": hashes, "records": sums[-1]}


def _check_fingerprint(frame, saved: dict, what: str, schema: int) -> None:
    from skattr._dask import is_dask_frame

    if schema == 1:
        if not isinstance(frame, pd.DataFrame):
            raise InvalidParameterError(
                f"A ledger file of schema 1 checks the {what} as a pandas "
                "DataFrame; pass it as one (ddf.compute()).")
        now = _fingerprint_v1(frame, sorted(saved["columns"]))
    elif isinstance(frame, pd.DataFrame) or is_dask_frame(frame):
        now = _fingerprint(frame, sorted(saved["columns"]))
    else:
        raise InvalidParameterError(
            f"The {what} must be a pandas or Dask DataFrame.")
    if now["rows"] != saved["rows"]:
        raise DataValidationError(
            f"The {what} has {now['rows']} rows; the ledger was opened on "
            f"{saved['rows']}. A ledger covers one dataset: open a new one for "
            "other data.")
    changed = [c for c, h in saved["columns"].items() if now["columns"][c] != h]
    if not changed and now.get("records") != saved.get("records"):
        changed = ["(their rows together)"]
    if changed:
        raise DataValidationError(
            f"The {what}'s column(s) {changed} differ from those the ledger "
            "was opened on (their hashes changed). A ledger covers one "
            "dataset: open a new one for other data.")


def _plain(value):
    """Return a JSON-ready value, or raise for one that cannot be stored."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    raise InvalidParameterError(
        f"The ledger cannot store {value!r} ({type(value).__name__}): state "
        "secrets and counted values by plain values (numbers, strings), not "
        "predicates, to save a ledger.")


def _bounds_to_json(bounds):
    """Return ``bounds=`` as JSON: a name, None, column triples or pairs."""
    if bounds is None or isinstance(bounds, str):
        return bounds
    if isinstance(bounds, dict):
        return {"columns": [[_plain(c), *map(float, v)]
                            for c, v in bounds.items()]}
    return {"pairs": np.asarray(bounds, dtype=float).tolist()}


def _bounds_from_json(record):
    """Return the ``bounds=`` :func:`_bounds_to_json` wrote."""
    if record is None or isinstance(record, str):
        return record
    if "columns" in record:
        return {c: (lo, hi) for c, lo, hi in record["columns"]}
    pairs = record["pairs"]
    return tuple(pairs) if pairs and not isinstance(pairs[0], list) else [
        tuple(p) for p in pairs]


def _secret_to_json(secret) -> dict:
    fields = ("column", "property", "value", "pairs", "window", "support",
              "sets", "set_reading")
    return {f: _plain(getattr(secret, f)) for f in fields}


def _secret_from_json(record: dict):
    from skattr._secret import Secret

    record = dict(record)
    for f in ("pairs", "sets"):
        if record.get(f) is not None:
            record[f] = [tuple(p) for p in record[f]]
    if record.get("support") is not None:
        record["support"] = tuple(record["support"])
    return Secret(**record)


_RESAMPLE_FIELDS = ("n_draws", "failure_share", "max_exact", "random_state",
                    "replace", "exact_quantiles", "moment_bounds")


def _model_to_json(model) -> dict:
    """Return a GroupMoments or JointGaussian as plain data (arrays as lists)."""
    from dataclasses import fields

    return {"type": type(model).__name__,
            "fields": {f.name: _plain(np.asarray(v).tolist()
                                      if isinstance(v, np.ndarray) else v)
                       for f in fields(model)
                       for v in [getattr(model, f.name)]}}


def _model_from_json(record):
    from skattr.theta import GroupMoments, JointGaussian

    kind = {"GroupMoments": GroupMoments, "JointGaussian": JointGaussian}
    values = dict(record["fields"])
    values["columns"] = tuple(values["columns"])
    return kind[record["type"]](**values)


def _theta_to_json(theta):
    from skattr.theta import ExpertTheta
    from skattr.theta._resample import Resample

    if isinstance(theta, str):
        return theta
    if isinstance(theta, Resample):
        return {"resample": {f: _plain(getattr(theta, f))
                             for f in _RESAMPLE_FIELDS}}
    if isinstance(theta, ExpertTheta) and theta.parameters is None:
        models = theta.models
        return {"expert": {
            "description": theta.description,
            "models": (
                [[_plain(k), [_model_to_json(m) for m in v]]
                 for k, v in models.items()] if isinstance(models, dict)
                else [_model_to_json(m) for m in models]),
            "by_column": isinstance(models, dict)}}
    raise InvalidParameterError(
        f"The ledger can store Theta given by name ('auto', 'moments', "
        f"'gaussian'), a Resample or an ExpertTheta of stated models; "
        f"{type(theta).__name__} objects are not stored yet.")


def _theta_from_json(record):
    from skattr.theta import ExpertTheta
    from skattr.theta._resample import Resample

    if not isinstance(record, dict):
        return record
    if "resample" in record:
        # Files written before exact_quantiles or moment_bounds existed drew
        # those laws.
        return Resample(**{"exact_quantiles": False, "moment_bounds": False,
                           **record["resample"]})
    expert = record["expert"]
    models = ({k: [_model_from_json(m) for m in v] for k, v in expert["models"]}
              if expert["by_column"] else
              [_model_from_json(m) for m in expert["models"]])
    return ExpertTheta(models, description=expert["description"])


_STATISTIC_FIELDS = ("statistic", "columns", "q", "ddof", "proportiontocut",
                     "add_constant", "labels")


def _statistic_to_json(query, columns) -> dict | None:
    """Return a released statistic as plain data, or None for a function."""
    try:
        if isinstance(query, Statistic):
            if query.func is not None:
                return None
            fields = {f: _plain(getattr(query, f)) for f in _STATISTIC_FIELDS}
            return {"kind": "statistic", "fields": fields,
                    "columns": _plain(list(columns))}
        return {"kind": "query", "query": _query_to_json(query),
                "columns": _plain(list(columns))}
    except InvalidParameterError:
        return None                 # a predicate: not stored


def _statistic_from_json(record) -> tuple:
    """Return (query, columns) from :func:`_statistic_to_json`'s output."""
    if record["kind"] == "statistic":
        fields = dict(record["fields"])
        for f in ("columns", "q", "labels"):
            if fields[f] is not None:
                fields[f] = tuple(fields[f])
        return Statistic(**fields), tuple(record["columns"])
    return _query_from_json(record["query"]), tuple(record["columns"])


def _query_to_json(query) -> list:
    return [query.statistic, _plain(list(query.columns)), _plain(query.value)]


def _query_from_json(record) -> Query:
    statistic, columns, value = record
    return Query(statistic, list(columns), value)


def _in_span(mean_diff, cov_a, cov_b) -> tuple | None:
    """Restrict two Gaussians to the span of their covariances.

    Returns (mean_diff, cov_a, cov_b) in an orthonormal basis of the span, or
    None when the mean difference leaves it (the laws are mutually singular:
    the secret is revealed). Laws with different spans are singular too.
    """
    total = cov_a + cov_b
    values, vectors = np.linalg.eigh((total + total.T) / 2)
    keep = values > _SPAN_RTOL * max(values.max(initial=0.0), 0.0)
    basis = vectors[:, keep]
    outside = mean_diff - basis @ (basis.T @ mean_diff)
    scale = max(np.abs(mean_diff).max(initial=0.0), 1e-300)
    if np.abs(outside).max(initial=0.0) > 1e-9 * scale:
        return None
    ca, cb = basis.T @ cov_a @ basis, basis.T @ cov_b @ basis
    for c in (ca, cb):
        if c.size and np.linalg.eigvalsh(c)[0] <= _SPAN_RTOL * values.max():
            # One side is degenerate where the other is not: singular laws.
            return None
    return basis.T @ mean_diff, ca, cb


class Ledger:
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
        certify several distinct statistics together. Otherwise only
        releases of one statistic (a count, or the mean or sum of one
        integer column: its exact law) are certified jointly, exactly.
    random_state : None, int or Generator, default=None
        The noise of every release; None draws from the operating system.
    bounds : "reference", dict, sequence of (low, high), (low, high) or None, \
default="reference"
        The clipping of every release and of the joint law (the mechanisms'
        ``bounds=``; one policy per ledger, so that a column is one statistic
        whichever release reads it): each released column clipped to the
        reference data's range, or to declared ranges; None clips nothing.

    Attributes
    ----------
    releases : list of LedgerEntry
        The releases, in order.

    Notes
    -----
    Gaussian-noise releases (``"apgm"``, the default for linear statistics,
    the Expected Value family, ``"optimal"``; ``mechanism="auto"`` picks the
    one of least expected error) are certified from their joint law.
    Laplace-noise releases of the Wasserstein mechanisms (the default for
    medians, quantiles, standard deviations and functions) are certified
    jointly: one statistic released again and again by one coupling of its
    two laws, which serves every copy, so their epsilons add; different
    statistics from their joint law under the resampling Theta (open the
    ledger with ``theta=skattr.theta.Resample(random_state=...)`` to fix its
    draws), exactly when the datasets can be enumerated and otherwise from
    one drawn coupling. A mix of Laplace and Gaussian noise, and any other
    mechanism, are refused (fail closed). The joint certificate of different
    statistics is never a sum of epsilons: see the module notes of
    ``skattr/_ledger.py``.

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

    #: Gaussian-noise mechanisms whose releases the ledger certifies jointly
    #: (read off the registry: :func:`joint_noise`).
    GAUSSIAN = _Composed("gaussian")
    #: Laplace-noise mechanisms, certified jointly among themselves.
    LAPLACE = _Composed("laplace")

    def __init__(self, data: pd.DataFrame, *, secret, reference=None, budget,
                 theta="auto", law=None, random_state=None,
                 bounds="reference"):
        from skattr._dask import collect, is_dask_frame, row_count
        from skattr._secret import Secret
        from skattr.mechanisms import BaseMechanism
        from skattr.utils._param_validation import validate_parameter_constraints

        validate_parameter_constraints(
            {"bounds": BaseMechanism._parameter_constraints["bounds"]},
            {"bounds": bounds}, "Ledger")

        if is_dask_frame(reference):
            # The joint laws read the reference's records, for statistics not
            # yet named: it is collected to the driver once, every column (as
            # each Theta that reads records collects its own columns). Pass
            # only the columns to be released, or a sample, to keep it small.
            reference = collect(reference, reference.columns)
        if not (isinstance(data, pd.DataFrame) or is_dask_frame(data)):
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
                f"budget must be a pair (epsilon, delta); got {budget!r}.") from exc
        if not (eps > 0 and 0 < delta < 1):
            raise InvalidParameterError(
                f"budget must have epsilon > 0 and delta in (0, 1); got "
                f"{budget!r}.")
        law = "auto" if law is None else law
        if law not in ("auto", "exact", "gaussian"):
            raise InvalidParameterError(
                f"law must be 'auto', 'exact' or 'gaussian'; got {law!r}.")
        if getattr(theta, "grid_shape", None) is not None:
            raise NotCertifiableError(
                "Theta stated as parameter ranges (ExpertTheta.from_ranges) is "
                "certified on its grid only when each requirement peaks at a "
                "grid line's end, which the ledger's joint epsilon does not "
                "check; state Theta as a finite set of models.")
        self._data = data
        # n is public: a Dask frame's rows are counted once, here.
        self._n = (row_count(data, what="the private data")
                   if is_dask_frame(data) else len(data))
        self.secret = secret
        self.reference = reference
        self.budget = (eps, delta)
        self.theta = theta
        self.law = law
        self.random_state = random_state
        self.bounds = bounds
        self.releases: list[LedgerEntry] = []
        self._rng = None
        self._joint_cache = None
        self._columns: set = set()
        # Laplace releases: each statistic's query and its resampling Theta
        # with the ledger's one seed (every statistic on the same datasets).
        self._laplace_queries: dict = {}
        self._laplace_laws: dict = {}
        self._theta_seed: int | None = None

    def __repr__(self) -> str:
        eps, delta = self.spent
        return (f"Ledger({len(self.releases)} releases, spent ({eps:.4g}, "
                f"{delta:g}) of ({self.budget[0]:g}, {self.budget[1]:g}))")

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

    def summary(self) -> pd.DataFrame:
        """Return a table of the releases: values, own guarantee, joint epsilon."""
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
                        else [math.sqrt(2) * entry.laplace.get("scale", math.nan)]
                        * len(r["values"]))),
                "joint epsilon": entry.joint_epsilon,
            })
        return pd.DataFrame(rows, columns=[
            "release", "statistics", "values", "mechanism",
            "own (epsilon, delta)", "noise sd", "joint epsilon"])

    # ------------------------------------------------------------- releases
    def mean(self, columns=None, **params) -> Release:
        """Release the mean of each of ``columns`` (joint budget checked first)."""
        return self._release(Query.mean(columns), params)

    def sum(self, columns=None, **params) -> Release:
        """Release the sum of each of ``columns`` (joint budget checked first)."""
        return self._release(Query.sum(columns), params)

    def count(self, columns=None, value=None, **params) -> Release:
        """Release the number of records whose column equals (or passes) ``value``."""
        return self._release(Query.count(columns, value), params)

    def proportion(self, columns=None, value=None, **params) -> Release:
        """Release the fraction of records whose column equals (or passes) ``value``."""
        return self._release(Query.proportion(columns, value), params)

    def median(self, columns=None, **params) -> Release:
        """Release the median of each of ``columns`` (a Wasserstein mechanism)."""
        return self._release(Statistic.median(columns), params)

    def quantile(self, columns=None, q=0.5, *, monotone: bool = False,
                 **params) -> Release:
        """Release the ``q`` quantile(s) of each of ``columns``.

        ``monotone=True`` returns each column's quantiles sorted into the
        order of their levels (post-processing: free; the ledger records the
        release as drawn).
        """
        from skattr._release import check_monotone

        check_monotone(monotone)
        statistic = Statistic.quantile(columns, q)
        release = self._release(statistic, params)
        return release.monotone_quantiles(statistic.q) if monotone else release

    def std(self, columns=None, ddof: int = 1, **params) -> Release:
        """Release the standard deviation of each of ``columns``."""
        return self._release(Statistic.std(columns, ddof), params)

    def agg(self, func, columns=None, **params) -> Release:
        """Release any statistic: a name, a callable, a Query or a Statistic."""
        from skattr._accessor import _as_query

        return self._release(_as_query(func, columns), params)

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
        from skattr._accessor import _as_query

        query = (Query(statistic, columns, value)
                 if statistic in ("count", "proportion")
                 else _as_query(statistic, columns))
        found = self._planned_joint(query, params)
        return found[1], found[-1]

    def _planned(self, query, params):
        from skattr._dask import check_releasable

        check_releasable(self._data, query)     # a Dask frame: before any fit
        for key in ("secret", "reference", "theta", "law", "bounds"):
            if key in params:
                raise InvalidParameterError(
                    f"{key}= is the ledger's own; open another ledger for "
                    f"another {key}.")
        if "random_state" in params:
            raise InvalidParameterError(
                "random_state= is the ledger's own (one noise source for every "
                "release); pass it when opening the ledger.")
        linear = getattr(query, "is_linear", False)
        mechanism = params.pop("mechanism",
                               "apgm" if linear else "approx-wasserstein")
        if mechanism == "auto" and not linear:
            # No Gaussian law of a non-linear statistic here.
            mechanism = "approx-wasserstein"
        from skattr.mechanisms import MECHANISMS

        if mechanism not in MECHANISMS and mechanism != "auto":
            import difflib

            close = difflib.get_close_matches(str(mechanism), self.GAUSSIAN, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise InvalidParameterError(
                f"Unknown mechanism {mechanism!r}.{hint} The ledger releases "
                f"through {', '.join(self.GAUSSIAN + self.LAPLACE)}.")
        if mechanism in self.LAPLACE:
            return self._planned_laplace(query, mechanism, params)
        if mechanism not in self.GAUSSIAN and mechanism != "auto":
            raise NotCertifiableError(
                f"The ledger certifies releases of Gaussian-noise mechanisms "
                f"jointly ({', '.join(self.GAUSSIAN)}); mechanism={mechanism!r} "
                "has no joint certificate here, so it is refused rather than "
                "counted by a sum of epsilons.")
        # "auto": the registry's choice among the Gaussian-noise mechanisms,
        # the least expected error.
        est, plan = self._build(query, mechanism, params)
        if plan.noise_law.kind != "gaussian" and not plan.noise_law.is_zero:
            raise NotCertifiableError(
                f"mechanism={mechanism!r} planned {plan.noise_law.kind} noise, "
                "which the ledger does not certify jointly.")
        statistics = _single_statistics(est.query_, self._n)
        return est, plan, statistics, np.asarray(plan.noise_law.covariance,
                                                 dtype=float), None

    def _planned_laplace(self, query, mechanism: str, params: dict):
        """Plan a Wasserstein-mechanism release (Laplace noise on each value)."""
        est, plan = self._build(query, mechanism, params)
        law = plan.noise_law
        if not (law.is_zero or (law.kind == "laplace"
                                and np.allclose(law.basis, np.eye(law.k)))):
            raise NotCertifiableError(
                f"mechanism={mechanism!r} planned {law.kind} noise that is not "
                "independent Laplace noise on each value; the ledger does not "
                "certify it jointly.")
        # The same statistic under the same Theta: the mechanism, the query
        # and every parameter but the privacy ones (and the progress bar,
        # which changes nothing and is not stored).
        others = {k: v for k, v in sorted(params.items())
                  if k not in ("epsilon", "delta", "progress")}
        key = f"{mechanism} | {est.query_!r} | {others!r}"
        # The part of delta that is the chance drawn laws misjudge a tail:
        # independent between releases (each fit draws anew), so it adds up.
        from skattr.laws import ResamplingLaw

        resampled = isinstance(est.law_, ResamplingLaw)
        beta = (est.law_.laws[0].failure_share * float(plan.delta)
                if resampled else 0.0)
        laplace = {"key": key, "epsilon": float(plan.epsilon),
                   "delta": float(plan.delta), "beta": beta,
                   # The noise's scale on each value, what the joint of
                   # different statistics weighs their moves by.
                   "scale": 0.0 if law.is_zero else float(law.scale),
                   "resample": resampled,
                   "privacy": est.privacy,
                   "statistic": _statistic_to_json(est.query_, est.columns_)}
        self._laplace_queries.setdefault(key, (est.query_, est.columns_))
        return est, plan, (), np.zeros((0, 0)), laplace

    def _build(self, query, mechanism: str, params: dict):
        """Fit the release's estimator with the ledger's secret, Theta and noise."""
        from skattr._accessor import build_mechanism

        # The Wasserstein mechanisms take no law= (they use the exact or
        # resampled laws themselves).
        law = {} if mechanism in self.LAPLACE else {"law": self.law}
        est = build_mechanism(query, secret=self.secret, reference=self.reference,
                              data=self._data, n_rows=self._n,
                              mechanism=mechanism,
                              among=lambda cls: joint_noise(cls) == "gaussian",
                              theta=self.theta, bounds=self.bounds,
                              random_state=self._noise_source(), **law, **params)
        return est, est.plan(n=self._n)

    def _noise_source(self):
        from skattr._random import check_random_state

        if self.random_state is None:
            return None                 # each release: the operating system's
        if self._rng is None:
            self._rng = check_random_state(self.random_state, owner="Ledger")
        return self._rng

    def _planned_joint(self, query, params) -> tuple:
        """Plan a release and its joint epsilon; ``epsilon="remaining"`` fits it.

        Returns (est, plan, statistics, noise_cov, laplace, joint).
        """
        params = dict(params)
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
                    f"epsilon must be a positive number, or 'remaining' for the "
                    f"largest the budget allows; got {params['epsilon']!r}.")
            return self._fitted_to_budget(query, params)
        found = self._planned(query, params)
        return (*found, self._joint_epsilon(*found[2:]))

    def _fitted_to_budget(self, query, params) -> tuple:
        """Plan the release with the largest own epsilon the budget allows.

        The joint epsilon grows with the release's own epsilon (less
        noise), so the largest own epsilon whose joint epsilon is within
        the budget is found by bracketing and bisection in log scale, to a
        relative 1e-3, from below: the plan returned is one whose joint
        epsilon was computed and is within the budget.
        """
        limit = self.budget[0] * (1 + _BUDGET_RTOL)

        def attempt(epsilon):
            found = self._planned(query, dict(params, epsilon=epsilon))
            return (*found, self._joint_epsilon(*found[2:]))

        # Bracket: double while the release fits, halve while it does not.
        low = high = best = None
        epsilon = max(self.remaining, 1e-3 * self.budget[0])
        while low is None or high is None:
            trial = attempt(epsilon)
            if trial[-1] <= limit:
                low, best = epsilon, trial
                if high is None and epsilon >= _MAX_FITTED_EPSILON:
                    return best         # no noise needed up to that epsilon
                epsilon *= 2
            else:
                high = epsilon
                epsilon /= 2
                if low is None and epsilon < 1e-9 * self.budget[0]:
                    raise BudgetExceededError(
                        f"Refused before any noise was drawn: no epsilon fits "
                        f"this release within the budget (spent epsilon = "
                        f"{self.spent[0]:.4g} of {self.budget[0]:g}); the "
                        "releases so far leave nothing for it.")
        while high / low > 1 + _FIT_RTOL:
            middle = math.sqrt(low * high)
            trial = attempt(middle)
            if trial[-1] <= limit:
                low, best = middle, trial
            else:
                high = middle
        return best

    def _release(self, query, params) -> Release:
        est, plan, statistics, noise_cov, laplace, joint = self._planned_joint(
            query, params)
        if joint > self.budget[0] * (1 + _BUDGET_RTOL):
            spent = self.spent[0]
            raise BudgetExceededError(
                f"Refused before any noise was drawn: with this release the "
                f"joint guarantee of the {len(self.releases) + 1} releases "
                f"would be epsilon = {joint:.4g} at delta = {self.budget[1]:g}, "
                f"over the budget epsilon = {self.budget[0]:g}. Spent so far: "
                f"epsilon = {spent:.4g} (remaining {self.remaining:.4g}). "
                "Release it with a smaller epsilon (more noise)"
                + (" or a smaller delta (the releases' deltas add up past the "
                   "budget's)" if math.isinf(joint) and self._laplace_only()
                   else "") + ", or release fewer statistics.")
        release = est.release(self._data)
        self.releases.append(LedgerEntry(
            release, statistics, noise_cov, joint, laplace=laplace,
            joint_delta=(None if laplace is None else self._laplace_joint_delta(
                [e.laplace for e in self.releases] + [laplace]))))
        self._columns.update(map(str, est.columns_))
        return release

    # ---------------------------------------------------------- persistence
    def _payload(self) -> dict:
        return {
            "schema": SCHEMA_VERSION,
            "budget": list(self.budget),
            "secret": _secret_to_json(self.secret),
            "theta": _theta_to_json(self.theta),
            "theta_seed": self._theta_seed,
            "law": self.law,
            "bounds": _bounds_to_json(self.bounds),
            "data": _fingerprint(self._data, sorted(self._columns)),
            "reference": (None if self.reference is None else
                          _fingerprint(self.reference,
                                       sorted(map(str, self.reference.columns)))),
            "releases": [{
                "statistics": [[_query_to_json(b), w] for b, w in e.statistics],
                "noise_cov": np.asarray(e.noise_cov).tolist(),
                "joint_epsilon": e.joint_epsilon,
                "laplace": e.laplace,
                "joint_delta": e.joint_delta,
                # Values as [label, value] pairs: their order survives the
                # sorted keys of the file.
                "record": {**e.as_record(),
                           "values": [[k, v] for k, v in
                                      e.as_record()["values"].items()]},
            } for e in self.releases],
        }

    def to_json(self) -> str:
        """Serialise the ledger (no data, no pickle) to keep it between sessions.

        The file holds the budget, the secret, Theta (its name, a
        ``Resample``'s parameters and the seed of the joint draws, or an
        ``ExpertTheta``'s models), every release's statistics, noise and
        joint epsilon, fingerprints of the private data (its row count and a
        hash of each released column) and of the reference data, a schema
        version and a content hash.
        """
        payload = self._payload()
        body = json.dumps(payload, sort_keys=True, allow_nan=True)
        return json.dumps({"skattr_ledger": payload,
                           "sha256": hashlib.sha256(body.encode()).hexdigest()},
                          sort_keys=True, indent=1)

    @classmethod
    def from_json(cls, text: str, data: pd.DataFrame, *, reference=None,
                  random_state=None) -> Ledger:
        """Load a ledger saved by :meth:`to_json`, on the same private data.

        Raises
        ------
        DataValidationError
            The file is malformed or tampered with (its content hash does not
            match), of another schema version, or ``data`` (or ``reference``)
            is not the dataset the ledger was opened on: its row count or a
            released column's hash differs.
        """
        try:
            outer = json.loads(text)
            payload = outer["skattr_ledger"]
            digest = outer["sha256"]
        except (TypeError, ValueError, KeyError) as exc:
            raise DataValidationError(
                "This is not a skattr ledger file (to_json's output).") from exc
        body = json.dumps(payload, sort_keys=True, allow_nan=True)
        if hashlib.sha256(body.encode()).hexdigest() != digest:
            raise DataValidationError(
                "The ledger file's content hash does not match: it was altered "
                "after it was saved. Use the file to_json wrote.")
        schema = payload.get("schema")
        if schema not in (1, SCHEMA_VERSION):
            raise DataValidationError(
                f"The ledger file has schema {schema!r}; this skattr reads "
                f"schemas 1 and {SCHEMA_VERSION}.")
        from skattr._dask import is_dask_frame

        if not (isinstance(data, pd.DataFrame) or is_dask_frame(data)):
            raise InvalidParameterError(
                "from_json needs the private DataFrame the ledger was opened on "
                "(pandas or Dask).")
        saved = payload["data"]
        _check_fingerprint(data, saved, "private data", schema)
        if payload["reference"] is not None:
            if reference is None:
                raise InvalidParameterError(
                    "The ledger was opened with reference data; pass the same "
                    "reference= to from_json.")
            _check_fingerprint(reference, payload["reference"], "reference data",
                               schema)
        ledger = cls(data, secret=_secret_from_json(payload["secret"]),
                     reference=reference, budget=tuple(payload["budget"]),
                     theta=_theta_from_json(payload["theta"]),
                     law=payload["law"], random_state=random_state,
                     # Files written before clipping: their releases clipped
                     # nothing.
                     bounds=_bounds_from_json(payload.get("bounds")))
        ledger._theta_seed = payload.get("theta_seed")
        for e in payload["releases"]:
            statistics = tuple((_query_from_json(q), float(w))
                               for q, w in e["statistics"])
            record = {**e["record"], "values": dict(
                (k, v) for k, v in e["record"]["values"])}
            ledger.releases.append(LedgerEntry(
                None, statistics, np.asarray(e["noise_cov"], dtype=float),
                float(e["joint_epsilon"]), record, e["laplace"],
                e["joint_delta"]))
            stored = (e["laplace"] or {}).get("statistic")
            if stored is not None:
                ledger._laplace_queries.setdefault(
                    e["laplace"]["key"], _statistic_from_json(stored))
        ledger._columns.update(saved["columns"])
        return ledger

    # ----------------------------------------------------------- the joint
    def _joint_epsilon(self, new_statistics, new_noise_cov,
                       new_laplace=None) -> float:
        """Return the joint epsilon at the budget's delta, the new release included.

        Never below what was spent: the releases so far are a function of
        the releases with this one, so their epsilon bounds nothing lower
        (a refit Theta's worst case can move by rounding), and the larger of
        two valid bounds is valid.
        """
        laplace = [e.laplace for e in self.releases if e.laplace]
        if new_laplace is not None:
            laplace.append(new_laplace)
        if laplace:
            if len(laplace) != len(self.releases) + 1:
                raise NotCertifiableError(
                    "The ledger does not certify Gaussian-noise and "
                    "Laplace-noise releases jointly: their joint law is not "
                    "modelled, and a sum of epsilons is not a Pufferfish "
                    "guarantee. Keep one kind of noise per dataset.")
            computed = self._laplace_epsilon(laplace)
        else:
            computed = self._computed_joint(new_statistics, new_noise_cov)
        return max(computed, self.spent[0])

    @staticmethod
    def _laplace_delta(entries: list) -> float:
        """Return max_j (delta_j - beta_j) + sum_j beta_j (drawn failures add)."""
        return float(max(e["delta"] - e["beta"] for e in entries)
                     + sum(e["beta"] for e in entries))

    def _laplace_joint_delta(self, entries: list) -> float | None:
        """Return the joint delta of Laplace releases; None means the budget's."""
        if len({e["key"] for e in entries}) > 1:
            return None
        return self._laplace_delta(entries)

    def _laplace_only(self) -> bool:
        return all(e.laplace for e in self.releases)

    def _laplace_epsilon(self, entries: list) -> float:
        """Return the joint epsilon of Laplace-noise releases.

        One statistic released again and again: k releases of the same
        statistic F under the same Theta, release j with Laplace noise of
        scale b_j = W_j / epsilon_j, W_j its (W, delta_j)-closeness. Take
        delta* = max delta_j and a coupling of the two laws of F moving all
        but delta* of the mass by at most W(delta*) <= W_j for every j (the
        least W is non-increasing in delta). Coupling the k copies along it
        moves the stacked statistic by at most sum_j W_j / b_j = sum_j
        epsilon_j in the noises' metric sum_j |x_j - y_j| / b_j, so the
        joint release is (sum_j epsilon_j, delta*)-private (Chen and
        Ohrimenko, Thm 3.1-3.2). A W_j bounded from drawn laws holds except
        with a chance beta_j (part of delta_j), independent between fits:
        delta* is then max_j (delta_j - beta_j) plus sum_j beta_j. Above the
        budget's delta the joint is refused (epsilon infinite).

        Different statistics: :meth:`_laplace_joint_epsilon`, from their
        joint law.
        """
        if len({e["key"] for e in entries}) > 1:
            return self._laplace_joint_epsilon(entries)
        if self._laplace_delta(entries) > self.budget[1] * (1 + _BUDGET_RTOL):
            return math.inf
        return float(sum(e["epsilon"] for e in entries))

    def _laplace_joint_epsilon(self, entries: list) -> float:
        """Return the joint epsilon of Laplace releases of different statistics.

        The releases are Y_j = F_c(j)(D) + L_j, F_c the distinct statistics
        (values in R^d_c), L_j independent Laplace noise of scale b_j on each
        value. For datasets D and D', the density of Y changes by at most a
        factor exp(Z), Z = sum_c w_c ||F_c(D) - F_c(D')||_1 with w_c = sum
        of 1 / b_j over the releases of F_c. If a coupling of the datasets
        given the two values of a pair puts mass at least 1 - delta on
        Z <= W, then P(Y in S | a) <= e^W P(Y in S | b) + delta for every
        S (integrate the density bound over the coupling, as in Chen and
        Ohrimenko Thm 3.2): the joint release is (W, delta)-private, W the
        (W, delta)-closeness of the stacked statistic's joint laws in the
        noises' metric. This is computed at the budget's delta, under the
        resampling Theta of the reference data (every release's own):

        - exactly, when the model's datasets are few enough to enumerate:
          the joint laws of the stacked statistic on every dataset, and
          :func:`~skattr.wasserstein.wd_closeness` in R^d;
        - otherwise from one explicit coupling: a pair of datasets that
          share all but their difference in group records
          (:func:`~skattr.theta._resample.coupled_subsets`), every statistic
          evaluated on the same pairs; an order statistic of m draws of Z
          bounds its (1 - delta')-quantile except with chance beta per pair
          (delta = delta' + beta, beta the Resample's failure_share of it).

        Never a sum of epsilons: the laws of each statistic alone can be the
        same under both values while their joint law reveals the secret.
        """
        from skattr.laws._draws import quantile_bounds
        from skattr.laws._resampled import coupled_values

        if not all(e.get("resample") for e in entries):
            raise NotCertifiableError(
                "The ledger certifies Laplace-noise releases of different "
                "statistics from their joint law under the resampling Theta; "
                "a release here used another Theta (the exact count laws), "
                "whose joint law with other statistics is not modelled. Open "
                "the ledger with theta=skattr.theta.Resample() to release "
                "different statistics with Laplace noise.")
        privacy = {e["privacy"] for e in entries}
        if len(privacy) > 1:
            raise NotCertifiableError(
                "Laplace-noise releases with dataset and distributional privacy "
                "have no joint certificate; keep one privacy= per ledger.")
        privacy = privacy.pop()
        weights: dict = {}
        for e in entries:
            w = math.inf if e["scale"] == 0 else 1.0 / e["scale"]
            weights[e["key"]] = weights.get(e["key"], 0.0) + w
        laws = [self._resampled(key) for key in weights]
        w = list(weights.values())
        n = self._n
        pairs = (self.secret.grid_pairs(
            n, alternative="use privacy='distributional'")
                 if privacy == "dataset" else
                 list(zip(*(v.tolist() for v in self.secret.pair_values(n)),
                          strict=True)))
        delta = self.budget[1]
        exact = self._laplace_exact(laws, w, pairs, privacy, n)
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
            for (va, vb), weight in zip(drawn, w, strict=True):
                moved = np.abs(va - vb).sum(axis=1)
                # A value released without noise (weight inf) may not move.
                z += np.multiply(moved, weight, out=np.zeros(m),
                                 where=moved > 0)
            _, upper = quantile_bounds(z[:, None], [1 - disregarded], failure)
            worst = max(worst, float(upper[0, 0]))
        return worst

    def _laplace_exact(self, laws, weights, pairs, privacy, n) -> float | None:
        """Return the exact joint (W, delta)-closeness, or None if not enumerable."""
        from skattr.laws._coupling import MAX_EXACT_POINTS
        from skattr.laws._draws import law_of
        from skattr.wasserstein import wd_closeness

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
            worst = max(worst, wd_closeness(xa, xb, self.budget[1], pa, pb))
        # The values were scaled in floating point: a relative rounding.
        return worst * (1 + 1e-12)

    def _resampled(self, key):
        """Return a released statistic's resampling Theta, seeded by the ledger."""
        from dataclasses import replace

        from skattr._random import seed_of
        from skattr.theta._resample import Resample

        if key not in self._laplace_laws:
            if key not in self._laplace_queries:
                raise NotCertifiableError(
                    "A release loaded from a ledger file is a statistic the file "
                    "cannot restate (a function); its joint law with a different "
                    "statistic cannot be certified after loading. Release only "
                    "that statistic again through this ledger, or keep the "
                    "ledger in one process (and in memory) to release others.")
            if self.reference is None:
                raise NotCertifiableError(
                    "The joint law of different Laplace-noise statistics is "
                    "drawn from reference data; open the ledger with "
                    "reference=.")
            if self._theta_seed is None:
                given = getattr(self.theta, "random_state", None)
                self._theta_seed = seed_of(given, owner="Resample")
            spec = self.theta if isinstance(self.theta, Resample) else Resample()
            spec = replace(spec, random_state=self._theta_seed)
            query, columns = self._laplace_queries[key]
            self._laplace_laws[key] = spec.fit(
                self._clipped_reference(query, columns), query, columns,
                self.secret)
        return self._laplace_laws[key]

    def _clipped_reference(self, query, columns):
        """Return the reference data clipped as a release of ``query`` clips it."""
        from skattr._clipping import clip_reference, resolve_clipping

        clipping = resolve_clipping(self.bounds, query, columns, self.reference,
                                    reads_reference=True, needs_declared=False)
        return clip_reference(self.reference, clipping, [self.secret])

    def _computed_joint(self, new_statistics, new_noise_cov) -> float:
        entries = [(e.statistics, e.noise_cov) for e in self.releases]
        entries.append((new_statistics, new_noise_cov))
        released = [s for stats, _ in entries for s in stats]
        distinct = list(dict.fromkeys(base for base, _ in released))
        index = {s: i for i, s in enumerate(distinct)}
        k, d = len(released), len(distinct)
        select = np.zeros((k, d))
        select[np.arange(k), [index[b] for b, _ in released]] = [
            w for _, w in released]
        noise = np.zeros((k, k))
        start = 0
        for stats, cov in entries:
            end = start + len(stats)
            noise[start:end, start:end] = cov
            start = end
        if self.law != "gaussian":
            return self._exact_epsilon(distinct, select, noise)
        laws = self._joint_laws(distinct)
        return self._epsilon(laws, select, noise)

    def _exact_epsilon(self, distinct, select, noise) -> float:
        """Return the joint epsilon of releases of one statistic, from its exact law.

        k noisy copies F + N_j (weights w_j) are as private as F + N(0, v),
        v = 1 / sum_j w_j^2 / var_j (the precision-weighted average is
        sufficient); a copy without noise releases F itself (v = 0).
        """
        from skattr.calibration._exact_noise import exact_leakage

        if len(distinct) > 1:
            raise NotCertifiableError(
                "The joint law of several statistics is certified as Gaussian "
                "with Theta's joint moments, which must be stated: open the "
                "ledger with law='gaussian' (the releases record it). With "
                f"law={self.law!r} a ledger certifies releases of one statistic.")
        est = self._joint_estimator(distinct)
        from skattr.laws import ExactLaw

        if not isinstance(est.law_, ExactLaw):
            raise NotCertifiableError(
                "This statistic has no exact law here; open the ledger with "
                "law='gaussian' to certify its releases jointly.")
        variances = np.diag(noise)
        variance = (0.0 if np.any(variances <= 0) else
                    1.0 / float(np.sum(select[:, 0] ** 2 / variances)))
        return exact_leakage(est._exact_pairs(self._n), self.budget[1],
                             variance)

    def _joint_estimator(self, distinct):
        """Return the APGM fitted on the d distinct statistics (Theta, laws).

        Kept for the last set of statistics: a release of statistics already
        out reuses it (Theta is fitted once per new statistic). It is fitted,
        never planned.
        """
        from skattr.mechanisms import MECHANISMS

        key = tuple(distinct)
        if self._joint_cache is None or self._joint_cache[0] != key:
            query = distinct[0] if len(distinct) == 1 else StackedQuery.of(*distinct)
            est = MECHANISMS["apgm"](query=query, secret=self.secret,
                                     theta=self.theta, law=self.law,
                                     bounds=self.bounds)
            est.fit(self._data if self.reference is None else self.reference)
            self._joint_cache = (key, est)
        return self._joint_cache[1]

    def _joint_laws(self, distinct) -> PairLaws:
        """Return the Gaussian laws of the d distinct statistics under every pair."""
        est = self._joint_estimator(distinct)
        per_secret = [est._prepare(laws)[0] for laws in est._laws(self._n)]
        laws = PairLaws.concatenate(per_secret)
        # The mechanism orders its columns; map them back to `distinct`.
        names = est.query_.names(est.columns_)
        wanted = [q.names(q.columns)[0] for q in distinct]
        if list(names) != wanted:
            order = [list(names).index(w) for w in wanted]
            laws = PairLaws(laws.mean_diff[:, order],
                            laws.cov_a[:, order][:, :, order],
                            laws.cov_b[:, order][:, :, order],
                            laws.theta_index, laws.n_theta, laws.assumptions)
        return laws

    def _epsilon(self, laws: PairLaws, select: np.ndarray,
                 noise: np.ndarray) -> float:
        delta = self.budget[1]
        values = np.linalg.eigvalsh(noise) if noise.size else np.zeros(0)
        if values.size and values[0] > _SPAN_RTOL * max(values[-1], 1e-300):
            # Sufficient statistic: F + N(0, M^-1), M = A^T Sigma_N^-1 A.
            precision = select.T @ np.linalg.solve(noise, select)
            extra = np.linalg.inv(precision)
            extra = (extra + extra.T) / 2
            reduced = PairLaws(laws.mean_diff, laws.cov_a + extra,
                               laws.cov_b + extra, laws.theta_index,
                               laws.n_theta, laws.assumptions)
            return float(raw_leakage_epsilon(reduced, delta).max(initial=0.0))
        # Some value released without noise: Y's law in K dimensions, in
        # the span of its covariances.
        worst = 0.0
        for diff, ca, cb in zip(laws.mean_diff, laws.cov_a, laws.cov_b,
                                strict=True):
            spanned = _in_span(select @ diff, select @ ca @ select.T + noise,
                               select @ cb @ select.T + noise)
            if spanned is None:
                return math.inf
            d, a, b = spanned
            if d.size == 0:
                continue
            one = PairLaws(d[None], a[None], b[None], np.zeros(1, dtype=int), 1)
            worst = max(worst, float(raw_leakage_epsilon(one, delta).max()))
        return worst
