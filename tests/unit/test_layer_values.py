"""The API modules never touch the store, not even through values the services hand over.

``lint-imports`` (contract ``emulator-api-not-store``) keeps the API modules from importing
``emulator.store``; this test closes the way around it: no public method or function of the
services returns a value whose class the store defines (the values they share with the store
are ``deployer.emulator.records``), and no name an API module takes from the services is one of
the store's.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import typing
from collections.abc import Iterator
from pathlib import Path

import deployer.emulator.api
import deployer.emulator.services

STORE = "deployer.emulator.store"


def _modules(package: object) -> Iterator[str]:
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):  # type: ignore[attr-defined]
        yield info.name


def _store_classes(annotation: object) -> set[str]:
    """The store-defined classes ``annotation`` names, generics unwrapped."""
    found = set()
    if isinstance(annotation, type) and annotation.__module__.startswith(STORE):
        found.add(f"{annotation.__module__}.{annotation.__qualname__}")
    for argument in typing.get_args(annotation):
        found |= _store_classes(argument)
    return found


def _public_callables(module: object) -> Iterator[tuple[str, object]]:
    for name, value in vars(module).items():
        if name.startswith("_") or getattr(value, "__module__", "") != module.__name__:  # type: ignore[attr-defined]
            continue
        if isinstance(value, type):
            for attr, member in vars(value).items():
                if callable(member) and not attr.startswith("_"):
                    yield f"{name}.{attr}", member
                elif isinstance(member, property) and member.fget is not None:
                    yield f"{name}.{attr}", member.fget
        elif callable(value):
            yield name, value


def test_no_service_hands_out_a_store_row() -> None:
    leaks = {}
    for name in _modules(deployer.emulator.services):
        module = importlib.import_module(name)
        for where, fn in _public_callables(module):
            try:
                hints = typing.get_type_hints(fn)
            except Exception:  # an annotation only resolvable under TYPE_CHECKING
                continue
            found = _store_classes(hints.get("return"))
            if found:
                leaks[f"{name}.{where}"] = sorted(found)
    assert not leaks, ("services return the store's own rows (use deployer.emulator.records): "
                       f"{leaks}")


def test_api_modules_take_no_store_value_from_the_services() -> None:
    taken = {}
    for name in _modules(deployer.emulator.api):
        source = Path(importlib.import_module(name).__file__ or "").read_text()
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith(
                    "deployer.emulator.services"):
                continue
            provider = importlib.import_module(node.module or "")
            for alias in node.names:
                value = getattr(provider, alias.name)
                if getattr(value, "__module__", "").startswith(STORE):
                    taken[f"{name}: {alias.name}"] = value.__module__
    assert not taken, f"API modules import store values through the services: {taken}"
