"""
Plotting error, releases and attacks on the hospital data
=========================================================

A hospital of 50 patients releases their mean weight while hiding whether 40% or
60% of them are women (Zhang et al.'s synthetic hospital). ``skattr.plotting``
draws the three pictures behind the choice of a mechanism and of epsilon: the
expected error of each mechanism against epsilon, computed from dry runs that
spend no privacy; one release with its intervals and its guarantee; and the
accuracy of a property-inference attack against epsilon, beside chance and the
attack on the exact statistic. The plots need matplotlib
(``pip install "skattr[plot]"``).
"""

import numpy as np

import skattr
from skattr.datasets import make_hospital
from skattr.mechanisms import AttributePrivateGaussian
from skattr.plotting import plot_attack_accuracy, plot_release, plot_tradeoff

N = 50  # patients in the released dataset
EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)

private = make_hospital(N, random_state=1)
reference = make_hospital(2000, random_state=0)
secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])

# %%
# Error against epsilon
# ---------------------
# Every point is a plan: the noise each mechanism needs for 50 records, before any
# is drawn. Each mechanism's Theta is fitted once and planned at every epsilon.
# ``law="gaussian"`` lets the Gaussian mechanisms model the mean as Gaussian (the
# release records that assumption); ``"auto"`` takes, at each epsilon, the
# certified mechanism with the least expected error, and its legend entry says
# which. Where the data's own variance covers the secret, a release needs no noise:
# its error is zero, off the logarithmic axis, and marked on the epsilon axis.
ax = plot_tradeoff(private, ["weight"], secret=secret, reference=reference,
                   epsilons=EPSILONS, law="gaussian",
                   mechanisms=("auto", "apgm", "expm-gaussian", "optimal"))
for line in ax.get_lines():
    if not line.get_label().startswith("_"):
        errors = ", ".join(f"{e:.3g}" for e in line.get_ydata())
        print(f"{line.get_label()}: {errors}")

# %%
# One release
# -----------
# The values the Attribute-Private Gaussian Mechanism releases at epsilon = 1, each
# with the interval that holds the true mean with probability 95% over the noise,
# and the guarantee in the title. Drawing a release is post-processing: it spends
# nothing.
release = private.attrpriv.mean(["weight", "height"], secret=secret,
                                reference=reference, mechanism="apgm",
                                law="gaussian", epsilon=1.0)
print(release.conf_int(0.05))
ax = plot_release(release, alpha=0.05)

# %%
# Attack accuracy against epsilon
# -------------------------------
# An attacker with 2,000 records of its own trains a meta-classifier on shadow
# datasets (Chen and Ohrimenko, Sec. 5.3) to tell 40% from 60% women, at each
# epsilon, and is scored on fresh datasets: the bars are 95% Wilson intervals of
# its accuracy (on 60 datasets each: quick, and wide). The defence draws its noise
# from a Generator, so each release gets fresh noise; the attack's seed draws the
# same datasets at every epsilon. The certificate bounds every attacker only for
# the pairs it hides; the attack is one attacker, measured.
auxiliary = make_hospital(2000, random_state=2)
test = make_hospital(2000, random_state=3)
defence = AttributePrivateGaussian(query=skattr.Query.mean(["weight"]),
                                   secret=secret, law="gaussian",
                                   random_state=np.random.default_rng(0),
                                   ).fit(reference)
ax = plot_attack_accuracy(defence, auxiliary, test, epsilons=(0.1, 0.5, 2.0, 10.0),
                          values=(0.4, 0.6), n=N, n_shadow=60, n_test=60,
                          random_state=0)
print([text.get_text() for text in ax.get_legend().get_texts()])
