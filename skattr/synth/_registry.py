"""The synthesisers ``synthesize(method=...)`` runs: name -> class.

Each class declares its ``method_name`` and is added with
:func:`register_synthesizer` in its own module; ``synthesize``, the
accessor and ``skattr synthesize`` ask the registry which class a name
means and which parameters it takes.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Iterator, Mapping

from skattr.exceptions import InvalidParameterError
from skattr.synth._base import FILLED_BY_SYNTHESIZE, SYNTHESIZE_OWN, Synthesizer

__all__ = ["SYNTHESIZERS", "SynthesizerRegistry", "register_synthesizer"]


class SynthesizerRegistry(Mapping):
    """Name -> synthesiser class, in registration order.

    A read-only mapping (``SYNTHESIZERS["rap"]``, ``list(SYNTHESIZERS)``),
    plus :meth:`register` and :meth:`check_params`.
    """

    def __init__(self):
        self._classes: dict[str, type] = {}

    def register(self, cls: type) -> type:
        """Add a synthesiser class under its ``method_name``; return it.

        Refuses, when the class is defined, one that ``synthesize`` could
        not run: not a :class:`Synthesizer`, without a ``method_name``, not
        saying its guarantees in words, whose ``__init__`` does not take
        ``categories``, ``secret`` and ``random_state`` (keyword-only) or
        takes a keyword of ``synthesize``'s own (``n``, ``bins``, ...), or
        whose command-line options name no parameter of it.
        """
        name = getattr(cls, "method_name", "")
        if not (isinstance(cls, type) and issubclass(cls, Synthesizer)):
            raise TypeError(f"{cls!r} is not a skattr.synth.Synthesizer.")
        if not name:
            raise TypeError(f"{cls.__name__} declares no method_name.")
        if name in self._classes and self._classes[name] is not cls:
            raise TypeError(f"method_name {name!r} is already registered by "
                            f"{self._classes[name].__name__}.")
        if cls.in_plain_words is Synthesizer.in_plain_words:
            raise TypeError(f"{cls.__name__} does not define in_plain_words: "
                            "a synthesised table says what it guarantees.")
        params = cls.parameters()
        absent = [p for p in FILLED_BY_SYNTHESIZE if p not in params]
        if absent:
            raise TypeError(f"{cls.__name__}.__init__ takes no keyword-only "
                            f"{absent}: synthesize passes them.")
        taken = [p for p in SYNTHESIZE_OWN if p in params]
        if taken:
            raise TypeError(f"{cls.__name__}.__init__ takes {taken}, which "
                            "synthesize takes itself: name them otherwise.")
        stray = [o.name for o in cls.command_line
                 if o.name not in params or o.name in FILLED_BY_SYNTHESIZE]
        if stray:
            raise TypeError(f"{cls.__name__}.command_line names {stray}, "
                            "which are not parameters synthesize passes on.")
        self._classes[name] = cls
        return cls

    def __getitem__(self, name: str) -> type:
        return self._classes[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._classes)

    def __len__(self) -> int:
        return len(self._classes)

    def check_params(self, method, params: Mapping, *, caller) -> type:
        """Return the class ``method`` names, having checked the keywords given.

        Parameters
        ----------
        method : str
            The synthesiser's ``method_name``.
        params : mapping
            The keywords given beyond the caller's own.
        caller : function
            ``synthesize`` or the accessor's: its message names it, and
            lists its own parameters (those of its signature but ``data``
            and ``**params``) first.

        Raises
        ------
        InvalidParameterError
            An unknown method (naming the closest), or a keyword the method
            does not take (naming the closest, and all it takes).
        """
        if not isinstance(method, str) or method not in self._classes:
            close = difflib.get_close_matches(str(method), list(self), n=1)
            raise InvalidParameterError(
                f"Unknown synthesiser method={method!r}; available: "
                f"{', '.join(self)}."
                + (f" Did you mean {close[0]!r}?" if close else ""))
        cls = self._classes[method]
        takes = [name for name, p in
                 inspect.signature(caller).parameters.items()
                 if name not in ("self", "data")
                 and p.kind is not p.VAR_KEYWORD]
        known = [*takes, *(p for p in cls.parameters()
                           if p not in FILLED_BY_SYNTHESIZE and p not in takes)]
        unknown = sorted(k for k in params if k not in known)
        if unknown:
            hints = {k: difflib.get_close_matches(k, known, n=1)
                     for k in unknown}
            raise InvalidParameterError(
                f"{caller.__name__}() takes no parameter(s) {unknown}."
                + "".join(f" Did you mean {h[0]!r} for {k!r}?"
                          for k, h in hints.items() if h)
                + f" It takes: {', '.join(known)}.")
        return cls


#: The synthesisers ``synthesize(method=...)`` runs.
SYNTHESIZERS = SynthesizerRegistry()


def register_synthesizer(cls: type) -> type:
    """Class decorator: add ``cls`` to :data:`SYNTHESIZERS` under its ``method_name``.

    Examples
    --------
    >>> from skattr.synth import SYNTHESIZERS
    >>> SYNTHESIZERS["rap"].__name__
    'AttributePrivateRAP'
    """
    return SYNTHESIZERS.register(cls)

