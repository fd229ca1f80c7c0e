"""Tests for the certified privacy profiles of discrete laws plus noise."""

import functools
import math
from fractions import Fraction
from math import comb

import mpmath
import numpy as np
import pytest
from scipy import special, stats

import skattr.calibration._exact_profile as exact_profile
from skattr.calibration._exact_profile import (
    discrete_epsilon,
    discrete_gaussian_delta,
    discrete_laplace_delta,
    discrete_pair_delta,
)
from skattr.calibration._gaussian import gaussian_delta
from skattr.exceptions import InvalidParameterError

PROFILES = {"gaussian": discrete_gaussian_delta, "laplace": discrete_laplace_delta}


# --------------------------------------------------------------------------------
# Independent references
# --------------------------------------------------------------------------------


def _union(support_p, pmf_p, support_q, pmf_q):
    atoms = sorted(set(map(float, support_p)) | set(map(float, support_q)))
    p = dict.fromkeys(atoms, 0.0)
    q = dict.fromkeys(atoms, 0.0)
    for x, w in zip(support_p, pmf_p, strict=True):
        p[float(x)] += float(w)
    for x, w in zip(support_q, pmf_q, strict=True):
        q[float(x)] += float(w)
    return atoms, [p[a] for a in atoms], [q[a] for a in atoms]


def _mp_reference(support_p, pmf_p, support_q, pmf_q, noise, scale, eps):
    """Integral of (p - e^eps q)_+ in 40-digit arithmetic, split at its roots.

    Roots are bracketed on a fine float grid (log densities, so nothing
    underflows), refined by bisection in mpmath, and each positive piece is
    integrated in closed form from the noise's CDF.
    """
    atoms, p, q = _union(support_p, pmf_p, support_q, pmf_q)
    with mpmath.workdps(40):
        s = mpmath.mpf(scale)
        d = [mpmath.mpf(a) - mpmath.exp(mpmath.mpf(eps)) * mpmath.mpf(b)
             for a, b in zip(p, q, strict=True)]
        xs = [mpmath.mpf(x) for x in atoms]
        if noise == "gaussian":
            def density(z):
                return mpmath.npdf(z / s) / s

            def cdf(z):
                return mpmath.ncdf(z / s)

            lo, hi, step = atoms[0] - 60 * scale, atoms[-1] + 60 * scale, scale / 200
        else:
            def density(z):
                return mpmath.exp(-abs(z) / s) / (2 * s)

            def cdf(z):
                if z < 0:
                    return mpmath.exp(z / s) / 2
                return 1 - mpmath.exp(-z / s) / 2

            lo, hi, step = atoms[0] - 5 * scale, atoms[-1] + 5 * scale, scale / 200

        def f(y):
            return mpmath.fsum(di * density(y - xi) for di, xi in zip(d, xs,
                                                                       strict=True))

        grid = np.arange(lo, hi + step, step)
        z = grid[:, None] - np.asarray(atoms)[None, :]
        if noise == "gaussian":
            log_k = -0.5 * (z / scale) ** 2
        else:
            log_k = -np.abs(z) / scale
        with np.errstate(divide="ignore"):
            log_p = special.logsumexp(log_k + np.log(p), axis=1)
            log_q = special.logsumexp(log_k + np.log(q), axis=1)
        sign = np.where(log_p - eps - log_q > 0, 1, -1)
        roots = []
        for k in np.flatnonzero(np.diff(sign)):
            a, b = mpmath.mpf(grid[k]), mpmath.mpf(grid[k + 1])
            fa = f(a)
            for _ in range(100):
                m = (a + b) / 2
                if (f(m) > 0) == (fa > 0):
                    a, fa = m, f(m)
                else:
                    b = m
            roots.append((a + b) / 2)
        edges = [-mpmath.inf, *roots, mpmath.inf]
        inner = [1 if f((a + b) / 2) > 0 else -1
                 for a, b in zip(roots[:-1], roots[1:], strict=True)]
        signs = [sign[0], *inner, sign[-1]] if roots else [sign[0]]
        total = mpmath.mpf(0)
        for a, b, sg in zip(edges[:-1], edges[1:], signs, strict=True):
            if sg > 0:
                total += mpmath.fsum(di * (cdf(b - xi) - cdf(a - xi))
                                     for di, xi in zip(d, xs, strict=True))
        return float(total)


