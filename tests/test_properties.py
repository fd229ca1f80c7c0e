"""Properties every mechanism keeps, checked by hypothesis on the hospital data.

- noise never shrinks as epsilon (or delta) shrinks;
- a release never mutates its inputs (frames, reference, secret, query);
- ``mechanism.release`` and the accessor agree under the same seed;
- as epsilon -> infinity the release tends to the exact statistic;
- certificates do not depend on the order of the rows.

Every example is seeded (``derandomize=True``); the number of cases tried is
printed in the terminal summary ("test_properties: N property cases"). Where
a refusal ends an example early, a floor (``@pytest.mark.floors``) requires
the property to have been checked on most of the test's examples.
"""

import copy
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from _fuzzing import no_local_constants
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skattr
from skattr.datasets import make_hospital
from skattr.exceptions import NotCertifiableError, SkattrError
from skattr.laws import AssumeGaussian
from skattr.mechanisms import MECHANISMS
from skattr.utils import all_estimators

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
COLS = ["weight", "blood_pressure"]
N_PRIVATE = 60

# One Theta mechanism per config below, under the papers' Gaussian law and the
# plug-in Theta (both explicit opt-ins, recorded on the release): the fast,
# deterministic fit that lets hypothesis try many parameters.
_GAUSSIAN = {"law": "gaussian", "theta": "moments"}
_EQUAL = {**_GAUSSIAN, "law": AssumeGaussian(covariances="assume-equal")}
_NETWORK = skattr.bayes.ParameterNetwork(
    parents={}, grids={"gender": [0.4, 0.6]}, cpts={"gender": [0.5, 0.5]})


def _searching_slow(names):
    """The mechanisms whose plans search (seconds a property): marked slow."""
    return [pytest.param(name, marks=pytest.mark.slow)
            if name in ("expm-gaussian", "optimal") else name for name in names]


def _tall(h):
    return h > 68


#: name -> (verb, columns, value, params): a release every mechanism certifies
#: on the hospital data.
CONFIGS = {
    "apgm": ("mean", COLS, None, _GAUSSIAN),
    "expm-gaussian": ("mean", COLS, None, _GAUSSIAN),
    "expm-laplace": ("mean", COLS, None, _EQUAL),
    "dirm-gaussian": ("mean", COLS, None, _EQUAL),
    "dirm-laplace": ("mean", COLS, None, _EQUAL),
    "eigm": ("mean", COLS, None, _EQUAL),
    "daum": ("mean", COLS, None, _EQUAL),
    "optimal": ("mean", COLS, None, _GAUSSIAN),
    "wasserstein": ("count", ["height"], _tall, {"theta": "moments"}),
    "approx-wasserstein": ("count", ["height"], _tall, {"theta": "moments"}),
    "markov-quilt": ("mean", COLS, None, {"network": _NETWORK,
                                          "bounds": (0, 400)}),
    "markov-quilt-swc": ("mean", COLS, None, {
        "transition": [[0.8, 0.2], [0.3, 0.7]], "bounds": (0, 400)}),
    "dp-laplace": ("mean", COLS, None, {"bounds": (0, 400)}),
    "dp-gaussian": ("mean", COLS, None, {"bounds": (0, 400)}),
    "group-dp-laplace": ("sum", COLS, None, {"bounds": (0, 400)}),
    "group-dp-gaussian": ("sum", COLS, None, {"bounds": (0, 400)}),
}

# Mechanisms whose noise is Laplace with delta = 0: they take no delta.
_NO_DELTA = {name for name, cls in MECHANISMS.items()
             if "delta" not in cls().get_params()}

_SEEDED = dict(derandomize=True, deadline=None, database=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow])
#: A few examples per mechanism in every run; the campaign (marked slow, still
#: run in CI) draws the mechanism too and tries many more.
PROPERTY_SETTINGS = settings(max_examples=3, **_SEEDED)
CAMPAIGN_SETTINGS = settings(max_examples=30, **_SEEDED)

CASES = Counter()
#: The examples of the running test function alone, by property and by whether
#: the property was checked on a certified plan or release ("checked") or a
#: refusal ended the example early ("refused"): what its floors are checked
#: against.
RUN = Counter()


