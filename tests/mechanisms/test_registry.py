"""The registry and the one parameter surface of the accessor and the CLI."""

import json

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.cli import main
from skattr.datasets import make_hospital
from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
    NotCertifiableError,
)
from skattr.laws import AssumeGaussian
from skattr.mechanisms import MECHANISMS, BaseMechanism
from skattr.mechanisms._registry import Registry

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])


@pytest.fixture(scope="module")
def frames():
    return make_hospital(2000, random_state=0), make_hospital(60, random_state=1)


def test_every_registered_class_is_found_under_its_declared_name():
    assert len(MECHANISMS) == 16
    for name, cls in MECHANISMS.items():
        assert cls.mechanism_name == name
        assert issubclass(cls, BaseMechanism)
    assert MECHANISMS.choices()[0] == "auto"
    # auto's candidates come first: their order breaks auto's ties.
    flags = [MECHANISMS[n].auto_candidate for n in MECHANISMS]
    assert flags == sorted(flags, reverse=True)
    assert list(MECHANISMS)[:2] == ["apgm", "expm-laplace"]


def test_capabilities_are_declared_on_the_base_with_defaults():
    assert BaseMechanism.needs_reference is True
    assert BaseMechanism.auto_candidate is True
    assert BaseMechanism.accepts_statistics is False
    # The baselines fit no Theta; the Markov quilt mechanisms take theirs as
    # network= (or transition=), so fit reads only the columns too.
    no_reference = {n for n, c in MECHANISMS.items() if not c.needs_reference}
    assert no_reference == {"dp-laplace", "dp-gaussian", "group-dp-laplace",
                            "group-dp-gaussian", "markov-quilt",
                            "markov-quilt-swc"}
    assert {n for n, c in MECHANISMS.items() if c.accepts_statistics} == {
        "wasserstein", "approx-wasserstein", "apgm"}


def test_auto_considers_apgm_for_several_medians_quantiles_or_stds_only():
    from skattr import Statistic

    def auto(query):
        return set(MECHANISMS.classes_for("auto", query))

    laplace = {"wasserstein", "approx-wasserstein"}
    # One value: the Wasserstein mechanisms' one-column coupling gives less
    # noise (apgm's docstring has the figures), so apgm is not fitted.
    assert auto(Statistic.median("x")) == laplace
    assert auto(Statistic.quantile("x", [0.9])) == laplace
    assert auto(Statistic.std("x")) == laplace
    for several in (Statistic.quantile("x", [0.25, 0.75]),
                    Statistic.median(["x", "y"]), Statistic.std(["x", "y"]),
                    Statistic.median()):        # every column: maybe several
        assert auto(several) == laplace | {"apgm"}, several
    # Statistics the bands bound otherwise, or not at all: never apgm.
    for other in (Statistic.trimmed_mean(["x", "y"]),
                  Statistic.ols("y", ["x"]),
                  Statistic.function(lambda frame: frame.mean(), "x")):
        assert auto(other) == laplace, other
        # Named, apgm is refused for them, and not offered as the way out.
        with pytest.raises(InvalidParameterError, match="linear statistics"
                           ) as refused:
            MECHANISMS.classes_for("expm-gaussian", other)
        assert "apgm" not in str(refused.value)
    # A secret whose pairs nest: the move laws come off a ladder of bounds
    # (about 100 CPU-s for two quartiles), so auto does not fit apgm.
    quartiles = Statistic.quantile("x", [0.25, 0.75])
    flat = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
    assert "apgm" in MECHANISMS.classes_for("auto", quartiles, flat)
    for nested in (skattr.Secret.proportion("g", 1, window=0.2,
                                            support=(0.3, 0.7)),
                   skattr.Secret.proportion("g", 1,
                                            pairs=[(0.3, 0.7), (0.4, 0.6)]),
                   [flat, skattr.Secret.proportion("g", 1, sets=[(0, 0.3),
                                                                 (0.6, 1)])]):
        assert set(MECHANISMS.classes_for("auto", quartiles, nested)) == laplace


