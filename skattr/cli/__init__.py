"""The ``skattr`` command line: ``demo``, ``release``, ``describe``, ``synthesize``."""

from __future__ import annotations

import argparse
import difflib
import functools
import json
import math
import os
import re
import sys
import textwrap
import warnings

import pandas as pd

import skattr  # df.attrpriv, registered by importing skattr
from skattr._kinds import kind_of, kinds
from skattr._release import Release
from skattr._secret import Secret
from skattr._version import __version__
from skattr.cli._common import (
    DROPNA_REVEALS,
    Output,
    add_secret_options,
    as_bounds,
    bounds_option,
    check_columns,
    drop_missing,
    pairs,
    read_key_file,
    read_secret,
    read_table,
    seed,
    typed_value,
)
from skattr.cli._describe import add_describe
from skattr.cli._synthesize import PRIVACY_HELP, add_synthesize, in_options
from skattr.exceptions import InvalidParameterError, SkattrError

__all__ = ["main"]


# The demo's hospital: what it publishes, in which units.
_DEMO_PATIENTS = 200
_DEMO_REFERENCE = 2000
_DEMO_COLUMNS = {"weight": "average weight (lb)",
                 "blood_pressure": "average blood pressure (mmHg)"}


def _demo(args) -> int:
    """Release two averages of a synthetic hospital, explained for anyone."""
    from skattr.datasets import make_hospital

    seed = args.random_state
    data = make_hospital(_DEMO_PATIENTS, random_state=seed)
    reference = make_hospital(_DEMO_REFERENCE, random_state=seed + 1)
    secret = Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    # The default path, no model assumed: every law within the reference's
    # confidence bands.
    model = dict(secret=secret, reference=reference)
    # How much the raw average reveals, under the normal law this synthetic
    # hospital's columns follow by construction (the bands bound no finite
    # leakage of a release without noise).
    raw = data.attrpriv.leakage(["blood_pressure"], law="gaussian", **model)
    print(f"""skattr demo
===========
A hospital wants to publish the average weight and blood pressure of its
{_DEMO_PATIENTS} patients without revealing the share of women among them: is
it 40% or 60%? That share is a property of the whole dataset, not of any one
patient. Published as they are, the averages would give it away: the average
blood pressure alone could change an observer's odds of 40% against 60% by a
factor of e^{raw:.0f}. skattr adds just enough random noise to cap that factor.
""")
    ledger = data.attrpriv.ledger(budget=(3.0, 1e-3), random_state=seed, **model)
    releases = {column: ledger.mean([column], epsilon=1.0)
                for column in _DEMO_COLUMNS}
    width = max(len(label) for label in _DEMO_COLUMNS.values())
    print(f"{'':{width}}  {'true value':>10}  {'released':>9}  "
          f"{'off by, on average':>18}  {'95% within':>10}")
    for column, rel in releases.items():
        half = rel.conf_int(0.05)
        spread = float(half["upper"].iloc[0] - rel.values.iloc[0])
        print(f"{_DEMO_COLUMNS[column]:{width}}  {data[column].mean():10.2f}  "
              f"{rel.values.iloc[0]:9.2f}  {'+/- ' + f'{rel.expected_error:.1f}':>18}"
              f"  {'+/- ' + f'{spread:.1f}':>10}")
    spent, delta = ledger.spent
    budget = ledger.budget[0]
    print(f"""
What this guarantees: whatever an observer believed about whether 40% or 60%
of the patients are women, seeing one of these releases changes their odds by
at most a factor e^1 = {math.e:.1f} (epsilon = 1), except with probability
{delta:g} (delta). Both releases went through one ledger, which certifies
releases of the same patients together: both at once change the odds by at
most e^{spent:.2f} = {math.exp(spent):.1f}. The ledger refuses, before drawing any
noise, a release that would take them past e^{budget:g} = {math.exp(budget):.1f}.

How this differs from differential privacy: differential privacy hides each
patient's record; it does not hide the share of women, which any accurate
average reveals. Attribute privacy hides such properties of the whole data.

What the guarantee rests on: {_DEMO_REFERENCE:,} other (public) patients from
the same population show how weight and blood pressure vary with gender.
They are a sample, so skattr allows for every population they could have
come from (all but a 0.001 chance): the guarantee holds for the population,
not only for these patients. Nothing else is assumed.

Next:
  1. Plan a release of your own CSV file, spending nothing:
       skattr release patients.csv --columns weight --secret-column gender \\
         --secret-value female --pairs 0.4,0.6 --reference public.csv --plan
  2. From Python: df.attrpriv.mean(["weight"], secret=..., reference=...);
     the README shows a complete example.
  3. Medians, counts, the papers' mechanisms and attacks on them: the user
     guide and the examples in the documentation (docs/).

The noise here comes from a fixed seed (--seed {seed}), so the demo prints
the same every time; real releases draw it from the operating system.""")
    return 0


