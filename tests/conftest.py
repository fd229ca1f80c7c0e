"""Fixtures shared by the tests: the UCI Adult data, read from SKATTR_DATA."""

import os
import re
import time
import types
from pathlib import Path

import pytest
import threadpoolctl
from hypothesis import HealthCheck, settings

import skattr
from skattr.datasets import load_adult, make_hospital

if os.environ.get("PYTEST_XDIST_WORKER"):
    # One BLAS thread per pytest-xdist worker: the workers already use every
    # core, and OpenBLAS's spinning threads would fight over them.
    threadpoolctl.threadpool_limits(1)

# No Hypothesis test has a deadline or fails for slow data generation: a
# machine at load 15 runs an example 10 times slower than an idle one. A test's
# own settings(...) inherit this, and say what else they change.
settings.register_profile("skattr", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("skattr")


# Tests marked slow where no decorator can say it: doctests, and single cases
# of parametrized tests whose other cases take well under a second. A file and
# a pattern of the rest of the test's id; a pattern that matches nothing in a
# file that was collected whole fails the run, so a renamed test is not lost.
SLOW = {
    "skattr/_accessor.py": [r"skattr\._accessor\.AttributePrivacyAccessor",
                            r"skattr\._accessor\.AttributePrivacyAccessor\.describe"],
    "skattr/attacks/_property_inference.py": [
        r"skattr\.attacks\._property_inference\.PropertyInferenceAttack"],
    "skattr/theta/_resample.py": [r"skattr\.theta\._resample\.Resample"],
    "skattr/audit/_audit.py": [r"skattr\.audit\._audit\.audit_ledger"],
    "skattr/model_selection.py": [r"skattr\.model_selection"],
    # The first of the two to run fills a cache the other then reads.
    "tests/test_common.py": [
        r"test_sklearn_compatible_estimator\[(ExpectedValue|Optimal)Gaussian\(.*"
        r"-check_(estimators_dtypes|dtype_object|methods_subset_invariance)\]"],
    "tests/calibration/test_exact_profile.py": [
        r"test_random_laws_match_high_precision_reference\[\d-gaussian-.*\]",
        r"test_never_below_a_fine_grid_lower_bound\[gaussian\]",
        r"test_binomial_laws_with_a_thousand_atoms\[laplace\]"],
    "tests/laws/test_chunked_draws.py": [
        r"test_chunks_are_the_datasets_drawn_at_once\[.*-rejection, many rounds\]"],
    "tests/wasserstein/test_wasserstein_distance.py": [
        r"test_closeness_matches_lp_brute_force\[2\]"],
    "tests/theta/test_sampled_theta.py": [
        r"test_monte_carlo_agrees_with_the_exact_moments\[without-replacement\]"],
    "tests/test_ledger.py": [
        r"test_files_of_schema_2_still_load_and_keep_counting\[gaussian\]"],
    "tests/test_fuzz.py": [
        r"test_nasty_case\[-inf in a released column \(median\)\]",
        r"test_nasty_case\[ledger over budget\]"],
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    # Single tests named (file::test), or --lf: files are collected in part.
    picked = (any("::" in arg for arg in config.args)
              or config.getoption("lf", False))
    files = {}
    for item in items:
        path, _, rest = item.nodeid.partition("::")
        files.setdefault(path, []).append((rest, item))
    for path, patterns in SLOW.items():
        for pattern in patterns:
            matched = [item for rest, item in files.get(path, ())
                       if re.fullmatch(pattern, rest)]
            if path in files and not matched and not picked:
                raise pytest.UsageError(
                    f"tests/conftest.py marks {path}::{pattern} slow, and no "
                    "test of that file matches it: update SLOW.")
            for item in matched:
                item.add_marker(pytest.mark.slow)


# The time guards (skattr.utils._work.TimeGuard) project a computation's
# wall-clock time and refuse past a limit (300 s by default): a test whose
# draws take 40 s on an idle machine would be refused at load 15. In tests
# they read the process's CPU time instead, which load does not stretch; a
# test of the guards' own clock is marked wall_clock.


@pytest.fixture(autouse=True)
def _time_guards_read_cpu_time(request, monkeypatch):
    if request.node.get_closest_marker("wall_clock") is None:
        from skattr.utils import _work

        monkeypatch.setattr(_work, "time",
                            types.SimpleNamespace(perf_counter=time.process_time))


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
