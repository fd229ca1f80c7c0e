"""Property inference on trained models of Adult (issue 44, items 3 and 4).

The attacker tells apart training sets of 2,000 Adult records whose share of
women is 0.3 or 0.4 (and 0.2 or 0.5; and, separately, whose share of high
earners is 0.2 or 0.3), seeing only the model trained on each:
``PropertyInferenceAttack(model=..., target="income", probe=...)``: shadow
models trained on datasets drawn from one half of Adult, test models on
datasets drawn from the other; the features are each model's probability of
a high income on 200 public probe records (Ganju et al. 2018; Zhang, Tople
and Ohrimenko 2021); the meta-classifier the attack's standardising
logistic regression. Models, on one-hot categorical columns (the schema's
categories, public) and numeric columns:

- ``logistic``: scikit-learn's ``LogisticRegression`` (numeric standardised);
- ``mlp``: scikit-learn's ``MLPClassifier``, one hidden layer of 16;
- ``dp-logistic``: diffprivlib's ``LogisticRegression`` at epsilon 1
  (numeric scaled by public maxima, rows clipped to the public norm
  sqrt(13)); needs the ``diffprivlib`` extra, which imports beside
  scikit-learn 1.6-1.7 only (diffprivlib 0.6.6).

Each plain, and wrapped in ``skattr.ShareHidden`` (dataset privacy: the
share hidden exactly).

Also each model's test accuracy and ROC AUC, trained on 20,000 records, plain
against wrapped, on Adult and on ``make_hospital`` (item 4).

Run: ``SKATTR_DATA=../shared/data OPENBLAS_NUM_THREADS=1 python
benchmarks/model_attack.py [--shadow 200] [--test 200] [--models logistic
mlp dp-logistic] [--secrets women high-earners women-wide] [--defences
plain wrapped] [--no-attack] [--no-utility] > log``; then ``python
benchmarks/model_attack.py --plot docs/_static/model_attack.png log...``
draws the attack rows of the logs.
"""

import time
import warnings

import numpy as np
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

from skattr import Secret, ShareHidden
from skattr.attacks import PropertyInferenceAttack
from skattr.datasets import load_adult, make_hospital

CATEGORICAL = ["workclass", "education", "marital-status", "occupation",
               "relationship", "race", "sex", "native-country"]
NUMERIC = ["age", "education-num", "capital-gain", "capital-loss",
           "hours-per-week"]
#: Public maxima of the numeric columns (Adult's documented ranges).
MAXIMA = np.array([90.0, 16.0, 99999.0, 4356.0, 99.0])

SECRETS = {
    "women": ("women 0.3 vs 0.4", ("sex", "Female"), (0.3, 0.4)),
    "women-wide": ("women 0.2 vs 0.5", ("sex", "Female"), (0.2, 0.5)),
    "high-earners": ("high earners 0.2 vs 0.3", ("income", 1), (0.2, 0.3)),
}


def _scaled(values):
    return np.asarray(values, dtype=float) / MAXIMA


def learner(kind: str, categories):
    """The plain model of ``kind``; the categories are the schema's."""
    onehot = OneHotEncoder(categories=categories, handle_unknown="ignore",
                           sparse_output=kind != "dp-logistic")
    if kind == "dp-logistic":
        from diffprivlib.models import LogisticRegression as DPLogistic

        # Steps that learn nothing from the data (ShareHidden then states
        # each record's guarantee): stated categories, public maxima, a
        # dense output whatever the data.
        columns = make_column_transformer(
            (onehot, CATEGORICAL), (FunctionTransformer(_scaled), NUMERIC),
            sparse_threshold=0)
        return make_pipeline(columns, DPLogistic(
            epsilon=1.0, data_norm=float(np.sqrt(len(CATEGORICAL) + 5)),
            max_iter=300))
    columns = make_column_transformer(
        (onehot, CATEGORICAL), (StandardScaler(), NUMERIC))
    model = (LogisticRegression(max_iter=300) if kind == "logistic" else
             MLPClassifier((16,), max_iter=200, random_state=0))
    return make_pipeline(columns, model)


