"""``skattr synthesize``: a synthetic table that hides the share of a group."""

from __future__ import annotations

import argparse

import pandas as pd

from skattr.cli._common import (
    Output,
    add_secret_options,
    read_secret,
    read_table,
    seed,
    typed_value,
)
from skattr.exceptions import SkattrError

__all__ = ["OPTION_NAMES", "PRIVACY_HELP", "add_synthesize"]

#: --privacy's help, the same for every command that takes it.
PRIVACY_HELP = ("hide the realised share (dataset: pairs on the grid k/n) or "
                "the chance of a record to be in the group (distributional)")


def add_synthesize(sub) -> None:
    syn = sub.add_parser(
        "synthesize",
        help="write a synthetic table that hides the share of a group",
        description="Fit attribute-private Relaxed Adaptive Projection to a "
                    "CSV or Parquet file: each group subsampled to a public "
                    "size (the share hidden exactly), its k-way marginals "
                    "released with differential privacy for every record, a "
                    "synthetic table written whose share of the group is the "
                    "one stated. Prints what was certified and assumed.",
        epilog="example: skattr synthesize adult.csv --secret-column sex "
               "--secret-value Female --pairs 0.3,0.4 --privacy "
               "distributional --reference public.csv --bins age=0,30,45,60,inf "
               "--output synthetic.csv")
    syn.add_argument("data", help="CSV file of the private data (with a "
                                  "header), or a Parquet file (.parquet)")
    add_secret_options(syn)
    syn.add_argument("--output", required=True,
                     help="the synthetic table: Parquet when the name ends in "
                          ".parquet or .pq, otherwise CSV (written whole or "
                          "not at all)")
    syn.add_argument("--reference", default=None,
                     help="CSV (or Parquet) file of public data to read the "
                          "columns' categories from")
    syn.add_argument("--categories", nargs="+", default=None,
                     metavar="COLUMN=A,B,...",
                     help="a column's categories, stated (public)")
    syn.add_argument("--bins", nargs="+", default=None,
                     metavar="COLUMN=E1,E2,...",
                     help="a numeric column's bin edges, chosen without the "
                          "private data (inf and -inf allowed)")
    syn.add_argument("--columns", nargs="+", default=None,
                     help="the columns synthesised (default: all)")
    syn.add_argument("--rows", type=int, default=None,
                     help="records of the synthetic table (default: as many "
                          "as the data)")
    syn.add_argument("--epsilon", type=float, default=1.0)
    syn.add_argument("--delta", type=float, default=1e-6,
                     help="each record's delta; under distributional privacy "
                          "also the chance a group is smaller than kept "
                          "(default: 1e-6)")
    syn.add_argument("--privacy", default="dataset",
                     choices=["dataset", "distributional"],
                     help=PRIVACY_HELP + "; default: dataset")
    syn.add_argument("--share", type=float, default=None,
                     help="the group's share in the synthetic table (default: "
                          "the middle of the pairs)")
    syn.add_argument("--individuals", default="dp", choices=["dp", "none"],
                     help="dp (default): every record protected by "
                          "differential privacy; none: the share hidden, no "
                          "record protected (a warning says what that "
                          "exposes)")
    syn.add_argument("--neighbours", default="any",
                     choices=["any", "same-group"],
                     help="differential privacy's neighbours: a record "
                          "replaced by any other (default; each group half "
                          "the budget), or its group kept as public (each "
                          "group the whole budget)")
    syn.add_argument("--rounds", type=int, default=1,
                     help="adaptive rounds in each group (report-noisy-max "
                          "chooses the marginals; default: 1, all at once)")
    syn.add_argument("--k", type=int, default=3, help="the marginals' order")
    syn.add_argument("--marginals", type=int, default=64,
                     help="k-way marginals answered, drawn at random (the "
                          "noise grows as their square root)")
    syn.add_argument("--choose", default="random",
                     choices=["random", "reference"],
                     help="which marginals: drawn at random (default) or the "
                          "most dependent in --reference (public: spends no "
                          "privacy)")
    syn.add_argument("--iterations", type=int, default=1000,
                     help="steps of each relaxed projection")
    syn.add_argument("--save", default=None, metavar="FILE.json",
                     help="also save the fitted synthesiser (JSON) to draw "
                          "more records later without spending privacy "
                          "(written whole or not at all)")
    syn.add_argument("--random-state", "--seed", dest="random_state",
                     type=seed, default=None,
                     help="seed the noise and the sampling (experiments only)")
    syn.add_argument("--progress", action=argparse.BooleanOptionalAction,
                     default=None, help="show progress bars on standard error")
    syn.set_defaults(run=_synthesize)


