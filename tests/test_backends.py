"""The same release suite over every registered data backend.

A backend must give the numbers pandas gives (to the rounding of sums taken
in another order), with the same certificates and the same errors; a new
backend joins this suite by being registered.
"""

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.backends import backend_of, registered_backends
from skattr.datasets import make_hospital
from skattr.exceptions import DataValidationError, NotCertifiableError

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])

# The releases here take delta above 1/n on purpose (small frames, quick
# laws): the warning that says so is not what these tests check.
_LARGE_DELTA = pytest.mark.filterwarnings(
    "ignore:delta=.* is at least 1/n:skattr.exceptions.PrivacyLeakWarning")



def _available(backend) -> bool:
    try:
        backend.from_pandas(pd.DataFrame({"x": [1.0]}), chunks=1)
    except ImportError:
        return False
    return True


BACKENDS = [pytest.param(b, id=b.name) for b in registered_backends()]


@pytest.fixture(scope="module")
def frames():
    private = make_hospital(120, random_state=1)
    private["kids"] = np.random.default_rng(0).integers(0, 4, len(private))
    reference = make_hospital(1500, random_state=0)
    reference["kids"] = np.random.default_rng(1).integers(0, 4, len(reference))
    return private, reference


@pytest.fixture(params=BACKENDS)
def backend(request):
    if not _available(request.param):
        pytest.skip(f"the {request.param.name} backend's library is not "
                    "installed")
    return request.param


def _on(backend, frame, chunks=3):
    converted = backend.from_pandas(frame, chunks=chunks)
    assert backend_of(converted) is backend
    return converted


def _same(a, b):
    """Two releases agree: the same certificate, values to rounding."""
    assert a.statistics == b.statistics and a.mechanism == b.mechanism
    assert (a.epsilon, a.delta, a.sensitivity) == (b.epsilon, b.delta,
                                                   b.sensitivity)
    np.testing.assert_allclose(a.noise_covariance, b.noise_covariance,
                               rtol=1e-12, atol=0)
    np.testing.assert_allclose(a.values.to_numpy(), b.values.to_numpy(),
                               rtol=1e-9, atol=1e-9)


@_LARGE_DELTA
@pytest.mark.parametrize("verb, args, kwargs", [
    ("mean", (["weight", "height"],), {"law": "gaussian", "mechanism": "apgm"}),
    pytest.param("sum", (["kids"],), {}, marks=pytest.mark.slow),
    ("count", (["gender"], "other"), {}),
    ("proportion", (["kids"], 2), {}),
    ("median", (["weight"],), {"delta": 0.01}),
    ("quantile", (["height"], [0.25, 0.75]), {"delta": 0.01}),
    pytest.param("std", (["weight"],), {"delta": 0.01}, marks=pytest.mark.slow),
])
@pytest.mark.slow
def test_every_verb_releases_as_pandas_does(backend, frames, verb, args, kwargs):
    private, reference = frames
    reference = reference.iloc[:400]  # the default search, at a test's cost
    kw = dict(secret=SECRET, reference=reference, random_state=0, **kwargs)
    want = getattr(private.attrpriv, verb)(*args, **kw)
    got = getattr(_on(backend, private).attrpriv, verb)(*args, **kw)
    _same(got, want)


def test_a_fit_on_a_reference_of_the_backend_is_the_pandas_fit(backend, frames):
    private, reference = frames
    kw = dict(query=skattr.Query.mean(["weight"]), secret=SECRET,
              law="gaussian", random_state=0)
    want = skattr.mechanisms.OptimalGaussian(**kw).fit(reference)
    got = skattr.mechanisms.OptimalGaussian(**kw).fit(_on(backend, reference, 4))
    assert got.plan(n=len(private)).to_json() == want.plan(
        n=len(private)).to_json()
    assert got.clipping_ == want.clipping_


def test_clipping_reads_and_clips_through_the_backend(backend, frames):
    private, reference = frames
    dirty = private.copy()
    dirty.loc[dirty.index[3], "weight"] = 1e300
    kw = dict(secret=SECRET, reference=reference, mechanism="apgm",
              law="gaussian", random_state=0)
    want = dirty.attrpriv.mean(["weight"], **kw)
    got = _on(backend, dirty).attrpriv.mean(["weight"], **kw)
    _same(got, want)
    assert got.values.iloc[0] < 1e3


