"""How long the command line takes to start, against importing pandas (issue 28).

Each command runs in a fresh interpreter, five times; the table gives the
best time and its ratio to ``import pandas`` (the one heavy package importing
skattr needs: it registers the DataFrame accessor). ``import skattr``
imports no scikit-learn, SciPy statistics, statsmodels, networkx or
matplotlib: those load when a mechanism, a summary or a plot first needs
them (``tests/test_import_time.py`` checks which modules load).

    python benchmarks/import_time.py
"""

from __future__ import annotations

import subprocess
import sys
import time

COMMANDS = {
    "python (nothing imported)": "pass",
    "import pandas (baseline)": "import pandas",
    "import skattr": "import skattr",
    "skattr --help": "import sys; sys.argv = ['skattr', '--help']\n"
                     "from skattr.cli import main\ntry: main()\n"
                     "except SystemExit: pass",
    "skattr --version": "import sys; sys.argv = ['skattr', '--version']\n"
                        "from skattr.cli import main\ntry: main()\n"
                        "except SystemExit: pass",
    "import skattr.mechanisms": "import skattr.mechanisms",
}


def best_of(code: str, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True,
                       stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    found = {label: best_of(code) for label, code in COMMANDS.items()}
    base = found["import pandas (baseline)"]
    print("| command | best of 5 | / import pandas |")
    print("|---|---|---|")
    for label, seconds in found.items():
        print(f"| {label} | {seconds:.3f} s | {seconds / base:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
