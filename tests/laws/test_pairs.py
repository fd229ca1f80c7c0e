"""pair_laws: the law of F = w(n) S on both sides of every discriminative pair."""

import math

import numpy as np
import pytest
from scipy import stats

from skattr import Assumption, Query, Secret
from skattr.datasets import HOSPITAL_PAPER, hospital_theta
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws._gaussian import PairLaws, pair_laws
from skattr.theta import GroupMoments, JointGaussian

HOSPITAL_SETS = [(0.25, 0.5), (0.5, 0.75)]


def _groups(**kw):
    """Two statistics, correlated, with different spreads in the two groups."""
    base = dict(mean_in=[160.0, 2.0], mean_out=[140.0, 5.0],
                cov_in=[[225.0, 12.0], [12.0, 4.0]], cov_out=[[100.0, -5.0],
                                                              [-5.0, 9.0]],
                p=0.6, columns=("weight", "bp"))
    return GroupMoments(**{**base, **kw})


def _sum_law_by_hand(model, k, n):
    """E[S] and Cov[S] with k "in" records out of n, i.i.d. draws."""
    return (k * model.mean_in + (n - k) * model.mean_out,
            k * model.cov_in + (n - k) * model.cov_out)


# ---------------------------------------------------------------- pointwise


@pytest.mark.parametrize("statistic, weight", [("mean", 1 / 40), ("sum", 1.0)])
def test_pointwise_explicit_pairs(statistic, weight):
    model = _groups()
    n = 40
    secret = Secret.proportion("sex", "F", pairs=[(0.25, 0.75), (0.5, 0.4)])
    w = Query(statistic, ("weight", "bp")).weight(n)
    assert w == weight
    laws = pair_laws([model], secret, w, n, ("weight", "bp"))
    for i, (a, b) in enumerate([(0.25, 0.75), (0.5, 0.4)]):
        mean_a, cov_a = _sum_law_by_hand(model, a * n, n)
        mean_b, cov_b = _sum_law_by_hand(model, b * n, n)
        np.testing.assert_allclose(laws.mean_diff[i], weight * (mean_a - mean_b))
        np.testing.assert_allclose(laws.cov_a[i], weight**2 * cov_a)
        np.testing.assert_allclose(laws.cov_b[i], weight**2 * cov_b)
    # Per record, the difference is (a - b) (m_in - m_out), whatever the query.
    np.testing.assert_allclose(laws.mean_diff[0] / (weight * n),
                               -0.5 * (model.mean_in - model.mean_out))
    assert laws.assumptions == ()
    assert laws.n_theta == 1 and laws.theta_index.tolist() == [0, 0]
    assert laws.sensitivity == pytest.approx(
        np.linalg.norm(laws.mean_diff, axis=1).max())
    np.testing.assert_allclose(laws.min_variance, np.minimum(
        np.diagonal(laws.cov_a, axis1=1, axis2=2).min(0),
        np.diagonal(laws.cov_b, axis1=1, axis2=2).min(0)))


@pytest.mark.parametrize("n", [4, 40, 100])
def test_pointwise_hospital_sets_divisible_by_four(n):
    model = _groups(columns=("weight",), mean_in=[160.0], mean_out=[140.0],
                    cov_in=225.0, cov_out=100.0)
    secret = Secret.proportion("sex", "F", sets=HOSPITAL_SETS)
    laws = pair_laws([model], secret, 1 / n, n, ("weight",))
    # The extreme pair is (0.25, 0.75): a difference of 0.5 in g.
    assert np.abs(laws.mean_diff).max() == pytest.approx(0.5 * 20.0)
    assert laws.sensitivity == pytest.approx(10.0)
    a, b = secret.pair_values(n)
    np.testing.assert_allclose(laws.mean_diff[:, 0], (a - b) * 20.0)
    np.testing.assert_allclose(laws.cov_a[:, 0, 0],
                               (a * 225.0 + (1 - a) * 100.0) / n)


def test_pointwise_hospital_sets_not_divisible_by_four():
    model = _groups(columns=("weight",), mean_in=[160.0], mean_out=[140.0],
                    cov_in=225.0, cov_out=100.0)
    secret = Secret.proportion("sex", "F", sets=HOSPITAL_SETS)
    # On 42 records g ranges over 11/42 .. 21/42 and 21/42 .. 31/42.
    laws = pair_laws([model], secret, 1 / 42, 42, ("weight",))
    assert laws.sensitivity == pytest.approx(20 / 42 * 20.0)


