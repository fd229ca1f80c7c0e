"""Declarative predicates select the records their functions select, as data."""

import dataclasses
import operator

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.datasets import make_hospital
from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.mechanisms import OptimalGaussian, WassersteinMechanism
from skattr.predicates import (
    Above,
    And,
    AtLeast,
    AtMost,
    Below,
    Between,
    Equals,
    Not,
    OneOf,
    Or,
)

# Each predicate with the function it stands for.
EQUIVALENT = [
    (Above(50_000), lambda s: s > 50_000),
    (AtLeast(50_000), lambda s: s >= 50_000),
    (Below(50_000), lambda s: s < 50_000),
    (AtMost(50_000), lambda s: s <= 50_000),
    (Between(20_000, 50_000), lambda s: s.between(20_000, 50_000)),
    (Between(20_000, 50_000, closed="left"),
     lambda s: s.between(20_000, 50_000, inclusive="left")),
    (Between(20_000, 50_000, closed="right"),
     lambda s: (s > 20_000) & (s <= 50_000)),
    (Between(20_000, 50_000, closed="neither"),
     lambda s: (s > 20_000) & (s < 50_000)),
    (Equals(50_000), lambda s: s == 50_000),
    (OneOf([20_000, 50_000.0]), lambda s: s.isin([20_000, 50_000])),
    (AtLeast(20_000) & Below(80_000), lambda s: (s >= 20_000) & (s < 80_000)),
    (Below(20_000) | Above(80_000), lambda s: (s < 20_000) | (s > 80_000)),
    (~Between(20_000, 80_000), lambda s: ~s.between(20_000, 80_000)),
]
IDS = [repr(p) for p, _ in EQUIVALENT]


@pytest.fixture(scope="module")
def incomes():
    rng = np.random.default_rng(0)
    values = np.round(rng.lognormal(10.6, 0.6, 500), -3)
    values[:6] = [20_000, 50_000, 80_000, 50_000.0, 19_999.5, 80_000.5]
    return pd.DataFrame({"income": values, "x": rng.normal(size=500)})


@pytest.mark.parametrize("predicate, function", EQUIVALENT, ids=IDS)
def test_a_predicate_selects_what_its_function_selects(incomes, predicate,
                                                       function):
    whole = incomes["income"].round()
    for column in (incomes["income"], whole.astype(np.int64),
                   whole.astype("Int64"), incomes["income"].astype(object)):
        expected = np.asarray(function(column), dtype=bool)
        np.testing.assert_array_equal(predicate(column), expected)
    by_predicate = skattr.Secret.proportion("income", predicate, pairs=[(0.2, 0.3)])
    by_function = skattr.Secret.proportion("income", function, pairs=[(0.2, 0.3)])
    np.testing.assert_array_equal(by_predicate.indicator(incomes),
                                  by_function.indicator(incomes))
    counted = skattr.Query.count("income", predicate).evaluate(incomes)
    assert counted.to_numpy() == skattr.Query.count(
        "income", function).evaluate(incomes).to_numpy()
    assert counted.index.tolist() == [f"income:{predicate!r}"]


@pytest.mark.parametrize("predicate, function", EQUIVALENT, ids=IDS)
def test_missing_values_are_refused_as_for_a_function(incomes, predicate,
                                                      function):
    frame = incomes.copy()
    frame.loc[3, "income"] = np.nan
    messages = []
    for value in (predicate, function):
        secret = skattr.Secret.proportion("income", value, pairs=[(0.2, 0.3)])
        with pytest.raises(DataValidationError) as info:
            secret.indicator(frame)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "missing (NaN)" in messages[0]


def test_a_predicate_secret_releases_exactly_as_the_lambda():
    rng = np.random.default_rng(1)
    reference = pd.DataFrame({"income": rng.lognormal(10.8, 0.5, 3000),
                              "hours": rng.normal(40, 8, 3000)})
    reference.loc[reference.income > 50_000, "hours"] += 4
    private = reference.sample(400, random_state=2)
    releases = []
    for value in (Above(50_000), lambda income: income > 50_000):
        secret = skattr.Secret.proportion("income", value, pairs=[(0.2, 0.3)])
        mech = OptimalGaussian(query=skattr.Query.mean(["hours"]), secret=secret,
                               law="gaussian", random_state=0).fit(reference)
        releases.append(mech.release(private))
    by_predicate, by_lambda = releases
    assert by_predicate.values.equals(by_lambda.values)
    np.testing.assert_array_equal(by_predicate.noise_covariance,
                                  by_lambda.noise_covariance)
    assert by_predicate.secrets == ("proportion(income: Above(50000)): pairs "
                                    "0.2 vs 0.3",)
    assert by_lambda.secrets == ("proportion(income: <lambda>): pairs 0.2 vs 0.3",)


def test_a_predicate_count_releases_exactly_as_the_lambda():
    reference = make_hospital(2000, random_state=0)
    private = make_hospital(200, random_state=1)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    values = []
    for value in (AtLeast(66), lambda h: h >= 66):
        mech = WassersteinMechanism(query=skattr.Query.count("height", value),
                                    secret=secret, privacy="distributional",
                                    random_state=0).fit(reference)
        values.append(mech.release(private).values.to_numpy())
    np.testing.assert_array_equal(*values)


