"""How much a guarantee protects: a delta or an epsilon too large to mean much.

The one check every verb, mechanism and synthesiser makes of its (epsilon,
delta) before any work: a delta at 1/n or more warns, above 0.1 is refused
unless asked for; an epsilon above 10 warns.
"""

from __future__ import annotations

from numbers import Real

from skattr.exceptions import InvalidParameterError, PrivacyLeakWarning
from skattr.utils._stack import warn_once

__all__ = ["LARGEST_DELTA", "LARGE_EPSILON", "check_privacy_level"]


#: A delta above this is refused unless asked for (``allow_large_delta``).
LARGEST_DELTA = 0.1
#: An epsilon above this warns: the odds may move by e^10, about 22,000.
LARGE_EPSILON = 10.0


def check_privacy_level(epsilon, delta, n: int, *, large_delta: bool = False,
                        allow: str | None = "allow_large_delta=True") -> None:
    """Warn of a guarantee that protects little, and refuse one that is none.

    delta is the chance the bound on the odds fails: at 1/n or more it is
    as likely to fail as a record is to be any one record, and above 0.1 the
    guarantee says next to nothing (refused unless ``large_delta``: the
    option ``allow`` names asks for it; None: no option does). An epsilon
    above 10 lets the odds move 22,000-fold. Each warning points at the
    user's line, once within :func:`~skattr.utils._stack.warnings_once`
    (the candidates and steps of one release).

    Examples
    --------
    >>> check_privacy_level(1.0, 1e-6, 1000)              # nothing to say
    >>> try:
    ...     check_privacy_level(1.0, 0.5, 1000, allow=None)
    ... except ValueError as error:
    ...     print(str(error)[:55])
    delta=0.5 lets the guarantee fail with probability 0.5,
    """
    if (isinstance(delta, Real) and not isinstance(delta, bool)
            and delta == delta and n > 0):
        if delta > LARGEST_DELTA and not large_delta:
            raise InvalidParameterError(
                f"delta={delta:g} lets the guarantee fail with probability "
                f"{delta:g}, so it says next to nothing; use a delta below "
                f"1/n = {1 / n:.3g} (such as 1e-3 or less)"
                + ("." if allow is None else
                   f", or pass {allow} if that is what you mean."))
        if delta >= 1.0 / n:
            warn_once(
                f"delta={delta:g} is at least 1/n = {1 / n:.3g}: the guarantee "
                "may fail as often as one record in n is picked, so the "
                "release may reveal what it should hide; use a delta well "
                f"below {1 / n:.3g}.", PrivacyLeakWarning)
    if (isinstance(epsilon, Real) and not isinstance(epsilon, bool)
            and epsilon > LARGE_EPSILON):
        warn_once(
            f"epsilon={epsilon:g} lets an observer's odds between the two "
            f"secrets move by a factor e^{epsilon:g}; above {LARGE_EPSILON:g} "
            "the guarantee hides little.", PrivacyLeakWarning)
