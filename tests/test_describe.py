"""df.attrpriv.describe: count, means and quartiles in one certified ledger."""

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.datasets import make_hospital
from skattr.exceptions import DataValidationError, InvalidParameterError

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])


@pytest.fixture(scope="module")
def hospital():
    return make_hospital(200, random_state=1), make_hospital(2000, random_state=0)


@pytest.mark.slow
def test_the_table_is_one_joint_guarantee(hospital):
    private, reference = hospital
    before = private.copy()
    d = private.attrpriv.describe(["weight", "blood_pressure"], secret=SECRET,
                                  reference=reference, epsilon=2.0,
                                  random_state=0)
    pd.testing.assert_frame_equal(private, before)       # nothing mutated
    assert d.table.index.tolist() == ["count", "mean", "25%", "50%", "75%"]
    assert d.table.columns.tolist() == ["weight", "blood_pressure"]
    # The count is public and exact; every other cell is noisy.
    assert d.table.loc["count"].tolist() == [200.0, 200.0]
    assert d.noise_std.loc["count"].tolist() == [0.0, 0.0]
    assert (d.noise_std.drop("count") > 0).all().all()
    # Two releases through one ledger whose budget is the table's epsilon.
    assert len(d.ledger.releases) == 2
    spent, delta = d.ledger.spent
    assert 1.9 < spent <= 2.0 and delta == 1e-3
    means, quartiles = (e.release for e in d.ledger.releases)
    assert means.epsilon == 1.0
    np.testing.assert_allclose(d.table.loc["mean"], means.values)
    np.testing.assert_allclose(d.noise_std.loc["mean"], means.noise_std)
    # Quartile cells: each column's 25%, 50%, 75%, in the table's layout,
    # put in increasing order (the release keeps them as drawn).
    np.testing.assert_allclose(d.table.loc[["25%", "50%", "75%"], "weight"],
                               np.sort(quartiles.values.iloc[:3]))
    np.testing.assert_allclose(
        d.table.loc[["25%", "50%", "75%"], "blood_pressure"],
        np.sort(quartiles.values.iloc[3:]))
    assert d.rearranged == (
        not np.all(np.diff(quartiles.values.iloc[:3]) >= 0)
        or not np.all(np.diff(quartiles.values.iloc[3:]) >= 0))
    # Every released value is clamped to its column's clipping range.
    for column in d.table.columns:
        low, high = reference[column].min(), reference[column].max()
        assert d.table[column].drop("count").between(low, high).all()
    text = repr(d)
    assert text.startswith("Hidden: whether the share of records with gender")
    assert "+/- " in text and "75%" in text
    assert d.to_frame() is not d.table and d.to_frame().equals(d.table)


def test_means_alone_and_a_string_column(hospital):
    private, reference = hospital
    d = private.attrpriv.describe("height", secret=SECRET, reference=reference,
                                  percentiles=(), random_state=0)
    assert d.table.index.tolist() == ["count", "mean"]
    assert d.ledger.spent[0] == pytest.approx(1.0)


@pytest.mark.parametrize("kwargs, says", [
    ({"columns": []}, "at least one column"),
    ({"columns": ["weight"], "percentiles": (0.5, 1.5)}, "distinct levels"),
    ({"columns": ["weight"], "percentiles": (0.5, 0.5)}, "distinct levels"),
    ({"columns": ["weight"], "epsilon": 0}, "positive number"),
    ({"columns": ["weight"], "epsilon": float("nan")}, "positive number"),
    ({"columns": ["weight", "height"], "bounds": {"weight": (0, 400)}},
     r"no \(low, high\) for column\(s\) \['height'\]"),
])
def test_bad_arguments_are_refused_before_any_release(hospital, kwargs, says):
    private, reference = hospital
    with pytest.raises(InvalidParameterError, match=says):
        private.attrpriv.describe(secret=SECRET, reference=reference, **kwargs)


