"""A window secret against one pair: the CPU of each statistic (issue 42).

A secret stated as a window, ``Secret.proportion("gender", "female",
window=0.2, support=(0.4, 0.6))``, hides every pair of shares within 0.2 of
each other in the support: under dataset privacy every pair of the grid k/n,
about 11,000 pairs at n = 750. This script releases each statistic through
``df.attrpriv`` (the default: the reference's confidence bands) under that
window and under its widest pair alone (0.4 vs 0.6), and prints the CPU
seconds of each (``time.process_time``: the machine is shared, so wall-clock
time would measure the load) and the noise each certifies.

Each case runs in a child process with a CPU limit (``--limit``, 300 s by
default): a case that exceeds it is printed as "> limit". Data: the synthetic
hospital (``make_hospital(2000, random_state=0)`` as the reference,
``make_hospital(n, random_state=1)`` as the private table).

    python benchmarks/bench_windows.py
    python benchmarks/bench_windows.py --n 750 --limit 120 --cases median std
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import time

#: The cases: a name, the verb and its keyword arguments.
CASES = {
    "mean": ("mean", {"columns": ["weight"]}),
    "sum": ("sum", {"columns": ["weight"]}),
    "proportion": ("proportion", {"columns": ["weight"],
                                  "value": "__over_150__"}),
    "median": ("median", {"columns": ["weight"]}),
    "quantile 0.25": ("quantile", {"columns": ["weight"], "q": 0.25}),
    "std": ("std", {"columns": ["weight"]}),
    "means of 2 columns": ("mean", {"columns": ["weight", "height"]}),
    "quartiles": ("quantile", {"columns": ["weight"],
                               "q": [0.25, 0.5, 0.75]}),
    "medians of 2 columns": ("median", {"columns": ["weight", "height"]}),
    "stds of 2 columns": ("std", {"columns": ["weight", "height"]}),
    "ledger: mean then median": ("ledger", {}),
}


def _over_150(v):
    return v > 150


def _run(case: str, n: int, window: bool, limit: int, queue) -> None:
    """Release one case in this (child) process; put (seconds, noise)."""
    resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))
    import skattr
    from skattr.datasets import make_hospital

    reference = make_hospital(2000, random_state=0)
    private = make_hospital(n, random_state=1)
    if window:
        secret = skattr.Secret.proportion("gender", "female", window=0.2,
                                          support=(0.4, 0.6))
    else:
        secret = skattr.Secret.proportion("gender", "female",
                                          pairs=[(0.4, 0.6)])
    verb, options = CASES[case]
    options = {k: (_over_150 if v == "__over_150__" else v)
               for k, v in options.items()}
    start = time.process_time()
    if verb == "ledger":
        ledger = private.attrpriv.ledger(secret=secret, reference=reference,
                                         budget=(4.0, 2e-3), random_state=0)
        ledger.mean(["weight"], epsilon=1.0, delta=1e-3)
        release = ledger.median(["weight"], epsilon=1.0, delta=1e-3)
    else:
        release = getattr(private.attrpriv, verb)(
            secret=secret, reference=reference, epsilon=1.0, delta=1e-3,
            random_state=0, **options)
    seconds = time.process_time() - start
    scale = getattr(release.noise_law, "scale", None)
    noise = (float(max(scale)) if hasattr(scale, "__len__") else
             float(scale) if scale is not None else float("nan"))
    queue.put((seconds, noise))


def measure(case: str, n: int, window: bool, limit: int) -> tuple:
    """Return (CPU seconds or None past the limit, the largest noise scale)."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_run, args=(case, n, window, limit, queue))
    child.start()
    child.join()
    if child.exitcode != 0 or queue.empty():
        return None, float("nan")
    return queue.get()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=750)
    parser.add_argument("--limit", type=int, default=300,
                        help="CPU seconds a case may take (default 300)")
    parser.add_argument("--cases", nargs="*", default=list(CASES),
                        choices=list(CASES), metavar="CASE")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    print(f"n = {args.n}; window 0.2 in (0.4, 0.6) against the pair 0.4 vs "
          f"0.6; epsilon 1, delta 1e-3; CPU seconds (time.process_time)")
    print("| statistic | pair CPU s | window CPU s | window / pair | "
          "pair noise | window noise |")
    print("|---|---|---|---|---|---|")
    rows = []
    for case in args.cases:
        pair, pair_noise = measure(case, args.n, False, args.limit)
        window, window_noise = measure(case, args.n, True, args.limit)

        def show(s):
            return f"> {args.limit}" if s is None else f"{s:.2f}"

        ratio = ("" if pair is None or window is None
                 else f"{window / pair:.2f}")
        print(f"| {case} | {show(pair)} | {show(window)} | {ratio} | "
              f"{pair_noise:.4g} | {window_noise:.4g} |", flush=True)
        rows.append(dict(case=case, pair=pair, window=window,
                         pair_noise=pair_noise, window_noise=window_noise))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
