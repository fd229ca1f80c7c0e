"""Chen & Ohrimenko Sec. 5 on UCI Adult: Table 2, its Monte-Carlo spread, the attack.

``benchmarks/adult_table2.py`` produces the full tables (docs/adult_results.md);
these tests pin the figures it reports against the paper.
"""

import math

import numpy as np
import pytest
from scipy import special

from skattr import Query, Secret
from skattr.attacks import PropertyInferenceAttack
from skattr.calibration import classic_constant
from skattr.laws import AssumeGaussian
from skattr.mechanisms import MECHANISMS
from skattr.theta import MonteCarlo

# Table 2 uses the paper's classic constant at epsilon = 1 and 5 too, outside
# its proof: that is what is reproduced.
pytestmark = pytest.mark.filterwarnings(
    "ignore::skattr.exceptions.ClassicCalibrationWarning")

N = 100
EPSILONS = (0.2, 1.0, 5.0)
BOUNDS = {"age": (17, 90), "education-num": (1, 16), "hours-per-week": (1, 99)}
# Chen & Ohrimenko, Table 2: L2 error, delta = 1e-3, Delta p_I = 0.1.
PAPER_TABLE2 = {
    "expm-gaussian": (177.28, 34.98, 7.11),
    "eigm": (175.65, 34.87, 4.89),
    "daum": (69.85, 13.40, 1.24),
    "group-dp-gaussian": (7394.67, 1539.93, 293.17),
}
QUERY = (Query.mean(["age", "education-num"])
         + Query.count("marital-status", "Never-married")
         + Query.count("sex", "Female") + Query.mean("hours-per-week"))
SECRET = Secret.proportion("income", ">50K", pairs=[(0.45, 0.55)])


def mechanism(name, epsilon, **params):
    """The paper's setting: classic calibration, equal covariances assumed."""
    params = {"query": QUERY, "secret": SECRET, "epsilon": epsilon,
              "delta": 1e-3, "calibration": "classic", **params}
    if name == "group-dp-gaussian":
        params.update(bounds=BOUNDS, group_size=None)
    else:
        params.setdefault("law", AssumeGaussian(covariances="assume-equal"))
        params.setdefault("theta", "moments")  # the paper's plug-in Theta
        # The paper clips nothing: the data's own range changes nothing (the
        # default's fences would cut 1.6% of hours-per-week).
        params.setdefault("bounds", "reference")
    return MECHANISMS[name](**params)


def table2_row(name, data, **params):
    fitted = mechanism(name, EPSILONS[0], **params).fit(data)
    return [fitted.set_params(epsilon=eps).plan(n=N).expected_error
            for eps in EPSILONS]


@pytest.mark.parametrize("name", list(PAPER_TABLE2))
def test_table2_within_10_percent_of_the_paper(adult, name):
    for eps, value, paper in zip(EPSILONS, table2_row(name, adult),
                                 PAPER_TABLE2[name], strict=True):
        if name == "daum" and eps == 5.0:
            # A near-cancellation, checked against the Monte-Carlo spread below.
            assert 0.8 <= value <= 1.3
        else:
            assert value == pytest.approx(paper, rel=0.10), (name, eps)


def test_expm_error_is_the_closed_form_from_group_means(adult):
    # Independent of skattr's Theta: with exactly 45 or 55 of 100 records
    # earning >50K, E[F] moves by 10 * (group mean difference) * w, where
    # w = 1/n for the means and 1 for the counts; ExpM adds N(0, sigma^2 I_5)
    # with sigma = ||that move|| c / epsilon, whose norm has mean
    # sigma sqrt(2) Gamma(3) / Gamma(5/2).
    rich = adult["income"] == ">50K"
    records = np.column_stack([
        adult["age"], adult["education-num"],
        adult["marital-status"] == "Never-married", adult["sex"] == "Female",
        adult["hours-per-week"]]).astype(float)
    gap = records[rich].mean(axis=0) - records[~rich].mean(axis=0)
    move = 10 * gap * np.array([1 / N, 1 / N, 1, 1, 1 / N])
    chi_mean = math.sqrt(2) * math.exp(special.gammaln(3) - special.gammaln(2.5))
    for eps, value in zip(EPSILONS, table2_row("expm-gaussian", adult),
                          strict=True):
        sigma = np.linalg.norm(move) * classic_constant(1e-3) / eps
        assert value == pytest.approx(sigma * chi_mean, rel=1e-9)


