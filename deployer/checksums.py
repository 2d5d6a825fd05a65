"""CRC-64/XZ (ECMA-182 polynomial, reflected): Function Compute's ``codeChecksum``, shared by
packaging and the emulator.

Reflected polynomial ``0xC96C5795D7870F42``, initial value and final XOR all ones, output as an
unsigned decimal string (fc3-api.md §6.4). Check value: ``crc64_ecma182(b"123456789") ==
"11051210869376104954"``. The C implementation of ``crcmod`` (crcmod-plus) does the work
(hundreds of MB/s); a table-driven pure-Python loop is the fallback and the reference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = ["Crc64", "crc64", "crc64_decimal", "crc64_ecma182", "crc64_reference"]

_POLY_REFLECTED = 0xC96C5795D7870F42
_MASK = 0xFFFFFFFFFFFFFFFF


def _table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLY_REFLECTED if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_TABLE = _table()


def _python_update(data: bytes, crc: int) -> int:
    """Continue the finalised CRC ``crc`` over ``data`` (pure Python, table-driven)."""
    table = _TABLE
    value = crc ^ _MASK
    for byte in data:
        value = table[(value ^ byte) & 0xFF] ^ (value >> 8)
    return value ^ _MASK


def _fast_update() -> Callable[[bytes, int], int] | None:
    try:
        import crcmod  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - crcmod-plus is a dependency
        return None
    # crcmod takes the full polynomial (x^64 term included) and chains finalised values.
    fn: Callable[[bytes, int], int] = crcmod.mkCrcFun(
        (1 << 64) | 0x42F0E1EBA9EA3693, initCrc=0, rev=True, xorOut=_MASK
    )
    return fn


_UPDATE: Callable[[bytes, int], int] = _fast_update() or _python_update


class Crc64:
    """Incremental CRC-64/XZ: ``update()`` with chunks, then ``value`` / ``hexdigest``."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0  # the CRC of no bytes

    def update(self, data: bytes) -> Crc64:
        self.value = _UPDATE(data, self.value)
        return self

    def decimal(self) -> str:
        """The checksum as FC prints it: an unsigned decimal string."""
        return str(self.value)


def crc64_ecma182(data: bytes | Iterable[bytes]) -> str:
    """The CRC-64/XZ of ``data`` (bytes, or an iterable of chunks) as a decimal string."""
    crc = Crc64()
    for chunk in [data] if isinstance(data, (bytes, bytearray, memoryview)) else data:
        crc.update(bytes(chunk))
    return crc.decimal()


def crc64_reference(data: bytes) -> str:
    """The pure-Python table-driven CRC (slow; for cross-checking the fast path)."""
    return str(_python_update(data, 0))


def crc64(data: bytes, crc: int = 0) -> int:
    """CRC-64/XZ of ``data`` as an int; pass a previous result as ``crc`` to continue."""
    return _UPDATE(data, crc)


def crc64_decimal(data: bytes) -> str:
    """``crc64(data)`` as FC's ``codeChecksum``: ``b"123456789"`` → ``"11051210869376104954"``."""
    return str(crc64(data))
