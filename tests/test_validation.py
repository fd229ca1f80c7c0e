"""Data checks: frames from user data, numeric blocks, sums, finite values."""

import copy

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from skattr._validation import (
    _numeric_dtype,
    as_frame,
    check_columns,
    check_finite,
    column_sums,
    numeric_block,
)
from skattr.exceptions import DataValidationError, SkattrError


def _frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "height": rng.normal(65, 3, size=6),
        "visits": rng.integers(0, 9, size=6),
        "insured": rng.random(6) < 0.5,
        "gender": ["female", "other"] * 3,
        "as_text": pd.Series([1.5, 2, 3, 4, 5, 6], dtype=object),
    })


def test_errors_are_value_errors():
    assert issubclass(DataValidationError, SkattrError)
    assert issubclass(SkattrError, ValueError)


# -- as_frame --------------------------------------------------------------------


def test_frame_is_returned_as_is():
    frame = _frame()
    assert as_frame(frame) is frame


def test_series_becomes_a_one_column_frame():
    series = pd.Series([1.0, 2.0, 3.0], name="height")
    frame = as_frame(series)
    assert list(frame.columns) == ["height"]
    np.testing.assert_array_equal(frame["height"].to_numpy(), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("data", [np.arange(12.0).reshape(4, 3),
                                  np.arange(12).reshape(4, 3).tolist()])
def test_array_becomes_a_frame_with_integer_labels(data):
    frame = as_frame(data)
    assert list(frame.columns) == [0, 1, 2]
    np.testing.assert_array_equal(frame.to_numpy(), np.arange(12).reshape(4, 3))


def test_one_dimensional_array_says_how_to_reshape():
    with pytest.raises(DataValidationError,
                       match=r"the data must be 2-dimensional .* got a 1-d array\. "
                             r"Reshape your data with array\.reshape\(-1, 1\)"):
        as_frame(np.arange(5.0), what="the data")


def test_three_dimensional_array_is_refused():
    with pytest.raises(DataValidationError,
                       match=r"^X must be 2-dimensional; got 3 dimensions\.$"):
        as_frame(np.zeros((2, 2, 2)))


def test_complex_array_is_refused():
    with pytest.raises(DataValidationError,
                       match="Complex data not supported: X holds complex numbers; "
                             "pass real-valued data"):
        as_frame(np.ones((3, 2)) * 1j)


def test_complex_column_is_refused():
    frame = pd.DataFrame({"a": [1.0, 2.0], "z": [1 + 1j, 2.0]})
    with pytest.raises(DataValidationError,
                       match="X holds complex columns; pass real-valued data"):
        as_frame(frame)


def test_sparse_matrix_says_to_densify():
    with pytest.raises(TypeError, match=r"sparse matrix; .*\.toarray\(\) first"):
        as_frame(sparse.csr_matrix(np.eye(3)))


def test_frame_without_rows_is_refused():
    with pytest.raises(DataValidationError,
                       match=r"0 sample\(s\) \(shape=\(0, 2\)\) while a minimum of "
                             r"1 is required: the private data has 0 rows\. Pass a "
                             r"non-empty frame\."):
        as_frame(pd.DataFrame({"a": [], "b": []}), what="the private data")


def test_frame_without_columns_is_refused():
    with pytest.raises(DataValidationError,
                       match=r"0 feature\(s\) \(shape=\(3, 0\)\) while a minimum of "
                             r"1 is required: X has no columns to release\."):
        as_frame(np.empty((3, 0)))


# -- check_columns -----------------------------------------------------------------


def test_missing_columns_are_named():
    with pytest.raises(DataValidationError,
                       match=r"Column\(s\) \['bmi', 'age'\] not found in X, which "
                             r"has n_features = 5: \['height', 'visits', 'insured', "
                             r"'gender', 'as_text'\]; check the spelling"):
        check_columns(_frame(), ["height", "bmi", "age"])


def test_missing_column_message_shortens_wide_frames():
    wide = pd.DataFrame(np.zeros((2, 20)))
    with pytest.raises(DataValidationError) as info:
        check_columns(wide, [25])
    message = str(info.value)
    assert f"{list(range(12))} ..." in message
    assert "n_features = 20" in message


def test_present_columns_pass():
    assert check_columns(_frame(), ["gender", "height"]) is None


# -- numeric_block ---------------------------------------------------------------


def test_numeric_block_is_the_float_values():
    frame = _frame()
    columns = ["height", "visits", "insured", "as_text"]
    block = numeric_block(frame, columns)
    assert block.dtype == np.float64
    expected = np.column_stack([frame[c].astype(float).to_numpy() for c in columns])
    np.testing.assert_array_equal(block, expected)


def test_numeric_block_keeps_the_requested_order():
    frame = _frame()
    np.testing.assert_array_equal(numeric_block(frame, ["visits", "height"]),
                                  frame[["visits", "height"]].to_numpy(float))


def test_categorical_column_is_named_with_what_to_do():
    with pytest.raises(DataValidationError,
                       match=r"Column 'gender' of the reference data is not numeric "
                             r"\(dtype .*\)\. Release numeric columns, or use a "
                             r"proportion/count query"):
        numeric_block(_frame(), ["height", "gender"], what="the reference data")


def test_object_column_of_words_is_not_numeric():
    frame = pd.DataFrame({"x": pd.Series([1.0, "two"], dtype=object)})
    with pytest.raises(DataValidationError, match="Column 'x' of X is not numeric"):
        numeric_block(frame, ["x"])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_are_named_by_column(bad):
    frame = _frame()
    frame.loc[3, "height"] = bad
    with pytest.raises(DataValidationError,
                       match=r"X contains NaN or infinite values in column\(s\) "
                             r"\['height'\]\. skattr does not impute: drop or fill "
                             r"those rows first"):
        numeric_block(frame, ["visits", "height", "insured"])


def test_every_bad_column_is_named():
    frame = pd.DataFrame({"a": [1.0, np.nan], "b": [1.0, 2.0], "c": [np.inf, 0.0]})
    with pytest.raises(DataValidationError, match=r"column\(s\) \['a', 'c'\]"):
        numeric_block(frame, ["a", "b", "c"])


def test_nullable_missing_value_is_named():
    frame = pd.DataFrame({"a": pd.array([1, None, 3], dtype="Int64"),
                          "b": [1.0, 2.0, 3.0]})
    with pytest.raises(DataValidationError, match=r"column\(s\) \['a'\]"):
        numeric_block(frame, ["a", "b"])


def test_numeric_block_names_missing_columns_first():
    with pytest.raises(DataValidationError, match=r"Column\(s\) \['nope'\] not found"):
        numeric_block(_frame(), ["height", "nope"])


# -- _numeric_dtype ----------------------------------------------------------------


@pytest.mark.parametrize("column", ["height", "visits", "insured", "as_text"])
def test_numeric_dtype_returns_the_column_dtype(column):
    frame = _frame()
    assert _numeric_dtype(frame[column], column, "X") == frame[column].dtype


def test_numeric_dtype_refuses_strings():
    with pytest.raises(DataValidationError,
                       match=r"Column 'gender' of the data is not numeric"):
        _numeric_dtype(_frame()["gender"], "gender", "the data")


# -- column_sums -----------------------------------------------------------------


def test_column_sums_match_an_independent_sum():
    frame = _frame()
    columns = ["height", "visits", "insured", "as_text"]
    expected = [sum(float(v) for v in frame[c]) for c in columns]
    np.testing.assert_allclose(column_sums(frame, columns), expected, rtol=1e-15)


def test_column_sums_of_nullable_integers():
    frame = pd.DataFrame({"a": pd.array([1, 2, 3], dtype="Int64")})
    np.testing.assert_array_equal(column_sums(frame, ["a"]), [6.0])


def test_column_sums_of_large_integers_do_not_wrap():
    # int64 would overflow at 2^63; the float64 accumulation does not wrap.
    frame = pd.DataFrame({"a": np.full(4, 2**62, dtype=np.int64)})
    assert column_sums(frame, ["a"])[0] == pytest.approx(4 * 2.0**62, rel=1e-15)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_column_sums_name_non_finite_columns(bad):
    frame = _frame()
    frame.loc[0, "height"] = bad
    with pytest.raises(DataValidationError,
                       match=r"in column\(s\) \['height'\]\. skattr does not impute"):
        column_sums(frame, ["visits", "height"])


def test_column_sums_name_a_nullable_missing_value():
    frame = pd.DataFrame({"a": pd.array([1.5, None], dtype="Float64")})
    with pytest.raises(DataValidationError, match=r"column\(s\) \['a'\]"):
        column_sums(frame, ["a"])


def test_column_sums_say_to_rescale_on_overflow():
    frame = pd.DataFrame({"big": [1e308, 1e308], "small": [1.0, 2.0]})
    with pytest.raises(DataValidationError,
                       match=r"Columns \['big', 'small'\] of X hold values too "
                             r"large to sum in float64; rescale them"):
        column_sums(frame, ["big", "small"])


def test_column_sums_refuse_categorical_columns():
    with pytest.raises(DataValidationError,
                       match="Column 'gender' of X is not numeric"):
        column_sums(_frame(), ["height", "gender"])


def test_column_sums_name_missing_columns():
    with pytest.raises(DataValidationError, match=r"Column\(s\) \['bmi'\] not found"):
        column_sums(_frame(), ["bmi"])


# -- check_finite ----------------------------------------------------------------


def test_check_finite_passes_clean_blocks():
    assert check_finite(np.ones((3, 2)), ["a", "b"]) is None


def test_check_finite_names_columns_and_the_data():
    block = np.array([[1.0, np.nan, 0.0], [np.inf, 1.0, 0.0]])
    with pytest.raises(DataValidationError,
                       match=r"^the private data contains NaN or infinite values in "
                             r"column\(s\) \['x', 'y'\]"):
        check_finite(block, ["x", "y", "z"], what="the private data")


def test_check_finite_tells_overflow_from_infinity():
    block = np.array([[1e308], [1e308]])
    with pytest.raises(DataValidationError, match="too large to sum in float64"):
        check_finite(block, ["a"])


# -- the caller's data -----------------------------------------------------------


CALLS = {
    "as_frame": lambda f, cols: as_frame(f),
    "check_columns": lambda f, cols: check_columns(f, cols),
    "check_columns-missing": lambda f, cols: check_columns(f, ["nope"]),
    "numeric_block": lambda f, cols: numeric_block(f, cols),
    "numeric_block-categorical": lambda f, cols: numeric_block(f, ["gender"]),
    "column_sums": lambda f, cols: column_sums(f, cols),
    "column_sums-categorical": lambda f, cols: column_sums(f, ["gender"]),
    "check_finite": lambda f, cols: check_finite(f[cols].to_numpy(float), cols),
}


@pytest.mark.parametrize("nan", [False, True], ids=["clean", "with-nan"])
@pytest.mark.parametrize("call", CALLS)
def test_caller_frame_is_not_mutated(call, nan):
    frame = _frame()
    if nan:
        frame.loc[2, "height"] = np.nan
    before = copy.deepcopy(frame)
    try:
        CALLS[call](frame, ["height", "visits", "insured", "as_text"])
    except DataValidationError:
        pass
    pd.testing.assert_frame_equal(frame, before)
    assert frame.flags.allows_duplicate_labels == before.flags.allows_duplicate_labels


def test_caller_array_is_not_mutated():
    array = np.arange(12.0).reshape(4, 3)
    array[1, 1] = np.nan
    before = array.copy()
    frame = as_frame(array)
    with pytest.raises(DataValidationError):
        numeric_block(frame, [0, 1, 2])
    column_sums(frame, [0, 2])
    np.testing.assert_array_equal(array, before)
