"""`dpverify bench`: how long `dpverify verify` takes per paper on the per-agent-loop example of
`examples/<room>/` (issue 13's budget: 3 minutes per paper, quick profile, 2 cores). Outside a checkout
there are no examples, and the reference implementation is timed instead (said in the line)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from dpverify.reproductions.bench import timed
from dpverify.reproductions.datasets import PROJECT_ROOT
from dpverify.reproductions.verify import verify
from dpverify.theory.papers import room_module, room_of

BUDGET_SECONDS = 180.0   # issue 13: verify of a per-agent-loop implementation within 3 minutes per paper on 2 cores


def implementation_of(paper: str) -> tuple[str, str]:
    """(spec, what it is): the paper's per-agent-loop example when the checkout has it, else our reference."""
    room = room_of(paper)
    example = PROJECT_ROOT / "examples" / room / f"my_{room}.py"
    if example.is_file():
        return f"{example}:run", "per-agent-loop example"
    return f"dpverify.algorithms.{room}.contract:REFERENCE", "reference (no example outside a checkout)"


def run_verify_benchmarks(papers: Iterable[str], *, echo: Callable[[str], None]) -> dict[str, float]:
    """Wall seconds of `verify` as it runs by default (every check and every re-run claim but those --long adds,
    quick profile, 2 jobs, no cache) per paper with a conformance suite."""
    seconds = {}
    for paper in papers:
        if room_module("theory", paper, "conformance") is None:
            continue
        spec, what = implementation_of(paper)
        seconds[paper], result = timed(lambda: verify(paper, spec, jobs=2))
        echo(f"verify {paper} on the {what}: {seconds[paper]:.1f} s, "
             f"{'conforms' if result.conforms else 'does NOT conform'} (budget {BUDGET_SECONDS:g} s: "
             f"{'met' if seconds[paper] <= BUDGET_SECONDS else 'NOT met'})")
    return seconds
