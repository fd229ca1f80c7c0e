"""skattr: release statistics while hiding global properties of the data.

Importing skattr registers the ``DataFrame.attrpriv`` accessor.
"""

from skattr import (
    attacks,
    calibration,
    datasets,
    exceptions,
    mechanisms,
    theta,
    utils,
    wasserstein,
)
from skattr._accessor import AttributePrivacyAccessor
from skattr._query import Query, StackedQuery
from skattr._release import Plan, Release
from skattr._secret import Secret

__version__ = "0.1.0"

__all__ = [
    "AttributePrivacyAccessor",
    "Plan",
    "Query",
    "Release",
    "Secret",
    "StackedQuery",
    "attacks",
    "calibration",
    "datasets",
    "exceptions",
    "mechanisms",
    "theta",
    "utils",
    "wasserstein",
    "__version__",
]