def test_pointwise_several_models_index_theta():
    models = [_groups(), _groups(mean_in=[170.0, 2.0]), _groups(p=0.1)]
    secret = Secret.proportion("sex", "F", pairs=[(0.4, 0.6), (0.3, 0.5)])
    laws = pair_laws(models, secret, 1 / 20, 20, ("weight", "bp"))
    assert laws.n_theta == 3
    assert laws.theta_index.tolist() == [0, 0, 1, 1, 2, 2]
    assert laws.mean_diff.shape == (6, 2) and laws.cov_a.shape == (6, 2, 2)
    # The second model's gap in weight is 30, the others' 20.
    assert laws.mean_diff[2, 0] == pytest.approx(-0.2 * 30.0)
    assert laws.mean_diff[0, 0] == pytest.approx(-0.2 * 20.0)


def test_concatenate():
    secret = Secret.proportion("sex", "F", pairs=[(0.4, 0.6)])
    one = pair_laws([_groups()], secret, 0.1, 10, ("weight", "bp"))
    two = pair_laws([_groups(), _groups(p=0.2)], secret, 0.1, 10, ("weight", "bp"))
    both = PairLaws.concatenate([one, two])
    assert both.n_theta == 3
    assert both.theta_index.tolist() == [0, 1, 2]
    np.testing.assert_array_equal(both.mean_diff,
                                  np.vstack([one.mean_diff, two.mean_diff]))


# -------------------------------------------------------------------- paper


def test_paper_reading_uses_the_midpoints():
    model = _groups()
    n = 50
    secret = Secret.proportion("sex", "F", sets=HOSPITAL_SETS, set_reading="paper")
    laws = pair_laws([model], secret, 1 / n, n, ("weight", "bp"))
    assert laws.mean_diff.shape == (1, 2)
    # 0.375 vs 0.625: a quarter of the gap between the groups' means.
    np.testing.assert_allclose(laws.mean_diff[0],
                               -0.25 * (model.mean_in - model.mean_out))
    np.testing.assert_allclose(
        laws.cov_a[0], (0.375 * model.cov_in + 0.625 * model.cov_out) / n)
    np.testing.assert_allclose(
        laws.cov_b[0], (0.625 * model.cov_in + 0.375 * model.cov_out) / n)
    assert laws.assumptions == (
        Assumption.of("secret.set-reading", reading="paper"),)


@pytest.mark.parametrize("column", ["weight", "blood_pressure", "temperature"])
def test_paper_reading_reproduces_the_hospital_figures(column):
    """Zhang et al. Sec. 4.2: sensitivity 6.125, 2.5, 0.075; variance 4.5, 2, 0.08."""
    theta = hospital_theta(column, variance="paper")
    secret = Secret.proportion("gender", "female", sets=HOSPITAL_SETS,
                               set_reading="paper")
    models = theta.models_for("gender")
    laws = pair_laws(models, secret, 1 / 50, 50, (column,))
    assert laws.n_theta == len(models) == laws.mean_diff.shape[0]
    assert laws.sensitivity == pytest.approx(HOSPITAL_PAPER[column]["sensitivity"])
    assert laws.min_variance[0] == pytest.approx(HOSPITAL_PAPER[column]["variance"])


# ---------------------------------------------------------- conditional-mean


def _set_law_by_loop(model, lo, hi, n, pmf):
    weights, means, covs = [], [], []
    for k in range(n + 1):
        if lo <= k / n <= hi and pmf(k) > 0:
            mean_k, cov_k = _sum_law_by_hand(model, k, n)
            weights.append(pmf(k))
            means.append(mean_k)
            covs.append(cov_k)
    w = np.array(weights) / sum(weights)
    means = np.array(means)
    centre = w @ means
    # Law of total covariance, E[Cov] + Cov[E], written as two sums.
    within = sum(wi * c for wi, c in zip(w, covs, strict=True))
    between = sum(wi * np.outer(m - centre, m - centre)
                  for wi, m in zip(w, means, strict=True))
    return centre, within + between


