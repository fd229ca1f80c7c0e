"""Importing skattr, and its command line's --help, load no heavy package.

Checked by the modules a fresh interpreter holds afterwards, not by a clock
(benchmarks/import_time.py times them).
"""

import subprocess
import sys

import pytest

HEAVY = ("sklearn", "scipy.stats", "scipy.optimize", "statsmodels",
         "networkx", "matplotlib", "skattr.mechanisms", "skattr.laws")


def _loaded(code: str) -> set:
    probe = (code + "\nimport sys\nprint('\\n'.join(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], check=True,
                         capture_output=True, text=True).stdout
    return set(out.split())


@pytest.mark.slow
@pytest.mark.parametrize("code", [
    "import skattr",
    "import sys; sys.argv = ['skattr', '--help']\nfrom skattr.cli import main\n"
    "try: main()\nexcept SystemExit: pass",
])
def test_no_heavy_package_is_imported_until_used(code):
    loaded = _loaded(code)
    assert not [m for m in HEAVY if m in loaded]


@pytest.mark.slow
def test_public_names_and_subpackages_load_on_first_use():
    loaded = _loaded("import skattr\nskattr.Query\nskattr.mechanisms.MECHANISMS")
    assert "skattr.mechanisms" in loaded and "sklearn" in loaded
    import skattr

    assert skattr.Secret is skattr._secret.Secret
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        skattr.nothing  # noqa: B018


def test_a_release_without_a_network_loads_no_networkx():
    # Issue 42: networkx (0.3 CPU-s) loads with the first network, not with
    # the mechanisms' registry a process's first release imports.
    loaded = _loaded(
        "import skattr\nfrom skattr.datasets import make_hospital\n"
        "secret = skattr.Secret.proportion('gender', 'female', "
        "pairs=[(0.4, 0.6)])\n"
        "make_hospital(50, random_state=1).attrpriv.mean(['weight'], "
        "secret=secret, reference=make_hospital(500, random_state=0))")
    assert "skattr.mechanisms" in loaded and "skattr.bayes" in loaded
    assert "networkx" not in loaded
