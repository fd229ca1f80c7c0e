"""The skattr command line."""

import pandas as pd
import pytest

from skattr.cli import main
from skattr.datasets import make_hospital


def test_demo_prints_releases_and_guarantees(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert out.count("(1, 0.001)-attribute private") == 6
    assert "no noise" in out
    assert "sensitivity 6.125" in out


def test_release_from_csv(tmp_path, capsys):
    private = tmp_path / "private.csv"
    reference = tmp_path / "reference.csv"
    make_hospital(60, random_state=1).to_csv(private, index=False)
    make_hospital(2000, random_state=0).to_csv(reference, index=False)
    out_csv = tmp_path / "out.csv"
    code = main(["release", str(private), "--columns", "weight", "blood_pressure",
                 "--secret-column", "gender", "--secret-value", "female",
                 "--pairs", "0.4,0.6", "--reference", str(reference),
                 "--epsilon", "1", "--delta", "1e-3", "--seed", "0",
                 "--output", str(out_csv)])
    assert code == 0
    out = capsys.readouterr().out
    assert "(1, 0.001)-attribute privacy" in out and "released" in out
    written = pd.read_csv(out_csv)
    assert written["statistic"].tolist() == ["weight", "blood_pressure"]
    assert (written["epsilon"] == 1.0).all() and (written["delta"] == 1e-3).all()
    assert main(["release", str(private), "--columns", "weight", "--secret-column",
                 "gender", "--secret-value", "female", "--pairs", "0.4,0.6",
                 "--reference", str(reference), "--plan"]) == 0
    assert "no noise drawn" in capsys.readouterr().out


def test_release_of_a_median_and_quantiles(tmp_path, capsys):
    private = tmp_path / "private.csv"
    reference = tmp_path / "reference.csv"
    make_hospital(60, random_state=1).to_csv(private, index=False)
    make_hospital(3000, random_state=0).to_csv(reference, index=False)
    out_csv = tmp_path / "out.csv"
    common = [str(private), "--columns", "weight", "--secret-column", "gender",
              "--secret-value", "female", "--pairs", "0.4,0.6", "--reference",
              str(reference), "--delta", "0.01", "--seed", "0"]
    assert main(["release", *common, "--statistic", "median",
                 "--output", str(out_csv)]) == 0
    out = capsys.readouterr().out
    assert "approx-wasserstein" in out and "released" in out
    assert pd.read_csv(out_csv)["statistic"].tolist() == ["weight"]
    assert main(["release", *common, "--statistic", "quantile", "--q", "0.25",
                 "0.75", "--plan"]) == 0
    out = capsys.readouterr().out
    assert "statistics         weight:q0.25, weight:q0.75" in out


def test_release_errors_are_reported(tmp_path, capsys):
    private = tmp_path / "private.csv"
    make_hospital(60, random_state=1).to_csv(private, index=False)
    code = main(["release", str(private), "--columns", "weight", "--secret-column",
                 "gender", "--secret-value", "female", "--pairs", "0.4,0.6",
                 "--reference", str(private), "--epsilon", "0"])
    assert code == 2
    assert "'epsilon' parameter" in capsys.readouterr().err
    assert main(["release", str(tmp_path / "missing.csv"), "--columns", "w",
                 "--secret-column", "g", "--pairs", "0.4,0.6",
                 "--reference", "self"]) == 2


def test_help_documents_release(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["release", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--secret-column", "--pairs", "--reference", "--epsilon", "--plan"):
        assert flag in out


def test_errors_name_the_command_line_options(tmp_path, capsys):
    private = tmp_path / "private.csv"
    reference = tmp_path / "reference.csv"
    make_hospital(60, random_state=1).to_csv(private, index=False)
    make_hospital(2000, random_state=0).to_csv(reference, index=False)
    code = main(["release", str(private), "--columns", "weight",
                 "--secret-column", "gender", "--secret-value", "female",
                 "--pairs", "0.4,0.6", "--reference", str(reference),
                 "--mechanism", "apgm"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--law gaussian" in err and "--mechanism approx-wasserstein" in err
    assert "law='gaussian'" not in err