def _print_release(rel: Release, short: bool = False) -> None:
    if not short:
        print(rel.summary())
        return
    values = ", ".join(f"{k} = {v:.3f}" for k, v in rel.values.items())
    noise = ("no noise (inherent variance suffices)" if rel.noiseless
             else f"noise sd {float(rel.noise_std[0]):.4g}")
    print(f"  [{rel.calibration:8s}] mean {values:28s} ({rel.epsilon:g}, "
          f"{rel.delta:g})-attribute private; sensitivity {rel.sensitivity:.4g}; "
          f"{noise}")


def _release(args) -> int:

    data = read_table(args.data)
    if args.reference == "self":
        reference = "self"
    else:
        reference = read_table(args.reference)
    if args.budget is not None and args.ledger is None:
        raise SkattrError("--budget is the budget of a ledger: give --ledger "
                          "FILE with it (the file is created, then kept).")
    if args.anchor is not None and args.ledger is None:
        raise SkattrError("--anchor guards a ledger's store: give --ledger "
                          "FILE with it.")
    if args.ledger_key_file is not None and args.ledger is None:
        raise SkattrError("--ledger-key-file keys a ledger's store: give "
                          "--ledger FILE with it.")
    if args.epsilon == "remaining" and args.ledger is None:
        raise SkattrError("--epsilon remaining is the largest epsilon a "
                          "ledger's budget leaves: give --ledger FILE with it "
                          "(or a number).")
    if args.noise is not None and args.ledger is None:
        raise SkattrError("--noise is the noise of a ledger's releases: give "
                          "--ledger FILE with it (or --mechanism for this "
                          "release alone: apgm is Gaussian noise, "
                          "approx-wasserstein Laplace).")
    check_columns(args.columns, data, args.data, "--columns")
    if isinstance(reference, pd.DataFrame):
        check_columns(args.columns, reference, f"the reference {args.reference}",
                      "--columns")
        check_columns([args.secret_column], reference,
                      f"the reference {args.reference}", "--secret-column")
    secret = read_secret(args, data)
    dropped = None
    if args.dropna:
        data, reference, dropped = drop_missing(
            args.columns, args.secret_column, data, reference)
    kind = kind_of(args.statistic)
    if args.value is not None and kind.takes_value():
        # The counted value, read as its column's type too (a 0/1 column's
        # "1" is the number 1, which the text "1" would never equal).
        missing = [c for c in args.columns if c not in data.columns]
        if not missing:
            args.value = typed_value(data[args.columns[0]], args.value,
                                      args.columns[0], option="--value")
    kwargs = dict(secret=secret, reference=reference, epsilon=args.epsilon,
                  mechanism=args.mechanism or "auto",
                  random_state=args.random_state)
    # Options left unset are not passed: the mechanism's own default applies,
    # and a parameter it does not take is refused only when asked for.
    law = args.law
    if args.covariances == "assume-equal" and law != "gaussian":
        raise InvalidParameterError(
            "--covariances assume-equal is an option of the Gaussian law of the "
            "statistic; pass it with --law gaussian (the exact laws have no "
            "covariances to equalise).")
    if args.covariances is not None and law == "gaussian":
        law = skattr.laws.AssumeGaussian(covariances=args.covariances)
    given = {"delta": args.delta, "calibration": args.calibration,
             "allocate": args.allocate, "privacy": args.privacy,
             "law": law, "group_size": args.group_size,
             "bounds": as_bounds(args.bounds),
             "progress": args.progress, "secure": args.secure or None}
    kwargs.update({k: v for k, v in given.items() if v is not None})
    if kwargs.get("bounds") == "none":
        kwargs["bounds"] = None         # no clipping, asked for
    if args.max_error_ratio is not None:
        kwargs["max_error_ratio"] = (None if args.max_error_ratio == "none"
                                     else args.max_error_ratio)
    if args.theta is not None:
        kwargs["theta"] = (skattr.theta.Resample() if args.theta == "resample"
                           else args.theta)
    statistic = (skattr.Statistic.quantile(args.columns, args.q)
                 if kind.takes_levels() else args.statistic)
    writer = (_write if dropped is None
              else functools.partial(_write, dropped=dropped))
    if args.ledger is not None:
        return _ledger_release(args, data, kwargs, statistic, writer)
    verb = getattr(data.attrpriv, args.statistic)
    if args.plan:
        print(data.attrpriv.plan(args.columns, statistic=statistic,
                                 value=args.value, **kwargs).summary())
        return 0
    with Output(args.output) as output:
        rel = _call_verb(verb, args, kwargs)
        output.write(rel, writer, _print_release)
    _print_release(rel)
    return 0