def _lower_bound(support_p, pmf_p, support_q, pmf_q, noise, scale, eps, edges):
    """Integral of f over the grid cells where f > 0 at the middle: <= delta."""
    atoms, p, q = _union(support_p, pmf_p, support_q, pmf_q)
    atoms, d = np.asarray(atoms), np.asarray(p) - math.exp(eps) * np.asarray(q)
    if noise == "gaussian":
        def density(z):
            return stats.norm.pdf(z, scale=scale)

        def cdf(z):
            return stats.norm.cdf(z, scale=scale)
    else:
        def density(z):
            return stats.laplace.pdf(z, scale=scale)

        def cdf(z):
            return stats.laplace.cdf(z, scale=scale)

    middle = 0.5 * (edges[:-1] + edges[1:])
    f = density(middle[:, None] - atoms[None, :]) @ d
    mass = cdf(edges[1:, None] - atoms[None, :]) - cdf(edges[:-1, None] - atoms)
    return float(np.sum((mass @ d)[f > 0]))


def _random_law(rng, n_atoms):
    support = np.sort(rng.choice(np.arange(9), size=n_atoms, replace=False))
    return support.astype(float), rng.dirichlet(np.ones(n_atoms))


def _binomial(n, prob):
    support = np.arange(n + 1)
    pmf = stats.binom.pmf(support, n, prob)
    return support, pmf / pmf.sum()


# --------------------------------------------------------------------------------
# Single atoms: the Gaussian and Laplace mechanisms
# --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shift", "sigma", "eps"),
    [(1.0, 1.0, 1.0), (0.5, 1.0, 0.0), (3.0, 1.0, 2.0), (1.0, 0.1, 8.0),
     (2.0, 0.5, 0.5), (1e-3, 1.0, 0.0), (30.0, 2.0, 30.0), (1.0, 1.0, 5.0)],
)
def test_single_atoms_gaussian_is_the_gaussian_mechanism(shift, sigma, eps):
    expected = gaussian_delta(shift / sigma, eps)
    delta = discrete_gaussian_delta([0.0], [1.0], [shift], [1.0], sigma, eps)
    assert delta >= expected
    assert delta <= expected * (1 + 1e-9)


def test_laplace_mechanism_closed_form_matches_integration():
    # delta = 1 - e^{(eps - m/b)/2}, checked against direct integration.
    shift, scale, eps = 1.3, 0.7, 0.4
    with mpmath.workdps(30):
        def f(y):
            p = mpmath.exp(-abs(y) / scale)
            q = mpmath.exp(-abs(y - shift) / scale)
            return max(p - mpmath.exp(eps) * q, 0) / (2 * scale)

        # Kinks at 0, the root and the shift.
        root = shift / 2 - eps * scale / 2
        integral = sum(mpmath.quad(f, [a, b]) for a, b in
                       [(-mpmath.inf, 0), (0, root), (root, shift),
                        (shift, mpmath.inf)])
    assert float(integral) == pytest.approx(1 - math.exp((eps - shift / scale) / 2),
                                            rel=1e-12)


@pytest.mark.parametrize(
    ("shift", "scale", "eps"),
    [(1.0, 1.0, 0.5), (1.0, 1.0, 0.0), (3.0, 0.5, 2.0), (10.0, 1.0, 1.0),
     (1.0, 1.0, 1.0), (1.0, 1.0, 3.0), (5000.0, 1.0, 20.0)],
)
def test_single_atoms_laplace_is_the_laplace_mechanism(shift, scale, eps):
    expected = max(0.0, -math.expm1((eps - shift / scale) / 2))
    delta = discrete_laplace_delta([0.0], [1.0], [shift], [1.0], scale, eps)
    assert delta >= expected
    assert delta <= expected * (1 + 1e-9) + 1e-14


# --------------------------------------------------------------------------------
# Random small laws against a 40-digit reference, by both algorithms
# --------------------------------------------------------------------------------


