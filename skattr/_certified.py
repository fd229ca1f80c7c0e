"""What a record holding a certificate's method and assumptions answers.

:class:`Certified` is shared by :class:`~skattr._release.Certificate`,
:class:`~skattr.Plan` and :class:`~skattr.Release`: the prose of their
records (:mod:`skattr._certificate`) and ``assumes(kind)``.
:func:`accepts_prose` lets them be built from skattr 0.2's prose arguments
(``method=``, ``assumptions=``), as its files hold them.
"""

from __future__ import annotations

import functools

from skattr._certificate import ASSUMPTIONS, Assumption, Method

__all__ = ["Certified", "accepts_prose"]


class Certified:
    """What a record holding ``certified_by`` and ``assumed`` answers.

    Shared by :class:`~skattr._release.Certificate`, :class:`~skattr.Plan`
    and :class:`~skattr.Release`.
    """

    certified_by: Method
    assumed: tuple

    def _check_records(self):
        """Refuse a method or assumptions that are not records."""
        if not isinstance(self.certified_by, Method) or not all(
                isinstance(a, Assumption) for a in self.assumed):
            raise TypeError(
                f"A {type(self).__name__}'s certified_by is a Method and its "
                "assumed a tuple of Assumption records; got "
                f"{self.certified_by!r} and {self.assumed!r}.")
        object.__setattr__(self, "assumed", tuple(self.assumed))

    @property
    def method(self) -> str:
        """How the certificate was made, in prose: ``str(certified_by)``."""
        return str(self.certified_by)

    @property
    def assumptions(self) -> tuple:
        """What the certificate takes for granted, in prose: one str each."""
        return tuple(str(a) for a in self.assumed)

    def assumes(self, kind: str) -> bool:
        """Whether the certificate rests on an assumption of ``kind``.

        Examples
        --------
        >>> from skattr._release import Certificate
        >>> from skattr import Assumption
        >>> cert = Certificate(epsilon=1.0, delta=0.0, sensitivity=1.0,
        ...                    assumed=(Assumption.of("law.gaussian"),))
        >>> cert.assumes("law.gaussian"), cert.assumes("theta.plug-in")
        (True, False)
        """
        if kind not in ASSUMPTIONS:
            raise ValueError(f"{kind!r} is not a kind of assumption; the kinds "
                             f"are {sorted(ASSUMPTIONS)}.")
        return any(a.kind == kind for a in self.assumed)


def _typed_fields(certified_by, assumed, method, assumptions) -> dict:
    """Return the typed fields, from the typed or the prose arguments (not both)."""
    out = {}
    if method is not None:
        if certified_by is not None:
            raise TypeError("Give certified_by (a Method) or method (its "
                            "prose), not both.")
        certified_by = (method if isinstance(method, Method)
                        else Method.from_text(method))
    if assumptions is not None:
        if assumed is not None:
            raise TypeError("Give assumed (Assumption records) or assumptions "
                            "(their prose), not both.")
        assumed = assumptions
    if certified_by is not None:
        out["certified_by"] = certified_by
    if assumed is not None:
        out["assumed"] = tuple(a if isinstance(a, Assumption)
                               else Assumption.from_text(a) for a in assumed)
    return out


def accepts_prose(cls):
    """Class decorator: ``cls(method=..., assumptions=...)`` also builds it.

    The typed fields are ``certified_by`` and ``assumed``; the prose
    arguments (what skattr 0.2 called them, and what its files hold) are
    turned into records (:meth:`Method.from_text`,
    :meth:`Assumption.from_text`).
    """
    init = cls.__init__

    @functools.wraps(init)
    def __init__(self, *args, method=None, assumptions=None,
                 certified_by=None, assumed=None, **fields):
        init(self, *args, **fields,
             **_typed_fields(certified_by, assumed, method, assumptions))

    cls.__init__ = __init__
    return cls

