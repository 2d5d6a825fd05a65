"""Parity with the real cloud: recorded answers replayed against the emulator (docs/parity.md)."""
