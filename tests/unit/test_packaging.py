"""Deterministic packaging, CRC-64, exclusions, symlinks, limits, handlers, requirements."""

from __future__ import annotations

import base64
import hashlib
import os
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deployer.checksums import Crc64, crc64_ecma182, crc64_reference
from deployer.config.specs import FunctionSpec, handler_files
from deployer.core.packaging import package_function
from deployer.errors import InvalidInputError, NotFoundError, OperationError


def spec_for(code: Path, handler: str = "index.handler") -> FunctionSpec:
    return FunctionSpec("fn", "cn-hangzhou", "Fn", "python3.10", handler, code)


@pytest.fixture
def code(tmp_path: Path) -> Path:
    root = tmp_path / "code"
    (root / "lib").mkdir(parents=True)
    (root / "index.py").write_text("def handler(event, context):\n    return 'ok'\n")
    (root / "lib" / "util.py").write_text("X = 1\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    return root


def names(zip_path: Path) -> list[str]:
    with zipfile.ZipFile(zip_path) as archive:
        return archive.namelist()


# --- CRC-64 ------------------------------------------------------------------------------------

def test_crc64_check_value() -> None:
    assert crc64_ecma182(b"123456789") == "11051210869376104954"
    assert crc64_reference(b"123456789") == "11051210869376104954"
    assert crc64_ecma182(b"") == "0"


@given(st.binary(max_size=2048), st.integers(min_value=0, max_value=2048))
def test_crc64_fast_path_matches_reference_and_chunks(data: bytes, cut: int) -> None:
    expected = crc64_reference(data)
    assert crc64_ecma182(data) == expected
    assert crc64_ecma182([data[:cut], data[cut:]]) == expected
    assert Crc64().update(data[:cut]).update(data[cut:]).decimal() == expected


# --- determinism and layout --------------------------------------------------------------------

def test_package_twice_is_byte_identical(code: Path, tmp_path: Path) -> None:
    first = package_function(spec_for(code), out_dir=tmp_path / "a")
    os.utime(code / "index.py", (1_000_000_000, 1_000_000_000))  # mtimes must not matter
    second = package_function(spec_for(code), out_dir=tmp_path / "b")
    data = first.zip_path.read_bytes()
    assert data == second.zip_path.read_bytes()
    assert first.crc64 == second.crc64 == crc64_ecma182(data)
    assert first.sha256 == hashlib.sha256(data).hexdigest() and first.size == len(data)
    assert first.zip_path == tmp_path / "a" / "Fn.zip"


def test_zip_entries_sorted_with_fixed_time_and_modes(code: Path, tmp_path: Path) -> None:
    result = package_function(spec_for(code), out_dir=tmp_path)
    with zipfile.ZipFile(result.zip_path) as archive:
        infos = archive.infolist()
        assert [i.filename for i in infos] == ["index.py", "lib/util.py", "run.sh"]
        assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in infos)
        assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in infos)
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in infos}
        assert modes == {"index.py": 0o644, "lib/util.py": 0o644, "run.sh": 0o755}
        assert archive.read("lib/util.py") == b"X = 1\n"
    assert result.files == ("index.py", "lib/util.py", "run.sh")


def test_content_change_changes_checksum(code: Path, tmp_path: Path) -> None:
    before = package_function(spec_for(code), out_dir=tmp_path)
    (code / "lib" / "util.py").write_text("X = 2\n")
    after = package_function(spec_for(code), out_dir=tmp_path)
    assert before.crc64 != after.crc64 and before.sha256 != after.sha256


# --- exclusions --------------------------------------------------------------------------------

def test_default_exclusions(code: Path, tmp_path: Path) -> None:
    (code / "__pycache__").mkdir()
    (code / "__pycache__" / "index.cpython-311.pyc").write_bytes(b"x")
    (code / "lib" / "old.pyc").write_bytes(b"x")
    (code / ".git").mkdir()
    (code / ".git" / "HEAD").write_text("ref")
    assert names(package_function(spec_for(code), out_dir=tmp_path).zip_path) == [
        "index.py", "lib/util.py", "run.sh"]


def test_fcignore_patterns(code: Path, tmp_path: Path) -> None:
    (code / "tests").mkdir()
    (code / "tests" / "test_x.py").write_text("")
    (code / "notes.md").write_text("")
    (code / "README.md").write_text("")
    (code / ".fcignore").write_text("# comment\ntests/\n*.md\n!README.md\nrun.sh\n")
    assert names(package_function(spec_for(code), out_dir=tmp_path).zip_path) == [
        ".fcignore", "README.md", "index.py", "lib/util.py"]


# --- refusals ----------------------------------------------------------------------------------

