"""Dask DataFrames through the data seam: one pass, the numbers pandas gives."""

import itertools
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr import Statistic
from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
    NotCertifiableError,
)

dd = pytest.importorskip("dask.dataframe")
dask = pytest.importorskip("dask")

# Many partitions (a second a test): in the whole suite.
PARTITIONS = [1, 3, pytest.param(16, marks=pytest.mark.slow),
              pytest.param(20, marks=pytest.mark.slow)]
SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="sync"):
        yield


@pytest.fixture(scope="module")
def frames():
    from skattr.datasets import make_hospital
    return make_hospital(600, random_state=1), make_hospital(3000, random_state=0)


def close(a, b):
    np.testing.assert_allclose(np.asarray(a, dtype=float),
                               np.asarray(b, dtype=float), rtol=1e-12, atol=0)


def same_release(left, right):
    close(left.values, right.values)
    assert list(left.values.index) == list(right.values.index)
    close(left.noise_law.covariance, right.noise_law.covariance)
    assert (left.mechanism, left.epsilon, left.delta) == (
        right.mechanism, right.epsilon, right.delta)


def with_empty_partitions(frame, npartitions):
    """A Dask frame of ``frame``'s rows with two empty partitions among them."""
    bounds = np.linspace(0, len(frame), npartitions + 1).astype(int)
    parts = [frame.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:],
                                             strict=True)]
    parts = [frame.iloc[:0], *parts[:1], frame.iloc[:0], *parts[1:]]
    return dd.from_map(lambda i: parts[i], range(len(parts)),
                       meta=frame.iloc[:0], enforce_metadata=False)


@pytest.mark.slow
@pytest.mark.parametrize("npartitions", PARTITIONS)
def test_linear_releases_equal_pandas(frames, npartitions):
    private, reference = frames
    ddf = dd.from_pandas(private, npartitions=npartitions)
    kw = dict(secret=SECRET, reference=reference, law="gaussian",
              mechanism="apgm", random_state=3)
    for call in (lambda f: f.attrpriv.mean(["weight", "height"], **kw),
                 lambda f: f.attrpriv.sum(["blood_pressure"], **kw),
                 lambda f: f.attrpriv.count(["weight"], lambda w: w > 150,
                                            **kw),
                 lambda f: f.attrpriv.proportion(["weight"],
                                                 lambda w: w > 150, **kw)):
        same_release(call(private), call(ddf))


@pytest.mark.slow
@pytest.mark.parametrize("npartitions", PARTITIONS)
@pytest.mark.parametrize("theta", ["moments", "auto"])
def test_a_dask_reference_fits_the_same_theta(frames, npartitions, theta):
    private, reference = frames
    dref = dd.from_pandas(reference, npartitions=npartitions)
    kw = dict(secret=SECRET, law="gaussian", theta=theta, random_state=0)
    for mechanism in ("apgm", "optimal"):
        same_release(
            private.attrpriv.mean(["weight", "height"], reference=reference,
                                  mechanism=mechanism, **kw),
            private.attrpriv.mean(["weight", "height"], reference=dref,
                                  mechanism=mechanism, **kw))


def test_moments_theta_reads_a_dask_reference_in_one_pass(frames, monkeypatch):
    # theta="moments" needs only the per-group sufficient statistics: one
    # reduction, no column collected to the driver.
    from skattr.backends import _dask
    private, reference = frames
    calls = []
    monkeypatch.setattr(_dask, "collect",
                        lambda *a: calls.append("collect") or pytest.fail())
    real = _dask._reduce
    monkeypatch.setattr(_dask, "_reduce",
                        lambda *a: calls.append("pass") or real(*a))
    # bounds="reference": its ranges in one pass (the default, "robust",
    # reads the released columns' values for their exact quartiles).
    est = skattr.mechanisms.AttributePrivateGaussian(
        query=skattr.Query.mean(["weight"]), secret=SECRET, theta="moments",
        law="gaussian", bounds="reference")
    est.fit(dd.from_pandas(reference, npartitions=8))
    # The reference's ranges, then the statistics.
    assert calls == ["pass", "pass"]
    calls.clear()
    est.release(dd.from_pandas(private, npartitions=8))
    assert calls == ["pass"]        # n and the totals together


@pytest.mark.slow
def test_wasserstein_count_with_a_dask_reference(frames):
    private, reference = frames
    secret = skattr.Secret.proportion("weight", lambda w: w > 150,
                                      pairs=[(0.4, 0.6)])
    kw = dict(secret=secret, random_state=0)
    same_release(
        private.attrpriv.count(["gender"], "female", reference=reference, **kw),
        dd.from_pandas(private, npartitions=5).attrpriv.count(
            ["gender"], "female", reference=dd.from_pandas(reference, 7), **kw))


