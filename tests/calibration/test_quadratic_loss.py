"""The exact profile of two Gaussians with unequal covariances (issue 10, item 1)."""

import numpy as np
import pytest
from scipy import stats

from skattr.calibration import (
    epsilon_for_mahalanobis,
    gaussian_delta,
    gaussian_pair_delta,
    gaussian_pair_epsilon,
    multivariate_gaussian_pair_delta,
    multivariate_gaussian_pair_epsilon,
)
from skattr.calibration._quadratic_loss import loss_laws
from skattr.exceptions import NotCertifiableError


def _spd(rng, k, scale=1.0):
    a = rng.standard_normal((k, k))
    return scale * (a @ a.T / k + np.eye(k))


@pytest.mark.parametrize("k", [1, 2, 3, 5])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
def test_equal_covariances_give_the_analytic_gaussian_profile(k, epsilon):
    rng = np.random.default_rng(k)
    cov = _spd(rng, k)
    d = rng.standard_normal(k)
    mu = float(np.sqrt(d @ np.linalg.solve(cov, d)))
    value = multivariate_gaussian_pair_delta(np.zeros(k), cov, d, cov, epsilon)
    assert value == pytest.approx(float(gaussian_delta(mu, epsilon)), abs=1e-9)


@pytest.mark.parametrize("ma, va, mb, vb, epsilon", [
    (0.0, 1.0, 1.0, 1.5, 1.0), (0.0, 2.0, 0.5, 1.0, 0.5), (0.0, 1.0, 3.0, 4.0, 2.0),
    (0.0, 1.0, 0.2, 1.02, 0.3), (0.0, 1.0, 4.0, 1.2, 5.0), (1.0, 3.0, 1.0, 1.0, 0.7),
])
def test_one_statistic_matches_the_closed_form_from_the_certified_side(
        ma, va, mb, vb, epsilon):
    exact = float(gaussian_pair_delta(ma, va, mb, vb, epsilon))
    value = multivariate_gaussian_pair_delta([ma], [[va]], [mb], [[vb]], epsilon)
    assert exact - 1e-12 <= value <= exact + 1e-7


@pytest.mark.slow
def test_two_independent_statistics_match_the_product_law():
    # Diagonal covariances: the loss is a sum of independent one-dimensional
    # losses, whose joint profile a fine two-dimensional grid integrates.
    ma, mb = np.array([0.0, 0.0]), np.array([0.8, -0.5])
    va, vb = np.array([1.0, 2.0]), np.array([1.4, 1.5])
    epsilon = 0.8
    grid = np.linspace(-12, 12, 2401)
    step = grid[1] - grid[0]
    y1, y2 = np.meshgrid(grid, grid, indexing="ij")
    pa = (stats.norm.pdf(y1, ma[0], np.sqrt(va[0]))
          * stats.norm.pdf(y2, ma[1], np.sqrt(va[1])))
    pb = (stats.norm.pdf(y1, mb[0], np.sqrt(vb[0]))
          * stats.norm.pdf(y2, mb[1], np.sqrt(vb[1])))
    e = np.exp(epsilon)
    brute = max(np.maximum(pa - e * pb, 0).sum(), np.maximum(pb - e * pa, 0).sum())
    brute *= step * step
    value = multivariate_gaussian_pair_delta(ma, np.diag(va), mb, np.diag(vb),
                                             epsilon)
    assert value == pytest.approx(brute, abs=2e-6)


@pytest.mark.slow
@pytest.mark.parametrize("k", [2, 5])
def test_unequal_covariances_match_monte_carlo(k):
    rng = np.random.default_rng(10 + k)
    sa = _spd(rng, k)
    sb = sa + 0.2 * _spd(rng, k)
    ma, mb = np.zeros(k), 0.7 * rng.standard_normal(k)
    epsilon, m = 1.0, 400_000
    p = stats.multivariate_normal(ma, sa)
    q = stats.multivariate_normal(mb, sb)
    estimates, errors = [], []
    for first, second, seed in ((p, q, 1), (q, p, 2)):
        y = first.rvs(m, random_state=seed)
        x = np.maximum(1 - np.exp(epsilon - (first.logpdf(y) - second.logpdf(y))),
                       0)
        estimates.append(x.mean())
        errors.append(x.std() / np.sqrt(m))
    value = multivariate_gaussian_pair_delta(ma, sa, mb, sb, epsilon)
    assert abs(value - max(estimates)) <= 5 * max(errors)