@pytest.mark.slow
def test_daum_at_epsilon_5_the_paper_lies_in_the_monte_carlo_spread(adult):
    # The paper estimates Theta from 1,000 sampled datasets per value (App.
    # C.1), and DauM's variance at epsilon = 5 is the difference of two nearly
    # equal terms, so the estimate's seed moves it from about 0.6 to 1.7. Over
    # 400 seeds: median 1.09, 10%-90% range 0.76-1.34, 22% of the draws at or
    # above the paper's 1.24. Of 25 disjoint sets of 16 seeds, all 25 spanned
    # 1.24 (a set misses it with probability about 0.78^16 = 2%) and 24 had
    # their median within 15% of the exact value.
    exact = table2_row("daum", adult)[2]
    fitted = mechanism("daum", 5.0)
    draws = np.array([
        fitted.set_params(theta=MonteCarlo(1000, random_state=seed)).fit(adult)
        .plan(n=N).expected_error for seed in range(16)])
    assert draws.min() <= PAPER_TABLE2["daum"][2] <= draws.max()
    assert np.median(draws) == pytest.approx(exact, rel=0.15)


@pytest.fixture(scope="module")
def adult_split(adult):
    """Sec. 5.1: 10,000 auxiliary, 10,000 test, the rest to fit defences on."""
    order = np.random.default_rng(0).permutation(len(adult))
    return (adult.iloc[order[:10_000]], adult.iloc[order[10_000:20_000]],
            adult.iloc[order[20_000:]])


@pytest.mark.slow
def test_attack_without_defence_is_about_75_percent(adult_split):
    auxiliary, test, _ = adult_split
    attack = PropertyInferenceAttack(query=QUERY, secret=SECRET, values=(0.45, 0.55),
                                     n=N, n_shadow=200, n_test=400, random_state=0)
    result = attack.fit(auxiliary).evaluate(test)
    assert 0.68 <= result.accuracy <= 0.82
    assert result.n_datasets == 400


@pytest.mark.slow
def test_expm_at_epsilon_01_brings_the_attack_to_chance(adult_split):
    auxiliary, test, model = adult_split
    # A Generator, so that every release draws fresh noise.
    defence = mechanism("expm-gaussian", 0.1,
                        random_state=np.random.default_rng(0)).fit(model)
    attack = PropertyInferenceAttack(defence, values=(0.45, 0.55), n=N,
                                     n_shadow=200, n_test=400, random_state=0)
    assert 0.40 <= attack.fit(auxiliary).evaluate(test).accuracy <= 0.60


def test_eigm_error_at_epsilon_01_matches_the_near_isotropic_expm(adult):
    # EigM's noise variances here are 26,245 to 26,264 against ExpM's 26,264
    # in every direction, so their expected norms agree within 0.1% (a
    # regression: the quadrature was once unscaled and returned -0.05 here).
    eigm = mechanism("eigm", 0.1).fit(adult).plan(n=N).expected_error
    expm = mechanism("expm-gaussian", 0.1).fit(adult).plan(n=N).expected_error
    assert eigm == pytest.approx(expm, rel=1e-3)


@pytest.mark.slow
def test_monte_carlo_theta_of_1000_datasets_plans_on_all_of_adult(adult):
    # The draws happen at plan time, once per property value; speed is measured
    # in benchmarks/bench_fit.py as a ratio (no wall-clock assertion here).
    plan = mechanism("daum", 1.0, theta=MonteCarlo(1000, random_state=0)
                     ).fit(adult).plan(n=N)
    assert np.isfinite(plan.expected_error) and plan.expected_error > 0