@pytest.mark.parametrize("npartitions", [3, 16])
def test_empty_partitions_and_a_partition_without_a_group(frames, npartitions):
    private, reference = frames
    # Sorted by the secret: the first partitions hold one group only.
    ordered = reference.sort_values("gender", kind="stable")
    kw = dict(secret=SECRET, law="gaussian", mechanism="apgm",
              theta="moments", random_state=0)
    expected = private.attrpriv.mean(["weight"], reference=ordered, **kw)
    got = with_empty_partitions(private, npartitions).attrpriv.mean(
        ["weight"], reference=with_empty_partitions(ordered, npartitions), **kw)
    same_release(expected, got)


def test_nan_in_a_used_column_raises_as_pandas_does(frames):
    private, reference = frames
    broken = private.copy()
    broken.loc[broken.index[400], "weight"] = np.nan
    kw = dict(secret=SECRET, reference=reference, law="gaussian",
              mechanism="apgm")
    with pytest.raises(DataValidationError) as pandas_error:
        broken.attrpriv.mean(["weight"], **kw)
    with pytest.raises(DataValidationError) as dask_error:
        dd.from_pandas(broken, npartitions=6).attrpriv.mean(["weight"], **kw)
    assert str(dask_error.value) == str(pandas_error.value)


def test_string_and_categorical_columns(frames):
    private, reference = frames
    private = private.assign(gender=private["gender"].astype("category"),
                             band=np.where(private["weight"] > 150, "high",
                                           "low"))
    reference = reference.assign(
        gender=reference["gender"].astype("category"),
        band=np.where(reference["weight"] > 150, "high", "low"))
    kw = dict(secret=SECRET, law="gaussian", mechanism="apgm", random_state=1)
    same_release(
        private.attrpriv.proportion(["band"], "high", reference=reference, **kw),
        dd.from_pandas(private, npartitions=4).attrpriv.proportion(
            ["band"], "high", reference=dd.from_pandas(reference, 9), **kw))


def test_estimators_fit_and_release_dask_frames(frames):
    private, reference = frames
    make = lambda: skattr.mechanisms.AttributePrivateGaussian(  # noqa: E731
        query=skattr.Query.mean(["weight"]), secret=SECRET, law="gaussian",
        random_state=5)
    expected = make().fit(reference).release(private)
    got = make().fit(dd.from_pandas(reference, 4)).release(
        dd.from_pandas(private, 4))
    same_release(expected, got)
    plan = make().fit(reference).plan(dd.from_pandas(private, 4))
    close(plan.noise_law.covariance, expected.noise_law.covariance)


@pytest.mark.slow
def test_plan_and_leakage_count_rows_once(frames):
    private, reference = frames
    ddf = dd.from_pandas(private, npartitions=5)
    kw = dict(secret=SECRET, reference=reference, law="gaussian",
              mechanism="apgm")
    close(ddf.attrpriv.plan(["weight"], **kw).noise_law.covariance,
          private.attrpriv.plan(["weight"], **kw).noise_law.covariance)
    assert ddf.attrpriv.leakage(["weight"], **kw) == pytest.approx(
        private.attrpriv.leakage(["weight"], **kw), rel=1e-12)


def test_dp_baseline_clips_to_its_bounds_in_each_partition(frames):
    private, _ = frames
    kw = dict(mechanism="dp-laplace", bounds={"weight": (0, 400)},
              random_state=0)
    same_release(private.attrpriv.mean(["weight"], **kw),
                 dd.from_pandas(private, 6).attrpriv.mean(["weight"], **kw))
    outlier = private.copy()
    outlier.loc[outlier.index[-1], "weight"] = 1e6
    same_release(outlier.attrpriv.mean(["weight"], **kw),
                 dd.from_pandas(outlier, 6).attrpriv.mean(["weight"], **kw))


def test_what_dask_frames_cannot_do_is_refused(frames):
    private, reference = frames
    ddf = dd.from_pandas(private, npartitions=3)
    with pytest.raises(NotCertifiableError, match="partitioning"):
        ddf.attrpriv.agg(skattr.Statistic.trimmed_mean(["weight"]),
                         secret=SECRET, reference=reference, random_state=0)
    with pytest.raises(NotCertifiableError, match="partitioning"):
        ddf.attrpriv.agg(lambda d: d["weight"].max(), ["weight"], secret=SECRET,
                         reference=reference, random_state=0)


