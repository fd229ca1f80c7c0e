"""Write the verbs of ``df.attrpriv`` and of a ledger out in source.

The verbs (``mean`` ... ``agg``) are said once, in ``skattr/_verbs.py``'s
``VERBS`` (their own parameters, their docs, the statistic they build); each
owner's keyword-only parameters are those of its ``_release`` (the
accessor's ``secret``, ``reference``, ``epsilon``, ...; a ledger's
``**params``), and their docs are below. This script writes every verb of
each owner as a method with its whole signature and numpydoc docstring, so
that ``help()``, ``inspect.signature``, IDEs, "go to definition" and type
checkers see them; each body is one call of ``skattr._verbs.release_verb``.

It also writes the signature and docstring of ``skattr.synth.synthesize``
and ``df.attrpriv.synthesize`` (between two marks in their files) with the
default synthesiser's parameters, read from its class: see "synthesize"
below.

    python tools/generate_verbs.py          # write the modules and regions
    python tools/generate_verbs.py --check  # exit 1 if they are not current

``tests/test_verbs.py`` fails when a committed module is not what this
script writes: after changing ``VERBS``, an owner's ``_release``,
``AttributePrivateRAP``'s parameters or docstring, or the docs below, run it
and commit the result.
"""

import argparse
import importlib
import inspect
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 88
_P = inspect.Parameter

ACCESSOR_KEYWORDS = """\
secret : Secret or list of Secret
    What to hide: a global property of a sensitive column (see
    :class:`~skattr.Secret`).
reference : DataFrame or "self"
    Public reference data from which Theta is learnt; ``"self"`` fits on the
    private data (weaker, warns). Omitted for the differential-privacy
    baselines, which fit no Theta, and with a Theta that reads no reference
    rows (``reads_reference`` False: an ExpertTheta, stated probabilities,
    a ProbabilityBox, SumLaws, a NetworkTheta), with which ``"self"`` fits
    nothing and does not warn.
epsilon : float > 0, default=1.0
    The guarantee's epsilon: the release changes an observer's odds between
    the two secrets of a pair by at most e^epsilon.
delta : float in [0, 1), optional
    The chance the bound on the odds fails; None takes the mechanism's
    default (1e-3; 0 for the pure Laplace mechanisms). At 1/n or more it
    warns (``PrivacyLeakWarning``); above 0.1 it is refused unless
    ``allow_large_delta=True``.
mechanism : str, default="auto"
    A name of :data:`skattr.mechanisms.MECHANISMS` (``"apgm"``,
    ``"approx-wasserstein"``, ...); ``"auto"`` fits every certified
    candidate and keeps the one with the least expected error.
random_state : None, int or numpy.random.Generator, default=None
    Source of the noise. None draws it from the operating system's entropy;
    a seed is for reproducible experiments only (whoever knows it can remove
    the noise).
**params
    Any parameter of the chosen mechanism: ``law``, ``theta``,
    ``calibration``, ``privacy``, ``bounds``, ``progress``, ..."""

ACCESSOR_RETURNS = """\
Returns
-------
Release
    The noisy values and their certificate."""

LEDGER_KEYWORDS = """\
**params
    The release's own parameters: ``epsilon`` (its own guarantee, or
    ``"remaining"`` for the largest the budget allows), ``delta``,
    ``mechanism`` (by default the accessor's, ``"approx-wasserstein"``;
    ``"apgm"`` for linear statistics in a ledger of ``law="gaussian"`` or
    ``"exact"``, and for a statistic already released with Gaussian noise;
    ``mechanism="apgm"`` also takes sums, means and counts of several
    columns, medians, quantiles and stds in a ledger of the default law and
    Theta, certified together over the bands; ``"auto"`` the
    least-error Gaussian-noise mechanism) and any parameter of
    that mechanism. The secret, reference, Theta, law and noise source are
    the ledger's; so is the clipping, but ``bounds={column: (low, high)}``
    may name the range of a column the ledger has not released yet (fixed
    from then on). The joint guarantee is checked, and a release over the
    budget refused, before any noise is drawn."""

LEDGER_RETURNS = """\
Returns
-------
Release
    The noisy values and their own certificate (the joint one is
    ``ledger.spent``).

Raises
------
BudgetExceededError
    The release would take the joint guarantee over the budget."""