def test_app_c1_variance_of_the_number_of_women(adult):
    # Chen & Ohrimenko App. C.1 estimate the variance of the number of women
    # among 100 records (45 or 55 of them earning >50K) from 1,000 sampled
    # datasets: 18.31 at p = 0.45 and 18.03 at 0.55. The exact values, by
    # hand (hypergeometric draws within each income group, no skattr code),
    # are 18.657 and 17.557; the paper's figures lie within the sampling
    # error of a 1,000-dataset estimate.
    rich = (adult["income"] == ">50K").to_numpy()
    women = (adult["sex"] == "Female").to_numpy()
    exact = []
    for k in (45, 55):
        variance = 0.0
        for group, draws in ((rich, k), (~rich, 100 - k)):
            size, share = group.sum(), (women & group).sum() / group.sum()
            variance += draws * share * (1 - share) * (size - draws) / (size - 1)
        exact.append(variance)
    assert [round(v, 3) for v in exact] == [18.657, 17.557]
    # skattr's closed form (theta="moments") is the same law.
    fitted = MECHANISMS["apgm"](query=Query.count("sex", "Female"),
                                secret=SECRET, theta="moments",
                                law="gaussian").fit(adult)
    (model,) = fitted.law_.models[0]
    _, covs = model.sum_moments([0.45, 0.55], N)
    np.testing.assert_allclose(covs.ravel(), exact, rtol=1e-9)
    # The paper's Monte-Carlo figures, and one of our own (numpy draws),
    # are within 2.5 standard errors of a 1,000-dataset sample variance.
    rng = np.random.default_rng(0)
    rich_rows, poor_rows = np.flatnonzero(rich), np.flatnonzero(~rich)
    for k, paper, truth in ((45, 18.31, exact[0]), (55, 18.03, exact[1])):
        se = truth * math.sqrt(2 / 999)
        assert abs(paper - truth) < 2.5 * se
        counts = [women[rng.choice(rich_rows, k, replace=False)].sum()
                  + women[rng.choice(poor_rows, 100 - k, replace=False)].sum()
                  for _ in range(1000)]
        assert abs(np.var(counts, ddof=1) - truth) < 2.5 * se


def _crossover(column, value, adult):
    """Delta p where DauM's error (epsilon 1) first exceeds DP Gaussian's."""
    dp = MECHANISMS["dp-gaussian"](
        query=QUERY, secret=Secret.proportion(column, value, pairs=[(0.45, 0.55)]),
        epsilon=1.0, delta=1e-3, calibration="classic", bounds=BOUNDS,
    ).fit(adult).plan(n=N).expected_error
    previous = (0.0, 0.0)
    for k in range(1, 21):
        gap = 0.02 * k
        secret = Secret.proportion(column, value, pairs=[
            (round(0.5 - gap / 2, 2), round(0.5 + gap / 2, 2))])
        error = mechanism("daum", 1.0, secret=secret).fit(adult).plan(
            n=N).expected_error
        if error > dp:
            # Linear between the grid's last point below and first above.
            (g0, e0) = previous
            return g0 + (gap - g0) * (dp - e0) / (error - e0)
        previous = (gap, error)
    return math.inf


@pytest.mark.slow
def test_fig3_crossover_where_daum_stops_beating_dp_gaussian(adult):
    # Chen & Ohrimenko Fig. 3 (epsilon 1, delta 1e-3): DauM beats the
    # Gaussian mechanism of differential privacy (one record, k = 1: error
    # 15.07, a hundredth of Table 2's GroupDP) while the property is hidden
    # to Delta p_I <= 0.12 (income) and Delta p_W <= 0.28 (private-sector
    # work class).
    assert _crossover("income", ">50K", adult) == pytest.approx(0.12, abs=0.01)
    assert _crossover("workclass", "Private", adult) == pytest.approx(0.28,
                                                                      abs=0.015)