def test_the_loss_laws_have_the_right_means():
    # E_P[L] = KL(P || Q) and E_Q[L] = -KL(Q || P), by the closed form.
    rng = np.random.default_rng(3)
    sa, sb = _spd(rng, 3), _spd(rng, 3, 2.0)
    ma, mb = np.zeros(3), rng.standard_normal(3)

    def kl(m0, s0, m1, s1):
        inv = np.linalg.inv(s1)
        d = m1 - m0
        return 0.5 * (np.trace(inv @ s0) + d @ inv @ d - 3
                      + np.linalg.slogdet(s1)[1] - np.linalg.slogdet(s0)[1])

    under_a, under_b = loss_laws(ma, sa, mb, sb)
    assert under_a.mean() == pytest.approx(kl(ma, sa, mb, sb), rel=1e-10)
    assert under_b.mean() == pytest.approx(-kl(mb, sb, ma, sa), rel=1e-10)


@pytest.mark.parametrize("va, vb", [(1.0, 1.0), (1.0, 1.5), (2.0, 1.0)])
def test_epsilon_inverts_delta_from_the_certified_side(va, vb):
    delta = 1e-3
    eps = multivariate_gaussian_pair_epsilon([0.0], [[va]], [1.0], [[vb]], delta)
    assert multivariate_gaussian_pair_delta([0.0], [[va]], [1.0], [[vb]],
                                            eps) <= delta
    closed = gaussian_pair_epsilon(0.0, va, 1.0, vb, delta)
    assert closed <= eps <= closed * 1.001
    if va == vb:
        assert eps == pytest.approx(epsilon_for_mahalanobis(1.0 / np.sqrt(va),
                                                            delta), rel=1e-6)


def test_identical_laws_leak_nothing_and_singular_ones_are_refused():
    cov = np.eye(2)
    assert multivariate_gaussian_pair_epsilon([0, 0], cov, [0, 0], cov, 1e-3) == 0
    with pytest.raises(NotCertifiableError, match="singular"):
        multivariate_gaussian_pair_delta([0, 0], np.diag([1.0, 0.0]), [1, 0],
                                         cov, 1.0)


def test_the_characteristic_function_is_that_of_the_loss():
    # log_cf against the empirical characteristic function of draws of
    # sum_j (a_j Z_j^2 + beta_j Z_j) + s Z_0 + c.
    from skattr.calibration._quadratic_loss import LossLaw

    for linear in ([0.6, 0.2], [30.0, -0.1]):  # completed, and a huge offset
        law = LossLaw(weights=np.array([0.3, -0.2]), linear=np.array(linear),
                      normal_sd=0.4, constant=0.1)
        rng = np.random.default_rng(0)
        z = rng.standard_normal((400_000, 3))
        x = (law.weights * z[:, :2] ** 2 + law.linear * z[:, :2]).sum(axis=1)
        x += law.normal_sd * z[:, 2] + law.constant
        for u in (0.2, 1.0, 3.0):
            empirical = np.exp(1j * u * x).mean()
            assert abs(np.exp(law.log_cf(np.array([u]))[0]) - empirical) < 6e-3
        assert law.mean() == pytest.approx(x.mean(), abs=0.1)
        # The tail the library inverts from it agrees with the draws.
        for t in (0.5, float(np.quantile(x, 0.99))):
            prob, err = law.sf(t)
            assert prob == pytest.approx((x > t).mean(), abs=4e-3) and err < 1e-8


