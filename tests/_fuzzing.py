"""What the fuzz tests share: one check of a call, its deadline, and the tallies.

Every fuzzed call goes through :func:`attempt`: it must return a certified
result or raise skattr's own error (never another exception, a NaN or an
uncertified value), and use at most :data:`CASE_CPU_SECONDS` of CPU time (a
hang detector, not a timing assert: a case far below it is not timed
against anything). The tallies count each test's calls by kind and outcome
for its floors (``@pytest.mark.floors``) and for the terminal summary that
tests/conftest.py prints ("test_fuzz: N fuzz cases ...", and the slowest).
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
import warnings
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, settings

from skattr import Plan, Release
from skattr.exceptions import NotFittedError, SkattrError

_SEEDED = dict(derandomize=True, deadline=None, database=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow,
                                      HealthCheck.data_too_large,
                                      HealthCheck.filter_too_much,
                                      HealthCheck.function_scoped_fixture])
FUZZ_SETTINGS = settings(max_examples=60, **_SEEDED)
CAMPAIGN_SETTINGS = settings(max_examples=150, **_SEEDED)

CASES = Counter()
OUTCOMES = Counter()

#: The calls of the running test function alone, as (kind, outcome, class of
#: the refusal or None): what its floors are checked against.
RUN = Counter()

#: The slowest case of the running test: (CPU seconds, kind).
SLOWEST = [0.0, ""]

#: The most CPU time one fuzzed case may take (issue 42: 99 quantile levels
#: on 120 rows ran over 60 s). Measured as the CPU time of the thread that
#: runs the case, so that a loaded machine, which stretches the wall-clock
#: time, does not trip it; a case that waits without computing is stopped
#: after CASE_WALL_SECONDS of wall-clock time instead.
CASE_CPU_SECONDS = 30.0
CASE_WALL_SECONDS = 600.0


@contextlib.contextmanager
def no_local_constants():
    """Draw every example without the constants of the modules imported so far.

    Hypothesis (6.131 on) now and then draws a number found in the source of
    the local modules in ``sys.modules``: skattr's modules, which are
    imported lazily, so a seeded test drew other examples after another test
    had imported more of skattr (the campaign released 9 of 132 calls after
    test_accessor_certifies_or_refuses, 15 of 150 alone), and any constant
    changed anywhere in skattr changed every fuzz test's examples. Without
    that pool, a test's examples depend only on its seed and Hypothesis's
    version. A Hypothesis without the pool needs nothing.
    """
    try:
        from hypothesis.internal.conjecture import providers
        pool = providers.Constants()
        getter, cache = providers._get_local_constants, providers.CONSTANTS_CACHE
    except (ImportError, AttributeError):
        yield
        return
    providers._get_local_constants = lambda: pool
    try:
        cache.cache.clear()
        yield
    finally:
        providers._get_local_constants = getter
        cache.cache.clear()


def tally(request):
    """The body of each fuzz module's autouse fixture (see tests/conftest.py).

    Count each test's calls apart, and add them to the total line: it is
    added up from the test reports by tests/conftest.py and printed in the
    terminal summary, so that it is whole under pytest-xdist too.
    """
    RUN.clear()
    SLOWEST[:] = [0.0, ""]
    before = (CASES.copy(), OUTCOMES.copy())
    with no_local_constants():
        yield RUN
    request.node.user_properties.append(("skattr_cases", (
        "test_fuzz", "fuzz cases", dict(CASES - before[0]),
        dict(OUTCOMES - before[1]))))
    request.node.user_properties.append(("skattr_slowest", (
        "test_fuzz", SLOWEST[0], SLOWEST[1])))


def entry_point(kind):
    """The entry point a kind of call goes through, for its floor.

    "accessor.ledger-mean" -> "ledger", "accessor.median" -> "accessor",
    "estimator.apgm" -> "estimator", "extra.pandas.sum" -> "extra.pandas".
    """
    if kind.startswith("accessor.ledger"):
        return "ledger"
    return kind.rsplit(".", 1)[0] if kind.count(".") else kind


def count(entry=None, outcome=None):
    """The running test's calls through ``entry`` (all: None), by outcome."""
    return sum(v for (kind, out, _), v in RUN.items()
               if entry in (None, entry_point(kind)) and outcome in (None, out))


def refusals():
    """The running test's refusals, by class of the error."""
    tally = Counter()
    for (_, out, error), v in RUN.items():
        if out == "refused":
            tally[error] += v
    return tally


#: The refusals a fuzzed call may end in: a bad parameter, unusable data, a
#: guarantee that cannot be certified (or a ledger's budget). Anything else
#: (a bare SkattrError, a missing optional dependency, NotFittedError from a
#: call that fits) is not a refusal of the fuzzed input but a fault.
EXPECTED_REFUSALS = ("InvalidParameterError", "DataValidationError",
                     "NotCertifiableError", "BudgetExceededError")


