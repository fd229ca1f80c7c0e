"""What the commands share: reading tables and secrets, writing files whole."""

from __future__ import annotations

import argparse
import difflib
import os
import tempfile

import pandas as pd

from skattr._secret import Secret
from skattr.exceptions import SkattrError

__all__ = ["DROPNA_REVEALS", "Output", "add_secret_options", "as_bounds",
           "bounds_option", "check_columns", "drop_missing", "pairs",
           "read_key_file", "read_secret", "read_table", "seed",
           "typed_value"]


def pairs(text: str) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in text.split(","))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"a pair is two numbers separated by a comma, e.g. 0.4,0.6; got {text!r}"
        ) from exc
    return a, b


def typed_value(column: pd.Series, text: str, name: str,
                 option: str = "--secret-value"):
    """Read ``option``'s text as the column's own type (bool, number or text)."""
    if pd.api.types.is_bool_dtype(column):
        words = {"true": True, "1": True, "false": False, "0": False}
        if text.lower() not in words:
            raise SkattrError(f"Column {name!r} holds True/False; give "
                              f"{option} true or false, not {text!r}.")
        return words[text.lower()]
    if pd.api.types.is_numeric_dtype(column):
        try:
            if pd.api.types.is_integer_dtype(column) and float(text).is_integer():
                return int(float(text))
            return float(text)
        except ValueError:
            raise SkattrError(f"Column {name!r} is numeric; give a number as "
                              f"{option}, not {text!r}.") from None
    return text


def read_table(path: str) -> pd.DataFrame:
    """Read a CSV file, or a Parquet file or directory (``.parquet``, ``.pq``)."""
    if path.lower().endswith((".parquet", ".pq")):
        if not os.path.exists(path):
            raise SkattrError(f"No such file or directory: {path!r}")
        try:
            return pd.read_parquet(path)
        except ImportError as exc:
            raise SkattrError(
                f"Reading {path} needs a Parquet engine: pip install pyarrow "
                f"(or skattr[dask], which brings it); {exc}") from None
        except OSError:
            raise
        except Exception as exc:  # noqa: BLE001 - each engine has its own errors
            raise SkattrError(f"{path} is not a readable Parquet file: "
                              f"{exc} (a CSV file is named .csv).") from None
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise SkattrError(f"{path} is empty: skattr reads a CSV file with a "
                          "header row (the column names) and a row per "
                          "record.") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise SkattrError(f"{path} is not a readable CSV file ({exc}); a "
                          "Parquet file is named .parquet.") from None


