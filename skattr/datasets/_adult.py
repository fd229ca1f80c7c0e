"""Loader of the UCI Adult files from a data folder the user points skattr at."""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import pandas as pd

from skattr.exceptions import DataValidationError

__all__ = ["load_adult"]

_URL = "https://archive.ics.uci.edu/dataset/2/adult"

# md5 of the UCI originals, and how many lines precede the records (adult.test
# opens with the banner "|1x3 Cross validator").
_FILES = {
    "adult.data": ("5d7c39d7b8804f071cdd1f2a7c460872", 0),
    "adult.test": ("35238206dfdf7f1fe215bbb874adecdc", 1),
}

_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]
_INTEGER_COLUMNS = ["age", "fnlwgt", "education-num", "capital-gain",
                    "capital-loss", "hours-per-week"]


def _expected_files(folder: str) -> str:
    return "\n".join(f"  {os.path.join(folder, 'adult', name)}  (md5 {md5})"
                     for name, (md5, _) in _FILES.items())


def _data_folder(data_home) -> tuple[Path, str]:
    """Return the folder holding ``adult/`` and where it was given."""
    if data_home is not None:
        return Path(data_home).expanduser(), "data_home"
    # An empty SKATTR_DATA counts as unset: Path("") would be the working directory.
    from_env = os.environ.get("SKATTR_DATA")
    if from_env:
        return Path(from_env).expanduser(), "SKATTR_DATA"
    raise DataValidationError(
        "load_adult needs the UCI Adult files, and no data folder is given. Put "
        f"the original files ({_URL}), unchanged, in a folder of your choice:\n"
        f"{_expected_files('<folder>')}\n"
        "then pass load_adult(data_home='<folder>') or set the environment "
        "variable SKATTR_DATA=<folder>.")


def _read_verified(path: Path, md5: str) -> bytes:
    # The checksum is taken on the very bytes that are parsed, so a file cannot
    # change between the check and the read.
    raw = path.read_bytes()
    found = hashlib.md5(raw, usedforsecurity=False).hexdigest()
    if found != md5:
        raise DataValidationError(
            f"{path} is not the UCI Adult original: its md5 is {found}, expected "
            f"{md5}. Replace it with the unchanged file from {_URL}.")
    return raw


def load_adult(data_home: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Load the UCI Adult (Census Income) records, without missing values.

    The two original files, ``adult.data`` (32,561 records) and ``adult.test``
    (16,281), are read from ``<data_home>/adult/``, their md5 checked, the
    records with a missing value (``?``) dropped and the rest concatenated,
    training file first: 45,222 records, 11,208 of them earning more than 50K.
    Nothing is downloaded, copied or cached.

    Parameters
    ----------
    data_home : str, path-like or None, default=None
        Folder that contains ``adult/adult.data`` and ``adult/adult.test``. When
        None, the folder named by the environment variable ``SKATTR_DATA``.

    Returns
    -------
    DataFrame
        One row per record, indexed 0 to 45,221, with the UCI column names:
        ``age``, ``workclass``, ``fnlwgt``, ``education``, ``education-num``,
        ``marital-status``, ``occupation``, ``relationship``, ``race``, ``sex``,
        ``capital-gain``, ``capital-loss``, ``hours-per-week``,
        ``native-country`` and ``income`` (``"<=50K"`` or ``">50K"``; the dot
        that ends the labels of ``adult.test`` is removed). The six numeric
        columns are int64, the others strings.

    Raises
    ------
    DataValidationError
        If neither ``data_home`` nor ``SKATTR_DATA`` is given, if a file is
        missing (the message lists the paths expected and their md5), or if a
        file's md5 is not the original's.

    Notes
    -----
    The data set is Becker and Kohavi's extraction of the 1994 US Census [1]_,
    licensed CC BY 4.0. Missing values occur only in ``workclass``,
    ``occupation`` and ``native-country``.

    References
    ----------
    .. [1] B. Becker and R. Kohavi, "Adult," UCI Machine Learning Repository,
       1996. https://doi.org/10.24432/C5XW20

    Examples
    --------
    >>> from skattr.datasets import load_adult
    >>> adult = load_adult("/path/to/data")  # doctest: +SKIP
    >>> adult.shape  # doctest: +SKIP
    (45222, 15)
    >>> adult["income"].value_counts()  # doctest: +SKIP
    income
    <=50K    34014
    >50K     11208
    Name: count, dtype: int64
    """
    folder, given_by = _data_folder(data_home)
    paths = {name: folder / "adult" / name for name in _FILES}
    missing = [str(path) for path in paths.values() if not path.is_file()]
    if missing:
        raise DataValidationError(
            f"UCI Adult file(s) not found: {', '.join(missing)} (folder given by "
            f"{given_by}). Put the original files ({_URL}), unchanged, at:\n"
            f"{_expected_files(str(folder))}\n"
            f"or point skattr at the folder that holds adult/ with "
            "load_adult(data_home=...) or the environment variable SKATTR_DATA.")
    # Both files are checked before either is parsed.
    raw = {name: _read_verified(paths[name], md5)
           for name, (md5, _) in _FILES.items()}
    # Only "?" marks a missing value; pandas' default markers ("NA", "null", ...)
    # are not the UCI convention.
    frames = [
        pd.read_csv(io.BytesIO(raw[name]), header=None, names=_COLUMNS,
                    skiprows=banner, skipinitialspace=True, na_values="?",
                    keep_default_na=False,
                    dtype=dict.fromkeys(_INTEGER_COLUMNS, "int64"))
        for name, (_, banner) in _FILES.items()
    ]
    adult = pd.concat(frames, ignore_index=True).dropna().reset_index(drop=True)
    adult["income"] = adult["income"].str.rstrip(".")
    return adult
