"""The claim model: Claim -> Check -> CheckResult (verdict + evidence) -> ClaimResult.

A claim is one statement of a paper (lemma, theorem, corollary, assumption, a statement about a
figure). It carries one or more checks; each check returns a verdict with its evidence. A claim
that cannot be checked keeps its place with `not-run` and the reason: nothing is silently dropped.
"""

from __future__ import annotations

import enum
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dpverify.algorithms.core.errors import DpverifyError
from dpverify.theory.execution import CheckContext, ParametersNotSupplied
from dpverify.theory.rules import Rule, Verdict


class Method(enum.StrEnum):
    SYMBOLIC = "symbolic"          # sympy: identities, inequalities, derivations
    GROUND_TRUTH = "ground-truth"  # CVXPY with an optimality certificate
    STATISTICAL = "statistical"    # tests with stated confidence and power
    NUMERICAL = "numerical"        # deterministic numeric checks on actual instances
    AUDIT = "audit"                # empirical privacy lower bounds
    INDEPENDENT = "independent"    # cross-check against an independent library


@dataclass(frozen=True)
class Evidence:
    """What a check found: one line a reader can act on, the numbers behind it, optionally a figure
    (a matplotlib Figure produced by the check; the report embeds it)."""

    summary: str
    values: Mapping[str, Any] = field(default_factory=dict)
    figure: Any = None


@dataclass(frozen=True)
class Measurement:
    """What a check measured, before any decision: one line computed from the numbers, the numbers
    (the keys its rule reads, with their uncertainty), what the paper states, the parameters used
    with their provenance (name -> {"value", "source", "note"}), and optionally a figure."""

    summary: str
    values: Mapping[str, Any] = field(default_factory=dict)
    paper: str = ""
    parameters: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    figure: Any = None


@dataclass(frozen=True)
class CheckResult:
    check: str
    method: Method
    verdict: Verdict
    evidence: Evidence
    seconds: float = 0.0
    rule: Rule | None = None
    paper: str = ""
    parameters: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Check:
    """A named procedure that measures (part of) a claim; its rule decides.

    `run(context)` returns a Measurement, which `rule` turns into the verdict. `needs` names the
    experiments the check reads from `context.experiments` (an entry that is a tuple needs any one of
    them): when one was not reproduced in this run, the harness reports not-run with the reason and
    does not call `run`. A check that reads the parameters of an experiment the run did not supply is
    not-run too (ParametersNotSupplied). (Checks not yet moved to a rule return `(verdict, evidence)` themselves and
    declare no rule.)
    """

    name: str
    method: Method
    run: Callable[[CheckContext], Measurement | tuple[Verdict, Evidence]]
    description: str = ""
    rule: Rule | None = None
    needs: tuple[str | tuple[str, ...], ...] = ()

    def execute(self, context: CheckContext) -> CheckResult:
        started = time.perf_counter()
        missing = [need if isinstance(need, str) else " or ".join(need) for need in self.needs
                   if not any(e in context.experiments for e in ((need,) if isinstance(need, str) else need))]
        if missing:
            reason = f"{', '.join(missing)} not reproduced in this run (`dpverify reproduce` checks it)"
            return CheckResult(self.name, self.method, Verdict.NOT_RUN, Evidence(reason), 0.0, self.rule)
        try:
            outcome = self.run(context)
            if isinstance(outcome, Measurement):
                if self.rule is None:
                    raise TypeError("the check returned a measurement but declares no rule")
                verdict, evidence = self.rule.decide(outcome), Evidence(outcome.summary, outcome.values, outcome.figure)
            else:
                verdict, evidence = outcome
                outcome = Measurement(evidence.summary)
        except ParametersNotSupplied as missing:
            return CheckResult(self.name, self.method, Verdict.NOT_RUN, Evidence(str(missing)), 0.0, self.rule)
        except Exception as error:  # a crashing check is a harness error, reported, never a verdict
            raise CheckCrashed(f"check {self.name!r} crashed: {error}\n{traceback.format_exc()}") from error
        return CheckResult(self.name, self.method, Verdict(verdict), evidence, time.perf_counter() - started,
                           self.rule, outcome.paper, outcome.parameters)


class CheckCrashed(RuntimeError):
    """A check raised: this is a harness bug, not a finding about the paper."""


@dataclass(frozen=True)
class Claim:
    id: str                      # "<paper>/<kind>-<name>", e.g. "zcdp-nfl/lemma-1"
    kind: str                    # lemma, theorem, corollary, assumption, equation, experiment, headline
    seed_line: str               # e.g. "L118-L120" of the paper's seed file
    title: str
    statement: str               # the claim, in short, as the paper states it
    checks: tuple[Check, ...] = ()
    not_run_reason: str = ""     # required when there is no check

    def __post_init__(self) -> None:
        if not self.checks and not self.not_run_reason:
            raise ValueError(f"claim {self.id} has no check and no reason why it is not run")


@dataclass(frozen=True)
class Paper:
    id: str
    title: str
    seed_file: str
    claims: tuple[Claim, ...]

    def claim(self, claim_id: str) -> Claim:
        for claim in self.claims:
            if claim.id == claim_id or claim.id.split("/", 1)[1] == claim_id:
                return claim
        known = ", ".join(c.id for c in self.claims)
        raise UnknownClaimError(f"unknown claim {claim_id!r} for paper {self.id!r}; known claims: {known}")


class UnknownClaimError(DpverifyError, KeyError):
    def __str__(self) -> str:  # KeyError quotes its message; show it plainly
        return str(self.args[0])


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    results: tuple[CheckResult, ...]

    @property
    def verdict(self) -> Verdict:
        return combine_verdicts([r.verdict for r in self.results])

    @property
    def summary(self) -> str:
        if not self.results:
            return self.claim.not_run_reason
        return " | ".join(f"{r.check}: {r.evidence.summary}" for r in self.results)


def combine_verdicts(verdicts: list[Verdict]) -> Verdict:
    """A claim is refuted if any check refutes it, confirmed only if every check confirms it;
    a mix of confirmed and not-run is inconclusive (partly checked), never confirmed."""
    if not verdicts:
        return Verdict.NOT_RUN
    if Verdict.REFUTED in verdicts:
        return Verdict.REFUTED
    if all(v == Verdict.CONFIRMED for v in verdicts):
        return Verdict.CONFIRMED
    if all(v == Verdict.NOT_RUN for v in verdicts):
        return Verdict.NOT_RUN
    return Verdict.INCONCLUSIVE


def evaluate(claim: Claim, context: CheckContext) -> ClaimResult:
    """Run every check of a claim. A claim without checks yields an empty result (not-run)."""
    return ClaimResult(claim, tuple(check.execute(context) for check in claim.checks))


def holds(condition: bool, summary: str, **values: Any) -> Measurement:
    """The measurement of an exact computation, for the rule `exact`: whether it holds, the line, the numbers."""
    return Measurement(summary, {"holds": bool(condition), **values})