@pytest.fixture(autouse=True)
def _tally(request):
    """Count each test's examples apart, and add them to the module's line.

    The total ("test_properties: N property cases ...") is added up from the
    test reports by tests/conftest.py and printed in the terminal summary, so
    that it is whole under pytest-xdist too.
    """
    RUN.clear()
    before = CASES.copy()
    with no_local_constants():   # examples that depend on the seed alone
        yield RUN
    outcomes = Counter()
    for (_, outcome), n in RUN.items():
        outcomes[outcome] += n
    request.node.user_properties.append(("skattr_cases", (
        "test_properties", "property cases", dict(CASES - before),
        dict(outcomes))))


def _count(prop, outcome):
    """Count an example of property ``prop``: "checked" or "refused"."""
    CASES[prop] += 1
    RUN[prop, outcome] += 1


def assert_floors(checked):
    """Check a test's ``@pytest.mark.floors``, once all its examples have run.

    The property was checked (not ended early by a refusal) on at least
    ``checked`` of the test's examples: a count, or a share when a float. A
    mechanism that refused every example would otherwise pass having checked
    nothing. tests/conftest.py calls this after the test function returns.
    """
    done = sum(n for (_, out), n in RUN.items() if out == "checked")
    total = sum(RUN.values())
    floor = checked if isinstance(checked, int) else checked * total
    assert total > 0 and done >= max(floor, 1), (
        f"the property was checked on {done} of {total} examples "
        f"(floor {checked}): {dict(RUN)}")


@pytest.fixture(scope="module")
def frames():
    return make_hospital(2000, random_state=0), make_hospital(N_PRIVATE,
                                                              random_state=1)


def _estimator(name, **overrides):
    verb, columns, value, params = CONFIGS[name]
    query = skattr.Query(verb, columns, value)
    return MECHANISMS[name](query=query, secret=SECRET,
                            **{**params, **overrides})


def test_every_mechanism_has_a_config():
    assert {cls.mechanism_name for _, cls in all_estimators()} == set(CONFIGS)


# ---------------------------------------------------------------------------
# Noise never shrinks as epsilon or delta shrinks.

def _plan_or_none(name, reference, **params):
    """The plan for N_PRIVATE records, or None when the mechanism refuses."""
    try:
        return _estimator(name, **params).fit(reference).plan(n=N_PRIVATE)
    except NotCertifiableError:
        return None


def _assert_no_less_noise(small, big, what):
    """``small`` (the stronger guarantee) adds at least ``big``'s noise."""
    tol = 1e-9
    assert small.expected_error >= big.expected_error * (1 - tol), what
    assert (np.trace(small.noise_covariance)
            >= np.trace(big.noise_covariance) * (1 - tol)), what
    if small.noise == big.noise == "laplace":
        assert small.noise_scale >= big.noise_scale * (1 - tol), what


# Checked on all 3 examples of every mechanism.
@pytest.mark.floors(checked=2)
@pytest.mark.parametrize("name", _searching_slow(sorted(CONFIGS)))
@PROPERTY_SETTINGS
@given(eps=st.lists(st.floats(0.05, 20.0), min_size=2, max_size=2, unique=True))
@pytest.mark.filterwarnings(
    "ignore:epsilon=.* lets an observer:skattr.exceptions.PrivacyLeakWarning")
def test_noise_never_shrinks_as_epsilon_shrinks(frames, name, eps):
    reference, _ = frames
    small_eps, big_eps = sorted(eps)
    small = _plan_or_none(name, reference, epsilon=small_eps)
    big = _plan_or_none(name, reference, epsilon=big_eps)
    if small is None:
        # Refusing the stronger guarantee is never less noise.
        return _count("epsilon monotone", "refused")
    assert big is not None, (
        f"{name} certifies epsilon={small_eps} but refuses {big_eps}")
    assert small.epsilon <= big.epsilon
    _assert_no_less_noise(small, big, f"{name}: epsilon {small_eps} vs {big_eps}")
    _count("epsilon monotone", "checked")


# Checked on all 3 examples of every mechanism.
@pytest.mark.floors(checked=2)
@pytest.mark.parametrize("name", _searching_slow(sorted(set(CONFIGS) - _NO_DELTA)))
@PROPERTY_SETTINGS
@given(log_delta=st.lists(st.floats(-9.0, -1.5), min_size=2, max_size=2,
                          unique=True),
       epsilon=st.sampled_from([0.3, 1.0, 4.0]))