def test_without_columns_every_numeric_column_but_the_secrets_is_described(
        hospital):
    # As DataFrame.describe(): numbers only (the text column 'gender' is the
    # secret's anyway); the same table as naming them, seed for seed.
    private, reference = hospital
    common = dict(secret=SECRET, reference=reference, percentiles=(),
                  random_state=0)
    d = private.attrpriv.describe(**common)
    numeric = ["height", "weight", "blood_pressure", "temperature"]
    assert d.table.columns.tolist() == numeric
    named = private.attrpriv.describe(numeric, **common)
    pd.testing.assert_frame_equal(d.table, named.table)
    # A numeric secret's own column is left out; booleans are not numbers.
    coded = private.assign(female=(private["gender"] == "female").astype(int),
                           tall=private["height"] > 66)
    secret = skattr.Secret.proportion("female", 1, pairs=[(0.4, 0.6)])
    ref = reference.assign(female=(reference["gender"] == "female").astype(int))
    d = coded.attrpriv.describe(secret=secret, reference=ref, percentiles=(),
                                random_state=0)
    assert d.table.columns.tolist() == numeric


def test_without_columns_durations_and_complex_numbers_are_left_out(hospital):
    # pandas counts them as numbers; no verb releases them.
    private, reference = hospital
    extra = dict(stay=pd.to_timedelta(np.arange(len(private)), unit="h"),
                 wave=np.ones(len(private)) * (1 + 2j))
    d = private.assign(**extra).attrpriv.describe(
        secret=SECRET, reference=reference, percentiles=(), random_state=0)
    assert d.table.columns.tolist() == ["height", "weight", "blood_pressure",
                                        "temperature"]


def test_without_columns_a_table_of_text_is_refused_first(hospital):
    private, reference = hospital
    text = private[["gender"]].assign(weight=private["weight"].astype(str))
    with pytest.raises(DataValidationError, match="no numeric column"):
        text.attrpriv.describe(secret=SECRET, reference=reference)


def test_without_columns_a_column_the_reference_lacks_is_left_out_said(hospital):
    private, reference = hospital
    coded = private.assign(code=np.arange(len(private), dtype=float))
    with pytest.warns(UserWarning, match=r"leaves out \['code'\]"):
        d = coded.attrpriv.describe(secret=SECRET, reference=reference,
                                    percentiles=(), random_state=0)
    assert "code" not in d.table.columns


def test_percentiles_whose_rows_would_read_the_same_are_refused(hospital):
    private, reference = hospital
    with pytest.raises(InvalidParameterError, match="read the same"):
        private.attrpriv.describe(["weight"], secret=SECRET, reference=reference,
                                  percentiles=(0.1234561, 0.1234562))


@pytest.mark.parametrize("percentiles, rows", [
    (None, ["25%", "50%", "75%"]), (0.5, ["50%"]), ([0.9, 0.1], ["10%", "90%"]),
    ((), [])])
def test_percentiles_read_as_pandas_reads_them(hospital, percentiles, rows):
    # None: the quartiles; a number: that level; rows in increasing order.
    from skattr._describe import _levels

    assert [f"{100 * q:g}%" for q in _levels(percentiles)] == rows


@pytest.mark.parametrize("percentiles", ["0.5", [0.5, "a"], [[0.5]], object()])
def test_percentiles_that_are_not_levels_are_refused_in_words(hospital,
                                                             percentiles):
    private, reference = hospital
    with pytest.raises(InvalidParameterError,
                       match="percentiles must be a sequence of levels"):
        private.attrpriv.describe(["weight"], secret=SECRET,
                                  reference=reference, percentiles=percentiles)


def test_numpy_numbers_and_unknown_keywords(hospital):
    private, reference = hospital
    d = private.attrpriv.describe(["height"], secret=SECRET,
                                  reference=reference, epsilon=np.int64(2),
                                  percentiles=(), random_state=0)
    assert d.ledger.spent[0] == pytest.approx(2.0)
    d = private.attrpriv.describe(["height"], secret=SECRET,
                                  reference=reference, epsilon=np.float32(2),
                                  percentiles=(), random_state=0)
    assert d.ledger.budget[0] == pytest.approx(2.0)
    with pytest.raises(InvalidParameterError,
                       match=r"describe\(\) takes no parameter\(s\) "
                             r"\['mechanism'\]\. .*release them through "
                             r"df\.attrpriv\.ledger"):
        private.attrpriv.describe(["height"], secret=SECRET,
                                  reference=reference, mechanism="apgm")
    with pytest.raises(InvalidParameterError, match="Did you mean 'epsilon'"):
        private.attrpriv.describe(["height"], secret=SECRET,
                                  reference=reference, epsilonn=2)


