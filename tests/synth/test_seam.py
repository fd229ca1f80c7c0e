"""The synthesiser seam (issue 45): synthesize, the accessor, the command line
and the plot read a synthesiser's interface, never RAP's classes by name."""

import numpy as np
import pandas as pd
import pytest

from skattr import Secret
from skattr.cli import build_parser, main
from skattr.cli._synthesize import _given
from skattr.exceptions import InvalidParameterError
from skattr.synth import (
    SYNTHESIZERS,
    AttributePrivateRAP,
    Option,
    ReleasedCells,
    Synthesizer,
    SynthesizerRegistry,
    synthesize,
)

SECRET = Secret.proportion("sex", "F", pairs=[(0.3, 0.4)])
CATEGORIES = {"sex": ["F", "M"], "job": ["a", "b", "c"]}
FAST = dict(privacy="distributional", n_synthetic=40, iterations=20, k=1,
            random_state=0, progress=False)


@pytest.fixture(scope="module")
def people():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"sex": np.where(rng.random(2000) < 0.35, "F", "M"),
                         "job": rng.choice(["a", "b", "c"], 2000)})


def test_rap_is_the_default_method(people):
    assert SYNTHESIZERS["rap"] is AttributePrivateRAP
    assert list(SYNTHESIZERS) == ["rap"]
    named = synthesize(people, secret=SECRET, categories=CATEGORIES,
                       method="rap", **FAST)
    default = synthesize(people, secret=SECRET, categories=CATEGORIES, **FAST)
    pd.testing.assert_frame_equal(named.data, default.data)
    # The same table as the class fitted by hand (synthesize adds nothing).
    rap = AttributePrivateRAP(categories=CATEGORIES, secret=SECRET,
                              **FAST).fit(people)
    seed = int(np.random.default_rng(0).integers(2**32))
    pd.testing.assert_frame_equal(default.data,
                                  rap.sample(len(people), random_state=seed))
    assert default.certificate == rap.certificate_
    with pytest.raises(InvalidParameterError, match="Did you mean 'rap'"):
        synthesize(people, secret=SECRET, categories=CATEGORIES,
                   method="rapp")


def test_every_parameter_of_the_class_is_synthesize_s(people):
    # learning_rate was AttributePrivateRAP's only; synthesize now passes
    # every parameter of the class, with its default.
    out = synthesize(people, secret=SECRET, categories=CATEGORIES,
                     learning_rate=0.2, **FAST)
    assert out.synthesizer.learning_rate == 0.2
    params = AttributePrivateRAP.parameters()
    assert params["epsilon"].default == 1.0 and params["k"].kind is int
    assert params["neighbours"].choices == ["any", "same-group"]


def test_the_command_s_options_are_read_from_the_class(capsys):
    parser = build_parser()
    args = parser.parse_args(["synthesize", "data.csv", "--secret-column",
                              "sex", "--output", "out.csv"])
    defaults = {name: p.default
                for name, p in AttributePrivateRAP.parameters().items()}
    given = _given(args)
    assert given == {o.name: defaults[o.name]
                     for o in AttributePrivateRAP.command_line}
    args = parser.parse_args(["synthesize", "data.csv", "--secret-column",
                              "sex", "--output", "out.csv", "--individuals",
                              "none", "--choose", "reference",
                              "--marginals", "5"])
    given = _given(args)
    assert (given["individuals"], given["marginals"],
            given["n_marginals"]) == (None, "reference", 5)
    with pytest.raises(SystemExit):
        main(["synthesize", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    for option in AttributePrivateRAP.command_line:
        assert option.option in shown
        if option.help:
            assert " ".join(option.help.split()) in shown
    assert " ".join(AttributePrivateRAP.description.split()) in shown


def test_the_registry_refuses_a_class_synthesize_could_not_run():
    registry = SynthesizerRegistry()

    class Bare(Synthesizer):
        def __init__(self, *, categories=None, secret=None,
                     random_state=None, speed=1):
            self.categories, self.secret = categories, secret
            self.random_state, self.speed = random_state, speed

        def fit(self, X, y=None):
            return self

        def sample(self, n=None, *, random_state=None):
            return pd.DataFrame()

    with pytest.raises(TypeError, match="no method_name"):
        registry.register(Bare)
    Bare.method_name = "bare"
    with pytest.raises(TypeError, match="in_plain_words"):
        registry.register(Bare)
    Bare.in_plain_words = lambda self: "words"
    Bare.command_line = (Option("sped"),)
    with pytest.raises(TypeError, match=r"names \['sped'\]"):
        registry.register(Bare)
    Bare.command_line = (Option("speed"),)
    assert registry.register(Bare) is Bare and list(registry) == ["bare"]

    class Other(Bare):
        method_name = "bare"

    with pytest.raises(TypeError, match="already registered by Bare"):
        registry.register(Other)

    class NoSecret(Bare):
        method_name = "no-secret"

        def __init__(self, *, categories=None, random_state=None):
            self.categories, self.random_state = categories, random_state

    with pytest.raises(TypeError, match=r"\['secret'\]"):
        registry.register(NoSecret)
    class TakesBins(Bare):
        method_name = "takes-bins"

        def __init__(self, *, categories=None, secret=None,
                     random_state=None, bins=None):
            self.categories, self.secret = categories, secret
            self.random_state, self.bins = random_state, bins

    with pytest.raises(TypeError, match=r"takes \['bins'\], which synthesize"):
        registry.register(TakesBins)
    with pytest.raises(TypeError, match="not a skattr.synth.Synthesizer"):
        registry.register(AttributePrivateRAP.__init__)
    assert list(SYNTHESIZERS) == ["rap"]            # another registry's


def test_the_plot_draws_any_synthesiser_from_its_cells():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from skattr.plotting import plot_synthetic

    class Cells(Synthesizer):
        def __init__(self, *, random_state=None):
            self.random_state = random_state

        def fit(self, X, y=None):
            self.cells_ = ReleasedCells(
                {"one": (np.array([0.2, 0.8]), np.array([0.25, 0.75])),
                 "two": (np.array([0.5, 0.5]), np.array([0.4, 0.6]))},
                "Cells: two answers")
            return self

        def sample(self, n=None, *, random_state=None):
            return pd.DataFrame()

        def released_cells(self):
            return self.cells_

    with pytest.raises(InvalidParameterError, match="not fitted"):
        plot_synthetic(Cells())
    ax = plot_synthetic(Cells().fit(None))
    assert [len(c.get_offsets()) for c in ax.collections] == [2, 2]
    assert ax.get_title() == "Cells: two answers"
    assert ax.get_legend() is not None
    matplotlib.pyplot.close("all")
