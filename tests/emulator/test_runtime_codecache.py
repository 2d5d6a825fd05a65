"""CodeCache: atomic, once-per-checksum, zip-slip-safe unpacking."""

from __future__ import annotations

import dataclasses
import stat
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from runtime_support import build_zip, call, make_spec

from deployer.emulator.clock import SystemClock
from deployer.emulator.runtime import CodePackageError, ProcessRuntime
from deployer.emulator.runtime.codecache import CodeCache, _member_path


def evil_zip(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "evil.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("index.py", "def handler(e, c):\n    return 1\n")
        archive.writestr(name, "pwned")
    return path


@pytest.mark.parametrize("name", ["../escape.py", "a/../../escape.py", "/etc/escape", "C:/x.py"])
def test_members_outside_the_root_are_refused(tmp_path, name):
    cache = CodeCache(tmp_path / "work")
    with pytest.raises(CodePackageError, match="outside the code root"):
        cache.ensure("evil", evil_zip(tmp_path, name))
    assert not (tmp_path / "escape.py").exists()
    assert not (tmp_path / "work" / "code" / "evil").exists()
    assert list((tmp_path / "work" / "code").iterdir()) == []  # staging dir cleaned up


def test_bad_zip_is_a_clear_error_from_invoke(tmp_path):
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    spec = make_spec(tmp_path, {"index.py": ""})
    rt = ProcessRuntime(tmp_path / "work", SystemClock())
    try:
        with pytest.raises(CodePackageError, match="cannot unpack code zip"):
            call(rt, dataclasses.replace(spec, code_zip=bad, code_checksum="bad"))
    finally:
        rt.close()


def test_unpacked_once_read_only_and_concurrency_safe(tmp_path):
    path, checksum = build_zip(tmp_path, {"index.py": "x = 1\n", "pkg/data.txt": "d"})
    cache = CodeCache(tmp_path / "work")
    with ThreadPoolExecutor(8) as pool:
        roots = list(pool.map(lambda _: cache.ensure(checksum, path), range(16)))
    assert len(set(roots)) == 1
    root = roots[0]
    assert root == tmp_path / "work" / "code" / checksum
    assert (root / "pkg" / "data.txt").read_text() == "d"
    assert [p.name for p in (tmp_path / "work" / "code").iterdir()] == [checksum]
    assert stat.S_IMODE((root / "index.py").stat().st_mode) == 0o444
    assert stat.S_IMODE((root / "pkg").stat().st_mode) == 0o555
    assert stat.S_IMODE(root.stat().st_mode) == 0o555
    # a second cache over the same directory (another process) reuses the tree
    path.unlink()
    assert CodeCache(tmp_path / "work").ensure(checksum, path) == root


def test_unsafe_checksums_get_a_hashed_directory(tmp_path):
    path, _ = build_zip(tmp_path, {"index.py": ""})
    root = CodeCache(tmp_path / "work").ensure("../../weird checksum", path)
    assert root.parent == tmp_path / "work" / "code"
    assert root.name.startswith("sha256-")


@given(st.lists(st.sampled_from(["a", "..", ".", "", "/", "\\", "b.py", "C:", "~"]), max_size=6))
def test_member_paths_never_escape(parts):
    root = Path("/srv/code/x")
    name = "/".join(parts)
    try:
        target = _member_path(root, name)
    except CodePackageError:
        return
    if target is not None:
        assert target.resolve().is_relative_to(root)
