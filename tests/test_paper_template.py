"""Adding a paper is copying the template: a toy paper made from docs/paper-template in a copy of the
installed layout is listed, checked and reproduced with no other file edited."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.package_tree import FLOORS, REPO, assemble_package

TEMPLATE = REPO / "docs" / "paper-template"


@pytest.fixture(scope="module")
def toy_tree(tmp_path_factory) -> Path:
    tree = assemble_package(tmp_path_factory.mktemp("toy"))
    for floor in FLOORS:
        room = tree / "dpverify" / floor / "toy_paper"
        shutil.copytree(TEMPLATE / floor / "my_paper", room)
        for source in room.rglob("*.*"):   # filling in the template: its own files, nothing else
            source.write_text(source.read_text().replace("my_paper", "toy_paper").replace("my-paper", "toy-paper"))
    return tree


def dpverify(tree: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpverify", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tree)}, timeout=600)


def test_toy_paper_is_listed_and_checked(toy_tree, tmp_path):
    listed = dpverify(toy_tree, "list", "toy-paper", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "toy-paper/lemma-1" in listed.stdout and "experiment figure-1" in listed.stdout
    checked = dpverify(toy_tree, "check", "toy-paper", "--cache", str(tmp_path / "cache"), cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert re.search(r"toy-paper/lemma-1\s+confirmed", checked.stdout)
    assert re.search(r"toy-paper/theorem-1\s+confirmed", checked.stdout)
    assert re.search(r"toy-paper/figure-1\s+not-run\s+last vs first error: figure-1 not reproduced", checked.stdout)


def test_toy_paper_is_reproduced(toy_tree, tmp_path):
    out = tmp_path / "report"
    result = dpverify(toy_tree, "reproduce", "toy-paper", "--out", str(out), "--cache", str(tmp_path / "cache"),
                      cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    claims = {c["id"]: c for c in json.loads((out / "summary.json").read_text())["papers"]["toy-paper"]["claims"]}
    assert claims["toy-paper/figure-1"]["verdict"] == "confirmed"
    assert claims["toy-paper/figure-1"]["checks"][0]["rule"]["name"] == "exact"
