"""Messages in the user's words (issue 42): what the user called, what to do."""

import warnings

import pandas as pd
import pytest

import skattr
from skattr.datasets import make_hospital
from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
    SecretReleasedWarning,
)


@pytest.fixture(scope="module")
def hospital():
    data = make_hospital(200, random_state=1)
    reference = make_hospital(2000, random_state=0)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    return data, reference, secret


def _message(call) -> str:
    with pytest.raises(InvalidParameterError) as info:
        call()
    return str(info.value)


@pytest.mark.parametrize("verb, args", [
    ("mean", (["weight"],)), ("sum", (["weight"],)),
    ("proportion", (["gender"], "female")), ("median", (["weight"],)),
    ("quantile", (["weight"], 0.5)), ("std", (["weight"],)),
])
def test_a_parameter_error_names_the_verb_called(hospital, verb, args):
    # It named AttributePrivateGaussian (or the Wasserstein mechanism), a
    # class the user never chose.
    data, reference, secret = hospital
    message = _message(lambda: getattr(data.attrpriv, verb)(
        *args, secret=secret, reference=reference, epsilon="1.0"))
    assert message.startswith(
        f"The 'epsilon' parameter of df.attrpriv.{verb} must be ")
    assert message.endswith("Got '1.0' instead.")
    assert "AttributePrivate" not in message and "Mechanism" not in message


def test_each_path_names_its_own_caller(hospital):
    data, reference, secret = hospital
    model = dict(secret=secret, reference=reference)
    cases = {
        "df.attrpriv.mean": lambda: data.attrpriv.mean(
            ["weight"], delta=-1, **model),
        "df.attrpriv.quantile": lambda: data.attrpriv.quantile(
            ["weight"], 1.5, **model),
        "df.attrpriv.plan": lambda: data.attrpriv.plan(
            ["weight"], epsilon=-1, **model),
        "df.attrpriv.ledger": lambda: data.attrpriv.ledger(
            budget=(3, 2), **model),
        "df.attrpriv.describe": lambda: data.attrpriv.describe(
            ["weight"], epsilon="1.0", **model),
    }
    for caller, call in cases.items():
        assert f"parameter of {caller} must be" in _message(call), caller
    # describe's delta was a ledger's budget inside ("budget must have ...").
    message = _message(lambda: data.attrpriv.describe(["weight"], delta=-1.0,
                                                      **model))
    assert message.startswith("The 'delta' parameter of df.attrpriv.describe")
    ledger = data.attrpriv.ledger(budget=(3, 1e-3), **model)
    for call, caller in ((lambda: ledger.mean(["weight"], epsilon="1.0"),
                          "ledger.mean"),
                         (lambda: ledger.median(["weight"], epsilon=-1),
                          "ledger.median"),
                         (lambda: ledger.plan(["weight"], delta=-1.0),
                          "ledger.plan")):
        assert f"parameter of {caller} must be" in _message(call), caller


def test_a_keyword_caller_is_replaced_whole(hospital):
    data, reference, secret = hospital
    message = _message(lambda: data.attrpriv.mean(
        ["weight"], secret=secret, reference=reference, mechanism="apgm",
        law="gaussian", progress="yes"))
    assert message.startswith("The 'progress' parameter of df.attrpriv.mean "
                              "(mechanism='apgm') must be 'auto' or a bool.")


def test_a_parameter_the_user_did_not_pass_keeps_its_checker(hospital):
    # Only what the user passed is renamed: the message must not blame the
    # verb for a parameter it was never given.
    from skattr.utils._param_validation import (
        as_called,
        validate_parameter_constraints,
    )

    with pytest.raises(InvalidParameterError, match="parameter of Inner must"):
        with as_called("df.attrpriv.mean", {"epsilon"}):
            validate_parameter_constraints({"k": [int]}, {"k": "x"}, "Inner")


def test_the_command_line_names_the_option(tmp_path, capsys):
    from skattr.cli import main

    private, reference = tmp_path / "private.csv", tmp_path / "reference.csv"
    make_hospital(200, random_state=1).to_csv(private, index=False)
    make_hospital(2000, random_state=0).to_csv(reference, index=False)
    assert main(["release", str(private), "--columns", "weight",
                 "--secret-column", "gender", "--secret-value", "female",
                 "--pairs", "0.4,0.6", "--reference", str(reference),
                 "--epsilon", "-1"]) == 2
    err = capsys.readouterr().err
    assert "error: --epsilon must be a finite real number" in err
    assert "parameter of" not in err
    pd.testing.assert_frame_equal(pd.read_csv(private),
                                  make_hospital(200, random_state=1),
                                  check_dtype=False)


