"""Registry of the papers whose claims dpverify checks. Paper modules are imported on demand."""

from __future__ import annotations

import importlib

from algorithms.errors import DpverifyError
from theory.claims import Paper

PAPER_MODULES = {
    "zcdp-nfl": "theory.papers.zcdp_nfl",
    "dp-recal": "theory.papers.dp_recal",
    "dpdo-nc": "theory.papers.dpdo_nc",
    "wang-basar": "theory.papers.wang_basar",
}


class UnknownPaperError(DpverifyError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def paper_ids() -> list[str]:
    return list(PAPER_MODULES)


def get_paper(paper_id: str) -> Paper:
    if paper_id not in PAPER_MODULES:
        raise UnknownPaperError(f"unknown paper {paper_id!r}; known papers: {', '.join(PAPER_MODULES)}")
    return importlib.import_module(PAPER_MODULES[paper_id]).PAPER