def _cells_only(monkeypatch):
    monkeypatch.setattr(exact_profile, "_split_at_sign_changes", lambda *a: None)


@functools.cache
def _random_case(seed, noise):
    """Two random laws with 3 to 6 atoms, a scale, and references by epsilon."""
    rng = np.random.default_rng(seed)
    law_p = _random_law(rng, int(rng.integers(3, 7)))
    law_q = _random_law(rng, int(rng.integers(3, 7)))
    scale = [0.3, 1.0, 2.5, 0.6][seed]
    references = {eps: _mp_reference(*law_p, *law_q, noise, scale, eps)
                  for eps in (0.0, 0.5, 2.0, 8.0)}
    return law_p, law_q, scale, references


@pytest.mark.parametrize("method", ["sign changes", "cells"])
@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
@pytest.mark.parametrize("seed", range(4))
def test_random_laws_match_high_precision_reference(seed, noise, method,
                                                    monkeypatch):
    law_p, law_q, scale, references = _random_case(seed, noise)
    if method == "cells":
        _cells_only(monkeypatch)
    for eps, reference in references.items():
        delta = PROFILES[noise](*law_p, *law_q, scale, eps)
        assert delta >= reference - 1e-15, (eps, delta, reference)
        assert delta <= reference * (1 + 1e-3) + 1e-12, (eps, delta, reference)


def test_sign_changes_fewer_than_the_weights_falls_back_to_cells():
    # d = (+, -, +, -) has three sign changes; f = p - q has one (the small
    # negative weight at 1 is swamped by its neighbours).
    support_p, pmf_p = [0.0, 1.0, 2.0], [0.35, 0.3, 0.35]
    support_q, pmf_q = [1.0, 10.0], [0.35, 0.65]
    reference = _mp_reference(support_p, pmf_p, support_q, pmf_q, "gaussian",
                              1.0, 0.0)
    delta = discrete_gaussian_delta(support_p, pmf_p, support_q, pmf_q, 1.0, 0.0)
    assert reference - 1e-15 <= delta <= reference * (1 + 1e-6)


def test_nearly_equal_laws_keep_their_precision():
    # f = phi(y) - phi(y - 1e-6) cancels to 6 digits; bounds on cells cannot
    # resolve it, the sign changes of f can.
    delta = discrete_gaussian_delta([0.0], [1.0], [1e-6], [1.0], 1.0, 0.0)
    expected = gaussian_delta(1e-6, 0.0)
    assert expected <= delta <= expected * (1 + 1e-6)


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_never_below_a_fine_grid_lower_bound(noise):
    rng = np.random.default_rng(7)
    support_p = np.sort(rng.choice(np.arange(60), size=40, replace=False))
    support_q = np.sort(rng.choice(np.arange(60), size=40, replace=False))
    pmf_p, pmf_q = rng.dirichlet(np.ones(40)), rng.dirichlet(np.ones(40))
    for scale, eps in [(0.7, 0.0), (2.0, 1.0), (5.0, 0.3)]:
        edges = np.arange(-40 * scale, 59 + 40 * scale, scale / 200)
        lower = _lower_bound(support_p, pmf_p, support_q, pmf_q, noise, scale, eps,
                             edges)
        delta = PROFILES[noise](support_p, pmf_p, support_q, pmf_q, scale, eps)
        assert lower - 1e-14 <= delta <= lower * (1 + 1e-4)


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_binomial_laws_with_a_thousand_atoms(noise):
    support, pmf_p = _binomial(1000, 0.5)
    _, pmf_q = _binomial(1000, 0.52)
    delta = PROFILES[noise](support, pmf_p, support, pmf_q, 3.0, 1.0)
    # Atoms beyond 350..700 hold less than 1e-40 and change f by less than that.
    kept = slice(350, 701)
    lower = _lower_bound(support[kept], pmf_p[kept], support[kept], pmf_q[kept],
                         noise, 3.0, 1.0, np.arange(300.0, 750.0, 0.05))
    assert lower - 1e-14 <= delta <= lower * (1 + 1e-4)


# --------------------------------------------------------------------------------
# No noise
# --------------------------------------------------------------------------------


