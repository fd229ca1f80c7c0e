"""Statistic: exact values against pandas, SciPy and statsmodels; subsets; bad input."""

import re

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

import skattr._kinds._kernels as kernels_module
from skattr import Query, Statistic
from skattr._base_query import BaseQuery, LinearQuery
from skattr._kinds import kinds
from skattr.exceptions import DataValidationError, InvalidParameterError


@pytest.fixture()
def frame():
    rng = np.random.default_rng(0)
    n = 211
    age = rng.integers(18, 90, n)
    hours = rng.normal(40, 8, n).astype(np.float32)
    return pd.DataFrame({
        "age": age,
        "hours": hours,
        "income": 1_000 * age + 500 * hours + rng.normal(0, 5_000, n),
        "insured": rng.random(n) < 0.7,
        "sex": rng.choice(["Female", "Male"], n),
    })


def spread(f):
    return f["income"].max() - f["income"].min()


def age_moments(f):
    return pd.Series({"mean": f["age"].mean(), "var": f["age"].var()})


# One of each kind, all on numeric columns of the fixture.
STATISTICS = {
    "median": Statistic.median(["age", "hours", "insured"]),
    "quantile": Statistic.quantile(["age", "income"], q=[0.1, 0.5, 0.95]),
    "std": Statistic.std(["age", "income"], ddof=1),
    "std-ddof0": Statistic.std(["hours"], ddof=0),
    "trimmed-mean": Statistic.trimmed_mean(["age", "income"], 0.2),
    "ols": Statistic.ols("income", ["age", "hours"]),
    "ols-no-constant": Statistic.ols("income", ["age", "hours"], add_constant=False),
    "function": Statistic.function(spread, names=["spread"], columns=["income"]),
    "function-series": Statistic.function(age_moments),
}


def statsmodels_params(f, y, X, add_constant=True):
    design = f[X].astype(float)
    if add_constant:
        design = sm.add_constant(design, has_constant="add")
    return sm.OLS(f[y].astype(float), design).fit().params.to_numpy()


def test_quantiles_spread_and_trimmed_mean_match_pandas_and_scipy(frame):
    cols = ["age", "hours", "income", "insured"]
    as_float = frame[cols].astype(float)
    median = Statistic.median(cols).evaluate(frame)
    pd.testing.assert_series_equal(median, as_float.median().rename("median"),
                                   rtol=1e-12)
    quantile = Statistic.quantile(cols, q=[0.25, 0.9]).evaluate(frame)
    assert quantile.name == "quantile"
    assert list(quantile.index[:2]) == ["age:q0.25", "age:q0.9"]
    for c in cols:
        for q in (0.25, 0.9):
            assert quantile[f"{c}:q{q}"] == pytest.approx(as_float[c].quantile(q),
                                                         rel=1e-12)
    for ddof in (0, 1, 3):
        std = Statistic.std(cols, ddof=ddof).evaluate(frame)
        pd.testing.assert_series_equal(std, as_float.std(ddof=ddof).rename("std"),
                                       rtol=1e-10)
    trimmed = Statistic.trimmed_mean(cols, proportiontocut=0.15).evaluate(frame)
    assert trimmed.name == "trimmed-mean"
    np.testing.assert_allclose(trimmed, stats.trim_mean(as_float, 0.15), rtol=1e-12)
    # proportiontocut=0 is the mean.
    np.testing.assert_allclose(Statistic.trimmed_mean(cols, 0).evaluate(frame),
                               as_float.mean(), rtol=1e-12)
    # A scalar q is one level; the default is the median.
    default = Statistic.quantile("age").evaluate(frame)
    assert list(default.index) == ["age:q0.5"]
    assert default.iloc[0] == median["age"]


@pytest.mark.parametrize("add_constant", [True, False])
def test_ols_matches_statsmodels(frame, add_constant):
    ols = Statistic.ols("income", ["age", "hours", "insured"],
                        add_constant=add_constant)
    got = ols.evaluate(frame)
    expected = statsmodels_params(frame, "income", ["age", "hours", "insured"],
                                  add_constant)
    np.testing.assert_allclose(got.to_numpy(), expected, rtol=1e-8)
    labels = ["ols:age", "ols:hours", "ols:insured"]
    assert list(got.index) == (["ols:const"] if add_constant else []) + labels
    assert got.name == "ols"
    # The literal recipe of the docs agrees on data with no constant regressor.
    design = sm.add_constant(frame[["age", "hours", "insured"]].astype(float))
    literal = sm.OLS(frame["income"], design).fit().params.to_numpy()
    if add_constant:
        np.testing.assert_allclose(got.to_numpy(), literal, rtol=1e-8)


