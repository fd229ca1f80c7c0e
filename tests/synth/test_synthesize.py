"""The shape users reach for (issue 30, item 3): ``synthesize``, the accessor's
``synthesize`` verb, ``skattr synthesize`` and saved synthesisers."""

import json

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr import Secret
from skattr.cli import main
from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
    PersistenceError,
)
from skattr.synth import DPRAP, AttributePrivateRAP, SyntheticData, synthesize

SECRET = Secret.proportion("sex", "F", pairs=[(0.3, 0.4)])
FAST = dict(privacy="distributional", n_synthetic=100, iterations=100,
            random_state=0, progress=False)


@pytest.fixture(scope="module")
def people():
    rng = np.random.default_rng(0)
    n = 3000
    sex = np.where(rng.random(n) < 0.35, "F", "M")
    return pd.DataFrame({
        "sex": sex,
        "job": np.where(sex == "F", rng.choice(["a", "b"], n),
                        rng.choice(["b", "c"], n)),
        "age": rng.integers(18, 90, n),
        "hours": rng.normal(40, 8, n).round(1),
    })


BINS = {"age": [0, 30, 50, np.inf], "hours": [-np.inf, 35, 45, np.inf]}


def test_synthesize_reads_the_domain_from_what_is_public(people):
    reference = people.sample(500, random_state=1)
    before = people.copy()
    out = synthesize(people, secret=SECRET, bins=BINS, reference=reference,
                     k=2, n=1200, **FAST)
    pd.testing.assert_frame_equal(people, before)          # not mutated
    assert isinstance(out, SyntheticData)
    assert out.data.shape == (1200, 4)
    assert set(out.data.age) <= {"[0, 30)", "[30, 50)", "[50, inf)"}
    assert (out.data.sex == "F").mean() == pytest.approx(0.35)
    assert out.share == 0.35 and out.epsilon == 1.0 and out.delta == 1e-6
    # The share hidden but for the size bound's failure (distributional);
    # each record by differential privacy.
    assert (out.certificate.epsilon, out.certificate.delta) == (0.0, 1e-6)
    assert out.records_certificate.guarantee == "differential privacy"
    assert out.to_dict()["group_sizes"] == out.group_sizes
    assert all(len(m) == 2 for m in out.marginals)
    assert set(out.noise_sd) == {"inside", "outside"}
    text = out.summary()
    assert "0.35, as stated" in text and "0.3 or 0.4" in text
    assert "subsampled at random" in text and "no reference data" in text
    assert "differential privacy" in text
    record = out.to_dict()
    assert json.loads(json.dumps(record))["share"] == 0.35
    # Seeded: the same call gives the same table.
    again = synthesize(people, secret=SECRET, bins=BINS, reference=reference,
                       k=2, n=1200, **FAST)
    pd.testing.assert_frame_equal(out.data, again.data)


def test_the_accessor_verb_is_synthesize(people):
    cats = {"sex": ["F", "M"], "job": ["a", "b", "c"]}
    out = people[["sex", "job"]].attrpriv.synthesize(
        500, secret=SECRET, categories=cats, k=1, **FAST)
    assert out.data.shape == (500, 2)
    assert out.certificate.assumes("records.independent")
    with pytest.raises(InvalidParameterError, match="secret=Secret"):
        people.attrpriv.synthesize(categories=cats)


def test_a_dask_frame_is_asked_to_compute_first(people):
    dd = pytest.importorskip("dask.dataframe")
    frame = dd.from_pandas(people, npartitions=2)
    with pytest.raises(DataValidationError, match=r"\.compute\(\)"):
        frame.attrpriv.synthesize(secret=SECRET, reference=people)


def test_bad_domains_get_clear_errors(people):
    with pytest.raises(InvalidParameterError, match="public information"):
        synthesize(people, secret=SECRET, **FAST)
    with pytest.raises(InvalidParameterError, match=r"bins=\{'age'"):
        synthesize(people, secret=SECRET, reference=people.head(400),
                   bins={"hours": BINS["hours"]}, **FAST)
    with pytest.raises(InvalidParameterError, match="outside its categories"):
        synthesize(people, secret=SECRET, bins=BINS,
                   reference=people[people.job != "c"], **FAST)
    with pytest.raises(InvalidParameterError, match="not among the columns"):
        synthesize(people, secret=SECRET, columns=["sex", "job"], bins=BINS,
                   reference=people, **FAST)
    with pytest.raises(InvalidParameterError, match="which the private data does not"):
        synthesize(people, secret=SECRET, columns=["jobs"], reference=people,
                   **FAST)
    with pytest.raises(InvalidParameterError, match="not among the domain"):
        synthesize(people.drop(columns="sex"), reference=people, bins=BINS,
                   secret=SECRET, **FAST)
    with pytest.raises(InvalidParameterError, match="n_synthetic"):
        synthesize(people, secret=SECRET, reference=people, bins=BINS,
                   **{**FAST, "n_synthetic": 0})
    with pytest.raises(InvalidParameterError, match="positive int"):
        synthesize(people, secret=SECRET, reference=people, bins=BINS, n=0,
                   **FAST)


