"""Odd files in a function's code directory: ``deploy package`` names the file and exits 3
(invalid input) instead of reporting a bug."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from deployer.cli.main import cli


def _package(project):
    return CliRunner().invoke(cli, ["-C", str(project), "package", "--out",
                                    str(project / "out"), "--output", "json"])


def _odd_name(code) -> str:
    name = os.fsdecode(b"caf\xe9.py")
    (code / name).write_text("x = 1\n")
    return "caf"


@pytest.mark.parametrize(("make", "said"), [
    (lambda code: os.symlink("loop", code / "loop") or "loop", "symlink loop"),
    (lambda code: (os.symlink("b", code / "a"), os.symlink("a", code / "b")) and "a",
     "symlink loop"),
    (_odd_name, "not valid UTF-8"),
])
def test_odd_entries_are_named(project, make, said) -> None:
    shown = make(project / "functions" / "start_job")
    result = _package(project)
    assert result.exit_code == 3, result.stderr
    assert "bug" not in result.stderr and result.stdout == ""
    assert f"start_job/{shown}" in result.stderr and said in result.stderr


def test_special_files_are_left_out(project) -> None:
    os.mkfifo(project / "functions" / "start_job" / "pipe")
    result = _package(project)
    assert result.exit_code == 0, result.stderr
