"""Attribute-private RAP (issue 30, item 2): the groups' histograms, their
certificate against the exact law of the release (computed here with SciPy's
binomial and normal laws alone), the coupling's tail by direct simulation, an
empirical audit with a positive control, and the estimator's shape."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from skattr import Secret
from skattr.audit import threshold_test
from skattr.calibration import gaussian_delta
from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
    NotCertifiableError,
)
from skattr.synth import AttributePrivateRAP
from skattr.synth._ap_rap import group_answers

CATS = {"sex": ["F", "M"], "job": ["a", "b", "c"], "age": ["young", "old"]}


def _rap(**params):
    base = dict(categories=CATS, secret=Secret.proportion(
        "sex", "F", pairs=[(0.3, 0.5)]), progress=False, random_state=0)
    return AttributePrivateRAP(**{**base, **params})


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    n = 2000
    sex = np.where(rng.random(n) < 0.35, "F", "M")
    job = np.where(sex == "F", rng.choice(["a", "b"], n),
                   rng.choice(["b", "c"], n))
    age = np.where(rng.random(n) < 0.4, "young", "old")
    return pd.DataFrame({"sex": sex, "job": job, "age": age})


# ------------------------------------------------------------- the statistic
def test_each_group_s_histograms_are_its_crosstabs(frame):
    from skattr.synth import OneHotDomain
    domain = OneHotDomain(CATS)
    workload = [(1,), (1, 2), (0, 1, 2)]
    got = group_answers(domain, domain.onehot(frame), np.array([True, False]),
                        "sex", workload)
    for g, rows in (("inside", frame.sex == "F"), ("outside", frame.sex != "F")):
        part = frame[rows]
        for marginal, values in zip(workload, got[g], strict=True):
            columns = [domain.columns[j] for j in marginal]
            counts = part.groupby(columns).size()
            cells = list(itertools.product(*[CATS[c] for c in columns]))
            want = np.array([counts.get(c if len(c) > 1 else c[0], 0)
                             for c in cells]) / len(part)
            np.testing.assert_allclose(values, want, atol=1e-12)


# ------------------------------------------- the certificate: exact law, n = 10
def _mixture_density(size, p, sd, y):
    """Density of (2 h - 1) / sqrt(2) + N(0, sd^2), h = Binomial(size, p) / size.

    A two-cell histogram (h, 1 - h) with independent N(0, sd^2) noise on
    each cell: its component along (1, -1) / sqrt(2) carries h, the other
    component is the same noise under both secrets and drops out exactly.
    """
    k = np.arange(size + 1)
    weights = stats.binom.pmf(k, size, p)
    centres = (2 * k / size - 1) / math.sqrt(2)
    return (weights[:, None] * stats.norm.pdf(y[None, :], centres[:, None],
                                              sd)).sum(axis=0)


def _exact_delta(n, inside_a, inside_b, p_in, p_out, sd_in, sd_out, eps):
    """Both directions' hockey-stick divergence of the two noisy releases."""
    y_in = np.linspace(-1 - 9 * sd_in, 1 + 9 * sd_in, 2001)
    y_out = np.linspace(-1 - 9 * sd_out, 1 + 9 * sd_out, 2001)
    cell = (y_in[1] - y_in[0]) * (y_out[1] - y_out[0])
    law_a = np.outer(_mixture_density(inside_a, p_in, sd_in, y_in),
                     _mixture_density(n - inside_a, p_out, sd_out, y_out))
    law_b = np.outer(_mixture_density(inside_b, p_in, sd_in, y_in),
                     _mixture_density(n - inside_b, p_out, sd_out, y_out))
    return cell * max(np.clip(law_a - math.exp(eps) * law_b, 0, None).sum(),
                      np.clip(law_b - math.exp(eps) * law_a, 0, None).sum())


