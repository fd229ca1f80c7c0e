"""No silent wrong release (issue 28): a count that can only be 0, NaN secrets.

Each case is refused with a skattr error before any fit, naming what to fix.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.cli import main
from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
    NotCertifiableError,
    PrivacyLeakWarning,
)

SECRET = skattr.Secret.proportion("gender", "F", pairs=[(0.4, 0.6)])


def _patients(n, seed):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "gender": np.where(rng.random(n) < 0.5, "F", "M"),
        "mortality": (rng.random(n) < 0.05).astype(int),
        "ward": rng.choice(["A", "B", "C"], n),
    })


def test_a_counted_value_of_the_wrong_type_is_refused():
    private, reference = _patients(200, 0), _patients(2000, 1)
    with pytest.raises(DataValidationError, match="value=1"):
        private.attrpriv.proportion("mortality", "1", secret=SECRET,
                                    reference=reference)
    with pytest.raises(DataValidationError, match="holds text"):
        private.attrpriv.count("ward", 3, secret=SECRET, reference=reference)


def test_a_counted_value_in_no_record_is_refused_with_the_values_held():
    private, reference = _patients(200, 0), _patients(2000, 1)
    with pytest.raises(DataValidationError, match="holds ('[ABC]', ){2}'[ABC]';"):
        private.attrpriv.count("ward", "D", secret=SECRET, reference=reference)
    # A value only the reference holds is a count of 0 the data may give.
    only = reference.copy()
    only.loc[0, "ward"] = "D"
    rel = private.attrpriv.count("ward", "D", secret=SECRET, reference=only,
                                 random_state=0)
    assert np.isfinite(rel.values.iloc[0])


def test_a_secret_value_in_no_record_is_refused_with_the_values_held():
    # A misspelt secret value: no record is in the group whose share is
    # hidden; said before any fit, naming the values the column holds.
    private, reference = _patients(200, 0), _patients(2000, 1)
    typo = skattr.Secret.proportion("gender", "f", pairs=[(0.4, 0.6)])
    with pytest.raises(DataValidationError,
                       match=r"The secret's value 'f' occurs in no record of "
                             r"column 'gender'.*holds ('[FM]', )'[FM]';"):
        private.attrpriv.mean(["mortality"], secret=typo, reference=reference)
    number = skattr.Secret.proportion("gender", 1, pairs=[(0.4, 0.6)])
    with pytest.raises(DataValidationError, match="holds text"):
        private.attrpriv.mean(["mortality"], secret=number, reference=reference)


def test_auto_refusal_is_a_few_lines_with_the_reason_that_matters():
    # Issue 28: auto's refusal named ten mechanisms in one 2,578-character
    # line; now a line per distinct reason, and the mechanisms that need a
    # stated model in one short line at the end.
    private, reference = _patients(200, 0), _patients(2000, 1)
    with pytest.raises(NotCertifiableError) as caught:
        private.attrpriv.mean(["mortality"], secret=SECRET,
                              reference=reference, bounds=None)
    lines = str(caught.value).splitlines()
    assert lines[0] == "No available mechanism certifies this release."
    assert len(lines) == 3 and len(str(caught.value)) < 700
    assert "no clipping range" in lines[1] and "bounds=" in lines[1]
    assert lines[2].endswith("certify only a Gaussian law of the statistic "
                             "that you state (law='gaussian', recorded on the "
                             "release).")


def test_nan_in_the_private_secret_column_is_refused():
    private, reference = _patients(200, 0), _patients(2000, 1)
    private.loc[3, "gender"] = np.nan
    with pytest.raises(DataValidationError, match="gender"):
        private.attrpriv.proportion("mortality", 1, secret=SECRET,
                                    reference=reference)


def test_the_cli_reads_value_as_the_column_type(tmp_path, capsys):
    private, reference = tmp_path / "p.csv", tmp_path / "r.csv"
    _patients(200, 0).to_csv(private, index=False)
    _patients(2000, 1).to_csv(reference, index=False)
    args = ["release", str(private), "--statistic", "proportion", "--columns",
            "mortality", "--value", "1", "--secret-column", "gender",
            "--secret-value", "F", "--pairs", "0.4,0.6", "--reference",
            str(reference), "--epsilon", "1", "--seed", "0"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "mortality=1" in out
    # A category no record holds is an error (exit 2), not a release of 0.
    args[args.index("--columns") + 1] = "ward"
    args[args.index("--value") + 1] = "D"
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "'D' occurs in no record of column 'ward'" in err, err


def test_a_large_delta_warns_and_a_huge_one_is_refused():
    private, reference = _patients(200, 0), _patients(2000, 1)
    kw = dict(secret=SECRET, reference=reference, random_state=0)
    with pytest.raises(InvalidParameterError, match="allow_large_delta=True"):
        private.attrpriv.proportion("mortality", 1, delta=0.5, **kw)
    with pytest.warns(PrivacyLeakWarning, match="at least 1/n"):
        private.attrpriv.proportion("mortality", 1, delta=0.5,
                                    allow_large_delta=True, **kw)
    with pytest.warns(PrivacyLeakWarning, match="at least 1/n = 0.005"):
        private.attrpriv.proportion("mortality", 1, delta=0.01, **kw)
    with pytest.warns(PrivacyLeakWarning, match="e\\^20"):
        private.attrpriv.proportion("mortality", 1, epsilon=20, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        private.attrpriv.proportion("mortality", 1, delta=1e-3, **kw)