@pytest.mark.filterwarnings(
    "ignore:delta=.* is at least 1/n:skattr.exceptions.PrivacyLeakWarning")
def test_noise_never_shrinks_as_delta_shrinks(frames, name, log_delta, epsilon):
    reference, _ = frames
    small_d, big_d = sorted(10.0 ** np.asarray(log_delta))
    small = _plan_or_none(name, reference, epsilon=epsilon, delta=small_d)
    big = _plan_or_none(name, reference, epsilon=epsilon, delta=big_d)
    if small is None:
        return _count("delta monotone", "refused")
    assert big is not None, f"{name} certifies delta={small_d} but refuses {big_d}"
    _assert_no_less_noise(small, big, f"{name}: delta {small_d} vs {big_d}")
    _count("delta monotone", "checked")


@pytest.mark.slow
@PROPERTY_SETTINGS
@given(eps=st.lists(st.floats(0.1, 10.0), min_size=2, max_size=2, unique=True))
def test_auto_noise_never_shrinks_as_epsilon_shrinks(frames, eps):
    _count("auto epsilon monotone", "checked")
    reference, private = frames
    small_eps, big_eps = sorted(eps)
    kw = dict(secret=SECRET, reference=reference, **_GAUSSIAN)
    small = private.attrpriv.plan(COLS, epsilon=small_eps, **kw)
    big = private.attrpriv.plan(COLS, epsilon=big_eps, **kw)
    _assert_no_less_noise(small, big, f"auto: {small.mechanism} at {small_eps}, "
                                      f"{big.mechanism} at {big_eps}")


# ---------------------------------------------------------------------------
# Releases never mutate their inputs.

def _assert_same_frame(after, before):
    pd.testing.assert_frame_equal(after, before, check_exact=True,
                                  check_index_type=True, check_column_type=True,
                                  check_categorical=True, check_flags=True)
    assert list(after.dtypes) == list(before.dtypes)
    assert after.attrs == before.attrs


def _odd_private(private):
    """The private data with the dtypes and index a caller may well have."""
    odd = private.copy()
    odd["gender"] = odd["gender"].astype(
        pd.CategoricalDtype(["female", "other", "unused"]))
    odd["height"] = odd["height"].astype("Float64")
    odd["temperature"] = odd["temperature"].round().astype("Int64")
    odd.index = pd.Index([f"p{i}" for i in range(len(odd))], name="patient")
    odd.attrs["source"] = "ward 3"
    return odd


_VERBS = {
    "mean": lambda d, **kw: d.attrpriv.mean(COLS, **kw),
    "sum": lambda d, **kw: d.attrpriv.sum(["temperature"], **kw),
    "count": lambda d, **kw: d.attrpriv.count(["height"], _tall, **kw),
    "proportion": lambda d, **kw: d.attrpriv.proportion(["height"], _tall, **kw),
    "median": lambda d, **kw: d.attrpriv.median(["weight"], **kw),
    "quantile": lambda d, **kw: d.attrpriv.quantile(["weight"], [0.25, 0.75],
                                                   monotone=True, **kw),
    "std": lambda d, **kw: d.attrpriv.std(["weight"], **kw),
    "plan": lambda d, **kw: d.attrpriv.plan(COLS, **{
        k: v for k, v in kw.items() if k != "random_state"}),
    "leakage": lambda d, **kw: d.attrpriv.leakage(
        COLS, secret=kw["secret"], reference=kw["reference"], law="gaussian",
        theta="moments"),
}


@pytest.fixture(scope="module")
def small_frames():
    # A small reference keeps the resampled laws of median and quantile fast.
    return make_hospital(300, random_state=0), make_hospital(40, random_state=1)


