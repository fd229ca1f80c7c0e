"""Data backends: every pass skattr makes over rows, behind one protocol.

skattr reads pandas DataFrames (the reference backend) and Dask DataFrames
(``pip install "skattr[dask]"``: each job one pass over the partitions, the
same numbers as pandas); :class:`DataBackend` says what a backend answers,
:func:`register_backend` adds one (a Polars or Spark backend plugs in here),
and :func:`backend_of` finds the backend of a frame. Nothing else in skattr
reads rows or asks which library a frame comes from.
"""

from skattr._validation import as_frame, check_frame
from skattr.backends._columns import (
    check_same_kinds,
    needed_columns,
    release_frames,
    select_columns,
)
from skattr.backends._dask import DaskBackend
from skattr.backends._pandas import PandasBackend
from skattr.backends._protocol import (
    DataBackend,
    backend_of,
    register_backend,
    registered_backends,
)
from skattr.backends._reading import Reading, one_reading
from skattr.backends._reference import Reference
from skattr.utils._public import public_dir

__all__ = ["DataBackend", "Reading", "Reference", "backend_of", "check_same_kinds",
           "frame_of", "is_frame", "needed_columns", "one_reading",
           "register_backend", "registered_backends", "release_frames",
           "select_columns"]

__dir__ = public_dir(__all__)

PANDAS = register_backend(PandasBackend())
DASK = register_backend(DaskBackend())


def frame_of(X, *, what: str):
    """Return (the frame, its backend) of user data: any backend's frame, or an array.

    A frame (or one-column series) of a registered backend stays as it is
    (a lazy one is not read); anything else becomes a checked pandas frame
    (:func:`skattr._validation.as_frame`: arrays, sparse matrices refused,
    no rows or columns refused).
    """
    for backend in registered_backends()[1:]:
        if backend.recognizes(X):
            frame = backend.as_frame(X, what=what)
            return check_frame(frame, what=what, counted=not backend.lazy), backend
    return as_frame(X, what=what), PANDAS


def is_frame(obj) -> bool:
    """Whether ``obj`` is a DataFrame (not a series) of a registered backend."""
    for backend in registered_backends():
        if backend.recognizes(obj):
            return backend.as_frame(obj, what="") is obj
    return False
