"""The installed layout of dpverify, assembled in a folder from the source tree: tools that read a
package from one folder (import-linter) and tests that add a paper read this copy, never the repo."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FLOORS = ("algorithms", "theory", "reproductions")
PACKAGE_ROOT = Path("reproductions/package_root")   # installed as the top package `dpverify`


def assemble_package(destination: Path) -> Path:
    """destination/dpverify/{__init__.py, algorithms, theory, reproductions}; returns destination
    (put it first on PYTHONPATH to import this copy)."""
    package = destination / "dpverify"
    shutil.copytree(REPO / PACKAGE_ROOT, package, ignore=shutil.ignore_patterns("__pycache__"))
    for floor in FLOORS:
        shutil.copytree(REPO / floor, package / floor,
                        ignore=shutil.ignore_patterns("__pycache__", PACKAGE_ROOT.name))
    return destination
