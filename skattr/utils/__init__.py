"""Utilities: the list of public estimators."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from skattr.utils._public import public_dir

__all__ = ["all_estimators"]

__dir__ = public_dir(__all__)


def all_estimators() -> list[tuple[str, type]]:
    """Every public skattr estimator, as ``(name, class)`` pairs sorted by name.

    Like :func:`sklearn.utils.all_estimators` with ``type_filter=
    "transformer"``: the concrete transformers of skattr's public modules
    (the mechanisms; :func:`skattr.mechanisms.MECHANISMS` maps their
    ``mechanism=`` names).

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
    from sklearn.base import BaseEstimator, TransformerMixin

    # As scikit-learn's does: walk the package's public modules and keep the
    # concrete transformers defined in it. No domain type is named here.
    root = importlib.import_module(__name__.partition(".")[0])
    found = {}
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{root.__name__}."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        module = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if (not name.startswith("_")
                    and cls.__module__.startswith(f"{root.__name__}.")
                    and issubclass(cls, BaseEstimator)
                    and issubclass(cls, TransformerMixin)
                    and not inspect.isabstract(cls)):
                found[name] = cls
    return sorted(found.items())
