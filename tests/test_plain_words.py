"""Every summary opens with the guarantee in plain words (issue 28)."""

import numpy as np
import pytest

import skattr
from skattr._plain import plain_secret
from skattr.datasets import make_hospital

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])


@pytest.fixture(scope="module")
def hospital():
    return make_hospital(200, random_state=1), make_hospital(2000, random_state=0)


@pytest.mark.parametrize("secret, words", [
    (SECRET, "whether the share of records with gender = 'female' is 0.4 or 0.6"),
    (skattr.Secret.mean("income", pairs=[(40_000, 60_000), (50_000, 70_000)]),
     "whether the mean of income is 40000 or 60000 (and likewise 50000 or "
     "70000)"),
    (skattr.Secret.proportion("sex", "Female", sets=[(0.25, 0.5), (0.5, 0.75)]),
     "whether the share of records with sex = 'Female' lies in [0.25, 0.5] or "
     "[0.5, 0.75]"),
    (skattr.Secret.proportion("x", 1, window=0.1, support=(0.3, 0.7)),
     "the share of records with x = 1 (any two of its values within 0.1 of "
     "each other, in (0.3, 0.7))"),
    (skattr.Secret.proportion("income", skattr.predicates.Above(50_000),
                              pairs=[(0.2, 0.3)]),
     "whether the share of records whose income satisfies "),
])
def test_each_kind_of_secret_reads_in_plain_words(secret, words):
    assert plain_secret(secret.label).startswith(words)


def test_the_default_release_says_what_it_holds_for(hospital):
    private, reference = hospital
    rel = private.attrpriv.mean(["weight"], secret=SECRET, reference=reference,
                                epsilon=0.5, random_state=0)
    words = rel.in_plain_words()
    assert words.startswith("Hidden: whether the share of records with gender "
                            "= 'female' is 0.4 or 0.6. ")
    assert ("seeing this release changes their odds by at most a factor "
            "e^0.5 = 1.65 (epsilon = 0.5), except with probability 0.001 "
            "(delta)") in words
    assert ("It holds for the population the reference data were sampled "
            "from, with probability at least 0.999 over that sample.") in words
    assert "through a ledger" in words
    text = str(rel.summary())
    assert text.startswith("Hidden: ")
    # The technical certificate follows under its own heading.
    assert text.index("Certificate") > text.index("Release")


def test_a_chosen_model_is_named_as_the_users_choice(hospital):
    private, reference = hospital
    plan = private.attrpriv.plan(["weight"], secret=SECRET, reference=reference,
                                 mechanism="apgm", law="gaussian")
    words = plan.in_plain_words()
    assert "a release by this plan changes their odds" in words
    assert "It rests on a model you chose (law='gaussian')" in words
    assert "population the reference" not in words


def test_differential_privacy_says_it_hides_records_not_the_property(hospital):
    private, reference = hospital
    rel = private.attrpriv.mean(["weight"], secret=SECRET, reference=reference,
                                mechanism="dp-laplace", epsilon=1.0,
                                bounds={"weight": (50, 300)},
                                random_state=0)
    words = rel.in_plain_words()
    assert words.startswith("Each record is hidden, not a property of the "
                            "whole data")
    assert "always (delta = 0)" in words
    assert "Differential privacy composes" in words


def test_a_ledger_states_its_joint_guarantee(hospital):
    private, reference = hospital
    ledger = private.attrpriv.ledger(secret=SECRET, reference=reference,
                                     budget=(4.0, 1e-3), random_state=0)
    assert "Nothing released yet" in ledger.in_plain_words()
    ledger.mean(["weight"], epsilon=1.0)
    ledger.mean(["blood_pressure"], epsilon=1.0)
    words = ledger.in_plain_words()
    spent = ledger.spent[0]
    assert (f"seeing all 2 releases together changes their odds by at most a "
            f"factor e^{spent:.4g} = {np.exp(spent):.3g}") in words
    assert "with probability at least 0.999 over that sample" in words
    assert words.endswith("past a factor e^4 = 54.6 (epsilon = 4).")