@pytest.mark.filterwarnings("ignore:The design matrix is rank-deficient")
def test_ols_on_a_rank_deficient_design_keeps_the_minimum_norm_coefficients(frame):
    # Every record insured: the regressor is collinear with the intercept. The
    # intercept is still added, and pinv gives statsmodels' coefficients.
    data = frame.assign(insured=True)
    got = Statistic.ols("income", ["age", "insured"]).values(
        data, ("income", "age", "insured"))
    expected = statsmodels_params(data, "income", ["age", "insured"])
    np.testing.assert_allclose(got, expected, rtol=1e-8)
    assert got.shape == (3,)


def test_function_outputs_and_their_labels(frame):
    seen = []

    def columns_seen(f):
        seen.append(list(f.columns))
        return f.shape[0]

    scalar = Statistic.function(columns_seen).evaluate(frame)
    assert list(scalar.index) == ["f0"] and scalar.iloc[0] == len(frame)
    assert scalar.name == "function"
    # Without columns the function sees the whole frame, secret's included.
    assert seen[-1] == list(frame.columns)
    Statistic.function(columns_seen, columns=["age", "sex"]).evaluate(frame)
    assert seen[-1] == ["age", "sex"]

    def quartiles(f):
        return np.percentile(f["age"], [25, 75])

    vector = Statistic.function(quartiles).evaluate(frame)
    assert list(vector.index) == ["f0", "f1"]
    np.testing.assert_allclose(vector, frame.age.quantile([0.25, 0.75]), rtol=1e-12)
    named = Statistic.function(quartiles, names=["q1", "q3"]).evaluate(frame)
    assert list(named.index) == ["q1", "q3"]
    # A Series is labelled by its index.
    moments = Statistic.function(age_moments).evaluate(frame)
    assert list(moments.index) == ["mean", "var"]
    assert moments["var"] == pytest.approx(frame.age.var(), rel=1e-12)


@pytest.mark.parametrize("name", list(STATISTICS))
def test_evaluate_rows_equals_values_on_each_subset(frame, name):
    stat = STATISTICS[name]
    columns = stat.resolve_columns(frame, exclude=("sex",))
    rng = np.random.default_rng(1)
    index = rng.integers(0, len(frame), size=(25, 40))
    prepared = stat.prepare(frame, columns, what="the reference data")
    rows = stat.evaluate_rows(prepared, index)
    assert rows.shape[0] == 25 and rows.dtype == np.float64
    for subset, got in zip(index, rows, strict=True):
        # A fresh frame of the subset: an independent path through values().
        part = frame.iloc[subset].reset_index(drop=True)
        np.testing.assert_allclose(got, stat.values(part, columns), rtol=1e-10)
        if stat.statistic == "ols":
            expected = statsmodels_params(part, "income", ["age", "hours"],
                                          stat.add_constant)
            np.testing.assert_allclose(got, expected, rtol=1e-8)
    n_outputs = stat.n_outputs(columns)
    assert n_outputs is None or rows.shape[1] == n_outputs
    if stat.labels is not None or stat.statistic != "function":
        assert len(stat.names(columns)) == rows.shape[1]


@pytest.mark.parametrize("name", ["quantile", "ols"])
def test_evaluate_rows_in_chunks_gives_the_same_values(frame, name, monkeypatch):
    stat = STATISTICS[name]
    columns = stat.resolve_columns(frame)
    prepared = stat.prepare(frame, columns)
    index = np.random.default_rng(2).integers(0, len(frame), size=(37, 20))
    whole = stat.evaluate_rows(prepared, index)
    # A few subsets per chunk, and an uneven last chunk.
    monkeypatch.setattr(kernels_module, "_CHUNK", 20 * prepared.shape[1] * 5)
    np.testing.assert_array_equal(stat.evaluate_rows(prepared, index), whole)


