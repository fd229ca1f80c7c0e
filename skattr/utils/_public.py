"""A package's ``__dir__`` that lists its public names only."""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = ["public_dir"]


def public_dir(names: Iterable[str]) -> Callable[[], list[str]]:
    """Return a module-level ``__dir__`` (PEP 562) that lists ``names``, sorted.

    ``dir(package)``, tab completion and :func:`inspect.getmembers` (hence
    ``help()``'s CLASSES, FUNCTIONS and DATA) then show the public API, not the
    private modules (``_query``, ``_primitives``, ...) that importing the
    package binds as attributes. Those stay importable and patchable: only the
    listing changes.

    Parameters
    ----------
    names : iterable of str
        The package's public names, its ``__all__``.

    Returns
    -------
    callable
        A function of no arguments returning the sorted names; assign it to
        ``__dir__`` in the package's ``__init__.py``.

    Examples
    --------
    >>> from skattr.utils._public import public_dir
    >>> public_dir(["b", "a"])()
    ['a', 'b']
    """
    listed = sorted(names)

    def __dir__() -> list[str]:
        return list(listed)

    return __dir__
