"""Means within each group of a secret (issue 43, item 6): the share hidden
exactly by subsampling to public sizes, each record by zCDP Gaussian noise.

The kept records' law under every secret is checked by enumeration (every
count vector of a group and every subsample of it, code that shares nothing
with skattr); the function's own draws against the subsample's
hypergeometric law; the noise against zCDP's closed form.
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from _oracle import compositions
from scipy import special, stats

import skattr
from skattr import Secret
from skattr.exceptions import DataValidationError, InvalidParameterError

SECRET = Secret.proportion("sex", "F", pairs=[(0.3, 0.5)])


@pytest.fixture(scope="module")
def people():
    rng = np.random.default_rng(1)
    n = 3000
    sex = np.where(rng.random(n) < 0.4, "F", "M")
    weight = np.where(sex == "F", rng.normal(62, 8, n), rng.normal(80, 10, n))
    return pd.DataFrame({"sex": sex, "weight": weight,
                         "height": rng.normal(170, 9, n)})


def _kept_mean_law(k, s, law, values):
    """Law of the mean of s records kept uniformly from k drawn from ``law``."""
    law = np.asarray(law, dtype=float)
    full = compositions(k, law.size)
    weight = np.exp(math.lgamma(k + 1) - special.gammaln(full + 1).sum(1)
                    + (full * np.log(law)).sum(1))
    out = {}
    for kept in compositions(s, law.size):
        p = float(weight @ (special.comb(full, kept).prod(axis=1)
                            / math.comb(k, s)))
        mean = round(float(np.dot(kept, values)) / s, 12)
        out[mean] = out.get(mean, 0.0) + p
    return out


@pytest.mark.parametrize("secret", [
    SECRET,
    Secret.proportion("sex", "F", window=0.1, support=(0.3, 0.6)),
    Secret.proportion("sex", "F", sets=[(0.2, 0.3), (0.5, 0.6)]),
])
def test_the_kept_means_have_one_law_under_every_secret(secret):
    """Before the noise, each group's released mean has one law for every
    group size the public sizes allow (to 1e-12); the whole group's mean
    does not."""
    from skattr._subsample import public_sizes

    n, values = 40, np.array([0.0, 1.0, 5.0])
    law_in, law_out = [0.5, 0.3, 0.2], [0.1, 0.3, 0.6]
    sizes = public_sizes(secret, n)
    ks = range(sizes.inside, n - sizes.outside + 1)
    laws = [(_kept_mean_law(k, sizes.inside, law_in, values),
             _kept_mean_law(n - k, sizes.outside, law_out, values))
            for k in ks]
    for inside, outside in laws[1:]:
        for got, want in ((inside, laws[0][0]), (outside, laws[0][1])):
            assert max(abs(got.get(x, 0) - want.get(x, 0))
                       for x in {*got, *want}) <= 1e-12
    whole = [_kept_mean_law(k, k, law_in, values) for k in (ks[0], ks[-1])]
    assert max(abs(whole[0].get(x, 0) - whole[1].get(x, 0))
               for x in {*whole[0], *whole[1]}) > 1e-3


def test_the_released_mean_is_a_uniform_subsample_s():
    """The function's own draws, on one dataset, at a noise far below the
    kept means' spacing: the kept mean follows the hypergeometric law of a
    uniform subsample of the group (chi-square over 500 releases)."""
    g = np.array(["F"] * 9 + ["M"] * 11)
    x = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2] + [1] * 11, dtype=float)
    data = pd.DataFrame({"sex": g, "x": x})
    seen = {}
    for seed in range(500):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", skattr.exceptions.PrivacyLeakWarning)
            out = skattr.group_means(data, "x", secret=SECRET,
                                     bounds={"x": (0, 2)}, epsilon=1e7,
                                     random_state=seed)
        s = out.group_sizes["inside"]
        total = int(round(out.values.iloc[0, 0] * s))
        seen[total] = seen.get(total, 0) + 1
    assert s == 6
    assert out.noise_sd.iloc[0, 0] < 0.01          # far below 1 / 6
    counts = np.array([4, 3, 2])                   # of 0, 1 and 2
    exact = {}
    for kept in compositions(s, 3):
        p = math.prod(math.comb(c, k) for c, k in zip(counts, kept,
                                                       strict=True))
        if p:
            total = int(kept[1] + 2 * kept[2])
            exact[total] = exact.get(total, 0) + p / math.comb(9, s)
    assert set(seen) <= set(exact)
    keys = sorted(exact)
    observed = np.array([seen.get(k, 0) for k in keys])
    assert stats.chisquare(observed, np.array([exact[k] for k in keys])
                           * 500).pvalue > 1e-3


def test_the_noise_is_zcdp_s_closed_form(people):
    eps, delta = 1.0, 1e-6
    big_l = math.log(1 / delta)
    rho = (math.sqrt(big_l + eps) - math.sqrt(big_l)) ** 2
    bounds = {"weight": (30.0, 150.0), "height": (140.0, 200.0)}
    for neighbours, each in (("any", rho / 2), ("same-group", rho)):
        out = skattr.group_means(people, ["weight", "height"], secret=SECRET,
                                 bounds=bounds, neighbours=neighbours,
                                 random_state=0)
        for row, g in zip(out.noise_sd.index, ("inside", "outside"),
                          strict=True):
            s = out.group_sizes[g]
            for c, (lo, hi) in bounds.items():
                want = (hi - lo) / s / math.sqrt(2 * each / 2)
                assert out.noise_sd.loc[row, c] == pytest.approx(want,
                                                                 rel=1e-12)
        cert = out.records_certificate
        assert cert.epsilon == pytest.approx(eps, rel=1e-12)
        assert [a.kind for a in cert.assumed if a.opt_in] == (
            [] if neighbours == "any" else ["records.same-group"])
    assert out.group_sizes == {"inside": 900, "outside": 1500}
    assert (out.certificate.epsilon, out.certificate.delta) == (0.0, 0.0)


def test_the_noise_has_that_sd():
    """Each group's values alike: every subsample has the same mean, so the
    residuals are the noise alone (a chi-square test of their variance)."""
    data = pd.DataFrame({"sex": ["F"] * 400 + ["M"] * 600,
                         "x": [1.0] * 400 + [3.0] * 600})
    residual = []
    for seed in range(200):
        out = skattr.group_means(data, "x", secret=SECRET, epsilon=0.5,
                                 bounds={"x": (0, 4)}, random_state=seed)
        residual += list((out.values["x"].to_numpy() - [1.0, 3.0])
                         / out.noise_sd["x"].to_numpy())
    statistic = float(np.sum(np.square(residual)))
    assert stats.chi2.sf(statistic, len(residual)) > 1e-4
    assert stats.chi2.cdf(statistic, len(residual)) > 1e-4


def test_the_means_are_each_group_s_and_say_both_guarantees(people):
    before = people.copy()
    out = people.attrpriv.group_means(
        ["weight"], secret=SECRET, bounds={"weight": (30, 150)}, epsilon=2.0,
        random_state=0)
    pd.testing.assert_frame_equal(people, before)            # not mutated
    women, men = out.values["weight"]
    assert abs(women - 62) < 1.5 and abs(men - 80) < 1.5
    interval = out.conf_int(0.05)
    assert (interval["lower"] < out.values).all().all()
    words = out.in_plain_words()
    assert "hidden exactly" in words and "(2, 1e-06)-differential" in words
    assert "the means were computed from 900 records" in words
    text = out.summary()
    assert "weight [30, 150]" in text and "Assumes:" in text
    # From a public reference: its robust range.
    ref = people.sample(500, random_state=2)
    read = skattr.group_means(people, "height", secret=SECRET, reference=ref,
                              random_state=0)
    lo, hi = read.bounds["height"]
    assert ref.height.min() <= lo < hi <= ref.height.max()


def test_distributional_privacy_counts_the_size_bound_in_delta(people):
    out = skattr.group_means(people, "weight", secret=SECRET,
                             bounds={"weight": (30, 150)}, delta=1e-5,
                             privacy="distributional", random_state=0)
    assert out.certificate.delta == 1e-5
    assert out.group_sizes["inside"] < 900
    assert "chance at most 1e-05" in out.in_plain_words()


def test_bad_input_is_refused_before_a_value_is_read(people, monkeypatch):
    from skattr import _group_means

    cases = [
        (dict(secret=None), InvalidParameterError, "Secret.proportion"),
        (dict(secret=Secret.mean("weight", pairs=[(60, 70)])),
         InvalidParameterError, "Secret.proportion"),
        (dict(bounds=None), InvalidParameterError, "public information"),
        (dict(bounds={"weight": (5, 5)}), InvalidParameterError, "low < high"),
        (dict(bounds={"wieght": (0, 1)}), InvalidParameterError, "not among"),
        (dict(bounds={"weight": (30, 150)}, epsilon=0),
         InvalidParameterError, "epsilon"),
        (dict(bounds={"weight": (30, 150)}, neighbours="all"),
         InvalidParameterError, "neighbours"),
        (dict(bounds={"weight": (30, 150)}, secret=Secret.proportion(
            "sex", "F", pairs=[(0.0, 0.5)])), InvalidParameterError,
         "strictly between 0 and 1"),
    ]
    calls = []
    monkeypatch.setattr(_group_means, "subsample_groups",
                        lambda *a, **k: calls.append(1))
    for given, error, match in cases:
        params = {"secret": SECRET, "random_state": 0, **given}
        with pytest.raises(error, match=match):
            skattr.group_means(people, "weight", **params)
    with pytest.raises(InvalidParameterError, match="secret's column"):
        skattr.group_means(people, "sex", secret=SECRET)
    with pytest.raises(InvalidParameterError, match="no column"):
        skattr.group_means(people, "age", secret=SECRET)
    with pytest.raises(InvalidParameterError, match="n = \\d+ records"):
        skattr.group_means(people.iloc[:3], "weight", secret=SECRET,
                           bounds={"weight": (30, 150)})
    with pytest.raises(DataValidationError, match="NaN"):
        skattr.group_means(people.assign(weight=people.weight.where(
            people.index > 0)), "weight", secret=SECRET,
            bounds={"weight": (30, 150)})
    with pytest.raises(DataValidationError, match="not numeric"):
        skattr.group_means(people.assign(weight="heavy"), "weight",
                           secret=SECRET, bounds={"weight": (30, 150)})
    with pytest.raises(DataValidationError, match="DataFrame"):
        skattr.group_means(people.to_numpy(), "weight", secret=SECRET)
    assert calls == []


def test_data_outside_the_secret_releases_nothing(people):
    few = pd.concat([people[people.sex == "F"].iloc[:100],
                     people[people.sex == "M"]], ignore_index=True)
    with pytest.raises(DataValidationError, match="Nothing was released"):
        skattr.group_means(few, "weight", secret=SECRET,
                           bounds={"weight": (30, 150)})


def test_it_is_public_and_warns_nothing(people):
    assert "group_means" in skattr.__all__ and "GroupMeans" in skattr.__all__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        skattr.group_means(people, "weight", secret=SECRET,
                           bounds={"weight": (30, 150)}, random_state=0)


def test_newcomers_mistakes_get_skattr_errors(people):
    bounds = {"weight": (30, 150)}
    with pytest.raises(InvalidParameterError, match="Did you mean 'epsilon'"):
        people.attrpriv.group_means("weight", secret=SECRET, bounds=bounds,
                                    epsilom=1.0)
    with pytest.raises(InvalidParameterError, match="needs the columns"):
        people.attrpriv.group_means(secret=SECRET, bounds=bounds)
    with pytest.raises(InvalidParameterError):
        skattr.group_means(people, ["weight", "weight"], secret=SECRET,
                           bounds=bounds)
    with pytest.raises(DataValidationError, match="no records"):
        skattr.group_means(people, "weight", secret=SECRET,
                           reference=people.iloc[:0])
    with pytest.raises(InvalidParameterError, match="next to nothing"):
        skattr.group_means(people, "weight", secret=SECRET, bounds=bounds,
                           delta=0.5)
    with pytest.warns(skattr.exceptions.PrivacyLeakWarning, match="epsilon"):
        skattr.group_means(people, "weight", secret=SECRET, bounds=bounds,
                           epsilon=1e300, random_state=0)
    # A predicate's group is named by its rows' labels.
    odd = Secret.proportion("sex", skattr.predicates.OneOf(["F", "X"]),
                            pairs=[(0.3, 0.5)])
    out = skattr.group_means(people, "weight", secret=odd, bounds=bounds,
                             random_state=0)
    assert out.values.index[1] == f"not {out.values.index[0]}"
    assert out.values.index[0] == "sex: OneOf(['F', 'X'])"
    assert "The share of the records with sex: OneOf(['F', 'X']) is" in \
        out.in_plain_words()