@dataclass(frozen=True)
class Owner:
    """A class whose base holds the verbs: where they go and what they take."""

    path: str
    base: str
    owner: str
    what: str
    keywords_doc: str
    returns_doc: str

    def release_signature(self) -> inspect.Signature:
        """Return the owner's ``_release(query, ...)``: its keywords are the verbs'."""
        module, name = self.owner.split(":")
        return inspect.signature(
            getattr(importlib.import_module(module), name)._release)


OWNERS = (
    Owner("skattr/_accessor_verbs.py", "AccessorVerbs",
          "skattr._accessor:AttributePrivacyAccessor", "``df.attrpriv``",
          ACCESSOR_KEYWORDS, ACCESSOR_RETURNS),
    Owner("skattr/_ledger/_verbs.py", "LedgerVerbs",
          "skattr._ledger._ledger:Ledger", "a :class:`~skattr.Ledger`",
          LEDGER_KEYWORDS, LEDGER_RETURNS),
)

# The imports a module needs, in isort's order, by the name it uses.
_IMPORTS = (
    ("collections.abc", "Callable"), ("collections.abc", "Sequence"),
    ("typing", "Any"), ("numpy", "np"), ("skattr._base_query", "BaseQuery"),
    ("skattr._release", "Release"), ("skattr._secret", "Secret"),
)


def _parameter(p: _P) -> str:
    """Return the source text of one parameter: ``name: hint = default``."""
    stars: dict[object, str] = {_P.VAR_POSITIONAL: "*", _P.VAR_KEYWORD: "**"}
    text = stars.get(p.kind, "") + p.name
    hint = None if p.annotation is _P.empty else p.annotation
    if hint is not None and not isinstance(hint, str):
        raise TypeError(f"{p.name}: write its annotation as source text")
    if p.default is _P.empty:
        return text + (f": {hint}" if hint else "")
    default = (f'"{p.default}"' if isinstance(p.default, str)
               else repr(p.default))
    return text + (f": {hint} = {default}" if hint else f"={default}")


def parameters(verb, release: inspect.Signature) -> list:
    """Return the verb's parameters: its own, the owner's keywords, ``**params``.

    The order of the signatures the verbs had when they were set at run
    time: positional parameters, the owner's keyword-only ones, the verb's
    own keyword-only ones, then the owner's ``**params``.
    """
    keywords = [p for p in release.parameters.values()
                if p.kind in (_P.KEYWORD_ONLY, _P.VAR_KEYWORD)]
    own_kw = [p for p in verb.parameters if p.kind is _P.KEYWORD_ONLY]
    return ([p for p in verb.parameters if p.kind is not _P.KEYWORD_ONLY]
            + [p for p in keywords if p.kind is _P.KEYWORD_ONLY] + own_kw
            + [p for p in keywords if p.kind is _P.VAR_KEYWORD])


def _packed(items: list, indent: int, last: str = "") -> list:
    """Return ``items`` joined by commas in lines of at most WIDTH columns."""
    lines, line = [], " " * indent
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else last)
        if line.strip() and len(line) + 1 + len(piece) > WIDTH:
            lines.append(line)
            line = " " * indent
        line += (" " if line.strip() else "") + piece
    return lines + [line]


def _indented(text: str, spaces: int = 8) -> str:
    pad = " " * spaces
    return "\n".join(pad + line if line else line for line in text.splitlines())


def method(verb, owner: Owner, release: inspect.Signature) -> str:
    """Return the source text of one verb of ``owner``."""
    params = parameters(verb, release)
    items = ["self"]
    for p in params:
        if p.kind is _P.KEYWORD_ONLY and "*" not in items:
            items.append("*")
        items.append(_parameter(p))
    doc = (f"{verb.summary}\n\nParameters\n----------\n{verb.docs}\n"
           f"{owner.keywords_doc}\n\n{owner.returns_doc}")
    if '"""' in doc or "\\" in doc:
        raise ValueError(f"{verb.name}: a docstring without triple quotes "
                         "or backslashes, please")
    own = ", ".join(f'"{p.name}": {p.name}' for p in verb.parameters)
    keywords = [f"{p.name}={p.name}" if p.kind is _P.KEYWORD_ONLY
                else f"**{p.name}" for p in params
                if p.kind in (_P.KEYWORD_ONLY, _P.VAR_KEYWORD)
                and p not in verb.parameters]
    call = ["self", f'"{verb.name}"', "{" + own + "}", *keywords]
    return "\n".join([
        "    @verb",
        *_fitted(f"    def {verb.name}(", items, ") -> Release:", 8),
        f'        """{_indented(doc).lstrip()}\n        """',
        *_fitted("        return release_verb(", call, ")", 12),
    ])


