"""Certificates against the population the reference was sampled from (issue 27).

A user's reference data is a sample. These tests draw many references from a
known population, plan the default release on each, and compute the release's
true privacy against the population's law, with code that shares nothing with
skattr: the exact law of a count (two binomials), convolved with the plan's
noise on a fine grid. A certificate is false when the true delta at the
certified epsilon exceeds the certified delta by more than 10%.

A count's default Theta is the reference's confidence box (``ConfidenceBox``,
0.999), certified through the swap coupling; the tests check it, and the
box under the Wasserstein mechanism, against the population. A sum's or
mean's, and a median's, are the reference's confidence bands
(``ConfidenceBand``): checked against the exact law of the population's sum
(convolutions) and of its median (binomial sums), with the plan's noise.
"""

import numpy as np
import pandas as pd
import pytest
from _oracle import order_statistic_cdf
from scipy import stats

import skattr


def _noisy_density(pmfs, noise, scale, grid):
    """Densities (or pmfs, without noise) of count + noise on ``grid``.

    ``pmfs`` is (n + 1, m): m count laws, which share one kernel matrix.
    """
    support = np.arange(pmfs.shape[0])
    if scale == 0:
        return pmfs
    # The densities written out (scipy's formulas, without its per-call
    # argument checks), in place: the 40,001 x (n + 1) kernel is the cost.
    z = np.subtract.outer(grid, support)
    z /= scale
    if noise == "laplace":
        np.abs(z, out=z)
        np.negative(z, out=z)
        norm = 2.0 * scale
    else:
        np.square(z, out=z)
        z /= -2.0
        norm = np.sqrt(2 * np.pi) * scale
    np.exp(z, out=z)
    return (z @ pmfs) / norm


def _true_delta(pmf_a, pmf_b, noise, scale, epsilon):
    """The hockey-stick divergence of the two noisy laws, both ways."""
    if scale == 0:
        return max(np.maximum(0, pmf_a - np.exp(epsilon) * pmf_b).sum(),
                   np.maximum(0, pmf_b - np.exp(epsilon) * pmf_a).sum())
    n = pmf_a.size - 1
    grid = np.linspace(-40 * scale, n + 40 * scale, 40_001)
    step = grid[1] - grid[0]
    p, q = _noisy_density(np.column_stack([pmf_a, pmf_b]), noise, scale,
                          grid).T
    return max(np.maximum(0, p - np.exp(epsilon) * q).sum() * step,
               np.maximum(0, q - np.exp(epsilon) * p).sum() * step)


def _count_pmf(k, n, p_in, p_out):
    """Law of Bin(k, p_in) + Bin(n - k, p_out), by convolution."""
    return np.convolve(stats.binom.pmf(np.arange(k + 1), k, p_in),
                       stats.binom.pmf(np.arange(n - k + 1), n - k, p_out))


# (P(counted | in the group), P(counted | outside), reference records per
# group, n, pair): the two rare-value settings, where the reference
# often holds no 1 and 0.2 released the count with no noise; a structural
# zero (nothing outside the group is ever counted) with an all-ones group; a
# common value; and tiny, unequal groups.
COUNT_SETTINGS = {
    "rare, 10 + 10": (0.10, 0.02, (10, 10), 100, (0.4, 0.6)),
    "rare, 30 + 30": (0.03, 0.0, (30, 30), 200, (0.4, 0.6)),
    "point masses": (1.0, 0.0, (12, 40), 60, (0.25, 0.75)),
    "common": (0.55, 0.45, (200, 200), 400, (0.45, 0.55)),
    "tiny, unequal": (0.5, 0.1, (10, 60), 50, (0.1, 0.3)),
}


@pytest.mark.slow
@pytest.mark.parametrize("setting", sorted(COUNT_SETTINGS))
def test_the_default_count_holds_for_the_population(setting):
    # 100 references drawn from the population; the default plan (any
    # mechanism "auto" picks) on each; its true delta at its epsilon from the
    # population's exact count laws. The certificate states it holds with
    # probability 0.999 over the reference: among 100 draws, two false ones
    # would have probability below 5e-3 if it did.
    p_in, p_out, sizes, n, pairs = COUNT_SETTINGS[setting]
    rng = np.random.default_rng(2027)
    secret = skattr.Secret.proportion("g", 1, pairs=[pairs])
    laws = [_count_pmf(round(a * n), n, p_in, p_out) for a in pairs]
    draws, false, released = 100, 0, 0
    g = np.repeat([1, 0], sizes)
    truth = {}          # references with the same counts plan the same noise
    for _ in range(draws):
        x = (rng.random(g.size) < np.where(g == 1, p_in, p_out)).astype(int)
        reference = pd.DataFrame({"g": g, "x": x})
        private = reference.sample(n, replace=True, random_state=0)
        plan = private.attrpriv.plan(["x"], statistic="count", value=1,
                                     secret=secret, reference=reference)
        released += 1
        assert plan.assumes("reference.sample")
        scale = (plan.noise_scale if plan.noise == "laplace" else
                 float(np.sqrt(plan.noise_covariance[0, 0])))
        assert scale > 0, "a count is never certified noiseless from a sample"
        key = (plan.noise, scale, plan.epsilon)
        if key not in truth:
            truth[key] = _true_delta(*laws, *key)
        delta = truth[key]
        assert plan.epsilon <= 1.0 * (1 + 1e-9)
        # 1e-9: the grid's integration error (a certificate at delta = 0 is
        # computed at about 1e-15 when it is exact).
        false += delta > plan.delta * (1 + 1e-6) + 1e-9
    assert released == draws          # the default refuses none of these
    assert false <= 1, f"{false} of {draws} certificates are false"


