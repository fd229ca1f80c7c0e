"""``skattr synthesize``: a synthetic table that hides the share of a group."""

from __future__ import annotations

import argparse

import pandas as pd

from skattr._secret import PRIVACY_HELP
from skattr.cli._common import (
    Output,
    add_secret_options,
    read_secret,
    read_table,
    seed,
    typed_value,
)
from skattr.exceptions import SkattrError

__all__ = ["PRIVACY_HELP", "add_synthesize", "in_options"]

#: The synthesiser --method defaults to (synthesize's).
DEFAULT_METHOD = "rap"


def add_synthesize(sub) -> None:
    """Add ``skattr synthesize``; its options are added when it is parsed.

    They are the chosen synthesiser's (``--method``), read from its class:
    building the parser (``skattr --help``) imports no synthesiser.
    """
    syn = sub.add_parser(
        "synthesize",
        help="write a synthetic table that hides the share of a group",
        epilog="example: skattr synthesize adult.csv --secret-column sex "
               "--secret-value Female --pairs 0.3,0.4 --privacy "
               "distributional --reference public.csv --bins age=0,30,45,60,inf "
               "--output synthetic.csv",
        fill=_add_options)
    syn.set_defaults(run=_synthesize)


def _method_named(argv) -> str:
    """Return the --method given in ``argv`` (the default when none is)."""
    argv = list(argv or ())
    for i, text in enumerate(argv):
        if text == "--method" and i + 1 < len(argv):
            return argv[i + 1]
        if text.startswith("--method="):
            return text.partition("=")[2]
    return DEFAULT_METHOD


def _add_options(syn, argv) -> None:
    """Add the command's options and the chosen synthesiser's."""
    from skattr.synth import SYNTHESIZERS

    method = _method_named(argv)
    # An unknown name is refused by --method's choices, with the closest.
    cls = SYNTHESIZERS.get(method, SYNTHESIZERS[DEFAULT_METHOD])
    syn.description = cls.description
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
    syn.add_argument("--method", default=DEFAULT_METHOD,
                     choices=list(SYNTHESIZERS),
                     help=f"the synthesiser (default: {DEFAULT_METHOD}, "
                          f"{SYNTHESIZERS[DEFAULT_METHOD].__name__}); the "
                          "options below are its own")
    parameters = cls.parameters()
    for option in cls.command_line:
        _add_option(syn, option, parameters[option.name])
    syn.add_argument("--save", default=None, metavar="FILE.json",
                     help="also save the fitted synthesiser (JSON) to draw "
                          "more records later without spending privacy "
                          "(written whole or not at all)")
    syn.add_argument("--random-state", "--seed", dest="random_state",
                     type=seed, default=None,
                     help="seed the noise and the sampling (experiments only)")
    if "progress" in parameters:
        syn.add_argument("--progress", action=argparse.BooleanOptionalAction,
                         default=None,
                         help="show progress bars on standard error")
    syn.set_defaults(synthesizer_options=cls.command_line)


def _add_option(syn, option, parameter) -> None:
    """Add a synthesiser's parameter as its option: its default, type, choices."""
    dest = f"param {option.name}"
    if option.words is not None:
        default = next(w for w, v in option.words.items()
                       if v == parameter.default)
        syn.add_argument(option.option, dest=dest, default=default,
                         choices=list(option.words), help=option.help)
    elif parameter.choices is not None:
        syn.add_argument(option.option, dest=dest, default=parameter.default,
                         choices=parameter.choices, help=option.help)
    else:
        syn.add_argument(option.option, dest=dest, type=parameter.kind,
                         default=parameter.default, help=option.help,
                         metavar=option.option[2:].upper().replace("-", "_"))


def _given(args) -> dict:
    """Return the synthesiser's parameters as the options give them."""
    params = {}
    for option in args.synthesizer_options:
        value = getattr(args, f"param {option.name}")
        params[option.name] = (value if option.words is None
                               else option.words[value])
    return params


def _lists(given, option: str) -> dict:
    """Parse COLUMN=A,B,... options into {column: [texts]}."""
    found = {}
    for text in given or ():
        column, sep, values = text.partition("=")
        if not sep or not column or not values:
            raise SkattrError(f"{option} takes COLUMN=A,B,...; got {text!r}.")
        found[column] = values.split(",")
    return found


#: The library's messages, as the command says them.
_WORDS = (("synthesize: n must be a positive int (records to draw)",
           "--rows must be a positive whole number of records"),)


def in_options(message: str) -> str:
    """Say a synthesiser's parameters in a message as the command's options.

    Examples
    --------
    >>> in_options("The 'n_marginals' parameter of AttributePrivateRAP must")
    '--marginals must'
    """
    if " parameter of " in message:
        # Only then: the names are read from the synthesisers' classes,
        # whose import (scikit-learn's) an error of another command skips.
        from skattr.synth import SYNTHESIZERS

        for cls in SYNTHESIZERS.values():
            for option in cls.command_line:
                message = message.replace(
                    f"The '{option.name}' parameter of {cls.__name__}",
                    option.option)
    for words, option in _WORDS:
        message = message.replace(words, option)
    return message


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
    params = _given(args)
    if getattr(args, "progress", None) is not None:
        params["progress"] = args.progress
    # Both files' temporary files are made before the fit: a path that
    # cannot be written is refused before any noise is drawn.
    kept = Output(args.save, option="--save", lost=(
        f"The synthetic table was written to {args.output}; the synthesiser "
        "is not kept (fitting it again would spend more privacy)."))
    with Output(args.output) as output, kept as saved:
        result = synthesize(
            data, secret=secret, method=args.method, categories=categories,
            bins=bins, reference=reference, columns=args.columns, n=args.rows,
            random_state=args.random_state, **params)
        output.write(result, writer=lambda r, path, name: _write_table(
            r.data, path, name), shown=lambda r: print(r.summary()))
        saved.write(result, writer=_write_synthesizer,
                    shown=lambda r: print(r.summary()))
    print(result.summary())
    print(f"wrote {len(result.data)} records to {args.output}")
    return 0
