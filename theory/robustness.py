"""How robust a verdict is to the root seed (`dpverify check --seeds K`).

A claim's randomized checks run under K root seeds (symbolic checks are deterministic and run once). Per
check, the verdicts either agree, and the check keeps its first seed's evidence with the seeds noted, or
they flip, and the check is inconclusive: a verdict that one seed gives and another takes back was decided
by the seed, not by the evidence (DESIGN.md, "What a verdict may say").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from dpverify.theory.claims import CheckResult, Claim, ClaimResult, Evidence, Method, Verdict


def randomized(claim: Claim) -> Claim | None:
    """The claim with only the checks that can depend on the root seed (all but the symbolic ones); None if none."""
    checks = tuple(check for check in claim.checks if check.method != Method.SYMBOLIC)
    return replace(claim, checks=checks) if checks else None


def _combined(seeds: Sequence[int], results: Sequence[CheckResult]) -> CheckResult:
    first = results[0]
    verdicts = [r.verdict for r in results]
    if set(verdicts) == {Verdict.NOT_RUN}:     # nothing ran under any seed: nothing to compare
        return first
    record = {"root_seeds": list(seeds), "verdicts": [str(v) for v in verdicts],
              "agreeing": max(Counter(verdicts).values())}
    values = {**first.evidence.values, "seeds": record}
    if len(set(verdicts)) == 1:
        summary = f"{first.evidence.summary} (the same verdict under {len(seeds)} root seeds)"
        return replace(first, evidence=Evidence(summary, values, first.evidence.figure))
    listing = ", ".join(f"{seed}: {verdict}" for seed, verdict in zip(seeds, verdicts))
    summary = (f"The verdict flips across root seeds ({listing}): inconclusive; more runs per seed would decide it. "
               f"Root seed {seeds[0]}: {first.evidence.summary}")
    return replace(first, verdict=Verdict.INCONCLUSIVE, evidence=Evidence(summary, values, first.evidence.figure))


def across_seeds(seeds: Sequence[int], first: ClaimResult, others: Sequence[ClaimResult]) -> ClaimResult:
    """`first`: the whole claim under seeds[0]; `others`: its `randomized` checks under seeds[1:], in order."""
    later = [iter(result.results) for result in others]      # in the order of the randomized checks
    checks = tuple(_combined(seeds, [check, *(next(results) for results in later)])
                   if check.method != Method.SYMBOLIC else check for check in first.results)
    return ClaimResult(first.claim, checks)


def seeds_agreeing(result: ClaimResult) -> dict[str, int] | None:
    """{count, agreeing} of a claim run under several seeds: the fewest seeds agreeing on any of its checks."""
    records = [r.evidence.values["seeds"] for r in result.results if "seeds" in r.evidence.values]
    if not records:
        return None
    return {"count": len(records[0]["root_seeds"]), "agreeing": min(record["agreeing"] for record in records)}
