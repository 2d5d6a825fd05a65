"""What a function instance's private /tmp keeps visible of the emulator's own Python: a
virtual environment's root (pyvenv.cfg and site-packages, read by the interpreter at start),
so a custom runtime's server started with ``sys.executable`` finds its packages even when the
environment lives under /tmp (a checkout cloned there)."""

from __future__ import annotations

import venv

from deployer.emulator.runtime.launch import _environment_dir


def test_a_virtual_environment_is_kept_whole(tmp_path) -> None:
    env = tmp_path / "env"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env)
    assert _environment_dir(str(env / "bin" / "python")) == str(env)


def test_a_plain_installation_keeps_its_bin_directory(tmp_path) -> None:
    bin_dir = tmp_path / "python" / "bin"
    bin_dir.mkdir(parents=True)
    assert _environment_dir(str(bin_dir / "python3")) == str(bin_dir)
