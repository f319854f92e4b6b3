"""How robust a verdict is to the root seed (`dpverify check --seeds K`) and to the defaults we chose
(`dpverify reproduce --sweep EXPERIMENT/PARAM`).

A claim's randomized checks run under K root seeds (symbolic checks are deterministic and run once). Per
check, the verdicts either agree, and the check keeps its first seed's evidence with the seeds noted, or
they flip, and the check is inconclusive: a verdict that one seed gives and another takes back was decided
by the seed, not by the evidence (DESIGN.md, "What a verdict may say").

A swept default is decided like a reading the paper leaves open (claims.over_readings, the one rule): each
check that read it is re-decided at each end of its range (or each alternative); the same verdict throughout
stands, a verdict that flips is inconclusive, "depends on <parameter>", with the evidence at every value.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from dpverify.theory.claims import (
    CheckResult,
    Claim,
    ClaimResult,
    Evidence,
    Method,
    Verdict,
    combine_verdicts,
    over_readings,
)


def randomized(claim: Claim) -> Claim | None:
    """The claim with only the checks that can depend on the root seed (all but the symbolic ones); None if none."""
    checks = tuple(check for check in claim.checks if check.method != Method.SYMBOLIC)
    return replace(claim, checks=checks) if checks else None


def _not_repeated(result: CheckResult) -> list[str]:
    """The experiments a further seed's run did not reproduce, for which the check is not-run under it: `reproduce`
    re-runs under further seeds only the experiments below its CPU limit (`--seed-cpu-limit`)."""
    return list(result.evidence.values.get("outside_run", ())) if result.verdict == Verdict.NOT_RUN else []


def _combined(seeds: Sequence[int], results: Sequence[CheckResult]) -> CheckResult:
    first = results[0]
    if {r.verdict for r in results} == {Verdict.NOT_RUN}:     # nothing ran under any seed: nothing to compare
        return first
    not_repeated = sorted({e for r in results[1:] for e in _not_repeated(r)})
    kept = [(seed, r) for seed, r in zip(seeds, results) if r is first or not _not_repeated(r)]
    seeds, verdicts = [seed for seed, _ in kept], [r.verdict for _, r in kept]
    record = {"root_seeds": seeds, "verdicts": [str(v) for v in verdicts], "agreeing": max(Counter(verdicts).values()),
              **({"not_repeated": not_repeated} if not_repeated else {})}
    values = {**first.evidence.values, "seeds": record}
    if len(seeds) == 1:
        summary = (f"{first.evidence.summary} (one root seed: {', '.join(not_repeated)} not reproduced under the "
                   "further seeds)")
        return replace(first, evidence=Evidence(summary, values, first.evidence.figure))
    if len(set(verdicts)) == 1:
        summary = f"{first.evidence.summary} (the same verdict under {len(seeds)} root seeds)"
        return replace(first, evidence=Evidence(summary, values, first.evidence.figure))
    listing = ", ".join(f"{seed}: {verdict}" for seed, verdict in zip(seeds, verdicts))
    summary = (f"The verdict flips across root seeds ({listing}): inconclusive; more runs per seed would decide it. "
               f"Root seed {seeds[0]}: {first.evidence.summary}")
    return replace(first, verdict=Verdict.INCONCLUSIVE, evidence=Evidence(summary, values, first.evidence.figure))


def across_seeds(seeds: Sequence[int], first: ClaimResult, others: Sequence[ClaimResult]) -> ClaimResult:
    """`first`: the whole claim under seeds[0]; `others`: its `randomized` checks under seeds[1:], in order. A check
    that a further seed could not run for want of an experiment (`_not_repeated`) is decided on the seeds that ran
    it, and says which experiment was not repeated."""
    later = [iter(result.results) for result in others]      # in the order of the randomized checks
    checks = tuple(_combined(seeds, [check, *(next(results) for results in later)])
                   if check.method != Method.SYMBOLIC else check for check in first.results)
    return ClaimResult(first.claim, checks)


def seeds_agreeing(result: ClaimResult) -> dict[str, Any] | None:
    """{count, agreeing[, not_repeated]} of a claim run under several seeds: the fewest seeds any of its checks was
    decided under, the fewest agreeing on any of them, and the experiments not reproduced under further seeds."""
    records = [r.evidence.values["seeds"] for r in result.results if "seeds" in r.evidence.values]
    if not records:
        return None
    not_repeated = sorted({e for record in records for e in record.get("not_repeated", ())})
    return {"count": min(len(record["root_seeds"]) for record in records),
            "agreeing": min(record["agreeing"] for record in records),
            **({"not_repeated": not_repeated} if not_repeated else {})}


# ------------------------------------------------------------------ across a default's plausible range (--sweep)
DEFAULTS_LABEL = "at our defaults"   # the reading every sweep is compared with: the run at the declared values


def across_values(first: ClaimResult, swept: Sequence[tuple[str, Any, ClaimResult]]) -> ClaimResult:
    """`first`: the claim at our defaults; `swept`: (parameter "experiment/name", value, the claim re-decided with
    that parameter at that value), for every value of every swept parameter. Each check that read a swept
    parameter is decided over its values by the readings rule (claims.over_readings): the same verdict at every
    value stands, with the evidence at each; a verdict that flips is inconclusive, "depends on <parameter>"."""
    checks = []
    for index, check in enumerate(first.results):
        runs = [(name, value, result.results[index]) for name, value, result in swept if name in check.parameters]
        if not runs or check.verdict == Verdict.NOT_RUN:
            checks.append(check)
            continue
        decided = {DEFAULTS_LABEL: (check.verdict, check.evidence.summary, {})}
        decided |= {f"{name} = {value!r}": (r.verdict, r.evidence.summary, {}) for name, value, r in runs}
        names = ", ".join(dict.fromkeys(name for name, _, _ in runs))
        verdict, head, readings = over_readings(names, decided)
        for (name, value, _), label in zip(runs, list(readings)[1:]):
            readings[label] |= {"parameter": name, "value": value}
        summary = head + check.evidence.summary + "".join(f" | {label}: {r.evidence.summary}"
                                                          for label, (_, _, r) in zip(list(readings)[1:], runs))
        values = {**check.evidence.values, "sweep": {"depends_on": names, "readings": readings}}
        checks.append(replace(check, verdict=verdict, evidence=Evidence(summary, values, check.evidence.figure)))
    return ClaimResult(first.claim, tuple(checks))


def sweep_outcomes(result: ClaimResult) -> list[dict[str, Any]]:
    """Per swept parameter of a claim (across_values), the claim's verdict at each of its values, ours first (the
    worst of its checks there, claims.combine_verdicts; a check that did not read the parameter keeps its verdict
    at our defaults) and the outcome: "holds for all" (confirmed throughout), "fails for all" (refuted throughout),
    "<verdict> for all", or "depends on <parameter>"."""
    records = [check.evidence.values.get("sweep", {}).get("readings", {}) for check in result.results]
    at_defaults = [Verdict(r[DEFAULTS_LABEL]["verdict"]) if r else check.verdict
                   for r, check in zip(records, result.results)]
    values: dict[str, list[Any]] = {}
    for readings in records:
        for reading in list(readings.values())[1:]:
            if reading["value"] not in values.setdefault(reading["parameter"], []):
                values[reading["parameter"]].append(reading["value"])
    outcomes = []
    for name, swept in values.items():
        def verdict_at(value: Any) -> Verdict:
            return combine_verdicts([next((Verdict(r["verdict"]) for r in list(readings.values())[1:]
                                           if r["parameter"] == name and r["value"] == value), default)
                                     for readings, default in zip(records, at_defaults)])
        ours = next(check.parameters[name]["value"] for check in result.results if name in check.parameters)
        rows = [(ours, combine_verdicts(at_defaults))] + [(value, verdict_at(value)) for value in swept]
        kinds = {verdict for _, verdict in rows}
        outcome = ("holds for all" if kinds == {Verdict.CONFIRMED} else "fails for all" if kinds == {Verdict.REFUTED}
                   else f"{rows[0][1]} for all" if len(kinds) == 1 else f"depends on {name}")
        outcomes.append({"parameter": name, "outcome": outcome,
                         "at": [{"value": value, "verdict": str(verdict), "ours": index == 0}
                                for index, (value, verdict) in enumerate(rows)]})
    return outcomes