def _proportion_laws():
    # n = 10 records, the in-group always 1, the out-group Bernoulli(0.5): the
    # mean is 0.4 + Binomial(6, 1/2) / 10 under proportion 0.4 and
    # 0.6 + Binomial(4, 1/2) / 10 under 0.6.
    support_a = np.arange(4, 11) / 10
    pmf_a = np.array([comb(6, k) for k in range(7)]) / 64
    support_b = np.arange(6, 11) / 10
    pmf_b = np.array([comb(4, k) for k in range(5)]) / 16
    return support_a, pmf_a, support_b, pmf_b


def _exact_noiseless(eps):
    law_a = {Fraction(4 + k, 10): Fraction(comb(6, k), 64) for k in range(7)}
    law_b = {Fraction(6 + k, 10): Fraction(comb(4, k), 16) for k in range(5)}
    total = 0.0
    for x, pa in law_a.items():
        pb = law_b.get(x, 0)
        # (pa - e^eps pb)_+ = pa (1 - e^{eps + log pb - log pa})_+
        ratio = eps + math.log(pb / pa) if pb else -math.inf
        total += float(pa) * max(-math.expm1(ratio), 0.0) if ratio < 0 else 0.0
    return total


@pytest.mark.parametrize("eps", [0.0, 0.5, 8.0, 800.0])
def test_noiseless_proportion_example(eps):
    support_a, pmf_a, support_b, pmf_b = _proportion_laws()
    delta = discrete_gaussian_delta(support_a, pmf_a, support_b, pmf_b, 0.0, eps)
    # "release < 0.55" has probability 7/64 under 0.4 and 0 under 0.6.
    assert delta >= 7 / 64
    exact = _exact_noiseless(eps)
    assert exact <= delta <= exact * (1 + 1e-12)
    assert delta == discrete_laplace_delta(support_a, pmf_a, support_b, pmf_b, 0.0,
                                           eps)
    if eps >= 8:
        assert exact == 7 / 64


def test_noise_is_post_processing():
    support_a, pmf_a, support_b, pmf_b = _proportion_laws()
    noiseless = discrete_gaussian_delta(support_a, pmf_a, support_b, pmf_b, 0.0, 0.5)
    for noise, profile in PROFILES.items():
        for scale in (0.01, 0.05, 0.3):
            noisy = profile(support_a, pmf_a, support_b, pmf_b, scale, 0.5)
            assert noisy <= noiseless, (noise, scale)


def test_supports_match_by_exact_equality():
    # 0.1 + 0.2 != 0.3 in floating point: the two atoms are distinct.
    delta = discrete_gaussian_delta([0.1 + 0.2], [1.0], [0.3], [1.0], 0.0, 5.0)
    assert delta == 1.0
    assert discrete_gaussian_delta([0.3], [1.0], [0.3], [1.0], 0.0, 0.0) == 0.0


# --------------------------------------------------------------------------------
# Monotonicity, both directions and epsilon
# --------------------------------------------------------------------------------


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_profile_is_non_increasing_in_scale_and_epsilon(noise):
    support, pmf_p = _binomial(40, 0.4)
    _, pmf_q = _binomial(40, 0.55)
    profile = PROFILES[noise]
    by_scale = [profile(support, pmf_p, support, pmf_q, scale, 1.0)
                for scale in np.geomspace(0.05, 20.0, 25)]
    by_eps = [profile(support, pmf_p, support, pmf_q, 2.0, eps)
              for eps in np.linspace(0.0, 12.0, 25)]
    assert np.all(np.diff(by_scale) <= 0)
    assert np.all(np.diff(by_eps) <= 0)
    assert by_scale[-1] < by_scale[0] and by_eps[-1] < by_eps[0]


