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
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                 ast.ClassDef)):
                if node.name in seen:
                    twice.append(f"{path.relative_to(ROOT)}: {node.name}")
                seen.add(node.name)
    assert twice == []


#: Where a statistic's name may be compared: its kind's class.
KINDS_HOME = ROOT / "_kinds"


def _statistic_names() -> set:
    from skattr._kinds import kinds

    return {kind.name for kind in kinds()}


def _named(node, names: set, constants: dict) -> set:
    """Return the statistic names ``node`` spells: a literal, a tuple of them,
    or a module constant bound to one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & names
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_named(e, names, constants) for e in node.elts))
    if isinstance(node, ast.Name):
        return constants.get(node.id, set())
    if isinstance(node, ast.BinOp):         # _SUMMED + _COUNTED
        return (_named(node.left, names, constants)
                | _named(node.right, names, constants))
    return set()


def _reads_a_secrets_property(node) -> bool:
    # A secret's property ("proportion" or "mean") is the secret's kind, not a
    # statistic's: secret.property, getattr(secret, "property", None).
    if isinstance(node, ast.Attribute):
        return node.attr == "property"
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "getattr" and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value == "property")


def statistic_name_comparisons(root: Path, names: set, exempt=()) -> list:
    """Return every comparison of a statistic's name in ``root``'s modules.

    ``==``, ``!=``, ``in``, ``not in``, ``is`` and ``is not`` against a name's
    literal (or a tuple of them, or a module constant holding them), and
    ``case "name":``; the modules under ``exempt`` (the kinds') are skipped.
    """
    found = []
    for path in sorted(root.rglob("*.py")):
        if any(path.is_relative_to(e) for e in exempt):
            continue
        tree = ast.parse(path.read_text())
        constants = {}
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value:
                targets = (node.targets if isinstance(node, ast.Assign)
                           else [node.target])
                spelt = _named(node.value, names, constants)
                for target in targets:
                    if isinstance(target, ast.Name) and spelt:
                        constants[target.id] = spelt
        for node in ast.walk(tree):
            where = f"{path.relative_to(root.parent)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                if any(_reads_a_secrets_property(o) for o in operands):
                    continue
                if any(_named(o, names, constants) for o in operands):
                    found.append(f"{where}: {ast.unparse(node)}")
            elif isinstance(node, ast.MatchValue) and _named(
                    node.value, names, constants):
                found.append(f"{where}: case {ast.unparse(node.value)}")
    return found


def test_no_module_compares_a_statistic_name_outside_its_kind():
    """A statistic's kind is a class (skattr._kinds) that the code asks;
    comparing its stored name ("mean", "quantile", ...) elsewhere would let a
    new kind go unasked where the comparison stands."""
    assert statistic_name_comparisons(ROOT, _statistic_names(),
                                      exempt=(KINDS_HOME,)) == []


def test_a_statistic_name_compared_outside_its_kind_is_found(tmp_path):
    # The walk finds what the test above forbids (else it passes vacuously).
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text(
        '_COUNTED = ("count", "proportion")\n'
        'def f(query, secret, args):\n'
        '    if query.statistic == "median": pass\n'
        '    if args.statistic in _COUNTED: pass\n'
        '    if "std" != getattr(query, "statistic", None): pass\n'
        '    if secret.property == "mean": pass\n'
        '    if query.kind.counts: pass\n'
        '    match query.statistic:\n'
        '        case "sum": pass\n')
    (package / "kinds.py").write_text('ok = "mean" == "mean"\n')
    found = statistic_name_comparisons(tmp_path, _statistic_names(),
                                       exempt=(package / "kinds.py",))
    assert [line.split(":")[1] for line in found] == ["3", "4", "5", "9"]