@pytest.mark.slow
def test_the_certified_noise_holds_against_the_exact_law():
    """One binary column, its 1-way marginal in each group, n = 10 records,
    3 vs 5 of them in the group: the release's exact law under both secrets
    for several group laws; the certified delta holds for each, and an eighth
    of the noise breaks it (so this test can fail)."""
    cats = {"sex": ["F", "M"], "x": [0, 1]}
    eps, delta = 1.0, 1e-3
    rap = AttributePrivateRAP(categories=cats, epsilon=eps, delta=delta,
                              secret=Secret.proportion("sex", "F",
                                                       pairs=[(0.3, 0.5)]))
    *_, sd = rap._calibrate(10, 1)
    broken = 0.0
    for p_in, p_out in [(0.5, 0.5), (0.1, 0.9), (0.3, 0.6), (0.02, 0.98)]:
        exact = _exact_delta(10, 3, 5, p_in, p_out, sd["inside"],
                             sd["outside"], eps)
        assert exact <= delta
        broken = max(broken, _exact_delta(10, 3, 5, p_in, p_out,
                                          sd["inside"] / 8,
                                          sd["outside"] / 8, eps))
    assert broken > delta


@pytest.mark.slow
def test_the_coupled_distance_s_tail_holds_by_simulation():
    """Draw the coupling itself (shared, moved and stayed records) for laws of
    three columns, three marginals, and check the whitened distance's upper
    quantiles against the bound sqrt(V) (1 + sqrt(log(1 / q)))."""
    rng = np.random.default_rng(1)
    n, a, b = 200, 0.3, 0.45
    inside, moved = round(a * n), round((b - a) * n)
    stayed = n - inside - moved
    sizes = (2, 3, 4)
    marginals = [(0,), (0, 1), (1, 2)]
    sd_in, sd_out = 0.7, 1.3

    def cells(rows):
        """One-hot cells of each marginal, stacked: (records, all cells)."""
        parts = []
        for m in marginals:
            index = np.ravel_multi_index(tuple(rows[:, j] for j in m),
                                         [sizes[j] for j in m])
            parts.append(np.eye(int(np.prod([sizes[j] for j in m])))[index])
        return np.hstack(parts)

    def draw(law, count, reps):
        flat = rng.choice(law.size, size=(reps, count), p=law.ravel())
        return np.stack(np.unravel_index(flat, sizes), axis=-1)

    reps = 8_000
    for concentrated in (False, True):
        shape = np.ones(sizes) if not concentrated else rng.random(sizes) ** 8
        law_in = shape / shape.sum()
        law_out = rng.random(sizes)
        law_out /= law_out.sum()
        x = cells(draw(law_in, inside, reps).reshape(-1, 3)).reshape(
            reps, inside, -1)
        v = cells(draw(law_in, moved, reps).reshape(-1, 3)).reshape(
            reps, moved, -1)
        u = cells(draw(law_out, moved, reps).reshape(-1, 3)).reshape(
            reps, moved, -1)
        y = cells(draw(law_out, stayed, reps).reshape(-1, 3)).reshape(
            reps, stayed, -1)
        d_in = ((x.sum(1) + v.sum(1)) / (inside + moved)
                - x.sum(1) / inside) / sd_in
        d_out = (y.sum(1) / stayed
                 - (u.sum(1) + y.sum(1)) / (moved + stayed)) / sd_out
        z = np.sqrt((d_in ** 2).sum(1) + (d_out ** 2).sum(1))
        k = len(marginals)
        v_bound = (k / sd_in ** 2 * moved / (inside * (inside + moved))
                   + k / sd_out ** 2 * moved / ((moved + stayed) * stayed))
        for q in (0.5, 0.1, 0.01, 1e-3):
            bound = math.sqrt(v_bound) * (1 + math.sqrt(math.log(1 / q)))
            assert np.quantile(z, 1 - q) <= bound
        # The bound is not vacuous: Z reaches a third of sqrt(V) at the median.
        assert np.median(z) > math.sqrt(v_bound) / 3


def test_the_certificate_s_noise_grows_with_the_marginals_and_epsilon():
    rap = _rap(epsilon=1.0)
    *_, sd1 = rap._calibrate(1000, 4)
    *_, sd4 = rap._calibrate(1000, 16)
    assert sd4["inside"] == pytest.approx(2 * sd1["inside"], rel=1e-3)
    *_, loose = _rap(epsilon=2.0)._calibrate(1000, 4)
    assert loose["inside"] < sd1["inside"]
    # The smaller group (inside, 30-50%) moves more, so it gets more noise.
    assert sd1["inside"] > sd1["outside"]


