"""Interleaved best-of-k timing and the result table shared by the benchmarks."""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable

from skattr.utils._progress import progress_bar


def best_times(functions: dict[str, Callable[[], object]],
               repeats: int, *, progress="auto") -> dict[str, float]:
    """Best wall time in seconds of each function over ``repeats`` rounds.

    Every function runs once untimed first (imports, caches, the release plan,
    first-touch page faults). Each round then times every function once, in turn,
    so a slow spell of a shared machine hits baseline and skattr alike. The
    minimum is the least noisy estimate of the cost itself. The garbage
    collector is off while timing, as in ``timeit``. ``progress`` ("auto",
    True or False) shows a bar over the runs, advanced outside the timed
    spans (:func:`skattr.utils._progress.progress_bar`).
    """
    bar = progress_bar(progress, total=len(functions) * (repeats + 1),
                       desc="timing", unit="run", leave=True)
    for function in functions.values():
        function()
        bar.update(1)
    best = dict.fromkeys(functions, math.inf)
    collecting = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for name, function in functions.items():
                start = time.perf_counter()
                function()
                best[name] = min(best[name], time.perf_counter() - start)
                bar.update(1)
    finally:
        bar.close()
        if collecting:
            gc.enable()
    return best


def print_table(title: str, rows: list[dict], target: float) -> bool:
    """Print one line per measurement with its ratio; return True if all pass.

    Each row holds ``case``, ``baseline`` and ``skattr`` (seconds) and
    ``ratio``.
    """
    print(title)
    header = f"{'case':<28} {'baseline s':>11} {'skattr s':>10} {'ratio':>7}  result"
    print(header)
    print("-" * len(header))
    passed = True
    for row in rows:
        ok = row["ratio"] <= target
        passed &= ok
        print(f"{row['case']:<28} {row['baseline']:>11.4f} {row['skattr']:>10.4f} "
              f"{row['ratio']:>7.2f}  {'PASS' if ok else 'FAIL'} (<= {target:g})")
    return passed