def test_register_refuses_a_nameless_class_or_a_taken_name():
    registry = Registry()

    class Nameless:
        mechanism_name = ""

    with pytest.raises(TypeError, match="declares no mechanism_name"):
        registry.register(Nameless)
    registry.register(MECHANISMS["apgm"])

    class Impostor:
        mechanism_name = "apgm"

    with pytest.raises(TypeError, match="already registered"):
        registry.register(Impostor)
    with pytest.raises(TypeError):
        MECHANISMS["new"] = Impostor  # the public registry is read-only


@pytest.mark.parametrize("name, match", [
    ("apgn", "Unknown mechanism 'apgn'.*Did you mean 'apgm'"),
    ("markov_quilt", "Unknown mechanism 'markov_quilt'.*Did you mean "
                     "'markov-quilt'"),
    (3, "Unknown mechanism 3"),
])
def test_unknown_mechanisms_are_named(frames, name, match):
    reference, private = frames
    with pytest.raises(InvalidParameterError, match=match):
        private.attrpriv.mean(["weight"], secret=SECRET, reference=reference,
                              mechanism=name)


def test_a_misspelled_keyword_names_the_valid_ones(frames):
    reference, private = frames
    with pytest.raises(InvalidParameterError,
                       match="takes no parameter.*'epsilom'.*Did you mean "
                             "'epsilon'.*It takes: .*delta, epsilon"):
        private.attrpriv.mean(["weight"], secret=SECRET, reference=reference,
                              epsilom=1.0)
    with pytest.raises(InvalidParameterError, match="Did you mean 'epsilon'"):
        private.attrpriv.mean(["weight"], secret=SECRET, reference=reference,
                              mechanism="apgm", epsilom=1.0)


def test_delta_for_laplace_noise_is_refused_the_same_way_everywhere(frames,
                                                                    tmp_path,
                                                                    capsys):
    _, private = frames
    with pytest.raises(InvalidParameterError,
                       match="'dp-laplace' adds Laplace noise only and "
                             "certifies delta = 0, so it takes no 'delta'"):
        private.attrpriv.mean(["weight"], secret=SECRET, mechanism="dp-laplace",
                              delta=1e-3, bounds=(0, 300))
    path = tmp_path / "private.csv"
    private.to_csv(path, index=False)
    args = ["release", str(path), "--columns", "weight", "--secret-column",
            "gender", "--secret-value", "female", "--pairs", "0.4,0.6",
            "--reference", "self", "--mechanism", "dp-laplace",
            "--bounds", "weight=0,300"]
    assert main([*args, "--delta", "1e-3"]) == 2
    assert "takes no 'delta'" in capsys.readouterr().err


def test_the_cli_releases_with_a_baseline_and_its_bounds(frames, tmp_path,
                                                         capsys):
    _, private = frames
    path = tmp_path / "private.csv"
    private.to_csv(path, index=False)
    out = tmp_path / "release.json"
    args = ["release", str(path), "--columns", "weight", "--secret-column",
            "gender", "--secret-value", "female", "--pairs", "0.4,0.6",
            "--reference", "self", "--mechanism", "dp-laplace",
            "--random-state", "0", "--output", str(out)]
    # Without bounds the baseline says what it needs.
    assert main(args[:-4]) == 2
    assert "bounds" in capsys.readouterr().err
    assert main([*args, "--bounds", "0,300"]) == 0
    record = json.loads(out.read_text())
    assert record["mechanism"] == "dp-laplace" and record["delta"] == 0.0
    assert set(record["values"]) == {"weight"}
    assert record["guarantee"].startswith("differential privacy")
    # Laplace(b) with b = (300 - 0) / 60 / epsilon on the mean.
    assert record["noise"] == "Laplace(0, 5) on each statistic"
    assert record["expected_error"] == pytest.approx(5.0)


