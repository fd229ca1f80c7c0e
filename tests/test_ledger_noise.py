"""A ledger's ``noise=``: the noise of every release that names no mechanism.

Gaussian noise composes better over many releases (issue 46, deliverable 4:
five releases at epsilon 1 each at most 4 together); a ledger opened with
``noise="gaussian"`` gives it to every release without ``mechanism=`` on
each. Kept in the ledger's file and store, refused when it differs from
theirs, and checked before any fit.
"""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import skattr
from skattr.cli import main
from skattr.datasets import make_hospital
from skattr.exceptions import InvalidParameterError, NotCertifiableError

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])


@pytest.fixture(scope="module")
def hospital():
    return make_hospital(200, random_state=1), make_hospital(2000, random_state=0)


def _ledger(hospital, budget=(10.0, 1e-3), **options):
    private, reference = hospital
    return private.attrpriv.ledger(secret=SECRET, reference=reference,
                                   budget=budget, random_state=0, **options)


def _five(ledger, **options):
    for column in ("weight", "blood_pressure", "height"):
        ledger.mean([column], epsilon=1.0, **options)
    ledger.median(["weight"], epsilon=1.0, **options)
    ledger.mean(["temperature"], epsilon=1.0, **options)
    return ledger


@pytest.mark.slow
def test_five_releases_at_epsilon_1_cost_at_most_4_with_gaussian_noise(hospital):
    ledger = _five(_ledger(hospital, noise="gaussian"))
    assert [e.release.mechanism for e in ledger.releases] == ["apgm"] * 5
    # The target; Laplace noise (the default) spends about the sum.
    assert ledger.spent[0] <= 4.0
    default = _five(_ledger(hospital))
    assert {e.release.mechanism for e in default.releases} == {
        "approx-wasserstein"}
    assert default.spent[0] > 4.5
    # The same releases as mechanism="apgm" on each: the same noise.
    named = _five(_ledger(hospital), mechanism="apgm")
    assert ledger.spent == named.spent
    for ours, theirs in zip(ledger.releases, named.releases, strict=True):
        np.testing.assert_array_equal(ours.noise_cov, theirs.noise_cov)
    assert "takes Gaussian noise (noise='gaussian')" in ledger.in_plain_words()
    assert "noise='gaussian'" not in default.in_plain_words()


def test_a_release_naming_its_mechanism_keeps_it(hospital):
    ledger = _ledger(hospital, noise="gaussian")
    rel = ledger.mean(["weight"], epsilon=1.0, mechanism="approx-wasserstein")
    assert rel.mechanism == "approx-wasserstein"
    assert rel.plan.noise_law.kind == "laplace"
    assert ledger.mean(["height"], epsilon=1.0).mechanism == "apgm"


def test_laplace_noise_in_a_ledger_of_a_stated_law(hospital):
    # law="gaussian" gives sums and means apgm by default; noise="laplace"
    # gives them Laplace noise.
    stated = _ledger(hospital, law="gaussian")
    assert stated.mean(["weight"], epsilon=1.0).mechanism == "apgm"
    laplace = _ledger(hospital, law="gaussian", noise="laplace")
    assert laplace.mean(["weight"], epsilon=1.0).mechanism == "approx-wasserstein"


def test_gaussian_noise_on_a_median_where_the_ledger_cannot_compose_it(hospital):
    ledger = _ledger(hospital, law="gaussian", noise="gaussian")
    with pytest.raises(NotCertifiableError,
                       match="pass mechanism='approx-wasserstein' to this "
                             "release, or open the ledger with noise='laplace'"):
        ledger.median(["weight"], epsilon=1.0)
    assert not ledger.releases
    assert ledger.median(["weight"], epsilon=1.0,
                         mechanism="approx-wasserstein").plan.noise_law.kind == (
        "laplace")


@pytest.mark.parametrize("noise", ["gausian", "Gaussian", None, 1, ["gaussian"]])
def test_an_unknown_noise_is_refused_naming_the_choices(hospital, noise):
    with pytest.raises(InvalidParameterError,
                       match=r"'noise' parameter of df\.attrpriv\.ledger must "
                             r"be 'auto', 'laplace' or 'gaussian'") as refused:
        _ledger(hospital, noise=noise)
    if noise == "gausian":
        assert "Did you mean 'gaussian'?" in str(refused.value)


def test_a_mechanism_given_to_the_ledger_points_to_noise(hospital):
    private, reference = hospital
    with pytest.raises(InvalidParameterError, match="noise='gaussian'"):
        private.attrpriv.ledger(secret=SECRET, reference=reference,
                                budget=(3.0, 1e-3), mechanism="apgm")