@pytest.mark.parametrize("n", [12, 40, 41])
def test_conditional_mean_reading_matches_enumeration(n):
    model = _groups()
    secret = Secret.proportion("sex", "F", sets=HOSPITAL_SETS,
                               set_reading="conditional-mean")
    laws = pair_laws([model], secret, 1 / n, n, ("weight", "bp"))

    def binom(k):
        return math.comb(n, k) * model.p**k * (1 - model.p) ** (n - k)

    mean_u, cov_u = _set_law_by_loop(model, 0.25, 0.5, n, binom)
    mean_v, cov_v = _set_law_by_loop(model, 0.5, 0.75, n, binom)
    np.testing.assert_allclose(laws.mean_diff[0], (mean_u - mean_v) / n, rtol=1e-10)
    np.testing.assert_allclose(laws.cov_a[0], cov_u / n**2, rtol=1e-9)
    np.testing.assert_allclose(laws.cov_b[0], cov_v / n**2, rtol=1e-9)
    assert laws.assumptions == (
        Assumption.of("secret.set-reading", reading="conditional-mean"),)
    # Each set is represented inside it: the difference is smaller than the
    # pointwise extreme.
    point = pair_laws([model], Secret.proportion("sex", "F", sets=HOSPITAL_SETS),
                      1 / n, n, ("weight", "bp"))
    assert laws.sensitivity < point.sensitivity


def test_conditional_mean_reading_joint_gaussian_truncated_normal():
    """Truncated-normal moments from the closed form, not scipy's truncnorm."""
    mu = np.array([0.55, 150.0])
    v = np.array([[0.24, 2.0], [2.0, 300.0]])
    model = JointGaussian(mean=mu, cov=v, columns=("weight",))
    n = 30
    secret = Secret.proportion("sex", "F", sets=HOSPITAL_SETS,
                               set_reading="conditional-mean")
    laws = pair_laws([model], secret, 1 / n, n, ("weight",))
    sd = math.sqrt(v[0, 0] / n)
    slope = v[0, 1] / v[0, 0]
    resid = v[1, 1] - v[0, 1] ** 2 / v[0, 0]
    moments = []
    for lo, hi in HOSPITAL_SETS:
        al, be = (lo - mu[0]) / sd, (hi - mu[0]) / sd
        z = stats.norm.cdf(be) - stats.norm.cdf(al)
        pa, pb = stats.norm.pdf(al), stats.norm.pdf(be)
        g_mean = mu[0] + sd * (pa - pb) / z
        g_var = sd**2 * (1 + (al * pa - be * pb) / z - ((pa - pb) / z) ** 2)
        # F = mean of h: mu_h + slope (g - mu_z) + noise of variance resid / n.
        moments.append((mu[1] + slope * (g_mean - mu[0]),
                        resid / n + slope**2 * g_var))
    assert laws.mean_diff[0, 0] == pytest.approx(moments[0][0] - moments[1][0],
                                                 rel=1e-9)
    assert laws.cov_a[0, 0, 0] == pytest.approx(moments[0][1], rel=1e-9)
    assert laws.cov_b[0, 0, 0] == pytest.approx(moments[1][1], rel=1e-9)


def test_conditional_mean_reading_refuses_an_impossible_set():
    model = _groups(p=0.0)
    secret = Secret.proportion("sex", "F", sets=HOSPITAL_SETS,
                               set_reading="conditional-mean")
    with pytest.raises(NotCertifiableError,
                       match=r"no dataset of 20 records has proportion\(sex == 'F'\) "
                             r"in \(0\.25, 0\.5\)"):
        pair_laws([model], secret, 1 / 20, 20, ("weight", "bp"))


def test_conditional_mean_reading_without_replacement_beyond_group_size():
    """n = 50 > 30 "in" records: the hypergeometric law never needs more than 30."""
    model = _groups(size_in=30, size_out=40, p=30 / 70)
    secret = Secret.proportion("sex", "F", sets=HOSPITAL_SETS,
                               set_reading="conditional-mean")
    laws = pair_laws([model], secret, 1 / 50, 50, ("weight", "bp"))
    assert np.all(np.isfinite(laws.mean_diff))
    # The pointwise reading needs 0.75 * 50 = 37.5 "in" records: refused.
    with pytest.raises(NotCertifiableError, match="only 30"):
        pair_laws([model], Secret.proportion("sex", "F", sets=HOSPITAL_SETS),
                  1 / 50, 50, ("weight", "bp"))


# -------------------------------------------------------------- mean secrets


