"""Progress bars: shown when asked for, silent otherwise, never changing a result."""

import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import skattr
from skattr.attacks import PropertyInferenceAttack
from skattr.cli import main
from skattr.datasets import make_hospital
from skattr.exceptions import InvalidParameterError, MissingDependencyError
from skattr.mechanisms import ApproximateWassersteinMechanism, WassersteinMechanism
from skattr.mechanisms import _fit_cache
from skattr.theta import Resample
from skattr.utils import _progress
from skattr.utils._progress import progress_bar, progress_enabled, track

BAR = "approx-wasserstein: datasets drawn"
SECRET = skattr.Secret.proportion("group", True, pairs=[(0.3, 0.5)])


@pytest.fixture(scope="module")
def reference():
    rng = np.random.default_rng(0)
    group = rng.random(1500) < 0.4
    return pd.DataFrame({"group": group,
                         "age": rng.normal(40, 10, 1500) + 4 * group})


@pytest.fixture(scope="module")
def private(reference):
    return reference.sample(40, random_state=1)


@pytest.fixture(autouse=True)
def no_fit_kept():
    # A bar shows work done: a Theta fitted before (kept for a repeated
    # release) draws nothing and shows nothing, so each test starts afresh.
    _fit_cache.clear()


def std_release(private, reference, **params):
    """A std released from 4,000 drawn datasets per property value."""
    return private.attrpriv.std(
        ["age"], secret=SECRET, reference=reference, delta=0.01,
        theta=Resample(random_state=0, n_draws=4000), random_state=0, **params)


def without_tqdm(monkeypatch):
    # An entry None in sys.modules makes `import tqdm` fail, as if missing.
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)


# ------------------------------------------------------------------ the helper
def test_auto_shows_bars_only_on_a_terminal_with_tqdm(monkeypatch):
    monkeypatch.setattr(_progress, "_stderr_is_terminal", lambda: False)
    assert progress_enabled("auto") is False
    monkeypatch.setattr(_progress, "_stderr_is_terminal", lambda: True)
    assert progress_enabled("auto") is True
    assert progress_enabled(True) is True and progress_enabled(False) is False
    without_tqdm(monkeypatch)
    assert progress_enabled("auto") is False      # silent: nothing to show with
    assert progress_enabled(False) is False
    with pytest.raises(MissingDependencyError,
                       match=r'pip install "skattr\[progress\]"'):
        progress_enabled(True)


def test_stderr_of_pytest_is_not_a_terminal(capsys):
    # Under capture (as in CI, pipes, notebooks without a terminal) "auto" is
    # off, whatever the machine.
    assert _progress._stderr_is_terminal() is False
    assert progress_enabled("auto") is False


@pytest.mark.parametrize("value", ["yes", 1, 0, None, "AUTO", np.True_])
def test_a_setting_other_than_auto_or_a_bool_is_refused(value):
    with pytest.raises(InvalidParameterError,
                       match=r"The 'progress' parameter of .+ must be 'auto' or "
                             r"a bool\. Got .+ instead\."):
        progress_enabled(value)


def test_bars_write_to_stderr_only_when_on(capsys):
    with progress_bar(True, total=3, desc="rounds", unit="round") as bar:
        for _ in range(3):
            bar.update(1)
    err = capsys.readouterr().err
    # The bar shows its total and, being a library's, clears itself at the end.
    assert "rounds:" in err and "/3 " in err and err.endswith("\r")
    assert list(track(range(4), True, desc="squares")) == [0, 1, 2, 3]
    assert "squares" in capsys.readouterr().err
    with progress_bar(False, total=3, desc="rounds") as bar:
        bar.update(3)
    assert list(track(range(4), "auto", desc="squares")) == [0, 1, 2, 3]
    assert capsys.readouterr() == ("", "")


# ----------------------------------------------------------------- mechanisms
@pytest.mark.parametrize("cls", [ApproximateWassersteinMechanism,
                                 WassersteinMechanism])
def test_progress_is_an_estimator_parameter(cls):
    est = cls(secret=SECRET, progress=False)
    assert est.get_params()["progress"] is False
    assert cls().get_params()["progress"] == "auto"
    assert clone(est).progress is False
    assert est.set_params(progress=True).progress is True


def test_progress_shows_the_draws_and_changes_no_release(private, reference,
                                                         capsys):
    quiet = std_release(private, reference, progress=False)
    assert capsys.readouterr().err == ""
    _fit_cache.clear()              # else the same Theta is reused, undrawn
    shown = std_release(private, reference, progress=True)
    err = capsys.readouterr().err
    assert BAR in err and "/8000 " in err
    auto = std_release(private, reference)          # "auto", not a terminal
    assert capsys.readouterr().err == ""
    for other in (shown, auto):
        assert other.values.equals(quiet.values)
        assert (other.sensitivity, other.epsilon, other.delta,
                other.certified_by) == (quiet.sensitivity, quiet.epsilon,
                                        quiet.delta, quiet.certified_by)


