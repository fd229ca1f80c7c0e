"""Every summary opens with the guarantee in plain words (issue 28)."""

import dataclasses
import math
import re

import numpy as np
import pandas as pd
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


# ---------------------------------------------------------------- issue 42
def test_every_summary_says_the_property_is_hidden_not_the_records(hospital):
    from skattr._plain import RECORDS
    from skattr.mechanisms import MECHANISMS

    private, reference = hospital
    common = dict(secret=SECRET, reference=reference, random_state=0)
    rel = private.attrpriv.mean(["weight"], **common)
    plan = private.attrpriv.plan(["weight"], secret=SECRET, reference=reference)
    ledger = private.attrpriv.ledger(budget=(2.0, 1e-3), **common)
    empty = ledger.in_plain_words()
    ledger.mean(["weight"], epsilon=1.0)
    described = private.attrpriv.describe(["weight"], percentiles=[],
                                          **common)
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"sex": rng.choice(["F", "M"], 600),
                          "job": rng.choice(["a", "b"], 600)})
    synthetic = skattr.synth.synthesize(
        table, secret=skattr.Secret.proportion("sex", "F", pairs=[(0.4, 0.6)]),
        categories={"sex": ["F", "M"], "job": ["a", "b"]}, k=1,
        privacy="distributional", n_synthetic=20, iterations=20,
        random_state=0)
    texts = [str(rel.summary()), rel.in_plain_words(), str(plan.summary()),
             empty, ledger.in_plain_words(), described.summary()]
    for text in texts:
        assert " ".join(RECORDS.split()) in " ".join(text.split())
    # A synthetic table protects the records too (issue 43), and says so;
    # asked not to, it says what is exposed.
    assert "Each record is protected by (1, 1e-06)-differential privacy" in \
        " ".join(synthetic.summary().split())
    assert "df.attrpriv.synthesize" in RECORDS
    with pytest.warns(skattr.exceptions.PrivacyLeakWarning):
        bare = skattr.synth.synthesize(
            table, secret=skattr.Secret.proportion("sex", "F",
                                                   pairs=[(0.4, 0.6)]),
            categories={"sex": ["F", "M"], "job": ["a", "b"]}, k=1,
            individuals=None, n_synthetic=20, iterations=20, random_state=0)
    assert "No record is protected" in bare.summary()
    assert bare.epsilon == math.inf
    assert "not any one record" in RECORDS
    # What it points at exists, and does what it says: the group baselines
    # hide all n records at once by default (every property), the others
    # one record.
    named = set(re.findall(r"'([a-z-]+)'", RECORDS))
    assert named == {"group-dp-laplace", "group-dp-gaussian", "dp-laplace",
                     "dp-gaussian"}
    assert named <= set(MECHANISMS)
    assert hasattr(skattr.synth, "DPRAP")
    for name in ("group-dp-laplace", "group-dp-gaussian"):
        group = private.attrpriv.plan(["weight"], secret=SECRET,
                                      mechanism=name,
                                      bounds={"weight": (50.0, 300.0)})
        assert group.guarantee.endswith(f"groups of k = {len(private)} records)")
        words = group.in_plain_words()
        assert words.startswith("Every record and every property")
        assert RECORDS not in words
    one = private.attrpriv.plan(["weight"], secret=SECRET, mechanism="dp-laplace",
                                bounds={"weight": (50.0, 300.0)})
    assert one.in_plain_words().startswith("Each record is hidden, not a "
                                           "property of the whole data")


def _half_width(release) -> float:
    """The 95% half-width of the noise, computed apart from skattr's."""
    if release.noise == "laplace":
        return release.noise_scale * math.log(20)        # P(|L| > t) = e^(-t/b)
    return 1.959963984540054 * float(release.noise_std[0])