@pytest.mark.slow
def test_nearly_equal_covariances_stay_accurate():
    # Covariances 1% apart make a_j tiny and the completed square's offset
    # huge: the profile must still match Monte Carlo (it overstated delta
    # 500-fold before the stable form).
    rng = np.random.default_rng(7)
    k = 5
    sa = _spd(rng, k)
    sb = sa * 1.01 + 0.002 * _spd(rng, k)
    ma, mb = np.zeros(k), 0.9 * rng.standard_normal(k)
    epsilon = float(multivariate_gaussian_pair_epsilon(ma, sa, mb, sb, 1e-3))
    p, q = stats.multivariate_normal(ma, sa), stats.multivariate_normal(mb, sb)
    m = 400_000
    worst, se = 0.0, 0.0
    for first, second, seed in ((p, q, 1), (q, p, 2)):
        y = first.rvs(m, random_state=seed)
        x = np.maximum(1 - np.exp(epsilon - (first.logpdf(y) - second.logpdf(y))),
                       0)
        if x.mean() > worst:
            worst, se = x.mean(), x.std() / np.sqrt(m)
    # At the certified epsilon the true delta is at most 1e-3, and close to it.
    assert worst <= 1e-3 + 5 * se
    assert worst >= 0.8e-3 - 5 * se


def test_raw_leakage_of_several_statistics_is_exact_not_the_renyi_bound():
    from skattr.calibration._pair_noise import _renyi_epsilon, raw_leakage_epsilon
    from skattr.laws._gaussian import PairLaws

    rng = np.random.default_rng(5)
    k, m = 3, 4
    cov_a = np.stack([_spd(rng, k) for _ in range(m)])
    cov_b = cov_a * 1.05 + 0.01 * np.stack([_spd(rng, k) for _ in range(m)])
    diffs = rng.standard_normal((m, k))
    laws = PairLaws(diffs, cov_a, cov_b, np.arange(m), m, ())
    delta = 1e-3
    got = raw_leakage_epsilon(laws, delta)
    exact = [multivariate_gaussian_pair_epsilon(np.zeros(k), cov_a[i], diffs[i],
                                                cov_b[i], delta) for i in range(m)]
    renyi = [_renyi_epsilon(diffs[i], cov_a[i], cov_b[i], delta) for i in range(m)]
    # The maximum is exact; every entry bounds its pair's exact epsilon.
    assert got.max() == pytest.approx(max(exact), rel=1e-9)
    assert np.all(got >= np.array(exact) * (1 - 1e-9))
    assert max(exact) < max(renyi)


def test_many_terms_vectorised_envelope_matches_the_scalar_one(monkeypatch):
    # Above _SCALAR_TERMS the characteristic function is evaluated with numpy;
    # forcing the scalar loop must give the same delta to integration error.
    from skattr.calibration import _quadratic_loss as ql

    rng = np.random.default_rng(0)
    k = 40
    root_a, root_b = rng.normal(size=(2, k, k)) / np.sqrt(k)
    cov_a = root_a @ root_a.T + np.eye(k)
    cov_b = root_b @ root_b.T + np.eye(k)
    mean_b = rng.normal(size=k) * 0.1
    args = (np.zeros(k), cov_a, mean_b, cov_b, 2.0)
    vectorised = ql.multivariate_gaussian_pair_delta(*args)
    monkeypatch.setattr(ql, "_SCALAR_TERMS", 10**6)
    scalar = ql.multivariate_gaussian_pair_delta(*args)
    assert 0 < vectorised < 1
    assert vectorised == pytest.approx(scalar, rel=1e-9, abs=1e-12)


