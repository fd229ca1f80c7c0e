"""Differentially private RAP (issue 30, item 1): the projection, the
accounting and the estimator's shape, against computations that share nothing
with the library (pandas crosstabs, the closed form of zCDP's conversion)."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.synth import (
    DPRAP,
    OneHotDomain,
    answer,
    epsilon_of_rho,
    marginal_errors,
    rho_of_epsilon,
)
from skattr.synth._rap import relaxed_probs, relaxed_projection

CATS = {"a": [0, 1], "b": [0, 1], "c": ["x", "y", "z"]}


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    n = 2000
    a = rng.integers(0, 2, n)
    b = (a ^ (rng.random(n) < 0.2)).astype(int)
    c = np.where(b == 1, rng.choice(["x", "y"], n), rng.choice(["y", "z"], n))
    return pd.DataFrame({"a": a, "b": b, "c": c})


def _crosstab_shares(frame, columns):
    """The marginal's shares in the domain's cell order, by pandas alone."""
    counts = frame.groupby(columns).size()
    cells = itertools.product(*[CATS[c] for c in columns])
    if len(columns) == 1:
        cells = (cell[0] for cell in cells)
    return np.array([counts.get(cell, 0) for cell in cells]) / len(frame)


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-6), (1.0, 1e-6), (2.0, 1e-9),
                                       (10.0, 1e-3)])
def test_zcdp_conversion_is_the_closed_form(eps, delta):
    L = math.log(1 / delta)
    rho = (math.sqrt(L + eps) - math.sqrt(L)) ** 2
    assert rho_of_epsilon(eps, delta) == pytest.approx(rho, rel=1e-12)
    assert epsilon_of_rho(rho, delta) == pytest.approx(eps, rel=1e-12)
    with pytest.raises(InvalidParameterError, match="delta"):
        rho_of_epsilon(eps, 0.0)


def test_answers_are_the_crosstabs(frame):
    domain = OneHotDomain(CATS)
    codes = domain.codes(frame)
    onehot = [np.eye(domain.sizes[j])[codes[:, j]] for j in range(3)]
    assert all(np.array_equal(a, b) for a, b in zip(onehot, domain.onehot(frame),
                                                    strict=True))
    for marginal in [(0,), (0, 2), (1, 2), (0, 1, 2)]:
        names = [domain.columns[j] for j in marginal]
        np.testing.assert_allclose(answer(onehot, marginal),
                                   _crosstab_shares(frame, names), atol=1e-15)


@pytest.mark.slow
@pytest.mark.parametrize("zeros", [False, True])
def test_the_relaxed_projection_reaches_exact_answers(frame, zeros):
    """Without noise the projection matches every marginal of the workload
    (the answers of a real table are attainable by a relaxed one). Cells of
    share zero (b = 1 never has c = z in the fixture) are approached only as
    their logits run off (a softmax relaxation), so more slowly."""
    if not zeros:
        rng = np.random.default_rng(3)
        frame = frame.assign(c=np.where(
            frame.b == 1, rng.choice(["x", "y", "z"], len(frame),
                                     p=[0.5, 0.3, 0.2]),
            rng.choice(["x", "y", "z"], len(frame), p=[0.1, 0.3, 0.6])))
    domain = OneHotDomain(CATS)
    workload = [(0, 1), (0, 2), (1, 2), (0, 1, 2)]
    targets = [_crosstab_shares(frame, [domain.columns[j] for j in m])
               for m in workload]
    rng = np.random.default_rng(1)
    logits = relaxed_projection(domain, workload, targets,
                                0.1 * rng.standard_normal((200, domain.width)),
                                iterations=3000)
    probs = relaxed_probs(domain, logits)
    worst = max(np.abs(answer(probs, m) - t).max()
                for m, t in zip(workload, targets, strict=True))
    assert worst < (2e-3 if zeros else 1e-5)


@pytest.mark.parametrize("accounting", ["marginal", "cell"])
def test_the_noise_is_the_budget_s(frame, accounting):
    rap = DPRAP(categories=CATS, k=2, n_marginals=None, epsilon=1.0,
                delta=1e-6, accounting=accounting, iterations=5,
                random_state=0).fit(frame)
    n, m = len(frame), 3
    rho = rho_of_epsilon(1.0, 1e-6)
    assert rap.rho_ == pytest.approx(rho) and rap.epsilon_ == pytest.approx(1.0)
    cells = np.array([len(t) for t in rap.noisy_answers_])
    if accounting == "marginal":     # l2 sensitivity sqrt(2)/n, rho/m each
        expected = np.full(m, math.sqrt(2) / n / math.sqrt(2 * rho / m))
    else:                            # each cell 1/n, rho/(m * cells) each
        expected = (1 / n) / np.sqrt(2 * rho / (m * cells))
    np.testing.assert_allclose(rap.sigma_, expected, rtol=1e-12)
    # zCDP adds up: sum over the marginals' (or cells') rho is the budget.
    if accounting == "marginal":
        spent = np.sum((math.sqrt(2) / n) ** 2 / (2 * rap.sigma_**2))
    else:
        spent = np.sum(cells * (1 / n) ** 2 / (2 * rap.sigma_**2))
    assert spent == pytest.approx(rho, rel=1e-12)


def test_the_noisy_answers_scatter_as_stated(frame):
    sd, z = [], []
    for seed in range(40):
        rap = DPRAP(categories=CATS, k=2, n_marginals=None, epsilon=0.5,
                    iterations=1, random_state=seed).fit(frame)
        for m, noisy, s in zip(rap.answered_, rap.noisy_answers_, rap.sigma_,
                               strict=True):
            truth = _crosstab_shares(frame, [rap.domain_.columns[j] for j in m])
            z.extend((noisy - truth) / s)
            sd.append(s)
    z = np.array(z)
    assert abs(z.mean()) < 4 / math.sqrt(z.size)
    assert abs(z.std() - 1) < 0.1


def test_adaptive_rounds_spend_half_on_the_choice(frame):
    rap = DPRAP(categories=CATS, k=2, n_marginals=None, epsilon=1.0,
                rounds=3, queries_per_round=1, iterations=50,
                random_state=0).fit(frame)
    assert sorted(rap.answered_) == sorted(rap.workload_)
    share = rho_of_epsilon(1.0, 1e-6) / (2 * 3 * 1)
    np.testing.assert_allclose(rap.sigma_, math.sqrt(2) / len(frame)
                               / math.sqrt(2 * share))
    with pytest.raises(InvalidParameterError, match="exceeds the 3 marginals"):
        DPRAP(categories=CATS, k=2, n_marginals=None, rounds=2,
              queries_per_round=2).fit(frame)


@pytest.mark.slow
def test_synthetic_records_keep_the_columns_and_improve_with_epsilon(frame):
    domain = OneHotDomain(CATS)
    errors = {}
    for eps in (0.05, 5.0):
        rap = DPRAP(categories=CATS, k=2, n_marginals=None, epsilon=eps,
                    n_synthetic=300, random_state=0).fit(frame)
        synthetic = rap.sample(4000, random_state=1)
        assert list(synthetic.columns) == ["a", "b", "c"]
        assert synthetic["a"].dtype == frame["a"].dtype
        assert set(synthetic["c"]) <= set(CATS["c"])
        errors[eps] = marginal_errors(domain, rap.workload_, frame, synthetic)
    assert errors[5.0][0] < 0.03 < errors[0.05][0]
    again = DPRAP(categories=CATS, k=2, n_marginals=None, epsilon=5.0,
                  n_synthetic=300, random_state=0).fit(frame)
    pd.testing.assert_frame_equal(again.sample(50, random_state=1),
                                  rap.sample(50, random_state=1))


def test_bad_input_gets_a_clear_error(frame):
    with pytest.raises(InvalidParameterError, match="categories="):
        DPRAP().fit(frame)
    with pytest.raises(InvalidParameterError, match="outside its categories"):
        DPRAP(categories={**CATS, "c": ["x", "y"]}, k=2).fit(frame)
    with pytest.raises(InvalidParameterError, match="no column"):
        DPRAP(categories={**CATS, "d": [0, 1]}, k=2).fit(frame)
    with pytest.raises(DataValidationError, match="no records"):
        DPRAP(categories=CATS, k=2).fit(frame.iloc[:0])
    with pytest.raises(InvalidParameterError, match="k must be"):
        DPRAP(categories=CATS, k=4).fit(frame)
    with pytest.raises(InvalidParameterError, match="epsilon"):
        DPRAP(categories=CATS, epsilon=0.0).fit(frame)
    rap = DPRAP(categories=CATS, k=2, iterations=5, random_state=0).fit(frame)
    for n in (0, -1, 2.5, True):
        with pytest.raises(InvalidParameterError, match="positive int"):
            rap.sample(n)


def test_the_gradient_is_the_loss_s_derivative():
    """Central differences of the loss in each probability entry."""
    from skattr.synth._rap import loss_and_gradient
    rng = np.random.default_rng(4)
    sizes = np.array([2, 3, 4, 2])
    probs = [rng.dirichlet(np.ones(s), size=7) for s in sizes]
    workload = [(0,), (1, 3), (0, 2, 3), (0, 1, 2, 3)]
    targets = [rng.random(int(np.prod(sizes[list(m)]))) / 10 for m in workload]
    loss, grads = loss_and_gradient(probs, workload, targets, sizes)
    direct = sum(float(np.sum((answer(probs, m) - t) ** 2))
                 for m, t in zip(workload, targets, strict=True))
    assert loss == pytest.approx(direct, rel=1e-12)
    h = 1e-6
    for j, p in enumerate(probs):
        for r, c in [(0, 0), (3, p.shape[1] - 1), (6, 1)]:
            up = [q.copy() for q in probs]
            down = [q.copy() for q in probs]
            up[j][r, c] += h
            down[j][r, c] -= h
            numeric = (loss_and_gradient(up, workload, targets, sizes)[0]
                       - loss_and_gradient(down, workload, targets, sizes)[0]
                       ) / (2 * h)
            assert grads[j][r, c] == pytest.approx(numeric, rel=1e-6, abs=1e-9)


def test_numeric_columns_are_binned_by_public_edges():
    from skattr.synth import bin_columns
    frame = pd.DataFrame({"age": [17.0, 30.0, 64.9], "c": ["x", "y", "z"]})
    binned, labels = bin_columns(frame, {"age": [0, 30, 65]})
    assert binned["age"].tolist() == ["[0, 30)", "[30, 65)", "[30, 65)"]
    assert labels == {"age": ["[0, 30)", "[30, 65)"]}
    assert frame["age"].tolist() == [17.0, 30.0, 64.9]      # not mutated
    for bins, says in (({"age": [0, 30]}, "outside its bins"),
                       ({"age": [30, 0]}, "increasing"),
                       ({"c": [0, 1]}, "not numeric"),
                       ({"d": [0, 1]}, "not a column")):
        with pytest.raises(InvalidParameterError, match=says):
            bin_columns(frame, bins)


def _exact_choice(scores, scale):
    """P(argmax of scores + Laplace(scale) = i), by integration (scipy)."""
    from scipy import integrate, stats
    out = []
    for i, s in enumerate(scores):
        others = [t for j, t in enumerate(scores) if j != i]

        def density(x, s=s, others=others):
            p = stats.laplace.pdf(x, s, scale)
            for t in others:
                p *= stats.laplace.cdf(x, t, scale)
            return p
        lo, hi = min(scores) - 60 * scale, max(scores) + 60 * scale
        out.append(integrate.quad(density, lo, hi, points=sorted(scores),
                                  limit=200, epsabs=1e-13)[0])
    return np.array(out)


@pytest.mark.slow
def test_report_noisy_max_is_epsilon_dp_and_draws_its_law():
    """The selection's guarantee, against its exact law: for every pair of
    neighbouring score vectors (each score moved by at most the sensitivity)
    every choice's probability changes by at most e^epsilon; and the
    library's draws follow that law."""
    from skattr.synth import report_noisy_max
    eps, sens = 0.7, 0.01
    scale = 2 * sens / eps
    scores = np.array([0.05, 0.06, 0.04])
    base = _exact_choice(scores, scale)
    assert base.sum() == pytest.approx(1.0, abs=1e-9)
    worst = 0.0
    for shift in itertools.product([-sens, sens], repeat=3):   # the extremes
        moved = _exact_choice(scores + np.array(shift), scale)
        worst = max(worst, float(np.max(np.abs(np.log(base / moved)))))
    assert worst <= eps + 1e-9
    # Positive control: without the factor 2 the guarantee fails here.
    half = _exact_choice(scores, scale / 2)
    moved = _exact_choice(scores + np.array([sens, -sens, -sens]), scale / 2)
    assert np.max(np.abs(np.log(half / moved))) > eps
    rng = np.random.default_rng(0)
    draws = np.bincount([report_noisy_max(scores, eps, sens, rng)
                         for _ in range(10_000)], minlength=3) / 10_000
    assert np.max(np.abs(draws - base)) < 4 * np.sqrt(0.25 / 10_000)


def test_a_projection_that_diverges_is_refused_not_sampled():
    from skattr.exceptions import SkattrError

    domain = OneHotDomain({"a": [0, 1], "b": [0, 1, 2]})
    with pytest.raises(SkattrError, match="diverged"):
        relaxed_projection(domain, [(0, 1)], [np.full(6, np.nan)],
                           np.zeros((10, domain.width)), iterations=5)
