"""The README's and the Getting started page's code run as written (issue 28:
a documented path that fails fails CI)."""

import pathlib
import re
import textwrap

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


def rst_python_blocks(path):
    """The ``.. code-block:: python`` blocks of a reStructuredText page."""
    text = path.read_text(encoding="utf-8")
    found = re.findall(r"^\.\. code-block:: python\n\n((?:^(?:   .*)?\n)+)",
                       text, flags=re.M)
    return [textwrap.dedent(block) for block in found]


def test_getting_started_runs_as_written(tmp_path, monkeypatch, capsys):
    blocks = rst_python_blocks(ROOT / "docs" / "getting_started.rst")
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)            # its files are written here
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "getting_started.rst", "exec"), namespace)  # noqa: S102
    out = capsys.readouterr().out
    assert out.startswith("Hidden: whether the share of records with gender")
    assert "seeing all 2 releases together" in " ".join(out.split())
    assert (tmp_path / "ledger.json").is_file()
    assert namespace["table"].ledger.spent[0] <= 4.0
    # Its claims: the plan's expected error falls as epsilon grows.
    errors = [float(line.split()[1]) for line in out.splitlines()
              if line.split()[:1] in (["0.5"], ["1.0"], ["2.0"])]
    assert len(errors) == 3 and errors[0] > errors[1] > errors[2] > 0
