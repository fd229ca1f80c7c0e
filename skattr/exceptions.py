"""Errors and warnings raised by skattr.

Every error is a subclass of :class:`ValueError`, so code written against
scikit-learn's conventions (``except ValueError``) keeps working, and every
message says what to do next.
"""

__all__ = [
    "SkattrError",
    "InvalidParameterError",
    "DataValidationError",
    "DataTypeError",
    "NotCertifiableError",
    "MissingDependencyError",
    "BudgetExceededError",
    "PersistenceError",
    "WorkLimitError",
    "PrivacyLeakWarning",
    "ClassicCalibrationWarning",
    "ClippingWarning",
    "SecretReleasedWarning",
    "NotFittedError",
]

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sklearn.exceptions import NotFittedError


def __getattr__(name: str):
    """``NotFittedError`` is scikit-learn's, imported when first asked for.

    Importing skattr (and so its command line's ``--help``) then does not
    import scikit-learn.
    """
    if name == "NotFittedError":
        from sklearn.exceptions import NotFittedError

        return NotFittedError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class SkattrError(ValueError):
    """Base class of every error skattr raises on bad input."""


class InvalidParameterError(SkattrError):
    """A parameter (epsilon, delta, a secret's pairs, ...) has an invalid value."""


class DataValidationError(SkattrError):
    """The data cannot be used: missing columns, NaN, empty frame, too few rows."""


class DataTypeError(DataValidationError, TypeError):
    """A column holds values of a type its statistic or predicate cannot read.

    A :class:`DataValidationError`, and a ``TypeError`` too, as scikit-learn's
    conventions expect of an estimator given, say, dicts in a column.
    """


class NotCertifiableError(SkattrError):
    """The privacy guarantee cannot be certified, so nothing is released."""


class BudgetExceededError(NotCertifiableError):
    """A ledger's release would take the joint guarantee over its budget.

    Raised before any noise is drawn; the message says what remains.
    """


class PersistenceError(SkattrError):
    """A saved object cannot be written or loaded by ``to_json``/``from_json``.

    Raised for an object holding code (a function) or a type skattr does not
    save, and for a file that is malformed, of another schema version, altered
    after it was saved (its content hash differs), or names a type outside
    skattr's allowlist.
    """


class WorkLimitError(SkattrError):
    """A computation would take more work than its limit allows.

    Raised before the work (or as soon as it is seen to overrun), with the
    estimate and the option that makes the computation cheaper or raises the
    limit; nothing is released.
    """


class MissingDependencyError(SkattrError, ImportError):
    """An optional extra (plotting, ...) is needed and not installed."""


class PrivacyLeakWarning(UserWarning):
    """The release may leak more than its certificate says (Theta fit on itself)."""


class ClassicCalibrationWarning(UserWarning):
    """The classic Gaussian constant is used where its proof does not hold."""


class ClippingWarning(UserWarning):
    """The default clipping cut reference records: a statistic is of clipped values."""


class SecretReleasedWarning(UserWarning):
    """A release reads the secret's own column: it releases the hidden property.

    The noise is set to hide the property, so such a release is mostly noise.
    """
