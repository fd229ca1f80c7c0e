"""The architecture CI keeps: layers, no cycles, no private name across packages.

The layers are declared in pyproject.toml's import-linter contracts (imports
inside functions count: grimp reads every import statement of a module).
The rules import-linter does not state are checked here on the source.
"""

import ast
from pathlib import Path

import pytest

import skattr

ROOT = Path(skattr.__file__).parent
PYPROJECT = ROOT.parent / "pyproject.toml"

#: Modules over ~800 lines, each one piece of mathematics (split it and the
#: pieces would share every private helper).
ONE_PIECE = {
    "calibration/_gaussian.py": "the Gaussian calibrations and their profiles",
    "calibration/_exact_profile.py": "the exact privacy profile of two "
                                     "discrete laws plus noise",
}
MAX_LINES = 800


def _modules():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
        yield path, ".".join(p for p in parts if p != "__init__"), \
            ".".join(package)


def _package_of(module: str) -> str:
    """The package a module name lives in (a package is its own)."""
    path = ROOT.parent.joinpath(*module.split("."))
    if path.is_dir():
        return module
    return module.rpartition(".")[0]


@pytest.mark.skipif(not PYPROJECT.exists(),
                    reason="needs the source checkout's pyproject.toml")
def test_the_import_contracts_are_kept():
    from importlinter.cli import lint_imports

    assert lint_imports(config_filename=str(PYPROJECT), no_cache=True) == 0


@pytest.mark.slow
def test_no_private_name_is_imported_across_packages():
    crossing = []
    for path, module, package in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ImportFrom) and node.module
                    and node.module.startswith("skattr")):
                continue
            source = _package_of(node.module)
            for alias in node.names:
                private = alias.name.startswith("_") and not (
                    alias.name.startswith("__") and alias.name.endswith("__"))
                if private and source != package:
                    crossing.append(f"{module}: from {node.module} import "
                                    f"{alias.name} (line {node.lineno})")
    assert crossing == []


def test_no_module_outside_the_backends_asks_which_library_a_frame_is():
    # One data-backend protocol: is_dask_frame and the Dask module are the
    # Dask backend's own.
    found = []
    for path, module, _ in _modules():
        if module.startswith("skattr.backends"):
            continue
        text = path.read_text()
        for word in ("is_dask_frame", "is_dask_series", "backends._dask",
                     "import dask"):
            if word in text:
                found.append(f"{module}: {word}")
    assert found == []


def test_no_module_is_over_800_lines_unless_it_is_one_piece_of_mathematics():
    long = {str(path.relative_to(ROOT)): len(path.read_text().splitlines())
            for path, _, _ in _modules()}
    over = {name: n for name, n in long.items() if n > MAX_LINES}
    assert set(over) <= set(ONE_PIECE), over


def test_no_module_defines_a_top_level_name_twice():
    """A second ``def`` of a name silently replaces the first for every
    caller in the module (ruff's F811 misses it once the first is used): a
    helper added for one caller once changed every release's plain words."""
    twice = []
    for path in sorted(ROOT.rglob("*.py")):
        seen = set()
        for node in ast.parse(path.read_text()).body:
            # A typing overload is a stub for type checkers, meant to be
            # replaced by the def that follows it.
            if [ast.unparse(d) for d in getattr(node, "decorator_list", [])
                    ] == ["overload"]:
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                 ast.ClassDef)):
                if node.name in seen:
                    twice.append(f"{path.relative_to(ROOT)}: {node.name}")
                seen.add(node.name)
    assert twice == []