@pytest.mark.slow
def test_the_distance_law_certifies_what_its_bound_says():
    """The law's delta at the certified noise: recomputed from its tail bound
    by integrating the Gaussian delta against exp(-t^2) (no library law)."""
    rap = _rap(epsilon=1.0, delta=1e-3)
    share, sizes, law, tau, sd = rap._calibrate(1000, 8)
    r_in, r_out = (float(r[0]) for r in sizes.rates())
    units = np.array([sd["inside"], sd["outside"]]) / tau
    root = math.sqrt(8 / units[0] ** 2 * r_in + 8 / units[1] ** 2 * r_out)
    t = np.linspace(0, 27, 20_001)
    tail = np.exp(-t ** 2)

    def lower(scale):
        """E g(root (1 + T)) from below: g's steps weighed by the right tails."""
        g = np.array([gaussian_delta(root * (1 + s) / (scale * tau), 1.0)
                      for s in t])
        return g[0] + np.sum(np.diff(g) * tail[1:])

    assert lower(1.0) <= 1e-3
    # A tenth less noise is not certified by the same bound.
    assert lower(0.9) > 1e-3


# ------------------------------------------------------------------- audit
@pytest.mark.audit
def test_an_audit_finds_nothing_and_flags_the_positive_control():
    """Many releases of one column's histograms in each group, on datasets
    of exactly 30 and 50 of 100 records in the group. The attacker knows
    the group laws and measures each histogram's dispersion around them (a
    test of the group's size); the certified noise passes, a fiftieth of it
    is flagged (a twentieth is found at about epsilon 1: the certificate is
    conservative, docs/synthetic.md)."""
    cats = {"sex": ["F", "M"], "x": ["a", "b", "c", "d"]}
    eps, delta, n = 1.0, 1e-3, 100
    rap = AttributePrivateRAP(categories=cats, epsilon=eps, delta=delta,
                              k=1, secret=Secret.proportion(
                                  "sex", "F", pairs=[(0.3, 0.5)]))
    *_, sd = rap._calibrate(n, 2)
    rng = np.random.default_rng(2)
    p_in, p_out = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])
    reps = 40_000

    def outputs(inside, scale):
        h_in = rng.multinomial(inside, p_in, size=reps) / inside
        h_out = rng.multinomial(n - inside, p_out, size=reps) / (n - inside)
        y_in = h_in + scale * sd["inside"] * rng.standard_normal(h_in.shape)
        y_out = h_out + scale * sd["outside"] * rng.standard_normal(
            h_out.shape)
        return np.column_stack([((y_in - p_in) ** 2).sum(1),
                                ((y_out - p_out) ** 2).sum(1)])

    found = threshold_test(outputs(30, 1.0), outputs(50, 1.0), delta, 0.05)
    assert found.epsilon_lower_bound <= eps
    control = threshold_test(outputs(30, 0.02), outputs(50, 0.02), delta,
                             0.05)
    assert control.epsilon_lower_bound > eps


# ----------------------------------------------------------- the estimator
def test_the_synthetic_table_has_the_stated_share_and_the_group_s_categories(
        frame):
    rap = _rap(privacy="dataset", share=0.25, n_synthetic=200,
               iterations=200, secret=Secret.proportion(
                   "sex", "F", pairs=[(0.3, 0.4)])).fit(frame)
    out = rap.sample(800, random_state=3)
    assert out.shape == (800, 3) and list(out.columns) == list(CATS)
    assert (out.sex == "F").mean() == 0.25
    assert set(out.job) <= set(CATS["job"])
    again = rap.sample(800, random_state=3)
    pd.testing.assert_frame_equal(out, again)
    # Not the data's share (0.35): the table carries only the stated one.
    assert rap.share_ == 0.25
    default = _rap(n_synthetic=50, iterations=20).fit(frame)
    assert default.share_ == pytest.approx(0.4)      # middle of 0.3 vs 0.5


