"""Docstrings: every shared section filled, every parameter documented.

numpydoc is not a dependency of the tests, so the numpydoc sections are read by
the small parser below (a section is a title line underlined with dashes).
"""

import inspect
import re

import pytest

import skattr.calibration
import skattr.noise
from skattr.utils import all_estimators
from skattr.utils._docstrings import SECTIONS, fill_doc

ESTIMATORS = [cls for _, cls in all_estimators()]
FUNCTIONS = [getattr(module, name)
             for module in (skattr.noise, skattr.calibration)
             for name in module.__all__]

# numpydoc's order of the sections the estimators use.
ORDER = ["Parameters", "Attributes", "See Also", "Notes", "References",
         "Examples"]

# A str.format or f-string field left in: "{name}" not part of LaTeX
# (\sqrt{v_a}, x_{i}, x^{2}) or a set of options ({"a", "b"}).
FORMAT_FIELD = re.compile(r"(?<![\w\\^_}])\{[A-Za-z_]\w*\}")


def _lines(doc):
    return inspect.cleandoc(doc).splitlines()


def _is_title(lines, i):
    return (i + 1 < len(lines) and lines[i].strip() != ""
            and re.fullmatch(r"-{3,}", lines[i + 1].strip()) is not None)


def _titles(doc):
    lines = _lines(doc)
    return [lines[i].strip() for i in range(len(lines)) if _is_title(lines, i)]


def _section(doc, title):
    """Return the lines of a numpydoc section, or None when it is absent."""
    lines = _lines(doc)
    for i in range(len(lines)):
        if _is_title(lines, i) and lines[i].strip() == title:
            end = i + 2
            while end < len(lines) and not _is_title(lines, end):
                end += 1
            return lines[i + 2:end]
    return None


def _entries(doc, title):
    """Return the ``name : type`` lines of a section (names split on commas)."""
    names, heads = [], []
    for line in _section(doc, title) or []:
        if line and not line[0].isspace():
            heads.append(line)
            names += [name.strip() for name in line.split(" : ")[0].split(",")]
    return names, heads


def _init_parameters(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    return [name for name, p in inspect.signature(target).parameters.items()
            if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _documented(doc):
    def target():
        pass
    target.__doc__ = doc
    return target


def _name(obj):
    return obj.__name__


@pytest.mark.parametrize("obj", ESTIMATORS + FUNCTIONS, ids=_name)
def test_no_placeholder_left(obj):
    doc = obj.__doc__
    assert doc, f"{obj.__name__} has no docstring"
    assert "%(" not in doc
    assert FORMAT_FIELD.findall(doc) == []


@pytest.mark.parametrize("cls", ESTIMATORS, ids=_name)
def test_estimator_documents_every_parameter(cls):
    doc = cls.__doc__
    titles = _titles(doc)
    assert "Parameters" in titles and "Attributes" in titles
    assert titles == [t for t in ORDER if t in titles], titles
    names, heads = _entries(doc, "Parameters")
    # Every parameter, once, in the order of the signature, with its type.
    assert names == _init_parameters(cls)
    assert all(" : " in head for head in heads), heads
    attributes, _ = _entries(doc, "Attributes")
    assert attributes[:2] == ["columns_", "query_"]
    assert attributes[-2:] == ["n_features_in_", "feature_names_in_"]
    assert all(name.endswith("_") for name in attributes)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=_name)
def test_every_cited_reference_is_listed(cls):
    doc = cls.__doc__
    cited = set(re.findall(r"\[(\d+)\]_", doc))
    listed = re.findall(r"^\.\. \[(\d+)\]", "\n".join(_section(doc, "References")),
                        flags=re.MULTILINE)
    assert listed == [str(i) for i in range(1, len(listed) + 1)]
    assert cited <= set(listed)


@pytest.mark.parametrize("func", [f for f in FUNCTIONS if not inspect.isclass(f)
                                  and _section(f.__doc__ or "", "Parameters")],
                         ids=_name)
def test_function_documents_every_parameter(func):
    names, _ = _entries(func.__doc__, "Parameters")
    assert names == _init_parameters(func)


def test_every_shared_section_is_used():
    docs = "\n".join(line.strip() for cls in ESTIMATORS
                     for line in _lines(cls.__doc__))
    for name in SECTIONS:
        filled = fill_doc()(_documented(f"Probe.\n\n    %({name})s\n")).__doc__
        text = "\n".join(line.strip() for line in _lines(filled)[2:])
        assert text in docs, f"section {name!r} is used by no estimator"


# ------------------------------------------------------------------ the helper
def test_fill_doc_indents_nested_sections_as_their_placeholder():
    decorate = fill_doc(outer="Outer\n-----\n%(inner)s",
                        inner="inner : int\n    The inner one.")
    filled = decorate(_documented("Summary.\n\n    %(outer)s\n    ")).__doc__
    assert filled == ("Summary.\n\n    Outer\n    -----\n    inner : int\n"
                      "        The inner one.\n    ")


def test_fill_doc_dedents_a_section_written_indented():
    decorate = fill_doc(entry="""
        name : str
            Indented in the source.
        """)
    filled = decorate(_documented("Summary.\n\n        %(entry)s\n")).__doc__
    assert filled == ("Summary.\n\n        name : str\n"
                      "            Indented in the source.\n")


def test_fill_doc_fills_the_shared_sections():
    filled = fill_doc()(_documented("Summary.\n\n%(epsilon)s\n")).__doc__
    assert filled == ("Summary.\n\nepsilon : float, default=1.0\n"
                      "    Privacy loss bound, > 0.\n")


def test_fill_doc_refuses_an_unknown_section():
    with pytest.raises(ValueError, match=r"%\(epsilom\)s, which names no section"):
        fill_doc()(_documented("Summary.\n\n    %(epsilom)s\n"))


def test_fill_doc_refuses_a_placeholder_left_unfilled():
    with pytest.raises(ValueError, match="unfilled placeholder in 'See %.epsilon"):
        fill_doc()(_documented("Summary.\n\n    See %(epsilon)s here.\n"))
    # Inside a section too.
    with pytest.raises(ValueError, match="unfilled placeholder"):
        fill_doc(entry="x : int\n    As %(query)s.")(
            _documented("Summary.\n\n    %(entry)s\n"))


def test_fill_doc_refuses_a_section_that_shadows_a_shared_one():
    with pytest.raises(ValueError, match=r"\['epsilon'\] are already shared"):
        fill_doc(epsilon="epsilon : float\n    Another text.")


def test_fill_doc_refuses_sections_that_include_each_other():
    decorate = fill_doc(a="%(b)s", b="%(a)s")
    with pytest.raises(ValueError, match="include each other: a -> b -> a"):
        decorate(_documented("Summary.\n\n    %(a)s\n"))


def test_fill_doc_leaves_a_stripped_docstring_alone():
    target = _documented(None)
    assert fill_doc()(target) is target and target.__doc__ is None
