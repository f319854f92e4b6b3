"""The house: one installed package, floors that import downwards, paper rooms that never import
each other, and a package list in pyproject that names every folder."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from dpverify.theory.papers import paper_ids, room_of
from tests.package_tree import FLOORS, assemble_package

REPO = Path(__file__).resolve().parents[1]
PACKAGE_ROOT = "reproductions/package_root"   # installed as the top package `dpverify`


def source_packages() -> set[str]:
    """Every folder with an __init__.py under the three floors, as its installed name."""
    return {"dpverify." + str(init.parent.relative_to(REPO)).replace("/", ".")
            for floor in FLOORS for init in (REPO / floor).rglob("__init__.py")
            if PACKAGE_ROOT not in str(init.parent.relative_to(REPO))} | {"dpverify"}


def test_pyproject_lists_every_package():
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    missing, stale = source_packages() - listed, listed - source_packages()
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(missing)}"
    assert not stale, f"listed in pyproject.toml but no such folder: {sorted(stale)}"


def test_no_bare_floor_imports():
    """Code imports the floors as dpverify.*; a bare `algorithms` would be another PyPI package."""
    bare = re.compile(r"^\s*(from|import) (algorithms|theory|reproductions)\b", re.M)
    offenders = [str(path.relative_to(REPO)) for folder in (*FLOORS, "tests", "examples", "docs")
                 for path in (REPO / folder).rglob("*.py") if bare.search(path.read_text())]
    assert offenders == []


def _paper_contracts() -> str:
    rooms = {paper: [f"dpverify.{floor}.{room_of(paper)}" for floor in FLOORS
                     if (REPO / floor / room_of(paper) / "__init__.py").exists()] for paper in paper_ids()}
    blocks = []
    for paper, own in rooms.items():
        others = [room for other, theirs in rooms.items() if other != paper for room in theirs]
        blocks.append(f"[importlinter:contract:{paper}]\nname = {paper}'s rooms import no other paper's rooms\n"
                      f"type = forbidden\nsource_modules =\n    " + "\n    ".join(own)
                      + "\nforbidden_modules =\n    " + "\n    ".join(others) + "\n")
    return "\n".join(blocks)


def _floor_contracts() -> str:
    """pyproject's [tool.importlinter] contracts (what `lint-imports` checks), as ini sections."""
    blocks = []
    for number, contract in enumerate(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
                                      ["contracts"]):
        lines = [f"[importlinter:contract:floors-{number}]", f"name = {contract['name']}", f"type = {contract['type']}"]
        lines += [f"{key} =\n    " + "\n    ".join(value) for key, value in contract.items() if isinstance(value, list)]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def test_import_contracts(tmp_path):
    """import-linter reads packages from one folder, so it reads a copy of the installed layout."""
    tree = assemble_package(tmp_path / "tree")
    config = tmp_path / "contracts.ini"
    config.write_text("[importlinter]\nroot_package = dpverify\n\n" + _floor_contracts() + "\n" + _paper_contracts())
    assert len(paper_ids()) >= 4
    code = f"import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports({str(config)!r}, no_cache=True))"
    result = subprocess.run([sys.executable, "-c", code], cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    floor_contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert len(floor_contracts) == 3   # the floors, and the groups inside reproductions/ and theory/
    assert f"{len(floor_contracts) + len(paper_ids())} kept, 0 broken" in result.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Built from a copy of what the package needs (pyproject, README, the floors), so the build leaves
    nothing in the checkout and uses no other file."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for floor in FLOORS:
        shutil.copytree(REPO / floor, source / floor, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
                   check=True, timeout=600)
    return next(out.glob("dpverify-*.whl"))


@pytest.mark.slow
def test_wheel_has_one_top_level_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"dpverify"}
    installed = {name.rsplit("/", 1)[0].replace("/", ".") for name in names if name.endswith("/__init__.py")}
    assert installed == source_packages()
    assert any(name.endswith("zcdp_nfl/figure_1_elastic_net.toml") for name in names)


@pytest.mark.slow
def test_wheel_installs_beside_the_pypi_package_algorithms(wheel, tmp_path):
    """A fresh venv, the wheel (not editable), then PyPI's `algorithms` (a top-level module of that
    name): dpverify still lists its papers and checks a claim, from a directory outside the checkout."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python, dpverify_command = venv / "bin" / "python", venv / "bin" / "dpverify"
    subprocess.run([python, "-m", "pip", "install", "-q", str(wheel)], check=True, timeout=1200)
    subprocess.run([python, "-m", "pip", "install", "-q", "algorithms"], check=True, timeout=600)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    listed = subprocess.run([dpverify_command, "list"], cwd=outside, capture_output=True, text=True, timeout=600)
    assert listed.returncode == 0, listed.stderr
    assert all(paper in listed.stdout for paper in ("zcdp-nfl", "dp-recal", "dpdo-nc", "wang-basar"))
    checked = subprocess.run([dpverify_command, "check", "zcdp-nfl", "--claim", "lemma-1"], cwd=outside,
                             capture_output=True, text=True, timeout=600)
    assert checked.returncode == 0, checked.stderr
    assert re.search(r"zcdp-nfl/lemma-1\s+confirmed", checked.stdout)
    module = subprocess.run([python, "-c", "import algorithms, dpverify; print(algorithms.__file__)"], cwd=outside,
                            capture_output=True, text=True, timeout=60)
    assert module.returncode == 0 and "site-packages/algorithms" in module.stdout


@pytest.mark.parametrize("paper", paper_ids())
def test_every_room_has_the_same_modules(paper):
    room = room_of(paper)
    for floor, modules in {"algorithms": ("algorithm", "contract"), "theory": ("claims",),
                           "reproductions": ("experiments", "bench")}.items():
        for module in modules:
            assert (REPO / floor / room / f"{module}.py").exists(), f"{floor}/{room}/{module}.py is missing"


@pytest.mark.parametrize("paper", paper_ids())
def test_reference_implementation_fits_its_contract(paper):
    """The reference's signature accepts every parameter of the contract's __call__ the same way (name and
    kind); whatever else it takes has a default."""
    import importlib
    import inspect
    from typing import Protocol

    contract = importlib.import_module(f"dpverify.algorithms.{room_of(paper)}.contract")
    protocols = [value for value in vars(contract).values()
                 if isinstance(value, type) and issubclass(value, Protocol) and value is not Protocol
                 and value.__module__ == contract.__name__]
    assert len(protocols) == 1
    wanted = list(inspect.signature(protocols[0].__call__).parameters.values())[1:]    # without self
    offered = inspect.signature(contract.REFERENCE).parameters
    for parameter in wanted:
        assert parameter.name in offered and offered[parameter.name].kind == parameter.kind, parameter.name
    extra = [p for name, p in offered.items() if name not in {w.name for w in wanted}]
    assert all(p.default is not inspect.Parameter.empty for p in extra), [p.name for p in extra]
