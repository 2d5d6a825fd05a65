"""The import contracts in pyproject.toml say what the code is, and keep saying it as modules
are added: a contract that forbids "everything but" some modules lists every other module of
the package (``lint-imports`` checks the imports; this checks the lists)."""

from __future__ import annotations

import pkgutil
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest's own TOML reader before 3.11
    import tomli as tomllib

import deployer
import deployer.emulator

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"

#: What the console may import of ours (docs/architecture.md): the emulator's services and the
#: values they hand out (records), its clock (for the virtual instant shown in the header), the
#: flow language and the one time formatter.
CONSOLE_READS = {"deployer.fdl", "deployer.emulator.services", "deployer.emulator.records",
                 "deployer.emulator.clock", "deployer.timestamps"}


def _contract(contract_id: str) -> dict[str, Any]:
    settings = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]
    return next(c for c in settings["contracts"] if c["id"] == contract_id)


def _children(package: Any) -> set[str]:
    return {f"{package.__name__}.{m.name}" for m in pkgutil.iter_modules(package.__path__)}


def test_fdl_forbids_every_other_module_of_deployer() -> None:
    contract = _contract("fdl-independent")
    assert contract["source_modules"] == ["deployer.fdl"]
    assert contract["forbidden_modules"] == ["deployer.*"]
    assert not contract.get("allow_indirect_imports", False)
    assert "deployer.fdl" in _children(deployer)


def test_console_forbids_all_but_what_it_reads() -> None:
    contract = _contract("console-reads-services")
    forbidden = set(contract["forbidden_modules"])
    everything = (_children(deployer) | _children(deployer.emulator)) - {
        "deployer.console", "deployer.emulator"}
    assert not forbidden & CONSOLE_READS, "the console's contract forbids what it reads"
    missing = everything - CONSOLE_READS - forbidden
    assert not missing, f"add these to console-reads-services' forbidden_modules: {missing}"
    unknown = forbidden - everything
    assert not unknown, f"console-reads-services forbids modules that do not exist: {unknown}"


def test_fdl_parts_name_every_package_of_fdl() -> None:
    import deployer.fdl

    contract = _contract("fdl-parts")
    layered = {
        f"deployer.fdl.{part.strip()}"
        for layer in contract["layers"] for part in layer.replace(":", "|").split("|")
    }
    assert layered == _children(deployer.fdl), "a part of fdl is missing from fdl-parts"
