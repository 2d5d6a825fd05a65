"""Deterministic function packages: the same sources always give a byte-identical zip.

Pipeline per function: collect the code directory's files (excluding ``__pycache__``, ``*.pyc``,
``.git`` and ``.fcignore`` patterns; symlinks inside the directory followed, escaping ones
refused) -> install ``requirements.txt`` with ``pip install --target`` into a temporary
directory -> check the handler module is in the package -> write the zip (sorted entries,
1980-01-01 timestamps, fixed modes, DEFLATE level 6, no directory entries) -> CRC-64 (FC's
``codeChecksum``) and SHA-256. See docs/packaging.md.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from deployer.checksums import crc64_ecma182
from deployer.config.specs import FunctionSpec, handler_files
from deployer.errors import InvalidInputError, NotFoundError, OperationError

__all__ = [
    "MAX_ZIP_BYTES",
    "PackageReport",
    "PackageResult",
    "PipRunner",
    "collect_files",
    "crc64_ecma182",
    "package_function",
    "package_project",
    "run_pip",
]

MAX_ZIP_BYTES = 100 * 1024 * 1024  # FC: a zip sent through the SDK/OpenAPI (fc3-api.md §8.10)
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o644
EXEC_MODE = 0o755
COMPRESS_LEVEL = 6
ALWAYS_EXCLUDED = ("__pycache__/", "*.pyc", ".git/")


class IgnoreSpec(Protocol):
    """What decides whether a path (``a/b.py``; directories end in ``/``) is left out."""

    def match_file(self, file: str) -> bool: ...


class AlwaysExcluded:
    """:data:`ALWAYS_EXCLUDED` alone, as gitignore (pathspec) reads it: a directory named
    ``__pycache__`` or ``.git`` and anything whose name ends in ``.pyc``, at any depth, with
    all they contain. Used when there is no ``.fcignore``, so packaging needs no pattern
    engine (a test checks it agrees with pathspec)."""

    def match_file(self, file: str) -> bool:
        parts = file.rstrip("/").split("/")
        directories = parts if file.endswith("/") else parts[:-1]
        return (any(part.endswith(".pyc") for part in parts)
                or any(part in ("__pycache__", ".git") for part in directories))

PipRunner = Callable[[Sequence[str]], "tuple[int, str]"]
ProgressFn = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class PackageResult:
    """One written package; ``crc64`` is FC's ``codeChecksum`` (decimal string)."""

    function_name: str
    zip_path: Path
    size: int
    crc64: str
    sha256: str
    files: tuple[str, ...]