def test_query_constructors_build_statistics():
    def f(frame):
        return 1.0

    assert Query.median("age") == Statistic.median("age")
    assert Query.quantile(["age"], q=[0.1, 0.9]) == Statistic.quantile(
        ["age"], q=[0.1, 0.9])
    assert Query.std("age", ddof=0) == Statistic.std("age", ddof=0)
    assert Query.trimmed_mean("age", 0.2) == Statistic.trimmed_mean("age", 0.2)
    assert Query.ols("y", ["a", "b"], add_constant=False) == Statistic.ols(
        "y", ["a", "b"], add_constant=False)
    assert Query.function(f, names=["one"], columns="age") == Statistic.function(
        f, names=["one"], columns="age")
    assert isinstance(Query.median(), Statistic)


def test_columns_resolution_and_names(frame):
    stat = Statistic.median()
    assert stat.columns is None
    numeric = frame.drop(columns="sex")
    columns = stat.resolve_columns(numeric, exclude=("insured",))
    assert columns == ("age", "hours", "income")
    resolved = stat.with_columns(columns)
    assert resolved.columns == columns
    assert resolved.names(columns) == ["age", "hours", "income"]
    assert list(stat.evaluate(numeric).index) == list(numeric.columns)
    with pytest.raises(InvalidParameterError, match="no columns to release"):
        stat.resolve_columns(frame[["sex"]], exclude=("sex",))
    # OLS reads its response and regressors.
    ols = Statistic.ols("income", "age")
    assert ols.columns == ("income", "age")
    assert ols.resolve_columns(frame, exclude=("sex",)) == ("income", "age")
    assert ols.n_outputs(ols.columns) == 2
    # An unnamed function has labels once they are fixed from one evaluation.
    moments = Statistic.function(age_moments)
    columns = moments.resolve_columns(frame, exclude=("sex",))
    assert columns == tuple(frame.columns)
    assert moments.n_outputs(columns) is None
    with pytest.raises(InvalidParameterError, match="with_names"):
        moments.names(columns)
    named = moments.with_names(moments.evaluate(frame).index)
    assert named.names(columns) == ["mean", "var"]
    assert named.n_outputs(columns) == 2


def test_unknown_non_numeric_and_missing_columns_raise(frame):
    with pytest.raises(DataValidationError, match=r"\['weight'\] not found"):
        Statistic.median(["age", "weight"]).evaluate(frame)
    with pytest.raises(DataValidationError, match=r"\['weight'\] not found"):
        Statistic.function(spread, columns=["weight"]).evaluate(frame)
    with pytest.raises(DataValidationError, match="'sex' of the data is not numeric"):
        Statistic.quantile("sex").evaluate(frame)
    with pytest.raises(DataValidationError, match="'sex' of the data is not numeric"):
        Statistic.ols("income", ["age", "sex"]).evaluate(frame)
    holed = frame.copy()
    holed.loc[3, "hours"] = np.nan
    for stat in (Statistic.std("hours"), Statistic.trimmed_mean("hours"),
                 Statistic.ols("income", "hours")):
        with pytest.raises(DataValidationError, match=r"NaN or infinite.*\['hours'\]"):
            stat.prepare(holed, stat.resolve_columns(holed), what="the reference")
    with pytest.raises(DataValidationError, match="0 rows"):
        Statistic.median("age").evaluate(frame.iloc[:0])


@pytest.mark.parametrize("q", [1.5, -0.1, np.nan, [0.5, 2], [], [0.25, 0.25], "a"])
def test_bad_quantile_levels_raise(q):
    with pytest.raises(InvalidParameterError, match="'q'|duplicate"):
        Statistic.quantile("age", q=q)


@pytest.mark.parametrize("cut", [0.5, 0.7, -0.1, np.inf, "0.1"])
def test_bad_proportiontocut_raises(cut):
    with pytest.raises(InvalidParameterError,
                       match=r"'proportiontocut' parameter of Statistic.trimmed_mean "
                             r"must be a finite real number in the range \[0, 0.5\)"):
        Statistic.trimmed_mean("age", proportiontocut=cut)


def test_bad_parameters_raise():
    with pytest.raises(InvalidParameterError, match="'ddof' parameter of Statistic"):
        Statistic.std("age", ddof=-1)
    with pytest.raises(InvalidParameterError, match="'ddof' parameter of Statistic"):
        Statistic.std("age", ddof=0.5)
    with pytest.raises(InvalidParameterError, match="must be one of"):
        Statistic("mode", ("age",))
    with pytest.raises(InvalidParameterError, match="'func' parameter"):
        Statistic.function("age")
    with pytest.raises(InvalidParameterError, match="also a regressor"):
        Statistic.ols("income", ["age", "income"])
    with pytest.raises(InvalidParameterError, match="repeat a column"):
        Statistic.ols("income", ["age", "age"])
    with pytest.raises(InvalidParameterError, match="at least one column"):
        Statistic.ols("income", [])
    with pytest.raises(InvalidParameterError, match="duplicate statistics"):
        Statistic.ols("income", ["const", "age"])
    with pytest.raises(InvalidParameterError,
                       match=r"columns= names \['age'\] more than once"):
        Statistic.median(["age", "age"])
    with pytest.raises(InvalidParameterError, match="duplicate statistics"):
        Statistic.function(spread, names=["a", "a"])