def adult_data():
    adult = load_adult()[CATEGORICAL + NUMERIC + ["income"]]
    adult = adult.assign(income=(adult.income == ">50K").astype(int))
    for column in CATEGORICAL:
        adult[column] = adult[column].astype(str)
    categories = [sorted(adult[c].unique()) for c in CATEGORICAL]
    order = np.random.default_rng(0).permutation(len(adult))
    half = len(adult) // 2
    auxiliary = adult.iloc[order[:half]].reset_index(drop=True)
    held = adult.iloc[order[half:]].reset_index(drop=True)
    return auxiliary, held, categories


def attack_rows(kinds, secrets, shadow, test, defences=("plain", "wrapped")):
    auxiliary, held, categories = adult_data()
    probe = held.iloc[:200].drop(columns="income")
    testing = held.iloc[200:].reset_index(drop=True)
    for kind in kinds:
        for key in secrets:
            label, (column, value), values = SECRETS[key]
            secret = Secret.proportion(column, value, pairs=[values])
            for name, model in (("plain", learner(kind, categories)),
                                ("ShareHidden", ShareHidden(
                                    learner(kind, categories),
                                    secret=secret))):
                if {"plain": "plain", "ShareHidden": "wrapped"}[name] \
                        not in defences:
                    continue
                start = time.process_time()
                attack = PropertyInferenceAttack(
                    model=model, target="income", probe=probe, secret=secret,
                    values=values, n=2000, n_shadow=shadow, n_test=test,
                    random_state=0, progress=False).fit(auxiliary)
                result = attack.evaluate(testing)
                print(f"{kind:11s} {label:24s} {name:12s} {result} "
                      f"({time.process_time() - start:.0f} CPU-s)", flush=True)


def utility_rows(kinds):
    """Test accuracy and ROC AUC: trained on 20,000 records, plain and wrapped."""
    auxiliary, held, categories = adult_data()
    train, test = auxiliary.iloc[:20000], held.iloc[200:]
    women = Secret.proportion("sex", "Female", pairs=[(0.3, 0.4)])
    earners = Secret.proportion("income", 1, pairs=[(0.2, 0.3)])
    for kind in kinds:
        for label, secret in (("women 0.3 vs 0.4", women),
                              ("high earners 0.2 vs 0.3", earners)):
            _utility(f"Adult {kind}", label,
                     lambda kind=kind: learner(kind, categories), secret,
                     train.drop(columns="income"), train.income,
                     test.drop(columns="income"), test.income,
                     repeats=20 if kind == "dp-logistic" else 1)
    # The hospital: is the patient over 150 lb, from gender, height, blood
    # pressure and temperature.
    def patients(seed):
        frame = make_hospital(20000, random_state=seed)
        X = frame.assign(female=(frame.gender == "female").astype(int))[
            ["female", "height", "blood_pressure", "temperature"]]
        return X, (frame.weight > 150).astype(int).rename("heavy")

    X, y = patients(0)
    Xt, yt = patients(1)
    for label, secret in (
            ("women 0.4 vs 0.6", Secret.proportion("female", 1,
                                                   pairs=[(0.4, 0.6)])),
            ("over 150 lb 0.3 vs 0.6", Secret.proportion(
                "heavy", 1, pairs=[(0.3, 0.6)]))):
        _utility("hospital logistic", label,
                 lambda: make_pipeline(StandardScaler(), LogisticRegression()),
                 secret, X, y, Xt, yt)


