"""Theta models: exact mixture moments, Gaussian conditioning, expert ranges.

Every number the models give is checked against a computation that does not use
the module's formulas: a second algebraic route (covariances of the selection
counts, conditioning the joint law of the sums, sums over the Binomial or
hypergeometric support written as plain loops, numerical integration) and a
seeded, vectorised Monte-Carlo whose tolerance is a multiple of its own standard
error.
"""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
    NotCertifiableError,
)
from skattr.theta import ExpertTheta, GroupMoments, JointGaussian
from skattr.theta._fit import fit_group_moments, fit_joint_gaussian

N_IN, N_OUT = 30, 40
# Monte-Carlo checks pass when the error is within this many standard errors
# (a two-sided 6-sigma band fails by chance with probability about 2e-9).
Z = 6.0


@pytest.fixture(scope="module")
def population():
    """A finite reference population: 30 "in" and 40 "out" records, 2-d h."""
    rng = np.random.default_rng(20240611)
    mix = np.array([[2.0, 0.0], [1.2, 0.7]])
    h_in = rng.normal(size=(N_IN, 2)) @ mix + [5.0, -1.0]
    h_out = rng.gamma(2.0, 1.5, size=(N_OUT, 2)) @ mix.T + [1.0, 3.0]
    return h_in, h_out


def _fit(population, sampling):
    h_in, h_out = population
    z = np.r_[np.ones(N_IN), np.zeros(N_OUT)]
    return fit_group_moments(z, np.vstack([h_in, h_out]), sampling=sampling,
                             columns=("x", "y"), secret_label="test secret")


def _srs_count_cov(size: int, drawn: int, replace: bool) -> np.ndarray:
    """Covariance of how often each of ``size`` records is drawn in ``drawn`` draws.

    With replacement the counts are Multinomial(drawn, 1/size); without, they
    are the inclusion indicators of a simple random sample.
    """
    q = 1.0 / size
    if replace:
        return drawn * (q * np.eye(size) - q * q * np.ones((size, size)))
    if size == 1:
        return np.zeros((1, 1))
    var = drawn / size * (1 - drawn / size)
    off = -drawn * (size - drawn) / (size**2 * (size - 1))
    return np.full((size, size), off) + (var - off) * np.eye(size)


def _exact_sum_moments(population, n_in, n_out, replace):
    """E[S] and Cov[S] from S = counts^T H, counts' covariance written out."""
    h_in, h_out = population
    mean = n_in * h_in.mean(axis=0) + n_out * h_out.mean(axis=0)
    cov = (h_in.T @ _srs_count_cov(N_IN, n_in, replace) @ h_in
           + h_out.T @ _srs_count_cov(N_OUT, n_out, replace) @ h_out)
    return mean, cov


def _check_mc(samples, mean, cov):
    """Assert sample mean and covariance match, within Z standard errors."""
    r = samples.shape[0]
    mc_mean = samples.mean(axis=0)
    se_mean = samples.std(axis=0) / math.sqrt(r)
    assert np.all(np.abs(mc_mean - mean) <= Z * se_mean), (mc_mean, mean)
    centred = samples - mc_mean
    products = centred[:, :, None] * centred[:, None, :]
    mc_cov = products.mean(axis=0)
    se_cov = products.std(axis=0) / math.sqrt(r)
    assert np.all(np.abs(mc_cov - cov) <= Z * se_cov + 1e-12), (mc_cov, cov)


# --------------------------------------------------------------------------- fit


