"""The pytest plugin the package registers (entry point ``deployer``) is loaded by every pytest
run in an environment that has the toolkit: loading it imports no emulator, SDK or CLI code;
``deployer.testing``'s names are imported when first used."""

from __future__ import annotations

import subprocess
import sys

import pytest

import deployer.testing


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    probe = ("import sys, deployer.testing.pytest_plugin\n"
             "heavy = ('deployer.emulator', 'deployer.cloud', 'deployer.cli', 'alibabacloud',"
             " 'aiohttp', 'Tea', 'darabonba')\n"
             "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_every_public_name_is_there_when_asked_for() -> None:
    for name in deployer.testing.__all__:
        assert getattr(deployer.testing, name).__name__ == name
    with pytest.raises(AttributeError, match="no attribute 'mock_clod'"):
        _ = deployer.testing.mock_clod  # type: ignore[attr-defined]