def _lists(given, option: str) -> dict:
    """Parse COLUMN=A,B,... options into {column: [texts]}."""
    found = {}
    for text in given or ():
        column, sep, values = text.partition("=")
        if not sep or not column or not values:
            raise SkattrError(f"{option} takes COLUMN=A,B,...; got {text!r}.")
        found[column] = values.split(",")
    return found


#: The library's names of the command's options, as its messages say them.
OPTION_NAMES = (
    ("The 'n_marginals' parameter of AttributePrivateRAP", "--marginals"),
    ("The 'n_synthetic' parameter of AttributePrivateRAP",
     "The relaxed table's size"),
    ("The 'iterations' parameter of AttributePrivateRAP", "--iterations"),
    ("The 'k' parameter of AttributePrivateRAP", "--k"),
    ("The 'share' parameter of AttributePrivateRAP", "--share"),
    ("The 'rounds' parameter of AttributePrivateRAP", "--rounds"),
    ("The 'epsilon' parameter of AttributePrivateRAP", "--epsilon"),
    ("The 'delta' parameter of AttributePrivateRAP", "--delta"),
    ("synthesize: n must be a positive int (records to draw)",
     "--rows must be a positive whole number of records"))


def _write_table(table: pd.DataFrame, path: str, name: str) -> None:
    if name.lower().endswith((".parquet", ".pq")):
        try:
            table.to_parquet(path, index=False)
        except ImportError as exc:
            raise SkattrError(
                f"Writing {name} needs a Parquet engine: pip install pyarrow; "
                f"{exc}") from None
    else:
        table.to_csv(path, index=False)


def _write_synthesizer(result, path: str, name: str) -> None:
    with open(path, "w", encoding="utf-8") as file:
        file.write(result.synthesizer.to_json())


def _synthesize(args) -> int:
    from skattr.synth import synthesize

    data = read_table(args.data)
    reference = None if args.reference is None else read_table(args.reference)
    secret = read_secret(args, data)
    stated = _lists(args.categories, "--categories")
    edges_of = _lists(args.bins, "--bins")
    for option, names in (("--categories", stated), ("--bins", edges_of)):
        absent = [c for c in names if c not in data.columns]
        if absent:
            raise SkattrError(f"{option} names {absent}, not columns of "
                              f"{args.data}; its columns: "
                              f"{', '.join(map(str, data.columns))}.")
    categories = {c: [typed_value(data[c], v, c, option="--categories")
                      for v in values] for c, values in stated.items()}
    bins = {}
    for c, edges in edges_of.items():
        try:
            bins[c] = [float(e) for e in edges]
        except ValueError:
            raise SkattrError(f"--bins {c}= takes numbers (inf allowed); got "
                              f"{','.join(edges)!r}.") from None
    if args.save is not None and not args.save.lower().endswith(".json"):
        raise SkattrError(f"--save writes JSON: give a name ending in .json, "
                          f"not {args.save!r}.")
    given = {"progress": args.progress}
    # Both files' temporary files are made before the fit: a path that
    # cannot be written is refused before any noise is drawn.
    kept = Output(args.save, option="--save", lost=(
        f"The synthetic table was written to {args.output}; the synthesiser "
        "is not kept (fitting it again would spend more privacy)."))
    with Output(args.output) as output, kept as saved:
        result = synthesize(
            data, secret=secret, categories=categories, bins=bins,
            reference=reference, columns=args.columns, n=args.rows,
            epsilon=args.epsilon, delta=args.delta, privacy=args.privacy,
            share=args.share,
            individuals=None if args.individuals == "none" else "dp",
            neighbours=args.neighbours, rounds=args.rounds, k=args.k,
            n_marginals=args.marginals,
            marginals=None if args.choose == "random" else "reference",
            iterations=args.iterations, random_state=args.random_state,
            **{k: v for k, v in given.items() if v is not None})
        output.write(result, writer=lambda r, path, name: _write_table(
            r.data, path, name), shown=lambda r: print(r.summary()))
        saved.write(result, writer=_write_synthesizer,
                    shown=lambda r: print(r.summary()))
    print(result.summary())
    print(f"wrote {len(result.data)} records to {args.output}")
    return 0
