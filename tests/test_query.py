"""Query: exact statistics against pandas, per-record contributions, bad input."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from skattr import Query
from skattr._base_query import BaseQuery, LinearQuery
from skattr._kinds import kinds
from skattr.exceptions import DataValidationError, InvalidParameterError


@pytest.fixture()
def frame():
    rng = np.random.default_rng(0)
    n = 257
    return pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "income": rng.lognormal(10.5, 0.8, n),
        "hours": rng.normal(40, 8, n).astype(np.float32),
        "sex": rng.choice(["Female", "Male", "Other"], n),
        "smoker": rng.integers(0, 2, n),
        "insured": rng.random(n) < 0.7,
        "grade": pd.Categorical(rng.choice(["a", "b", "c"], n)),
    })


def test_mean_and_sum_match_pandas(frame):
    cols = ["age", "income", "hours", "insured"]
    mean = Query.mean(cols).evaluate(frame)
    total = Query.sum(cols).evaluate(frame)
    expected_mean = frame[cols].astype(float).mean()
    expected_sum = frame[cols].astype(float).sum()
    pd.testing.assert_series_equal(mean, expected_mean.rename("mean"), rtol=1e-12)
    pd.testing.assert_series_equal(total, expected_sum.rename("sum"), rtol=1e-12)
    assert list(mean.index) == cols


def test_count_and_proportion_match_pandas(frame):
    count = Query.count(["sex"], "Female").evaluate(frame)
    # A count of a value is labelled with the value.
    assert list(count.index) == ["sex=Female"]
    assert count["sex=Female"] == (frame.sex == "Female").sum()
    assert count.name == "count"
    prop = Query.proportion(["sex", "grade"], "b").evaluate(frame)
    assert prop["sex=b"] == 0.0
    assert prop["grade=b"] == pytest.approx((frame.grade == "b").mean(), rel=1e-12)
    # value=None counts a 0/1 or boolean column.
    prop = Query.proportion(["smoker", "insured"]).evaluate(frame)
    assert prop["smoker"] == pytest.approx(frame.smoker.mean(), rel=1e-12)
    assert prop["insured"] == pytest.approx(frame.insured.mean(), rel=1e-12)
    assert Query.count("insured").evaluate(frame)["insured"] == frame.insured.sum()


def test_predicates(frame):
    def above_50k(s):
        return s > 50_000

    rich = Query.proportion("income", above_50k).evaluate(frame)
    # A predicate's statistic is labelled with its name.
    assert rich["income:above_50k"] == pytest.approx((frame.income > 50_000).mean(),
                                                      rel=1e-12)
    # A predicate may return a numpy array or a list, as long as it is boolean.
    old = Query.count(["age"], lambda s: (s >= 65).to_numpy()).evaluate(frame)
    assert old.iloc[0] == (frame.age >= 65).sum()
    odd = Query.count(["age"], lambda s: [v % 2 == 1 for v in s]).evaluate(frame)
    assert odd.iloc[0] == (frame.age % 2 == 1).sum()


def test_contributions_and_weight(frame):
    q = Query.proportion(["sex"], "Male")
    h = q.contributions(frame, ("sex",))
    assert h.shape == (len(frame), 1) and h.dtype == np.float64
    np.testing.assert_array_equal(h[:, 0], (frame.sex == "Male").to_numpy())
    h = Query.mean(["age", "hours"]).contributions(frame, ("age", "hours"))
    np.testing.assert_array_equal(h, frame[["age", "hours"]].to_numpy(float))
    assert Query.mean().weight(8) == 1 / 8
    assert Query.proportion().weight(8) == 1 / 8
    assert Query.sum().weight(8) == 1.0
    assert Query.count().weight(8) == 1.0


def test_resolve_columns(frame):
    assert Query.mean("age").columns == ("age",)
    assert Query.mean(["age", "income"]).resolve_columns(frame) == ("age", "income")
    all_but = Query.mean().resolve_columns(frame, exclude=["sex", "grade"])
    assert all_but == ("age", "income", "hours", "smoker", "insured")
    with pytest.raises(InvalidParameterError, match="no columns to release"):
        Query.mean().resolve_columns(frame[["sex"]], exclude=["sex"])


def test_evaluate_accepts_arrays_and_never_mutates(frame):
    before = frame.copy()
    Query.mean(["age"]).evaluate(frame)
    Query.proportion("income", lambda s: s > 50_000).evaluate(frame)
    pd.testing.assert_frame_equal(frame, before)
    values = np.array([[1.0, 2.0], [3.0, 6.0]])
    out = Query.mean([0, 1]).evaluate(values)
    assert out.tolist() == [2.0, 4.0]


# ------------------------------------------------------------------- errors


def test_bad_statistic_and_value():
    with pytest.raises(InvalidParameterError,
                       match="'statistic' of a Query must be one of"):
        Query("median", ("age",))
    with pytest.raises(InvalidParameterError, match="A mean query takes no 'value'"):
        Query("mean", ("age",), "x")
    with pytest.raises(InvalidParameterError, match="A sum query takes no 'value'"):
        Query("sum", ("age",), lambda s: s > 1)
    with pytest.raises(InvalidParameterError, match="at least one column"):
        Query.mean([])


def test_non_numeric_columns(frame):
    with pytest.raises(DataValidationError,
                       match=r"Column 'sex' of the data is not numeric \(dtype "):
        Query.mean(["age", "sex"]).evaluate(frame)
    with pytest.raises(DataValidationError, match="not numeric"):
        Query.sum(["grade"]).evaluate(frame)
    with pytest.raises(InvalidParameterError, match="not boolean or 0/1"):
        Query.proportion("age").evaluate(frame)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_inf(frame, bad):
    frame = frame.astype({"income": float})
    frame.loc[5, "income"] = bad
    with pytest.raises(DataValidationError,
                       match=r"NaN or infinite values in column\(s\) \['income'\]"):
        Query.mean(["age", "income"]).evaluate(frame)
    with pytest.raises(DataValidationError, match="NaN or infinite"):
        Query.sum(["income"]).evaluate(frame)


def test_missing_values_in_counted_columns(frame):
    frame = frame.astype({"sex": object})
    frame.loc[3, "sex"] = None
    with pytest.raises(DataValidationError,
                       match=r"Column 'sex' of the data holds missing \(NaN\)"):
        Query.proportion("sex", "Female").evaluate(frame)
    calls = []

    def predicate(s):
        calls.append(1)
        return (s == "Female").to_numpy()

    with pytest.raises(DataValidationError, match="holds missing"):
        Query.count("sex", predicate).evaluate(frame)
    assert calls == []      # refused before the predicate saw the missing value
    frame = frame.astype({"smoker": float})
    frame.loc[0, "smoker"] = np.nan
    with pytest.raises(DataValidationError, match="NaN or infinite"):
        Query.count("smoker").evaluate(frame)
    # An infinite value in a numeric column compared with a value is refused too.
    frame.loc[0, "smoker"] = np.inf
    with pytest.raises(DataValidationError, match="infinite"):
        Query.proportion("smoker", 1.0).evaluate(frame)


def test_unknown_columns(frame):
    with pytest.raises(DataValidationError,
                       match=r"Column\(s\) \['salary'\] not found in the data"):
        Query.mean(["age", "salary"]).evaluate(frame)
    with pytest.raises(DataValidationError, match=r"\['salary'\] not found"):
        Query.proportion("salary", "x").evaluate(frame)


def test_bad_predicates(frame):
    with pytest.raises(InvalidParameterError,
                       match=r"one boolean per record; it returned shape \(1,\)"):
        Query.proportion("income", lambda s: [True]).evaluate(frame)
    with pytest.raises(InvalidParameterError, match=r"shape \(\)"):
        Query.proportion("income", lambda s: bool(s.max() > 0)).evaluate(frame)
    with pytest.raises(InvalidParameterError, match=r"returned shape \(257, 1\)"):
        Query.proportion("income", lambda s: s.to_frame() > 0).evaluate(frame)
    with pytest.raises(InvalidParameterError,
                       match="must return booleans; it returned dtype int64"):
        Query.count("age", lambda s: (s > 50).astype(np.int64)).evaluate(frame)
    with pytest.raises(InvalidParameterError, match="returned dtype float64"):
        Query.count("income", lambda s: s / 2).evaluate(frame)


def test_empty_frame():
    empty = pd.DataFrame({"age": pd.Series([], dtype=float)})
    for query in (Query.mean("age"), Query.proportion("age", lambda s: s > 1)):
        with pytest.raises(DataValidationError, match="0 rows"):
            query.evaluate(empty)


# ------------------------------------------------------------ queries as types


LINEAR_QUERIES = {
    "mean": Query.mean(["age", "income"]),
    "sum": Query.sum("hours"),
    "count": Query.count("sex", "Female"),
    "proportion": Query.proportion(["smoker", "insured"]),
}


def test_every_query_kind_is_linear(frame):
    # Every kind of Query is listed, so a new kind cannot go untested.
    assert set(LINEAR_QUERIES) == {k.name for k in kinds(linear=True)}
    stacked = LINEAR_QUERIES["mean"] + LINEAR_QUERIES["count"]
    for query in [*LINEAR_QUERIES.values(), stacked]:
        assert query.is_linear is True
        assert isinstance(query, LinearQuery) and isinstance(query, BaseQuery)
    # The non-linear constructors reached from Query build Statistics.
    assert Query.median("age").is_linear is False
    assert not isinstance(Query.median("age"), LinearQuery)


@pytest.mark.parametrize("name", list(LINEAR_QUERIES))
def test_values_are_the_totals_times_the_weight(frame, name):
    query = LINEAR_QUERIES[name]
    columns = query.resolve_columns(frame)
    values = query.values(frame, columns)
    # Bit for bit what a release adds its noise to.
    totals = query.totals(frame, columns, what="the data") * query.weight(len(frame))
    np.testing.assert_array_equal(values, totals)
    np.testing.assert_allclose(values, query.evaluate(frame).to_numpy(), rtol=1e-12)
    assert query.n_outputs(columns) == len(query.names(columns)) == len(values)
    with pytest.raises(DataValidationError, match="0 rows"):
        query.values(frame.iloc[:0], columns)


def test_stacked_values_and_outputs(frame):
    stacked = Query.mean(["age", "income"]) + Query.proportion("sex", "Male")
    values = stacked.values(frame, stacked.columns)
    expected = [frame.age.mean(), frame.income.mean(), (frame.sex == "Male").mean()]
    np.testing.assert_allclose(values, expected, rtol=1e-12)
    assert stacked.n_outputs(stacked.columns) == 3


def test_base_query_declares_the_shared_interface():
    shared = {"is_linear", "resolve_columns", "with_columns", "names", "n_outputs",
              "values", "evaluate"}
    assert BaseQuery.__abstractmethods__ == frozenset(shared)
    assert LinearQuery.__abstractmethods__ == frozenset(
        shared - {"is_linear", "values"} | {"weight", "contributions", "totals"})
    with pytest.raises(TypeError, match="abstract"):
        BaseQuery()


def test_equality_hash_and_repr_are_the_fields():
    # Estimators store queries as parameters: clone and the plan cache read these.
    query = Query.count(["sex"], "Female")
    assert repr(query) == "Query(statistic='count', columns=('sex',), value='Female')"
    assert query == Query("count", "sex", "Female")
    assert hash(query) == hash(Query("count", ("sex",), "Female"))
    assert query != Query.proportion("sex", "Female")
    stacked = Query.mean("age") + Query.sum("hours")
    assert repr(stacked) == (
        "StackedQuery(parts=(Query(statistic='mean', columns=('age',), value=None), "
        "Query(statistic='sum', columns=('hours',), value=None)))")
    assert stacked == Query.mean("age") + Query.sum("hours")
    assert len({stacked, Query.mean("age") + Query.sum("hours")}) == 1
    assert clone(stacked, safe=False) == stacked