def test_mixed_object_columns_match_as_pandas_does():
    mixed = pd.Series(["1", 1, 1.0, True, "a", None, 2], dtype=object)
    np.testing.assert_array_equal(Equals(1)(mixed), (mixed == 1).to_numpy())
    np.testing.assert_array_equal(OneOf([1, "a"])(mixed),
                                  mixed.isin([1, "a"]).to_numpy())
    strings = pd.Series(["HS", "Masters", "PhD"], dtype="str")
    np.testing.assert_array_equal(OneOf(["Masters", "PhD"])(strings),
                                  [False, True, True])
    np.testing.assert_array_equal(Equals(True)(pd.Series([True, False])),
                                  [True, False])
    # A comparison that pandas cannot make is a clear error, not a TypeError.
    with pytest.raises(DataValidationError, match=r"Above\(5\) cannot compare the "
                                                  "values of column 'c'"):
        Above(5)(pd.Series(["a", 3], name="c"))


@pytest.mark.parametrize("missing", [np.nan, None, pd.NA])
def test_a_missing_value_never_matches_not_even_negated(missing):
    column = pd.Series([1.0, 5.0, 9.0, missing], dtype="Float64"
                       if missing is pd.NA else object if missing is None
                       else float)
    for predicate in (Above(4), ~Above(4), AtMost(4) | ~AtMost(4), ~OneOf([1.0]),
                      ~Equals(5.0), Not(Between(2, 6))):
        assert predicate(column)[3] == np.False_
    np.testing.assert_array_equal((~Above(4))(column), [True, False, False, False])


def test_a_predicate_takes_any_array_like():
    assert Above(1)(np.array([0, 2])).tolist() == [False, True]
    assert Above(1)([0, 2]).dtype == bool


def test_reprs_are_python_that_rebuilds_them():
    namespace = {name: getattr(skattr.predicates, name)
                 for name in skattr.predicates.__all__}
    for predicate in [p for p, _ in EQUIVALENT] + [
            (Above(1) | Below(0)) & Equals("a"), ~(Above(1) & Below(3)),
            OneOf(["a", 2, 2.5, True]), Above(np.float64(2.5)),
            Between(np.int64(1), 2.5)]:
        assert eval(repr(predicate), namespace) == predicate
    assert repr((Above(1) | Below(0)) & Equals("a")) == (
        "(Above(1) | Below(0)) & Equals('a')")
    assert repr(~(Above(1) & Below(3))) == "~(Above(1) & Below(3))"
    assert repr(Above(np.int64(3))) == "Above(3)"            # NumPy -> Python


def test_composition_flattens_and_types_are_kept():
    a, b, c = Above(1), Below(9), Equals(5)
    assert (a & b & c).parts == (a, b, c) and type(a & b & c) is And
    assert (a | b | c).parts == (a, b, c) and type(a | b | c) is Or
    assert type(~a) is Not and (~a).part == a
    assert ((a & b) | c).parts == (a & b, c)
    with pytest.raises(TypeError):
        a & 3
    with pytest.raises(TypeError):
        lambda_or = a | (lambda s: s > 0)    # noqa: F841


def test_predicates_are_frozen_hashable_and_compared_by_value():
    assert Above(5) == Above(5) and hash(Above(5)) == hash(Above(5))
    assert Above(5) != AtLeast(5)
    assert len({Above(5), Above(5), Below(5)}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        Above(5).threshold = 6
    assert Above(5).__name__ == "Above(5)" and Above.__name__ == "Above"


@pytest.mark.parametrize("build, match", [
    (lambda: Above("50k"), "threshold of Above must be a number"),
    (lambda: Below(float("nan")), "not NaN"),
    (lambda: AtMost(True), "not NaN or a bool"),
    (lambda: Between(5, 1), "needs low < high"),
    (lambda: Between(1, 1), "For one value use Equals"),
    (lambda: Between(1, 5, closed="open"), "The 'closed' parameter of Between"),
    (lambda: OneOf("ab"), r"OneOf takes a list of values, e\.g\."),
    (lambda: OneOf([]), "at least one value"),
    (lambda: OneOf(["a", None]), "cannot match a missing value"),
    (lambda: Equals(np.nan), "cannot match a missing value"),
    (lambda: Equals(object()), "matches strings, numbers and bools"),
    (lambda: And((Above(1),)), "combines at least 2 skattr predicates"),
    (lambda: Or((Above(1), len)), "combines at least 2 skattr predicates"),
    (lambda: Not(operator.not_), "combines at least 1 skattr predicates"),
], ids=["str threshold", "nan", "bool", "reversed", "point", "closed",
        "string values", "empty", "none member", "nan value", "object", "and",
        "or", "not"])
def test_bad_predicates_are_refused_with_what_to_do(build, match):
    with pytest.raises(InvalidParameterError, match=match):
        build()