def _fitted(opening: str, items: list, closing: str, indent: int) -> list:
    """Return a call or a def on one line if it fits, else its items below."""
    line = opening + ", ".join(items) + closing
    if len(line) <= WIDTH:
        return [line]
    if closing == ")":
        return [opening, *_packed(items, indent, closing)]
    return [opening, *_packed(items, indent), " " * (indent - 4) + closing]


def module(owner: Owner) -> str:
    """Return the source text of ``owner.path``: the base class of the verbs."""
    from skattr._verbs import VERBS

    release = owner.release_signature()
    body = "\n\n".join(method(verb, owner, release) for verb in VERBS)
    used = [(source, name) for source, name in _IMPORTS
            if re.search(rf"\b{name}\b", body)]
    groups: dict[str, list[str]] = {"std": [], "third": [], "skattr": []}
    for source, name in used + [("skattr._verbs", "release_verb, verb")]:
        group = ("skattr" if source.startswith("skattr") else "third"
                 if source == "numpy" else "std")
        line = ("import numpy as np" if source == "numpy"
                else f"from {source} import {name}")
        previous = groups[group][-1] if groups[group] else ""
        if previous.startswith(f"from {source} import "):
            groups[group][-1] = f"{previous}, {name}"
        else:
            groups[group].append(line)
    imports = "\n\n".join("\n".join(lines) for lines in groups.values()
                          if lines)
    owner_class = owner.owner.split(":")[1]
    return f'''"""The verbs of {owner.what}, written out: ``mean`` ... ``agg``.

Generated by ``tools/generate_verbs.py`` from ``skattr._verbs.VERBS`` and
the keywords of ``{owner_class}._release``: change those (or the
docs in the script) and run ``python tools/generate_verbs.py``, never this
file by hand; ``tests/test_verbs.py`` fails when it is not what the script
writes.
"""

{imports}

__all__ = ["{owner.base}"]


class {owner.base}:
    """The verbs of {owner.what} (a base of ``{owner_class}``).

    Each takes its statistic's own parameters and the keywords of the
    owner's ``_release``, and is one call of
    :func:`skattr._verbs.release_verb`.
    """

{body}
'''


# ------------------------------------------------------------ synthesize
# ``skattr.synth.synthesize`` and ``df.attrpriv.synthesize`` take the
# synthesiser's parameters as ``**params`` (any method's); the default
# method's are written out below their own keywords, with its defaults,
# read from the class (``parameters()``, and its docstring's entries): in
# typing overloads (what IDEs and type checkers read) and as the signature
# ``help()`` and ``inspect.signature`` show. The region between the two
# marks of each file is this script's; the rest of the file is not.
BEGIN = "# --- written by tools/generate_verbs.py: synthesize's signature ---"
END = "# --- end of what tools/generate_verbs.py writes ---"


@dataclass(frozen=True)
class Synthesize:
    """A ``synthesize`` whose signature the script writes: where, and its own words."""

    path: str
    name: str
    own: tuple      # (name, default or _P.empty), before the method's
    docs: str       # its own parameters' entries
    returns: str
    body: str       # its return statement, from the names in ``own``
    indent: int
    examples: str = ""


SYNTHESIZE_DOCS = """\
secret : Secret
    ``Secret.proportion(column, value, pairs=...)``: the share hidden.
method : str, default="rap"
    The synthesiser: a name of :data:`skattr.synth.SYNTHESIZERS`. The
    parameters from ``{first}`` to ``{last}`` are the default method's
    (``"rap"``, :class:`~skattr.synth.AttributePrivateRAP`), with its
    defaults; another method takes its own
    (``SYNTHESIZERS[method].parameters()``) as keywords, with its
    defaults, and refuses one it does not take.
reference : DataFrame or None, default=None
    Public data to read the columns' categories from (and, for
    ``marginals="reference"``, RAP's workload: :func:`select_marginals`,
    no privacy spent).
categories : dict column -> list or None, default=None
    Every category of a column, stated (public).
bins : dict column -> list or None, default=None
    A numeric column's bin edges, chosen without the private data.
columns : list or None, default=None
    The columns synthesised (default: all of the data's).
n : int or None, default=None
    Records of the synthetic table (default: as many as the data)."""