@pytest.mark.slow
def test_importing_skattr_does_not_import_dask():
    code = ("import sys, skattr; assert 'dask' not in sys.modules; "
            "import dask.dataframe as dd, pandas as pd; "
            "f = dd.from_pandas(pd.DataFrame({'a': [1.0]}), npartitions=1); "
            "print(type(f.attrpriv).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "AttributePrivacyAccessor"


@pytest.mark.slow
def test_end_to_end_on_a_local_cluster(frames):
    distributed = pytest.importorskip("distributed")
    private, reference = frames
    kw = dict(secret=SECRET, law="gaussian", mechanism="apgm", random_state=2)
    expected = private.attrpriv.mean(["weight", "height"], reference=reference,
                                     **kw)
    # Generous connection timeouts (30 s by default): at load 15 a worker
    # process takes tens of seconds to import and answer.
    with dask.config.set({"distributed.comm.timeouts.connect": "300s",
                          "distributed.comm.timeouts.tcp": "300s"}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                     processes=True,
                                     dashboard_address=None) as cluster, \
            distributed.Client(cluster), dask.config.set(scheduler=None):
        got = dd.from_pandas(private, npartitions=8).attrpriv.mean(
            ["weight", "height"], reference=dd.from_pandas(reference, 6), **kw)
    same_release(expected, got)


# --- Exact medians, quantiles and standard deviations -----------------------


def awkward_columns(n, seed):
    """Columns with ties, a heavy tail, a constant and integers."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "normal": rng.normal(size=n),
        "ties": rng.integers(0, 4, n).astype(float),
        "heavy": np.exp(5 * rng.normal(size=n)),
        "constant": np.full(n, 0.1),
        "count": rng.integers(0, 100, n),
    })


@pytest.mark.parametrize("npartitions", PARTITIONS)
@pytest.mark.parametrize("n", [1, 2, 7, 1000])
def test_quantiles_and_medians_equal_numpy_to_the_bit(n, npartitions):
    from skattr.backends import _dask
    frame = awkward_columns(n, seed=n)
    ddf = dd.from_pandas(frame, npartitions=min(npartitions, n))
    columns = list(frame.columns)
    for stat in (Statistic.median(columns),
                 Statistic.quantile(columns, q=[0.0, 0.01, 0.25, 0.5, 0.9, 1.0])):
        got_n, got = _dask.exact_statistic(ddf, stat, columns)
        assert got_n == n
        assert np.array_equal(got, stat.values(frame, columns))


@pytest.mark.parametrize("npartitions", PARTITIONS)
def test_std_equals_numpy(npartitions):
    from skattr.backends import _dask
    frame = awkward_columns(1000, seed=3)
    columns = list(frame.columns)
    for ddof in (0, 1):
        stat = Statistic.std(columns, ddof=ddof)
        _, got = _dask.exact_statistic(
            dd.from_pandas(frame, npartitions=npartitions), stat, columns)
        # Relative 1e-12, or 1e-13 of the column's scale: the constant
        # column's std is rounding either way (numpy's 1.4e-15 on values of
        # 0.1; merged partitions' 1e-16), and rounding scales with the values.
        scale = frame[columns].abs().max().to_numpy()
        want = stat.values(frame, columns)
        assert np.all(np.abs(got - want) <= 1e-12 * np.abs(want) + 1e-13 * scale)


def test_a_median_takes_three_passes(monkeypatch):
    from skattr.backends import _dask
    frame = awkward_columns(5000, seed=1)
    ddf = dd.from_pandas(frame, npartitions=16)
    passes = []
    real_reduce = _dask._reduce
    monkeypatch.setattr(_dask, "_reduce",
                        lambda *a: passes.append("reduce") or real_reduce(*a))
    real_gather = _dask._gather
    monkeypatch.setattr(_dask, "_gather",
                        lambda *a: passes.append("collect") or real_gather(*a))
    real_pass = _dask._pass
    every = []
    monkeypatch.setattr(_dask, "_pass",
                        lambda *a, **k: every.append(1) or real_pass(*a, **k))
    _dask.exact_statistic(ddf, Statistic.median(["normal", "heavy"]),
                          ["normal", "heavy"])
    # The range, one histogram, the bins holding the two middle ranks; the
    # check that they read the same data adds no pass.
    assert passes == ["reduce", "reduce", "collect"]
    assert len(every) == 3


def test_a_crowded_bin_is_split_by_another_pass(monkeypatch):
    from skattr.backends import _dask
    monkeypatch.setattr(_dask, "_MAX_COLLECTED", 10)
    rng = np.random.default_rng(2)
    # Most values in a sliver of the range: their bin is split again.
    frame = pd.DataFrame({"x": np.concatenate([rng.random(3000) * 1e-6,
                                               [1.0, 1e6]])})
    stat = Statistic.quantile(["x"], q=[0.3, 0.5, 0.77])
    _, got = _dask.exact_statistic(dd.from_pandas(frame, npartitions=5), stat,
                                   ["x"])
    assert np.array_equal(got, stat.values(frame, ["x"]))


@pytest.mark.slow
@pytest.mark.filterwarnings(
    "ignore:delta=.* is at least 1/n:skattr.exceptions.PrivacyLeakWarning")
def test_median_quantile_and_std_releases_equal_pandas(frames):
    # One fit per statistic; two copies of the fitted estimator draw the same
    # noise, one releasing the pandas frame, one the Dask frame.
    import copy

    from skattr.theta import Resample
    private, reference = frames
    ddf = with_empty_partitions(private, 16)
    for query in (Statistic.median(["weight"]),
                  Statistic.quantile(["height"], q=[0.25, 0.75]),
                  Statistic.std(["height"])):
        est = skattr.mechanisms.ApproximateWassersteinMechanism(
            query=query, secret=SECRET, delta=0.05, random_state=4,
            theta=Resample(random_state=0, n_draws=5_000)).fit(reference)
        # Planned once (a plan draws no noise; ~4 s each here), and the twin
        # copies the plan: a Dask release that counted another n would plan
        # anew and differ.
        est.plan(n=len(private))
        twin = copy.deepcopy(est)
        same_release(est.release(private), twin.release(ddf))


@pytest.mark.filterwarnings(
    "ignore:delta=.* is at least 1/n:skattr.exceptions.PrivacyLeakWarning")
@pytest.mark.slow
def test_the_accessor_releases_a_dask_median(frames):
    from skattr.theta import Resample
    private, reference = frames
    kw = dict(secret=SECRET, reference=reference, delta=0.05, random_state=4,
              mechanism="approx-wasserstein",
              theta=Resample(random_state=0, n_draws=5_000))
    same_release(private.attrpriv.median(["weight"], **kw),
                 dd.from_pandas(private, npartitions=7).attrpriv.median(
                     ["weight"], **kw))


def test_nan_in_a_median_column_raises_as_pandas_does(frames):
    from skattr.backends import _dask
    private, _ = frames
    broken = private.copy()
    broken.loc[broken.index[10], "weight"] = np.nan
    stat = Statistic.median(["weight"])
    with pytest.raises(DataValidationError) as pandas_error:
        stat.values(broken, ["weight"], what="the private data")
    with pytest.raises(DataValidationError) as dask_error:
        _dask.exact_statistic(dd.from_pandas(broken, npartitions=4), stat,
                              ["weight"])
    assert str(dask_error.value) == str(pandas_error.value)


@pytest.mark.slow
def test_census_example_small(tmp_path):
    # The example's whole path at a small size: Parquet written partition by
    # partition, Theta fitted on a Dask reference, releases on a LocalCluster.
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).parents[1] / "examples" / "dask_census.py"
    spec = importlib.util.spec_from_file_location("dask_census", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    example.write_parquet(tmp_path / "census", 60_000, 0, 10_000)
    example.write_parquet(tmp_path / "reference", 40_000, 1, 10_000)
    with dask.config.set(scheduler=None):
        out = example.main(path=str(tmp_path))
    assert list(out["means"].values.index) == ["age", "education", "commute"]
    assert out["means"].n == 60_000 and out["count"].n == 60_000
    assert out["median"].n == 60_000
    assert out["median"].certified_by.uses("laws.order-statistics")
    # The same release from pandas, with the same seed.
    census = pd.read_parquet(tmp_path / "census")
    reference = pd.read_parquet(tmp_path / "reference")
    expected = skattr.mechanisms.AttributePrivateGaussian(
        query=skattr.Query.mean(["age", "education", "commute"]),
        secret=example.SECRET, theta="moments",
        law=skattr.laws.AssumeGaussian(sampling="with-replacement"),
        epsilon=1.0, delta=1e-6,
        random_state=0).fit(reference).release(census)
    same_release(expected, out["means"])
    expected = census.attrpriv.median(
        ["income"], secret=example.SECRET, reference=reference,
        mechanism="approx-wasserstein",
        theta=skattr.theta.Resample(replace=True), epsilon=1.0, delta=1e-6,
        random_state=2)
    same_release(expected, out["median"])


def test_a_dask_series_and_an_empty_frame(frames):
    private, reference = frames
    est = skattr.mechanisms.AttributePrivateGaussian(
        query=skattr.Query.mean(["weight"]), secret=SECRET, law="gaussian",
        random_state=0).fit(reference[["gender", "weight"]])
    twin = skattr.mechanisms.AttributePrivateGaussian(
        query=skattr.Query.mean(["weight"]), secret=SECRET, law="gaussian",
        random_state=0).fit(reference[["gender", "weight"]])
    ddf = dd.from_pandas(private[["gender", "weight"]], npartitions=3)
    same_release(est.release(private[["gender", "weight"]]), twin.release(ddf))
    with pytest.raises(DataValidationError, match="0 rows"):
        ddf[ddf.weight > 1e9].attrpriv.mean(["weight"], secret=SECRET,
                                            reference=reference,
                                            law="gaussian", mechanism="apgm")


# --- The ledger on a Dask DataFrame -------------------------------------------


@pytest.mark.filterwarnings(
    "ignore:delta=.* is at least 1/n:skattr.exceptions.PrivacyLeakWarning")
@pytest.mark.slow
def test_a_ledger_on_dask_matches_the_pandas_one(frames):
    from skattr.theta import Resample
    private, reference = frames
    frames_ = (private, dd.from_pandas(private, npartitions=6))
    ledgers = [frame.attrpriv.ledger(secret=SECRET, reference=reference,
                                     budget=(6.0, 1e-2), law="gaussian",
                                     random_state=0) for frame in frames_]
    for ledger in ledgers:
        ledger.mean(["weight", "height"], mechanism="apgm", epsilon=1.0)
        ledger.count(["weight"], lambda w: w > 150, mechanism="apgm",
                     epsilon=1.0)
    # Laplace noise: a median and a std, certified jointly.
    laplace = [frame.attrpriv.ledger(
        secret=SECRET, reference=reference, budget=(20.0, 0.1),
        theta=Resample(random_state=0, n_draws=5000), random_state=0)
        for frame in frames_]
    for ledger in laplace:
        ledger.median(["weight"], epsilon=1.0, delta=0.05)
        ledger.std(["height"], epsilon=1.0, delta=0.05)
    # A Dask reference too: collected once, the same certificates.
    distant = frames_[1].attrpriv.ledger(
        secret=SECRET, reference=dd.from_pandas(reference, npartitions=5),
        budget=(20.0, 0.1), theta=Resample(random_state=0, n_draws=5000),
        random_state=0)
    distant.median(["weight"], epsilon=1.0, delta=0.05)
    distant.std(["height"], epsilon=1.0, delta=0.05)
    assert isinstance(distant.reference, pd.DataFrame)
    for a, b in (ledgers, laplace, (laplace[0], distant)):
        assert a.spent == pytest.approx(b.spent, rel=1e-12)
        for x, y in zip(a.releases, b.releases, strict=True):
            same_release(x.release, y.release)
    with pytest.raises(NotCertifiableError, match="partitioning"):
        ledgers[1].agg(Statistic.trimmed_mean(["weight"]), epsilon=1.0)


@pytest.mark.slow
def test_ledger_files_move_between_pandas_and_dask(frames):
    import json
    private, reference = frames
    ledger = private.attrpriv.ledger(secret=SECRET, reference=reference,
                                     budget=(6.0, 1e-3), law="gaussian",
                                     random_state=0)
    ledger.mean(["weight", "height"], mechanism="apgm", epsilon=1.0)
    text = ledger.to_json()
    assert json.loads(text)["skattr"]["object"]["init"]["schema"] == 3
    # The same rows, partitioned any way or in another order, are the same
    # dataset (every released statistic is a function of them).
    for frame in (dd.from_pandas(private, npartitions=1),
                  dd.from_pandas(private, npartitions=7),
                  private.sample(frac=1.0, random_state=3)):
        loaded = skattr.Ledger.from_json(text, frame, reference=reference)
        assert loaded.spent == ledger.spent
    back = skattr.Ledger.from_json(
        skattr.Ledger.from_json(text, dd.from_pandas(private, 4),
                                reference=reference).to_json(),
        private, reference=reference)
    assert back.spent == ledger.spent
    # Another value, or one column's values moved between rows, is not.
    changed = private.copy()
    changed.loc[changed.index[5], "weight"] += 1.0
    moved = private.assign(weight=private["weight"].to_numpy()[::-1])
    for other, match in ((changed, r"\['weight'\]"),
                         (moved, "rows together")):
        with pytest.raises(DataValidationError, match=match):
            skattr.Ledger.from_json(text, dd.from_pandas(other, npartitions=3),
                                    reference=reference)


def test_schema_1_ledger_files_still_load():
    import hashlib
    import json
    from pathlib import Path

    from skattr._ledger._files import _fingerprint_v1
    from skattr.datasets import make_hospital
    # A file of skattr 0.2 (schema 2), made a schema 1 file: the same
    # content, with schema 1's fingerprints (SHA-256 of each column).
    private = make_hospital(200, random_state=1)
    reference = make_hospital(2000, random_state=0)
    text = (Path(__file__).parent / "data" /
            "ledger_schema2_gaussian.json").read_text()
    payload = json.loads(text)["skattr_ledger"]
    payload["schema"] = 1
    payload["data"] = _fingerprint_v1(private, ["height", "weight"])
    payload["reference"] = _fingerprint_v1(
        reference, sorted(map(str, reference.columns)))
    body = json.dumps(payload, sort_keys=True, allow_nan=True)
    text = json.dumps({"skattr_ledger": payload,
                       "sha256": hashlib.sha256(body.encode()).hexdigest()})
    loaded = skattr.Ledger.from_json(text, private, reference=reference)
    assert loaded.spent == (1.502572064888595, 1e-3)
    with pytest.raises(InvalidParameterError, match="schema 1"):
        skattr.Ledger.from_json(text, dd.from_pandas(private, 2),
                                reference=reference)


@pytest.mark.slow
def test_a_ledger_counts_a_dask_frames_rows_once(frames, monkeypatch):
    from skattr.backends import _dask
    private, reference = frames
    counted = []
    real = _dask.row_count
    monkeypatch.setattr(_dask, "row_count",
                        lambda *a, **k: counted.append(1) or real(*a, **k))
    ledger = dd.from_pandas(private, npartitions=4).attrpriv.ledger(
        secret=SECRET, reference=reference, budget=(6.0, 1e-3), law="gaussian",
        random_state=0)
    ledger.mean(["weight"], mechanism="auto", epsilon=1.0)
    ledger.mean(["height"], mechanism="apgm", epsilon=1.0)
    assert counted == [1]


@pytest.mark.slow
def test_a_seeded_resampling_theta_certifies_alike_on_dask_and_pandas():
    # The drawn datasets take each group's records in the order of the values
    # the statistic reads: neither the reference's row order nor the columns a
    # Dask reference leaves out when it is collected change the draws.
    from skattr.datasets import make_hospital
    from skattr.mechanisms import ApproximateWassersteinMechanism
    from skattr.theta import Resample

    reference = make_hospital(400, random_state=0)
    shuffled = reference.sample(frac=1.0, random_state=3)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    scales = [ApproximateWassersteinMechanism(
        query=skattr.Query.mean(["weight"]), secret=secret,
        theta=Resample(random_state=0, moment_bounds=False)).fit(ref).plan(
            n=60).noise_scale
        for ref in (reference, shuffled, dd.from_pandas(reference, npartitions=3))]
    assert scales[0] == scales[1] == scales[2]


# --- A source that changes between the passes of one release -----------------


_SOURCES = itertools.count()


class ChangingSource:
    """A Dask source whose data changes after each pass over it.

    Under the synchronous scheduler each pass calls the function once per
    partition, so the k-th pass reads version k: ``rows[k]`` records of the
    hospital table drawn with seed ``seeds[k]`` (the last version from then
    on). ``frozen=True`` keeps version 0.
    """

    def __init__(self, rows, seeds, npartitions=4, frozen=False):
        from skattr.datasets import make_hospital
        self.versions = [make_hospital(r, random_state=s)
                         for r, s in zip(rows, seeds, strict=True)]
        self.npartitions, self.frozen, self.calls = npartitions, frozen, 0
        self.token = next(_SOURCES)

    def __dask_tokenize__(self):
        # Each source its own graph: Dask reuses an expression of the same
        # name, with the function of the first.
        return ("ChangingSource", self.token)

    def __call__(self, i):
        version = 0 if self.frozen else min(self.calls // self.npartitions,
                                            len(self.versions) - 1)
        self.calls += 1
        frame = self.versions[version]
        edges = np.linspace(0, len(frame), self.npartitions + 1).astype(int)
        return frame.iloc[edges[i]:edges[i + 1]]

    def frame(self):
        return dd.from_map(self, range(self.npartitions),
                           meta=self.versions[0].iloc[:0],
                           enforce_metadata=False)


GAUSS = dict(secret=SECRET, law="gaussian", mechanism="apgm", random_state=0)


@pytest.mark.parametrize("verb", ["mean", "sum", "count", "median",
                                  "quantile", "std"])
def test_a_source_that_changes_between_passes_is_refused(frames, verb):
    # Found by a reliability sweep: a mean that matched no version of the
    # data, a median certified at n = 200 while later passes read 250-300.
    # Every statistic's passes: the linear ones' (rows, then totals), the
    # order statistics' (rows, ranges, histogram, bins) and the std's
    # (rows, then its moments).
    _, reference = frames
    source = ChangingSource(rows=[200, 250, 300, 300], seeds=[1, 2, 3, 4])
    kw = (GAUSS if verb in ("mean", "sum", "count")
          else dict(secret=SECRET, random_state=0))
    args = {"count": (skattr.predicates.Above(80),),
            "quantile": ([0.25, 0.75],)}.get(verb, ())
    with pytest.raises(DataValidationError,
                       match=r"The private data changed during the release: an "
                             r"earlier pass read 200 rows, a later one 250 "
                             r"\(partition 0: 50 rows, then 62\)\. Nothing was "
                             r"released\..*persist"):
        getattr(source.frame().attrpriv, verb)(["weight"], *args,
                                               reference=reference, **kw)


def test_a_selection_read_in_fused_partitions_is_the_same_reading():
    # Dask reads a selection of a Parquet frame's columns in fewer, fused
    # partitions (the census example: 6, then 2): the totals decide.
    from skattr._data import column_hash_sums
    from skattr.backends import Reading
    frame = awkward_columns(600, seed=5)
    parts = np.array_split(np.arange(600), 6)
    fused = [np.concatenate(parts[:3]), np.concatenate(parts[3:])]
    report = lambda groups: [                       # noqa: E731
        (len(g), column_hash_sums(frame.iloc[g], ["normal", "ties"]))
        for g in groups]
    reading = Reading()
    reading.check("census", report(parts), ["normal", "ties"], what="the data")
    reading.check("census", report(fused), ["normal", "ties"], what="the data")
    reading.check("census", report(parts), ["normal", "ties"], what="the data")
    changed = frame.copy()
    changed.loc[599, "ties"] += 1
    again = [(len(g), column_hash_sums(changed.iloc[g], ["normal", "ties"]))
             for g in fused]
    with pytest.raises(DataValidationError,
                       match=r"column\(s\) \['ties'\] differ between two "
                             r"passes\. Nothing"):
        reading.check("census", again, ["normal", "ties"], what="the data")
    with pytest.raises(DataValidationError,
                       match=r"an earlier pass read 600 rows, a later one 500\."):
        reading.check("census", report(fused)[:1] + report([parts[5]]) * 2,
                      ["normal"], what="the data")


def test_values_that_change_under_the_same_rows_are_refused(frames):
    # The median's first pass (ranges) and its histogram read the column:
    # the same 240 rows with other values are another dataset.
    _, reference = frames
    source = ChangingSource(rows=[240, 240, 240], seeds=[1, 2, 3])
    with pytest.raises(DataValidationError,
                       match=r"values of column\(s\) \['weight'\] differ "
                             r"between two passes \(partition 0, first\)"):
        source.frame().attrpriv.median(["weight"], secret=SECRET,
                                       reference=reference,
                                       random_state=0)
    # One pass of the backend, called alone, is still checked against the
    # others of its statistic.
    from skattr.backends import _dask
    with pytest.raises(DataValidationError, match="changed during the release"):
        _dask.exact_statistic(ChangingSource([240, 240], [1, 2]).frame(),
                              Statistic.quantile(["weight"], q=[0.5]),
                              ["weight"])


def test_a_source_that_stays_the_same_releases_as_pandas(frames):
    # The check refuses nothing that does not change: 20 partitions (a tree
    # of merges), empty ones, rows in another order within a partition.
    _, reference = frames
    source = ChangingSource(rows=[300], seeds=[1], npartitions=20, frozen=True)
    private = source.versions[0]
    kw = dict(secret=SECRET, random_state=0)
    same_release(private.attrpriv.median(["weight"], reference=reference, **kw),
                 source.frame().attrpriv.median(["weight"], reference=reference,
                                                **kw))
    shuffled = ChangingSource(rows=[300], seeds=[1], npartitions=20, frozen=True)
    calls = iter(range(10**6))
    shuffled.__class__ = type("Shuffled", (ChangingSource,), {
        "__call__": lambda self, i: ChangingSource.__call__(self, i).sample(
            frac=1.0, random_state=next(calls))})
    same_release(
        private.attrpriv.median(["weight"], reference=reference, **kw),
        shuffled.frame().attrpriv.median(["weight"], reference=reference, **kw))
    same_release(
        private.attrpriv.mean(["weight"], reference=reference, **GAUSS),
        with_empty_partitions(private, 5).attrpriv.mean(
            ["weight"], reference=reference, **GAUSS))


def test_a_fit_on_the_data_and_its_release_are_one_reading():
    # reference="self": the fit's passes and the release's read one version.
    source = ChangingSource(rows=[200, 200, 260], seeds=[1, 1, 1])
    with pytest.warns(skattr.exceptions.PrivacyLeakWarning), \
            pytest.raises(DataValidationError, match="changed during"):
        source.frame().attrpriv.mean(["weight"], reference="self", **dict(
            GAUSS, theta="moments",
            law=skattr.laws.AssumeGaussian(sampling="with-replacement")))


def test_a_ledger_refuses_data_changed_since_it_was_opened(frames):
    _, reference = frames
    source = ChangingSource(rows=[200, 200, 250], seeds=[1, 1, 1])
    ledger = source.frame().attrpriv.ledger(secret=SECRET, reference=reference,
                                            budget=(6.0, 1e-3), law="gaussian",
                                            random_state=0)
    ledger.mean(["weight"], mechanism="apgm", epsilon=1.0)   # the second pass
    with pytest.raises(DataValidationError,
                       match="changed since the ledger was opened: an earlier "
                             "pass read 200 rows, a later one 250"):
        ledger.mean(["height"], mechanism="apgm", epsilon=1.0)
    assert len(ledger.releases) == 1


def test_csv_files_rewritten_between_passes_are_refused(frames, tmp_path,
                                                        monkeypatch):
    from skattr.backends import _dask
    from skattr.datasets import make_hospital
    _, reference = frames
    paths = [tmp_path / f"part{i}.csv" for i in range(3)]
    for i, path in enumerate(paths):
        make_hospital(100, random_state=i).to_csv(path, index=False)
    ddf = dd.read_csv([str(p) for p in paths], blocksize=None)
    real = _dask._reduce
    done = []

    def rewrite_after_the_ranges(*a, **k):
        # The rows counted, then the ranges read: the file is rewritten
        # before the histogram is.
        out = real(*a, **k)
        done.append(1)
        if len(done) == 2:
            make_hospital(100, random_state=9).to_csv(paths[1], index=False)
        return out

    monkeypatch.setattr(_dask, "_reduce", rewrite_after_the_ranges)
    with pytest.raises(DataValidationError,
                       match=r"values of column\(s\) \['weight'\] differ "
                             r"between two passes \(partition 1, first\)"):
        ddf.attrpriv.median(["weight"], secret=SECRET, reference=reference,
                            random_state=0)


def test_the_check_adds_no_pass_and_hashes_only_the_columns_read(frames,
                                                                 monkeypatch):
    # The overhead, counted: a mean through the accessor reads the data in
    # two passes (its rows, then the totals) with or without the check; each
    # partition's rows are hashed once per pass, only the columns the pass
    # reads (none to count rows).
    from skattr.backends import _dask
    private, reference = frames
    passes, hashed = [], []
    real_pass, real_hash = _dask._pass, _dask.column_hash_sums
    monkeypatch.setattr(_dask, "_pass",
                        lambda *a, **k: passes.append(1) or real_pass(*a, **k))
    monkeypatch.setattr(_dask, "column_hash_sums", lambda part, columns: (
        hashed.append((len(part), list(columns))) or real_hash(part, columns)))
    dd.from_pandas(private, npartitions=4).attrpriv.mean(
        ["weight", "height"], reference=reference, **GAUSS)
    assert len(passes) == 2
    assert hashed == [(150, [])] * 4 + [(150, ["weight", "height"])] * 4


@pytest.mark.slow
def test_apgm_quartiles_from_a_dask_reference_equal_pandas(frames):
    # Gaussian noise on quantile levels reads the reference's values (its
    # bands): the used columns are collected from a Dask reference, and the
    # plan and release are the pandas ones, seed for seed.
    private, reference = frames
    query = Statistic.quantile(["height"], q=[0.25, 0.75])
    fitted = [skattr.mechanisms.AttributePrivateGaussian(
        query=query, secret=SECRET, random_state=4).fit(ref)
        for ref in (reference, dd.from_pandas(reference, npartitions=5))]
    plans = [est.plan(n=len(private)) for est in fitted]
    assert np.array_equal(plans[0].noise_covariance, plans[1].noise_covariance)
    same_release(fitted[0].release(private),
                 fitted[1].release(with_empty_partitions(private, 16)))