def test_bounds_parse_per_column_and_refuse_a_mixture(frames, tmp_path, capsys):
    _, private = frames
    path = tmp_path / "private.csv"
    private.to_csv(path, index=False)
    base = ["release", str(path), "--columns", "weight", "height",
            "--secret-column", "gender", "--secret-value", "female", "--pairs",
            "0.4,0.6", "--reference", "self", "--mechanism", "dp-gaussian",
            "--random-state", "0", "--plan"]
    assert main([*base, "--bounds", "weight=0,300", "height=0,250"]) == 0
    # The summary wraps long values: compare with the lines joined.
    out = " ".join(capsys.readouterr().out.split())
    assert "weight in [0, 300], height in [0, 250]" in out
    assert main([*base, "--bounds", "0,300", "height=0,250"]) == 2
    assert "not both" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main([*base, "--bounds", "weight=zero,300"])
    assert exc.value.code == 2
    assert "COLUMN=LO,HI" in capsys.readouterr().err


def test_the_cli_refuses_an_unknown_mechanism_without_a_traceback(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["release", "x.csv", "--columns", "a", "--secret-column", "g",
              "--pairs", "0.4,0.6", "--reference", "self", "--mechanism", "apgn"])
    assert exc.value.code == 2
    assert "invalid choice: 'apgn'" in capsys.readouterr().err


