"""Copied logic stays rare: pylint's duplicate-code check over the three floors (issue 33) finds at most
three pairs of places sharing six or more lines, outside the tests and the papers' claim tables (a table
of claims repeats its shape by design). Each pair that remains is named, with why, in
docs/architecture.md ("Copied on purpose")."""
from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FLOORS = ("algorithms", "theory", "reproductions")
MOST_PAIRS = 3
MIN_LINES = 6
SIMILAR = re.compile(r"Similar lines in \d+ files\n((?:==.*\n)+)")
PLACE = re.compile(r"==([\w.]+):\[(\d+):(\d+)\]")


def _scanned() -> list[str]:
    claim_tables = {REPO / "theory" / room / "claims.py" for room in (p.name for p in (REPO / "theory").iterdir())}
    return [str(path.relative_to(REPO)) for floor in FLOORS for path in sorted((REPO / floor).rglob("*.py"))
            if path not in claim_tables and "__pycache__" not in path.parts]


def duplicate_pairs(files: list[str], cwd: Path = REPO) -> list[tuple[str, str]]:
    """Every pair of places pylint reports as similar (a report naming k places is k choose 2 pairs)."""
    result = subprocess.run(
        [sys.executable, "-m", "pylint", "--disable=all", "--enable=duplicate-code", "--score=n",
         f"--min-similarity-lines={MIN_LINES}", "--ignore-comments=y", "--ignore-docstrings=y",
         "--ignore-imports=y", "--ignore-signatures=y", *files],
        cwd=cwd, capture_output=True, text=True, timeout=600)
    assert result.returncode in (0, 8), result.stderr[-2000:]   # 8: refactor messages were emitted
    pairs = []
    for block in SIMILAR.findall(result.stdout):
        places = [f"{module}:{int(start) + 1}-{end}" for module, start, end in PLACE.findall(block)]
        pairs += itertools.combinations(places, 2)
    return pairs


def test_scan_finds_a_planted_copy(tmp_path):
    """The scan can fail: the same eight-line block in two files is one pair, named by both places."""
    block = "".join(f"    total = total * {n} + len(items) - {n}\n" for n in range(8))
    for name in ("first", "second"):
        (tmp_path / f"{name}.py").write_text(f"def {name}(items):\n    total = 0\n{block}    return total\n")
    assert duplicate_pairs(["first.py", "second.py"], cwd=tmp_path) == [("first:2-11", "second:2-11")]


@pytest.mark.slow
def test_at_most_three_copied_pairs():
    pairs = duplicate_pairs(_scanned())
    assert len(pairs) <= MOST_PAIRS, "copied logic (pylint duplicate-code):\n" + "\n".join(map(" ~ ".join, pairs))
