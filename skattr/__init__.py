"""skattr: release statistics while hiding global properties of the data.

Importing skattr registers the ``DataFrame.attrpriv`` accessor, on pandas
DataFrames and (when Dask is installed, as soon as ``dask.dataframe`` is
imported) on Dask DataFrames.
"""

from skattr import (
    attacks,
    audit,
    backends,
    bayes,
    calibration,
    datasets,
    dp,
    exceptions,
    laws,
    mechanisms,
    model_selection,
    noise,
    plotting,
    predicates,
    theta,
    utils,
    wasserstein,
)
from skattr._accessor import AttributePrivacyAccessor
from skattr._certificate import Assumption, Method, MethodStep
from skattr._ledger import Ledger, LedgerEntry
from skattr._query import Query, StackedQuery
from skattr._release import Plan, Release
from skattr._secret import Secret
from skattr._statistic import Statistic
from skattr._version import __version__
from skattr.utils._public import public_dir

__all__ = [
    "Assumption",
    "AttributePrivacyAccessor",
    "Ledger",
    "LedgerEntry",
    "Method",
    "MethodStep",
    "Plan",
    "Query",
    "Release",
    "Secret",
    "StackedQuery",
    "Statistic",
    "attacks",
    "audit",
    "backends",
    "bayes",
    "calibration",
    "datasets",
    "dp",
    "exceptions",
    "laws",
    "mechanisms",
    "model_selection",
    "noise",
    "plotting",
    "predicates",
    "theta",
    "utils",
    "wasserstein",
    "__version__",
]

__dir__ = public_dir(__all__)
