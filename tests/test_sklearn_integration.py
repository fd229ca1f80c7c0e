"""skattr estimators inside scikit-learn: clone, Pipeline, GridSearchCV, set_output."""

import numpy as np
import pandas as pd
import pytest
from sklearn import config_context
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

import skattr
from skattr.datasets import make_hospital
from skattr.mechanisms import AttributePrivateGaussian
from skattr.utils import all_estimators

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])


@pytest.fixture(scope="module")
def hospital():
    return make_hospital(3000, random_state=0), make_hospital(60, random_state=1)


def test_all_estimators_lists_every_mechanism():
    names = dict(all_estimators())
    registry = skattr.mechanisms.MECHANISMS
    assert names == {cls.__name__: cls for cls in registry.values()}
    assert names["AttributePrivateGaussian"] is AttributePrivateGaussian
    assert {"apgm", "dp-laplace", "dp-gaussian", "group-dp-laplace",
            "group-dp-gaussian"} <= set(registry)
    assert all(name in skattr.mechanisms.__all__ for name in names)


def test_clone_and_params_round_trip(hospital):
    est = AttributePrivateGaussian(law="gaussian",
                                   query=skattr.Query.mean(["weight"]), secret=SECRET,
                                   epsilon=0.3, random_state=4)
    params = est.get_params()
    assert params["epsilon"] == 0.3 and params["secret"] is SECRET
    twin = clone(est)
    assert twin.get_params()["epsilon"] == 0.3 and twin is not est
    assert est.set_params(epsilon=2.0) is est and est.epsilon == 2.0
    est.fit(hospital[0])
    assert not hasattr(clone(est), "law_")
    # fit does not change any parameter.
    assert est.get_params()["epsilon"] == 2.0 and est.secret is SECRET


@pytest.mark.slow
def test_set_output_pandas_gives_one_named_row(hospital):
    reference, private = hospital
    est = AttributePrivateGaussian(law="gaussian",
                                   query=skattr.Query.mean(["weight", "temperature"]),
                                   secret=SECRET, random_state=0).fit(reference)
    arr = est.transform(private)
    assert arr.shape == (1, 2)
    # Refitting restarts the seeded sequence of releases: the same first draw.
    out = est.fit(reference).set_output(transform="pandas").transform(private)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == ["weight", "temperature"]
    np.testing.assert_allclose(out.to_numpy(), arr)
    est.set_output(transform="default")
    with config_context(transform_output="pandas"):
        assert isinstance(est.transform(private), pd.DataFrame)
    assert list(est.get_feature_names_out()) == ["weight", "temperature"]


def test_last_step_of_a_pipeline_after_a_column_transformer(hospital):
    reference, private = hospital
    pre = ColumnTransformer(
        [("kg", FunctionTransformer(lambda x: x * 0.4536,
                                    feature_names_out="one-to-one"), ["weight"])],
        remainder="passthrough", verbose_feature_names_out=False,
    ).set_output(transform="pandas")
    mech = AttributePrivateGaussian(law="gaussian",
                                    query=skattr.Query.mean(["weight", "temperature"]),
                                    secret=SECRET, random_state=0)
    pipe = Pipeline([("pre", pre), ("release", mech)]).fit(reference)
    out = pipe.transform(private)
    assert out.shape == (1, 2)
    plan = pipe[-1].plan(pre.transform(private))
    # Converting to kg scales the weight's sensitivity by the same factor.
    direct = AttributePrivateGaussian(law="gaussian",
                                      query=skattr.Query.mean(["weight"]),
                                      secret=SECRET).fit(reference).plan(private)
    assert plan.sensitivity < direct.sensitivity
    kg_only = AttributePrivateGaussian(
        law="gaussian", query=skattr.Query.mean(["weight"]), secret=SECRET).fit(
        pre.transform(reference)).plan(n=len(private))
    assert kg_only.sensitivity == pytest.approx(direct.sensitivity * 0.4536, rel=1e-9)
    pipe.set_output(transform="pandas")
    assert list(pipe.transform(private).columns) == ["weight", "temperature"]


@pytest.mark.slow
def test_grid_search_over_epsilon_reports_utility(hospital):
    reference, _ = hospital
    est = AttributePrivateGaussian(law="gaussian",
                                   query=skattr.Query.mean(["weight"]), secret=SECRET,
                                   random_state=0)
    grid = GridSearchCV(est, {"epsilon": [0.1, 0.5, 2.0]},
                        cv=KFold(3, shuffle=True, random_state=0)).fit(reference)
    scores = grid.cv_results_["mean_test_score"]
    assert len(scores) == 3
    # Utility (minus the expected error) increases with epsilon.
    assert scores[0] < scores[1] < scores[2] <= 0
    assert grid.best_params_ == {"epsilon": 2.0}
    # Each score is the plan's expected error on the test fold's size.
    fold = len(reference) // 3
    plan = clone(est).set_params(epsilon=0.1).fit(reference).plan(n=fold)
    assert -scores[0] == pytest.approx(plan.expected_error, rel=0.05)


def test_score_spends_no_privacy(hospital, monkeypatch):
    reference, private = hospital
    est = AttributePrivateGaussian(law="gaussian", query=skattr.Query.mean(["weight"]),
                                   secret=SECRET).fit(reference)
    def drawn(*args, **kwargs):
        pytest.fail("noise drawn")

    # Every release adds its noise through NoiseLaw.perturb and sample.
    monkeypatch.setattr(skattr.noise.NoiseLaw, "perturb", drawn)
    monkeypatch.setattr(skattr.noise.GaussianNoise, "sample", drawn)
    with pytest.raises(pytest.fail.Exception, match="noise drawn"):
        est.release(private)
    scrambled = private.assign(weight=private.weight.sample(frac=1.0,
                                                            random_state=0).to_numpy()
                               * 10)
    assert est.score(private) == est.score(scrambled)


def test_pipeline_with_scaler_on_arrays():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    X[:, 0] = (X[:, 0] > 0).astype(float)
    secret = skattr.Secret.proportion(0, 1.0, pairs=[(0.3, 0.7)])
    # The ColumnTransformer puts the scaled columns first: the secret is column 2.
    moved = skattr.Secret.proportion(2, 1.0, pairs=[(0.3, 0.7)])
    pipe = Pipeline([("scale", ColumnTransformer([("s", StandardScaler(), [1, 2])],
                                                 remainder="passthrough")),
                     ("release", AttributePrivateGaussian(law="gaussian", secret=moved,
                                                          random_state=0))])
    out = pipe.fit(X[:400]).transform(X[400:])
    assert out.shape == (1, 2)
    assert secret.value_of(pd.DataFrame(X)) == pytest.approx((X[:, 0] == 1).mean())