@pytest.mark.slow
def test_the_default_count_is_not_far_noisier_than_the_plug_in():
    # The population-valid default costs noise over the plug-in (which is
    # false a third of the time in the settings above): with 2,000 records a
    # group, n = 1,000, it was measured at 2.5x the plug-in's expected error
    # (48 against 19, both approx-wasserstein: the box widens the groups'
    # gap from 0.10 to 0.17, and the swap coupling's spread adds the rest).
    # A floor, so that the default does not drift noisier unseen.
    rng = np.random.default_rng(5)
    g = np.repeat([1, 0], 2000)
    x = (rng.random(4000) < np.where(g == 1, 0.3, 0.2)).astype(int)
    reference = pd.DataFrame({"g": g, "x": x})
    private = reference.sample(1000, replace=True, random_state=0)
    secret = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
    kw = dict(statistic="count", value=1, secret=secret, reference=reference)
    default = private.attrpriv.plan(["x"], **kw)
    plug_in = private.attrpriv.plan(["x"], theta="moments", **kw)
    assert default.expected_error <= 2.75 * plug_in.expected_error


@pytest.mark.slow
def test_a_confidence_box_count_holds_for_the_population():
    # theta=ConfidenceBox() under the pure Wasserstein mechanism: W over the
    # reference's simultaneous Clopper-Pearson box (the swap coupling's cap)
    # holds for the population (at 0.999 over the reference), a value the
    # reference never shows included. The plug-in (theta="moments") on the
    # same references is false about a third of the time: the check can tell.
    rng = np.random.default_rng(27)
    p_in, p_out, n, pairs = 0.10, 0.02, 20, (0.4, 0.6)
    secret = skattr.Secret.proportion("g", 1, pairs=[pairs])
    laws = [_count_pmf(round(a * n), n, p_in, p_out) for a in pairs]
    draws, false, plug_in_false = 30, 0, 0
    for _ in range(draws):
        g = np.repeat([1, 0], 10)
        x = (rng.random(20) < np.where(g == 1, p_in, p_out)).astype(int)
        reference = pd.DataFrame({"g": g, "x": x})
        for theta in ("moments", skattr.theta.ConfidenceBox()):
            plan = skattr.mechanisms.WassersteinMechanism(
                query=skattr.Query.count("x", 1), secret=secret,
                theta=theta).fit(reference).plan(n=n)
            assert plan.delta == 0
            wrong = _true_delta(*laws, "laplace", plan.noise_scale,
                                plan.epsilon) > 1e-9
            if theta == "moments":
                plug_in_false += wrong
            else:
                assert plan.assumes("reference.sample")
                false += wrong
    assert plug_in_false >= 5
    assert false == 0, f"{false} of {draws} certificates are false"


def test_a_value_the_reference_never_shows_is_not_a_probability_of_0():
    from skattr.theta import ConfidenceBox

    box = ConfidenceBox(confidence=0.999).box(
        counted=np.zeros(20, bool), inside=np.repeat([True, False], 10))
    # No 1 in 10 records: the population's share may still be up to
    # 1 - (0.00025)^(1/10) = 0.56 (exact, one-sided at alpha / 4).
    assert box.low == (0.0, 0.0)
    np.testing.assert_allclose(box.high, 1 - 0.00025 ** 0.1, rtol=1e-9)
    with pytest.raises(skattr.exceptions.InvalidParameterError,
                       match="probability in"):
        ConfidenceBox(confidence=1.0)