@pytest.mark.slow
def test_bracketed_inversion_matches_the_unbracketed_one():
    from skattr.calibration import (
        multivariate_gaussian_pair_delta,
        multivariate_gaussian_pair_epsilon,
    )

    rng = np.random.default_rng(3)
    k = 4
    root_a, root_b = rng.normal(size=(2, k, k))
    cov_a, cov_b = root_a @ root_a.T + np.eye(k), root_b @ root_b.T + np.eye(k)
    args = (np.zeros(k), cov_a, rng.normal(size=k), cov_b)
    plain = multivariate_gaussian_pair_epsilon(*args, 1e-3)
    # A valid bracket (fails below, holds above), and invalid ones (ignored).
    for bracket in ((0.5 * plain, 2 * plain), (2 * plain, 3 * plain),
                    (0.1 * plain, 0.5 * plain)):
        got = multivariate_gaussian_pair_epsilon(*args, 1e-3, bracket=bracket)
        assert got == pytest.approx(plain, rel=1e-8)
        assert multivariate_gaussian_pair_delta(*args, got) <= 1e-3


def test_the_reverse_order_is_the_forward_laws_negated():
    from skattr.calibration._quadratic_loss import _both_orders

    rng = np.random.default_rng(7)
    k = 3
    root_a, root_b = rng.normal(size=(2, k, k))
    sa, sb = root_a @ root_a.T + np.eye(k), root_b @ root_b.T + np.eye(k)
    ma, mb = rng.normal(size=(2, k))
    _, backward = _both_orders(ma, sa, mb, sb)
    direct = loss_laws(mb, sb, ma, sa)
    for got, want in zip(backward, direct, strict=True):
        np.testing.assert_allclose(got.weights, want.weights, rtol=1e-12)
        np.testing.assert_allclose(np.abs(got.linear), np.abs(want.linear),
                                   rtol=1e-9, atol=1e-12)
        assert got.constant == pytest.approx(want.constant, rel=1e-12)
        assert got.normal_sd == pytest.approx(want.normal_sd, abs=1e-12)
        # The tails, which are what the profile uses, agree.
        assert got.sf(0.3)[0] == pytest.approx(want.sf(0.3)[0], abs=1e-10)


@pytest.mark.parametrize("a, beta, constant", [
    (0.5, 0.0, 0.0), (-0.3, 2.0, 1.0), (2.0, 30.0, -5.0), (0.01, 400.0, 0.0)])
def test_chernoff_tail_bounds_hold_against_the_exact_law(a, beta, constant):
    from skattr.calibration._quadratic_loss import LossLaw

    # a Z^2 + beta Z + c = a (Z + b)^2 + c - a b^2, b = beta / (2a): a scaled
    # noncentral chi-square with one degree of freedom.
    law = LossLaw(weights=np.array([a]), linear=np.array([beta]), normal_sd=0.0,
                  constant=constant)
    b = beta / (2 * a)
    shift = constant - a * b * b
    exact = stats.ncx2(1, b * b, scale=abs(a))
    sd = np.sqrt(law.variance())
    assert law.variance() == pytest.approx(exact.var(), rel=1e-9)
    for z in (-30, -8, -3, -1, 0, 1, 3, 8, 30):
        x = law.mean() + z * sd
        # X > x: |a| Y > x - shift for a > 0, |a| Y < shift - x for a < 0.
        tail = exact.sf(x - shift) if a > 0 else exact.cdf(shift - x)
        low, high = law.tail_bounds(x)
        assert low - 1e-12 <= tail <= high + 1e-12
        value, err = law.sf(x)
        assert abs(value - tail) <= err + 1e-9


def test_far_tails_are_settled_by_the_bounds_where_quadrature_fails():
    # Two statistics 4,000 standard deviations apart: the loss's mean is
    # about 8e6 and the Gil-Pelaez integrand oscillates millions of times on
    # (0, 1]; the pair is fully revealed, delta = 1 at any moderate epsilon.
    cov_a = np.diag([0.01, 0.012])
    cov_b = np.diag([0.011, 0.01])
    delta = multivariate_gaussian_pair_delta([0.0, 0.0], cov_a, [400.0, 3.0],
                                             cov_b, 20.0)
    assert delta == pytest.approx(1.0, abs=1e-9)