_RANDOM_STATE = """\
random_state : None, int or Generator, default=None
    The synthesiser's, and the sampling's (experiments only: whoever knows
    the seed can remove the noise).
**params
    Another method's parameters (``method=``)."""

ACCESSOR_EXAMPLES = """\
Examples
--------
>>> import numpy as np, pandas as pd, skattr
>>> rng = np.random.default_rng(0)
>>> df = pd.DataFrame({"sex": rng.choice(["F", "M"], 3000, p=[0.3, 0.7]),
...                    "job": rng.choice(["a", "b", "c"], 3000)})
>>> secret = skattr.Secret.proportion("sex", "F", pairs=[(0.25, 0.35)])
>>> out = df.attrpriv.synthesize(
...     secret=secret, categories={"sex": ["F", "M"], "job": ["a", "b", "c"]},
...     k=1, privacy="distributional", n_synthetic=100, random_state=0)
>>> out.data.shape, out.share, out.epsilon, out.certificate.epsilon
((3000, 2), 0.3, 1.0, 0.0)"""

_SYNTHESIZE_RETURNS = """\
Returns
-------
SyntheticData
    ``.data`` (the table), ``.certificate``, ``.summary()``, and the
    fitted ``.synthesizer`` (more records, ``to_json``)."""

SYNTHESIZERS_WRITTEN = (
    Synthesize(
        "skattr/synth/_synthesize.py", "synthesize",
        (("data", _P.empty), ("*", None), ("secret", _P.empty),
         ("method", "rap"), ("reference", None), ("categories", None),
         ("bins", None), ("columns", None), ("n", None)),
        "data : DataFrame\n    The private data.\n" + SYNTHESIZE_DOCS,
        _SYNTHESIZE_RETURNS,
        "return fit_and_sample(synthesize, data, secret=secret, "
        "method=method, reference=reference, categories=categories, "
        "bins=bins, columns=columns, n=n, random_state=random_state, "
        "params=params)", 0),
    Synthesize(
        "skattr/_accessor.py", "synthesize",
        (("self", _P.empty), ("n", None), ("*", None), ("secret", None),
         ("method", "rap"), ("reference", None), ("categories", None),
         ("bins", None), ("columns", None)),
        "n : int or None, default=None\n    Records of the synthetic table "
        "(default: as many as the frame).\n"
        + SYNTHESIZE_DOCS[:SYNTHESIZE_DOCS.index("n : int")].rstrip(),
        _SYNTHESIZE_RETURNS,
        "return self._synthesize(n, secret=secret, method=method, "
        "reference=reference, categories=categories, bins=bins, "
        "columns=columns, random_state=random_state, params=params)", 4,
        ACCESSOR_EXAMPLES),
)

_SUMMARY = {
    "skattr/synth/_synthesize.py":
        "Fit a synthesiser that hides a group's share once and sample a "
        "table from it.",
    "skattr/_accessor.py":
        "Return a synthetic table hiding the share of a group (and each "
        "record).",
}

_ABOUT = """\
The synthesiser is the one ``method`` names in
:data:`skattr.synth.SYNTHESIZERS`. The default, ``"rap"``
(:class:`~skattr.synth.AttributePrivateRAP`), subsamples each group of the
secret (its records, and the rest) to a public size, which hides the share
exactly under the attribute-privacy model, releases its k-way marginals as
shares of the group with differential privacy for every record, fits a
relaxed table to each group's and draws ``n`` records. The table's share
of the group is ``share`` (default: the middle of the pairs), never the
data's. The categories are public: ``categories=``, ``bins=`` (numeric
columns' edges) or read from ``reference=``."""


def default_synthesizer():
    """Return the class ``synthesize`` runs by default (``"rap"``)."""
    from skattr.synth import SYNTHESIZERS

    return SYNTHESIZERS["rap"]


def parameter_entries(cls) -> dict:
    """Return each parameter's entry in ``cls``'s docstring, name -> text.

    A parameter documented with the next one (``epsilon`` above ``delta``)
    has its line only; the next one's text says both.
    """
    doc = inspect.cleandoc(cls.__doc__)
    section = doc.split("Parameters\n----------\n", 1)[1].split("\n\n", 1)[0]
    entries: dict = {}
    name = None
    for line in section.splitlines():
        if line and not line.startswith(" "):
            name = line.split(" :", 1)[0]
            entries[name] = line
        elif name is not None:
            entries[name] += "\n" + line
    return entries