@pytest.mark.slow
def test_a_ledger_spends_the_same_on_every_backend(backend, frames):
    private, reference = frames
    kw = dict(secret=SECRET, reference=reference, budget=(3.0, 1e-3),
              law="gaussian", random_state=0)
    want = private.attrpriv.ledger(**kw)
    got = _on(backend, private).attrpriv.ledger(**kw)
    for ledger in (want, got):
        ledger.mean(["weight"], epsilon=1.0)
        ledger.mean(["height"], epsilon=0.5)
    assert got.spent == pytest.approx(want.spent, rel=1e-12)
    # A file saved on one backend loads on the other (same fingerprints).
    skattr.Ledger.from_json(got.to_json(), private, reference=reference)


def test_fingerprints_and_ranges_match_pandas(backend, frames):
    private, _ = frames
    pandas = backend_of(private)
    converted = _on(backend, private, chunks=5)
    columns = ["weight", "kids"]
    assert backend.hash_sums(converted, columns) == pandas.hash_sums(
        private, columns)
    assert backend.row_count(converted) == len(private)
    for mine, theirs in zip(backend.column_ranges(converted, columns),
                            pandas.column_ranges(private, columns), strict=True):
        np.testing.assert_array_equal(mine, theirs)


def test_bad_data_is_refused_alike(backend, frames):
    private, reference = frames
    broken = private.copy()
    broken.loc[broken.index[7], "weight"] = np.nan
    kw = dict(secret=SECRET, reference=reference, mechanism="apgm",
              law="gaussian", random_state=0)
    with pytest.raises(DataValidationError, match="weight"):
        _on(backend, broken).attrpriv.mean(["weight"], **kw)
    empty = private.iloc[:0]
    with pytest.raises(DataValidationError, match="0 sample"):
        _on(backend, empty, chunks=1).attrpriv.mean(["weight"], **kw)


@pytest.mark.slow
@_LARGE_DELTA
def test_a_statistic_the_backend_cannot_compute_exactly_is_refused_first(
        backend, frames):
    private, reference = frames
    statistic = skattr.Statistic.trimmed_mean(["weight"], 0.1)
    reference = reference.iloc[:400]  # the default search, at a test's cost
    converted = _on(backend, private)
    try:
        backend.check_releasable(converted, statistic)
    except NotCertifiableError:
        with pytest.raises(NotCertifiableError):
            converted.attrpriv.agg(statistic, secret=SECRET,
                                   reference=reference, delta=0.05,
                                   theta=skattr.theta.Resample())
    else:
        rel = converted.attrpriv.agg(statistic, secret=SECRET,
                                     reference=reference, delta=0.05,
                                     theta=skattr.theta.Resample(),
                                     random_state=0)
        assert np.isfinite(rel.values).all()


@pytest.mark.slow
@_LARGE_DELTA
@pytest.mark.parametrize("verb", ["mean", "median", "std"])
def test_a_missing_value_in_a_numeric_secret_column_is_refused_alike(
        backend, frames, verb):
    # The secret's column is never released, but a missing value in it is
    # refused by every backend, for every statistic.
    private, reference = frames
    numeric = skattr.Secret.proportion("kids", 1, pairs=[(0.2, 0.4)])
    broken = private.astype({"kids": float})
    broken.loc[broken.index[11], "kids"] = np.nan
    ref = reference.iloc[:400].astype({"kids": float})
    with pytest.raises(DataValidationError, match="kids"):
        getattr(_on(backend, broken).attrpriv, verb)(
            ["weight"], secret=numeric, reference=ref, delta=0.05,
            random_state=0)


def test_a_lazy_reference_collects_the_columns_each_question_needs(frames):
    # A Reference of a lazy frame collects its used columns, and again when
    # a later question needs another column (through the lazy backend).
    from skattr.backends import Reference
    from skattr.backends._dask import DaskBackend

    backend = next(b for b in registered_backends() if b.lazy)
    if not _available(backend):
        pytest.skip("no lazy backend's library is installed")
    assert isinstance(backend, DaskBackend)
    private, reference = frames
    lazy = _on(backend, reference, chunks=4)
    found = Reference(lazy, skattr.Query.mean(["weight"]), ("weight",))
    np.testing.assert_array_equal(found.records()[:, 0],
                                  reference["weight"].to_numpy())
    np.testing.assert_array_equal(found.groups(SECRET),
                                  (reference["gender"] == "female").to_numpy())