@pytest.mark.slow
def test_a_nearly_constant_or_0_1_column_beside_another_is_described(hospital):
    # Gaussian noise on a value that barely moves is tiny beside the
    # others': each value's noise is judged alone (before: the whole
    # release read as noiseless, epsilon = inf, refused).
    private, reference = hospital
    rng = np.random.default_rng(0)
    near = reference.assign(code=5.0, smoker=rng.random(len(reference)) < 0.3)
    near.loc[0, "code"] = 5.001
    mine = private.assign(code=5.0, smoker=rng.random(len(private)) < 0.3)
    d = mine.attrpriv.describe(["weight", "code", "smoker"], secret=SECRET,
                               reference=near, epsilon=4.0, random_state=0)
    assert d.ledger.spent[0] <= 4.0 * (1 + 1e-9)
    assert d.noise_std.loc["mean", "code"] < 1e-3
    assert d.noise_std.loc["mean", "weight"] > 1.0


@pytest.mark.slow
def test_too_few_rows_for_the_percentiles_say_what_to_do(hospital):
    _, reference = hospital
    with pytest.raises(skattr.exceptions.BudgetExceededError,
                       match=r"with 8 rows, certified together with the means"
                             r".*Pass percentiles=\[\]"):
        make_hospital(8, random_state=5).attrpriv.describe(
            ["weight"], secret=SECRET, reference=reference, epsilon=4.0,
            random_state=0)


def test_a_constant_column_is_described_without_noise_or_a_traceback(hospital):
    # A site code, the same in every record: its mean and median cannot
    # move, so they need no noise (before: a ValueError from the sums' grid
    # of a one-point range, then a scale search that never stopped).
    private, reference = hospital
    site = dict(site=1)
    d = private.assign(**site).attrpriv.describe(
        ["site"], secret=SECRET, reference=reference.assign(**site),
        percentiles=(0.5,), random_state=0)
    assert d.table.loc[["mean", "50%"], "site"].tolist() == [1.0, 1.0]
    assert d.noise_std.loc[["mean", "50%"], "site"].tolist() == [0.0, 0.0]
    d = private.assign(**site).attrpriv.describe(
        ["weight", "site"], secret=SECRET, reference=reference.assign(**site),
        percentiles=(), random_state=0)
    assert d.table.loc["mean", "site"] == pytest.approx(1.0, abs=1e-3)
    assert d.noise_std.loc["mean", "weight"] > 1.0


@pytest.mark.slow
def test_percentiles_are_shown_in_increasing_order_never_further_off(hospital):
    # Levels given out of order; noise at epsilon 0.5 swaps some. Each
    # column's values are sorted over the levels (the rearrangement), which
    # is never further from the true percentiles in L1, L2 or Linf.
    private, reference = hospital
    levels = [0.75, 0.1, 0.5, 0.25, 0.9]
    columns = ["weight", "blood_pressure", "height"]
    swapped = 0
    for seed in range(4):
        d = private.attrpriv.describe(columns, secret=SECRET,
                                      reference=reference, epsilon=0.5,
                                      percentiles=levels, random_state=seed)
        # The rows (and the release's levels) in increasing order, as
        # DataFrame.describe() shows them.
        rising = sorted(levels)
        rows = [f"{100 * q:g}%" for q in rising]
        assert d.table.index.tolist() == ["count", "mean", *rows]
        drawn = np.asarray(d.ledger.releases[1].release.values,
                           dtype=float).reshape(len(columns), len(levels))
        shown = d.table.loc[rows].to_numpy().T
        assert np.all(np.diff(shown, axis=1) >= 0)
        truth = private[columns].quantile(rising).to_numpy().T
        for p in (1, 2, np.inf):
            for row in range(len(columns)):
                assert (np.linalg.norm(shown[row] - truth[row], p)
                        <= np.linalg.norm(drawn[row] - truth[row], p) + 1e-9)
        swapped += d.rearranged
        assert ("shown in increasing order" in repr(d)) == d.rearranged
    assert swapped >= 2         # the check saw rearranged tables


def test_percent_levels_and_a_missing_reference_say_what_to_do(hospital):
    private, _ = hospital
    with pytest.raises(InvalidParameterError,
                       match="Levels are fractions: 0.75 for the 75th"):
        private.attrpriv.describe(["weight"], secret=SECRET,
                                  reference=hospital[1], percentiles=[75, 25])
    with pytest.raises(InvalidParameterError,
                       match="describe\\(\\) fits its Theta on reference data"):
        private.attrpriv.describe(["weight"], secret=SECRET)
