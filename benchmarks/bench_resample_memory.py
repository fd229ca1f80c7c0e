"""Peak memory and time of a release whose law the resampling Theta draws.

The issue's case: a custom ``agg`` (here a 10% trimmed mean) released by the
Approximate Wasserstein Mechanism on n = 3,000 private rows with 5,000
reference rows. Its law is bounded from about 65,000 drawn datasets of 3,000
records per property value. Before, each law drew all its datasets at once
(an (m, n) array of row positions and its temporaries: gigabytes); after,
``ResampledLaws.drawn_law`` draws and evaluates them a chunk of
``CHUNK_POSITIONS`` row positions at a time (``iter_subsets``), the same
datasets from the same random stream. The "before" is the former
``drawn_law``, restated below and patched in for its runs, so both are
measured in one process, on one machine, as a ratio.

Peak memory is measured by ``tracemalloc`` (every NumPy buffer is traced),
time on a separate untraced run. The resident set's peak is read after the
"after" runs and again after the "before" runs: the process's high-water
mark, so the second reading is the "before" peak only because it is larger.

Run ``python benchmarks/bench_resample_memory.py --help`` for the options;
the exit code is 1 if the chunked release's traced peak exceeds
``--limit-mb`` (1,000 MB) or the two releases differ.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from unittest import mock

import numpy as np
import pandas as pd

import skattr
from skattr._random import check_random_state
from skattr.laws._draws import draw_subsets
from skattr.laws._resampled import ResampledLaws
from skattr.theta import Resample

STATISTICS = {
    "trimmed-mean": lambda: skattr.Statistic.trimmed_mean("age", 0.1),
    "std": lambda: skattr.Statistic.std("age"),
    # A Python callable: one call per drawn dataset (10,000 per value).
    "function": lambda: skattr.Statistic.function(
        lambda d: d["age"].quantile(0.9) - d["age"].quantile(0.1),
        names=["age"], columns=["age"]),
}


def drawn_law_at_once(self, a, n, privacy, m, *, bar=None,
                      max_positions=None):
    """The former ``ResampledLaws.drawn_law``: every dataset drawn at once."""
    key = ("drawn", a, n, privacy, m)
    if key not in self._cache:
        rng = check_random_state(
            self.seed, stream=(n, m, round(a * 2**40), privacy == "dataset"))
        ks, pk = self._counts_law(a, n, privacy)
        counts = rng.choice(ks, size=m, p=pk) if ks.size > 1 else np.full(
            m, ks[0])
        rows = draw_subsets(self.inside, self.outside, counts, n, rng,
                            replace=self.replace)
        if self.ordered:
            rows = rng.permuted(rows, axis=1)
        self._cache[key] = self._evaluate(rows)
    if bar is not None:
        bar.update(m)
    return self._cache[key]


def data(n_reference: int, n: int, seed: int = 0):
    """Adult-like reference data (a binary group, ages) and a private sample."""
    rng = np.random.default_rng(seed)
    group = rng.random(n_reference) < 0.5
    reference = pd.DataFrame({"group": group,
                              "age": np.round(rng.normal(38, 12, n_reference)
                                              + 5 * group)})
    return reference, reference.sample(n, random_state=seed + 1)


def release(reference, private, statistic, progress):
    """Release the statistic as the issue did: approx-wasserstein, seeded."""
    secret = skattr.Secret.proportion("group", True, pairs=[(0.4, 0.6)])
    return private.attrpriv.agg(
        statistic, secret=secret, reference=reference,
        mechanism="approx-wasserstein", theta=Resample(random_state=0),
        delta=1e-3, random_state=0, progress=progress)


def measure(run) -> dict:
    """Time one untraced run, then trace a second for its peak."""
    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    tracemalloc.start()
    try:
        result = run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return {"seconds": seconds, "peak_mb": peak / 2**20, "release": result}


def max_rss_mb() -> float:
    """The process's resident-set high-water mark (kilobytes on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv=None) -> int:
    """Measure before and after; print the table; exit 1 on a missed target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=3_000,
                        help="private rows (default 3,000)")
    parser.add_argument("--reference-rows", type=int, default=5_000,
                        help="reference rows (default 5,000)")
    parser.add_argument("--statistic", choices=sorted(STATISTICS),
                        default="trimmed-mean")
    parser.add_argument("--limit-mb", type=float, default=1000.0,
                        help="most traced peak memory the chunked release may "
                             "take (default 1,000 MB)")
    parser.add_argument("--after-only", action="store_true",
                        help="skip the all-at-once release (it needs several "
                             "GB at the default sizes)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction,
                        default="auto",
                        help="progress bars (default: when stderr is a "
                             "terminal)")
    args = parser.parse_args(argv)
    reference, private = data(args.reference_rows, args.n)
    statistic = STATISTICS[args.statistic]()

    def run():
        return release(reference, private, statistic, args.progress)

    after = measure(run)
    rss_after = max_rss_mb()
    before = None
    if not args.after_only:
        with mock.patch.object(ResampledLaws, "drawn_law", drawn_law_at_once):
            before = measure(run)
        rss_before = max_rss_mb()

    rel = after["release"]
    print(f"{args.statistic} of n = {args.n:,} from {args.reference_rows:,} "
          f"reference rows: {rel.mechanism}, W = {rel.sensitivity:.6g}")
    print(f"  {rel.method}")
    header = f"{'':<24} {'time s':>8} {'traced peak MB':>15} {'max RSS MB':>11}"
    print(header)
    print("-" * len(header))
    if before is not None:
        print(f"{'before (all at once)':<24} {before['seconds']:>8.2f} "
              f"{before['peak_mb']:>15.1f} {rss_before:>11.0f}")
    print(f"{'after (chunked)':<24} {after['seconds']:>8.2f} "
          f"{after['peak_mb']:>15.1f} {rss_after:>11.0f}")
    ok = after["peak_mb"] <= args.limit_mb
    if before is not None:
        print(f"{'ratio after / before':<24} "
              f"{after['seconds'] / before['seconds']:>8.2f} "
              f"{after['peak_mb'] / before['peak_mb']:>15.3f} "
              f"{rss_after / rss_before:>11.3f}")
        same = (before["release"].sensitivity == rel.sensitivity
                and before["release"].values.equals(rel.values))
        print(f"same certificate and values: {'PASS' if same else 'FAIL'}")
        ok &= same
    print(f"chunked peak under {args.limit_mb:g} MB: "
          f"{'PASS' if after['peak_mb'] <= args.limit_mb else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