def run_pip(argv: Sequence[str]) -> tuple[int, str]:
    """Run ``python -m pip <argv>``; returns (exit code, combined output). Blocks until done."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", *argv],
        capture_output=True, text=True, check=False,
    )
    return proc.returncode, proc.stdout + proc.stderr


def package_function(
    spec: FunctionSpec,
    *,
    out_dir: Path | None = None,
    pip: PipRunner = run_pip,
    pip_args: Sequence[str] = (),
    max_zip_bytes: int = MAX_ZIP_BYTES,
    progress: ProgressFn | None = None,
) -> PackageResult:
    """Write ``<out_dir>/<functionName>.zip`` for ``spec`` and return its size and checksums.

    ``out_dir`` defaults to a new temporary directory. A ``requirements.txt`` in the code
    directory is installed with ``pip install --target`` (``pip_args`` are appended, e.g.
    ``--no-index --find-links DIR``); this may take as long as pip does. Raises NotFoundError
    for a missing code directory, InvalidInputError for an escaping symlink, a missing
    handler module or a zip over ``max_zip_bytes``, OperationError when pip fails.
    """
    code_dir = spec.code_dir
    if spec.code_is_zip:
        return _ready_package(spec, max_zip_bytes)
    if not code_dir.is_dir():
        raise NotFoundError(f"{spec.resource}: code directory {code_dir} does not exist")
    entries = collect_files(code_dir)
    with tempfile.TemporaryDirectory(prefix="deployer-deps-") as deps_dir:
        requirements = code_dir / "requirements.txt"
        if requirements.is_file():
            if progress:
                progress(f"{spec.function_name}: installing {requirements.name}")
            _install_requirements(spec, requirements, Path(deps_dir), pip, pip_args)
            deps = collect_files(Path(deps_dir), ignore_file=None)
            entries = {**deps, **entries}  # the function's own files win over dependencies
        _check_handler(spec, entries)
        data = build_zip(entries)
    if len(data) > max_zip_bytes:
        raise InvalidInputError(
            f"{spec.resource}: the package of {spec.function_name} is {len(data):,} bytes, "
            f"over the {max_zip_bytes:,}-byte limit for a direct upload",
            hint="exclude files with .fcignore, or move large dependencies into a layer",
        )
    target = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="deployer-"))
    zip_path = _write_atomic(target / f"{spec.function_name}.zip", data)
    return PackageResult(
        function_name=spec.function_name,
        zip_path=zip_path,
        size=len(data),
        crc64=crc64_ecma182(data),
        sha256=hashlib.sha256(data).hexdigest(),
        files=tuple(sorted(entries)),
    )


def _ready_package(spec: FunctionSpec, max_zip_bytes: int) -> PackageResult:
    """``code: something.zip``: the package as it is (read, checked, checksummed)."""
    try:
        data = spec.code_dir.read_bytes()
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = tuple(sorted(n for n in archive.namelist() if not n.endswith("/")))
    except OSError as exc:
        raise NotFoundError(f"{spec.resource}: cannot read code package {spec.code_dir}: "
                            f"{exc.strerror}") from None
    except zipfile.BadZipFile:
        raise InvalidInputError(f"{spec.resource}: code package {spec.code_dir.name} is not "
                                "a zip file") from None
    candidates = handler_files(spec.handler, spec.runtime)
    if candidates and not any(c in names for c in candidates):
        raise InvalidInputError(
            f"{spec.resource}: handler {spec.handler!r} needs {candidates[0]} in the package, "
            f"but {spec.code_dir.name} has no such file", hint="fix handler in s.yaml")
    if len(data) > max_zip_bytes:
        raise InvalidInputError(
            f"{spec.resource}: the package {spec.code_dir.name} is {len(data):,} bytes, over "
            f"the {max_zip_bytes:,}-byte limit for a direct upload")
    return PackageResult(function_name=spec.function_name, zip_path=spec.code_dir,
                         size=len(data), crc64=crc64_ecma182(data),
                         sha256=hashlib.sha256(data).hexdigest(), files=names)


def collect_files(root: Path, *, ignore_file: str | None = ".fcignore") -> dict[str, Path]:
    """Archive name -> real file for every included file under ``root``, sorted by name.

    Symlinks whose target is inside ``root`` are followed; one pointing outside (or a loop)
    raises InvalidInputError naming it.
    """
    root = root.resolve()
    spec: IgnoreSpec = AlwaysExcluded()
    if ignore_file and (root / ignore_file).is_file():
        import pathspec

        user = (root / ignore_file).read_text(encoding="utf-8").splitlines()
        spec = pathspec.GitIgnoreSpec.from_lines([*ALWAYS_EXCLUDED, *user])
    found: dict[str, Path] = {}
    _walk(root, root, "", spec, found, (root,))
    return dict(sorted(found.items()))


def _walk(
    root: Path, directory: Path, prefix: str, spec: IgnoreSpec,
    found: dict[str, Path], chain: tuple[Path, ...],
) -> None:
    for entry in sorted(os.scandir(directory), key=lambda e: e.name):
        name = f"{prefix}{entry.name}"
        path = Path(entry.path)
        if not _utf8(entry.name):
            raise InvalidInputError(
                f"{root.name}/{name.encode('utf-8', 'replace').decode()} has a name that is not "
                f"valid UTF-8 ({os.fsencode(entry.name)!r}); Function Compute's zip names files "
                "in UTF-8", hint="rename the file")
        if entry.is_symlink() and _symlink_loop(path):
            raise InvalidInputError(f"{root.name}/{name} is a symlink loop")
        real = path.resolve()
        if entry.is_symlink() and not real.is_relative_to(root):
            raise InvalidInputError(
                f"{root.name}/{name} is a symlink to {os.readlink(path)}, outside the code "
                "directory",
                hint="copy the file into the code directory, or package it as a dependency",
            )
        if real.is_dir():
            if spec.match_file(f"{name}/"):
                continue
            if real in chain:
                raise InvalidInputError(f"{root.name}/{name} is a symlink loop")
            _walk(root, real, f"{name}/", spec, found, (*chain, real))
        elif real.is_file() and not spec.match_file(name):
            found[name] = real


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _symlink_loop(path: Path) -> bool:
    """Whether following ``path`` never ends (a symlink to nothing is not a loop: left out)."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def build_zip(entries: dict[str, Path]) -> bytes:
    """The zip bytes of ``entries`` (name -> file): deterministic, no directory entries."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in sorted(entries):
            path = entries[name]
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.create_system = 3  # Unix, so external_attr carries the mode
            mode = EXEC_MODE if os.access(path, os.X_OK) else FILE_MODE
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise InvalidInputError(f"cannot read {path}: {exc.strerror}") from None
            archive.writestr(info, data, compresslevel=COMPRESS_LEVEL)
    return buffer.getvalue()


def _check_handler(spec: FunctionSpec, entries: dict[str, Path]) -> None:
    candidates = handler_files(spec.handler, spec.runtime)
    if candidates and not any(c in entries for c in candidates):
        raise InvalidInputError(
            f"{spec.resource}: handler {spec.handler!r} needs {candidates[0]} in the package, "
            f"but {spec.code_dir.name}/ has no such file",
            hint="fix handler in s.yaml, or check .fcignore does not exclude the module",
        )


def _install_requirements(
    spec: FunctionSpec, requirements: Path, target: Path, pip: PipRunner,
    pip_args: Sequence[str],
) -> None:
    argv = [
        "install", "--target", str(target), "-r", str(requirements), "--no-compile",
        "--no-input", "--disable-pip-version-check", "--quiet", *pip_args,
    ]
    code, output = pip(argv)
    if code != 0:
        last = [line for line in output.strip().splitlines() if line.strip()][-3:]
        raise OperationError(
            f"{spec.resource}: pip could not install {requirements.name} (exit {code})"
            + (": " + " / ".join(last) if last else ""),
            hint="check the requirement names and versions, and that the index is reachable",
        )


def _write_atomic(path: Path, data: bytes) -> Path:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".zip.partial")
        partial.write_bytes(data)
        partial.replace(path)
    except OSError as exc:
        raise OperationError(f"cannot write {path}: {exc}") from None
    return path


@dataclass(frozen=True, slots=True)
class PackageReport:
    """The packages of every function in a manifest, in s.yaml order."""

    packages: tuple[PackageResult, ...]
    out_dir: Path


def package_project(
    functions: Sequence[FunctionSpec],
    *,
    out_dir: Path,
    pip: PipRunner = run_pip,
    progress: ProgressFn | None = None,
) -> PackageReport:
    """Package each function into ``out_dir`` (see :func:`package_function`)."""
    results = []
    for spec in functions:
        if progress:
            progress(f"Packaging {spec.function_name} from {spec.code_dir.name}/")
        results.append(package_function(spec, out_dir=out_dir, pip=pip, progress=progress))
    return PackageReport(tuple(results), out_dir)
