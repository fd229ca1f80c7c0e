"""The README's code runs as written (issue 28: a documented path that fails
fails CI)."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def python_blocks(path):
    """The ```python blocks of a Markdown file, in order."""
    text = path.read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S)


def test_the_readme_runs_as_written(capsys):
    blocks = python_blocks(ROOT / "README.md")
    assert len(blocks) >= 3
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)   # noqa: S102
    # What the README says each block gives.
    assert "Release" in capsys.readouterr().out
    ledger = namespace["ledger"]
    spent, delta = ledger.spent
    assert 0 < spent <= ledger.budget[0] and delta <= ledger.budget[1]
    assert len(ledger.releases) == 2
    assert {e.release.mechanism for e in ledger.releases} == {
        "approx-wasserstein"}
    assert namespace["mech"].release(namespace["private"]).values.shape == (1,)


def test_the_package_says_it_is_typed():
    assert (ROOT / "skattr" / "py.typed").is_file()
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'skattr = \[[^]]*"py\.typed"', text)