def test_a_saved_synthesiser_samples_as_the_fitted_one(people, tmp_path):
    cats = {"sex": ["F", "M"], "job": ["a", "b", "c"]}
    rap = AttributePrivateRAP(categories=cats, secret=SECRET, k=2,
                              **FAST).fit(people)
    text = rap.to_json()
    assert "F" in text and len(text) < 2_000_000
    loaded = AttributePrivateRAP.from_json(text)
    pd.testing.assert_frame_equal(loaded.sample(300, random_state=2),
                                  rap.sample(300, random_state=2))
    assert loaded.certificate_.method == rap.certificate_.method
    with pytest.raises(PersistenceError):
        DPRAP.from_json(text)                      # not what the file holds
    predicate = AttributePrivateRAP(
        categories=cats, secret=Secret.proportion("sex", lambda s: s == "F",
                                                  pairs=[(0.3, 0.4)]), k=2,
        **FAST)
    with pytest.raises(PersistenceError, match="predicates"):
        predicate.fit(people[["sex", "job"]]).to_json()


def test_the_command_writes_the_table_and_says_what_it_certifies(
        people, tmp_path, capsys):
    data, ref = tmp_path / "people.csv", tmp_path / "public.csv"
    people.to_csv(data, index=False)
    people.head(800).to_csv(ref, index=False)
    out, saved = tmp_path / "synthetic.csv", tmp_path / "rap.json"
    code = main(["synthesize", str(data), "--secret-column", "sex",
                 "--secret-value", "F", "--pairs", "0.3,0.4",
                 "--privacy", "distributional", "--reference", str(ref),
                 "--bins", "age=0,30,50,inf", "hours=-inf,35,45,inf",
                 "--k", "2", "--marginals", "4", "--iterations", "50",
                 "--rows", "700", "--seed", "3", "--output", str(out),
                 "--save", str(saved), "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 0
    table = pd.read_csv(out)
    assert table.shape == (700, 4) and (table.sex == "F").mean() == 0.35
    assert "0.35, as stated" in printed and f"700 records to {out}" in printed
    loaded = AttributePrivateRAP.from_json(saved.read_text())
    assert loaded.sample(10, random_state=0).shape == (10, 4)


def _command(people, tmp_path):
    data, ref = tmp_path / "people.csv", tmp_path / "public.csv"
    people.to_csv(data, index=False)
    people.head(800).to_csv(ref, index=False)
    return ["synthesize", str(data), "--secret-column", "sex",
            "--secret-value", "F", "--pairs", "0.3,0.4", "--privacy",
            "distributional", "--reference", str(ref), "--bins",
            "age=0,30,50,inf", "hours=-inf,35,45,inf", "--k", "2",
            "--marginals", "4", "--iterations", "50", "--rows", "300",
            "--seed", "3", "--no-progress"]


def test_the_command_checks_every_output_path_before_it_fits(
        people, tmp_path, capsys, monkeypatch):
    # Issue 42: --save into a missing folder failed with a raw errno message
    # after the table was written (the release made, the synthesiser lost).
    def fitted(*args, **kwargs):
        raise AssertionError("the synthesiser was fitted")

    monkeypatch.setattr(skattr.synth, "synthesize", fitted)
    out = tmp_path / "synthetic.csv"
    for option, missing in (("--save", "rap.json"), ("--output", "t.csv")):
        paths = {"--output": str(out), "--save": str(tmp_path / "rap.json"),
                 option: str(tmp_path / "no such folder" / missing)}
        assert main([*_command(people, tmp_path), "--output",
                     paths["--output"], "--save", paths["--save"]]) == 2
        err = capsys.readouterr().err
        assert f"{option} {paths[option]} cannot be written" in err
        assert "nothing was released" in err and "Errno" not in err
        assert sorted(p.name for p in tmp_path.iterdir()) == [
            "people.csv", "public.csv"]


def test_the_command_saves_the_synthesiser_whole_or_not_at_all(
        people, tmp_path, capsys, monkeypatch):
    saved = tmp_path / "rap.json"
    saved.write_text("the synthesiser saved before")
    out = tmp_path / "synthetic.csv"

    def full(self):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(AttributePrivateRAP, "to_json", full)
    assert main([*_command(people, tmp_path), "--output", str(out), "--save",
                 str(saved)]) == 2
    printed = capsys.readouterr()
    assert f"--save {saved} could not be written" in printed.err
    assert f"The synthetic table was written to {out}" in printed.err
    assert "0.35, as stated" in printed.out         # the summary, shown
    # The table (the release) is written; the old file is as it was, and
    # no temporary file is left.
    assert len(pd.read_csv(out)) == 300
    assert saved.read_text() == "the synthesiser saved before"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "people.csv", "public.csv", "rap.json", "synthetic.csv"]


def test_the_command_s_mistakes_name_the_option_to_fix(people, tmp_path,
                                                       capsys):
    data = tmp_path / "people.csv"
    people.to_csv(data, index=False)
    base = ["synthesize", str(data), "--secret-value", "F", "--pairs",
            "0.3,0.4", "--output", str(tmp_path / "o.csv")]
    assert main([*base, "--secret-column", "sexx"]) == 2
    assert "Did you mean 'sex'" in capsys.readouterr().err
    assert main([*base, "--secret-column", "sex"]) == 2
    err = capsys.readouterr().err
    assert "--categories COLUMN=A,B,..." in err and "--reference FILE" in err
    assert main([*base, "--secret-column", "sex", "--reference", str(data)]) == 2
    assert "--bins age=E1,E2,..." in capsys.readouterr().err
    assert main([*base, "--secret-column", "sex", "--bins", "age"]) == 2
    assert "COLUMN=A,B,..." in capsys.readouterr().err
    assert main([*base, "--secret-column", "sex", "--bins", "ag=0,1"]) == 2
    assert "--bins names ['ag']" in capsys.readouterr().err
    assert main([*base, "--secret-column", "sex", "--bins", "age=0,x"]) == 2
    assert "takes numbers" in capsys.readouterr().err
    assert main([*base, "--secret-column", "sex", "--reference", str(data),
                 "--save", "x.txt"]) == 2
    assert "ending in .json" in capsys.readouterr().err
    assert main([*base, "--secret-column", "sex", "--reference", str(data),
                 "--columns", "sex", "job", "--rows", "0"]) == 2
    assert "--rows must be a positive whole number" in capsys.readouterr().err
    assert main([*base, "--secret-column", "sex", "--reference", str(data),
                 "--columns", "sex", "job", "--marginals", "0"]) == 2
    assert "--marginals must be an int" in capsys.readouterr().err
    assert not (tmp_path / "o.csv").exists()


def test_synthesize_is_listed_in_the_public_api():
    assert "synthesize" in dir(skattr.synth)
    assert callable(pd.DataFrame().attrpriv.synthesize)


def test_the_plot_shows_each_group_s_cells_against_the_release(people):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from skattr.plotting import plot_synthetic

    cats = {"sex": ["F", "M"], "job": ["a", "b", "c"]}
    out = synthesize(people[["sex", "job"]], secret=SECRET, categories=cats,
                     k=2, **FAST)
    ax = plot_synthetic(out)
    clouds = ax.collections
    assert len(clouds) == 2                      # inside and outside
    cells = sum(2 * 3 for _ in out.marginals)    # one 2-way marginal
    assert all(len(c.get_offsets()) == cells for c in clouds)
    assert "attribute privacy" in ax.get_title()
    with pytest.raises(InvalidParameterError, match="not fitted"):
        plot_synthetic(AttributePrivateRAP(categories=cats, secret=SECRET))
    with pytest.raises(InvalidParameterError, match="synthesiser"):
        plot_synthetic(people)
    matplotlib.pyplot.close("all")


def test_the_workload_can_be_chosen_from_public_data(people, capsys,
                                                     tmp_path):
    from skattr.synth import select_marginals

    cats = {"sex": ["F", "M"], "job": ["a", "b", "c"],
            "age": ["[0, 30)", "[30, 50)", "[50, inf)"]}
    public = people.head(1000)
    binned, _ = skattr.synth.bin_columns(public, {"age": BINS["age"]})
    chosen = select_marginals(binned[list(cats)], cats, k=2, n_marginals=1)
    # job is drawn from sex (a, b for women; b, c for men), age apart.
    assert chosen == [("sex", "job")]
    out = synthesize(people[list(cats)], secret=SECRET, reference=public,
                     bins={"age": BINS["age"]}, k=2, n_marginals=1,
                     marginals="reference", **FAST)
    assert out.marginals == (("sex", "job"),)
    named = synthesize(people[list(cats)], secret=SECRET, reference=public,
                       bins={"age": BINS["age"]},
                       marginals=[("age",), ("job", "age")], **FAST)
    assert named.marginals == (("age",), ("job", "age"))
    with pytest.raises(InvalidParameterError, match="pass reference="):
        synthesize(people, secret=SECRET, categories=cats, marginals="reference",
                   **FAST)
    with pytest.raises(InvalidParameterError, match="distinct columns"):
        synthesize(people[list(cats)], secret=SECRET, reference=public,
                   bins={"age": BINS["age"]}, marginals=[("job", "job")],
                   **FAST)
    with pytest.raises(InvalidParameterError, match="distinct columns"):
        synthesize(people[list(cats)], secret=SECRET, reference=public,
                   bins={"age": BINS["age"]}, marginals=[("jobs",)], **FAST)
    data = tmp_path / "people.csv"
    people.to_csv(data, index=False)
    assert main(["synthesize", str(data), "--secret-column", "sex",
                 "--secret-value", "F", "--pairs", "0.3,0.4", "--privacy",
                 "distributional", "--reference", str(data), "--columns",
                 "sex", "job", "--k", "2", "--marginals", "1", "--choose",
                 "reference", "--iterations", "20", "--output",
                 str(tmp_path / "o.csv"), "--no-progress"]) == 0
    assert "each group's 1 marginals" in capsys.readouterr().out


def test_the_default_path_draws_from_the_operating_system(people):
    cats = {"sex": ["F", "M"], "job": ["a", "b", "c"]}
    unseeded = {**FAST, "random_state": None}
    out = people[["sex", "job"]].attrpriv.synthesize(
        400, secret=SECRET, categories=cats, k=2, **unseeded)
    assert out.data.shape == (400, 2)
    assert out.synthesizer.sample(50).shape == (50, 2)


def test_a_saved_synthesiser_keeps_no_seed(people):
    """With the seed and the noisy answers anyone could subtract the noise."""
    cats = {"sex": ["F", "M"], "job": ["a", "b", "c"]}
    rap = AttributePrivateRAP(categories=cats, secret=SECRET, k=2,
                              **{**FAST, "random_state": 12345}).fit(people)
    loaded = AttributePrivateRAP.from_json(rap.to_json())
    assert loaded.random_state is None and rap.random_state == 12345
    assert "12345" not in rap.to_json()
    dp = DPRAP(categories=cats, k=2, n_synthetic=20, iterations=5,
               random_state=777, progress=False).fit(people[["sex", "job"]])
    assert DPRAP.from_json(dp.to_json()).random_state is None


def test_mistakes_are_refused_before_any_budget_is_spent(people, monkeypatch):
    cats = {"sex": ["F", "M"], "job": ["a", "b", "c"]}
    frame = people[["sex", "job"]]

    def spent(*args, **kwargs):
        raise AssertionError("fit ran")

    monkeypatch.setattr(AttributePrivateRAP, "fit", spent)
    with pytest.raises(InvalidParameterError, match="positive int"):
        synthesize(frame, secret=SECRET, categories=cats, n=0, **FAST)
    with pytest.raises(InvalidParameterError, match="positive int"):
        synthesize(frame, secret=SECRET, categories=cats, n=100.0, **FAST)
    with pytest.raises(InvalidParameterError, match=r"categories names \['Job'\]"):
        synthesize(frame, secret=SECRET, categories={**cats, "Job": ["a"]},
                   reference=people, **FAST)
    with pytest.raises(InvalidParameterError, match="is a dict"):
        synthesize(frame, secret=SECRET, categories=["F", "M"], **FAST)
    with pytest.raises(InvalidParameterError, match="is a dict"):
        synthesize(frame, secret=SECRET, categories=cats, bins=[1, 2], **FAST)


def test_the_messages_say_what_to_pass(people):
    cats = {"sex": ["F", "M"], "job": ["a", "b", "c"]}
    frame = people[["sex", "job"]]
    with pytest.raises(InvalidParameterError, match=r"\['F', 'M'\].*Check"):
        synthesize(frame, secret=Secret.proportion("sex", "f", pairs=[(0.3, 0.4)]),
                   categories=cats, **FAST)
    with pytest.raises(InvalidParameterError, match="Pass k=2"):
        synthesize(frame, secret=SECRET, categories=cats, k=3, **FAST)
    from skattr.predicates import Above
    with pytest.raises(InvalidParameterError, match="OneOf"):
        synthesize(people, secret=Secret.proportion("age", Above(50),
                                                    pairs=[(0.3, 0.4)]),
                   bins=BINS, categories=cats, **FAST)


@pytest.mark.slow
def test_python_m_skattr_cli_runs_the_command():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "skattr.cli", "--version"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("skattr ")


def test_a_misspelt_keyword_or_a_missing_value_is_named(people):
    cats = {"sex": ["F", "M"], "job": ["a", "b", "c"]}
    with pytest.raises(InvalidParameterError,
                       match="Did you mean 'n_synthetic' for 'n_synthetics'"):
        people.attrpriv.synthesize(secret=SECRET, n_synthetics=10)
    holes = people[["sex", "job"]].assign(job=people.job.where(people.index > 3))
    with pytest.raises(InvalidParameterError, match="missing values"):
        synthesize(holes, secret=SECRET, categories=cats, k=2, **FAST)


@pytest.mark.slow
def test_the_attack_measures_a_synthesiser(people):
    """skattr.attacks against synthetic tables: DPRAP's table gives the share
    away (through a column that depends on it), AttributePrivateRAP's is at
    chance; the attack's own draws and meta-classifier."""
    from skattr.attacks import PropertyInferenceAttack

    cats = {"sex": ["F", "M"], "job": ["a", "b", "c"]}
    frame = people[["sex", "job"]]
    aux, test = frame.iloc[:1500], frame.iloc[1500:]
    secret = Secret.proportion("sex", "F", pairs=[(0.2, 0.8)])
    query = skattr.Query.proportion("job", "a")
    common = dict(values=(0.2, 0.8), n=200, n_shadow=30, n_test=30,
                  random_state=0)
    fast = dict(n_synthetic=50, iterations=50, progress=False)
    leaky = PropertyInferenceAttack(
        query=query, secret=secret, synthesizer=DPRAP(
            categories=cats, k=2, epsilon=20.0, **fast), **common)
    # epsilon = 20 hides little, on purpose here: DPRAP says so.
    with pytest.warns(skattr.exceptions.PrivacyLeakWarning, match="epsilon=20"):
        assert leaky.fit(aux).score(test) >= 0.9
    hidden = PropertyInferenceAttack(
        query=query, synthesizer=AttributePrivateRAP(
            categories=cats, secret=secret, k=2, **fast), **common)
    # The share hidden exactly: the attack is at chance.
    result = hidden.fit(aux).evaluate(test)
    assert result.ci_low <= 0.5 <= result.ci_high and result.accuracy <= 0.75
    assert hidden.secret_ is secret                 # the synthesiser's own
    with pytest.raises(InvalidParameterError, match="pass the statistic"):
        PropertyInferenceAttack(synthesizer=AttributePrivateRAP(
            categories=cats, secret=secret), **common).fit(aux)
    with pytest.raises(InvalidParameterError, match="unfitted synthesiser"):
        PropertyInferenceAttack(query=query, secret=secret, synthesizer=42,
                                **common).fit(aux)
    with pytest.raises(InvalidParameterError, match="pass an instance"):
        PropertyInferenceAttack(query=query, secret=secret, synthesizer=DPRAP,
                                **common).fit(aux)
    with pytest.raises(InvalidParameterError, match="hides no secret"):
        PropertyInferenceAttack(query=query, synthesizer=DPRAP(
            categories=cats), **common).fit(aux)
    with pytest.raises(InvalidParameterError, match="do not have"):
        PropertyInferenceAttack(query=skattr.Query.proportion("age", 1),
                                secret=secret, synthesizer=DPRAP(
                                    categories=cats), **common).fit(aux)
    # A clone of the attack (GridSearchCV's) never changes the caller's
    # synthesiser.
    from sklearn.base import clone

    template = DPRAP(categories=cats, k=2, epsilon=1.0)
    attack = PropertyInferenceAttack(query=query, secret=secret,
                                     synthesizer=template, **common)
    clone(attack).set_params(synthesizer__epsilon=5.0)
    assert template.epsilon == 1.0