def test_pair_delta_is_the_larger_direction():
    rng = np.random.default_rng(3)
    law_p, law_q = _random_law(rng, 5), _random_law(rng, 4)
    for noise, profile in PROFILES.items():
        both = discrete_pair_delta(*law_p, *law_q, noise=noise, scale=0.8,
                                   epsilon=0.7)
        assert both == max(profile(*law_p, *law_q, 0.8, 0.7),
                           profile(*law_q, *law_p, 0.8, 0.7))


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
@pytest.mark.parametrize("delta", [1e-3, 1e-8])
def test_epsilon_round_trip(noise, delta):
    support, pmf_p = _binomial(30, 0.3)
    _, pmf_q = _binomial(30, 0.45)
    kwargs = {"noise": noise, "scale": 1.5}
    eps = discrete_epsilon(support, pmf_p, support, pmf_q, delta=delta, **kwargs)
    assert 0 < eps < math.inf
    assert discrete_pair_delta(support, pmf_p, support, pmf_q, epsilon=eps,
                               **kwargs) <= delta
    below = eps * (1 - 1e-6)
    assert discrete_pair_delta(support, pmf_p, support, pmf_q, epsilon=below,
                               **kwargs) > delta


def test_epsilon_without_noise():
    # Q vs P: (0.5 - 0.02 e^eps)_+ + (0.5 - 0.98 e^eps)_+ = delta at e^eps = 20.
    kwargs = {"noise": "gaussian", "scale": 0.0}
    eps = discrete_epsilon([0, 1], [0.02, 0.98], [0, 1], [0.5, 0.5], delta=0.1,
                           **kwargs)
    assert math.log(20) <= eps <= math.log(20) * (1 + 1e-7)
    # Disjoint supports are told apart with certainty.
    assert discrete_epsilon([0, 1], [0.5, 0.5], [2, 3], [0.5, 0.5], delta=0.5,
                            **kwargs) == math.inf
    # Identical laws need no epsilon, even at delta = 0.
    assert discrete_epsilon([0, 1], [0.5, 0.5], [1, 0], [0.5, 0.5], delta=0.0,
                            **kwargs) == 0.0


def test_epsilon_pure_laplace():
    # Laplace noise has bounded likelihood ratios: delta = 0 needs eps = m / b.
    eps = discrete_epsilon([0.0], [1.0], [2.0], [1.0], noise="laplace", scale=0.5,
                           delta=0.0)
    assert 4.0 <= eps <= 4.0 * (1 + 1e-7)
    assert discrete_epsilon([0.0], [1.0], [2.0], [1.0], noise="gaussian",
                            scale=0.5, delta=0.0) == math.inf


# --------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (([0, 1], [0.5, 0.4], [0], [1.0], 1.0, 0.0), "'pmf_p'.*summing to 1"),
        (([0, 1], [1.5, -0.5], [0], [1.0], 1.0, 0.0), "'pmf_p'.*non-negative"),
        (([0], [1.0], [0, 1], [1.0], 1.0, 0.0), "same length"),
        (([0], [1.0], [[0]], [[1.0]], 1.0, 0.0), "'support_q'.*1-d"),
        (([np.nan], [1.0], [0], [1.0], 1.0, 0.0), "'support_p'.*finite"),
        (([0], [1.0], ["a"], [1.0], 1.0, 0.0), "'support_q'.*real numbers"),
        (([0], [1.0], [0], [1.0], -1.0, 0.0), "'sigma'.*>= 0"),
        (([0], [1.0], [0], [1.0], math.inf, 0.0), "'sigma'.*finite"),
        (([0], [1.0], [0], [1.0], 1.0, -0.1), "'epsilon'.*>= 0"),
        (([], [], [0], [1.0], 1.0, 0.0), "non-empty"),
    ],
)
def test_invalid_parameters_say_what_to_fix(args, match):
    with pytest.raises(InvalidParameterError, match=match):
        discrete_gaussian_delta(*args)


def test_invalid_noise_and_delta():
    with pytest.raises(InvalidParameterError, match="'noise'.*'gaussian' or"):
        discrete_pair_delta([0], [1.0], [1], [1.0], noise="cauchy", scale=1.0,
                            epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="'delta'.*\\[0, 1\\)"):
        discrete_epsilon([0], [1.0], [1], [1.0], noise="laplace", scale=1.0,
                         delta=1.0)
    with pytest.raises(InvalidParameterError, match="'scale'"):
        discrete_laplace_delta([0], [1.0], [1], [1.0], math.nan, 1.0)
