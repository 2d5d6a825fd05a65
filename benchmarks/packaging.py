"""Throughput of CRC-64 (fast path vs pure-Python reference) and of deterministic packaging.

Run: python benchmarks/packaging.py   (prints a table; not part of the test suite)
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from deployer.checksums import crc64_ecma182, crc64_reference
from deployer.config.specs import FunctionSpec
from deployer.core.packaging import package_function


def _rate(fn, data: bytes) -> float:
    start = time.perf_counter()
    fn(data)
    return len(data) / (time.perf_counter() - start) / 1e6


def main() -> None:
    rows = []
    big = os.urandom(64 * 1024 * 1024)
    rows.append(("crc64 fast path (64 MiB)", f"{_rate(crc64_ecma182, big):,.0f} MB/s"))
    small = big[: 4 * 1024 * 1024]
    reference = _rate(crc64_reference, small)
    rows.append(("crc64 pure-Python reference (4 MiB)", f"{reference:,.1f} MB/s"))
    with tempfile.TemporaryDirectory() as tmp:
        code = Path(tmp) / "code"
        code.mkdir()
        (code / "index.py").write_text("def handler(event, context):\n    return 1\n")
        for i in range(500):
            (code / f"mod_{i:03}.py").write_bytes(os.urandom(2048))
        spec = FunctionSpec("fn", "cn-hangzhou", "Fn", "python3.10", "index.handler", code)
        start = time.perf_counter()
        result = package_function(spec, out_dir=Path(tmp) / "out")
        elapsed = time.perf_counter() - start
        rows.append(("package 501 files (1 MiB)", f"{elapsed * 1000:,.0f} ms, {result.size:,} B"))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    if {"-h", "--help"} & set(sys.argv):  # the docstring is the help
        print(__doc__)
        raise SystemExit(0)
    main()
