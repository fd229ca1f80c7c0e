"""docs/design.md's "Extending skattr: a synthesiser", run as written (issue 45).

The page's code is read from the page and run as the module it says it is
(in ``skattr/synth/``); the synthesiser it defines is then used through
``synthesize(method=...)``, the accessor, ``skattr synthesize --method``
and ``--save``. Its certificate is checked against sizes computed here,
with scipy alone, and against what it may read (the subsamples only).
"""

import re
import types
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

import skattr
from skattr import Secret, _persistence
from skattr.cli import main
from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
    PrivacyLeakWarning,
)
from skattr.synth import SYNTHESIZERS, Synthesizer, synthesize

PAGE = Path(__file__).parents[2] / "docs" / "design.md"
SECRET = Secret.proportion("sex", "F", pairs=[(0.3, 0.4)])
CATEGORIES = {"sex": ["F", "M"], "job": ["a", "b", "c"]}


def recipe_code() -> str:
    """The page's code block under "Extending skattr: a synthesiser".

    Preceded by blank lines, so that a traceback names the page's lines.
    """
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("## Extending skattr: a synthesiser")
    section = text[start:text.index("\n## ", start + 1)]
    blocks = list(re.finditer(r"```python\n(.*?)```", section, flags=re.S))
    assert len(blocks) == 1, "the recipe has one example"
    lines = text[:start + blocks[0].start(1)].count("\n")
    return "\n" * lines + blocks[0].group(1)


@pytest.fixture
def recipe(monkeypatch):
    """Run the page's module; undo its registrations afterwards."""
    monkeypatch.setattr(SYNTHESIZERS, "_classes", dict(SYNTHESIZERS._classes))
    monkeypatch.setattr(_persistence, "_ALLOWED", dict(_persistence._ALLOWED))
    monkeypatch.setattr(_persistence, "_ESTIMATORS",
                        set(_persistence._ESTIMATORS))
    module = types.ModuleType("skattr.synth._independent")
    exec(compile(recipe_code(), str(PAGE), "exec"), module.__dict__)
    return module.IndependentColumns


def people(n=3000, share=0.35, seed=0):
    rng = np.random.default_rng(seed)
    sex = np.where(rng.random(n) < share, "F", "M")
    return pd.DataFrame({
        "sex": sex,
        "job": np.where(sex == "F", rng.choice(["a", "b"], n),
                        rng.choice(["b", "c"], n)),
        "age": rng.integers(18, 90, n)})


def _sizes_by_hand(n, low, high, privacy, delta):
    """Each group's public size, from the definitions (scipy only)."""
    if privacy == "dataset":
        return round(low * n), n - round(high * n)

    def lower(p):   # the largest s with P(Binomial(n, p) < s) <= delta / 2
        s = np.arange(n + 1)
        return int(s[binom.cdf(s - 1, n, p) <= delta / 2].max())
    return lower(low), lower(1 - high)


def test_the_recipe_is_registered_and_runs_through_synthesize(recipe):
    assert SYNTHESIZERS["independent"] is recipe
    assert issubclass(recipe, Synthesizer)
    data = people(share=0.32)        # the table's share is stated, 0.35
    before = data.copy()
    with pytest.warns(PrivacyLeakWarning, match="No record is protected"):
        out = synthesize(data, secret=SECRET, method="independent",
                         categories=CATEGORIES, columns=["sex", "job"],
                         n=1000, privacy="distributional", delta=1e-5,
                         random_state=0)
    pd.testing.assert_frame_equal(data, before)            # not mutated
    inside, outside = _sizes_by_hand(3000, 0.3, 0.4, "distributional", 1e-5)
    assert out.group_sizes == {"inside": inside, "outside": outside}
    cert = out.certificate
    assert (cert.epsilon, cert.delta) == (0.0, 1e-5)
    assert cert.guarantee == "distributional attribute privacy"
    assert cert.assumes("records.independent")
    assert out.records_certificate is None and out.epsilon == np.inf
    assert out.data.shape == (1000, 2)
    assert (out.data.sex == "F").mean() == 0.35 == out.share    # stated
    # A group's records keep its categories of the secret's column.
    assert set(out.synthesizer.sample(500, random_state=1).sex) == {"F", "M"}
    assert out.marginals == () and out.noise_sd == {}
    text = out.summary()
    assert "Each record: not protected." in text
    assert "No record is protected" in text and "0.35, as stated" in text
    assert f"{inside} records of the group and {outside} others" in text
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        again = synthesize(data, secret=SECRET, method="independent",
                           categories=CATEGORIES, columns=["sex", "job"],
                           n=1000, privacy="distributional", delta=1e-5,
                           random_state=0)
    pd.testing.assert_frame_equal(out.data, again.data)     # seeded


