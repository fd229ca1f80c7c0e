"""A reference with other columns, or its columns in another order (issue 42).

A hospital's table and last year's public table differ in columns no release
reads (a ``notes`` column, another order). Every convenience path (the
accessor's verbs, ``plan``, ``leakage``, a ledger, ``describe()``,
``synthesize`` and ``skattr release``) takes from each frame only the
columns a release reads, in one order: the release is the one the aligned
frames give (same seed, same values and certificate); the caller's frames
are not modified; a needed column one frame lacks is refused, naming the
frame and the column. The estimators keep scikit-learn's convention.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.cli import main
from skattr.datasets import make_hospital
from skattr.exceptions import DataValidationError, InvalidParameterError

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
COMMON = dict(secret=SECRET, epsilon=1.0, random_state=0)


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.fixture(scope="module")
def aligned():
    """The private data and reference with the same columns, in one order."""
    return make_hospital(200, random_state=1), make_hospital(1000, random_state=0)


def _unhashable(n):
    # Lists: any read of this column's values (a hash, a conversion to
    # numbers, a fingerprint) raises, so a release that succeeds read none.
    return pd.Series([[i] for i in range(n)], dtype=object)


@pytest.fixture(scope="module")
def messy(aligned):
    """The same records, with columns no release reads and another order."""
    private, reference = aligned
    private = private.assign(notes=_unhashable(len(private)),
                             ward=np.where(np.arange(len(private)) % 2, "A",
                                           "B"))
    reference = reference.assign(source="census",
                                 scan=_unhashable(len(reference)))
    return (private[["notes", "weight", "gender", "ward", "height",
                     "blood_pressure", "temperature"]],
            reference[["scan", "temperature", "blood_pressure", "height",
                       "weight", "source", "gender"]])


def same_release(left, right):
    pd.testing.assert_series_equal(left.values, right.values)
    np.testing.assert_array_equal(left.noise_std, right.noise_std)
    assert (left.mechanism, left.epsilon, left.delta) == (
        right.mechanism, right.epsilon, right.delta)


def unchanged(frames):
    """Copies of ``frames``, and a check that they are still equal."""
    copies = [f.copy() for f in frames]

    def check():
        for frame, copy in zip(frames, copies, strict=True):
            assert list(frame.columns) == list(copy.columns)
            pd.testing.assert_frame_equal(frame, copy)
    return check


@pytest.mark.parametrize("verb, args", [
    ("mean", (["weight", "height"],)),
    ("sum", (["weight"],)),
    ("proportion", (["temperature"], lambda v: v > 37.0)),
    pytest.param("median", (["weight"],), marks=pytest.mark.slow),
])
def test_every_verb_releases_what_the_aligned_frames_give(aligned, messy,
                                                          verb, args):
    check = unchanged(messy)
    want = getattr(aligned[0].attrpriv, verb)(*args, reference=aligned[1],
                                              **COMMON)
    got = getattr(messy[0].attrpriv, verb)(*args, reference=messy[1],
                                           **COMMON)
    same_release(got, want)
    check()


@pytest.fixture
def fitted_on(monkeypatch):
    """The columns of every (private, reference) pair a fit was given."""
    from skattr.mechanisms._registry import Registry

    seen = []
    fit = Registry.fit_candidates

    def spy(self, mechanism, query, *, secret, reference, data, **kw):
        seen.append((list(data.columns), list(getattr(reference, "columns",
                                                      []))))
        return fit(self, mechanism, query, secret=secret, reference=reference,
                   data=data, **kw)
    monkeypatch.setattr(Registry, "fit_candidates", spy)
    return seen


@pytest.mark.slow
def test_plan_and_leakage_take_the_columns_they_read(aligned, messy,
                                                     fitted_on):
    check = unchanged(messy)
    want = aligned[0].attrpriv.plan(["weight"], secret=SECRET,
                                    reference=aligned[1])
    got = messy[0].attrpriv.plan(["weight"], secret=SECRET,
                                 reference=messy[1])
    assert got.noise_std.tolist() == want.noise_std.tolist()
    assert messy[0].attrpriv.leakage(
        ["weight"], secret=SECRET, reference=messy[1], law="gaussian"
    ) == aligned[0].attrpriv.leakage(["weight"], secret=SECRET,
                                     reference=aligned[1], law="gaussian")
    check()
    # Only the statistic's and the secret's columns reach a fit, in the
    # private data's order.
    assert len(fitted_on) == 4
    assert all(data == reference and sorted(data) == ["gender", "weight"]
               for data, reference in fitted_on)
    assert [data for data, _ in fitted_on].count(["weight", "gender"]) == 2


def test_every_column_by_default_is_the_private_datas(aligned, messy):
    # No columns named: every column of the private data but the secret's,
    # in its order; the reference's own extra columns are not released.
    private, reference = aligned
    shuffled = reference[reference.columns[::-1]].assign(source="census")
    got = private.attrpriv.mean(reference=shuffled, **COMMON)
    same_release(got, private.attrpriv.mean(reference=reference, **COMMON))
    assert list(got.values.index) == ["height", "weight", "blood_pressure",
                                      "temperature"]
    # A column of the private data the reference lacks is named.
    with pytest.raises(DataValidationError,
                       match="The reference data has no column 'ward', a "
                             "released column, which the private data has"):
        messy[0].drop(columns="notes").attrpriv.mean(reference=messy[1],
                                                     **COMMON)


@pytest.mark.slow
def test_a_ledger_releases_what_the_aligned_frames_give(aligned, messy):
    check = unchanged(messy)
    outs = []
    for private, reference in (aligned, messy):
        ledger = private.attrpriv.ledger(secret=SECRET, reference=reference,
                                         budget=(3.0, 1e-3), random_state=0)
        first = ledger.mean(["weight"], epsilon=1.0)
        second = ledger.median(["height"], epsilon=1.0)
        outs.append((first, second, ledger.spent))
    for got, want in zip(outs[1][:2], outs[0][:2], strict=True):
        same_release(got, want)
    assert outs[1][2] == outs[0][2]
    check()


def test_a_kept_ledger_reopens_on_frames_with_other_columns(aligned, messy,
                                                            tmp_path):
    # Its fingerprints hold the columns a release can read, so the frames
    # may gain or lose others, or be reordered, between runs.
    private, reference = messy
    path = tmp_path / "ledger.db"
    ledger = skattr.Ledger.open(path, private, secret=SECRET,
                                reference=reference, budget=(3.0, 1e-3),
                                random_state=0)
    ledger.mean(["weight"], epsilon=1.0)
    again = skattr.Ledger.open(path, aligned[0], reference=aligned[1],
                               random_state=0)
    assert len(again.releases) == 1
    assert again.spent == ledger.spent


@pytest.mark.slow
def test_describe_gives_the_aligned_frames_table(aligned, messy):
    check = unchanged(messy)
    kw = dict(secret=SECRET, epsilon=2.0, percentiles=[0.5], random_state=0)
    want = aligned[0].attrpriv.describe(["weight"], reference=aligned[1], **kw)
    got = messy[0].attrpriv.describe(["weight"], reference=messy[1], **kw)
    pd.testing.assert_frame_equal(got.table, want.table)
    check()


@pytest.fixture(scope="module")
def people():
    rng = np.random.default_rng(0)
    n = 1500
    return pd.DataFrame({"sex": np.where(rng.random(n) < 0.35, "F", "M"),
                         "job": rng.choice(["a", "b", "c"], n),
                         "kids": rng.integers(0, 3, n)})


SYNTH = dict(secret=skattr.Secret.proportion("sex", "F", pairs=[(0.3, 0.4)]),
             privacy="distributional", k=1, n_synthetic=100, iterations=50,
             random_state=0, progress=False)


def test_synthesize_reads_the_reference_by_column(people):
    reference = people.sample(400, random_state=1)
    messy = reference.assign(notes=_unhashable(len(reference)))[
        ["notes", "kids", "job", "sex"]]
    check = unchanged([people, messy])
    want = people.attrpriv.synthesize(reference=reference, **SYNTH).data
    got = people.attrpriv.synthesize(reference=messy, **SYNTH).data
    pd.testing.assert_frame_equal(got, want)
    # Integers in one frame and floats in the other are the same numbers, a
    # category the same labels as text (issue 42: refused as "values
    # outside its categories: 0, 1, 2" before).
    # The table's dtypes come from the public categories (the reference's
    # floats here), never from the private column's (issue 43: a dtype can
    # depend on the values).
    retyped = reference.astype({"kids": float, "sex": "category"})
    got = people.attrpriv.synthesize(reference=retyped, **SYNTH).data
    assert got.kids.dtype == np.float64 and want.kids.dtype == np.int64
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    check()
    with pytest.raises(InvalidParameterError,
                       match="The reference data has no column.*'kids'.*"
                             "columns="):
        people.attrpriv.synthesize(reference=reference.drop(columns="kids"),
                                   **SYNTH)
    with pytest.raises(DataValidationError,
                       match="Column 'kids' holds int64 values in the "
                             "private data but str"):
        people.attrpriv.synthesize(reference=reference.astype({"kids": str}),
                                   **SYNTH)


@pytest.mark.parametrize("frame, column, match", [
    ("reference", "weight", "The reference data has no column 'weight', a "
                            "released column, which the private data has. "
                            "Add it to the reference data"),
    ("private", "weight", "The private data has no column 'weight', a "
                          "released column, which the reference data has"),
    ("reference", "gender", "The reference data has no column 'gender', the "
                            "secret's column, which the private data has"),
    ("private", "gender", "The private data has no column 'gender', the "
                          "secret's column"),
])
def test_a_missing_column_names_the_frame_and_the_column(messy, frame, column,
                                                         match):
    private, reference = messy
    if frame == "reference":
        reference = reference.drop(columns=column)
    else:
        private = private.drop(columns=column)
    with pytest.raises(DataValidationError, match=match):
        private.attrpriv.mean(["weight"], reference=reference, **COMMON)
    # A ledger keeps only the reference's columns the private data has (it
    # reads no other), so it cannot say the reference has a column the
    # private data lacks.
    match = match.split(", which")[0]
    ledger = private.attrpriv.ledger(secret=SECRET, reference=reference,
                                     budget=(2.0, 1e-3), random_state=0)
    with pytest.raises(DataValidationError, match=match):
        ledger.mean(["weight"], epsilon=1.0)
    assert ledger.releases == []
    with pytest.raises(DataValidationError, match=match):
        private.attrpriv.describe(["weight"], secret=SECRET,
                                  reference=reference, random_state=0)


def test_a_misspelt_column_is_in_neither_frame(messy):
    with pytest.raises(DataValidationError,
                       match="The private data has no column 'wieght'.*Check "
                             "the spelling"):
        messy[0].attrpriv.mean(["wieght"], reference=messy[1], **COMMON)


def test_a_needed_column_held_twice_is_refused_an_unused_one_is_not(aligned):
    private, reference = aligned
    doubled = pd.concat([reference, reference[["height"]]], axis=1)
    got = private.attrpriv.mean(["weight"], reference=doubled, **COMMON)
    same_release(got, private.attrpriv.mean(["weight"], reference=reference,
                                            **COMMON))
    with pytest.raises(DataValidationError,
                       match="reference data has duplicate column names "
                             "\\['height'\\]"):
        private.attrpriv.mean(["height"], reference=doubled, **COMMON)


def test_integers_against_floats_and_categories_against_text(aligned):
    # The same numbers as int64 or float64, the same labels as a category or
    # text: read alike in both frames, so the release is the same.
    private, reference = aligned
    private = private.assign(weight=private.weight.round())
    want = private.attrpriv.mean(["weight"], reference=reference, **COMMON)
    retyped = private.astype({"weight": "int64", "gender": "category"})
    same_release(retyped.attrpriv.mean(["weight"], reference=reference,
                                       **COMMON), want)
    public = reference.astype({"gender": "category"})
    same_release(private.attrpriv.mean(["weight"], reference=public,
                                       **COMMON), want)
    # A number and its text never compare equal: refused, both named.
    with pytest.raises(DataValidationError,
                       match="Column 'weight' holds float64 values in the "
                             "private data but str.* in the reference"):
        private.attrpriv.mean(["weight"], reference=reference.astype(
            {"weight": str}), **COMMON)


def test_bounds_may_name_other_columns_both_frames_have(aligned, messy):
    bounds = {"weight": (30, 200), "height": (100, 220)}
    want = aligned[0].attrpriv.mean(["weight"], reference=aligned[1],
                                    bounds=bounds, **COMMON)
    got = messy[0].attrpriv.mean(["weight"], reference=messy[1],
                                 bounds=bounds, **COMMON)
    same_release(got, want)
    with pytest.raises(InvalidParameterError, match="'wieght'"):
        messy[0].attrpriv.mean(["weight"], reference=messy[1],
                               bounds={"weight": (30, 200),
                                       "wieght": (0, 1)}, **COMMON)


def test_the_estimator_keeps_sklearns_convention_and_says_what_to_do(aligned,
                                                                    messy):
    mech = skattr.mechanisms.AttributePrivateGaussian(
        query=skattr.Query.mean(["weight"]), secret=SECRET,
        law="gaussian").fit(messy[1])
    with pytest.raises(DataValidationError,
                       match="feature_names_in_.*df.attrpriv's verbs"):
        mech.release(messy[0])
    # Given the columns it was fit on, in that order, it releases.
    mech.release(messy[0].assign(scan=0, source="x")[
        list(mech.feature_names_in_)])


def _csv(frame, path):
    frame.to_csv(path, index=False)
    return str(path)


def test_the_command_line_takes_the_columns_it_reads(aligned, tmp_path,
                                                     capsys):
    private, reference = aligned
    outs = []
    for name, (data, ref) in {
            "aligned": aligned,
            "messy": (private.assign(notes="x")[
                ["notes", *private.columns[::-1]]],
                reference.assign(source="census")[
                    ["weight", "source", *reference.columns.drop("weight")]]),
    }.items():
        out = tmp_path / f"{name}.csv"
        code = main(["release", _csv(data, tmp_path / f"{name}-data.csv"),
                     "--columns", "weight", "--secret-column", "gender",
                     "--secret-value", "female", "--pairs", "0.4,0.6",
                     "--reference", _csv(ref, tmp_path / f"{name}-ref.csv"),
                     "--seed", "0", "--output", str(out)])
        assert code == 0, capsys.readouterr().err
        outs.append(pd.read_csv(out))
    pd.testing.assert_frame_equal(outs[1], outs[0])


@pytest.mark.slow
def test_a_dask_frame_gets_the_same_alignment(aligned, messy):
    dd = pytest.importorskip("dask.dataframe")
    dask = pytest.importorskip("dask")
    private, reference = aligned
    # Dask frames of the messy frames, the unread list column left out
    # (Dask's metadata cannot hold it), another extra column in its place.
    lazy = dd.from_pandas(messy[0].assign(notes="n"), npartitions=3)
    lazy_reference = dd.from_pandas(messy[1].drop(columns="scan"),
                                    npartitions=2)
    with dask.config.set(scheduler="sync"):
        want = dd.from_pandas(private, npartitions=3).attrpriv.mean(
            ["weight"], reference=reference, **COMMON)
        for ref in (messy[1], lazy_reference):
            same_release(lazy.attrpriv.mean(["weight"], reference=ref,
                                            **COMMON), want)
        with pytest.raises(DataValidationError,
                           match="The reference data has no column 'weight'"):
            lazy.attrpriv.mean(["weight"], reference=lazy_reference.drop(
                columns="weight"), **COMMON)
