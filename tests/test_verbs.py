"""The verbs (mean ... agg) written out in source, as they were set at run time.

Until 0.3 the accessor's and the ledger's verbs were set on the classes at
import, with synthesised signatures; they are now methods in
``skattr/_accessor_verbs.py`` and ``skattr/_ledger/_verbs.py``, written by
``tools/generate_verbs.py``. The signatures below are the run-time ones of
0.3 (``inspect.signature`` before the change, annotations left out), so a
verb that loses or moves a parameter fails here.
"""

import ast
import importlib.util
import inspect
import pydoc
import typing
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr import _verbs
from skattr._accessor import AttributePrivacyAccessor
from skattr._accessor_verbs import AccessorVerbs
from skattr._ledger import Ledger
from skattr._ledger._verbs import LedgerVerbs
from skattr.exceptions import InvalidParameterError

ROOT = Path(skattr.__file__).parent
TOOL = ROOT.parent / "tools" / "generate_verbs.py"
NAMES = ["mean", "sum", "count", "proportion", "median", "quantile", "std",
         "agg"]

_ACCESSOR = ("*, secret=None, reference=None, epsilon=1.0, delta=None, "
             "mechanism='auto', random_state=None")
# inspect.signature of each verb in 0.3 (with_verbs), without annotations.
BEFORE = {
    "accessor": {
        "mean": f"(self, columns=None, {_ACCESSOR}, **params)",
        "sum": f"(self, columns=None, {_ACCESSOR}, **params)",
        "count": f"(self, columns=None, value=None, {_ACCESSOR}, **params)",
        "proportion": f"(self, columns=None, value=None, {_ACCESSOR}, "
                      "**params)",
        "median": f"(self, columns=None, {_ACCESSOR}, **params)",
        "quantile": f"(self, columns=None, q=0.5, {_ACCESSOR}, "
                    "monotone=False, **params)",
        "std": f"(self, columns=None, ddof=1, {_ACCESSOR}, **params)",
        "agg": f"(self, func, columns=None, {_ACCESSOR}, **params)",
    },
    "ledger": {
        "mean": "(self, columns=None, **params)",
        "sum": "(self, columns=None, **params)",
        "count": "(self, columns=None, value=None, **params)",
        "proportion": "(self, columns=None, value=None, **params)",
        "median": "(self, columns=None, **params)",
        "quantile": "(self, columns=None, q=0.5, *, monotone=False, **params)",
        "std": "(self, columns=None, ddof=1, **params)",
        "agg": "(self, func, columns=None, **params)",
    },
}
OWNERS = {"accessor": pd.DataFrame.attrpriv, "ledger": Ledger}
MODULES = {"accessor": (ROOT / "_accessor_verbs.py", "AccessorVerbs"),
           "ledger": (ROOT / "_ledger" / "_verbs.py", "LedgerVerbs")}


def _unannotated(signature):
    return str(signature.replace(
        parameters=[p.replace(annotation=p.empty)
                    for p in signature.parameters.values()],
        return_annotation=signature.empty))


@pytest.fixture(scope="module")
def tool():
    if not TOOL.exists():
        pytest.skip("needs the source checkout's tools/generate_verbs.py")
    spec = importlib.util.spec_from_file_location("generate_verbs", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_verb_is_written_out():
    assert [v.name for v in _verbs.VERBS] == NAMES
    for name in NAMES:
        assert name in vars(AccessorVerbs) and name in vars(LedgerVerbs)
        assert getattr(AttributePrivacyAccessor, name) is vars(
            AccessorVerbs)[name]
        assert getattr(Ledger, name) is vars(LedgerVerbs)[name]


@pytest.mark.parametrize("owner", ["accessor", "ledger"])
def test_the_committed_verbs_are_what_the_tool_writes(tool, owner):
    path, _ = MODULES[owner]
    (spec,) = [o for o in tool.OWNERS if (ROOT.parent / o.path) == path]
    assert tool.module(spec) == path.read_text()
    assert tool.main(["--check"]) == 0


def test_a_changed_verb_or_keyword_makes_the_committed_source_stale(
        tool, monkeypatch):
    accessor, ledger = tool.OWNERS
    committed = (ROOT.parent / accessor.path).read_text()
    changed = tuple(v if v.name != "sum" else type(v)(
        v.name, "Release the total.", v.parameters, v.docs, v.statistic)
        for v in _verbs.VERBS)
    monkeypatch.setattr(_verbs, "VERBS", changed)
    assert tool.module(accessor) != committed
    assert tool.main(["--check"]) == 1
    monkeypatch.undo()

    def _release(self, query, *, secret=None, budget=None, **params):
        raise AssertionError("never called")

    monkeypatch.setattr(AttributePrivacyAccessor, "_release", _release)
    text = tool.module(accessor)
    assert text != committed and "budget=None" in text
    # The ledger's module reads the ledger's _release only.
    assert tool.module(ledger) == (ROOT.parent / ledger.path).read_text()


@pytest.mark.parametrize("owner", ["accessor", "ledger"])
@pytest.mark.parametrize("name", NAMES)
def test_each_verb_has_its_signature_of_0_3(owner, name):
    method = getattr(OWNERS[owner], name)
    signature = inspect.signature(method)
    assert _unannotated(signature) == BEFORE[owner][name]
    # Its own parameters and the owner's keywords, as _verbs.VERBS and the
    # owner's _release say.
    spec = {v.name: v for v in _verbs.VERBS}[name]
    release = inspect.signature(
        (AttributePrivacyAccessor if owner == "accessor" else Ledger)._release)
    expected = [p.name for p in spec.parameters] + [
        p.name for p in release.parameters.values()
        if p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD)]
    assert sorted(signature.parameters) == sorted(["self", *expected])