def check_columns(columns, data: pd.DataFrame, path: str, option: str) -> None:
    """Refuse columns ``path`` lacks, naming the closest of its columns."""
    names = [str(c) for c in data.columns]
    for column in columns:
        if column not in data.columns:
            close = difflib.get_close_matches(str(column), names, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            if len(names) == 1 and any(sep in names[0] for sep in ";\t|"):
                hint += (" The file reads as one column: its values may be "
                         "separated by ';', a tab or '|'; skattr reads "
                         "comma-separated CSV (or Parquet).")
            raise SkattrError(
                f"{option} {column!r} is not a column of {path}.{hint} Its "
                f"columns: {', '.join(names)}.")


def read_secret(args, data: pd.DataFrame) -> Secret:
    """Return the secret the options state, its value read as its column's type."""
    check_columns([args.secret_column], data, args.data, "--secret-column")
    value = args.secret_value
    if value is not None:
        value = typed_value(data[args.secret_column], value, args.secret_column)
    ways = sum(x is not None for x in (args.pairs, args.window, args.sets))
    if ways != 1:
        raise SkattrError("Give exactly one of --pairs, --window (with --support) "
                          "or --sets.")
    if getattr(args, "secret_mean", False):
        return Secret.mean(args.secret_column, pairs=args.pairs,
                           window=args.window, support=args.support,
                           sets=args.sets)
    return Secret.proportion(args.secret_column, value, pairs=args.pairs,
                             window=args.window, support=args.support,
                             sets=args.sets)


def add_secret_options(parser) -> None:
    parser.add_argument("--secret-column", required=True,
                        help="the sensitive column")
    parser.add_argument("--secret-value", default=None,
                        help="the category whose proportion is hidden (omit "
                             "for a 0/1 column)")
    parser.add_argument("--pairs", type=pairs, nargs="+", default=None,
                        metavar="A,B", help="discriminative pairs, e.g. 0.4,0.6")
    parser.add_argument("--window", type=float, default=None,
                        help="hide every pair of values closer than this")
    parser.add_argument("--support", type=pairs, default=None,
                        metavar="LOW,HIGH",
                        help="range of the secret's values (with --window)")
    parser.add_argument("--sets", type=pairs, nargs="+", default=None,
                        metavar="LOW,HIGH",
                        help="intervals hidden from each other")


def read_key_file(path: str) -> bytes:
    """Read a ledger's HMAC key from ``path`` (``--ledger-key-file``).

    The file must be yours and readable by you only, as ssh asks of a
    private key: a key others can read or replace is no secret. Trailing
    line breaks are dropped (as ``$(cat FILE)`` would: a key written with
    ``echo``). The key is never printed.
    """
    try:
        with open(path, "rb") as file:
            if os.name == "posix":
                status = os.fstat(file.fileno())
                mode = status.st_mode & 0o777
                if status.st_uid not in (os.getuid(), 0):
                    raise SkattrError(
                        f"--ledger-key-file {path} belongs to another user; "
                        "use a key file of your own. The key was not used.")
                if mode & 0o077:
                    raise SkattrError(
                        f"--ledger-key-file {path}: its permissions {mode:04o} "
                        "let others read or write it, so the key is no "
                        f"secret; make it yours alone (chmod 600 {path}) and "
                        "give it again. The key was not used.")
            key = file.read(4097)
    except OSError as exc:
        raise SkattrError(f"--ledger-key-file {path} cannot be read "
                          f"({exc.strerror}).") from None
    if len(key) > 4096:
        raise SkattrError(f"--ledger-key-file {path} is over 4096 bytes: give "
                          "a file holding the key alone.")
    key = key.rstrip(b"\r\n")
    if len(key) < 16:
        raise SkattrError(f"--ledger-key-file {path} holds fewer than 16 bytes; "
                          "a key must be 16 bytes or more (for example: "
                          f"head -c 32 /dev/urandom | base64 > {path}).")
    return key


class Output:
    """``--output FILE`` (or another option's file), written whole or not at all.

    Its temporary file is created beside FILE before anything is released
    (a path that cannot be written is refused first); the release is
    written to it and renamed over FILE, so FILE never holds part of a
    release. When the write fails after the release was made, the release
    is printed and the error says so: a second release of the same data
    would spend more privacy.

    Parameters
    ----------
    path : str or None
        The file; None writes nothing.
    option : str, default="--output"
        The option that named it, as the messages say it.
    lost : str, optional
        What the error says after a failed write (by default: keep the
        values printed).
    """

    def __init__(self, path: str | None, option: str = "--output",
                 lost: str | None = None):
        self.path, self.partial, self.option = path, None, option
        self.lost = lost or ("Keep the values printed above: releasing the "
                             "same data again would spend more privacy.")

    def __enter__(self) -> Output:
        if self.path is not None:

            folder = os.path.dirname(os.path.abspath(self.path))
            try:
                handle, self.partial = tempfile.mkstemp(
                    dir=folder, prefix=f".{os.path.basename(self.path)}.",
                    suffix=".partial")
                os.close(handle)
            except OSError as exc:
                raise SkattrError(
                    f"{self.option} {self.path} cannot be written ({exc.strerror}: "
                    f"{folder}); nothing was released. Give a path in a "
                    "folder you can write to.") from None
        return self

    def write(self, rel, writer, shown) -> None:
        """Write ``rel`` with ``writer(rel, path, name)``.

        ``shown(rel)`` prints it when the file cannot be written.
        """
        if self.path is None:
            return
        try:
            writer(rel, self.partial, self.path)
            os.replace(self.partial, self.path)
            self.partial = None
        except OSError as exc:
            shown(rel)
            raise SkattrError(
                f"The release above was made (and counted, in a ledger) but "
                f"{self.option} {self.path} could not be written ({exc}); no "
                f"part of it was left in the file. {self.lost}") from None

    def __exit__(self, *exc) -> None:
        if self.partial is not None:
            try:
                os.unlink(self.partial)
            except OSError:
                pass


def seed(text: str) -> int:
    """Read a seed: a whole number from 0 to 2**32 - 1 (what numpy accepts)."""
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if not 0 <= seed < 2**32:
        raise argparse.ArgumentTypeError(
            f"a seed is a whole number from 0 to {2**32 - 1}, not {text!r}")
    return seed


def bounds_option(text: str):
    """Parse ``LO,HI`` (every released column), ``COLUMN=LO,HI`` or a policy."""
    if text in ("robust", "reference", "none"):
        return text
    column, sep, pair = text.rpartition("=")
    try:
        low, high = pairs(pair)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(
            f"bounds are LO,HI or COLUMN=LO,HI, e.g. 0,120 or age=0,120; got "
            f"{text!r}") from exc
    return (column, (low, high)) if sep else (low, high)


def as_bounds(given):
    """One LO,HI for every column, a {column: (lo, hi)} dict, or a policy."""
    if given is None:
        return None
    if any(isinstance(b, str) for b in given):
        if len(given) > 1:
            raise SkattrError("Give --bounds robust, --bounds reference or "
                              "--bounds none alone.")
        return given[0]
    if len(given) == 1 and isinstance(given[0][1], float):
        return given[0]
    if any(isinstance(b[1], float) for b in given):
        raise SkattrError("Give --bounds once as LO,HI (every column), or as "
                          "COLUMN=LO,HI for each column; not both.")
    return dict(given)


#: What --dropna reveals, said where it is documented and when it drops.
DROPNA_REVEALS = (
    "n is public, so the number of records dropped is revealed too: if values "
    "are missing more often in one of the secret's groups, it hints at the "
    "share.")


def drop_missing(columns, secret_column, data, reference):
    """--dropna: drop the records missing a value the release reads.

    The released columns and the secret's, in the private data and (public,
    so nothing is revealed by it) the reference. Prints what was dropped;
    returns the frames and a record of it for ``--output``.
    """
    columns = list(dict.fromkeys([*columns, secret_column]))
    kept = data[columns].notna().all(axis=1)
    dropped = {"columns": columns, "records_read": len(data),
               "records_dropped": int((~kept).sum()), "n": int(kept.sum())}
    data = data[kept]
    print(f"--dropna: dropped {dropped['records_dropped']} of "
          f"{dropped['records_read']} records missing a value in "
          f"{', '.join(map(str, columns))}; n = {dropped['n']}. "
          f"{DROPNA_REVEALS}")
    if isinstance(reference, pd.DataFrame):
        present = [c for c in columns if c in reference.columns]
        held = reference[present].notna().all(axis=1)
        if not held.all():
            print(f"--dropna: dropped {int((~held).sum())} of {len(reference)} "
                  "reference records missing a value (public: reveals "
                  "nothing).")
            reference = reference[held]
    return data, reference, dropped