def _default_text(value) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def synthesize_region(spec: Synthesize) -> str:
    """Return the source text between the marks of ``spec.path``."""
    from skattr.synth._base import FILLED_BY_SYNTHESIZE

    cls = default_synthesizer()
    method_params = [(n, p.default) for n, p in cls.parameters().items()
                     if n not in FILLED_BY_SYNTHESIZE]
    entries = parameter_entries(cls)
    pad = " " * spec.indent

    def items(own, shown, tail, *, method=None, params=None):
        out = []
        for name, default in own:
            if name == "*":
                out.append("*")
            elif name == "method" and method is not None:
                out.append(method)
            elif default is _P.empty:
                out.append(name)
            else:
                out.append(f"{name}={_default_text(default)}")
        out += [f"{n}={_default_text(d)}" for n, d in shown]
        out += tail + ([params] if params else [])
        return out

    def header(items_, closing, name=spec.name):
        return _fitted(f"{pad}def {name}(", items_, closing, spec.indent + 4)

    tail = ["random_state=None"]
    shown_doc = "\n".join(entries[n] for n, _ in method_params)
    own_doc = spec.docs.format(first=method_params[0][0],
                               last=method_params[-1][0])
    doc = (f"{_SUMMARY[spec.path]}\n\n{_ABOUT}\n\nParameters\n----------\n"
           f"{own_doc}\n{shown_doc}\n{_RANDOM_STATE}\n\n{spec.returns}"
           + (f"\n\n{spec.examples}" if spec.examples else ""))
    if '"""' in doc or "\\" in doc:
        raise ValueError("synthesize: a docstring without triple quotes or "
                         "backslashes, please")
    overload_rap = items(spec.own, method_params, tail,
                         method='method: Literal["rap"] = "rap"')
    overload_any = items(spec.own, [], tail, method="method: str",
                         params="**params: Any")
    actual = items(spec.own, [], tail, params="**params")
    shown = items(spec.own, method_params, tail, params="**params")
    inner = " " * (spec.indent + 4)
    gap = [""] * (2 if spec.indent == 0 else 1)
    call, arguments = spec.body.split("(", 1)
    lines = [
        pad + BEGIN,
        f"{pad}@overload",
        *header(overload_rap, ") -> SyntheticData: ..."),
        *gap,
        f"{pad}@overload",
        *header(overload_any, ") -> SyntheticData: ..."),
        *gap,
        *header(actual, ") -> SyntheticData:"),
        f'{inner}"""{_indented(doc, spec.indent + 4).lstrip()}\n{inner}"""',
        *_fitted(f"{inner}{call}(",
                 [a.strip() for a in arguments.rstrip(")").split(",")],
                 ")", spec.indent + 8),
        *gap,
        *header(shown, "):", name=f"_{spec.name}_shown"),
        f'{inner}"""Hold the signature help() shows: the default method\'s '
        'keywords too."""',
        *gap,
        f"{pad}{spec.name}.__signature__ = inspect.signature(  "
        "# type: ignore[attr-defined]",
        f"{inner}_{spec.name}_shown)",
        f"{pad}del _{spec.name}_shown",
        pad + END,
    ]
    return "\n".join(lines)


def with_region(text: str, region: str, path: str) -> str:
    """Return ``text`` with its marked region replaced by ``region``."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{path}: the marks of tools/generate_verbs.py's "
                         "region are missing")
    line_start = text.rfind("\n", 0, start) + 1
    return text[:line_start] + region + text[end + len(END):]


def main(argv=None) -> int:
    """Write the modules, or with ``--check`` say which are not current."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a module is stale")
    args = parser.parse_args(argv)
    stale = []
    written = [(owner.path, module(owner)) for owner in OWNERS]
    for spec in SYNTHESIZERS_WRITTEN:
        current = (ROOT / spec.path).read_text()
        written.append((spec.path, with_region(
            current, synthesize_region(spec), spec.path)))
    for name, text in written:
        path = ROOT / name
        if path.exists() and path.read_text() == text:
            continue
        stale.append(name)
        if not args.check:
            path.write_text(text)
    verb = "is not current" if args.check else "written"
    for name in stale:
        print(f"{name} {verb}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