def test_a_release_mostly_noise_says_so_and_a_useful_one_does_not():
    private = make_hospital(800, random_state=1)
    bounds = {"weight": (80.0, 240.0)}
    useful = private.attrpriv.mean(["weight"], secret=SECRET,
                                   reference=make_hospital(2000, random_state=0),
                                   bounds=bounds, random_state=0)
    # 30 reference records a group: the noise of a median hides where it is.
    noisy = private.attrpriv.median(["weight"], secret=SECRET,
                                    reference=make_hospital(60, random_state=0),
                                    bounds=bounds, random_state=0)
    for release in (useful, noisy):
        assert release.ranges == ((80.0, 240.0),)
    # The rule, recomputed: the 95% interval against half the range.
    assert 2 * _half_width(useful) < 160.0 / 2 < 2 * _half_width(noisy)
    assert "Mostly noise" not in str(useful.summary())
    assert "Mostly noise" not in useful.in_plain_words()
    text = " ".join(str(noisy.summary()).split())
    assert text.startswith("Hidden: ")
    assert ("Mostly noise: the noise's 95% interval is wider than half the "
            "range the statistic can take (weight: +/- "
            f"{_half_width(noisy):.3g} against 80 to 240), so this release "
            "cannot tell in which half of that range it lies.") in text
    assert ("More private records, more reference data (a narrower Theta), a "
            "larger epsilon or tighter bounds= would narrow it.") in text
    plan = make_hospital(800, random_state=2).attrpriv.plan(
        ["weight"], statistic="median", secret=SECRET,
        reference=make_hospital(60, random_state=0), bounds=bounds)
    assert "a release by this plan could not tell" in plan.in_plain_words()


def test_a_share_a_count_and_differential_privacy_are_judged_alike(hospital):
    private, reference = hospital
    # Releasing a share with noise sd 0.28: its interval spans [0, 1].
    share = private.attrpriv.proportion("gender", "other", secret=SECRET,
                                        reference=reference, random_state=0)
    count = private.attrpriv.count("gender", "other", secret=SECRET,
                                   reference=reference, random_state=0)
    assert share.ranges == ((0.0, 1.0),)
    assert count.ranges == ((0.0, 200.0),)
    assert 2 * _half_width(share) > 0.5
    for release in (share, count):
        assert "Mostly noise" in release.in_plain_words()
    dp = private.attrpriv.mean(["weight"], secret=SECRET, mechanism="dp-laplace",
                               epsilon=0.05, bounds={"weight": (50.0, 300.0)},
                               random_state=0)
    words = dp.in_plain_words()
    assert "Mostly noise" in words and "reference data" not in words
    assert "a larger epsilon or tighter bounds=" in words


def test_the_ranges_are_kept_with_the_record(hospital):
    from skattr._release import Release

    private, reference = hospital
    rel = private.attrpriv.quantile(["weight", "height"], [0.25, 0.75],
                                    secret=SECRET, reference=reference,
                                    random_state=0)
    low, high = reference["weight"].min(), reference["weight"].max()
    assert rel.ranges[:2] == ((low, high), (low, high))
    assert Release.from_json(rel.to_json()).ranges == rel.ranges
    with pytest.raises(ValueError, match="one \\(low, high\\) pair"):
        dataclasses.replace(rel, ranges=((1.0, 0.0),) * 4)
    with pytest.raises(ValueError, match="one \\(low, high\\) pair"):
        dataclasses.replace(rel, ranges=((0.0, 1.0),))


def test_a_described_table_names_its_noisy_cells(hospital):
    private, reference = hospital
    table = private.attrpriv.describe(["weight"], secret=SECRET,
                                      reference=reference, percentiles=[0.5],
                                      random_state=0)
    text = " ".join(table.summary().split())
    assert "Mostly noise" in text and "quantile(weight:q0.5): +/-" in text
    assert "the table cannot tell" in text


def test_a_ledgers_release_says_it_is_one_of_them():
    # Not "release several through a ledger" for a release made through one;
    # kept in the ledger's file; a release alone keeps its sentence.
    private = make_hospital(200, random_state=1)
    reference = make_hospital(2000, random_state=0)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    ledger = private.attrpriv.ledger(secret=secret, reference=reference,
                                     budget=(3.0, 1e-3), random_state=0)
    rel = ledger.mean(["weight"], epsilon=1.0)
    words = rel.in_plain_words()
    assert rel.in_ledger and "one of a ledger's releases" in words
    assert "release several through a ledger" not in words
    loaded = skattr.Ledger.from_json(ledger.to_json(), private,
                                     reference=reference)
    assert loaded.releases[0].release.in_ledger
    assert skattr.Release.from_json(rel.to_json()).in_ledger
    alone = private.attrpriv.mean(["weight"], secret=secret,
                                  reference=reference, random_state=0)
    assert not alone.in_ledger
    assert "release several through a ledger" in alone.in_plain_words()
    with pytest.raises(ValueError, match="in_ledger"):
        skattr.Release(plan=alone.plan, values=alone.values, in_ledger=1)
