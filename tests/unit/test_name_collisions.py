"""One meaning per public name: no public name is defined in two modules of ``deployer/``.

A public name is a module-level class or function whose name does not start with ``_``, a
module-level constant or type alias (a capitalised name: ``LIMIT = 10``,
``Outcome = Union[...]``), or any other module-level assignment listed in the module's
``__all__``. An import is not a definition, and neither is ``X = other.X``: both
re-export the one definition. Not counted: type variables (``T = TypeVar("T")``), ``main``
(every program's entry point is called that: the console script, ``python -m
deployer.emulator``, the function worker), and ``deployer/project_templates/`` (the projects
``deploy init`` copies out, not modules of this package).

Two definitions of one name mean two things, even when they look alike (``Outcome`` as an enum,
a tuple and a union): rename one, or define it once and import it.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "deployer"
NOT_MODULES = ("project_templates",)
ENTRY_POINT = "main"
_CAPITALISED = re.compile(r"[A-Z]\w*")  # a constant or a type alias
_TYPE_VARIABLES = {"TypeVar", "ParamSpec", "TypeVarTuple"}

#: Collisions allowed while they are renamed, name -> the modules defining it (none today: a
#: new entry names modules of the emulator or the test helpers, and goes with the rename).
ALLOWED: dict[str, frozenset[str]] = {}
ALLOWED_IN = ("emulator", "testing")


def _exported(tree: ast.Module) -> set[str]:
    for statement in tree.body:
        targets = statement.targets if isinstance(statement, ast.Assign) else [
            statement.target] if isinstance(statement, ast.AnnAssign) else []
        if any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
            assert isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value
            try:
                names = ast.literal_eval(statement.value)
            except ValueError:  # built from other lists: starred parts are re-exports
                names = [
                    item.value for item in getattr(statement.value, "elts", ())
                    if isinstance(item, ast.Constant) and isinstance(item.value, str)
                ]
            return {name for name in names if isinstance(name, str)}
    return set()


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements run at import: the body, and the branches of its ``if``/``try``."""
    for statement in body:
        if isinstance(statement, ast.If):
            yield from _module_level(statement.body)
            yield from _module_level(statement.orelse)
        elif isinstance(statement, ast.Try):
            for block in (statement.body, statement.orelse, statement.finalbody):
                yield from _module_level(block)
            for handler in statement.handlers:
                yield from _module_level(handler.body)
        else:
            yield statement


def _is_type_variable(value: ast.expr | None) -> bool:
    if not isinstance(value, ast.Call):
        return False
    called = value.func
    name = called.id if isinstance(called, ast.Name) else getattr(called, "attr", "")
    return name in _TYPE_VARIABLES


def _is_reexport(name: str, value: ast.expr | None) -> bool:
    """``X = X`` or ``X = module.X``: the same object under the same name."""
    return (isinstance(value, ast.Name) and value.id == name) or (
        isinstance(value, ast.Attribute) and value.attr == name
    )


def public_definitions(source: str) -> set[str]:
    """The public names a module's text defines (see the module docstring)."""
    tree = ast.parse(source)
    exported = _exported(tree)
    found: set[str] = set()
    for statement in _module_level(tree.body):
        if isinstance(statement, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            found.add(statement.name)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [
                statement.target]
            if _is_type_variable(statement.value):
                continue
            for target in targets:
                if not isinstance(target, ast.Name) or _is_reexport(target.id, statement.value):
                    continue
                if _CAPITALISED.fullmatch(target.id) or target.id in exported:
                    found.add(target.id)
    return {name for name in found if not name.startswith("_") and name != ENTRY_POINT}


def collisions(modules: Iterable[tuple[str, str]]) -> dict[str, frozenset[str]]:
    """Public names defined in more than one of ``modules`` ((name, source) pairs)."""
    defined: dict[str, set[str]] = defaultdict(set)
    for module, source in modules:
        for name in public_definitions(source):
            defined[name].add(module)
    return {name: frozenset(where) for name, where in defined.items() if len(where) > 1}


def _package_modules() -> Iterator[tuple[str, str]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[0] in NOT_MODULES:
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path.read_text(encoding="utf-8")


@functools.cache
def _package_collisions() -> dict[str, frozenset[str]]:
    return collisions(_package_modules())


def test_no_public_name_means_two_things() -> None:
    found = _package_collisions()
    new = {name: sorted(where) for name, where in found.items() if name not in ALLOWED}
    assert not new, (
        "public names defined in more than one module (rename one, or define it once and "
        f"import it): {new}"
    )


def test_allowed_collisions_are_current_and_in_the_emulator_or_test_helpers() -> None:
    found = _package_collisions()
    stale = {
        name: (sorted(where), sorted(found.get(name, ())))
        for name, where in ALLOWED.items() if found.get(name) != where
    }
    assert not stale, f"ALLOWED entries that no longer match (allowed, found): {stale}"
    outside = [
        name for name, where in ALLOWED.items()
        if not any(module.split(".")[0] in ALLOWED_IN for module in where)
    ]
    assert not outside, f"allowed collisions with no module in {ALLOWED_IN}: {outside}"


def test_the_check_tells_definitions_from_reexports() -> None:
    first = '''
import json
from typing import TypeVar
from elsewhere import Imported
T = TypeVar("T")
LIMIT = 10
Alias = Imported
Spec = dict[str, int]
__all__ = ["Spec", "Outcome", "Imported", "helper"]
class Outcome: ...
def helper() -> None: ...
def _private() -> None: ...
def main() -> None: ...
'''
    second = '''
from typing import TypeVar, Union
import first
T = TypeVar("T")
Outcome = Union[int, str]
Imported = first.Imported
helper = first.helper
limit = 3
_LIMIT = 4
Spec = list[int]
if True:
    LIMIT = 11
def main() -> None: ...
'''
    assert public_definitions(first) == {"LIMIT", "Alias", "Spec", "Outcome", "helper"}
    assert public_definitions(second) == {"LIMIT", "Outcome", "Spec"}
    both = frozenset({"first", "second"})
    assert collisions([("first", first), ("second", second)]) == {
        "LIMIT": both, "Outcome": both, "Spec": both,
    }