def _call_verb(verb, args, kwargs) -> Release:
    """Call the accessor's or the ledger's verb with the statistic's arguments."""
    kind = kind_of(args.statistic)
    if kind.takes_value():
        return verb(args.columns, args.value, **kwargs)
    if kind.takes_levels():
        return verb(args.columns, args.q, **kwargs)
    return verb(args.columns, **kwargs)


def _ledger_release(args, data, kwargs, statistic, writer) -> int:
    """Release through the ledger kept in ``args.ledger`` (created if absent)."""
    from skattr._ledger import Ledger

    path = args.ledger
    opening = {k: kwargs.pop(k) for k in ("secret", "reference", "theta", "law",
                                           "bounds", "random_state")
               if k in kwargs}
    if kwargs.get("mechanism") == "auto" and args.mechanism is None:
        del kwargs["mechanism"]         # the ledger's own default
    # A JSON file (written by skattr 0.4's --ledger) is read and written
    # back whole; any other file is a store (Ledger.open), where a release
    # is one transaction, safe against a crash and against other processes.
    kept_as_json = os.path.exists(path) and _holds_json(path)
    # An anchor or a key (its file, or SKATTR_LEDGER_KEY) is a store's: a
    # JSON ledger has neither HMAC nor anchor, and in their place may be a
    # store replaced by someone without the key, with fewer releases (issue
    # 42: a true 3.0 of a 2.0 budget). Refused; the message never suggests
    # dropping the key or the anchor, which would accept that file.
    given = [option for option, value in (
        ("--anchor", args.anchor), ("--ledger-key-file", args.ledger_key_file),
        ("SKATTR_LEDGER_KEY", os.environ.get("SKATTR_LEDGER_KEY") or None))
        if value is not None]
    if kept_as_json and given:
        raise SkattrError(
            f"{path} is a JSON ledger, yet {' and '.join(given)} "
            f"{'is' if len(given) == 1 else 'are'} given: a key or an anchor "
            "guards a store, and a JSON ledger has neither an HMAC nor an "
            "anchor's check. If "
            f"{path} was a store, it was replaced (perhaps by someone without "
            "the key, with fewer releases): restore it from a copy you trust. "
            "A JSON ledger of your own is moved into a store with "
            "Ledger.from_json(...).store(new_path, key=..., anchor=...). "
            "Nothing was released.")
    # The key from its file, else SKATTR_LEDGER_KEY (Ledger.open reads it).
    key = (None if args.ledger_key_file is None
           else read_key_file(args.ledger_key_file))
    # An empty file holds no ledger: a store whose creation was interrupted
    # before its first transaction (it is initialised, not refused).
    if os.path.exists(path) and os.path.getsize(path) > 0:
        if kept_as_json:
            with open(path, encoding="utf-8") as file:
                text = file.read()
            ledger = Ledger.from_json(
                text, data, reference=opening["reference"],
                random_state=opening.get("random_state"))
        else:
            ledger = Ledger.open(path, data, reference=opening["reference"],
                                 random_state=opening.get("random_state"),
                                 anchor=args.anchor, key=key)
        if ("bounds" in opening and opening["bounds"] != ledger.bounds
                and not isinstance(opening["bounds"], str)):
            # Ranges for columns the ledger has not released yet: this
            # release's (the ledger refuses them for a column released).
            kwargs["bounds"] = opening.pop("bounds")
        if args.budget is not None and tuple(
                float(x) for x in args.budget) != tuple(ledger.budget):
            raise SkattrError(
                f"{path} already holds a ledger with the budget "
                f"{ledger.budget[0]:g},{ledger.budget[1]:g}; drop --budget "
                "(a budget is set once, when the ledger is created), or give "
                "another --ledger file.")
        if args.noise not in (None, "auto", ledger.noise):
            # "auto" (the default) takes the stored noise, as Ledger.open.
            raise SkattrError(
                f"{path} was opened with noise={ledger.noise!r}, which every "
                "release through it keeps; drop --noise (or give --mechanism "
                "for this release), or give another --ledger file.")
        for key, option in (("law", "--law"), ("theta", "--theta"),
                            ("bounds", "--bounds")):
            if key in opening and opening[key] != getattr(ledger, key):
                raise SkattrError(
                    f"{path} was opened with {key}={getattr(ledger, key)!r}, "
                    f"which every release through it keeps; drop {option}, "
                    "or give another --ledger file.")
        if ledger.secret != opening["secret"]:
            raise SkattrError(
                f"{path} hides {ledger.secret.label}, not "
                f"{opening['secret'].label}: a ledger guards one secret; give "
                "its secret, or another --ledger file.")
    else:
        if args.budget is None:
            raise SkattrError(
                f"{path} holds no ledger yet: give --budget EPSILON,DELTA to "
                "create it (the joint guarantee its releases may never exceed "
                "together).")
        ledger = Ledger.open(path, data, budget=args.budget,
                             anchor=args.anchor, key=key,
                             noise=args.noise or "auto", **opening)
    if args.plan:
        plan, joint = ledger.plan(args.columns, statistic=statistic,
                                  value=args.value, **kwargs)
        print(plan.summary())
        print(f"\nThrough {path}: the joint epsilon would be {joint:.4g} "
              f"(budget {ledger.budget[0]:g}); nothing was released.")
        return 0
    verb = getattr(ledger, args.statistic)
    # In a store the release is committed before the verb returns; a JSON
    # file is written before anything is printed, atomically: a release is
    # never shown without being counted.
    with Output(args.output) as output:
        rel = _call_verb(verb, args, kwargs)
        if kept_as_json:
            partial = f"{path}.partial"
            with open(partial, "w", encoding="utf-8") as file:
                file.write(ledger.to_json())
            os.replace(partial, path)
        output.write(rel, writer, _print_release)
    _print_release(rel)
    print("", *textwrap.wrap(f"The ledger {path}: {ledger.in_plain_words()}",
                             88), sep="\n")
    return 0


