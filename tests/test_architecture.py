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


#: Where a statistic's name may be compared: its kind's class.
KINDS_HOME = ROOT / "_kinds"


def _statistic_names() -> set:
    from skattr._kinds import kinds

    return {kind.name for kind in kinds()}


#: Strings that spell a statistic's name but are not one, by module (relative
#: to the package) and the text of the expression: a file format's fields.
NOT_STATISTICS = (
    # The ledger anchor's JSON field "count": how many releases it seals.
    ("_ledger/_anchor.py", "record['count']"),
    ("_ledger/_anchor.py",
     "dict keyed {'format': _FORMAT, 'version': _VERSION, 'count'"),
)


def _kind_classes() -> set:
    from skattr._kinds import kinds

    return {type(kind).__name__ for kind in kinds()}


def _named(node, names: set, constants: dict) -> set:
    """Return the statistic names ``node`` spells: a literal, a tuple of them,
    a constant bound to one (in a module or a function), or a kind class's
    ``name`` (``Mean.name``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & names
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_named(e, names, constants) for e in node.elts))
    if isinstance(node, ast.Dict):          # {"mean": ...}: its keys
        return set().union(*(_named(k, names, constants) for k in node.keys
                             if k is not None))
    if isinstance(node, ast.Name):
        return constants.get(node.id, set())
    if isinstance(node, ast.Attribute) and node.attr == "name":
        # Mean.name, _kinds.Mean.name: a kind class's stored name.
        owner = node.value
        owner = owner.attr if isinstance(owner, ast.Attribute) else getattr(
            owner, "id", None)
        return {"<kind>.name"} if owner in constants.get("<kinds>", ()) else set()
    if isinstance(node, ast.NamedExpr):     # (chosen := "mean")
        return _named(node.value, names, constants)
    if isinstance(node, ast.BinOp):         # _SUMMED + _COUNTED
        return (_named(node.left, names, constants)
                | _named(node.right, names, constants))
    return set()


def _reads_a_secrets_property(node, path: Path, root: Path) -> bool:
    # A secret's property ("proportion" or "mean") is the secret's kind, not a
    # statistic's: secret.property, self.secret.property,
    # getattr(secret, "property", None), the object read named for a secret
    # (or the Secret's own self, in its module).
    def secret(owner) -> bool:
        name = (owner.attr if isinstance(owner, ast.Attribute)
                else getattr(owner, "id", ""))
        # The Secret's module (_secret.py of the package walked).
        return "secret" in name.lower() or (name == "self"
                                            and path == root / "_secret.py")

    if isinstance(node, ast.Attribute):
        return node.attr == "property" and secret(node.value)
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "getattr" and len(node.args) >= 2
            and secret(node.args[0])
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value == "property")


#: Calls that compare or look up by their arguments: x.__eq__(y),
#: operator.eq(x, y), mapping.get("mean"), operator.contains(...).
_COMPARING_CALLS = {"__eq__", "__ne__", "eq", "ne", "contains", "is_", "is_not",
                    "get", "pop", "setdefault", "index", "count", "__contains__"}
#: Calls that compare a prefix or suffix of a name.
_AFFIX_CALLS = {"startswith", "endswith", "removeprefix", "removesuffix"}


def _called(node) -> str | None:
    func = node.func
    return (func.attr if isinstance(func, ast.Attribute)
            else getattr(func, "id", None))


def _affixes(node, names: set) -> set:
    """Return the names a startswith/endswith argument is a prefix/suffix of."""
    values = ([node] if not isinstance(node, (ast.Tuple, ast.List))
              else node.elts)
    found = set()
    for value in values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str) \
                and len(value.value) >= 2:
            found |= {n for n in names if n.startswith(value.value)
                      or n.endswith(value.value)}
    return found


def _constants(tree, names: set, kinds: set) -> dict:
    """Return the names bound to statistic names, anywhere in ``tree``.

    Module constants and function locals alike (assigned, annotated or
    augmented), to a fixed point (one bound to another's value); kind
    classes imported under their own name or another are kept under
    ``"<kinds>"``.
    """
    constants = {"<kinds>": set(kinds)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in kinds:
                    constants["<kinds>"].add(alias.asname or alias.name)
    while True:
        before = {k: set(v) for k, v in constants.items()}
        for node in ast.walk(tree):
            if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                # for name in ("mean", "sum"): name holds a statistic name.
                targets, spelt = [node.target], _named(node.iter, names,
                                                       constants)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign,
                                   ast.NamedExpr)) and node.value is not None:
                targets = (node.targets if isinstance(node, ast.Assign)
                           else [node.target])
                spelt = _named(node.value, names, constants)
            else:
                continue
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and spelt:
                        constants.setdefault(name.id, set()).update(spelt)
        if constants == before:
            return constants


def statistic_name_comparisons(root: Path, names: set, exempt=(),
                               kinds=None) -> list:
    """Return every comparison of a statistic's name in ``root``'s modules.

    ``==``, ``!=``, ``in``, ``not in``, ``is`` and ``is not`` against a name's
    literal (or a tuple of them, or a constant holding them, in a module or
    a function, or a kind class's ``name``), ``case "name":``, a dict
    literal keyed by names, a subscript or ``.get``/``.pop``/... by one,
    ``__eq__``, ``operator.eq`` and the like, and ``.startswith`` /
    ``.endswith`` with a name's prefix or suffix; the modules under
    ``exempt`` (the kinds') are skipped.
    """
    kinds = _kind_classes() if kinds is None else kinds
    found = []
    allowed = {(root / path, what) for path, what in NOT_STATISTICS}
    for path in sorted(root.rglob("*.py")):
        if any(path.is_relative_to(e) for e in exempt):
            continue
        tree = ast.parse(path.read_text())
        constants = _constants(tree, names, kinds)
        for node in ast.walk(tree):
            where = f"{path.relative_to(root.parent)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                if any(_reads_a_secrets_property(o, path, root)
                       for o in operands):
                    continue
                if any(_named(o, names, constants) for o in operands):
                    found.append(f"{where}: {ast.unparse(node)}")
            elif isinstance(node, ast.MatchValue) and _named(
                    node.value, names, constants):
                found.append(f"{where}: case {ast.unparse(node.value)}")
            elif isinstance(node, ast.Dict) and _named(node, names, constants):
                found.append(f"{where}: dict keyed {ast.unparse(node)[:60]}")
            elif isinstance(node, ast.Subscript) and _named(
                    node.slice, names, constants):
                found.append(f"{where}: {ast.unparse(node)}")
            elif isinstance(node, ast.Call) and _called(node) == "dict" and any(
                    k.arg in names for k in node.keywords):
                found.append(f"{where}: {ast.unparse(node)[:60]}")
            elif isinstance(node, ast.Call):
                called = _called(node)
                operands = [*node.args] + ([node.func.value] if isinstance(
                    node.func, ast.Attribute) else [])
                if called in _COMPARING_CALLS and any(
                        _named(o, names, constants) for o in operands):
                    found.append(f"{where}: {ast.unparse(node)}")
                elif called in _AFFIX_CALLS and any(
                        _affixes(a, names) for a in node.args):
                    found.append(f"{where}: {ast.unparse(node)}")
    return [f for f in found if not any(
        f.startswith(f"{p.relative_to(root.parent)}:") and what in f
        for p, what in allowed)]


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


#: Each way round the comparison the reviewer found (issue 45), one a line:
#: the walk must find every one.
_EVASIONS = """\
import operator
from skattr._kinds import Median as M
from skattr._kinds import Std
WEIGHTS = {"mean": 1, "sum": 2}
def f(query, args, weights, secret, other):
    local = "median"
    if query.statistic == local: pass
    for name in ("std", "sum"):
        if args.statistic == name: pass
    if query.statistic.__eq__("mean"): pass
    if operator.eq(query.statistic, "quantile"): pass
    if query.statistic.startswith("quant"): pass
    if query.statistic.endswith("-mean"): pass
    x = weights.get("mean")
    y = weights["sum"]
    if query.statistic == M.name: pass
    if query.statistic != Std.name: pass
    z = dict(median=1)
    if other.property == "mean": pass
    if any(s == "count" for s in args): pass
    if (chosen := "proportion") == query.statistic: pass
"""


def test_every_evasion_of_a_statistic_name_comparison_is_found(tmp_path):
    # Constants in functions, loop variables, dicts keyed by names, .get and
    # subscripts by a name, __eq__, operator.eq, startswith/endswith by a
    # prefix or suffix, a kind class's name, dict(name=...), a .property
    # read off something not named a secret, a walrus.
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "b.py").write_text(_EVASIONS)
    found = statistic_name_comparisons(tmp_path, _statistic_names())
    lines = sorted({int(line.split(":")[1]) for line in found})
    expected = [4, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21]
    assert lines == expected, found
    # Each alone (with the imports and the def, and the loop's or the
    # local's binding it reads): found, so no line passes for another's sake;
    # and the def alone is not.
    source = _EVASIONS.splitlines()
    head = source[:3] + [source[4]]
    needs = {7: [source[5]], 9: [source[7]]}
    for line in [None, *expected]:
        body = (source[:4] if line == 4 else
                head if line is None else
                head + needs.get(line, []) + [source[line - 1]])
        one = tmp_path / f"one{line}" / "pkg"
        one.mkdir(parents=True)
        (one / "m.py").write_text("\n".join(body) + (
            "\n" if line == 4 else "\n    pass\n"))
        found = statistic_name_comparisons(one.parent, _statistic_names())
        assert bool(found) == (line is not None), (line, found)
