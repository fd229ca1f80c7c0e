"""``skattr describe``: a CSV file's count, means and quartiles, certified jointly."""

from __future__ import annotations

import pandas as pd

from skattr._describe import described_columns
from skattr.cli._common import (
    DROPNA_REVEALS,
    Output,
    add_secret_options,
    as_bounds,
    bounds_option,
    check_columns,
    drop_missing,
    read_secret,
    read_table,
    seed,
)

__all__ = ["add_describe"]


def add_describe(sub) -> None:
    """Add ``skattr describe`` (``df.attrpriv.describe`` on a CSV file)."""
    desc = sub.add_parser(
        "describe",
        help="the count, means and quartiles of columns, certified jointly",
        description="Release the count (public), the mean and the quartiles "
                    "(or --percentiles) of columns of a CSV file while hiding "
                    "a global property of a sensitive column: one ledger "
                    "whose budget is --epsilon, --delta, so the whole table "
                    "holds that guarantee jointly. Prints the table, each "
                    "value's noise and the guarantee in plain words.",
        epilog="example: skattr describe patients.csv --secret-column gender "
               "--secret-value female --pairs 0.4,0.6 --reference "
               "reference.csv --epsilon 4")
    desc.add_argument("data", help="CSV file of the private data (with a "
                                   "header), or a Parquet file (.parquet)")
    desc.add_argument("--columns", nargs="+", default=None,
                      help="the columns described (default: every numeric "
                           "column but the secret's, as pandas' describe)")
    add_secret_options(desc)
    desc.add_argument("--reference", required=True,
                      help="CSV (or Parquet) file of public reference data")
    desc.add_argument("--epsilon", type=float, default=1.0,
                      help="the whole table's epsilon (default: 1)")
    desc.add_argument("--delta", type=float, default=1e-3,
                      help="the whole table's delta (default: 1e-3)")
    desc.add_argument("--percentiles", type=float, nargs="*",
                      default=[0.25, 0.5, 0.75], metavar="Q",
                      help="the quantile levels released (default: 0.25 0.5 "
                           "0.75; none: the means alone)")
    desc.add_argument("--allocate", choices=("error", "relative"),
                      default="error",
                      help="how each release shares its noise among its "
                           "values: 'error' (the default: the least expected "
                           "squared error) or 'relative' (each value's noise "
                           "in proportion to its value in the reference: "
                           "equal relative errors)")
    desc.add_argument("--bounds", type=bounds_option, nargs="+", default=None,
                      metavar="[COLUMN=]LO,HI",
                      help="the range each column is clipped to: LO,HI, "
                           "COLUMN=LO,HI, 'robust' (the default: the "
                           "reference's range within its far-out fences) or "
                           "'reference' (its whole range)")
    desc.add_argument("--dropna", action="store_true",
                      help="drop the records missing a value in the described "
                           "columns or the secret's (as pandas' dropna), count "
                           "n again and print it. " + DROPNA_REVEALS)
    desc.add_argument("--output", default=None,
                      help="also write the table as CSV: one row per value "
                           "(statistic, column, value, noise sd)")
    desc.add_argument("--random-state", "--seed", dest="random_state",
                      type=seed, default=None,
                      help="seed the noise (experiments only: whoever knows "
                           "the seed can subtract it)")
    desc.set_defaults(run=_describe)


def _describe(args) -> int:
    data = read_table(args.data)
    reference = read_table(args.reference)
    where = f"the reference {args.reference}"
    if args.columns is not None:
        check_columns(args.columns, data, args.data, "--columns")
        check_columns(args.columns, reference, where, "--columns")
    check_columns([args.secret_column], reference, where, "--secret-column")
    secret = read_secret(args, data)
    # The columns pandas' describe would take, in this command's words.
    columns = (args.columns if args.columns is not None else
               described_columns(data, secret, reference, "skattr describe",
                                 example="--columns age income"))
    if args.dropna:
        data, reference, _ = drop_missing(columns, args.secret_column, data,
                                          reference)
    kwargs = dict(secret=secret, reference=reference, epsilon=args.epsilon,
                  delta=args.delta, percentiles=tuple(args.percentiles),
                  allocate=args.allocate, random_state=args.random_state)
    bounds = as_bounds(args.bounds)
    if bounds is not None:
        kwargs["bounds"] = None if bounds == "none" else bounds
    with Output(args.output) as output:
        described = data.attrpriv.describe(columns, **kwargs)
        print(described)
        # Printed already: a failed write only says so.
        output.write(described, _write, lambda described: None)
    return 0


def _write(described, path: str, name: str) -> None:
    """Write the table long: a row per (statistic, column), its value and sd."""
    table, noise = described.table, described.noise_std
    pd.DataFrame([(statistic, column, table.at[statistic, column],
                   noise.at[statistic, column])
                  for statistic in table.index for column in table.columns],
                 columns=["statistic", "column", "value", "noise_sd"]
                 ).to_csv(path, index=False)
