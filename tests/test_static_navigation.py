"""The contributor set-up of the README ("Contributor set-up") resolves statically: after the strict editable
install (`--config-settings editable_mode=strict`, a tree of links into the checkout) an editor's go-to-definition
(jedi) finds `dpverify.*` in the checkout's files, and plain `lint-imports` finds the floors. setuptools' default
editable mode installs an import hook that only a running interpreter follows: there these tests fail, saying so."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import dpverify
from tests.package_tree import FLOORS, PACKAGE_ROOT

REPO = Path(__file__).resolve().parents[1]
REINSTALL = ('reinstall from the checkout root as the README\'s "Contributor set-up" says: '
             'python -m pip install -e ".[test]" --config-settings editable_mode=strict')


def how_installed() -> str:
    """One sentence on how dpverify is installed, for the failure messages (from pip's record of the install: the
    checkout's own dpverify.egg-info, found first from its root, has none)."""
    installed = [dist for dist in metadata.distributions(name="dpverify") if dist.read_text("RECORD") is not None]
    if not installed:
        return "dpverify is not installed by pip (imported from sys.path)"
    files = [str(file) for file in installed[0].files or ()]
    if any(name.startswith("__editable___") and name.endswith("_finder.py") for name in files):
        return ("dpverify is installed in setuptools' default editable mode: an import hook "
                "(__editable___*_finder.py) that static tools (jedi, import-linter) cannot follow")
    if not any(name.startswith("__editable__.") and name.endswith(".pth") for name in files):
        return f"dpverify is installed as a regular package ({Path(dpverify.__file__).parent}), not from this checkout"
    return f"dpverify is installed in the strict editable mode, from {Path(dpverify.__file__).parent}"


def test_jedi_goes_to_the_checkouts_definition():
    try:
        import jedi
    except ImportError:
        pytest.fail(f"no jedi (the editors' go-to-definition; in the test extra): {REINSTALL}")
    snippet = "from dpverify.theory.rules import Rule\n"
    script = jedi.Script(snippet, path=str(REPO / "snippet.py"), project=jedi.Project(str(REPO)),
                         environment=jedi.create_environment(sys.executable, safe=False))
    found = script.goto(1, snippet.index("Rule"), follow_imports=True)
    paths = [Path(name.module_path).resolve() for name in found if name.module_path is not None]
    assert REPO / "theory" / "rules.py" in paths, (
        f"jedi's goto on dpverify.theory.rules.Rule found {[str(p) for p in paths] or 'nothing'}: "
        f"{how_installed()}; {REINSTALL}")


def test_plain_lint_imports_keeps_the_contracts():
    """`lint-imports` from the checkout's root, on pyproject's [tool.importlinter] (--no-cache only keeps it from
    writing .import_linter_cache/ into the checkout)."""
    command = Path(sys.executable).with_name("lint-imports")
    command = str(command) if command.exists() else shutil.which("lint-imports")
    assert command, "no lint-imports (import-linter's CLI): pip install -e '.[test]'"
    result = subprocess.run([command, "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=600,
                            env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"})
    assert result.returncode == 0, (
        f"lint-imports exited {result.returncode}: {how_installed()}; {REINSTALL}\n"
        f"{result.stdout[-3000:]}{result.stderr[-2000:]}")
    assert " 0 broken" in result.stdout, result.stdout[-3000:]


def test_the_strict_install_is_not_stale():
    """A strict install links the files that were there when it ran: a module or TOML file added since is not
    importable, a removed one leaves a dangling link, until the install is rerun."""
    tree = Path(dpverify.__file__).parent   # unresolved: the link tree's dpverify/, or the checkout's package root
    if not (tree / "__init__.py").is_symlink():
        pytest.skip(f"not a strict editable install ({how_installed()}): the tests above say how to reinstall")
    wanted = {Path(name) for name in os.listdir(REPO / PACKAGE_ROOT) if name.endswith(".py")}
    for floor in FLOORS:
        for init in (REPO / floor).rglob("__init__.py"):
            folder = init.parent.relative_to(REPO)
            if folder.parts[:2] == PACKAGE_ROOT.parts:
                continue
            wanted |= {folder / file.name for file in init.parent.iterdir()
                       if file.suffix in (".py", ".toml") or file.name.endswith(".schema.json")}
    missing = sorted(str(name) for name in wanted if not (tree / name).exists())
    dangling = sorted(str(link.relative_to(tree)) for link in tree.rglob("*")
                      if link.is_symlink() and not link.exists())
    assert not missing and not dangling, (
        f"the strict editable install ({tree}) is older than the checkout: not installed {missing}, "
        f"removed from the checkout {dangling}; {REINSTALL}")
