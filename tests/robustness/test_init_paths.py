"""``deploy init`` into a directory the system cannot create: a clear error, not a bug."""

from __future__ import annotations

from click.testing import CliRunner

from deployer.cli.main import cli


def test_a_directory_name_too_long_for_the_file_system(tmp_path) -> None:
    target = tmp_path / ("x" * 300)
    result = CliRunner().invoke(cli, ["init", str(target), "--output", "json"])
    assert result.exit_code == 1, result.stderr
    assert "bug" not in result.stderr and result.stdout == ""
    assert "cannot write the project" in result.stderr and "too long" in result.stderr
