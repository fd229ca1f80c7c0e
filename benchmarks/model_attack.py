"""Property inference on trained models of Adult (issue 44, item 3).

The attacker tells apart training sets of 2,000 Adult records whose share of
women is 0.3 or 0.4 (and, separately, whose share of high earners is 0.2 or
0.3), seeing only the model trained on each:
``PropertyInferenceAttack(model=..., target="income", probe=...)``: shadow
models trained on datasets drawn from one half of Adult, test models on
datasets drawn from the other; the features are each model's probability of
a high income on 200 public probe records (Ganju et al. 2018; Zhang, Tople
and Ohrimenko 2021); the meta-classifier the attack's standardising
logistic regression. Models: logistic regression and scikit-learn's
``MLPClassifier`` (one hidden layer of 16), on one-hot categorical and
standardised numeric columns; each plain, and wrapped in
``skattr.ShareHidden`` (dataset privacy: the share hidden exactly).

Also each model's test accuracy and ROC AUC, trained on 20,000 records, plain
against wrapped (item 4).

Run: ``SKATTR_DATA=../shared/data OPENBLAS_NUM_THREADS=1 python
benchmarks/model_attack.py [--shadow 200] [--test 200] [--models logistic mlp]``.
"""

import time
import warnings

import numpy as np
from sklearn.compose import make_column_transformer
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skattr import Secret, ShareHidden
from skattr.attacks import PropertyInferenceAttack
from skattr.datasets import load_adult

CATEGORICAL = ["workclass", "education", "marital-status", "occupation",
               "relationship", "race", "sex", "native-country"]
NUMERIC = ["age", "education-num", "capital-gain", "capital-loss",
           "hours-per-week"]


def learner(kind: str):
    columns = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), CATEGORICAL),
        (StandardScaler(), NUMERIC))
    model = (LogisticRegression(max_iter=300) if kind == "logistic" else
             MLPClassifier((16,), max_iter=200, random_state=0))
    return make_pipeline(columns, model)


def main(shadow=200, test=200, kinds=("logistic", "mlp")):
    warnings.simplefilter("ignore", ConvergenceWarning)
    adult = load_adult()[CATEGORICAL + NUMERIC + ["income"]]
    adult = adult.assign(income=(adult.income == ">50K").astype(int))
    order = np.random.default_rng(0).permutation(len(adult))
    half = len(adult) // 2
    auxiliary = adult.iloc[order[:half]].reset_index(drop=True)
    held = adult.iloc[order[half:]].reset_index(drop=True)
    probe = held.iloc[:200].drop(columns="income")
    testing = held.iloc[200:].reset_index(drop=True)
    secrets = {
        "women 0.3 vs 0.4": (Secret.proportion("sex", "Female",
                                               pairs=[(0.3, 0.4)]), (0.3, 0.4)),
        "high earners 0.2 vs 0.3": (Secret.proportion(
            "income", 1, pairs=[(0.2, 0.3)]), (0.2, 0.3)),
    }
    for kind in kinds:
        utility(kind, auxiliary, testing)
        for label, (secret, values) in secrets.items():
            for name, model in (("plain", learner(kind)),
                                ("ShareHidden", ShareHidden(
                                    learner(kind), secret=secret))):
                start = time.process_time()
                attack = PropertyInferenceAttack(
                    model=model, target="income", probe=probe, secret=secret,
                    values=values, n=2000, n_shadow=shadow, n_test=test,
                    random_state=0, progress=False).fit(auxiliary)
                result = attack.evaluate(testing)
                print(f"{kind:9s} {label:24s} {name:12s} {result} "
                      f"({time.process_time() - start:.0f} CPU-s)", flush=True)


def utility(kind, train, test):
    """Test accuracy and ROC AUC: trained on 20,000 records, plain and wrapped."""
    data = train.iloc[:20000]
    X, y = data.drop(columns="income"), data.income
    Xt, yt = test.drop(columns="income"), test.income
    secret = Secret.proportion("sex", "Female", pairs=[(0.3, 0.4)])
    for name, model in (("plain", learner(kind)),
                        ("ShareHidden (women 0.3 vs 0.4)", ShareHidden(
                            learner(kind), secret=secret, random_state=0))):
        model.fit(X, y)
        p = model.predict_proba(Xt)[:, 1]
        kept = (f"; kept {model.group_sizes_} of 20,000"
                if hasattr(model, "group_sizes_") else "")
        print(f"{kind:9s} {name:32s} test accuracy "
              f"{np.mean((p > 0.5) == yt):.4f}, ROC AUC "
              f"{roc_auc_score(yt, p):.4f}{kept}", flush=True)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--shadow", type=int, default=200)
    parser.add_argument("--test", type=int, default=200)
    parser.add_argument("--models", nargs="+", default=["logistic", "mlp"])
    args = parser.parse_args()
    main(args.shadow, args.test, tuple(args.models))
