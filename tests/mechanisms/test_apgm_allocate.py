"""``allocate=``: how Gaussian noise over the bands is shared among the values.

"error" (the default) takes the least total variance; "relative" gives each
value an sd in proportion to its value in the reference (a sum or count at
the n released); an array, in proportion to those public numbers. The
guarantee is the same in every case: each plan is checked against the joint
certificate's own delta at its scales.
"""

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.calibration._joint_coupled import joint_gaussian_delta
from skattr.datasets import make_hospital
from skattr.exceptions import InvalidParameterError, NotCertifiableError

COLUMNS = ["height", "weight", "blood_pressure"]
SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
N = 200


@pytest.fixture(scope="module")
def frames():
    return make_hospital(N, random_state=1), make_hospital(1500, random_state=0)


def _fit(reference, query=None, **params):
    return skattr.mechanisms.AttributePrivateGaussian(
        query=query or skattr.Query.mean(COLUMNS), secret=SECRET, epsilon=1.0,
        delta=1e-3, **params).fit(reference)


def _sd(mech):
    return np.sqrt(np.diag(mech.plan(n=N).noise_covariance))


def _certified(mech):
    """The joint delta of the plan's own scales, under its law: within delta."""
    per_pair = mech.law_.coupled_distances(N, "dataset")
    return joint_gaussian_delta(per_pair, _sd(mech), mech.epsilon)


def test_the_plan_records_how_its_noise_was_shared(frames):
    _, reference = frames
    said = {"relative": "each one's value in the reference data",
            (1.0, 2.0, 3.0): "public numbers the release was given"}
    for allocate, words in said.items():
        plan = _fit(reference, allocate=allocate).plan(n=N)
        assert plan.certified_by.uses("noise.allocated")
        assert words in plan.method
    assert not _fit(reference).plan(n=N).certified_by.uses("noise.allocated")


def test_relative_noise_follows_the_reference_values(frames):
    _, reference = frames
    mech = _fit(reference, allocate="relative")
    values = reference[COLUMNS].clip(  # the robust range clips nothing here
        *np.array(mech.clipping_.ranges)[:, 1:].T.astype(float)).mean()
    np.testing.assert_allclose(mech.reference_values_, values.to_numpy(),
                               rtol=1e-12)
    sd = _sd(mech)
    np.testing.assert_allclose(sd / mech.reference_values_,
                               sd[0] / mech.reference_values_[0], rtol=1e-9)
    assert _certified(mech) <= 1e-3


def test_an_array_sets_the_ratios_and_error_is_the_least_total_variance(frames):
    _, reference = frames
    shares = [1.0, 10.0, 2.0]
    given = _sd(_fit(reference, allocate=shares))
    np.testing.assert_allclose(given / shares, given[0], rtol=1e-9)
    least = _fit(reference)
    relative = _fit(reference, allocate="relative")
    # Each allocation is certified at the same guarantee; "error" spends the
    # least total variance of the three.
    for mech in (least, relative, _fit(reference, allocate=shares)):
        assert _certified(mech) <= 1e-3
    assert np.sum(_sd(least) ** 2) < np.sum(given ** 2)
    assert np.sum(_sd(least) ** 2) < np.sum(_sd(relative) ** 2)


def test_a_sum_and_a_count_are_scaled_to_the_n_released(frames):
    _, reference = frames
    query = skattr.Query.mean("height") + skattr.Query.sum("weight")
    mech = _fit(reference, query=query, allocate="relative")
    sd = _sd(mech)
    rows = len(reference)
    mean_height, total_weight = mech.reference_values_
    assert total_weight == pytest.approx(
        reference["weight"].clip(*mech.clipping_.ranges[1][1:]).sum())
    # The sum's target is its expected value at the n released.
    np.testing.assert_allclose(sd[1] / sd[0],
                               (total_weight * N / rows) / mean_height,
                               rtol=1e-9)


def test_auto_takes_apgm_for_an_allocation(frames):
    private, reference = frames
    release = private.attrpriv.mean(COLUMNS, secret=SECRET,
                                    reference=reference, epsilon=1.0,
                                    allocate=[1, 10, 1], random_state=0)
    assert release.mechanism == "apgm"
    sd = np.asarray(release.noise_std)
    np.testing.assert_allclose(sd / [1, 10, 1], sd[0], rtol=1e-9)


@pytest.mark.parametrize("bad", ["rel", [0, 1, 1], [1, np.nan, 1], [[1, 2, 3]],
                                 [], 3.0, [True, True, True],
                                 pd.Series([1.0, -1.0, 1.0])])
def test_a_bad_allocation_is_refused_before_any_fit(frames, bad):
    private, reference = frames
    with pytest.raises(InvalidParameterError, match="allocate"):
        private.attrpriv.mean(COLUMNS, secret=SECRET, reference=reference,
                              mechanism="apgm", allocate=bad)


