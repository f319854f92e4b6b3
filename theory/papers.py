"""The papers dpverify checks, found from their rooms: a folder `theory/<room>/` with a `claims.py`
that defines `PAPER` is a paper. A paper's id is its room's name with `-` for `_` (`dp_recal` ->
`dp-recal`); the same room name is used on every floor. Adding a paper adds folders, nothing here.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil

import dpverify.theory
from dpverify.algorithms.core.errors import DpverifyError
from dpverify.theory.claims import Paper


class UnknownPaperError(DpverifyError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def room_of(paper_id: str) -> str:
    """The room (package) name of a paper on every floor."""
    return paper_id.replace("-", "_")


def paper_ids() -> list[str]:
    """Every paper with a `theory/<room>/claims.py`, sorted by id."""
    rooms = (module.name for module in pkgutil.iter_modules(dpverify.theory.__path__) if module.ispkg)
    return sorted(room.replace("_", "-") for room in rooms
                  if importlib.util.find_spec(f"dpverify.theory.{room}.claims") is not None)


def room_module(floor: str, paper_id: str, module: str):
    """`dpverify.<floor>.<room>.<module>` of a paper, or None when the paper has no such module
    (a paper without experiments or a benchmark)."""
    name = f"dpverify.{floor}.{room_of(paper_id)}.{module}"
    try:
        spec = importlib.util.find_spec(name)
    except ModuleNotFoundError:  # no room on that floor
        return None
    return importlib.import_module(name) if spec is not None else None


def get_paper(paper_id: str) -> Paper:
    known = paper_ids()
    if paper_id not in known:
        raise UnknownPaperError(f"unknown paper {paper_id!r}; known papers: {', '.join(known)}")
    paper = room_module("theory", paper_id, "claims").PAPER
    if paper.id != paper_id:
        raise UnknownPaperError(f"theory/{room_of(paper_id)}/claims.py declares paper {paper.id!r}; "
                                f"its room requires the id {paper_id!r}")
    return paper