@pytest.mark.slow
def test_the_groups_look_like_their_data_at_a_large_epsilon(frame):
    rap = _rap(epsilon=200.0, k=2, n_synthetic=500).fit(frame)
    out = rap.sample(4000, random_state=0)
    women, men = out[out.sex == "F"], out[out.sex == "M"]
    # Women hold jobs a and b only, men b and c (the data's structure).
    assert (women.job == "c").mean() < 0.1 and (men.job == "a").mean() < 0.1
    assert rap.sigma_["inside"] < 0.02


def test_the_certificate_says_what_it_assumes(frame):
    rap = _rap(n_synthetic=50, iterations=20).fit(frame)
    cert = rap.certificate_
    assert cert.epsilon == 1.0 and cert.delta == 1e-3
    assert cert.assumes("records.independent")
    assert not cert.assumes("law.gaussian") and not any(
        a.opt_in for a in cert.assumed)
    assert "McDiarmid" in cert.method and "every law" in cert.method
    assert cert.guarantee == "dataset attribute privacy"


def test_bad_input_gets_a_clear_error(frame):
    with pytest.raises(InvalidParameterError, match="secret="):
        AttributePrivateRAP(categories=CATS).fit(frame)
    with pytest.raises(InvalidParameterError, match="not among the domain"):
        _rap(secret=Secret.proportion("race", "x", pairs=[(0.3, 0.5)])
             ).fit(frame)
    with pytest.raises(InvalidParameterError, match="Secret.proportion"):
        _rap(secret=Secret.mean("sex", pairs=[(0.3, 0.5)])).fit(frame)
    with pytest.raises(InvalidParameterError, match="every category"):
        _rap(secret=Secret.proportion("sex", lambda s: s != "X",
                                      pairs=[(0.3, 0.5)])).fit(frame)
    with pytest.raises(InvalidParameterError, match="outside its categories"):
        _rap().fit(frame.assign(job=frame.job.where(frame.index > 0, "zz")))
    with pytest.raises(NotCertifiableError, match="no record inside"):
        _rap(n_synthetic=10, iterations=5, privacy="distributional").fit(
            frame[frame.sex == "M"])
    with pytest.raises(NotCertifiableError, match="without records"):
        _rap(secret=Secret.proportion("sex", "F", pairs=[(0.0, 0.5)])
             ).fit(frame)
    with pytest.raises(DataValidationError, match="DataFrame"):
        _rap().fit(frame.to_numpy())
    fitted = _rap(n_synthetic=20, iterations=5).fit(frame)
    for n in (0, -1, 2.5, True):
        with pytest.raises(InvalidParameterError, match="positive int"):
            fitted.sample(n)


# ------------------------------------------- the noise, recomputed independently
def _gaussian_delta(d, eps):
    """Balle and Wang's exact delta of a Gaussian shift of d sds."""
    d = np.maximum(np.asarray(d, dtype=float), 1e-300)
    return (stats.norm.cdf(d / 2 - eps / d)
            - math.exp(eps) * stats.norm.cdf(-d / 2 - eps / d))


def _independent_sd(n, a, b, marginals, share, eps, delta):
    """The least noise the bound certifies, written out from the proof.

    Group sizes of the pair, each group's rate m / (A B) and
    m / ((n - A) C), the Lagrange split sd_g^2 ~ sqrt(rate_g) / w_g, V, the
    almost-sure cap, the tail exp(-t^2), the expected Gaussian delta
    integrated over t, and a bisection on the scale.
    """
    inside, moved = round(a * n), round((b - a) * n)
    stayed = n - inside - moved
    rate_in = moved / (inside * (inside + moved))
    rate_out = moved / ((stayed + moved) * stayed)
    units = np.sqrt(np.sqrt([rate_in, rate_out]) / np.array([share, 1 - share]))
    s2 = marginals / units ** 2
    root = math.sqrt(s2[0] * rate_in + s2[1] * rate_out)
    cap = math.sqrt(2 * ((moved / (inside + moved)) ** 2 * s2[0]
                         + (moved / (stayed + moved)) ** 2 * s2[1]))
    t = np.linspace(0.0, 27.0, 400_001)
    distance = np.minimum(root * (1 + t), cap)
    tail = np.exp(-t ** 2)

    def certified(tau):
        g = _gaussian_delta(distance / tau, eps)
        # E g(Z) <= g(Z's least value) + sum of g's steps times the tail.
        return g[0] + np.sum(np.diff(g) * tail[:-1]) <= delta

    lo, hi = 1e-6, 1e3
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if certified(mid) else (mid, hi)
    return hi * units


