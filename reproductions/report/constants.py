"""The check modules' own constants, for the report's parameter table.

Every module-level constant of a paper's theory room (an UPPER_CASE name bound to a number, a string,
a bool, or a tuple or list of them) is listed with its value and the comment that says where it comes
from: the comment on its line, or the comment lines right above it. A constant whose note cites the
paper (a seed line `L123`, `seeds/`, an equation) is marked `paper`; any other is a `default`, and one
without a note says so. Read from the source, so a new constant is reported without registering it.
"""

from __future__ import annotations

import ast
import importlib
import io
import pkgutil
import re
import tokenize
from pathlib import Path
from typing import Any

from dpverify.theory.papers import room_of

CITES_PAPER = re.compile(r"\b(L\d+|seeds/\d+|v[01]:L\d+|eq\. ?\(\d+|Theorem|Lemma|Assumption|Fig\. ?\d|Table)")
NO_NOTE = "no reason given in the code"


def _comments(source: str) -> dict[int, str]:
    """Line number -> the text of the comment on that line."""
    return {token.start[0]: token.string.lstrip("#").strip()
            for token in tokenize.generate_tokens(io.StringIO(source).readline) if token.type == tokenize.COMMENT}


def _note(node: ast.stmt, comments: dict[int, str], lines: list[str]) -> str:
    own = [comments[line] for line in range(node.lineno, node.end_lineno + 1) if line in comments]
    above, line = [], node.lineno - 1
    while line >= 1 and lines[line - 1].lstrip().startswith("#"):
        above.insert(0, comments.get(line, ""))
        line -= 1
    return " ".join(above + own).strip()


def _shown(value: Any) -> Any:
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)) and all(isinstance(item, (bool, int, float, str)) for item in value):
        return list(value)
    return None


def module_constants(module_name: str) -> list[dict[str, Any]]:
    module = importlib.import_module(module_name)
    source = Path(module.__file__).read_text()
    comments, lines = _comments(source), source.splitlines()
    rows = []
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            names = [target] if isinstance(target, ast.Name) else target.elts if isinstance(target, ast.Tuple) else []
            for name in (n.id for n in names if isinstance(n, ast.Name)):
                if not name.isupper() or name.startswith("_") or name == "PAPER":
                    continue
                value = _shown(getattr(module, name, None))
                if value is None:
                    continue
                note = _note(node, comments, lines)
                rows.append({"name": name, "value": value, "module": module_name.rsplit(".", 1)[-1],
                             "source": "paper" if CITES_PAPER.search(note) else "default", "note": note or NO_NOTE})
    return rows


def room_constants(paper_id: str) -> list[dict[str, Any]]:
    """Every constant of the paper's theory room, module by module."""
    package = importlib.import_module(f"dpverify.theory.{room_of(paper_id)}")
    return [row for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name)
            if info.name != "claims"
            for row in module_constants(f"{package.__name__}.{info.name}")]
