"""The library layer: use cases that return result dataclasses and never print."""