def test_an_allocation_of_another_length_is_refused_naming_the_values(frames):
    _, reference = frames
    with pytest.raises(InvalidParameterError,
                       match=r"2 number\(s\).*3 value\(s\) \(height, weight"):
        _fit(reference, allocate=[1, 2])


def test_a_value_of_zero_in_the_reference_is_refused(frames):
    _, reference = frames
    reference = reference.assign(offset=np.tile([-1.0, 1.0], len(reference) // 2))
    with pytest.raises(InvalidParameterError, match="offset is 0 there"):
        _fit(reference, query=skattr.Query.mean(["height", "offset"]),
             allocate="relative")


def test_a_law_of_one_variance_refuses_an_allocation(frames):
    private, reference = frames
    with pytest.raises(InvalidParameterError, match="adds one variance"):
        private.attrpriv.mean(COLUMNS, secret=SECRET, reference=reference,
                              law="gaussian", allocate="relative")


def test_an_allocation_set_after_fit_asks_for_fit_again(frames):
    _, reference = frames
    mech = _fit(reference, allocate="relative")
    mech.set_params(allocate=[1.0, 1.0, 1.0])
    with pytest.raises(InvalidParameterError, match="call fit again"):
        mech.plan(n=N)
    mech.fit(reference)
    sd = _sd(mech)
    np.testing.assert_allclose(sd, sd[0], rtol=1e-9)
    # A change the plans' keys (reprs) would round is refused too.
    mech.set_params(allocate=np.array([1.0, 1.0, 1.0 + 1e-12]))
    with pytest.raises(InvalidParameterError, match="call fit again"):
        mech.plan(n=N)


def test_a_ledger_takes_apgm_for_an_allocation(frames):
    private, reference = frames
    ledger = private.attrpriv.ledger(secret=SECRET, reference=reference,
                                     budget=(2.0, 1e-3), random_state=0)
    release = ledger.mean(COLUMNS, epsilon=1.0, allocate="relative")
    assert release.mechanism == "apgm"
    sd = np.asarray(release.noise_std)
    values = reference[COLUMNS].mean().to_numpy()
    np.testing.assert_allclose(sd / values, sd[0] / values[0], rtol=1e-3)
    assert ledger.spent[0] <= 1.0 + 1e-9


def test_describe_refuses_another_allocation_before_any_release(frames):
    private, reference = frames
    for bad, says in (
            ("rel", "'error'.*'relative'.*each described column"),
            ([1, 2], "'error'.*'relative'.*a list in the columns' order"),
            ({"height": 1.0, "weight": 2.0},
             r"It names no scale for \['blood_pressure'\]"),
            ({"height": 1.0, "weight": 2.0, "blood_pressure": 0.0},
             r"gives column 'blood_pressure' the scale 0\.0; .*replace\(0, 1\)"),
            ([1, -1, 1], "gives column 'weight' the scale -1")):
        with pytest.raises(InvalidParameterError, match=says):
            private.attrpriv.describe(COLUMNS, secret=SECRET,
                                      reference=reference, allocate=bad)
    # A list in the columns' order, or a Series of more columns (every
    # column's spread), is read as a scale per described column.
    from skattr._describe import _column_scales

    assert _column_scales([1, 2, 3], COLUMNS) == [1.0, 2.0, 3.0]
    spread = reference.std(numeric_only=True)
    assert len(spread) > len(COLUMNS)
    assert _column_scales(spread, COLUMNS) == spread[COLUMNS].tolist()
    of_mean = skattr.Secret.mean("weight", pairs=[(70, 80)])
    with pytest.raises(InvalidParameterError, match="Drop allocate"):
        private.attrpriv.describe(["height"], secret=of_mean,
                                  reference=reference, allocate="relative")


@pytest.mark.slow
def test_describe_relative_gives_every_cell_of_a_release_one_relative_sd(frames):
    private, reference = frames
    found = private.attrpriv.describe(COLUMNS, secret=SECRET,
                                      reference=reference, epsilon=4.0,
                                      allocate="relative", random_state=0)
    for row in ("mean", "25%", "50%", "75%"):
        public = (reference[COLUMNS].mean() if row == "mean" else
                  reference[COLUMNS].quantile(float(row[:-1]) / 100))
        ratio = found.noise_std.loc[row] / public
        np.testing.assert_allclose(ratio, ratio.iloc[0], rtol=0.02)
    assert found.ledger.spent[0] <= 4.0 * (1 + 1e-9)
    assert isinstance(found.table, pd.DataFrame)


def test_a_series_named_by_the_values_is_read_by_name(frames):
    _, reference = frames
    shares = pd.Series({"weight": 10.0, "blood_pressure": 2.0, "height": 1.0})
    sd = _sd(_fit(reference, allocate=shares))
    np.testing.assert_allclose(sd / [1.0, 10.0, 2.0], sd[0], rtol=1e-9)
    # Positions, when the index is 0..K-1; other names are refused.
    sd = _sd(_fit(reference, allocate=pd.Series([1.0, 10.0, 2.0])))
    np.testing.assert_allclose(sd / [1.0, 10.0, 2.0], sd[0], rtol=1e-9)
    with pytest.raises(InvalidParameterError, match="name the values"):
        _fit(reference, allocate=pd.Series({"a": 1.0, "b": 1.0, "c": 1.0}))
    # A dict by name (only).
    sd = _sd(_fit(reference, allocate={"blood_pressure": 2.0, "height": 1.0,
                                       "weight": 10.0}))
    np.testing.assert_allclose(sd / [1.0, 10.0, 2.0], sd[0], rtol=1e-9)
    with pytest.raises(InvalidParameterError, match="name the values"):
        _fit(reference, allocate={0: 1.0, 1: 10.0, 2: 2.0})


def test_one_value_takes_any_allocation_as_nothing_to_share(frames):
    private, reference = frames
    # A mean alone (a box law, not the bands'), a median alone: no refusal,
    # the noise of the default; a wrong length is still refused.
    for verb in ("mean", "median"):
        default = getattr(private.attrpriv, verb)(
            "height", secret=SECRET, reference=reference, mechanism="apgm",
            random_state=0)
        for allocate in ("relative", [3.0]):
            given = getattr(private.attrpriv, verb)(
                "height", secret=SECRET, reference=reference,
                mechanism="apgm", allocate=allocate, random_state=0)
            np.testing.assert_array_equal(given.noise_std, default.noise_std)
    with pytest.raises(InvalidParameterError, match="2 number"):
        private.attrpriv.mean("height", secret=SECRET, reference=reference,
                              mechanism="apgm", allocate=[1.0, 2.0])


def test_ratios_beyond_floating_point_are_refused_saying_so(frames):
    _, reference = frames
    with pytest.raises(InvalidParameterError, match="span 1e"):
        _fit(reference, allocate=[1.0, 1e300, 1.0])


def test_a_lopsided_allocation_warns_naming_the_value(frames):
    _, reference = frames
    with pytest.warns(UserWarning, match="gives height more than 10 sqrt.K. "
                                         "times the noise it needs alone"):
        _sd(_fit(reference, allocate=[1.0, 1e-4, 1.0]))
    # A balanced one does not.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        _sd(_fit(reference, allocate="relative"))


def test_a_ledger_takes_the_default_allocation_named(frames):
    private, reference = frames
    ledger = private.attrpriv.ledger(secret=SECRET, reference=reference,
                                     budget=(2.0, 1e-3), random_state=0)
    release = ledger.mean(COLUMNS, epsilon=0.5, allocate="error")
    assert release.mechanism == "approx-wasserstein"   # the ledger's default


def test_a_ledger_s_auto_takes_apgm_for_an_allocation_or_says_to_drop_it(frames):
    private, reference = frames
    ledger = private.attrpriv.ledger(secret=SECRET, reference=reference,
                                     budget=(3.0, 1e-3), random_state=0)
    release = ledger.median("height", epsilon=0.5, mechanism="auto",
                            allocate="relative")
    assert release.mechanism == "apgm"
    stated = private.attrpriv.ledger(secret=SECRET, reference=reference,
                                     budget=(3.0, 1e-3), law="gaussian",
                                     random_state=0)
    with pytest.raises(NotCertifiableError,
                       match="drop mechanism= and allocate="):
        stated.quantile("height", [0.25, 0.75], epsilon=0.5,
                        mechanism="auto", allocate="relative")
    assert not stated.releases


@pytest.mark.slow
def test_describe_takes_a_public_scale_per_column(frames):
    # The reference's standard deviations: each cell's sd in proportion to
    # its column's, in both releases (the means and the quartiles).
    private, reference = frames
    spread = reference[COLUMNS].std()
    found = private.attrpriv.describe(COLUMNS, secret=SECRET,
                                      reference=reference, epsilon=4.0,
                                      allocate=spread, random_state=0)
    for row in ("mean", "25%", "50%", "75%"):
        ratio = found.noise_std.loc[row] / spread
        np.testing.assert_allclose(ratio, ratio.iloc[0], rtol=1e-6)
    assert found.ledger.spent[0] <= 4.0 * (1 + 1e-9)


@pytest.mark.parametrize("mechanism, says", [
    (None, "mechanism='auto' does not fit apgm for this statistic"),
    ("approx-wasserstein",
     "mechanism='approx-wasserstein' does not share its noise")])
def test_an_allocation_where_no_gaussian_noise_is_shared_says_pass_apgm(
        mechanism, says):
    # One median: auto takes Laplace noise (the less there), so an
    # allocation names what to do rather than blaming mechanism='auto'.
    private = make_hospital(200, random_state=1)
    reference = make_hospital(2000, random_state=0)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    given = {} if mechanism is None else {"mechanism": mechanism}
    with pytest.raises(InvalidParameterError,
                       match=f"allocate= shares Gaussian noise .*{says}.* "
                             "Pass mechanism='apgm' with it, or drop allocate="):
        private.attrpriv.median(["weight"], secret=secret, reference=reference,
                                allocate="relative", **given)