def test_noise_is_kept_in_the_file_and_the_store(hospital, tmp_path):
    private, reference = hospital
    ledger = _ledger(hospital, noise="gaussian")
    ledger.mean(["weight"], epsilon=1.0)
    loaded = skattr.Ledger.from_json(ledger.to_json(), private,
                                     reference=reference)
    assert loaded.noise == "gaussian"
    assert repr(loaded).endswith("noise='gaussian')")
    assert loaded.mean(["height"], epsilon=1.0).mechanism == "apgm"
    path = tmp_path / "hospital.ledger"
    kept = skattr.Ledger.open(path, private, secret=SECRET, reference=reference,
                              budget=(3.0, 1e-3), noise="gaussian")
    kept.mean(["weight"], epsilon=1.0)
    again = skattr.Ledger.open(path, private, reference=reference)
    assert again.noise == "gaussian"
    assert again.mean(["height"], epsilon=0.5).mechanism == "apgm"
    assert skattr.Ledger.open(path, private, reference=reference,
                              noise="gaussian").noise == "gaussian"
    with pytest.raises(InvalidParameterError,
                       match="holds a ledger with noise='gaussian'; got "
                             "noise='laplace'. Drop noise= to resume it"):
        skattr.Ledger.open(path, private, reference=reference, noise="laplace")


def test_a_file_written_before_noise_was_kept_reads_as_auto():
    # Written by skattr at cff0359 (a Laplace mean of weight at epsilon 1),
    # before LedgerFile had a noise field.
    private = make_hospital(60, random_state=1)
    reference = make_hospital(600, random_state=0)
    text = (Path(__file__).parent / "data" /
            "ledger_schema3_before_noise.json").read_text()
    assert '"noise": ' not in text.replace('"noise": {', "")
    ledger = skattr.Ledger.from_json(text, private, reference=reference)
    assert ledger.noise == "auto" and ledger.spent == (1.0, 1e-3)
    assert ledger.mean(["height"], epsilon=0.5).mechanism == "approx-wasserstein"


@pytest.mark.slow
def test_the_command_line_opens_a_ledger_with_gaussian_noise(tmp_path, capsys):
    private = tmp_path / "private.csv"
    reference = tmp_path / "reference.csv"
    make_hospital(200, random_state=1).to_csv(private, index=False)
    make_hospital(2000, random_state=0).to_csv(reference, index=False)
    store = tmp_path / "hospital.ledger"
    common = ["--secret-column", "gender", "--secret-value",
              "female", "--pairs", "0.4,0.6", "--reference", str(reference),
              "--ledger", str(store), "--seed", "0"]
    assert main(["release", str(private), "--columns", "weight", *common,
                 "--budget", "3,1e-3", "--noise", "gaussian"]) == 0
    assert "takes Gaussian noise" in " ".join(capsys.readouterr().out.split())
    assert main(["release", str(private), "--columns", "height", *common]) == 0
    capsys.readouterr()
    kept = skattr.Ledger.open(store, make_hospital(200, random_state=1),
                              reference=make_hospital(2000, random_state=0))
    assert [e.release.mechanism for e in kept.releases] == ["apgm", "apgm"]
    assert main(["release", str(private), "--columns", "height", *common,
                 "--noise", "laplace"]) == 2
    assert "opened with --noise gaussian" in " ".join(
        capsys.readouterr().err.split())
    # --noise auto, the default, takes the stored noise (as Ledger.open).
    assert main(["release", str(private), "--columns", "blood_pressure",
                 *common, "--noise", "auto"]) == 0
    capsys.readouterr()
    assert main(["release", str(private), "--columns", "height",
                 *common[:-4], "--noise", "gaussian"]) == 2
    assert "--noise is the noise of a ledger's releases" in " ".join(
        capsys.readouterr().err.split())


def test_a_file_with_another_noise_is_refused_as_altered(hospital):
    # The content hash recomputed over a noise that is not one: a
    # PersistenceError (a file that is not the ledger's), not a parameter
    # error.
    import json

    from skattr._ledger._files import _record
    from skattr._persistence import to_json as saved
    from skattr.exceptions import PersistenceError

    private, reference = hospital
    ledger = _ledger(hospital, noise="gaussian")
    record = _record(ledger, ())
    text = saved(dataclasses.replace(record, noise="lots"))
    assert json.loads(text)
    with pytest.raises(PersistenceError, match="noise"):
        skattr.Ledger.from_json(text, private, reference=reference)


def test_a_ledgers_quantiles_of_its_one_column_keep_the_records_coupling():
    # A query naming no columns reads every column but the secret's: here
    # one, whose levels alone would take that column's coupling; a ledger
    # plans them under the records' coupling it composes under.
    private = make_hospital(200, random_state=1)[["gender", "temperature"]]
    reference = make_hospital(2000, random_state=0)[["gender", "temperature"]]
    ledger = private.attrpriv.ledger(secret=SECRET, reference=reference,
                                     budget=(3.0, 1e-3), random_state=0)
    for query in (skattr.Statistic.quantile(None, [0.25, 0.75]),
                  skattr.Statistic.median(None)):
        est = ledger._planned(query, {"epsilon": 1.0, "mechanism": "apgm"})[0]
        assert not est.law_.one_uniform