def test_too_few_rows_raise(frame):
    with pytest.raises(DataValidationError,
                       match=r"2 row\(s\); the ols of \['income', 'age', 'hours'\] "
                             "needs at least 3"):
        Statistic.ols("income", ["age", "hours"]).evaluate(frame.iloc[:2])
    with pytest.raises(DataValidationError, match="needs at least 2"):
        Statistic.std("age").evaluate(frame.iloc[:1])
    assert Statistic.std("age", ddof=0).evaluate(frame.iloc[:1]).iloc[0] == 0.0
    ols = Statistic.ols("income", ["age", "hours"])
    prepared = ols.prepare(frame, ols.columns)
    with pytest.raises(DataValidationError, match="Each subset has 2 row"):
        ols.evaluate_rows(prepared, np.zeros((4, 2), dtype=int))


def test_bad_index_raises(frame):
    stat = Statistic.median("age")
    prepared = stat.prepare(frame, ("age",))
    for index in (np.zeros(5, dtype=int), np.zeros((3, 4)), np.zeros((0, 4), int)):
        with pytest.raises(InvalidParameterError, match=r"\(m, n\) array of integer"):
            stat.evaluate_rows(prepared, index)
    for bad in (-1, len(frame)):
        with pytest.raises(InvalidParameterError, match="outside"):
            stat.evaluate_rows(prepared, np.full((2, 3), bad))


def test_bad_function_outputs_raise(frame):
    cases = [
        (lambda f: f[["age", "hours"]], InvalidParameterError, "returned a DataFrame"),
        (lambda f: np.ones((2, 2)), InvalidParameterError, r"returned shape \(2, 2\)"),
        (lambda f: np.array([]), InvalidParameterError, r"returned shape \(0,\)"),
        (lambda f: "high", InvalidParameterError, "must return numbers"),
        (lambda f: np.nan, DataValidationError, "NaN or infinite values on the data"),
        (lambda f: [1.0, np.inf], DataValidationError, "NaN or infinite"),
    ]
    for func, error, message in cases:
        with pytest.raises(error, match=message):
            Statistic.function(func).evaluate(frame)
    with pytest.raises(InvalidParameterError, match=r"returned 2 value\(s\) but is "
                                                    r"named with 1 label"):
        Statistic.function(lambda f: [1.0, 2.0], names=["x"]).evaluate(frame)

    # Fine on the whole data, but its length depends on the subset.
    def distinct_ages(f):
        return np.unique(f["age"])[:3] if len(f) > 3 else np.unique(f["age"])

    stat = Statistic.function(distinct_ages)
    stat.evaluate(frame)
    prepared = stat.prepare(frame, tuple(frame.columns))
    index = np.zeros((3, 2), dtype=int)
    index[1] = [0, 1] if frame.age[0] != frame.age[1] else [0, 2]
    with pytest.raises(InvalidParameterError, match=r"varying lengths \[1, 2\]"):
        stat.evaluate_rows(prepared, index)
    # Non-finite on one subset only: the variance of a single row.
    var = Statistic.function(lambda f: f["age"].var(), columns="age")
    with pytest.raises(DataValidationError, match="on a subset of rows"):
        var.evaluate_rows(var.prepare(frame, ("age",)), np.zeros((2, 1), dtype=int))


def test_overflow_raises(frame):
    huge = pd.DataFrame({"x": [1e300, -1e300, 1e300]})
    with pytest.raises(DataValidationError, match="overflows float64"):
        Statistic.std("x").evaluate(huge)


def test_nothing_mutates_the_callers_frame(frame):
    before = frame.copy(deep=True)
    rng = np.random.default_rng(3)
    index = rng.integers(0, len(frame), size=(10, 30))
    for stat in STATISTICS.values():
        columns = stat.resolve_columns(frame, exclude=("sex",))
        stat.evaluate(frame, columns)
        stat.evaluate_rows(stat.prepare(frame, columns), index)
    pd.testing.assert_frame_equal(frame, before)


