"""A state directory the emulator cannot use gets a clear error with the way out, never exit 70
"This is a bug" (docs/emulator.md "Running it"): a read-only file system, and a damaged
database, whose message names ``deploy emulator reset``, which then recovers."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from deployer.cli.main import cli


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory on a read-only file system (a tmpfs remounted ro: root in CI)."""
    mount = tmp_path / "ro"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                          capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        (mount / "state").mkdir()
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        yield mount / "state"
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_read_only_state_directory_is_said_with_the_way_out(read_only_dir: Path) -> None:
    for args in (("emulator", "start", "--port", "0"), ("emulator", "reset", "--yes"),
                 ("emulator", "start", "--port", "0", "--foreground")):
        result = _run(*args, "--state-dir", str(read_only_dir))
        assert result.exit_code == 1, (args, result.stderr)
        assert "is on a read-only file system" in result.stderr, result.stderr
        assert "This is a bug" not in result.stderr
        if "--foreground" not in args:
            assert "Hint: use another state directory (--state-dir DIR" in result.stderr


def test_a_damaged_database_names_reset_which_recovers(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "emulator.db").write_bytes(b"this is no SQLite database " * 100)
    try:
        started = _run("emulator", "start", "--state-dir", str(state), "--port", "0")
        assert started.exit_code == 1, started.stderr
        assert "emulator.db is damaged and cannot be read (file is not a database)" in \
            started.stderr
        assert f"Hint: run `deploy emulator reset --yes --state-dir {state}`" in started.stderr
        foreground = _run("emulator", "start", "--state-dir", str(state), "--port", "0",
                          "--foreground")
        assert foreground.exit_code == 1 and "deploy emulator reset" in foreground.stderr
        assert _run("emulator", "reset", "--yes", "--state-dir", str(state)).exit_code == 0
        again = _run("emulator", "start", "--state-dir", str(state), "--port", "0")
        assert again.exit_code == 0, again.stderr
    finally:
        _run("emulator", "stop", "--state-dir", str(state))


def test_commands_probing_the_state_directory_together_do_not_trip_each_other(
        tmp_path, monkeypatch) -> None:
    """Commands started together (issue 17, item 8) probe that the state directory can be
    written at the same moment: one's probe file must not be another's. Here a second probe
    runs whole while the first writes its file."""
    import os

    from deployer.emulator.state_dir import check_writable

    write = os.write
    nested: list[bool] = []

    def interleaved(fd: int, data: bytes) -> int:
        if not nested:
            nested.append(True)
            check_writable(tmp_path)  # the other command, start to end
        return write(fd, data)

    monkeypatch.setattr(os, "write", interleaved)
    check_writable(tmp_path)
    assert nested and list(tmp_path.iterdir()) == []
