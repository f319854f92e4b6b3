"""Planting a bug into a copy of a verify example (tests/reproductions/test_verify*.py)."""

from pathlib import Path


def planted(example: Path, directory: Path, original: str, replacement: str, name: str = "buggy.py") -> Path:
    """A copy of `example` in `directory` with the one occurrence of `original` replaced."""
    source = example.read_text()
    assert source.count(original) == 1, original
    path = directory / name
    path.write_text(source.replace(original, replacement))
    return path
