"""Without a `.fcignore`, packaging leaves out ALWAYS_EXCLUDED by name (no pattern engine
imported); it must decide every path exactly as pathspec's gitignore rules do."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pathspec
from hypothesis import given
from hypothesis import strategies as st

from deployer.config.specs import FunctionSpec
from deployer.core.packaging import ALWAYS_EXCLUDED, AlwaysExcluded, package_function

SEGMENT = st.sampled_from(["__pycache__", ".git", "a.pyc", ".pyc", "pyc", "x.py", "git",
                           "__pycache__x", "a.pyc.bak", "lib", "_", ".gitignore", "b.PYC"])


@given(st.lists(SEGMENT, min_size=1, max_size=4), st.booleans())
def test_the_built_in_exclusions_match_gitignore_semantics(parts: list[str],
                                                            is_dir: bool) -> None:
    path = "/".join(parts) + ("/" if is_dir else "")
    expected = pathspec.GitIgnoreSpec.from_lines(ALWAYS_EXCLUDED).match_file(path)
    assert AlwaysExcluded().match_file(path) == expected, path


def test_packaging_without_fcignore_skips_the_pattern_engine(tmp_path: Path) -> None:
    code = tmp_path / "code"
    for name in ("index.py", "__pycache__/index.cpython-311.pyc", ".git/HEAD", "lib/a.pyc",
                 "lib/keep.py", "pyc/kept.txt"):
        (code / name).parent.mkdir(parents=True, exist_ok=True)
        (code / name).write_text("x = 1\n")
    sys.modules.pop("pathspec", None)
    result = package_function(FunctionSpec("fn", "cn-hangzhou", "Fn", "python3.10",
                                           "index.handler", code), out_dir=tmp_path / "out")
    assert "pathspec" not in sys.modules
    with zipfile.ZipFile(result.zip_path) as archive:
        assert archive.namelist() == ["index.py", "lib/keep.py", "pyc/kept.txt"]
