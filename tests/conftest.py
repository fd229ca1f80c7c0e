"""Fixtures shared by the tests: the UCI Adult data, read from SKATTR_DATA."""

import os
from pathlib import Path

import pytest
import threadpoolctl

import skattr
from skattr.datasets import load_adult, make_hospital

if os.environ.get("PYTEST_XDIST_WORKER"):
    # One BLAS thread per pytest-xdist worker: the workers already use every
    # core, and OpenBLAS's spinning threads would fight over them.
    threadpoolctl.threadpool_limits(1)


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


# The fuzz and property campaigns (tests/test_fuzz.py, tests/test_properties.py)
# attach their counts of cases to each test's report as the user property
# "skattr_cases": (module, noun, cases by kind, outcomes). They are added up
# here, where every report arrives (the controller under pytest-xdist), and
# printed in the terminal summary: "test_fuzz: N fuzz cases (...)".

_CASE_TOTALS = {}
# The slowest case of each module, as the test that ran it reported it
# ("skattr_slowest": module, CPU seconds, kind of call).
_SLOWEST = {}


def pytest_runtest_logreport(report):
    if report.when != "teardown":
        return
    for name, value in report.user_properties:
        if name == "skattr_slowest":
            module, seconds, kind = value
            if seconds > _SLOWEST.get(module, (0.0, ""))[0]:
                _SLOWEST[module] = (seconds, kind)
            continue
        if name != "skattr_cases":
            continue
        module, noun, cases, outcomes = value
        totals = _CASE_TOTALS.setdefault((module, noun), ({}, {}))
        for total, counts in zip(totals, (cases, outcomes), strict=True):
            for key, n in counts.items():
                total[key] = total.get(key, 0) + n


def pytest_terminal_summary(terminalreporter):
    for (module, noun), (cases, outcomes) in sorted(_CASE_TOTALS.items()):
        detail = ", ".join(f"{k} {v}" for k, v in sorted(cases.items()))
        line = f"{module}: {sum(cases.values())} {noun} ({detail}"
        if outcomes:
            line += "; outcomes: " + ", ".join(
                f"{k} {v}" for k, v in sorted(outcomes.items()))
        terminalreporter.write_line(line + ")")
    for module, (seconds, kind) in sorted(_SLOWEST.items()):
        terminalreporter.write_line(
            f"{module}: the slowest case took {seconds:.1f} CPU-s ({kind})")


# Floors on what a campaign releases: a test marked
# @pytest.mark.floors(...) has its module's assert_floors(...) called with the
# marker's arguments once the test function has returned (after all of a
# Hypothesis test's examples), so that too few releases fail that test.


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    result = yield
    for marker in pyfuncitem.iter_markers("floors"):
        pyfuncitem.module.assert_floors(*marker.args, **marker.kwargs)
    return result
