"""The skattr mechanism at the end of a scikit-learn Pipeline.

The scorers, refit rules and the attack take a mechanism or a ``Pipeline``
ending in one (issue 28): the steps before it transform the data the
mechanism sees (a ``ColumnTransformer`` with ``set_output(transform=
"pandas")``), and the mechanism plans and releases.
"""

from __future__ import annotations

from skattr.exceptions import InvalidParameterError

__all__ = ["split_pipeline"]


def _is_mechanism(estimator) -> bool:
    return hasattr(estimator, "plan")


def split_pipeline(estimator, *, what: str = "This"):
    """Return ``(steps_before, mechanism)`` of a mechanism or a Pipeline ending in one.

    Parameters
    ----------
    estimator : skattr mechanism or sklearn.pipeline.Pipeline
        A mechanism (``steps_before`` is then None) or a Pipeline whose last
        step is one (``steps_before`` the Pipeline of the steps before it, or
        None when there are none).
    what : str
        Who asks, for the error message.

    Raises
    ------
    InvalidParameterError
        ``estimator`` is neither.

    Examples
    --------
    >>> import skattr
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import FunctionTransformer
    >>> from skattr.mechanisms import AttributePrivateGaussian, split_pipeline
    >>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    >>> mech = AttributePrivateGaussian(query=skattr.Query.mean(["weight"]),
    ...                                 secret=secret)
    >>> before, last = split_pipeline(make_pipeline(FunctionTransformer(), mech))
    >>> last is mech, len(before)
    (True, 1)
    """
    if _is_mechanism(estimator):
        return None, estimator
    steps = getattr(estimator, "steps", None)
    if steps and _is_mechanism(steps[-1][1]):
        return (estimator[:-1] if len(steps) > 1 else None), steps[-1][1]
    raise InvalidParameterError(
        f"{what} takes a fitted skattr mechanism, or a scikit-learn Pipeline "
        f"whose last step is one; got {type(estimator).__name__}"
        + (f" ending in {type(steps[-1][1]).__name__}" if steps else "") + ".")
