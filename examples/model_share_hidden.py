"""
A model that hides the share of its training data
=================================================

A hospital trains a classifier of whether a patient weighs over 150 lb, from
their gender, height, blood pressure and temperature, and wants to publish
it. Whether 30% or 60% of its patients are over 150 lb is the hospital's
own business. The label's share of the training data is exactly what a
property-inference attack reads from a model (Ganju et al. 2018; Zhang,
Tople and Ohrimenko 2021): the attacker trains shadow models on datasets
drawn at each share, reads each model's probabilities on public probe
records, and learns to tell the shares apart.

``skattr.ShareHidden`` wraps the classifier: it keeps, of each group (the
heavy patients and the others), a number of records fixed by n and the
secret alone, drawn at random, and fits the classifier on those. Under the
attribute-privacy model (records independent given their group, a group's
law the same under every secret) the fitted model has one law under both
shares: the share is hidden exactly, with no noise on the model.
"""

import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skattr
from skattr.attacks import PropertyInferenceAttack
from skattr.datasets import make_hospital


def patients(n: int, seed: int) -> pd.DataFrame:
    """n patients: the features, and whether each weighs over 150 lb."""
    frame = make_hospital(n, random_state=seed)
    return pd.DataFrame({
        "female": (frame.gender == "female").astype(int),
        "height": frame.height, "blood_pressure": frame.blood_pressure,
        "temperature": frame.temperature,
        "heavy": (frame.weight > 150).astype(int)})


secret = skattr.Secret.proportion("heavy", 1, pairs=[(0.3, 0.6)])
classifier = make_pipeline(StandardScaler(), LogisticRegression())

# %%
# The hospital's model, plain and wrapped, on 2,000 patients; their test
# accuracy and ROC AUC on 10,000 others.
train, test = patients(2000, 0), patients(10000, 1)
X, y = train.drop(columns="heavy"), train.heavy
Xt, yt = test.drop(columns="heavy"), test.heavy
plain = classifier.fit(X, y)
print(f"plain:   accuracy {plain.score(Xt, yt):.3f}, ROC AUC "
      f"{roc_auc_score(yt, plain.predict_proba(Xt)[:, 1]):.3f}")
hidden = skattr.ShareHidden(classifier, secret=secret, random_state=0)
hidden.fit(X, y)
print(f"wrapped: accuracy {hidden.score(Xt, yt):.3f}, ROC AUC "
      f"{roc_auc_score(yt, hidden.predict_proba(Xt)[:, 1]):.3f}")
print("kept", hidden.group_sizes_, "of", len(X), "patients")

# %%
# What the wrapped model guarantees, and what it does not.
print(hidden.in_plain_words())

# %%
# The attack. The attacker holds auxiliary patients of the same population
# and 100 public probe records; each of the 40 shadow and 60 test datasets
# (300 patients each) trains a fresh model, plain or wrapped.
auxiliary, held_out = patients(6000, 2), patients(6000, 3)
probe = patients(100, 4).drop(columns="heavy")
common = dict(target="heavy", probe=probe, secret=secret, values=(0.3, 0.6),
              n=300, n_shadow=40, n_test=60, random_state=0, progress=False)
for name, model in (("plain", classifier),
                    ("wrapped", skattr.ShareHidden(classifier,
                                                   secret=secret))):
    attack = PropertyInferenceAttack(model=model, **common).fit(auxiliary)
    print(f"attack on the {name} model: {attack.evaluate(held_out)}")

# %%
# The plain model gives the share away; against the wrapped one the attack
# guesses at chance (0.5), whatever meta-classifier it uses, since the
# wrapped model's law is the same under both shares.
