"""Fixtures shared by the tests: the UCI Adult data, read from SKATTR_DATA."""

import os
from pathlib import Path

import pytest

import skattr
from skattr.datasets import load_adult, make_hospital


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


# The audit suite's data and mechanisms (tests/audit/), fitted once a session.
# A test module's own fixture of the same name takes precedence over these.


@pytest.fixture(scope="session")
def hospital():
    """Reference patients: 20,000 records, 12,000 of them female."""
    return make_hospital(20_000, random_state=0)


@pytest.fixture(scope="session")
def gender():
    """The secret of the suite: the share of women, 0.4 against 0.6."""
    return skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])


@pytest.fixture(scope="session")
def narrow_gender():
    """The same secret with a narrow pair, 0.45 against 0.55."""
    return skattr.Secret.proportion("gender", "female", pairs=[(0.45, 0.55)])


@pytest.fixture(scope="session")
def fitted():
    """A cache of fitted mechanisms, keyed by the test's own description."""
    return {}

