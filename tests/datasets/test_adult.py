"""load_adult: the UCI Adult files read, verified and cleaned."""

import hashlib
import re
import shutil

import pandas as pd
import pytest

from skattr.datasets import load_adult
from skattr.exceptions import DataValidationError

MD5 = {"adult.data": "5d7c39d7b8804f071cdd1f2a7c460872",
       "adult.test": "35238206dfdf7f1fe215bbb874adecdc"}
INTEGER_COLUMNS = ["age", "fnlwgt", "education-num", "capital-gain",
                   "capital-loss", "hours-per-week"]
STRING_COLUMNS = ["workclass", "education", "marital-status", "occupation",
                  "relationship", "race", "sex", "native-country", "income"]


def copy_adult(source, target):
    """Copy the two data files of ``source/adult`` to ``target/adult``."""
    (target / "adult").mkdir()
    for name in MD5:
        shutil.copyfile(source / "adult" / name, target / "adult" / name)
    return target


def test_counts_columns_and_dtypes(adult):
    assert adult.shape == (45222, 15)
    assert (adult["income"] == ">50K").sum() == 11208
    assert (adult["income"] == "<=50K").sum() == 45222 - 11208
    assert list(adult.columns) == [
        "age", "workclass", "fnlwgt", "education", "education-num",
        "marital-status", "occupation", "relationship", "race", "sex",
        "capital-gain", "capital-loss", "hours-per-week", "native-country",
        "income"]
    assert adult.index.equals(pd.RangeIndex(45222))
    assert (adult.dtypes[INTEGER_COLUMNS] == "int64").all()
    for column in STRING_COLUMNS:
        assert pd.api.types.is_string_dtype(adult[column]), column
        values = adult[column]
        assert not values.isna().any(), column
        assert not values.str.contains(r"^\s|\s$|\?").any(), column


def test_training_file_first_then_test_file(adult):
    # 30,162 complete records in adult.data, 15,060 in adult.test.
    assert adult.iloc[0].tolist() == [
        39, "State-gov", 77516, "Bachelors", 13, "Never-married", "Adm-clerical",
        "Not-in-family", "White", "Male", 2174, 0, 40, "United-States", "<=50K"]
    assert adult.iloc[30162].tolist() == [
        25, "Private", 226802, "11th", 7, "Never-married", "Machine-op-inspct",
        "Own-child", "Black", "Male", 0, 0, 40, "United-States", "<=50K"]
    assert (adult.iloc[30162:]["income"] == ">50K").sum() == 3700


def test_the_files_are_the_uci_originals(skattr_data):
    for name, md5 in MD5.items():
        raw = (skattr_data / "adult" / name).read_bytes()
        assert hashlib.md5(raw).hexdigest() == md5


@pytest.mark.parametrize("name", list(MD5))
def test_a_changed_byte_is_refused(skattr_data, tmp_path, name):
    home = copy_adult(skattr_data, tmp_path)
    path = home / "adult" / name
    raw = bytearray(path.read_bytes())
    # An age digit, 3 -> 4 or 2 -> 3: the file still parses, only the md5 tells.
    offset = 21 if name == "adult.test" else 0
    raw[offset] += 1
    path.write_bytes(bytes(raw))
    found = hashlib.md5(raw).hexdigest()
    message = (f"{path} is not the UCI Adult original: its md5 is {found}, "
               f"expected {MD5[name]}")
    with pytest.raises(DataValidationError, match=re.escape(message)):
        load_adult(home)


def test_no_folder_given_says_where_to_put_the_files(monkeypatch):
    monkeypatch.delenv("SKATTR_DATA", raising=False)
    with pytest.raises(DataValidationError, match="no data folder is given") as info:
        load_adult()
    message = str(info.value)
    for name, md5 in MD5.items():
        assert f"<folder>/adult/{name}  (md5 {md5})" in message
    assert "load_adult(data_home='<folder>')" in message
    assert "SKATTR_DATA=<folder>" in message
    assert "UCI Adult" in message


def test_an_empty_skattr_data_counts_as_unset(monkeypatch):
    monkeypatch.setenv("SKATTR_DATA", "")
    with pytest.raises(DataValidationError, match="no data folder is given"):
        load_adult()


def test_missing_files_are_named_with_their_expected_paths(monkeypatch, tmp_path):
    monkeypatch.setenv("SKATTR_DATA", str(tmp_path))
    with pytest.raises(DataValidationError) as info:
        load_adult()
    message = str(info.value)
    data, test = (tmp_path / "adult" / name for name in MD5)
    assert message.startswith(
        f"UCI Adult file(s) not found: {data}, {test} (folder given by SKATTR_DATA)")
    for name, md5 in MD5.items():
        assert f"{tmp_path / 'adult' / name}  (md5 {md5})" in message
    assert "data_home=" in message and "SKATTR_DATA" in message


def test_one_missing_file_is_named_alone(skattr_data, tmp_path):
    home = copy_adult(skattr_data, tmp_path)
    (home / "adult" / "adult.test").unlink()
    with pytest.raises(DataValidationError, match=re.escape(
            f"not found: {home / 'adult' / 'adult.test'} (folder given by "
            "data_home)")):
        load_adult(home)


def test_data_home_takes_precedence_over_skattr_data(skattr_data, monkeypatch,
                                                     tmp_path):
    monkeypatch.setenv("SKATTR_DATA", str(tmp_path))
    assert len(load_adult(skattr_data)) == 45222
    assert len(load_adult(str(skattr_data))) == 45222
    monkeypatch.setenv("SKATTR_DATA", str(skattr_data))
    with pytest.raises(DataValidationError, match="folder given by data_home"):
        load_adult(tmp_path)


def test_loading_twice_gives_equal_frames(skattr_data):
    # Loading reads and checks the files afresh each time (no wall-clock
    # assertion: a loaded machine runs 2-3x slower).
    pd.testing.assert_frame_equal(load_adult(skattr_data), load_adult(skattr_data))
