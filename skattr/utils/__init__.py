"""Utilities: the list of public estimators."""

from __future__ import annotations

from skattr.utils._public import public_dir

__all__ = ["all_estimators"]

__dir__ = public_dir(__all__)


def all_estimators() -> list[tuple[str, type]]:
    """Every public skattr estimator, as ``(name, class)`` pairs sorted by name.

    Like :func:`sklearn.utils.all_estimators`.

    Examples
    --------
    >>> from skattr.utils import all_estimators
    >>> [name for name, _ in all_estimators()]  # doctest: +NORMALIZE_WHITESPACE
    ['ApproximateWassersteinMechanism', 'AttributePrivateGaussian',
     'AttributePrivateMarkovQuilt', 'DPGaussian', 'DPLaplace',
     'DirectionalGaussian', 'DirectionalLaplace',
     'DirectionalUncertaintyGaussian', 'EigenvectorGaussian',
     'ExpectedValueGaussian', 'ExpectedValueLaplace', 'GroupDPGaussian',
     'GroupDPLaplace', 'MarkovQuiltMechanism', 'OptimalGaussian',
     'WassersteinMechanism']
    """
    from skattr import mechanisms

    found = {cls.__name__: cls for cls in mechanisms.MECHANISMS.values()}
    return sorted(found.items())