# Released (not refused) on all 3 examples.
@pytest.mark.slow
@pytest.mark.floors(checked=2)
@PROPERTY_SETTINGS
@given(verb=st.sampled_from(sorted(_VERBS)), odd=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_accessor_never_mutates_its_inputs(small_frames, verb, odd, seed):
    reference, private = small_frames
    if odd:
        private, reference = _odd_private(private), _odd_private(reference)
        reference.index = pd.RangeIndex(len(reference))
    secret = skattr.Secret.proportion("gender", "female", pairs=[[0.4, 0.6]])
    saved = copy.deepcopy((private, reference, secret))
    outcome = "checked"
    try:
        _VERBS[verb](private, secret=secret, reference=reference,
                     random_state=seed)
    except NotCertifiableError:
        outcome = "refused"     # a refusal must not mutate its inputs either
    _assert_same_frame(private, saved[0])
    _assert_same_frame(reference, saved[1])
    assert secret == saved[2] and repr(secret) == repr(saved[2])
    _count("no mutation (accessor)", outcome)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_estimators_never_mutate_their_inputs(frames, name):
    _count("no mutation (estimator)", "checked")
    reference, private = frames
    reference, private = _odd_private(reference), _odd_private(private)
    est = _estimator(name, random_state=0)
    saved = copy.deepcopy((private, reference, est.query, est.secret,
                           est.get_params(deep=False)))
    est.fit(reference)
    est.release(private)
    est.plan(private)
    est.transform(private)
    _assert_same_frame(private, saved[0])
    _assert_same_frame(reference, saved[1])
    assert repr(est.query) == repr(saved[2]) and est.secret == saved[3]
    assert repr(est.get_params(deep=False)) == repr(saved[4])


def test_ledger_never_mutates_its_inputs(frames):
    _count("no mutation (ledger)", "checked")
    reference, private = (_odd_private(f) for f in frames)
    saved = copy.deepcopy((private, reference, SECRET))
    ledger = private.attrpriv.ledger(secret=SECRET, reference=reference,
                                     budget=(3.0, 1e-3), law="gaussian",
                                     theta="moments", random_state=0)
    ledger.mean(["weight"], epsilon=1.0)
    ledger.mean(["blood_pressure"], epsilon=1.0)
    ledger.plan(["height"])
    _assert_same_frame(private, saved[0])
    _assert_same_frame(reference, saved[1])
    assert SECRET == saved[2]


# ---------------------------------------------------------------------------
# mechanism.release and the accessor agree under the same seed.

# Checked on all 3 examples of every mechanism.
@pytest.mark.floors(checked=2)
@pytest.mark.parametrize("name", _searching_slow(sorted(CONFIGS)))
@PROPERTY_SETTINGS
@given(seed=st.integers(0, 2**32 - 1), epsilon=st.floats(0.2, 8.0))
def test_release_and_accessor_agree_under_a_seed(frames, name, seed, epsilon):
    reference, private = frames
    verb, columns, value, params = CONFIGS[name]
    try:
        est = _estimator(name, epsilon=epsilon, random_state=seed).fit(reference)
        by_estimator = est.release(private)
    except NotCertifiableError:
        with pytest.raises(NotCertifiableError):
            getattr(private.attrpriv, verb)(
                columns, *([value] if value else []), secret=SECRET,
                reference=reference, mechanism=name, epsilon=epsilon,
                random_state=seed, **params)
        return _count("estimator == accessor", "refused")
    by_accessor = getattr(private.attrpriv, verb)(
        columns, *([value] if value else []), secret=SECRET, reference=reference,
        mechanism=name, epsilon=epsilon, random_state=seed, **params)
    pd.testing.assert_series_equal(by_accessor.values, by_estimator.values,
                                   check_exact=True)
    for field in ("mechanism", "epsilon", "delta", "expected_error",
                  "sensitivity", "assumptions", "theta", "n"):
        assert getattr(by_accessor, field) == getattr(by_estimator, field), field
    np.testing.assert_array_equal(by_accessor.noise_covariance,
                                  by_estimator.noise_covariance)
    _count("estimator == accessor", "checked")


# ---------------------------------------------------------------------------
# epsilon -> infinity gives the exact statistic.

def _exact(private, verb, columns, value):
    if verb == "count":
        return np.array([float(value(private[columns[0]]).sum())])
    return private[columns].agg(verb).to_numpy(dtype=float)


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("epsilon", [1e6, 1e12])
@pytest.mark.filterwarnings(
    "ignore:epsilon=.* lets an observer:skattr.exceptions.PrivacyLeakWarning")
def test_huge_epsilon_gives_the_exact_statistic(frames, name, epsilon):
    _count("epsilon -> infinity", "checked")
    reference, _ = frames
    private = make_hospital(120, random_state=1)
    verb, columns, value, _ = CONFIGS[name]
    rel = _estimator(name, epsilon=epsilon, random_state=0).fit(
        reference).release(private)
    exact = _exact(private, verb, columns, value)
    assert rel.epsilon == epsilon
    # The noise vanishes: Laplace scales go as 1/epsilon, the analytic
    # Gaussian's as 1/sqrt(epsilon) (Balle & Wang: sigma ~ Delta /
    # sqrt(2 epsilon)), or no noise is needed at all.
    sd = rel.noise_std
    at_one = _estimator(name, epsilon=1.0).fit(reference).plan(n=len(private))
    assert rel.expected_error <= at_one.expected_error * 10 / np.sqrt(epsilon)
    # ... and the release is the statistic, within the noise's reach and
    # float summation.
    err = np.abs(rel.values.to_numpy() - exact)
    assert np.all(err <= 10 * sd + 1e-9 * (1 + np.abs(exact))), (err, sd)


# ---------------------------------------------------------------------------
# Certificates do not depend on row order.

def _certificate(plan):
    return (plan.mechanism, plan.epsilon, plan.delta, plan.noise, plan.n,
            plan.calibration, plan.assumptions, plan.statistics)


# Checked on all 3 examples of every mechanism.
@pytest.mark.floors(checked=2)
@pytest.mark.parametrize("name", _searching_slow(sorted(CONFIGS)))
@PROPERTY_SETTINGS
@given(perm_seed=st.integers(0, 2**32 - 1))
def test_certificates_do_not_depend_on_row_order(frames, name, perm_seed):
    reference, private = frames
    rng = np.random.default_rng(perm_seed)
    shuffled_ref = reference.iloc[rng.permutation(len(reference))]
    shuffled_priv = private.iloc[rng.permutation(len(private))]
    try:
        est = _estimator(name, random_state=7).fit(reference)
    except NotCertifiableError:
        return _count("row order", "refused")
    plan, rel = est.plan(private), est.release(private)
    est2 = _estimator(name, random_state=7).fit(shuffled_ref)
    plan2, rel2 = est2.plan(shuffled_priv), est2.release(shuffled_priv)
    # What is stated is identical; the numbers computed from the reference's
    # moments are sums over its rows, which float addition makes depend on
    # their order in the last bits (the rows of a sum are not reordered to be
    # exact): equal within 1e-9 relative.
    assert _certificate(plan2) == _certificate(plan)
    for a, b in ((plan, plan2), (rel, rel2)):
        np.testing.assert_allclose(b.noise_covariance, a.noise_covariance,
                                   rtol=1e-9, atol=1e-300)
        assert b.expected_error == pytest.approx(a.expected_error, rel=1e-9,
                                                 abs=1e-300)
        assert b.sensitivity == pytest.approx(a.sensitivity, rel=1e-9,
                                              abs=1e-300)
    # Under one seed the same noise is drawn, so the releases differ only by
    # the summation order of the private statistic.
    np.testing.assert_allclose(rel2.values.to_numpy(), rel.values.to_numpy(),
                               rtol=1e-9)
    _count("row order", "checked")


@pytest.mark.parametrize("verb", ["mean",
                                  pytest.param("median", marks=pytest.mark.slow)])
def test_default_theta_certificate_does_not_depend_on_row_order(small_frames,
                                                                verb):
    # theta="auto" adds bootstrap replicates (the mean) or resampled laws (the
    # median) of the reference, drawn from random_state: the bootstrap draws
    # each group's records in a canonical order, so a permutation of the
    # reference's rows draws the same replicates.
    _count("row order (theta='auto')", "checked")
    reference, private = small_frames
    shuffled = reference.iloc[np.random.default_rng(0).permutation(len(reference))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plans = [private.attrpriv.plan(
            ["weight"], statistic=verb, secret=SECRET, reference=ref,
            random_state=0) for ref in (reference, shuffled)]
    assert _certificate(plans[0]) == _certificate(plans[1])
    assert plans[1].expected_error == pytest.approx(plans[0].expected_error,
                                                    rel=1e-9)


def test_errors_are_skattr_errors():
    # The properties above catch NotCertifiableError only: a refusal of
    # another kind would be reported, not hidden.
    assert issubclass(NotCertifiableError, SkattrError)


# ---------------------------------------------------------------------------
# Regressions found by the properties above (epsilon -> infinity).

def _separated_groups(n, gap, rng):
    """Two secret groups whose means differ by ``gap`` with unequal spreads."""
    g = rng.random(n) < 0.5
    return pd.DataFrame({
        "g": np.where(g, "a", "b"),
        "x": np.where(g, rng.normal(0, 1, n), rng.normal(gap, 3, n)),
        "y": np.where(g, rng.normal(0, 1, n), rng.normal(gap, 2, n))})


def test_exact_profile_takes_an_epsilon_beyond_709():
    # math.exp(epsilon) overflowed (OverflowError, not a skattr error) once
    # epsilon passed 709; e^700 stands in for it, on the certified side.
    from skattr.calibration._gaussian import gaussian_pair_delta
    from skattr.calibration._profile_estimate import estimate_pairs_delta
    from skattr.calibration._quadratic_loss import multivariate_gaussian_pair_delta

    diff, cov_b = np.array([40.0, 20.0]), np.diag([1.1, 0.9])
    for epsilon in (709.0, 800.0, 1e6):
        delta = multivariate_gaussian_pair_delta(np.zeros(2), np.eye(2), diff,
                                                 cov_b, epsilon)
        assert 0.0 <= delta <= 1.0
        # The first statistic alone is post-processing: a lower bound.
        assert delta >= float(gaussian_pair_delta(0.0, 1.0, 40.0, 1.1, epsilon))
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            assert np.isfinite(estimate_pairs_delta(
                diff[None], np.eye(2)[None], cov_b[None], epsilon)).all()


def test_leakage_beyond_709_is_a_number():
    # The raw means of two well separated groups leak more than epsilon = 709:
    # leakage raised OverflowError (math.exp) instead of returning it.
    from skattr.calibration._gaussian import gaussian_pair_epsilon

    rng = np.random.default_rng(0)
    reference, private = (_separated_groups(n, 5.0, rng) for n in (2000, 400))
    secret = skattr.Secret.proportion("g", "a", pairs=[(0.1, 0.9)])
    eps = private.attrpriv.leakage(["x", "y"], secret=secret, reference=reference,
                                   law="gaussian", theta="moments", delta=1e-3)
    est = skattr.mechanisms.AttributePrivateGaussian(
        query=skattr.Query.mean(["x"]), secret=secret, law="gaussian",
        theta="moments").fit(reference)
    laws = est._prepare(est._laws(len(private))[0])[0]
    alone = max(gaussian_pair_epsilon(0.0, laws.cov_a[i, 0, 0],
                                      laws.mean_diff[i, 0],
                                      laws.cov_b[i, 0, 0], 1e-3)
                for i in range(len(laws.mean_diff)))
    assert 709 < alone <= eps < np.inf


def test_bracketed_epsilon_search_ignores_an_infinite_bracket():
    # raw_leakage_epsilon brackets the search by the Renyi epsilon, which is
    # inf for far-apart laws: QUADPACK's QAWF was then called at an infinite
    # frequency and crashed the interpreter (segmentation fault).
    from skattr.calibration._quadratic_loss import (
        multivariate_gaussian_pair_epsilon,
    )

    law = (np.zeros(2), np.eye(2), np.array([1.0, 0.5]), np.diag([1.1, 0.9]))
    assert multivariate_gaussian_pair_epsilon(
        *law, 1e-3, bracket=(0.5, np.inf)) == multivariate_gaussian_pair_epsilon(
        *law, 1e-3)


@pytest.mark.filterwarnings(
    "ignore:epsilon=.* lets an observer:skattr.exceptions.PrivacyLeakWarning")
def test_far_apart_groups_are_not_released_without_noise():
    # Found by this file: the Gil-Pelaez integrand's frequency is in the
    # millions here, and QUADPACK returned a wrong tail with a small error
    # estimate (a pair the first statistic alone reveals, certified with no
    # noise at epsilon = 20). LossLaw.sf now keeps every tail within
    # Chernoff bounds and breaks the head integral at multiples of 1 / sd.
    from skattr.calibration._gaussian import gaussian_pair_delta

    rng = np.random.default_rng(0)
    reference = _separated_groups(2000, 500.0, rng)
    secret = skattr.Secret.proportion("g", "a", pairs=[(0.1, 0.9)])
    est = skattr.mechanisms.AttributePrivateGaussian(
        query=skattr.Query.mean(["x", "y"]), secret=secret, law="gaussian",
        theta="moments", epsilon=20.0).fit(reference)
    plan = est.plan(n=400)
    laws = est._prepare(est._laws(400)[0])[0]
    v = plan.noise_covariance[0, 0]
    # The delta of the first statistic alone, a lower bound of the pair's.
    lower = max(float(gaussian_pair_delta(
        0.0, laws.cov_a[i, 0, 0] + v, laws.mean_diff[i, 0],
        laws.cov_b[i, 0, 0] + v, plan.epsilon)) for i in range(len(laws.mean_diff)))
    assert lower <= plan.delta


@pytest.mark.xfail(strict=True, reason=(
    "Not a privacy bug (always more noise, never less), but noise is not "
    "monotone in epsilon at very large epsilon: the batched profile "
    "estimate (_profile_estimate) is off by up to 1 in delta when epsilon "
    "is in the millions (its fixed Gauss-Legendre grid cannot follow the "
    "oscillation), and the search it steers overshoots; the exact check "
    "accepts the overshoot. apgm, 60 records: no noise at epsilon 1e6, "
    "sd 0.027 at 1e8."))
def test_noise_never_grows_with_a_huge_epsilon(frames):
    reference, _ = frames
    stds = [_estimator("apgm", epsilon=eps).fit(reference).plan(
        n=N_PRIVATE).noise_std.max() for eps in (1e6, 1e8)]
    assert stds[1] <= stds[0]


# ---------------------------------------------------------------------------
# The campaign: the same properties, the mechanism drawn too, many examples.

_inner = {
    "epsilon": test_noise_never_shrinks_as_epsilon_shrinks.hypothesis.inner_test,
    "delta": test_noise_never_shrinks_as_delta_shrinks.hypothesis.inner_test,
    "agree": test_release_and_accessor_agree_under_a_seed.hypothesis.inner_test,
    "order": test_certificates_do_not_depend_on_row_order.hypothesis.inner_test,
}


# Checked on all 30 examples.
@pytest.mark.filterwarnings(
    "ignore:epsilon=.* lets an observer:skattr.exceptions.PrivacyLeakWarning")
@pytest.mark.slow
@pytest.mark.floors(checked=15)
@CAMPAIGN_SETTINGS
@given(name=st.sampled_from(sorted(CONFIGS)),
       eps=st.lists(st.floats(0.01, 100.0), min_size=2, max_size=2, unique=True))
def test_campaign_noise_never_shrinks_as_epsilon_shrinks(frames, name, eps):
    _inner["epsilon"](frames, name, eps)


# Checked on all 30 examples.
@pytest.mark.filterwarnings(
    "ignore:epsilon=.* lets an observer:skattr.exceptions.PrivacyLeakWarning")
@pytest.mark.filterwarnings(
    "ignore:delta=.* is at least 1/n:skattr.exceptions.PrivacyLeakWarning")
@pytest.mark.slow
@pytest.mark.floors(checked=15)
@CAMPAIGN_SETTINGS
@given(name=st.sampled_from(sorted(set(CONFIGS) - _NO_DELTA)),
       log_delta=st.lists(st.floats(-12.0, -1.0), min_size=2, max_size=2,
                          unique=True),
       epsilon=st.floats(0.05, 20.0))
def test_campaign_noise_never_shrinks_as_delta_shrinks(frames, name, log_delta,
                                                       epsilon):
    _inner["delta"](frames, name, log_delta, epsilon)


# Checked on all 30 examples.
@pytest.mark.filterwarnings(
    "ignore:epsilon=.* lets an observer:skattr.exceptions.PrivacyLeakWarning")
@pytest.mark.slow
@pytest.mark.floors(checked=15)
@CAMPAIGN_SETTINGS
@given(name=st.sampled_from(sorted(CONFIGS)), seed=st.integers(0, 2**32 - 1),
       epsilon=st.floats(0.05, 50.0))
def test_campaign_release_and_accessor_agree(frames, name, seed, epsilon):
    _inner["agree"](frames, name, seed, epsilon)


# Checked on all 30 examples.
@pytest.mark.slow
@pytest.mark.floors(checked=15)
@CAMPAIGN_SETTINGS
@given(name=st.sampled_from(sorted(CONFIGS)), perm_seed=st.integers(0, 2**32 - 1))
def test_campaign_certificates_do_not_depend_on_row_order(frames, name,
                                                          perm_seed):
    _inner["order"](frames, name, perm_seed)
