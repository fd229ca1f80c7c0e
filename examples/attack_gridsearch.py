"""
Choosing epsilon by utility under a limit on attack accuracy
============================================================

A hospital releases the mean weight, blood pressure and height of 100 patients and
wants to hide whether 40% or 60% of them are women. An attacker who holds
auxiliary records from the same population trains a meta-classifier on shadow
datasets to tell the two apart (the property-inference attack of Chen and
Ohrimenko, Sec. 5.3). ``GridSearchCV`` scores each epsilon twice, by the utility
of the release and by the accuracy of that attack against it, and keeps the
most useful epsilon whose attack accuracy stays at or below 0.6.
"""

import numpy as np
import pandas as pd
from sklearn.model_selection import GridSearchCV

import skattr
from skattr.attacks import (
    PropertyInferenceAttack,
    attack_scorer,
    refit_under_attack_limit,
)
from skattr.datasets import make_hospital
from skattr.mechanisms import AttributePrivateGaussian

N = 100  # patients in a released dataset
LIMIT = 0.6  # highest acceptable attack accuracy (0.5 is chance)

# %%
# Three disjoint samples of the population: reference data the defence fits its
# Theta on, the attacker's auxiliary data, and data to test the attack on.
reference = make_hospital(6000, random_state=0)
auxiliary = make_hospital(4000, random_state=1)
test = make_hospital(4000, random_state=2)
secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
query = skattr.Query.mean(["weight", "blood_pressure", "height"])

# %%
# Without a defence the released means give the proportion away.
bare = PropertyInferenceAttack(query=query, secret=secret, values=(0.4, 0.6),
                               n=N, random_state=0).fit(auxiliary)
print("No defence:", bare.evaluate(test))

# %%
# The grid search. The defence draws its noise from a Generator so that every
# release gets fresh noise (an int seed would add the same noise to all of
# them). The utility is minus the expected error of a release on N records,
# the size the attack is run at; it spends no privacy. The attack scorer
# ignores the cross-validation fold: each fold's candidate is attacked on the
# same auxiliary and test data.
defence = AttributePrivateGaussian(law="gaussian",
                                   query=query, secret=secret, delta=1e-3,
                                   random_state=np.random.default_rng(0))
search = GridSearchCV(
    defence,
    {"epsilon": [0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0]},
    scoring={
        "utility": lambda est, X, y=None: -est.plan(n=N).expected_error,
        "attack": attack_scorer(auxiliary, test, values=(0.4, 0.6), n=N,
                                n_shadow=200, n_test=200, random_state=0),
    },
    refit=refit_under_attack_limit(LIMIT),
    cv=3,
).fit(reference)

table = pd.DataFrame({
    "epsilon": search.cv_results_["param_epsilon"],
    "utility (-E||noise||)": search.cv_results_["mean_test_utility"],
    "attack accuracy": search.cv_results_["mean_test_attack"],
})
with pd.option_context("display.precision", 3, "display.width", 120):
    print(table.to_string(index=False))
print(f"\nChosen epsilon (attack accuracy <= {LIMIT}):",
      search.best_params_["epsilon"])

# %%
# The chosen defence, refit on all the reference data, attacked once more on
# new datasets. An accuracy measured on 200 datasets is itself uncertain by
# about +-0.07, so a limit this close to chance is best read with its interval.
final = PropertyInferenceAttack(search.best_estimator_, values=(0.4, 0.6), n=N,
                                random_state=1).fit(auxiliary)
print("Chosen defence:", final.evaluate(test))