def test_mean_secret_with_joint_gaussian():
    """Zhang et al. Sec. 4.2: Delta = V_ij / V_ii d(U), Var = (V_jj - V_ij^2/V_ii)/n."""
    v = np.array([[100.0, 30.0], [30.0, 25.0]])
    model = JointGaussian(mean=[50.0, 10.0], cov=v, columns=("bp",))
    n = 25
    secret = Secret.mean("age", pairs=[(40.0, 60.0)])
    laws = pair_laws([model], secret, 1 / n, n, ("bp",))
    assert laws.mean_diff[0, 0] == pytest.approx(0.3 * -20.0)
    assert laws.cov_a[0, 0, 0] == pytest.approx((25.0 - 9.0) / n)
    np.testing.assert_array_equal(laws.cov_a, laws.cov_b)
    window = Secret.mean("age", window=5.0, support=(20.0, 80.0))
    assert pair_laws([model], window, 1 / n, n, ("bp",)).sensitivity == (
        pytest.approx(0.3 * 5.0))


def test_mean_secret_with_group_moments_raises():
    secret = Secret.mean("age", pairs=[(40.0, 60.0)])
    with pytest.raises(InvalidParameterError, match="theta='gaussian'"):
        pair_laws([_groups()], secret, 0.1, 10, ("weight", "bp"))


def test_mismatched_model_columns_raise():
    secret = Secret.proportion("sex", "F", pairs=[(0.4, 0.6)])
    with pytest.raises(InvalidParameterError,
                       match=r"describes the statistics \['weight', 'bp'\] but the "
                             r"query releases \['bp', 'weight'\]"):
        pair_laws([_groups()], secret, 0.1, 10, ("bp", "weight"))
    with pytest.raises(InvalidParameterError, match="describes the statistics"):
        pair_laws([_groups(), _groups(columns=("a", "b"))], secret, 0.1, 10,
                  ("weight", "bp"))


def test_no_pairs_fail_closed(monkeypatch):
    """Whatever a secret yields, an empty set of pairs never calibrates to no noise."""
    secret = Secret.proportion("sex", "F", pairs=[(0.4, 0.6)])
    monkeypatch.setattr(Secret, "grid_pairs", lambda self, n, **kw: [])
    with pytest.raises(NotCertifiableError, match="no pair of values to hide"):
        pair_laws([_groups()], secret, 0.1, 10, ("weight", "bp"))


def test_a_model_of_more_columns_gives_its_exact_marginal():
    from skattr.theta import GroupMoments, JointGaussian

    secret = Secret.proportion("sex", "F", pairs=[(0.4, 0.6)])
    cov_in = np.array([[4.0, 1.0, 0.5], [1.0, 9.0, -2.0], [0.5, -2.0, 1.0]])
    cov_out = np.array([[3.0, 0.2, 0.1], [0.2, 8.0, 1.0], [0.1, 1.0, 2.0]])
    big = GroupMoments(mean_in=[1.0, 2.0, 3.0], mean_out=[0.0, 1.0, 5.0],
                       cov_in=cov_in, cov_out=cov_out, columns=("a", "b", "c"))
    small = GroupMoments(mean_in=[1.0, 3.0], mean_out=[0.0, 5.0],
                         cov_in=cov_in[np.ix_([0, 2], [0, 2])],
                         cov_out=cov_out[np.ix_([0, 2], [0, 2])],
                         columns=("a", "c"))
    got = pair_laws([big], secret, 0.1, 10, ("a", "c"))
    want = pair_laws([small], secret, 0.1, 10, ("a", "c"))
    np.testing.assert_array_equal(got.mean_diff, want.mean_diff)
    np.testing.assert_array_equal(got.cov_a, want.cov_a)
    np.testing.assert_array_equal(got.cov_b, want.cov_b)
    # Out of the model's order, or a column it lacks: refused.
    for columns in (("c", "a"), ("a", "d")):
        with pytest.raises(InvalidParameterError, match="describes the statistics"):
            pair_laws([big], secret, 0.1, 10, columns)
    joint = JointGaussian(mean=[0.5, 1.0, 2.0],
                          cov=[[0.25, 0.3, 0.1], [0.3, 4.0, 1.0], [0.1, 1.0, 9.0]],
                          columns=("x", "y"))
    part = joint.marginal(("y",))
    np.testing.assert_array_equal(part.mean, [0.5, 2.0])
    np.testing.assert_array_equal(part.cov, [[0.25, 0.1], [0.1, 9.0]])
    assert part.columns == ("y",)