def _holds_json(path: str) -> bool:
    """Whether a --ledger file is a JSON ledger (not a store)."""
    with open(path, "rb") as file:
        return file.read(64).lstrip()[:1] == b"{"


def _write(rel: Release, path: str, name: str, dropped=None) -> None:
    """Write the values and the certificate: JSON (``name`` ``.json``) or CSV.

    ``dropped``: what ``--dropna`` dropped, written beside them (JSON: its
    record under ``"dropna"``; CSV: columns ``n`` and ``records_dropped``).
    """
    if name.lower().endswith(".json"):
        record = rel.to_dict()
        if dropped is not None:
            record["dropna"] = dropped
        with open(path, "w", encoding="utf-8") as out:
            json.dump(record, out, indent=2)
            out.write("\n")
    else:
        table = rel.to_frame()
        if dropped is not None:
            table = table.assign(n=dropped["n"],
                                 records_dropped=dropped["records_dropped"])
        table.to_csv(path, index=False)


# The library's messages name keyword arguments (law='gaussian'); on the command
# line they are options (--law gaussian).
_KEYWORD = re.compile(r"\b(law|theta|mechanism|privacy|calibration|covariances|"
                      r"delta|epsilon|reference|allocate|noise)='([^']*)'")
_RATIO = re.compile(r"\bmax_error_ratio=(None|[0-9.]+)")
# A parameter error names the verb the command called (df.attrpriv.mean,
# ledger.mean): on the command line, the option.
_PARAMETER = re.compile(r"The '(epsilon|delta|mechanism|privacy|calibration|"
                        r"bounds|group_size|theta|law|covariances|"
                        r"max_error_ratio|random_state|q|value|columns|"
                        r"secure|progress|budget|allocate)' parameter of "
                        r"(?:(?:df\.attrpriv|ledger)\.\w+|Ledger\b)"
                        r"(?: \(mechanism='([^']*)'\))?")