def test_median_of_ten_thousand_subsets():
    rng = np.random.default_rng(4)
    data = pd.DataFrame({"age": rng.integers(18, 90, 25_000),
                         "income": rng.lognormal(10, 1, 25_000)})
    stat = Statistic.median(["age", "income"])
    prepared = stat.prepare(data, ("age", "income"))
    index = rng.integers(0, 25_000, size=(10_000, 100))
    medians = stat.evaluate_rows(prepared, index)
    assert medians.shape == (10_000, 2)
    np.testing.assert_allclose(medians[7], np.median(prepared[index[7]], axis=0))


# ------------------------------------------------------------------ the kernels


def test_every_statistic_kind_is_not_linear():
    assert {stat.statistic for stat in STATISTICS.values()} == set(
        {k.name for k in kinds(linear=False)})
    for stat in STATISTICS.values():
        assert stat.is_linear is False
        assert isinstance(stat, BaseQuery) and not isinstance(stat, LinearQuery)


def _trimmed_mean(column, cut):
    values = np.sort(column.to_numpy(dtype=float))
    k = int(cut * len(values))
    return values[k:len(values) - k].mean()


def _least_squares(f, y, X):
    design = np.column_stack([np.ones(len(f)), f[X].to_numpy(dtype=float)])
    return np.linalg.lstsq(design, f[y].to_numpy(dtype=float), rcond=None)[0]


# One statistic of each kind, with an independent computation on a frame.
KERNEL_EXAMPLES = {
    "median": (Statistic.median(["age", "hours"]),
               lambda f: f[["age", "hours"]].astype(float).median().to_numpy()),
    "quantile": (Statistic.quantile(["age", "income"], q=[0.2, 0.75]),
                 lambda f: [f[c].astype(float).quantile(q)
                            for c in ("age", "income") for q in (0.2, 0.75)]),
    "std": (Statistic.std(["income", "hours"], ddof=2),
            lambda f: f[["income", "hours"]].astype(float).std(ddof=2).to_numpy()),
    "trimmed-mean": (Statistic.trimmed_mean(["age", "income"], 0.25),
                     lambda f: [_trimmed_mean(f[c], 0.25) for c in ("age", "income")]),
    "ols": (Statistic.ols("income", ["age", "hours"]),
            lambda f: _least_squares(f, "income", ["age", "hours"])),
    "function": (Statistic.function(lambda f: f["age"].max() - f["age"].min(),
                                    names=["range"], columns=["age"]),
                 lambda f: [np.ptp(f["age"].to_numpy())]),
}


@pytest.mark.parametrize("kind", sorted({k.name for k in kinds(linear=False)}))
def test_each_kernel_agrees_exactly_and_on_subsets_with_numpy(frame, kind):
    stat, independent = KERNEL_EXAMPLES[kind]
    small = frame.sample(23, random_state=5)
    columns = stat.resolve_columns(small)
    exact = stat.values(small, columns)
    prepared = stat.prepare(small, columns)
    rng = np.random.default_rng(6)
    # The whole data as one subset, then subsets drawn with repeats.
    index = np.vstack([np.arange(23), rng.integers(0, 23, size=(6, 23))])
    rows = stat.evaluate_rows(prepared, index)
    # The same computation on a differently laid out block: equal up to the
    # order NumPy sums in.
    np.testing.assert_allclose(rows[0], exact, rtol=1e-12)
    np.testing.assert_allclose(exact, independent(small), rtol=1e-9)
    for subset, got in zip(index, rows, strict=True):
        np.testing.assert_allclose(got, independent(small.iloc[subset]), rtol=1e-9)
    assert rows.shape == (7, stat.n_outputs(columns))
    assert len(stat.names(columns)) == rows.shape[1]


@pytest.mark.parametrize("kind", [None, "mode", "trimmed_mean", "mean"])
def test_an_unknown_kind_names_the_known_ones(kind):
    message = ("The 'statistic' of a Statistic must be one of ('median', "
               "'quantile', 'std', 'trimmed-mean', 'ols', 'function'). "
               f"Got {kind!r} instead.")
    with pytest.raises(InvalidParameterError, match=f"^{re.escape(message)}$"):
        Statistic(kind, ("age",))
