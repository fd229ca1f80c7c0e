"""skattr: release statistics while hiding global properties of the data.

Importing skattr registers the ``DataFrame.attrpriv`` accessor, on pandas
DataFrames and (when Dask is installed, as soon as ``dask.dataframe`` is
imported) on Dask DataFrames.
"""

import importlib

from skattr import exceptions
from skattr._accessor import AttributePrivacyAccessor
from skattr._persistence import register_importer
from skattr._version import __version__
from skattr.utils._public import public_dir

#: The subpackages, imported on first use (``skattr.mechanisms``): importing
#: skattr stays light (the command line's ``--help`` needs none of them).
_SUBPACKAGES = ("attacks", "audit", "backends", "bayes", "calibration",
                "datasets", "dp", "laws", "mechanisms", "model_selection",
                "noise", "plotting", "predicates", "synth", "theta", "utils",
                "wasserstein")
#: The public names and the private module each lives in.
_NAMES = {
    "Assumption": "_certificate", "Method": "_certificate",
    "MethodStep": "_certificate", "Description": "_describe",
    "GroupMeans": "_group_means", "group_means": "_group_means",
    "ShareHidden": "_share_hidden",
    "Ledger": "_ledger",
    "LedgerEntry": "_ledger", "LedgerStore": "_ledger",
    "SQLiteStore": "_ledger", "StoreTransaction": "_ledger",
    "Query": "_query", "StackedQuery": "_query",
    "Plan": "_release", "Release": "_release", "Secret": "_secret",
    "Statistic": "_statistic",
}


def __getattr__(name: str):
    """Import a subpackage or a public name on first use (PEP 562)."""
    if name in _SUBPACKAGES:
        module = importlib.import_module(f"skattr.{name}")
    elif name in _NAMES:
        module = getattr(importlib.import_module(f"skattr.{_NAMES[name]}"),
                         name)
    else:
        raise AttributeError(f"module 'skattr' has no attribute {name!r}")
    globals()[name] = module
    return module


def _load_all() -> None:
    """Import every subpackage and public name (what a saved file may name)."""
    for name in (*_SUBPACKAGES, *_NAMES):
        if name not in globals():
            __getattr__(name)


register_importer(_load_all)


__all__ = [
    "Assumption",
    "AttributePrivacyAccessor",
    "Description",
    "GroupMeans",
    "Ledger",
    "LedgerEntry",
    "LedgerStore",
    "Method",
    "MethodStep",
    "Plan",
    "Query",
    "Release",
    "SQLiteStore",
    "Secret",
    "ShareHidden",
    "StackedQuery",
    "Statistic",
    "StoreTransaction",
    "attacks",
    "audit",
    "backends",
    "bayes",
    "calibration",
    "datasets",
    "dp",
    "exceptions",
    "group_means",
    "laws",
    "mechanisms",
    "model_selection",
    "noise",
    "plotting",
    "predicates",
    "synth",
    "theta",
    "utils",
    "wasserstein",
    "__version__",
]

__dir__ = public_dir(__all__)
