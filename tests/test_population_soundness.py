"""Certificates against the population the reference was sampled from (issue 27).

A user's reference data is a sample. These tests draw many references from a
known population, plan the default release on each, and compute the release's
true privacy against the population's law, with code that shares nothing with
skattr: the exact law of a count (two binomials), convolved with the plan's
noise on a fine grid. A certificate is false when the true delta at the
certified epsilon exceeds the certified delta by more than 10%.

The default path does not yet carry the reference's sampling error (issue 27,
item 1), so its cases are strict expected failures: they pass (and so fail,
as strict xfails do) once the defaults hold for the population at their
stated confidence, and must then become plain tests. ``ConfidenceBox``, the
count Theta that does carry it, is checked as a plain test.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import skattr


def _noisy_density(pmf, noise, scale, grid):
    """Density (or pmf, without noise) of count + noise on ``grid``."""
    support = np.arange(pmf.size)
    if scale == 0:
        return pmf
    if noise == "laplace":
        kernel = stats.laplace(scale=scale)
    else:
        kernel = stats.norm(scale=scale)
    return (pmf[None, :] * kernel.pdf(grid[:, None] - support[None, :])).sum(axis=1)


def _true_delta(pmf_a, pmf_b, noise, scale, epsilon):
    """The hockey-stick divergence of the two noisy laws, both ways."""
    if scale == 0:
        return max(np.maximum(0, pmf_a - np.exp(epsilon) * pmf_b).sum(),
                   np.maximum(0, pmf_b - np.exp(epsilon) * pmf_a).sum())
    n = pmf_a.size - 1
    grid = np.linspace(-40 * scale, n + 40 * scale, 40_001)
    step = grid[1] - grid[0]
    p, q = (_noisy_density(f, noise, scale, grid) for f in (pmf_a, pmf_b))
    return max(np.maximum(0, p - np.exp(epsilon) * q).sum() * step,
               np.maximum(0, q - np.exp(epsilon) * p).sum() * step)


def _count_pmf(k, n, p_in, p_out):
    """Law of Bin(k, p_in) + Bin(n - k, p_out), by convolution."""
    return np.convolve(stats.binom.pmf(np.arange(k + 1), k, p_in),
                       stats.binom.pmf(np.arange(n - k + 1), n - k, p_out))


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "issue 27: the default count takes the reference's frequencies as the "
    "population's; a reference with no 1 releases the count with no noise"))
def test_the_default_count_of_a_rare_value_holds_for_the_population():
    # The setting: P = 0.10 in the group and 0.02 outside, n = 100,
    # pair 0.4 / 0.6, references of 10 + 10 records (the fewest skattr takes).
    rng = np.random.default_rng(27)
    p_in, p_out, n, pairs, epsilon = 0.10, 0.02, 100, (0.4, 0.6), 1.0
    secret = skattr.Secret.proportion("g", 1, pairs=[pairs])
    laws = [_count_pmf(round(a * n), n, p_in, p_out) for a in pairs]
    draws, false = 40, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(draws):
            g = np.repeat([1, 0], 10)
            x = (rng.random(20) < np.where(g == 1, p_in, p_out)).astype(int)
            reference = pd.DataFrame({"g": g, "x": x})
            private = reference.sample(n, replace=True, random_state=0)
            try:
                plan = private.attrpriv.plan(["x"], statistic="count", value=1,
                                             secret=secret, reference=reference)
            except skattr.exceptions.NotCertifiableError:
                continue            # a refusal is never a false certificate
            scale = (plan.noise_scale if plan.noise == "laplace" else
                     float(np.sqrt(plan.noise_covariance[0, 0])))
            delta = _true_delta(*laws, plan.noise, scale, plan.epsilon)
            assert plan.epsilon <= epsilon * (1 + 1e-9)
            false += delta > 1.1 * max(plan.delta, 1e-12)
    # At a stated confidence of 1 - 1e-3, even one false certificate in 40
    # draws has probability 0.04, and two 8e-4.
    assert false <= 1, f"{false} of {draws} certificates are false"


@pytest.mark.slow
def test_a_confidence_box_count_holds_for_the_population():
    # theta=ConfidenceBox(): the count laws over the reference's simultaneous
    # Clopper-Pearson box hold for the population (at 0.999 over the
    # reference), a value the reference never shows included. The plug-in
    # (theta="moments") on the same references is false about a third of the
    # time: the check can tell. n = 20: with a box corner at p = 0 the branch
    # and bound takes about 1 s a plan here, 18 s at n = 100 (issue 28).
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