def test_symlink_inside_is_followed(code: Path, tmp_path: Path) -> None:
    (code / "alias.py").symlink_to(code / "lib" / "util.py")
    (code / "libs").symlink_to(code / "lib", target_is_directory=True)
    result = package_function(spec_for(code), out_dir=tmp_path)
    assert "alias.py" in result.files and "libs/util.py" in result.files


def test_symlink_escaping_the_code_dir_is_refused(code: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    (code / "leak.txt").symlink_to(secret)
    with pytest.raises(InvalidInputError, match=r"code/leak.txt is a symlink to .*secret.txt, "
                                                r"outside the code directory"):
        package_function(spec_for(code), out_dir=tmp_path / "out")
    assert not (tmp_path / "out" / "Fn.zip").exists()


def test_size_limit(code: Path, tmp_path: Path) -> None:
    (code / "blob.bin").write_bytes(os.urandom(4096))
    with pytest.raises(InvalidInputError, match=r"is [\d,]+ bytes, over the 1,000-byte limit"):
        package_function(spec_for(code), out_dir=tmp_path, max_zip_bytes=1000)


@pytest.mark.parametrize(("handler", "path"), [
    ("index.handler", "index.py"),
    ("pkg.mod.handler", "pkg/mod.py"),
    ("src/main.handler", "src/main.py"),
    ("src/pkg.mod.run", "src/pkg/mod.py"),
])
def test_handler_resolution(tmp_path: Path, handler: str, path: str) -> None:
    assert handler_files(handler)[0] == path
    root = tmp_path / "c"
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text("def handler(e, c): pass\n")
    assert path in package_function(spec_for(root, handler), out_dir=tmp_path).files


def test_missing_handler_module(code: Path, tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"handler 'main\.handler' needs main\.py"):
        package_function(spec_for(code, "main.handler"), out_dir=tmp_path)


def test_handler_excluded_by_fcignore(code: Path, tmp_path: Path) -> None:
    (code / ".fcignore").write_text("index.py\n")
    with pytest.raises(InvalidInputError, match=r"needs index\.py"):
        package_function(spec_for(code), out_dir=tmp_path)


def test_missing_code_dir(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match=r"code directory .* does not exist"):
        package_function(spec_for(tmp_path / "gone"), out_dir=tmp_path)


# --- requirements.txt --------------------------------------------------------------------------

def make_wheel(directory: Path, name: str = "tinydep", version: str = "1.0") -> Path:
    """A minimal pure-Python wheel, built by hand (no network, no build backend)."""
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": b"VALUE = 42\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                         b"Tag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = directory / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel


@pytest.mark.slow
def test_requirements_installed_offline_from_local_wheel(code: Path, tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    make_wheel(wheels)
    (code / "requirements.txt").write_text("tinydep==1.0\n")
    args = ["--no-index", "--find-links", str(wheels)]
    first = package_function(spec_for(code), out_dir=tmp_path / "a", pip_args=args)
    assert "tinydep/__init__.py" in first.files
    assert "tinydep-1.0.dist-info/METADATA" in first.files
    with zipfile.ZipFile(first.zip_path) as archive:
        assert archive.read("tinydep/__init__.py") == b"VALUE = 42\n"
    second = package_function(spec_for(code), out_dir=tmp_path / "b", pip_args=args)
    assert first.zip_path.read_bytes() == second.zip_path.read_bytes()


def test_pip_command_line_and_failure(code: Path, tmp_path: Path) -> None:
    (code / "requirements.txt").write_text("nothing-here==9\n")
    calls: list[list[str]] = []

    def failing_pip(argv: Sequence[str]) -> tuple[int, str]:
        calls.append(list(argv))
        return 1, "ERROR: No matching distribution found for nothing-here==9\n"

    with pytest.raises(OperationError, match="pip could not install requirements.txt "
                                             r"\(exit 1\): ERROR: No matching distribution"):
        package_function(spec_for(code), out_dir=tmp_path, pip=failing_pip)
    (argv,) = calls
    assert argv[:2] == ["install", "--target"]
    assert argv[3:5] == ["-r", str(code / "requirements.txt")]
    assert "--no-compile" in argv


def test_own_files_win_over_dependencies(code: Path, tmp_path: Path) -> None:
    (code / "requirements.txt").write_text("x\n")

    def fake_pip(argv: Sequence[str]) -> tuple[int, str]:
        target = Path(argv[argv.index("--target") + 1])
        (target / "index.py").write_text("dependency copy\n")
        (target / "dep.py").write_text("D = 1\n")
        return 0, ""

    result = package_function(spec_for(code), out_dir=tmp_path, pip=fake_pip)
    with zipfile.ZipFile(result.zip_path) as archive:
        assert archive.read("index.py").startswith(b"def handler")
        assert archive.read("dep.py") == b"D = 1\n"