@pytest.mark.slow
@pytest.mark.parametrize("n,pair,marginals", [(1000, (0.3, 0.4), 8),
                                              (400, (0.25, 0.5), 64),
                                              (20, (0.3, 0.4), 1)])
def test_the_noise_is_the_one_the_bound_certifies(n, pair, marginals):
    """The estimator's sd against the proof's, recomputed from scratch: not
    less (valid), and within 1% (not more noise than the bound asks)."""
    rap = _rap(secret=Secret.proportion("sex", "F", pairs=[pair]),
               epsilon=1.0, delta=1e-3)
    *_, sd = rap._calibrate(n, marginals)
    want = _independent_sd(n, *pair, marginals, sum(pair) / 2, 1.0, 1e-3)
    got = np.array([sd["inside"], sd["outside"]])
    assert np.all(got >= want * (1 - 1e-4))
    assert np.all(got <= want * 1.01)


@pytest.mark.slow
def test_fit_adds_that_noise_to_the_true_histograms(frame):
    """Standardised residuals of the release: the estimator's own fit, its
    workload of 64... marginals here all 7 of three columns, against the
    crosstabs; their sd is 1 and the sd is the bound's for that workload."""
    rap = _rap(k=1, n_marginals=None, n_synthetic=20, iterations=5,
               privacy="dataset", secret=Secret.proportion(
                   "sex", "F", pairs=[(0.3, 0.4)]))
    frame = frame.iloc[:1000]
    residuals = []
    for seed in range(40):
        rap.set_params(random_state=seed).fit(frame)
        from skattr.synth import OneHotDomain
        domain = OneHotDomain(CATS)
        truth = group_answers(domain, domain.onehot(frame),
                              np.array([True, False]), "sex", rap.workload_)
        for g in ("inside", "outside"):
            residuals += [(y - t) / rap.sigma_[g] for y, t in
                          zip(rap.noisy_answers_[g], truth[g], strict=True)]
    residuals = np.concatenate(residuals)
    assert abs(residuals.std() - 1) < 0.05 and abs(residuals.mean()) < 0.05
    want = _independent_sd(1000, 0.3, 0.4, len(rap.workload_), 0.35, 1.0,
                           1e-3)
    assert rap.sigma_["inside"] == pytest.approx(want[0], rel=0.01)


def test_the_distributional_sizes_are_the_binomial_quantiles():
    """Each bound fails with chance at most failure / 3 (SciPy's cdf and sf
    written out), and is the tightest such."""
    from skattr.laws._group_histograms import group_sizes

    n, a, b, failure = 500, 0.3, 0.45, 1e-4
    sizes = group_sizes(n, [(a, b)], "distributional", failure)
    inside, moved, stayed = (int(x[0]) for x in (sizes.inside, sizes.moved,
                                                  sizes.outside))
    third = failure / 3
    assert stats.binom.sf(moved, n, b - a) <= third          # P(m > bound)
    assert stats.binom.sf(moved - 1, n, b - a) > third
    assert stats.binom.cdf(inside - 1, n, a) <= third        # P(A < bound)
    assert stats.binom.cdf(inside, n, a) > third
    assert stats.binom.cdf(stayed - 1, n, 1 - b) <= third
    assert stats.binom.cdf(stayed, n, 1 - b) > third
    assert sizes.failure == failure
    # Their rates are the proof's, read at the bounds.
    r_in, r_out = (float(r[0]) for r in sizes.rates())
    assert r_in == pytest.approx(moved / (inside * (inside + moved)))
    assert r_out == pytest.approx(moved / ((stayed + moved) * stayed))