def test_the_recipe_reads_the_subsamples_only(recipe):
    """The guarantee: nothing computed from a group's size or left-outs.

    Its shares are counts of the kept records over their public number
    (multiples of 1 / s); a synthesiser fitted to the whole group (whose
    size reveals the share) gives counts over k, which are not. Data of the
    same n with shares 0.3 and 0.4 give the same sizes and certificate.
    """
    fitted = {}
    for share in (0.3, 0.4):
        data = people(share=share, seed=int(share * 10))
        with pytest.warns(PrivacyLeakWarning):
            fitted[share] = recipe(categories=CATEGORIES, secret=SECRET,
                                   privacy="distributional",
                                   random_state=1).fit(data[["sex", "job"]])
    low, high = fitted[0.3], fitted[0.4]
    assert low.group_sizes_ == high.group_sizes_
    assert low.certificate_ == high.certificate_
    for syn in (low, high):
        for group, size in syn.group_sizes_.items():
            for shares in syn.shares_[group].values():
                counts = np.asarray(shares) * size
                np.testing.assert_allclose(counts, np.round(counts),
                                           atol=1e-9)
                assert np.round(counts).sum() == size


def test_the_recipe_refuses_what_its_certificate_does_not_cover(recipe):
    data = people()
    dataset = Secret.proportion("sex", "F", pairs=[(0.1, 0.2)])
    with pytest.raises(DataValidationError, match="outside the secret's"):
        recipe(categories=CATEGORIES, secret=dataset,
               random_state=0).fit(data[["sex", "job"]])
    with pytest.raises(DataValidationError, match="outside their stated"):
        recipe(categories={**CATEGORIES, "job": ["a", "b"]}, secret=SECRET,
               privacy="distributional").fit(data[["sex", "job"]])
    with pytest.raises(InvalidParameterError, match="'delta' parameter"):
        recipe(categories=CATEGORIES, secret=SECRET, delta=0.0).fit(data)
    # A keyword of RAP's is not this synthesiser's: named, with what it takes.
    with pytest.raises(InvalidParameterError,
                       match=r"takes no parameter\(s\) \['epsilon'\].*privacy"):
        synthesize(data, secret=SECRET, method="independent",
                   categories=CATEGORIES, epsilon=1.0)


def test_the_recipe_runs_through_the_accessor(recipe):
    data = people()[["sex", "job"]]
    with pytest.warns(PrivacyLeakWarning):
        out = data.attrpriv.synthesize(300, secret=SECRET,
                                       method="independent",
                                       categories=CATEGORIES,
                                       privacy="distributional",
                                       random_state=3)
    with pytest.warns(PrivacyLeakWarning):
        direct = synthesize(data, secret=SECRET, method="independent",
                            categories=CATEGORIES, n=300,
                            privacy="distributional", random_state=3)
    pd.testing.assert_frame_equal(out.data, direct.data)
    with pytest.raises(InvalidParameterError,
                       match="Did you mean 'privacy' for 'privcy'"):
        data.attrpriv.synthesize(secret=SECRET, method="independent",
                                 privcy="dataset")


# The command prints the warning in its words (skattr: warning: ...).
@pytest.mark.filterwarnings("default::skattr.exceptions.PrivacyLeakWarning")
def test_the_recipe_runs_through_the_command_line(recipe, tmp_path, capsys):
    data, saved = tmp_path / "people.csv", tmp_path / "independent.json"
    people().to_csv(data, index=False)
    out = tmp_path / "synthetic.csv"
    command = ["synthesize", str(data), "--secret-column", "sex",
               "--secret-value", "F", "--pairs", "0.3,0.4", "--reference",
               str(data), "--bins", "age=0,40,inf", "--method", "independent"]
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    shown = capsys.readouterr().out
    assert recipe.description[:40] in " ".join(shown.split())
    assert "--privacy {dataset,distributional}" in shown
    assert "--epsilon" not in shown and "--progress" not in shown
    code = main([*command, "--privacy", "distributional", "--delta", "1e-5",
                 "--rows", "400", "--seed", "2", "--output", str(out),
                 "--save", str(saved)])
    printed = capsys.readouterr()
    assert code == 0
    assert "skattr: warning: No record is protected" in printed.err
    table = pd.read_csv(out)
    assert table.shape == (400, 3) and (table.sex == "F").mean() == 0.35
    assert "(0, 1e-05)-distributional attribute privacy" in printed.out
    loaded = recipe.from_json(saved.read_text())
    assert loaded.random_state is None                   # no seed kept
    assert loaded.sample(20, random_state=0).shape == (20, 3)
    # RAP's options are not this synthesiser's.
    with pytest.raises(SystemExit):
        main([*command, "--epsilon", "1", "--output", str(out)])
    assert "unrecognized arguments: --epsilon 1" in capsys.readouterr().err


def test_a_plot_of_the_recipe_is_refused_by_the_interface(recipe):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from skattr.plotting import plot_synthetic

    with pytest.warns(PrivacyLeakWarning):
        out = synthesize(people()[["sex", "job"]], secret=SECRET,
                         method="independent", categories=CATEGORIES,
                         privacy="distributional", random_state=0)
    with pytest.raises(InvalidParameterError, match="releases no cells"):
        plot_synthetic(out)
    matplotlib.pyplot.close("all")


def test_the_page_s_module_list_names_the_interface():
    text = PAGE.read_text(encoding="utf-8")
    for module in ("synth/_base.py", "synth/_rap_base.py",
                   "synth/_registry.py"):
        assert f"`skattr/{module}`" in text
    assert skattr.synth.RAPBase.__mro__[1] is Synthesizer