# Sums and means of a bounded column under the default Theta, the
# reference's confidence bands (theta=ConfidenceBand(0.999)): (name,
# values, law outside the group, law inside, reference records per group, n,
# pair). The truth: the exact law of the sum of the population's records (k
# from one law, n - k from the other, by convolution), plus the plan's noise.
_GEOMETRIC = 0.8 ** np.arange(21)
SUM_SETTINGS = {
    "shifted": (np.arange(11), stats.binom.pmf(np.arange(11), 10, 0.3),
                stats.binom.pmf(np.arange(11), 10, 0.4), (200, 200), 100,
                (0.4, 0.6)),
    "equal means": (np.arange(11),
                    np.r_[0.5, np.zeros(9), 0.5],
                    stats.binom.pmf(np.arange(11), 10, 0.5), (300, 300), 60,
                    (0.25, 0.75)),
    "heavy, clipped": (np.arange(21), _GEOMETRIC / _GEOMETRIC.sum(),
                       np.r_[np.zeros(20), 1.0] * 0.05
                       + 0.95 * _GEOMETRIC / _GEOMETRIC.sum(), (100, 400), 80,
                       (0.4, 0.6)),
    "point masses": (np.arange(6), np.r_[1.0, np.zeros(5)],
                     np.r_[np.zeros(5), 1.0], (30, 30), 40, (0.45, 0.55)),
}


def _true_delta_on_grid(pmf_a, pmf_b, noise, scale, epsilon, per_unit=20):
    """The hockey-stick divergence of a lattice law plus noise, both ways.

    The pmfs live on 0, 1, ...; the noisy densities are computed on a grid
    of ``per_unit`` points per unit by FFT convolution with the noise's
    density (scipy), integrated by the trapezoid rule.
    """
    from scipy import signal

    if scale == 0:
        # No noise: the lattice laws' own hockey-stick divergence, exactly.
        size = max(pmf_a.size, pmf_b.size)
        p, q = (np.pad(pmf, (0, size - pmf.size)) for pmf in (pmf_a, pmf_b))
        return max(np.maximum(0, p - np.exp(epsilon) * q).sum(),
                   np.maximum(0, q - np.exp(epsilon) * p).sum())
    h = 1.0 / per_unit
    reach = int(np.ceil(40 * scale / h))
    kernel_x = np.arange(-reach, reach + 1) * h
    kernel = (stats.laplace(scale=scale) if noise == "laplace" else
              stats.norm(scale=scale)).pdf(kernel_x)
    out = []
    for pmf in (pmf_a, pmf_b):
        spikes = np.zeros((pmf.size - 1) * per_unit + 1)
        spikes[::per_unit] = pmf
        out.append(np.clip(signal.fftconvolve(spikes, kernel), 0, None))
    p, q = out
    return max(np.trapezoid(np.maximum(0, p - np.exp(epsilon) * q), dx=h),
               np.trapezoid(np.maximum(0, q - np.exp(epsilon) * p), dx=h))


def _sum_pmf(k, n, law_in, law_out):
    pmf = np.ones(1)
    for copies, law in ((k, law_in), (n - k, law_out)):
        for _ in range(copies):
            pmf = np.convolve(pmf, law)
    return pmf


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["apgm", "approx-wasserstein"])
@pytest.mark.parametrize("setting", sorted(SUM_SETTINGS))
def test_the_default_sum_holds_for_the_population(setting, mechanism):
    # 100 references per population; the certificate of each default plan
    # (theta="auto": the reference's 0.999 confidence bands), checked against
    # the population's exact law of the sum with the plan's noise.
    values, law_out, law_in, sizes, n, pairs = SUM_SETTINGS[setting]
    rng = np.random.default_rng(31)
    secret = skattr.Secret.proportion("g", 1, pairs=[pairs])
    laws = [_sum_pmf(round(a * n), n, law_in, law_out) for a in pairs]
    g = np.repeat([1, 0], sizes)
    draws, false, noisy = 100, 0, 0
    truth = {}
    for _ in range(draws):
        x = np.where(g == 1, rng.choice(values, g.size, p=law_in),
                     rng.choice(values, g.size, p=law_out))
        reference = pd.DataFrame({"g": g, "x": x})
        private = reference.sample(n, replace=True, random_state=0)
        plan = private.attrpriv.plan(
            ["x"], statistic="sum", secret=secret, reference=reference,
            mechanism=mechanism,
            bounds={"x": (int(values[0]), int(values[-1]))})
        assert plan.assumes("reference.band")
        scale = (plan.noise_scale if plan.noise == "laplace" else
                 float(np.sqrt(plan.noise_covariance[0, 0])))
        noisy += scale > 0
        key = (plan.noise, scale, plan.epsilon)
        if key not in truth:
            truth[key] = _true_delta_on_grid(*laws, *key)
        # 1e-6: the grid's integration error, far below the bounds' slack.
        false += truth[key] > plan.delta * (1 + 1e-6) + 1e-6
    assert noisy == draws
    assert false <= 1, f"{false} of {draws} certificates are false"