def test_fit_group_moments_takes_population_moments(population):
    h_in, h_out = population
    for sampling, sizes in [("with-replacement", (None, None)),
                            ("without-replacement", (N_IN, N_OUT))]:
        model = _fit(population, sampling)
        np.testing.assert_allclose(model.mean_in, h_in.mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(model.mean_out, h_out.mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(model.cov_in, np.cov(h_in.T, ddof=0), rtol=1e-12)
        np.testing.assert_allclose(model.cov_out, np.cov(h_out.T, ddof=0),
                                   rtol=1e-12)
        assert model.p == pytest.approx(N_IN / (N_IN + N_OUT))
        assert (model.size_in, model.size_out) == sizes
        assert model.sampling == sampling
        assert model.columns == ("x", "y")


def test_fit_group_moments_needs_two_records_per_group():
    h = np.arange(10.0)[:, None]
    z = np.r_[np.ones(1), np.zeros(9)]
    with pytest.raises(DataValidationError, match="1 record"):
        fit_group_moments(z, h, sampling="with-replacement", columns=("h",),
                          secret_label="s")


# ----------------------------------------------------- GroupMoments.sum_moments


@pytest.mark.parametrize("sampling", ["with-replacement", "without-replacement"])
@pytest.mark.parametrize("n, a", [(20, 0.4), (20, 0.0), (20, 1.0), (35, 0.6),
                                  (60, 0.5), (70, 3 / 7)])
def test_sum_moments_exact(population, sampling, n, a):
    model = _fit(population, sampling)
    n_in = round(a * n)
    mean, cov = model.sum_moments([a], n)
    exp_mean, exp_cov = _exact_sum_moments(population, n_in, n - n_in,
                                           sampling == "with-replacement")
    np.testing.assert_allclose(mean[0], exp_mean, rtol=1e-10)
    np.testing.assert_allclose(cov[0], exp_cov, rtol=1e-9, atol=1e-9)


def test_sum_moments_finite_population_correction_closed_form(population):
    """Var of an SRS sum is m C (N - m) / (N - 1); drawing everyone leaves none."""
    h_in, h_out = population
    model = _fit(population, "without-replacement")
    _, cov = model.sum_moments([0.5], 24)
    fpc_in = (N_IN - 12) / (N_IN - 1)
    fpc_out = (N_OUT - 12) / (N_OUT - 1)
    expected = (12 * np.cov(h_in.T, ddof=0) * fpc_in
                + 12 * np.cov(h_out.T, ddof=0) * fpc_out)
    np.testing.assert_allclose(cov[0], expected, rtol=1e-12)
    # The whole population: the sum is a constant.
    mean, cov = model.sum_moments([N_IN / (N_IN + N_OUT)], N_IN + N_OUT)
    np.testing.assert_allclose(cov[0], 0.0, atol=1e-9)
    np.testing.assert_allclose(mean[0], h_in.sum(0) + h_out.sum(0), rtol=1e-12)


def test_sum_moments_with_replacement_monte_carlo(population):
    h_in, h_out = population
    rng = np.random.default_rng(1)
    n, a, reps = 20, 0.4, 200_000
    n_in = round(a * n)
    s = (h_in[rng.integers(0, N_IN, (reps, n_in))].sum(axis=1)
         + h_out[rng.integers(0, N_OUT, (reps, n - n_in))].sum(axis=1))
    mean, cov = _fit(population, "with-replacement").sum_moments([a], n)
    _check_mc(s, mean[0], cov[0])


def test_sum_moments_without_replacement_monte_carlo(population):
    h_in, h_out = population
    rng = np.random.default_rng(2)
    n, a, reps = 40, 0.625, 100_000
    n_in = round(a * n)
    # A uniformly random subset: the first m of a random permutation (argsort of
    # i.i.d. keys).
    pick_in = np.argsort(rng.random((reps, N_IN)), axis=1)[:, :n_in]
    pick_out = np.argsort(rng.random((reps, N_OUT)), axis=1)[:, :n - n_in]
    s = h_in[pick_in].sum(axis=1) + h_out[pick_out].sum(axis=1)
    mean, cov = _fit(population, "without-replacement").sum_moments([a], n)
    _check_mc(s, mean[0], cov[0])
    # The correction is visible: the i.i.d. formula is far off.
    _, iid = _fit(population, "with-replacement").sum_moments([a], n)
    assert np.all(np.diag(iid[0]) > 1.5 * np.diag(cov[0]))


def test_sum_moments_many_values_and_scalar(population):
    model = _fit(population, "with-replacement")
    a = np.array([0.0, 0.25, 0.5, 1.0])
    mean, cov = model.sum_moments(a, 12)
    assert mean.shape == (4, 2) and cov.shape == (4, 2, 2)
    for i, ai in enumerate(a):
        m1, c1 = model.sum_moments(ai, 12)
        np.testing.assert_allclose(m1[0], mean[i])
        np.testing.assert_allclose(c1[0], cov[i])


def test_without_replacement_refuses_more_records_than_the_group_holds(population):
    model = _fit(population, "without-replacement")
    with pytest.raises(NotCertifiableError, match="needs 35 records.*only 30"):
        model.sum_moments([0.7], 50)
    with pytest.raises(NotCertifiableError, match="only 40"):
        model.sum_moments([0.0], 41)
    # Exactly the group's size is fine; with replacement any size is.
    model.sum_moments([1.0], N_IN)
    _fit(population, "with-replacement").sum_moments([0.7], 50)


def test_group_moments_validation():
    ok = dict(mean_in=[1.0], mean_out=[0.0], cov_in=1.0, cov_out=1.0)
    with pytest.raises(DataValidationError, match="differ in length"):
        GroupMoments(**{**ok, "mean_out": [0.0, 1.0]})
    with pytest.raises(DataValidationError, match="finite vector"):
        GroupMoments(**{**ok, "mean_in": [np.nan]})
    with pytest.raises(DataValidationError, match="positive semi-definite"):
        GroupMoments(**{**ok, "cov_in": -1.0})
    with pytest.raises(DataValidationError, match="symmetric"):
        GroupMoments(mean_in=[0, 0], mean_out=[0, 0], cov_in=[[1, 0.5], [0, 1]],
                     cov_out=1.0)
    with pytest.raises(DataValidationError, match=r"p must lie in \[0, 1\]"):
        GroupMoments(**ok, p=1.5)
    with pytest.raises(DataValidationError, match=r"p must lie in \[0, 1\]"):
        GroupMoments(**ok, p=None)
    with pytest.raises(DataValidationError, match="both size_in and size_out"):
        GroupMoments(**ok, size_in=10)
    with pytest.raises(DataValidationError, match="non-negative int"):
        GroupMoments(**ok, size_in=-1, size_out=3)
    with pytest.raises(DataValidationError, match="non-negative int"):
        GroupMoments(**ok, size_in=2.5, size_out=3)
    model = GroupMoments(**ok, size_in=np.int64(10), size_out=20)
    assert model.size_in == 10 and model.columns == (0,)
    with pytest.raises(InvalidParameterError, match=r"lies in \[0, 1\]"):
        model.sum_moments([0.5, 1.2], 10)
    with pytest.raises(InvalidParameterError, match="1-d array"):
        model.sum_moments([[0.5]], 10)
    assert not model.mean_in.flags.writeable


# ------------------------------------------------------------- JointGaussian


def _joint():
    mean = np.array([0.4, 10.0, -2.0])
    root = np.array([[0.45, 0.0, 0.0], [1.5, 3.0, 0.0], [-0.8, 0.6, 1.1]])
    return JointGaussian(mean=mean, cov=root @ root.T, columns=("u", "v"))


def test_joint_gaussian_conditions_the_sums_by_schur_complement():
    model = _joint()
    n = 25
    # The sums over n i.i.d. records are N(n mu, n V); condition S_z = n a.
    big_mean, big_cov = n * model.mean, n * model.cov
    z, h = [0], [1, 2]
    for a in (0.1, 0.4, 0.93):
        gain = np.linalg.solve(big_cov[np.ix_(z, z)], big_cov[np.ix_(z, h)]).T
        exp_mean = big_mean[h] + gain @ (np.array([n * a]) - big_mean[z])
        exp_cov = big_cov[np.ix_(h, h)] - gain @ big_cov[np.ix_(z, h)]
        mean, cov = model.sum_moments([a], n)
        np.testing.assert_allclose(mean[0], exp_mean, rtol=1e-12)
        np.testing.assert_allclose(cov[0], exp_cov, rtol=1e-12)


def test_joint_gaussian_paper_formula_for_a_mean_query():
    """Zhang et al. Sec. 4.2: mu_j + V_ij / V_ii (a - mu_i), (V_jj - V_ij^2/V_ii)/n."""
    v = np.array([[0.24, 1.3], [1.3, 225.0]])
    mu = np.array([0.6, 160.0])
    model = JointGaussian(mean=mu, cov=v)
    n, a = 50, 0.25
    mean, cov = model.sum_moments([a], n)
    assert mean[0, 0] / n == pytest.approx(mu[1] + v[0, 1] / v[0, 0] * (a - mu[0]))
    assert cov[0, 0, 0] / n**2 == pytest.approx((v[1, 1] - v[0, 1] ** 2 / v[0, 0])
                                                / n)
    assert model.slope[0] == pytest.approx(v[0, 1] / v[0, 0])


def test_joint_gaussian_monte_carlo_regression():
    """Simulated datasets: E[S | mean z] is linear, residual variance constant."""
    mu = np.array([0.5, 3.0])
    v = np.array([[0.25, 0.6], [0.6, 4.0]])
    model = JointGaussian(mean=mu, cov=v)
    n, reps = 20, 100_000
    rng = np.random.default_rng(3)
    records = rng.multivariate_normal(mu, v, size=(reps, n))
    zbar = records[:, :, 0].mean(axis=1)
    s = records[:, :, 1].sum(axis=1)
    design = np.column_stack([np.ones(reps), zbar - zbar.mean()])
    coef, *_ = np.linalg.lstsq(design, s, rcond=None)
    resid = s - design @ coef
    res_var = resid @ resid / (reps - 2)
    sxx = ((zbar - zbar.mean()) ** 2).sum()
    for a in (0.3, 0.5, 0.7):
        predicted = coef[0] + coef[1] * (a - zbar.mean())
        se = math.sqrt(res_var * (1 / reps + (a - zbar.mean()) ** 2 / sxx))
        mean, cov = model.sum_moments([a], n)
        assert abs(predicted - mean[0, 0]) <= Z * se
        assert abs(res_var - cov[0, 0, 0]) <= Z * res_var * math.sqrt(2 / reps)


def test_fit_joint_gaussian_and_validation():
    rng = np.random.default_rng(4)
    z = (rng.random(200) < 0.3).astype(float)
    h = rng.normal(size=(200, 2)) + z[:, None]
    model = fit_joint_gaussian(z, h, columns=("a", "b"), secret_label="s")
    np.testing.assert_allclose(model.mean, np.r_[z.mean(), h.mean(axis=0)])
    np.testing.assert_allclose(model.cov, np.cov(np.column_stack([z, h]).T))
    assert model.columns == ("a", "b")
    with pytest.raises(DataValidationError, match="zero variance"):
        JointGaussian(mean=[0.5, 1.0], cov=np.diag([0.0, 1.0]))
    with pytest.raises(DataValidationError, match="at least one released column"):
        JointGaussian(mean=[0.5], cov=[[1.0]])
    with pytest.raises(DataValidationError, match="constant"):
        fit_joint_gaussian(np.ones(5), h[:5], columns=("a", "b"), secret_label="s")


# ---------------------------------------------------------- moments_given_set


def _set_moments_by_loop(model, lo, hi, n, law):
    """Mix E[S | k] and Cov[S | k] over k in the set, via raw second moments."""
    k_dim = model.mean_in.size
    total = first = 0.0
    second = np.zeros((k_dim, k_dim))
    for k in range(n + 1):
        if not lo <= k / n <= hi:
            continue
        w = law(k)
        if w == 0:
            continue
        if model.size_in is None:
            cov_k = k * model.cov_in + (n - k) * model.cov_out
        else:
            cov_k = (k * model.cov_in * (model.size_in - k) / (model.size_in - 1)
                     + (n - k) * model.cov_out * (model.size_out - (n - k))
                     / (model.size_out - 1))
        mean_k = k * model.mean_in + (n - k) * model.mean_out
        total += w
        first = first + w * mean_k
        second += w * (cov_k + np.outer(mean_k, mean_k))
    mean = first / total
    return total, mean, second / total - np.outer(mean, mean)


@pytest.mark.parametrize("lo, hi, n", [(0.25, 0.5, 12), (0.5, 0.75, 12),
                                       (0.0, 1.0, 9), (0.3, 0.31, 40),
                                       (0.5, 0.5 + 1e-3, 40)])
def test_moments_given_set_with_replacement_enumeration(population, lo, hi, n):
    model = _fit(population, "with-replacement")
    p = model.p

    def binom(k):
        return math.comb(n, k) * p**k * (1 - p) ** (n - k)

    exp_prob, exp_mean, exp_cov = _set_moments_by_loop(model, lo, hi, n, binom)
    prob, mean, cov = model.moments_given_set(lo, hi, n)
    assert prob == pytest.approx(exp_prob, rel=1e-10)
    np.testing.assert_allclose(mean, exp_mean, rtol=1e-10)
    np.testing.assert_allclose(cov, exp_cov, rtol=1e-8)


def test_moments_given_set_full_range_is_the_unconditional_law(population):
    """Over [0, 1], S is n i.i.d. draws from the whole (mixed) population."""
    h_in, h_out = population
    model = _fit(population, "with-replacement")
    pooled = np.vstack([h_in, h_out])
    prob, mean, cov = model.moments_given_set(0.0, 1.0, 15)
    assert prob == pytest.approx(1.0)
    np.testing.assert_allclose(mean, 15 * pooled.mean(axis=0), rtol=1e-10)
    np.testing.assert_allclose(cov, 15 * np.cov(pooled.T, ddof=0), rtol=1e-9)


def test_moments_given_set_with_replacement_monte_carlo(population):
    h_in, h_out = population
    pooled = np.vstack([h_in, h_out])
    rng = np.random.default_rng(5)
    n, reps, lo, hi = 12, 200_000, 0.25, 0.5
    idx = rng.integers(0, N_IN + N_OUT, (reps, n))
    g = (idx < N_IN).mean(axis=1)
    keep = (g >= lo) & (g <= hi)
    s = pooled[idx[keep]].sum(axis=1)
    prob, mean, cov = _fit(population, "with-replacement").moments_given_set(
        lo, hi, n)
    assert abs(keep.mean() - prob) <= Z * math.sqrt(prob * (1 - prob) / reps)
    _check_mc(s, mean, cov)


@pytest.mark.parametrize("lo, hi, n", [(0.25, 0.5, 12), (0.5, 0.75, 50),
                                       (0.0, 1.0, 70)])
def test_moments_given_set_without_replacement_enumeration(population, lo, hi, n):
    model = _fit(population, "without-replacement")
    total = N_IN + N_OUT

    def hypergeom(k):
        return math.comb(N_IN, k) * math.comb(N_OUT, n - k) / math.comb(total, n)

    exp_prob, exp_mean, exp_cov = _set_moments_by_loop(model, lo, hi, n, hypergeom)
    prob, mean, cov = model.moments_given_set(lo, hi, n)
    assert prob == pytest.approx(exp_prob, rel=1e-10)
    np.testing.assert_allclose(mean, exp_mean, rtol=1e-10)
    np.testing.assert_allclose(cov, exp_cov, rtol=1e-8, atol=1e-8)


def test_moments_given_set_without_replacement_monte_carlo(population):
    """Subsets of the reference drawn without replacement, kept when g is in the set.

    With n = 50 > 30 "in" records, Binomial(n, p) would put mass on datasets the
    reference cannot form; the hypergeometric law does not.
    """
    h_in, h_out = population
    pooled = np.vstack([h_in, h_out])
    rng = np.random.default_rng(6)
    n, reps, lo, hi = 50, 60_000, 0.5, 0.75
    pick = np.argsort(rng.random((reps, N_IN + N_OUT)), axis=1)[:, :n]
    g = (pick < N_IN).mean(axis=1)
    keep = (g >= lo) & (g <= hi)
    s = pooled[pick[keep]].sum(axis=1)
    prob, mean, cov = _fit(population, "without-replacement").moments_given_set(
        lo, hi, n)
    assert abs(keep.mean() - prob) <= Z * math.sqrt(prob * (1 - prob) / reps)
    _check_mc(s, mean, cov)


def test_moments_given_set_without_replacement_too_many_records(population):
    model = _fit(population, "without-replacement")
    with pytest.raises(NotCertifiableError, match="71 records"):
        model.moments_given_set(0.0, 1.0, 71)


def test_moments_given_set_empty_event():
    model = GroupMoments(mean_in=[1.0], mean_out=[0.0], cov_in=1.0, cov_out=1.0,
                         p=0.0)
    assert model.moments_given_set(0.25, 0.5, 20) == (0.0, None, None)
    # Between two grid points: no dataset of 10 records has g in (0.31, 0.39).
    model = GroupMoments(mean_in=[1.0], mean_out=[0.0], cov_in=1.0, cov_out=1.0)
    assert model.moments_given_set(0.31, 0.39, 10)[0] == 0.0


def test_joint_gaussian_moments_given_set_integration():
    model = _joint()
    n = 25
    loc, scale = model.mean[0], math.sqrt(model.cov[0, 0] / n)
    for lo, hi in [(0.25, 0.5), (0.5, 0.75), (0.0, 0.3)]:

        def moment(f, lo=lo, hi=hi):
            return integrate.quad(lambda g: f(g) * stats.norm.pdf(g, loc, scale),
                                  lo, hi, epsabs=1e-13, epsrel=1e-11)[0]

        prob = moment(lambda g: 1.0)

        def cond_mean(g):
            return n * (model.mean[1:] + model.cov[1:, 0] / model.cov[0, 0]
                        * (g - model.mean[0]))

        exp_mean = np.array([moment(lambda g, i=i: cond_mean(g)[i])
                             for i in range(2)]) / prob
        within = n * (model.cov[1:, 1:] - np.outer(model.cov[1:, 0], model.cov[0, 1:])
                      / model.cov[0, 0])
        exp_cov = within + np.array(
            [[moment(lambda g, i=i, j=j: cond_mean(g)[i] * cond_mean(g)[j])
              for j in range(2)] for i in range(2)]) / prob - np.outer(exp_mean,
                                                                     exp_mean)
        got_prob, mean, cov = model.moments_given_set(lo, hi, n)
        assert got_prob == pytest.approx(prob, rel=1e-8)
        np.testing.assert_allclose(mean, exp_mean, rtol=1e-8)
        np.testing.assert_allclose(cov, exp_cov, rtol=1e-6)


def test_joint_gaussian_moments_given_set_monte_carlo():
    mu = np.array([0.45, 3.0])
    v = np.array([[0.25, 0.6], [0.6, 4.0]])
    model = JointGaussian(mean=mu, cov=v)
    n, reps, lo, hi = 10, 200_000, 0.5, 0.75
    rng = np.random.default_rng(7)
    records = rng.multivariate_normal(mu, v, size=(reps, n))
    zbar = records[:, :, 0].mean(axis=1)
    keep = (zbar >= lo) & (zbar <= hi)
    s = records[keep, :, 1:].sum(axis=1)
    prob, mean, cov = model.moments_given_set(lo, hi, n)
    assert abs(keep.mean() - prob) <= Z * math.sqrt(prob * (1 - prob) / reps)
    _check_mc(s, mean, cov)


def test_joint_gaussian_moments_given_set_far_upper_tail():
    """Both cdf values round to 1 there; the probability must not collapse to 0."""
    model = JointGaussian(mean=[0.0, 1.0], cov=[[1.0, 0.5], [0.5, 1.0]])
    n = 100  # g ~ N(0, 0.01): the set below lies 9 to 10 sd above the mean
    prob, mean, cov = model.moments_given_set(0.9, 1.0, n)
    expected = stats.norm.sf(9.0) - stats.norm.sf(10.0)
    assert prob == pytest.approx(expected, rel=1e-9)
    # E[g | set] lies in the set, so E[S] lies between the endpoints' means.
    ends, _ = model.sum_moments([0.9, 1.0], n)
    assert ends[0, 0] < mean[0] < ends[1, 0]
    assert np.all(np.isfinite(cov))
    # Far enough out, the event has probability 0 in float64.
    assert model.moments_given_set(50.0, 51.0, n) == (0.0, None, None)


# ------------------------------------------------------------- ExpertTheta


def _model(gap, p, sd=1.0):
    return GroupMoments(mean_in=[100.0 + gap], mean_out=[100.0], cov_in=sd**2,
                        cov_out=sd**2, p=p, columns=("bp",))


def test_from_ranges_grid_and_vertices():
    ranges = {"gap": (6.0, 10.0), "p": (0.25, 0.75), "sd": 3.0}
    for resolution in (3, 5):
        theta = ExpertTheta.from_ranges(_model, ranges, resolution=resolution)
        models = theta.models_for("sex")
        assert len(models) == resolution**2
        assert theta.grid_shape == (resolution, resolution, 1)
        names, grid = theta.parameters
        assert names == ["gap", "p", "sd"]
        assert grid.shape == (resolution**2, 3)
        points = {tuple(row) for row in grid}
        for gap in (6.0, 10.0):
            for p in (0.25, 0.75):
                assert (gap, p, 3.0) in points
        # Each model was built from its own grid row, in C order.
        for row, model in zip(grid, models, strict=True):
            assert model.mean_in[0] - model.mean_out[0] == pytest.approx(row[0])
            assert model.p == pytest.approx(row[1])
            assert model.cov_in[0, 0] == pytest.approx(9.0)
        np.testing.assert_allclose(
            np.unique(grid[:, 0]), np.linspace(6.0, 10.0, resolution))
    assert "3 models" not in repr(theta) and "25 models" in repr(theta)


def test_from_ranges_rejects_bad_input():
    with pytest.raises(InvalidParameterError, match="at least 3"):
        ExpertTheta.from_ranges(_model, {"gap": (6, 10), "p": 0.5}, resolution=2)
    with pytest.raises(InvalidParameterError, match="low <= high"):
        ExpertTheta.from_ranges(_model, {"gap": (10, 6), "p": 0.5})
    with pytest.raises(InvalidParameterError, match="low <= high"):
        ExpertTheta.from_ranges(_model, {"gap": (1, 2, 3), "p": 0.5})


def test_check_worst_case_on_grid():
    theta = ExpertTheta.from_ranges(_model, {"gap": (6.0, 10.0), "p": (0.25, 0.75)},
                                    resolution=4)
    gap, p = theta.parameters[1].T
    # Monotone along every grid line (rising in gap, falling in p): certified.
    theta.check_worst_case_on_grid(gap**2 - 3 * p, "required noise variance")
    # Rising on some lines and falling on others is still monotone per line.
    theta.check_worst_case_on_grid(gap * (p - 0.5), "required noise variance")
    # A valley (convex in gap) still peaks at the ends of every line: certified.
    theta.check_worst_case_on_grid((gap - 8.0) ** 2 + p, "required noise variance")
    with pytest.raises(NotCertifiableError,
                       match="peaks inside the range of the parameter 'gap'"):
        theta.check_worst_case_on_grid(-((gap - 8.0) ** 2) + p,
                                       "required noise variance")
    with pytest.raises(NotCertifiableError, match="'p'"):
        theta.check_worst_case_on_grid(gap + np.sin(12 * p), "sensitivity")
    # An infinite value elsewhere does not inflate the tolerance.
    bumpy = np.ones_like(gap)
    bumpy[(gap == np.unique(gap)[1]) & (p == 0.25)] = 1.5
    bumpy[(gap == 10.0) & (p == 0.75)] = np.inf
    with pytest.raises(NotCertifiableError, match="'gap'"):
        theta.check_worst_case_on_grid(bumpy, "required noise variance")
    with pytest.raises(InvalidParameterError, match="grid of 16 models"):
        theta.check_worst_case_on_grid(np.ones(15), "required noise variance")
    # A finite set of models has no grid: nothing to check.
    finite = ExpertTheta([_model(6.0, 0.5), _model(10.0, 0.5)])
    finite.check_worst_case_on_grid(np.array([5.0, 1.0]), "anything")


def test_expert_theta_models_for():
    a, b = _model(6.0, 0.5), _model(10.0, 0.5)
    theta = ExpertTheta({"sex": [a], "race": [a, b]})
    assert theta.models_for("race") == [a, b]
    assert repr(theta) == "ExpertTheta(3 models: stated by an expert)"
    with pytest.raises(InvalidParameterError,
                       match="no models for the secret column 'age'"):
        theta.models_for("age")
    with pytest.raises(InvalidParameterError, match="non-empty list"):
        ExpertTheta([]).models_for("sex")
    with pytest.raises(InvalidParameterError, match="non-empty list"):
        ExpertTheta([a, "not a model"]).models_for("sex")
