"""Empirical audits: speed of the vectorised audit, and the suite's results.

Speed target: 10^5 releases per side in seconds for the Gaussian family,
reported as a ratio to a baseline that loops ``mechanism.release`` on each
drawn dataset in the same process (``audit(..., mode="release")`` on a few
hundred releases per side, extrapolated linearly to 10^5).

The table: every setting of the audit suite (``tests/audit``, imported from
there so the two never differ), with the certified (epsilon, delta), the
empirical lower bound, and the two positive controls (half the noise; a
wider pair than the mechanism certifies). It is the table of
``docs/audit.md``.

Run: ``python benchmarks/bench_audit.py`` (``--table`` for the table only,
``--speed`` for the timing only).
"""

import argparse
import pathlib
import sys
import time

from _timing import best_times

import skattr
from skattr.audit import audit
from skattr.datasets import make_hospital

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "tests" / "audit"))
import test_audit_suite as suite  # noqa: E402

# The wider pair each family's control is audited on (n/a: the pair audited
# is already the widest the model has).
WIDER = {**dict.fromkeys(suite.GAUSSIAN_FAMILY + suite.LAPLACE_FAMILY
                         + suite.WASSERSTEIN, (0.2, 0.8)),
         "dp-laplace": (0.5, 0.53), "dp-gaussian": (0.5, 0.53),
         "group-dp-laplace": (0.5, 0.6), "group-dp-gaussian": (0.5, 0.6)}


def speed(releases: int, baseline_releases: int, repeats: int) -> None:
    hospital = make_hospital(20_000, random_state=0)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    rows = []
    for name, columns in [("apgm", ["weight", "blood_pressure"]),
                          ("optimal", ["weight", "blood_pressure"]),
                          ("dp-gaussian", None)]:
        if name == "dp-gaussian":
            mech = skattr.mechanisms.DPGaussian(
                query=skattr.Query.proportion("gender", "female"), epsilon=1.0,
                delta=1e-3, random_state=0).fit(hospital)
            kwargs = {"secret": secret, "pair": (0.5, 0.51)}
        else:
            mech = skattr.mechanisms.MECHANISMS[name](
                query=skattr.Query.mean(columns), secret=secret, epsilon=1.0,
                delta=1e-3, law="gaussian", random_state=0).fit(hospital)
            kwargs = {}
        times = best_times({
            "vectorised": lambda mech=mech, kwargs=kwargs: audit(
                mech, hospital, n=100, releases=releases, random_state=0,
                **kwargs),
            "release loop": lambda mech=mech, kwargs=kwargs: audit(
                mech, hospital, n=100, releases=baseline_releases,
                mode="release", random_state=0, **kwargs),
        }, repeats, progress=False)
        loop = times["release loop"] * releases / baseline_releases
        rows.append((name, times["vectorised"], loop))
    print(f"Audit speed: {releases:,} releases per side, n = 100, hospital "
          f"reference of 20,000; baseline: mechanism.release in a loop on "
          f"{baseline_releases} per side, extrapolated")
    print(f"{'mechanism':<14}{'vectorised s':>14}{'loop s (extrap.)':>18}"
          f"{'speed-up':>10}{'releases/s':>13}")
    for name, fast, loop in rows:
        print(f"{name:<14}{fast:>14.2f}{loop:>18.1f}{loop / fast:>9.0f}x"
              f"{2 * releases / fast:>13,.0f}")


def table(releases: int) -> None:
    hospital = make_hospital(20_000, random_state=0)
    gender = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    narrow = skattr.Secret.proportion("gender", "female", pairs=[(0.45, 0.55)])
    print(f"| mechanism | epsilon | delta | certified (epsilon, delta) | "
          f"lower bound | half noise | wider pair |  ({releases:,} releases "
          "per side, 95%)")
    print("|---|---|---|---|---|---|---|")
    start = time.perf_counter()
    for name, epsilon, delta in suite.SETTINGS:
        secret = narrow if name in suite.WASSERSTEIN else gender
        mech, kwargs = suite.build(name, epsilon, delta, hospital, secret)
        result = audit(mech, releases=releases, random_state=1, **kwargs)
        half = audit(mech, releases=releases, random_state=2,
                     noise_scale_factor=0.5, **kwargs)
        cells = [name, f"{epsilon:g}", f"{delta:g}",
                 f"({result.epsilon:.4g}, {result.delta:.3g})",
                 f"{result.epsilon_lower_bound:.3f}"
                 + ("" if result.passed else " FAILED"),
                 f"{half.epsilon_lower_bound:.3f}"
                 + (" flagged" if half.flagged else "")]
        if name in WIDER:
            wide = audit(mech, releases=releases, random_state=3,
                         **dict(kwargs, pair=WIDER[name]))
            cells.append(f"{wide.epsilon_lower_bound:.3f}"
                         + (" flagged" if wide.flagged else "")
                         + f" on {WIDER[name]}")
        else:
            cells.append("n/a")
        print("| " + " | ".join(cells) + " |", flush=True)
    print(f"({len(suite.SETTINGS)} settings, 3 audits each, in "
          f"{time.perf_counter() - start:.0f} s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=100_000,
                        help="releases per side of the timed audit")
    parser.add_argument("--baseline-releases", type=int, default=300,
                        help="releases per side of the release loop")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--table-releases", type=int, default=suite.RELEASES,
                        help="releases per side of the table (the suite's)")
    parser.add_argument("--table", action="store_true", help="the table only")
    parser.add_argument("--speed", action="store_true", help="the timing only")
    args = parser.parse_args()
    if not args.table:
        speed(args.releases, args.baseline_releases, args.repeats)
    if not args.speed:
        table(args.table_releases)


if __name__ == "__main__":
    main()