@pytest.mark.slow
def test_the_sum_check_can_tell_a_false_certificate():
    # The same check on 20 references of 20 + 20 records: the plug-in
    # (theta="moments", exact laws at the reference's frequencies) is false
    # on 8 of them; the band on none.
    values, law_out, law_in, _, n, pairs = SUM_SETTINGS["shifted"]
    rng = np.random.default_rng(31)
    secret = skattr.Secret.proportion("g", 1, pairs=[pairs])
    laws = [_sum_pmf(round(a * n), n, law_in, law_out) for a in pairs]
    g = np.repeat([1, 0], 20)
    false = {"moments": 0, "band": 0}
    for _ in range(20):
        x = np.where(g == 1, rng.choice(values, g.size, p=law_in),
                     rng.choice(values, g.size, p=law_out))
        reference = pd.DataFrame({"g": g, "x": x})
        private = reference.sample(n, replace=True, random_state=0)
        for name, theta in (("moments", "moments"),
                            ("band", skattr.theta.ConfidenceBand())):
            plan = private.attrpriv.plan(
                ["x"], statistic="sum", secret=secret, reference=reference,
                mechanism="apgm", theta=theta, bounds={"x": (0, 10)})
            sigma = float(np.sqrt(plan.noise_covariance[0, 0]))
            false[name] += _true_delta_on_grid(
                *laws, "gaussian", sigma, plan.epsilon) > plan.delta * (
                    1 + 1e-6) + 1e-6
    assert false["moments"] >= 4
    assert false["band"] == 0


# ------------------------------------------------------------------ a median
def _median_release_delta(cdfs, x, low, high, scale, epsilon):
    """delta(epsilon) of the clipped median plus Laplace noise, both ways.

    The medians' laws on the grid ``x`` (their cdfs differenced), the mass
    below ``low`` and above ``high`` moved there (clipping), convolved with
    the Laplace density by FFT; the hockey stick integrated on the grid.
    """
    from scipy import signal

    h = x[1] - x[0]
    reach = int(np.ceil(40 * scale / h))
    kernel = stats.laplace(scale=scale).pdf(np.arange(-reach, reach + 1) * h)
    out = []
    for cdf in cdfs:
        clipped = np.where(x < low, 0.0, np.where(x >= high, 1.0, cdf))
        mass = np.diff(np.r_[0.0, clipped])
        out.append(np.clip(signal.fftconvolve(mass, kernel), 0, None))
    p, q = out
    return max(np.maximum(0, p - np.exp(epsilon) * q).sum(),
               np.maximum(0, q - np.exp(epsilon) * p).sum())


@pytest.mark.slow
def test_the_default_median_holds_for_the_population():
    # The setting: n = 1,005, LogNormal(0.3, 0.5) in the group and
    # LogNormal(0, 1) outside, pair 0.4 / 0.6, (1, 1e-3), 30 references of
    # 1,000 + 1,000 records. 0.2's default (the resampling model) is false
    # on 4 of these 30 (the review found 5 of 30); the default's bands on
    # none. The truth: the population's
    # exact median laws (binomial sums), clipped to the plan's range, plus
    # the plan's Laplace noise.
    n, pairs = 1005, (0.4, 0.6)
    inside, outside = stats.lognorm(0.5, scale=np.exp(0.3)), stats.lognorm(1.0)
    x = np.linspace(0.0, 12.0, 24_001)
    cdfs = [order_statistic_cdf(x, round(a * n), n, (n - 1) // 2, inside.cdf,
                                outside.cdf)
            for a in pairs]
    rng = np.random.default_rng(27)
    secret = skattr.Secret.proportion("g", 1, pairs=[pairs])
    g = np.repeat([1, 0], 1000)
    false = {"default": 0, "resampling": 0}
    for _ in range(30):
        values = np.where(g == 1, inside.rvs(2000, random_state=rng),
                          outside.rvs(2000, random_state=rng))
        reference = pd.DataFrame({"g": g, "x": values})
        low, high = float(values.min()), float(values.max())
        for name, theta in (("default", "auto"),
                            ("resampling", skattr.theta.Resample(
                                random_state=0))):
            plan = skattr.mechanisms.ApproximateWassersteinMechanism(
                query=skattr.Statistic.median(["x"]), secret=secret,
                theta=theta).fit(reference).plan(n=n)
            if name == "default":
                assert plan.assumes("reference.band")
            true = _median_release_delta(cdfs, x, low, min(high, x[-1]),
                                         plan.noise_scale, plan.epsilon)
            false[name] += true > 1.1 * plan.delta
    assert false["default"] == 0
    assert false["resampling"] >= 3, false