@pytest.mark.parametrize("owner", ["accessor", "ledger"])
def test_type_hints_resolve_and_keep_those_of_0_3(owner):
    cls = OWNERS[owner]
    for name in NAMES:
        hints = typing.get_type_hints(getattr(cls, name))
        assert hints["return"] is skattr.Release
    assert typing.get_type_hints(cls.quantile)["monotone"] is bool
    assert typing.get_type_hints(cls.std)["ddof"] is int
    if owner == "accessor":
        hints = typing.get_type_hints(cls.mean)
        assert hints["epsilon"] is float and hints["mechanism"] is str
        assert np.random.Generator in typing.get_args(hints["random_state"])


@pytest.mark.parametrize("owner", ["accessor", "ledger"])
@pytest.mark.parametrize("name", NAMES)
def test_help_shows_the_docstring(owner, name):
    method = getattr(OWNERS[owner], name)
    spec = {v.name: v for v in _verbs.VERBS}[name]
    text = pydoc.render_doc(method, renderer=pydoc.plaintext)
    assert spec.summary in text
    doc = inspect.getdoc(method)
    assert doc.startswith(spec.summary + "\n\nParameters\n----------\n")
    for line in inspect.cleandoc(spec.docs).splitlines():
        assert line in doc
    for parameter in inspect.signature(method).parameters:
        if parameter != "self":
            assert f"\n{'**' if parameter == 'params' else ''}{parameter}" \
                in doc
    last = "BudgetExceededError" if owner == "ledger" else "Returns"
    assert last in doc and doc.index("Parameters") < doc.index("Returns")


@pytest.mark.parametrize("owner", ["accessor", "ledger"])
def test_a_static_reader_finds_every_verb_delegating_to_one_body(owner):
    path, base = MODULES[owner]
    (cls,) = [node for node in ast.parse(path.read_text()).body
              if isinstance(node, ast.ClassDef) and node.name == base]
    methods = {node.name: node for node in cls.body
               if isinstance(node, ast.FunctionDef)}
    assert list(methods) == NAMES
    for name, node in methods.items():
        assert [ast.unparse(d) for d in node.decorator_list] == ["verb"]
        # What a type checker reads is what inspect sees at run time.
        args = node.args
        static = [a.arg for a in args.posonlyargs + args.args
                  + args.kwonlyargs] + [args.kwarg.arg]
        runtime = list(inspect.signature(getattr(OWNERS[owner], name))
                       .parameters)
        assert static == runtime
        # A docstring, then one call of release_verb: no logic of its own.
        docstring, body = node.body
        assert isinstance(docstring.value, ast.Constant)
        assert isinstance(body, ast.Return)
        assert ast.unparse(body.value.func) == "release_verb"
        assert ast.unparse(body.value.args[1]) == repr(name)


@pytest.fixture(scope="module")
def hospital():
    from skattr.datasets import make_hospital

    private = make_hospital(50, random_state=1)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    ledger = private.attrpriv.ledger(secret=secret, reference=make_hospital(
        500, random_state=0), budget=(1.0, 1e-3), random_state=0)
    return private, secret, ledger


# The messages of 0.3 (with_verbs), before any data is read.
_PARAMS = ("columns, secret, reference, epsilon, delta, mechanism, "
           "random_state, params")


@pytest.mark.parametrize("call, message", [
    (lambda a, led: a.mean(["weight"], ["x"]),
     f"AttributePrivacyAccessor.mean(): too many positional arguments. Its "
     f"parameters: {_PARAMS}."),
    (lambda a, led: a.mean(["weight"], columns=["x"]),
     "AttributePrivacyAccessor.mean(): multiple values for argument "
     f"'columns'. Its parameters: {_PARAMS}."),
    (lambda a, led: a.agg(epsilon=1.0),
     "AttributePrivacyAccessor.agg(): missing a required argument: 'func'. "
     "Its parameters: func, " + _PARAMS + "."),
    (lambda a, led: led.mean(["weight"], ["x"]),
     "Ledger.mean(): too many positional arguments. Its parameters: "
     "columns, params."),
    (lambda a, led: led.agg(),
     "Ledger.agg(): missing a required argument: 'func'. Its parameters: "
     "func, columns, params."),
    (lambda a, led: a.std(["weight"], ddof=-1),
     "The 'ddof' parameter of df.attrpriv.std must be an int in the range "
     "[0, inf). Got -1 instead."),
    (lambda a, led: a.quantile(["weight"], 1.5, mechanism="wasserstein"),
     "The 'q' parameter of df.attrpriv.quantile (mechanism='wasserstein') "
     "must be a finite real number in the range [0, 1]. Got 1.5 instead."),
    (lambda a, led: led.quantile(["weight"], 0.5, monotone=1),
     "The 'monotone' parameter of ledger.quantile must be an instance of "
     "'bool'. Got 1 instead."),
])
def test_a_call_that_does_not_fit_is_refused_in_the_words_of_0_3(
        hospital, call, message):
    private, _, ledger = hospital
    with pytest.raises(InvalidParameterError) as caught:
        call(private.attrpriv, ledger)
    assert str(caught.value) == message


def test_errors_name_the_verb_called_only_for_what_the_user_passed(hospital):
    private, secret, _ = hospital
    with pytest.raises(InvalidParameterError,
                       match=r"^The 'random_state' parameter of "
                             r"df\.attrpriv\.mean must be"):
        private.attrpriv.mean(["weight"], secret=secret, reference=private,
                              random_state="x")
    # Not passed: the mechanism that checked it is named.
    with pytest.raises(InvalidParameterError,
                       match=r"^The 'secret' parameter of "
                             r"AttributePrivateGaussian must be"):
        private.attrpriv.mean(["weight"], reference=private)
