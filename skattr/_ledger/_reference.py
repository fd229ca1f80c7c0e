"""The reference data a ledger is opened on: checked, and only what it reads."""

from __future__ import annotations

from skattr.backends import backend_of, is_frame, select_columns
from skattr.exceptions import InvalidParameterError

__all__ = ["opened_reference"]


def opened_reference(reference, data):
    """Return the reference a ledger keeps, refused first if it cannot be one.

    ``reference="self"`` and anything but a frame or None are refused; of a
    frame, only the columns the private data also has are kept (the others
    can never be released, so they are never read, fingerprinted or
    collected), and a lazy one is collected once.

    Parameters
    ----------
    reference : DataFrame, None or object
        What the ledger was given.
    data : DataFrame
        The private data (only its column labels are read).

    Returns
    -------
    DataFrame or None

    Raises
    ------
    InvalidParameterError
        ``reference="self"``, or a reference that is not a frame.
    """
    if isinstance(reference, str) and reference == "self":
        # Its joint laws, clipping ranges and file fingerprint read the
        # reference as a frame (a CI fuzz case: AttributeError 'str'
        # object has no attribute 'columns'), and ranges read off the
        # private data would be recorded with every release.
        raise InvalidParameterError(
            "A ledger does not take reference='self': its joint "
            "guarantee is computed over public reference data, and a "
            "Theta fitted on the private data itself holds no "
            "certificate. Pass reference=<a DataFrame of public data from "
            "the same population>, or None with a stated Theta.")
    if reference is not None and not is_frame(reference):
        raise InvalidParameterError(
            "A ledger's reference must be a (pandas or Dask) DataFrame of "
            "public data from the same population, or None with a stated "
            f"Theta; got {type(reference).__name__}.")
    if is_frame(reference) and is_frame(data):
        # Only the private data's columns can be released: the others
        # are never read (fingerprinted, collected), issue 42.
        shared = [c for c in dict.fromkeys(data.columns)
                  if c in set(reference.columns)]
        reference = select_columns(reference, shared or reference.columns)
    if is_frame(reference) and backend_of(reference).lazy:
        # The joint laws read the reference's records, for statistics not
        # yet named: it is collected to the driver once, every column (as
        # each Theta that reads records collects its own columns). Pass
        # only the columns to be released, or a sample, to keep it small.
        reference = backend_of(reference).collect(reference,
                                                  reference.columns)
    return reference