_MODEL = re.compile(r"\blaw=AssumeGaussian\(covariances='([^']*)'\)")
# bounds={'weight': (70, 260), 'los': (0, 11)}: --bounds weight=70,260 los=0,11.
_BOUNDS = re.compile(r"\bbounds=\{((?:'[^']*': \([^()]*\)(?:, )?)+)\}")
_BOUND = re.compile(r"'([^']*)': \(([^,()]*), ([^,()]*)\)")
_POLICY = re.compile(r"\bbounds='(robust|reference)'")
#: A keyword named alone ("drop allocate="): its option.
_BARE = re.compile(r"\b([a-z][a-z_]*)=(?=[\s,.;)]|$)")


_DOMAIN = ((re.compile(r"\bbins=\{'([^']*)': \[edges\]\}"), r"--bins \1=E1,E2,..."),
           (re.compile(r"\bbins=\{column: \[edges\]\}"), "--bins COLUMN=E1,E2,..."),
           (re.compile(r"\bcategories=\{column: \[\.\.\.\]\}"),
            "--categories COLUMN=A,B,..."),
           (re.compile(r"\breference= \(public data\)"),
            "--reference FILE (public data)"),
           (re.compile(r"\bvalue=<category> or a predicate such as "
                       r"value=lambda s: s > 0"),
            "--value CATEGORY (the records holding it count)"))


def _as_options(message: str) -> str:
    """Say the library's keyword hints as this command's options.

    Examples
    --------
    >>> _as_options("pass law='gaussian', or mechanism='approx-wasserstein'")
    'pass --law gaussian, or --mechanism approx-wasserstein'
    >>> _as_options("or law=AssumeGaussian(covariances='assume-equal') to take")
    'or --law gaussian --covariances assume-equal to take'
    >>> _as_options("bin it with bins={'age': [edges]}")
    'bin it with --bins age=E1,E2,...'
    >>> _as_options("The 'k' parameter of AttributePrivateRAP must be")
    '--k must be'
    >>> _as_options("The 'group_size' parameter of df.attrpriv.mean must be")
    '--group-size must be'
    >>> _as_options("The 'delta' parameter of ledger.mean (mechanism='apgm') "
    ...             "must be")
    '--delta (with --mechanism apgm) must be'
    >>> _as_options("e.g. bounds={'weight': (70, 260), 'los': (0, 11)}, or "
    ...             "pass bounds='reference'")
    'e.g. --bounds weight=70,260 los=0,11, or pass --bounds reference'
    >>> _as_options("allocate= shares the noise; drop allocate=.")
    '--allocate shares the noise; drop --allocate.'
    """
    message = _PARAMETER.sub(
        lambda m: "--" + m.group(1).replace("_", "-") + (
            f" (with --mechanism {m.group(2)})" if m.group(2) else ""),
        message)
    for pattern, option in _DOMAIN:
        message = pattern.sub(option, message)
    message = in_options(message)
    message = _MODEL.sub(lambda m: f"--law gaussian --covariances {m.group(1)}",
                         message)
    message = _BOUNDS.sub(lambda m: "--bounds " + " ".join(
        f"{c}={lo},{hi}" for c, lo, hi in _BOUND.findall(m.group(1))), message)
    message = _POLICY.sub(r"--bounds \1", message)
    message = _RATIO.sub(lambda m: "--max-error-ratio "
                         + ("none" if m.group(1) == "None" else m.group(1)),
                         message)
    message = _KEYWORD.sub(lambda m: f"--{m.group(1)} {m.group(2)}", message)
    return _BARE.sub(lambda m: "--" + m.group(1).replace("_", "-"), message)


