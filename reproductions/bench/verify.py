"""`dpverify bench`: how long `dpverify verify` takes per paper on the example of
`examples/<room>/` (issue 13's budget: 3 minutes per paper, quick profile, 2 cores). Outside a checkout
there are no examples, and the reference implementation is timed instead (said in the line)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from dpverify.reproductions.bench.papers import timed
from dpverify.reproductions.data.datasets import PROJECT_ROOT
from dpverify.reproductions.verify.command import verify
from dpverify.theory.papers import room_module, room_of

BUDGET_SECONDS = 180.0        # issue 13: verify of an example implementation within 3 minutes per paper on 2 cores
CONFORMANCE_BUDGET = 15.0     # issue 30: the conformance verdict (every check, no claim) within 15 s per paper
WARM_BUDGET = 60.0            # issue 30: the default run (checks and default claims) within 60 s on a warm cache


def implementation_of(paper: str) -> tuple[str, str]:
    """(spec, what it is): the paper's example when the checkout has it, else our reference."""
    room = room_of(paper)
    example = PROJECT_ROOT / "examples" / room / f"my_{room}.py"
    if example.is_file():
        return f"{example}:run", "example"
    return f"dpverify.algorithms.{room}.contract:REFERENCE", "reference (no example outside a checkout)"


def _budget(seconds: float, budget: float) -> str:
    return f"{seconds:.1f} s (budget {budget:g} s: {'met' if seconds <= budget else 'NOT met'})"


def run_verify_benchmarks(papers: Iterable[str], *, echo: Callable[[str], None]) -> dict[str, dict[str, float]]:
    """Wall seconds of `verify` per paper with a conformance suite (quick profile, 2 jobs): the conformance checks
    alone (claims=False, as the pytest plugin and the API default to them with a subset); the default run (every
    check and every re-run claim but those --long adds) on a cold cache; the same again on that warm cache."""
    seconds = {}
    for paper in papers:
        if room_module("theory", paper, "conformance") is None:
            continue
        spec, what = implementation_of(paper)
        conformance, result = timed(lambda: verify(paper, spec, claims=False, jobs=2))
        with tempfile.TemporaryDirectory() as cache:
            cold, full = timed(lambda: verify(paper, spec, jobs=2, cache=Path(cache)))
            warm, _ = timed(lambda: verify(paper, spec, jobs=2, cache=Path(cache)))
        seconds[paper] = {"conformance": conformance, "cold": cold, "warm": warm}
        conforms = result.conforms and full.conforms
        echo(f"verify {paper} on the {what}: conformance {_budget(conformance, CONFORMANCE_BUDGET)}; with the default "
             f"claims {_budget(cold, BUDGET_SECONDS)} cold, {_budget(warm, WARM_BUDGET)} warm; "
             f"{'conforms' if conforms else 'does NOT conform'}")
    return seconds
