"""Fixtures shared by the tests: the UCI Adult data, read from SKATTR_DATA."""

import os
from pathlib import Path

import pytest

from skattr.datasets import load_adult


@pytest.fixture(scope="session")
def skattr_data():
    """The folder holding ``adult/``, from SKATTR_DATA; skip when it is unset."""
    folder = os.environ.get("SKATTR_DATA")
    if not folder:
        pytest.skip("needs the UCI Adult files: set SKATTR_DATA to the folder "
                    "holding adult/ (CI sets it to ../shared/data)")
    return Path(folder)


@pytest.fixture(scope="session")
def adult(skattr_data):
    """The UCI Adult records, as ``load_adult`` returns them (45,222 rows)."""
    return load_adult(skattr_data)