def _epsilon(text: str):
    """--epsilon: a number, or 'remaining' (a ledger's, checked with --ledger)."""
    if text == "remaining":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a number, or 'remaining' with --ledger; got {text!r}") from None


def _ratio(text: str):
    """Parse --max-error-ratio: a number >= 1, or "none"."""
    if text.lower() == "none":
        return "none"
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number >= 1 or 'none', got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``skattr`` command."""
    parser = _Parser(
        prog="skattr",
        description="Release statistics while hiding global properties of the data "
                    "(attribute and distribution privacy).")
    parser.add_argument("--version", action="version", version=f"skattr {__version__}")
    sub = parser.add_subparsers(dest="command", required=True,
                                parser_class=_Parser)
    parser.commands = sub.choices

    demo = sub.add_parser("demo", help="run the hospital example of Zhang et al.")
    demo.add_argument("--random-state", "--seed", dest="random_state",
                      type=seed, default=0,
                      help="seed of the demo's data and noise (default 0)")
    demo.set_defaults(run=_demo)

    rel = sub.add_parser(
        "release", help="release statistics of a CSV file with a certificate",
        description="Release the mean, sum, count or proportion of columns of a CSV "
                    "file while hiding a global property of a sensitive column. "
                    "Prints the noisy values and their (epsilon, delta) guarantee.",
        epilog="example: skattr release patients.csv --columns weight "
               "--secret-column gender --secret-value female --pairs 0.4,0.6 "
               "--reference reference.csv --epsilon 1 --delta 1e-3")
    rel.add_argument("data", help="CSV file of the private data (with a "
                                  "header), or a Parquet file (.parquet)")
    rel.add_argument("--statistic", default="mean",
                     choices=[kind.name for kind in kinds() if kind.verb],
                     help="what to release (default: mean); one median, "
                          "quantile or std goes through the Wasserstein "
                          "mechanisms, several at once through them or apgm "
                          "(the least expected error)")
    rel.add_argument("--q", type=float, nargs="+", default=[0.5],
                     help="for quantile: the level(s) in [0, 1] (default: 0.5)")
    rel.add_argument("--columns", nargs="+", required=True,
                     help="columns to release")
    rel.add_argument("--value", default=None,
                     help="for count/proportion: the category counted")
    add_secret_options(rel)
    rel.add_argument("--secret-mean", action="store_true",
                     help="hide the mean of the sensitive column instead of a "
                          "proportion")
    rel.add_argument("--reference", required=True,
                     help="CSV (or Parquet) file of public reference data, or "
                          "'self' to fit on the private data (weaker, warns)")
    rel.add_argument("--ledger", default=None, metavar="FILE",
                     help="release through the ledger kept in FILE (a "
                          "store: one SQLite file, safe against crashes and "
                          "other processes; created with --budget): "
                          "certified jointly with its earlier releases, "
                          "refused before any noise if over its budget")
    rel.add_argument("--anchor", default=None, metavar="FILE",
                     help="with a --ledger store: a small file kept apart "
                          "from it that records the most releases it has "
                          "held, so that an older copy of the store is "
                          "refused (pass the same file every time)")
    rel.add_argument("--ledger-key-file", default=None, metavar="FILE",
                     help="with a --ledger store: the file holding its HMAC "
                          "key (16 bytes or more, readable by you only; "
                          "default: the variable SKATTR_LEDGER_KEY). A store "
                          "written with a key is opened with it only")
    rel.add_argument("--budget", type=pairs, default=None,
                     metavar="EPSILON,DELTA",
                     help="the budget of a new --ledger FILE, e.g. 3,1e-3")
    rel.add_argument("--noise", default=None,
                     choices=["auto", "laplace", "gaussian"],
                     help="the noise of every release through a new --ledger "
                          "FILE that gives no --mechanism: gaussian composes "
                          "better over many releases (five or more, or small "
                          "epsilons each), laplace is the less noisy for a "
                          "few (default: auto, Laplace)")
    rel.add_argument("--epsilon", type=_epsilon, default=1.0,
                     metavar="EPSILON",
                     help="the release's own epsilon; with --ledger, "
                          "'remaining' takes the largest its budget leaves")
    rel.add_argument("--delta", type=float, default=None,
                     help="default: the mechanism's (1e-3; Laplace noise "
                          "certifies 0 and takes none)")
    rel.add_argument("--mechanism", default=None, choices=_MechanismNames(),
                     metavar="NAME",
                     help="a mechanism of skattr.mechanisms.MECHANISMS, such as "
                          "apgm, approx-wasserstein or wasserstein (default: "
                          "auto, the certified one with least expected error; "
                          "an unknown name lists them all)")
    rel.add_argument("--privacy", default=None,
                     choices=["dataset", "distributional"],
                     help=PRIVACY_HELP + "; default: dataset")
    rel.add_argument("--dropna", action="store_true",
                     help="drop the records missing a value in the released "
                          "columns or the secret's (as pandas' dropna), count "
                          "n again and print it; the release and --output "
                          "record it. " + DROPNA_REVEALS)
    rel.add_argument("--calibration", default=None,
                     choices=["analytic", "classic"],
                     help="Gaussian calibration (default: analytic)")
    rel.add_argument("--allocate", default=None, choices=["error", "relative"],
                     help="how Gaussian noise on several values is shared: "
                          "'error' (the default: the least expected squared "
                          "error) or 'relative' (each value's noise in "
                          "proportion to its value in the reference)")
    rel.add_argument("--bounds", type=bounds_option, nargs="+", default=None,
                     metavar="[COLUMN=]LO,HI",
                     help="the range each released column is clipped to: "
                          "declared LO,HI or COLUMN=LO,HI (required by the "
                          "differential-privacy baselines dp-*, group-dp-*), "
                          "'robust' (the reference data's range within its "
                          "far-out fences, the default of the other "
                          "mechanisms), 'reference' (its whole range) or "
                          "'none'")
    rel.add_argument("--group-size", type=int, default=None,
                     help="for group-dp-*: records a neighbouring dataset may "
                          "replace (default: n)")
    rel.add_argument("--theta", default=None,
                     choices=["moments", "gaussian", "resample"],
                     help="how Theta is fit on the reference data (default: the "
                          "mechanism's; resample: datasets drawn from it)")
    rel.add_argument("--law", default=None, choices=["auto", "exact", "gaussian"],
                     help="the law of the statistic the noise is certified "
                          "against (default: auto, the exact law where it exists; "
                          "gaussian is an assumption the release records)")
    rel.add_argument("--covariances", default=None,
                     choices=["certify", "assume-equal"],
                     help="certify the two secrets' unequal covariances "
                          "(default) or take the papers' equal-covariance "
                          "assumption, which the release records")
    rel.add_argument("--max-error-ratio", default=None, type=_ratio,
                     metavar="RATIO|none",
                     help="refuse a Gaussian mechanism whose noise certifies "
                          "unequal covariances only when scaled beyond RATIO "
                          "times optimal's expected error (default 10); none "
                          "releases it anyway")
    rel.add_argument("--random-state", "--seed", dest="random_state",
                     type=seed, default=None,
                     help="seed the noise (experiments only: anyone who knows "
                          "it can remove the noise)")
    rel.add_argument("--plan", action="store_true",
                     help="print the noise and expected error, release nothing")
    rel.add_argument("--secure", action="store_true",
                     help="draw exact discrete Laplace noise on a power-of-two "
                          "grid instead of floating-point noise (Laplace "
                          "mechanisms only; closes Mironov's floating-point "
                          "attack)")
    rel.add_argument("--progress", action=argparse.BooleanOptionalAction,
                     default=None,
                     help="show progress bars on standard error for steps "
                          "that take seconds, such as the datasets drawn for "
                          "median, quantile and std (default: only when it "
                          "is a terminal and tqdm is installed; --progress "
                          'needs pip install "skattr[progress]")')
    rel.add_argument("--output", default=None,
                     help="also write the values and the certificate: JSON "
                          "when the name ends in .json, otherwise CSV (one row "
                          "per statistic)")
    rel.set_defaults(run=_release)
    add_describe(sub)
    add_synthesize(sub)
    return parser


class _MechanismNames:
    """The ``--mechanism`` choices, read from the registry only when checked.

    Building the parser (and so ``--help``) imports no mechanism.
    """

    def _names(self) -> list:
        from skattr.mechanisms import MECHANISMS

        return MECHANISMS.choices()

    def __contains__(self, name) -> bool:
        return name in self._names()

    def __iter__(self):
        return iter(self._names())


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors name the closest valid choice.

    ``fill(parser, argv)``, if given, adds the arguments each time the
    parser is used, to a fresh copy of it, for the words parsed (a command
    whose options are read from the library and depend on one of them, as
    ``skattr synthesize --method``: building the parser, and ``skattr
    --help``, import none of it; parsing twice reads each one's own).
    """

    def __init__(self, *args, fill=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._fill = fill
        self._made = (args, kwargs)

    def _filled(self, argv=None) -> _Parser:
        """Return the parser with the arguments for ``argv`` (itself if fixed)."""
        if self._fill is None:
            return self
        args, kwargs = self._made
        parser = type(self)(*args, **kwargs)
        parser._defaults.update(self._defaults)
        self._fill(parser, argv)
        return parser

    def parse_known_args(self, args=None, namespace=None):
        parser = self._filled(sys.argv[1:] if args is None else args)
        if parser is not self:
            return parser.parse_known_args(args, namespace)
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        parser = self._filled()
        return (super().format_help() if parser is self
                else parser.format_help())

    def format_usage(self) -> str:
        parser = self._filled()
        return (super().format_usage() if parser is self
                else parser.format_usage())

    def error(self, message: str):
        found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)",
                          message)
        if found:
            close = difflib.get_close_matches(
                found.group(1), re.findall(r"'([^']*)'", found.group(2)), n=1)
            if close:
                message += f". Did you mean {close[0]!r}?"
        super().error(message)

    def unrecognized(self, extra: list) -> None:
        """Refuse options this command does not take, naming the closest."""
        known = [o for action in self._actions for o in action.option_strings
                 if o.startswith("--")]
        hints = []
        for text in extra:
            name = text.split("=", 1)[0]
            close = (difflib.get_close_matches(name, known, n=1, cutoff=0.7)
                     if name.startswith("-") else [])
            if close:
                hints.append(f" Did you mean {close[0]} for {name}?")
        self.error(f"unrecognized arguments: {' '.join(extra)}."
                   + "".join(hints) + f" See skattr {self.prog.split()[-1]} "
                   "--help.")


