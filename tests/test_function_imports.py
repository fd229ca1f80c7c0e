"""A function imports inside itself only for a reason (issue 45).

An import inside a function costs a lookup at every call and hides a
module's dependencies from its reader; it earns its place when it keeps a
heavy or optional module out of ``import skattr`` (tests/test_import_time.py),
or breaks a cycle. A function-level import of a module that ``import skattr``
has loaded anyway has neither reason, unless it says another (a comment on
its line or the line above), or is guarded by ``except ImportError`` (a
module some platforms lack).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import skattr

ROOT = Path(skattr.__file__).parent


def _loaded_by_import_skattr() -> set[str]:
    """Return the modules a fresh ``import skattr`` loads."""
    found = subprocess.run(
        [sys.executable, "-c",
         "import sys, skattr; print('\\n'.join(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True)
    return set(found.stdout.split())


def _guarded(tree: ast.AST) -> set[int]:
    """Return the lines of imports inside ``try: ... except ImportError``."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                "ImportError" in ast.unparse(h.type or ast.Name("Exception"))
                for h in node.handlers):
            lines |= {n.lineno for stmt in node.body for n in ast.walk(stmt)
                      if isinstance(n, (ast.Import, ast.ImportFrom))}
    return lines


def _function_imports(path: Path):
    """Yield (line, module) of each import inside a function of ``path``."""
    tree = ast.parse(path.read_text())
    guarded = _guarded(tree)
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import) and node.lineno not in guarded:
                yield from ((node.lineno, a.name) for a in node.names)
            elif (isinstance(node, ast.ImportFrom) and node.level == 0
                  and node.lineno not in guarded):
                yield node.lineno, node.module


def test_a_function_imports_a_module_import_skattr_loaded_only_for_a_reason():
    loaded = _loaded_by_import_skattr()
    unexplained = []
    for path in sorted(ROOT.rglob("*.py")):
        lines = path.read_text().splitlines()
        for line, module in _function_imports(path):
            said = "#" in lines[line - 1] or lines[line - 2].strip().startswith(
                "#")
            if module in loaded and not said:
                unexplained.append(f"{path.relative_to(ROOT.parent)}:{line} "
                                   f"imports {module}")
    assert not unexplained, (
        "These functions import a module `import skattr` loads anyway: import "
        "it at the top of the module, or say why not in a comment:\n"
        + "\n".join(unexplained))


def test_the_check_sees_a_function_level_import(tmp_path):
    # The check itself: an unexplained import is found, a commented one not.
    path = tmp_path / "module.py"
    path.write_text("def f():\n    import numpy\n\n\ndef g():\n"
                    "    # heavy: kept out of import skattr\n    import numpy\n")
    assert list(_function_imports(path)) == [(2, "numpy"), (7, "numpy")]
    lines = path.read_text().splitlines()
    assert lines[5].strip().startswith("#")