def _coded(frame, mapping):
    return frame.assign(gender=frame["gender"].map(mapping))


def test_a_secret_coded_otherwise_in_the_reference_is_said(hospital):
    # The reference codes the column F/O where the data say female/other: it
    # read "0 record(s) matching the secret" (from the fit), with no word of
    # the codings.
    data, reference, secret = hospital
    public = _coded(reference, {"female": "F", "other": "O"})
    with pytest.raises(DataValidationError) as info:
        data.attrpriv.mean(["weight"], secret=secret, reference=public)
    message = str(info.value)
    assert ("The secret's value 'female' occurs in the private data but in no "
            "record of the reference: the two frames code column 'gender' "
            "differently.") in message
    assert "The private data holds 'female', 'other'" in message
    assert "the reference holds 'F', 'O'" in message
    assert ("reference['gender'] = reference['gender'].replace({'F': ..., "
            "'O': ...})") in message
    # The other way round, and through a ledger and a count of the value.
    private = _coded(data, {"female": "F", "other": "O"})
    with pytest.raises(DataValidationError,
                       match="occurs in the reference but in no record of the "
                             "private data: the two frames code"):
        private.attrpriv.ledger(secret=secret, reference=reference,
                                budget=(2, 1e-3)).mean(["weight"])
    plain = skattr.Secret.proportion("gender", "F", pairs=[(0.4, 0.6)])
    with pytest.raises(DataValidationError,
                       match="counted value 'female' occurs in the reference"):
        private.attrpriv.proportion(["gender"], "female", secret=plain,
                                    reference=reference)


def test_a_secret_in_another_case_is_said(hospital):
    data, reference, secret = hospital
    public = _coded(reference, {"female": "Female", "other": "Other"})
    with pytest.raises(DataValidationError) as info:
        data.attrpriv.mean(["weight"], secret=secret, reference=public)
    message = str(info.value)
    assert "('Female' differs from 'female' only in case)" in message
    assert ".replace({'Female': 'female', 'Other': 'other'})" in message


def test_a_group_absent_from_the_data_alone_is_not_a_coding(hospital):
    # No woman among these patients: the data's every value is one the
    # reference holds, so the frames code alike and the release is made.
    data, reference, _ = hospital
    others = data[data["gender"] == "other"]
    secret = skattr.Secret.proportion("gender", "female",
                                      pairs=[(0.0, 0.1)])
    rel = others.attrpriv.mean(["weight"], secret=secret, reference=reference,
                               privacy="distributional", random_state=0)
    assert rel.values.shape == (1,)


def test_releasing_the_secret_itself_warns_at_the_users_line(hospital):
    # The share of women while hiding it: accepted silently, sd 0.28.
    data, reference, secret = hospital
    model = dict(secret=secret, reference=reference, random_state=0)
    with pytest.warns(SecretReleasedWarning,
                      match=r"reads column 'gender', the secret's own.*"
                            r"mostly noise") as caught:
        rel = data.attrpriv.proportion(["gender"], "female", **model)
    assert caught[0].filename == __file__
    assert float(rel.noise_std[0]) > 0.2
    # Its mean (a Secret.mean), through a ledger, and in a plan.
    heavy = skattr.Secret.mean("weight", pairs=[(150.0, 160.0)])
    with pytest.warns(SecretReleasedWarning, match="column 'weight'"):
        data.attrpriv.plan(["weight", "height"], secret=heavy,
                           reference=reference, mechanism="apgm",
                           law="gaussian", theta="gaussian")
    ledger = data.attrpriv.ledger(budget=(5.0, 1e-3), law="gaussian",
                                  secret=secret, reference=reference)
    with pytest.warns(SecretReleasedWarning):
        ledger.proportion(["gender"], "female", epsilon=1.0)
    # Other columns: no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", SecretReleasedWarning)
        data.attrpriv.mean(["weight"], **model)