def _translated(message: str, args) -> str:
    """Return the library's message in the command's words (its options)."""
    message = _as_options(message)
    if (args.command in ("release", "describe") and not args.dropna
            and "NaN" in message and ("private data" in message
                                      or "reference data" in message)):
        message += (" Or pass --dropna to drop the records that miss a value "
                    "(n is counted again and printed; see skattr "
                    f"{args.command} --help for what that reveals).")
    return message


def _show_warning(message, category, filename, lineno, file=None, line=None,
                  *, args) -> None:
    """Print a warning as ``skattr: warning: ...`` in the command's words."""
    print(f"skattr: warning: {_translated(str(message), args)}",
          file=sys.stderr if file is None else file)


def main(argv=None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.commands[args.command].unrecognized(extra)
    try:
        with warnings.catch_warnings():
            # A warning reads as the errors do, in the command's options.
            warnings.showwarning = functools.partial(_show_warning, args=args)
            return args.run(args)
    except BrokenPipeError:
        # The reader went away (e.g. `skattr demo | head`): stop quietly.
        sys.stderr.close()
        return 0
    except (SkattrError, OSError, KeyError, pd.errors.EmptyDataError,
            pd.errors.ParserError, UnicodeDecodeError) as exc:
        print(f"skattr: error: {_translated(str(exc), args)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