def test_random_state_is_the_cli_name_and_seed_still_works(frames, tmp_path,
                                                           capsys):
    reference, private = frames
    paths = tmp_path / "private.csv", tmp_path / "reference.csv"
    private.to_csv(paths[0], index=False)
    reference.to_csv(paths[1], index=False)
    args = ["release", str(paths[0]), "--columns", "weight", "--secret-column",
            "gender", "--secret-value", "female", "--pairs", "0.4,0.6",
            "--reference", str(paths[1]), "--mechanism", "apgm", "--law",
            "gaussian"]
    outputs = []
    for flag in ("--random-state", "--seed"):
        assert main([*args, flag, "7"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    with pytest.raises(SystemExit):
        main(["release", "--help"])
    assert "--random-state" in capsys.readouterr().out


@pytest.mark.parametrize("law", ["gaussian", "auto"])
def test_delta_zero_under_auto_is_a_clear_refusal_or_a_release(frames, law):
    reference, private = frames
    # Gaussian noise certifies no (epsilon, 0): a named Gaussian mechanism
    # refuses; "auto" skips those candidates and releases with the Laplace
    # noise of the exact Wasserstein mechanism, certified (epsilon, 0) over
    # the reference's confidence bands (almost-sure bounds only).
    rel = private.attrpriv.mean(["weight"], secret=SECRET, reference=reference,
                                delta=0, law=law, random_state=0)
    assert rel.delta == 0.0 and rel.noise == "laplace"
    assert rel.mechanism == "wasserstein" and rel.assumes("reference.band")
    with pytest.raises(InvalidParameterError, match="range \\(0, 1\\)"):
        private.attrpriv.mean(["weight"], secret=SECRET, reference=reference,
                              delta=0, law=law, mechanism="expm-gaussian")
    # Two means at once: the pure Wasserstein mechanism over every
    # statistic's bands (each its own scale); the Gaussian one still refuses.
    both = private.attrpriv.mean(["weight", "height"], secret=SECRET,
                                 reference=reference, delta=0, law=law,
                                 random_state=0)
    assert both.delta == 0.0 and both.mechanism == "wasserstein"
    assert both.assumes("reference.band")
    with pytest.raises(InvalidParameterError, match="'delta' parameter of "
                       "df.attrpriv.mean \\(mechanism='apgm'\\) must be .* "
                       "range \\(0, 1\\)"):
        private.attrpriv.mean(["weight", "height"], secret=SECRET,
                              reference=reference, delta=0, law=law,
                              mechanism="apgm")


def test_delta_zero_is_certified_by_a_laplace_mechanism_when_one_can():
    rng = np.random.default_rng(0)
    reference = pd.DataFrame({"s": rng.random(4000) < 0.5,
                              "c": rng.random(4000) < 0.3})
    reference.loc[reference["s"], "c"] = rng.random(int(reference["s"].sum())) < 0.6
    private = reference.sample(40, random_state=1)
    secret = skattr.Secret.proportion("s", True, pairs=[(0.4, 0.6)])
    rel = private.attrpriv.count(["c"], True, secret=secret, reference=reference,
                                 delta=0, random_state=0)
    assert rel.delta == 0.0 and rel.noise == "laplace"
    assert rel.mechanism in ("wasserstein", "expm-laplace", "dirm-laplace")


def test_leakage_honours_the_mechanism(frames):
    reference, private = frames
    common = dict(secret=SECRET, reference=reference, law="gaussian",
                  theta="moments")
    apgm = private.attrpriv.leakage(["weight"], **common)
    assert private.attrpriv.leakage(["weight"], mechanism="apgm",
                                    **common) == apgm
    # A mechanism with another covariance model leaks another amount.
    equal = private.attrpriv.leakage(
        ["weight"], mechanism="expm-gaussian",
        **{**common, "law": AssumeGaussian(covariances="assume-equal")})
    assert equal != apgm and np.isfinite(equal)
    with pytest.raises(InvalidParameterError,
                       match="'wasserstein' computes no leakage"):
        private.attrpriv.leakage(["weight"], mechanism="wasserstein", **common)


def test_duplicate_reference_columns_get_a_clear_error(frames):
    reference, private = frames
    doubled = pd.concat([reference, reference[["weight"]]], axis=1)
    with pytest.raises(DataValidationError,
                       match="duplicate column names \\['weight'\\]"):
        private.attrpriv.mean(["weight"], secret=SECRET, reference=doubled)


def test_a_private_frame_without_the_secret_column_says_so(frames):
    reference, private = frames
    mech = skattr.mechanisms.AttributePrivateGaussian(
        query=skattr.Query.mean(["weight"]), secret=SECRET, law="gaussian"
    ).fit(reference)
    with pytest.raises(DataValidationError,
                       match="missing \\['gender'\\].*secret's column is never "
                             "read"):
        mech.release(private.drop(columns="gender"))
    with pytest.raises(DataValidationError, match="in another order"):
        mech.release(private[private.columns[::-1]])


def test_a_value_no_candidate_accepts_is_refused_not_dropped(frames):
    # Under "auto" a candidate whose parameters do not fit it is skipped; a
    # misspelt value must not skip every candidate that takes the parameter
    # and leave the release to one that ignores it.
    reference, private = frames
    with pytest.raises(InvalidParameterError,
                       match="'law' parameter of df.attrpriv.mean must "
                             "be one of .*Got 'gausian' instead"):
        private.attrpriv.mean(["weight"], secret=SECRET, reference=reference,
                              law="gausian")
    # A value some candidate accepts is fine (delta = 0.01 for all of them).
    rel = private.attrpriv.mean(["weight"], secret=SECRET, reference=reference,
                                delta=0.01, random_state=0)
    assert rel.delta == 0.01


def test_auto_names_each_reason_once_with_the_mechanisms_it_stopped():
    # A function has no bound valid for the population: both Wasserstein
    # mechanisms refuse it for the same reason, said once.
    rng = np.random.default_rng(0)
    ref = pd.DataFrame({"rich": rng.random(3000) < 0.3,
                        "age": rng.normal(40, 10, 3000).round()})
    secret = skattr.Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
    with pytest.raises(NotCertifiableError) as caught:
        ref.sample(100, random_state=1).attrpriv.agg(
            lambda d: d["age"].max() - d["age"].min(), ["age"],
            secret=secret, reference=ref)
    text = str(caught.value)
    assert "wasserstein, approx-wasserstein: No bound on the function" in text
    assert text.count("theta=skattr.theta.Resample()") == 1