def assert_floors(released, refused_by=EXPECTED_REFUSALS):
    """Check a test's ``@pytest.mark.floors``, once all its examples have run.

    ``released`` maps an entry point (see :func:`entry_point`) to the fewest
    releases the test's calls through it must make. Every refusal is a skattr
    error, so without floors a fuzzer whose calls all refused (a library that
    started refusing everything) would pass. Each floor is about half of the
    releases that the seeded examples made when it was set (in a comment by
    the test). ``refused_by`` lists the classes the refusals may have.
    tests/conftest.py calls this after the test function has returned.
    """
    short = [f"{entry}: {count(entry, 'released')} released of "
             f"{count(entry)} calls (floor {floor})"
             for entry, floor in released.items()
             if count(entry, "released") < floor]
    assert not short, "too few releases: " + "; ".join(short) + (
        f"; refusals: {dict(refusals())}")
    others = set(refusals()) - set(refused_by)
    assert not others, f"refusals of unexpected kinds: {dict(refusals())}"


# ---------------------------------------------------------------------------
# The one check: certified, or refused with skattr's error.

def check_certified(out):
    """Raise AssertionError unless ``out`` is a certified result."""
    if isinstance(out, (Release, Plan)):
        assert math.isfinite(out.epsilon) and out.epsilon > 0, out.epsilon
        assert 0.0 <= out.delta < 1.0, out.delta
        cov = np.asarray(out.noise_covariance, dtype=float)
        assert np.isfinite(cov).all(), cov
        assert math.isfinite(out.expected_error) and out.expected_error >= 0
        if isinstance(out, Release):
            values = out.values.to_numpy(dtype=float)
            assert values.size == len(out.statistics) > 0
            assert np.isfinite(values).all(), out.values
        return
    if isinstance(out, float):
        # A leakage: an epsilon, possibly infinite (the raw statistic reveals
        # the secret), never NaN or negative.
        assert out >= 0.0, out
        return
    raise AssertionError(f"unexpected result {type(out).__name__}: {out!r}")


def record(kind, outcome, error=None):
    """Count one call of ``kind`` and its outcome; return the outcome."""
    OUTCOMES[f"{kind.split('.')[0]} {outcome}"] += 1
    RUN[kind, outcome, error] += 1
    return outcome


class CaseOverTime(BaseException):
    """A fuzzed case ran over its CPU time (a BaseException: no ``except
    Exception`` in the library swallows it)."""


@contextlib.contextmanager
def deadline(kind, cpu_seconds=CASE_CPU_SECONDS, wall_seconds=CASE_WALL_SECONDS):
    """Stop the case inside over ``cpu_seconds`` of its thread's CPU time.

    A wall-clock alarm wakes up when the case could have used its CPU time;
    it stops the case only if it did (or if ``wall_seconds`` have passed),
    and otherwise sleeps again for what is left, so a loaded machine only
    delays the check. Outside the main thread (no signals), the CPU time is
    checked when the case returns. Either way, an AssertionError names the
    case and its time.
    """
    start_cpu, start_wall = time.thread_time(), time.monotonic()

    def over():
        used = time.thread_time() - start_cpu
        return (used > cpu_seconds
                or time.monotonic() - start_wall > wall_seconds), used

    def wake(signum, frame):
        stop, used = over()
        if stop:
            raise CaseOverTime(used)
        signal.setitimer(signal.ITIMER_REAL, max(cpu_seconds - used, 1.0))

    armed = (threading.current_thread() is threading.main_thread()
             and hasattr(signal, "setitimer"))
    if armed:
        previous = signal.signal(signal.SIGALRM, wake)
        signal.setitimer(signal.ITIMER_REAL, cpu_seconds)
    try:
        yield
    except CaseOverTime as exc:
        wall = time.monotonic() - start_wall
        raise AssertionError(
            f"{kind}: the case was stopped after {exc.args[0]:.1f} CPU-s "
            f"(the limit is {cpu_seconds:g}; wall {wall:.0f} s)") from None
    finally:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        used = time.thread_time() - start_cpu
        if used > SLOWEST[0]:
            SLOWEST[:] = [used, kind]
    used = time.thread_time() - start_cpu
    assert used <= cpu_seconds, (
        f"{kind}: the case took {used:.1f} CPU-s (the limit is {cpu_seconds:g})")


def attempt(kind, fn, check=check_certified):
    """Run ``fn``: a certified result, or a refusal by skattr. Return which.

    The call must end within :data:`CASE_CPU_SECONDS` of CPU time
    (:func:`deadline`); ``check`` is what a result that is not refused must
    pass (by default: certified).
    """
    CASES[kind] += 1
    try:
        with deadline(kind), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn()
    except (SkattrError, NotFittedError) as exc:
        assert str(exc), "an error must say what to do next"
        return record(kind, "refused", type(exc).__name__)
    check(out)
    return record(kind, "released")
