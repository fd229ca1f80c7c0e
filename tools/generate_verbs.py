"""Write the verbs of ``df.attrpriv`` and of a ledger out in source.

The verbs (``mean`` ... ``agg``) are said once, in ``skattr/_verbs.py``'s
``VERBS`` (their own parameters, their docs, the statistic they build); each
owner's keyword-only parameters are those of its ``_release`` (the
accessor's ``secret``, ``reference``, ``epsilon``, ...; a ledger's
``**params``), and their docs are below. This script writes every verb of
each owner as a method with its whole signature and numpydoc docstring, so
that ``help()``, ``inspect.signature``, IDEs, "go to definition" and type
checkers see them; each body is one call of ``skattr._verbs.release_verb``.

    python tools/generate_verbs.py          # write the two modules
    python tools/generate_verbs.py --check  # exit 1 if they are not current

``tests/test_verbs.py`` fails when a committed module is not what this
script writes: after changing ``VERBS``, an owner's ``_release`` or the docs
below, run it and commit the result.
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
    a NetworkTheta).
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
    ``"auto"`` the
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


def main(argv=None) -> int:
    """Write the modules, or with ``--check`` say which are not current."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a module is stale")
    args = parser.parse_args(argv)
    stale = []
    for owner in OWNERS:
        path = ROOT / owner.path
        text = module(owner)
        if path.exists() and path.read_text() == text:
            continue
        stale.append(owner.path)
        if not args.check:
            path.write_text(text)
    verb = "is not current" if args.check else "written"
    for name in stale:
        print(f"{name} {verb}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