def test_the_plan_cache_ignores_progress(private, reference):
    est = ApproximateWassersteinMechanism(
        query=skattr.Statistic.std("age"), secret=SECRET, delta=0.01,
        theta=Resample(random_state=0, n_draws=4000), progress=False,
    ).fit(reference)
    plan = est.plan(n=40)
    assert est.set_params(progress=True).plan(n=40) is plan


def test_progress_true_without_tqdm_names_the_extra(private, reference,
                                                    monkeypatch, capsys):
    without_tqdm(monkeypatch)
    with pytest.raises(MissingDependencyError,
                       match=r'pip install "skattr\[progress\]"'):
        std_release(private, reference, progress=True)
    quiet = std_release(private, reference)         # "auto": silently off
    assert capsys.readouterr().err == ""
    assert quiet.sensitivity > 0


def test_every_mechanism_takes_progress_through_the_accessor(private, reference,
                                                             capsys):
    # A mechanism with no step that takes seconds checks it and shows nothing.
    rel = private.attrpriv.mean(["age"], secret=SECRET, reference=reference,
                                mechanism="apgm", law="gaussian",
                                random_state=0, progress=True)
    assert rel.mechanism == "apgm" and capsys.readouterr().err == ""
    with pytest.raises(InvalidParameterError,
                       match=r"The 'progress' parameter of df.attrpriv.mean "
                             r"\(mechanism='apgm'\) must be 'auto' or a bool\. "
                             r"Got 'yes' instead\."):
        private.attrpriv.mean(["age"], secret=SECRET, reference=reference,
                              mechanism="apgm", law="gaussian", progress="yes")


def test_a_ledger_neither_keys_nor_stores_progress(private, reference):
    ledger = private.attrpriv.ledger(
        secret=SECRET, reference=reference, budget=(5.0, 0.1),
        theta=Resample(random_state=0, n_draws=4000), random_state=0)
    ledger.std(["age"], epsilon=1.0, delta=0.01, progress=True)
    ledger.std(["age"], epsilon=1.0, delta=0.01, progress=False)
    keys = {entry.laplace["key"] for entry in ledger.releases}
    # One statistic released twice (epsilons add), not two statistics.
    assert len(keys) == 1 and "progress" not in keys.pop()
    assert "progress" not in ledger.to_json()
    assert ledger.spent[0] == pytest.approx(2.0)


# --------------------------------------------------------------------- attack
def test_attack_progress_counts_datasets_and_changes_nothing(capsys):
    auxiliary = make_hospital(600, random_state=0)
    test = make_hospital(600, random_state=1)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    kw = dict(query=skattr.Query.mean(["weight"]), secret=secret,
              values=(0.4, 0.6), n=50, n_shadow=40, n_test=40, random_state=0)
    quiet = PropertyInferenceAttack(progress=False, **kw).fit(auxiliary)
    quiet_score = quiet.score(test)
    assert capsys.readouterr().err == ""
    shown = PropertyInferenceAttack(progress=True, **kw).fit(auxiliary)
    shown_score = shown.score(test)
    err = capsys.readouterr().err
    assert "property inference: datasets" in err and "/40 " in err
    np.testing.assert_array_equal(shown.shadow_features_, quiet.shadow_features_)
    assert shown_score == quiet_score
    assert clone(shown).progress is True
    with pytest.raises(InvalidParameterError, match="'progress' parameter"):
        PropertyInferenceAttack(progress="on", **kw).fit(auxiliary)


# ------------------------------------------------------------------------ CLI
def cli_files(tmp_path, private, reference):
    paths = tmp_path / "private.csv", tmp_path / "reference.csv"
    for frame, path in zip((private, reference), paths, strict=True):
        frame.astype({"group": int}).to_csv(path, index=False)
    return [str(p) for p in paths]


def test_cli_progress_flags(tmp_path, private, reference, capsys, monkeypatch):
    data, ref = cli_files(tmp_path, private, reference)
    # The resampling model, chosen: it draws datasets.
    args = ["release", data, "--columns", "age", "--statistic", "std",
            "--theta", "resample", "--secret-column", "group", "--pairs",
            "0.3,0.5", "--reference", ref, "--delta", "0.01", "--seed", "0"]
    assert main([*args, "--progress"]) == 0
    shown = capsys.readouterr()
    assert BAR in shown.err
    assert main([*args, "--no-progress"]) == 0
    quiet = capsys.readouterr()
    assert quiet.err == ""
    assert main(args) == 0                          # "auto": not a terminal
    assert capsys.readouterr().err == ""
    without_tqdm(monkeypatch)
    assert main([*args, "--progress"]) == 2
    assert 'pip install "skattr[progress]"' in capsys.readouterr().err