def _utility(data, label, make, secret, X, y, Xt, yt, repeats=1):
    """Print the wrapped model's scores against the plain one's: means over
    ``repeats`` fits (a differentially private learner's noise varies)."""
    scores = {}
    for name in ("plain", "wrapped"):
        runs = []
        for seed in range(repeats):
            model = (make() if name == "plain" else
                     ShareHidden(make(), secret=secret, random_state=seed))
            start = time.process_time()
            model.fit(X, y)
            cpu = time.process_time() - start
            p = model.predict_proba(Xt)[:, 1]
            runs.append((np.mean((p > 0.5) == yt), roc_auc_score(yt, p), cpu))
        scores[name] = np.mean(runs, axis=0)
    kept = model.group_sizes_
    print(f"{data:18s} hiding {label:24s} accuracy {scores['wrapped'][0]:.4f} "
          f"wrapped vs {scores['plain'][0]:.4f} plain; ROC AUC "
          f"{scores['wrapped'][1]:.4f} vs {scores['plain'][1]:.4f}; kept "
          f"{kept['inside']} + {kept['outside']} of {len(X)}; fit "
          f"{scores['wrapped'][2]:.2f} vs {scores['plain'][2]:.2f} CPU-s",
          flush=True)


#: One printed attack row: model, secret, defence, accuracy and its interval.
ROW = (r"^(?P<model>\S+)\s+(?P<secret>.+?\d\.\d vs \d\.\d)\s+"
       r"(?P<defence>plain|ShareHidden)\s+accuracy (?P<acc>[\d.]+) "
       r"\(95% CI (?P<low>[\d.]+)-(?P<high>[\d.]+), (?P<n>\d+) datasets\)")


def plot(logs, path):
    """Draw the attack rows printed in ``logs`` (files) to ``path``."""
    import re

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [m.groupdict() for log in logs for line in open(log)
            if (m := re.match(ROW, line))]
    secrets = list(dict.fromkeys(r["secret"] for r in rows))
    models = list(dict.fromkeys(r["model"] for r in rows))
    fig, axes = plt.subplots(1, len(secrets), figsize=(4 * len(secrets), 3.4),
                             sharey=True, squeeze=False)
    for ax, secret in zip(axes[0], secrets, strict=True):
        for i, model in enumerate(models):
            for shift, defence, colour in ((-0.12, "plain", "tab:red"),
                                           (0.12, "ShareHidden", "tab:blue")):
                found = [r for r in rows if r["secret"] == secret
                         and r["model"] == model and r["defence"] == defence]
                if not found:
                    continue
                r = found[-1]
                acc, low, high = (float(r[k]) for k in ("acc", "low", "high"))
                ax.errorbar(i + shift, acc, yerr=[[acc - low], [high - acc]],
                            fmt="o", color=colour, capsize=3,
                            label=defence if i == 0 else None)
        ax.axhline(0.5, color="grey", lw=0.8, ls="--")
        ax.set_xticks(range(len(models)), models)
        ax.set_title(secret, fontsize=10)
        ax.set_ylim(0.3, 1.02)
    axes[0][0].set_ylabel("attack accuracy (95% CI)")
    axes[0][0].legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    import argparse

    from sklearn.exceptions import ConvergenceWarning

    parser = argparse.ArgumentParser()
    parser.add_argument("--shadow", type=int, default=200)
    parser.add_argument("--test", type=int, default=200)
    parser.add_argument("--models", nargs="+",
                        default=["logistic", "mlp", "dp-logistic"])
    parser.add_argument("--secrets", nargs="+",
                        default=["women", "high-earners", "women-wide"])
    parser.add_argument("--defences", nargs="+", default=["plain", "wrapped"],
                        choices=["plain", "wrapped"])
    parser.add_argument("--no-attack", action="store_true")
    parser.add_argument("--no-utility", action="store_true")
    parser.add_argument("--plot", nargs="+", metavar=("PNG", "LOG"),
                        help="draw the attack rows printed in the LOG files "
                             "to PNG, and stop")
    args = parser.parse_args()
    if args.plot:
        plot(args.plot[1:], args.plot[0])
        raise SystemExit
    warnings.simplefilter("ignore", ConvergenceWarning)
    # diffprivlib's warnings (the accountant's, the noise's) are its own.
    warnings.filterwarnings("ignore", module="diffprivlib")
    if not args.no_utility:
        utility_rows(args.models)
    if not args.no_attack:
        attack_rows(args.models, args.secrets, args.shadow, args.test,
                    args.defences)
