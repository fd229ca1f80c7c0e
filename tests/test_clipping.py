"""Outliers in the private data: the ``bounds=`` clipping policy of every mechanism."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import skattr
from skattr._clipping import Clipping
from skattr.datasets import make_hospital
from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.laws import AssumeGaussian
from skattr.mechanisms import (
    ApproximateWassersteinMechanism,
    AttributePrivateGaussian,
    DPLaplace,
    ExpectedValueGaussian,
)
from skattr.theta import ExpertTheta, GroupMoments
from skattr.utils import all_estimators

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
N = 200


@pytest.fixture(scope="module")
def reference():
    return make_hospital(2000, random_state=0)


@pytest.fixture(scope="module")
def private():
    return make_hospital(N, random_state=1)


def _with(frame, column, *values):
    """Return a copy of the frame whose first rows of ``column`` hold ``values``."""
    out = frame.copy()
    out.loc[out.index[:len(values)], column] = values
    return out


def _apgm(**params):
    return AttributePrivateGaussian(query=skattr.Query.mean(["weight"]),
                                    secret=SECRET, law="gaussian",
                                    random_state=0, **params)


@pytest.mark.parametrize("outlier", [1e300, -1e300, 1e30])
def test_an_outlier_moves_a_mean_by_at_most_the_range_over_n(reference, private,
                                                              outlier):
    low, high = reference["weight"].min(), reference["weight"].max()
    clean = _apgm().fit(reference).release(private)
    dirty = _with(private, "weight", outlier)
    moved = _apgm().fit(reference).release(dirty)
    # The same seed draws the same noise: the difference is the statistic's.
    shift = abs(moved.values.iloc[0] - clean.values.iloc[0])
    assert shift <= (high - low) / N * (1 + 1e-12)
    # It is exactly the clipped outlier's move.
    expected = (np.clip(outlier, low, high) - private["weight"].iloc[0]) / N
    assert moved.values.iloc[0] - clean.values.iloc[0] == pytest.approx(
        expected, rel=1e-9, abs=1e-9)
    # Without clipping the outlier passes into the release.
    raw = _apgm(bounds=None).fit(reference).release(dirty)
    assert abs(raw.values.iloc[0]) >= abs(outlier) / N / 2


def test_infinite_and_missing_values_are_refused_not_clipped(reference, private):
    mech = _apgm().fit(reference)
    for bad in (np.inf, -np.inf, np.nan):
        with pytest.raises(DataValidationError, match="NaN or infinite"):
            mech.release(_with(private, "weight", bad))


def test_data_in_the_reference_range_is_released_unchanged(reference, private):
    inside = private[private["weight"].between(reference["weight"].min(),
                                               reference["weight"].max())]
    clipped = _apgm().fit(reference).release(inside)
    unclipped = _apgm(bounds=None).fit(reference).release(inside)
    pd.testing.assert_series_equal(clipped.values, unclipped.values)
    assert clipped.epsilon == unclipped.epsilon
    np.testing.assert_array_equal(clipped.noise_covariance,
                                  unclipped.noise_covariance)


def _clipped_to_reference(frame, reference, columns):
    out = frame.copy()
    for c in columns:
        out[c] = out[c].clip(reference[c].min(), reference[c].max())
    return out


@pytest.mark.parametrize("statistic", [
    skattr.Statistic.median(["weight"]),
    skattr.Statistic.quantile(["weight"], [0.25, 0.99]),
])
def test_median_and_quantiles_are_those_of_the_clipped_data(reference, private,
                                                            statistic):
    dirty = _with(private, "weight", 1e300, 1e300, 1e300, -1e300)
    small = reference.iloc[:400]

    def release(data, **params):
        mech = ApproximateWassersteinMechanism(
            query=statistic, secret=SECRET, random_state=0,
            theta=skattr.theta.Resample(random_state=0), **params)
        return mech.fit(small).release(data)

    got = release(dirty)
    want = release(_clipped_to_reference(dirty, small, ["weight"]), bounds=None)
    pd.testing.assert_series_equal(got.values, want.values)
    assert got.epsilon == want.epsilon and got.delta == want.delta
    # Without the clipping, the 99% quantile is the outlier's.
    assert got.values.iloc[-1] < 1e6


def test_declared_bounds_narrower_than_the_reference_clip_theta(reference,
                                                                private):
    bounds = {"weight": (120.0, 180.0)}
    mech = _apgm(bounds=bounds).fit(reference)
    pre = reference.assign(weight=reference["weight"].clip(120.0, 180.0))
    fitted_on_clipped = _apgm(bounds=None).fit(pre)
    plan, expected = mech.plan(n=N), fitted_on_clipped.plan(n=N)
    assert plan.sensitivity == pytest.approx(expected.sensitivity, rel=1e-12)
    np.testing.assert_allclose(plan.noise_covariance, expected.noise_covariance,
                               rtol=1e-12)
    assert plan.inherent_variance == pytest.approx(expected.inherent_variance,
                                                   rel=1e-12)
    # The clipped Theta is not the raw one: the narrower range is certified.
    raw = _apgm(bounds=None).fit(reference).plan(n=N)
    assert plan.sensitivity < raw.sensitivity
    dirty = _with(private, "weight", 1e300)
    got = mech.release(dirty)
    want = fitted_on_clipped.release(
        dirty.assign(weight=dirty["weight"].clip(120.0, 180.0)))
    pd.testing.assert_series_equal(got.values, want.values)
    assert got.clipping.as_dict() == bounds
    assert got.clipping.source == "declared"


@pytest.mark.slow
def test_declared_bounds_clip_the_resampling_theta_too(reference, private):
    small = reference.iloc[:300]
    statistic = skattr.Statistic.median(["weight"])
    mech = ApproximateWassersteinMechanism(
        query=statistic, secret=SECRET, bounds=(130.0, 170.0),
        theta=skattr.theta.Resample(random_state=0)).fit(small)
    pre = ApproximateWassersteinMechanism(
        query=statistic, secret=SECRET, bounds=None,
        theta=skattr.theta.Resample(random_state=0)).fit(
            small.assign(weight=small["weight"].clip(130.0, 170.0)))
    assert mech.plan(n=50).sensitivity == pre.plan(n=50).sensitivity


def test_the_release_records_its_clipping(reference, private):
    # The reference's whole range, as asked (the default is "robust").
    rel = _apgm(bounds="reference").fit(reference).release(private)
    low, high = reference["weight"].min(), reference["weight"].max()
    assert rel.clipping.ranges == (("weight", low, high),)
    assert rel.clipping.source == "reference"
    assert "clipped" in rel.summary()
    assert "the reference data's range" in rel.summary()
    record = rel.to_dict()
    assert record["clipping"] == {"source": "reference", "note": "",
                                  "ranges": [["weight", low, high]]}
    json.dumps(record)
    # Only the ranges: nothing that depends on how many records were clipped.
    again = _apgm(bounds="reference").fit(reference).release(
        _with(private, "weight", 1e300, 1e300))
    assert again.to_dict()["clipping"] == record["clipping"]
    assert (dict(again.summary().certificate)["clipped"]
            == dict(rel.summary().certificate)["clipped"])
    assert Clipping.from_dict(record["clipping"]) == rel.clipping


def test_counts_and_proportions_are_not_clipped(reference, private):
    # A proportion reads 0 or 1 per record, whatever an outlier holds.
    query = skattr.Query.proportion(["weight"], lambda w: w > 150)
    mech = AttributePrivateGaussian(query=query, secret=SECRET, law="gaussian",
                                    random_state=0).fit(reference)
    rel = mech.release(private)
    assert rel.clipping.ranges == ()
    assert "counts and proportions" in rel.clipping.describe()


def test_a_stated_theta_has_no_reference_range(private):
    theta = ExpertTheta([GroupMoments(mean_in=[150.0], mean_out=[160.0],
                                      cov_in=400.0, cov_out=400.0,
                                      columns=("weight",))])
    kw = dict(query=skattr.Query.mean(["weight"]), secret=SECRET, theta=theta,
              law="gaussian", random_state=0)
    # fit may see the private data itself: its range is never read.
    rel = AttributePrivateGaussian(**kw).fit(private).release(private)
    assert rel.clipping.ranges == ()
    assert "declare bounds" in rel.clipping.describe()
    declared = AttributePrivateGaussian(bounds={"weight": (50.0, 300.0)},
                                        **kw).fit(private)
    moved = declared.release(_with(private, "weight", 1e300))
    assert moved.clipping.ranges == (("weight", 50.0, 300.0),)
    assert "ASSUMED: the stated Theta's records lie in these ranges" in (
        moved.summary())
    assert abs(moved.values.iloc[0]) < 1e3


@pytest.mark.parametrize("bounds, query, match", [
    ({"weight": (5.0, 5.0)}, skattr.Query.mean(["weight"]), "needs low < high"),
    ({"weight": (9.0, 1.0)}, skattr.Query.mean(["weight"]), "needs low < high"),
    ({"weight": (0.0, np.inf)}, skattr.Query.mean(["weight"]), "is not finite"),
    ({"weight": (np.nan, 1.0)}, skattr.Query.mean(["weight"]), "is not finite"),
    ({"wieght": (0.0, 1.0)}, skattr.Query.mean(["weight"]),
     r"names column\(s\) \['wieght'\] that are not in the data"),
    ({"weight": (0.0, 1.0)}, skattr.Query.mean(["height"]),
     r"no \(low, high\) for column\(s\) \['height'\]"),
    ((0.0, 1.0), skattr.Query.count(["gender"], "female"),
     "Counts and proportions take no bounds"),
    ({"gender": (0.0, 1.0), "weight": (0.0, 500.0)},
     skattr.Query.mean(["weight"]) + skattr.Query.count(["gender"], "female"),
     r"names column\(s\) \['gender'\] that the query counts"),
    ("everything", skattr.Query.mean(["weight"]), "'bounds' parameter of"),
])
def test_bad_bounds_raise_clear_errors(reference, bounds, query, match):
    other = skattr.Secret.mean("temperature", pairs=[(98.0, 99.0)])
    for cls in (AttributePrivateGaussian, ExpectedValueGaussian):
        with pytest.raises(InvalidParameterError, match=match):
            cls(query=query, secret=other, law="gaussian", bounds=bounds).fit(
                reference)


def test_reference_bounds_are_refused_where_bounds_are_declared(private):
    with pytest.raises(InvalidParameterError, match="declare bounds="):
        DPLaplace(query=skattr.Query.mean(["weight"]),
                  bounds="reference").fit(private)


def test_the_secret_column_cannot_be_clipped_in_the_reference(reference):
    secret = skattr.Secret.mean("weight", pairs=[(140.0, 160.0)])
    with pytest.raises(InvalidParameterError, match="secret is a property"):
        AttributePrivateGaussian(query=skattr.Query.mean(["weight"]),
                                 secret=secret, law="gaussian",
                                 bounds={"weight": (120.0, 180.0)}).fit(reference)


@pytest.mark.slow
def test_dask_and_pandas_give_the_same_release(reference, private):
    dd = pytest.importorskip("dask.dataframe")
    dirty = _with(private, "weight", 1e300, -1e300)
    lazy = dd.from_pandas(dirty, npartitions=3)
    lazy_reference = dd.from_pandas(reference, npartitions=4)
    for mech_on in (reference, lazy_reference):
        got = _apgm().fit(mech_on).release(lazy)
        want = _apgm().fit(reference).release(dirty)
        np.testing.assert_allclose(got.values, want.values, rtol=1e-12)
        assert got.clipping == want.clipping
    median = skattr.Statistic.median(["weight"])
    kw = dict(query=median, secret=SECRET, random_state=0,
              theta=skattr.theta.Resample(random_state=0))
    small = reference.iloc[:400]
    got = ApproximateWassersteinMechanism(**kw).fit(small).release(lazy)
    want = ApproximateWassersteinMechanism(**kw).fit(small).release(dirty)
    pd.testing.assert_series_equal(got.values, want.values)


def test_the_accessor_passes_bounds(reference, private):
    dirty = _with(private, "weight", 1e300)
    kw = dict(secret=SECRET, reference=reference, mechanism="apgm",
              law="gaussian", random_state=0)
    rel = dirty.attrpriv.mean(["weight"], **kw)
    assert rel.clipping.source == "robust" and rel.values.iloc[0] < 1e3
    whole = dirty.attrpriv.mean(["weight"], bounds="reference", **kw)
    assert whole.clipping.source == "reference" and whole.values.iloc[0] < 1e3
    declared = dirty.attrpriv.mean(["weight"], bounds={"weight": (100, 200)}, **kw)
    assert declared.clipping.as_dict() == {"weight": (100.0, 200.0)}
    raw = dirty.attrpriv.mean(["weight"], bounds=None, **kw)
    assert raw.values.iloc[0] > 1e296


@pytest.mark.slow
def test_the_ledger_clips_every_release_and_its_joint_law(reference, private):
    dirty = _with(private, "weight", 1e300)
    clean = _clipped_to_reference(dirty, reference, ["weight"])
    kw = dict(secret=SECRET, reference=reference, budget=(3.0, 1e-3),
              law="gaussian", random_state=0)
    ledger = dirty.attrpriv.ledger(**kw)
    assert ledger.bounds == "robust"
    twin = clean.attrpriv.ledger(**kw, bounds=None)
    first, second = ledger.mean(["weight"]), twin.mean(["weight"])
    pd.testing.assert_series_equal(first.values, second.values)
    assert ledger.spent == pytest.approx(twin.spent)
    with pytest.raises(InvalidParameterError,
                       match="bounds=None is a clipping policy, which a ledger"):
        ledger.mean(["weight"], bounds=None)
    narrow = dirty.attrpriv.ledger(**kw, bounds={"weight": (120.0, 180.0)})
    assert narrow.mean(["weight"]).clipping.as_dict() == {"weight": (120.0, 180.0)}
    # Its joint law is that of the clipped column: the reference's fit of
    # the clipped weights (the first model of the default Theta).
    key, joint, _ = narrow._gaussian._cache      # the law the release used
    assert key == ((skattr.Query("sum", ["weight"]),),
                   repr({"weight": (120.0, 180.0)}))      # and its clipping
    fit = joint.models[0][0]
    weights = reference["weight"].clip(120.0, 180.0)
    female = reference["gender"] == "female"
    assert fit.mean_in[0] == pytest.approx(weights[female].mean(), rel=1e-12)
    assert fit.mean_out[0] == pytest.approx(weights[~female].mean(), rel=1e-12)
    assert fit.mean_in[0] != pytest.approx(reference["weight"][female].mean(),
                                           rel=1e-6)
    loaded = skattr.Ledger.from_json(narrow.to_json(), dirty, reference=reference)
    assert loaded.bounds == {"weight": (120.0, 180.0)}


def test_the_ledger_clips_the_resampled_joint_law(reference):
    from skattr._ledger import Ledger

    small = reference.iloc[:300]
    ledger = Ledger(make_hospital(40, random_state=1), secret=SECRET,
                    reference=small, budget=(4.0, 1e-2),
                    theta=skattr.theta.Resample(random_state=0),
                    bounds={"weight": (130.0, 170.0), "height": (60.0, 75.0)})
    from skattr._ledger._joint import clipped_reference

    clipped = clipped_reference(ledger.reference,
                                skattr.Statistic.median(["weight"]), ("weight",),
                                ledger.bounds, ledger.secret, reads=True)
    assert clipped["weight"].between(130.0, 170.0).all()
    assert clipped["weight"].min() == 130.0
    pd.testing.assert_series_equal(clipped["height"], small["height"])
    assert small["weight"].min() < 130.0        # the caller's frame unchanged


@pytest.mark.parametrize("name, cls", all_estimators())
def test_every_mechanism_takes_bounds_and_secure(name, cls):
    params = cls().get_params()
    assert params["secure"] is False
    assert params["bounds"] == ("robust" if cls.needs_reference else None)
    est = cls(secure=True, bounds={"x": (0, 1)})
    copy = clone(est)
    assert copy.secure is True and copy.bounds == {"x": (0, 1)}
    assert "secure : bool, default=False" in cls.__doc__
    assert "bounds :" in cls.__doc__


def test_secure_must_be_a_bool(private):
    with pytest.raises(InvalidParameterError,
                       match="The 'secure' parameter of DPLaplace must be a bool"):
        DPLaplace(query=skattr.Query.mean(["weight"]), bounds=(0, 400),
                  secure="yes").fit(private)


def test_the_command_line_takes_bounds(tmp_path, capsys):
    from skattr.cli import main

    private, reference = tmp_path / "private.csv", tmp_path / "reference.csv"
    _with(make_hospital(60, random_state=1), "weight", 1e300).to_csv(
        private, index=False)
    make_hospital(2000, random_state=0).to_csv(reference, index=False)
    base = ["release", str(private), "--columns", "weight", "--secret-column",
            "gender", "--secret-value", "female", "--pairs", "0.4,0.6",
            "--reference", str(reference), "--mechanism", "apgm", "--law",
            "gaussian", "--random-state", "0"]
    outputs = {}
    for bounds in (["robust"], ["reference"], ["weight=100,200"], ["none"]):
        assert main([*base, "--bounds", *bounds]) == 0
        outputs[bounds[0]] = capsys.readouterr().out
    assert "within its far-out fences" in outputs["robust"]
    assert "the reference data's range" in outputs["reference"]
    assert "weight to [100, 200] (declared)" in outputs["weight=100,200"]
    assert "bounds=None" in outputs["none"]
    assert main([*base, "--bounds", "reference", "none"]) == 2


def test_reference_self_publishes_no_range_of_the_private_data():
    # Clipping the private data to its own range is a no-op; recording that
    # range on the release would publish its minimum and maximum.
    import warnings

    from skattr.datasets import make_hospital
    from skattr.exceptions import PrivacyLeakWarning

    private = make_hospital(300, random_state=4)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        release = private.attrpriv.mean(
            ["weight"], secret=secret, reference="self",
            law=AssumeGaussian(sampling="with-replacement"), mechanism="apgm",
            delta=1e-3, random_state=0)
    assert not release.clipping.ranges
    text = str(release.summary())
    for value in (private["weight"].min(), private["weight"].max()):
        assert f"{value:.6g}" not in text


# ------------------------------------------- the default: bounds="robust"
def _coded(frame, codes=10, seed=3):
    """Return a copy whose weight holds 999 in ``codes`` rows drawn by seed."""
    out = frame.copy()
    rows = np.random.default_rng(seed).choice(len(out), codes, replace=False)
    out.loc[out.index[rows], "weight"] = 999.0
    return out


def _fences(values):
    """The robust range by hand: sorted values, np.quantile, nothing shared."""
    x = np.sort(np.asarray(values, dtype=float))
    m = x.size
    c = max(1, int(0.01 * m))
    q01, q1, q3, q99 = np.quantile(x, [0.01, 0.25, 0.75, 0.99])
    spread = q3 - q1 if q3 > q1 else q99 - q01 if q99 > q01 else x[-1] - x[0]
    low, high = max(x[0], q1 - 3 * spread), min(x[-1], q3 + 3 * spread)
    if m > 2 * c:        # at most c records beyond either end
        low, high = min(low, x[c]), max(high, x[m - 1 - c])
    return low, high


@pytest.mark.parametrize("case", ["normal", "negative", "coded", "lognormal",
                                  "rare ones", "mostly one value", "codes",
                                  "tiny", "constant", "two records"])
def test_the_robust_range_is_tukeys_far_out_fences(case):
    from skattr._clipping import robust_ranges

    rng = np.random.default_rng(0)
    values = {
        "normal": rng.normal(150.0, 20.0, 2000),
        "negative": rng.normal(-40.0, 5.0, 500),
        "coded": np.r_[rng.normal(150.0, 20.0, 1990), [999.0] * 10],
        "lognormal": rng.lognormal(0.0, 1.0, 2000),
        "rare ones": (rng.random(2000) < 0.004).astype(float),
        "mostly one value": np.where(rng.random(2000) < 0.9, 0.0,
                                     rng.exponential(1.0, 2000)),
        "codes": rng.choice([1.0, 2.0, 3.0, 9.0], 300, p=[0.1, 0.8, 0.08, 0.02]),
        "tiny": np.r_[rng.normal(150.0, 20.0, 29), 999.0],
        "constant": np.full(50, 7.0),
        "two records": np.array([1.0, 5.0]),
    }[case]
    (low,), (high,) = robust_ranges(values[:, None])
    assert (low, high) == pytest.approx(_fences(values), rel=1e-12, abs=1e-12)
    # Never collapses a column; never cuts more than 1% (one record) an end.
    assert low < high or values.min() == values.max()
    most = max(1, int(0.01 * values.size))
    assert (values < low).sum() <= most and (values > high).sum() <= most
    if case in ("coded", "tiny"):
        assert high < 999.0 and values[values < 999.0].max() <= high
    if case in ("normal", "negative", "rare ones", "codes", "constant"):
        assert (low, high) == (values.min(), values.max())     # nothing cut


def test_the_robust_range_of_an_integer_column_is_integer():
    from skattr._clipping import robust_ranges

    stay = np.random.default_rng(1).geometric(0.2, 2000).astype(float)
    stay[:5] = 999.0
    (low,), (high,) = robust_ranges(stay[:, None], integer=[True])
    want_low, want_high = _fences(stay)
    assert (low, high) == (np.floor(want_low), np.ceil(want_high))
    assert high < 999.0


def test_codes_in_the_reference_add_little_noise_by_default(reference, private):
    # Issue 42: 0.5% codes of 999 in the reference's weight tripled the
    # noise of a mean under the reference's whole range; the default's stays
    # within 1.5x of the clean reference's (n = 800, on the 0.4 vs 0.6 grid).
    coded = _coded(reference)
    patients = make_hospital(800, random_state=2)

    def sd(ref, bounds):
        return float(patients.attrpriv.plan(
            ["weight"], statistic="mean", secret=SECRET, reference=ref,
            epsilon=1.0, delta=1e-3, bounds=bounds).noise_std[0])

    # The clean reference's robust range is its whole range (nothing cut).
    clean = sd(reference, "robust")
    with pytest.warns(skattr.exceptions.ClippingWarning):
        assert sd(coded, "robust") <= 1.5 * clean
    assert sd(coded, "reference") > 2.5 * clean      # the old default


@pytest.mark.slow
@pytest.mark.parametrize("statistic, most", [("median", 1.5), ("std", 1.5)])
def test_codes_add_little_noise_to_a_median_or_std(reference, statistic, most):
    coded = _coded(reference)
    patients = make_hospital(800, random_state=2)

    def sd(ref):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", skattr.exceptions.ClippingWarning)
            return float(patients.attrpriv.plan(
                ["weight"], statistic=statistic, secret=SECRET, reference=ref,
                epsilon=1.0, delta=1e-3).noise_std[0])

    assert sd(coded) / sd(reference) <= most


def test_the_robust_default_clips_the_reference_as_the_private_data(reference,
                                                                    private):
    coded = _coded(reference)
    low, high = _fences(coded["weight"])
    assert high < 999.0
    with pytest.warns(skattr.exceptions.ClippingWarning):
        mech = _apgm().fit(coded)
    assert mech.clipping_.as_dict() == {"weight": pytest.approx((low, high))}
    assert mech.clipping_.source == "robust"
    assert mech.clipping_.cut == (("weight", 10),)
    assert mech.clipping_.records == 2000
    # Theta is that of the reference clipped to the range: the plan is the
    # one fitting on the pre-clipped reference gives, and not the raw one's.
    pre = coded.assign(weight=coded["weight"].clip(low, high))
    fitted_on_clipped = _apgm(bounds=None).fit(pre)
    plan, expected = mech.plan(n=N), fitted_on_clipped.plan(n=N)
    np.testing.assert_allclose(plan.noise_covariance, expected.noise_covariance,
                               rtol=1e-12)
    raw = _apgm(bounds=None).fit(coded).plan(n=N)
    assert plan.noise_covariance[0, 0] < raw.noise_covariance[0, 0] / 2
    # The private data are clipped to the same range.
    dirty = _with(private, "weight", 999.0, 1e300)
    got = mech.release(dirty)
    want = fitted_on_clipped.release(
        dirty.assign(weight=dirty["weight"].clip(low, high)))
    pd.testing.assert_series_equal(got.values, want.values)


def test_the_robust_range_is_recorded_and_the_cut_warned(reference, private):
    coded = _coded(reference)
    with pytest.warns(skattr.exceptions.ClippingWarning) as caught:
        rel = private.attrpriv.mean(["weight"], secret=SECRET, reference=coded,
                                    mechanism="auto", random_state=0)
    (warned,) = [w for w in caught
                 if w.category is skattr.exceptions.ClippingWarning]
    assert warned.filename == __file__           # the user's line
    low, high = rel.clipping.as_dict()["weight"]
    text = str(warned.message)
    for part in ("10 of 2,000 records", f"[{low:.6g}, {high:.6g}]",
                 "its range is [", "999]", "bounds={'weight': (",
                 "bounds='reference'"):
        assert part in text
    suggested = eval(text.split("e.g. bounds=")[1].split(". If")[0])
    assert suggested["weight"][0] <= low and suggested["weight"][1] >= high
    # The summary says the ranges in its opening, and the certificate how
    # many reference records were cut (public: the reference's).
    summary = rel.summary()
    assert f"weight to [{low:.4g}, {high:.4g}]" in summary.plain
    assert "far-out fences" in summary.plain
    assert "of its 2,000 records, 10 in weight cut" in dict(
        summary.certificate)["clipped"]
    record = rel.to_dict()["clipping"]
    assert record["cut"] == [["weight", 10]] and record["records"] == 2000
    assert Clipping.from_dict(json.loads(json.dumps(record))) == rel.clipping
    # Nothing cut: no warning, the same range as the reference's own.
    with warnings.catch_warnings():
        warnings.simplefilter("error", skattr.exceptions.ClippingWarning)
        clean = _apgm().fit(reference)
    assert clean.clipping_.cut == ()
    assert clean.clipping_.as_dict() == {
        "weight": (reference["weight"].min(), reference["weight"].max())}


def test_declared_bounds_and_the_reference_rule_stay_as_they_were(reference):
    coded = _coded(reference)
    with warnings.catch_warnings():
        warnings.simplefilter("error", skattr.exceptions.ClippingWarning)
        whole = _apgm(bounds="reference").fit(coded)
        declared = _apgm(bounds={"weight": (80.0, 260.0)}).fit(coded)
    assert whole.clipping_.as_dict() == {"weight": (coded["weight"].min(), 999.0)}
    assert declared.clipping_.as_dict() == {"weight": (80.0, 260.0)}
    unclipped = _apgm(bounds=None).fit(coded).plan(n=N)
    np.testing.assert_array_equal(whole.plan(n=N).noise_covariance,
                                  unclipped.noise_covariance)


def test_the_secret_column_keeps_its_whole_range(reference):
    # The secret is a property of weight's raw values: the reference's
    # weights are not clipped (declared ranges that would are refused).
    coded = _coded(reference)
    secret = skattr.Secret.proportion("weight", lambda w: w > 150,
                                      pairs=[(0.4, 0.6)])
    mech = AttributePrivateGaussian(query=skattr.Query.mean(["weight"]),
                                    secret=secret, law="gaussian").fit(coded)
    assert mech.clipping_.as_dict() == {"weight": (coded["weight"].min(), 999.0)}
    assert mech.clipping_.cut == ()
    assert "the whole range of weight" in mech.clipping_.describe()


def test_a_rare_one_in_a_zero_one_column_is_kept(reference, private):
    flags = reference.assign(flag=(np.arange(2000) % 250 == 0).astype(float))
    mech = AttributePrivateGaussian(query=skattr.Query.mean(["flag"]),
                                    secret=SECRET, law="gaussian").fit(flags)
    assert mech.clipping_.as_dict() == {"flag": (0.0, 1.0)}
    assert mech.clipping_.cut == ()


def test_the_ledger_clips_its_joint_law_to_the_robust_range(reference, private):
    coded = _coded(reference)
    low, high = _fences(coded["weight"])
    ledger = private.attrpriv.ledger(secret=SECRET, reference=coded,
                                     budget=(3.0, 1e-3), law="gaussian",
                                     random_state=0)
    with pytest.warns(skattr.exceptions.ClippingWarning):
        rel = ledger.mean(["weight"])
    assert rel.clipping.as_dict() == {"weight": pytest.approx((low, high))}
    assert (f"weight to [{low:.4g}, {high:.4g}] (the reference's range "
            "within its far-out fences)") in ledger.in_plain_words()
    key, joint, _ = ledger._gaussian._cache
    fit = joint.models[0][0]
    weights = coded["weight"].clip(low, high)
    female = coded["gender"] == "female"
    assert fit.mean_in[0] == pytest.approx(weights[female].mean(), rel=1e-12)
    assert fit.mean_out[0] == pytest.approx(weights[~female].mean(), rel=1e-12)


def test_the_bands_hold_for_the_population_whatever_range_the_reference_chose():
    # The confidence bands' event concerns the records' ranks only, and
    # clipping is monotone, so the envelopes of the reference clipped to a
    # range read off itself bound the clipped population's quantile
    # function (docs/population.md). Checked by simulation against the
    # population's own quantile function (scipy, not the library), at a
    # band of confidence 0.8; a population the reference was not drawn from
    # is flagged, so the check can fail.
    from scipy import stats

    from skattr._clipping import robust_ranges
    from skattr.laws._band import GroupBand

    rng = np.random.default_rng(11)
    levels = np.linspace(0.0005, 0.9995, 2000)
    share = 0.99              # weights N(150, 20); 1% codes of 999

    def quantile(u, shift=0.0):
        return np.where(u < share, stats.norm.ppf(u / share, 150 + shift, 20),
                        999.0)

    def misses(shift):
        found = 0
        for _ in range(200):
            x = np.where(rng.random(400) < share, rng.normal(150, 20, 400),
                         999.0)
            (lo,), (hi,) = robust_ranges(x[:, None])
            band = GroupBand.of(np.clip(x, lo, hi), 0.2)
            q_lo, q_hi = band.quantiles(levels, lo, hi)
            truth = np.clip(quantile(levels, shift), lo, hi)
            found += not np.all((q_lo <= truth + 1e-9) & (truth <= q_hi + 1e-9))
        return found

    assert misses(0.0) <= 0.2 * 200
    assert misses(8.0) > 0.5 * 200


def test_a_cut_that_does_not_set_the_range_is_recorded_not_warned(private):
    # A large normal reference has a few records beyond its far-out fences
    # (4.7 sd from the median); cutting them narrows the range by a few
    # percent: recorded, and no warning.
    rng = np.random.default_rng(5)
    frame = make_hospital(2000, random_state=5)
    frame["weight"] = rng.normal(150.0, 20.0, 2000)
    frame.loc[frame.index[0], "weight"] = 150.0 + 20.0 * 5.3
    low, high = _fences(frame["weight"])
    assert high < frame["weight"].max()
    with warnings.catch_warnings():
        warnings.simplefilter("error", skattr.exceptions.ClippingWarning)
        mech = _apgm().fit(frame)
    assert mech.clipping_.cut == (("weight", 1),)
    assert mech.clipping_.as_dict() == {"weight": pytest.approx((low, high))}
    assert (high - low) > 0.8 * (frame["weight"].max() - frame["weight"].min())


@pytest.mark.parametrize("statistic", [
    skattr.Query.mean(["weight"]),
    pytest.param(skattr.Statistic.median(["weight"]), marks=pytest.mark.slow),
    pytest.param(skattr.Statistic.std(["weight"]), marks=pytest.mark.slow),
    pytest.param(skattr.Statistic.quantile(["weight"], [0.25, 0.75]),
                 marks=pytest.mark.slow)])
def test_the_bands_read_the_robust_range_as_declared_bounds(reference,
                                                           statistic):
    # The band laws take the clipping range as the values' support and the
    # reference clipped to it: the robust range gives the plan that
    # declaring the same range gives (which clips the reference too).
    coded = _coded(reference)
    kw = dict(query=statistic, secret=SECRET)
    with pytest.warns(skattr.exceptions.ClippingWarning):
        robust = ApproximateWassersteinMechanism(**kw).fit(coded)
    assert robust.law_.__class__.__name__ in ("BandLaw", "OrderBandLaw",
                                              "StdBandLaw", "JointBandLaw")
    declared = ApproximateWassersteinMechanism(
        bounds=robust.clipping_.as_dict(), **kw).fit(coded)
    np.testing.assert_array_equal(robust.plan(n=800).noise_covariance,
                                  declared.plan(n=800).noise_covariance)
    whole = ApproximateWassersteinMechanism(bounds="reference", **kw).fit(coded)
    if statistic.statistic != "median":
        assert (robust.plan(n=800).noise_covariance.max()
                < whole.plan(n=800).noise_covariance.max())


class _DuckBand:
    """A Theta with ``fit_law`` alone: it does not say whether it reads rows."""

    def fit_law(self, request):
        return skattr.theta.ConfidenceBand(0.99).fit_law(request)


def test_a_spec_that_does_not_say_is_clipped_with_the_reference(reference,
                                                                private):
    # One answer for "reads the reference": a spec that does not say is
    # taken to read it, both where reference= is required (the registry)
    # and where its ranges are read (bounds="robust", the default): the
    # release is the one ConfidenceBand(0.99), which says so, gives.
    assert not hasattr(_DuckBand(), "reads_reference")
    releases = [private.attrpriv.mean(
        ["weight"], secret=SECRET, reference=reference, epsilon=1.0,
        delta=1e-3, theta=theta, random_state=0)
        for theta in (_DuckBand(), skattr.theta.ConfidenceBand(0.99))]
    duck, band = releases
    assert duck.clipping.source == "robust"
    assert duck.clipping == band.clipping
    assert duck.values.tolist() == band.values.tolist()
    assert duck.sensitivity == band.sensitivity
    # A bare estimator asks the same.
    mech = AttributePrivateGaussian(query=skattr.Query.mean(["weight"]),
                                    secret=SECRET, theta=_DuckBand(),
                                    bounds="reference").fit(reference)
    low, high = reference["weight"].min(), reference["weight"].max()
    assert mech.clipping_.ranges == (("weight", low, high),)


def test_a_malformed_clipping_is_refused_as_a_file_would_be():
    # A clipping read back from an edited file: a cut without its count,
    # a range without its high end, an unknown source.
    from skattr._clipping import Clipping
    from skattr.exceptions import InvalidParameterError

    for bad in (dict(cut=(("weight",),), source="robust"),
                dict(ranges=(("weight", 0.0),), source="declared"),
                dict(source="guessed")):
        with pytest.raises(InvalidParameterError, match="clipping needs"):
            Clipping(**bad)
    assert Clipping(ranges=(("w", np.int64(0), 1.5),), source="robust",
                    cut=(("w", np.int64(2)),), records=np.int64(10)).cut
