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

from dpverify.algorithms.core.errors import DpverifyError, ImplementationError, NotInContract
from dpverify.theory.execution import CheckContext, Parameters, ParametersNotSupplied, record_parameter_reads
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
    with their provenance (name -> {"value", "source", "note"}; the harness adds every experiment
    parameter the check read), and optionally a figure. A measurement taken outside the claim's
    conditions (say, not at the printed sizes) names why in `outside`: it can be neither confirmed nor
    refuted, so the harness reports it inconclusive with that reason. A measurement on an instance where the
    claim could not have failed (a degenerate optimum, a vacuous bound, a surrogate baseline) names why in
    `cannot_confirm`: a refutation stands, a confirmation becomes inconclusive with that reason. One whose
    failure would not be a witness against the claim (our own attack failing to find what the paper's finds)
    names why in `cannot_refute`: a confirmation stands, a refutation becomes inconclusive."""

    summary: str
    values: Mapping[str, Any] = field(default_factory=dict)
    paper: str = ""
    parameters: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    figure: Any = None
    outside: str = ""   # why the measurement lies outside the claim's conditions (then inconclusive, whatever the rule)
    cannot_confirm: str = ""   # why this instance could not have shown the claim false (then never confirmed)
    cannot_refute: str = ""    # why a failure here would not be a witness against the claim (then never refuted)
    # the same measurement under each reading of something the paper leaves open (a law, a domain, a default):
    # the rule decides each; one verdict if they agree, else inconclusive, "depends on <depends_on>"
    readings: Mapping[str, Measurement] = field(default_factory=dict)
    depends_on: str = ""
    # the same measurement at several values of something the claim quantifies over (it states no condition on it):
    # the rule decides each; any refutation is a counterexample inside the hypotheses, a confirmation needs them all
    instances: Mapping[str, Measurement] = field(default_factory=dict)
    for_every: str = ""


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
    decision_argument: str = ""   # why the defaults it read and its decision does not (Check.decision_reads)


@dataclass(frozen=True)
class Check:
    """A named procedure that measures (part of) a claim; its rule decides.

    `run(context)` returns a Measurement, which `rule` turns into the verdict. The check declares what it
    needs, and the harness reports not-run with the reason, without calling `run`, when this run lacks it:
    - `needs`: experiments read from `context.experiments` (an entry that is a tuple needs any one of them);
    - `datasets`: real datasets (a tuple entry: any one of them). Only the datasets that the needed
      experiments' parameters request count, so a profile that runs a subset is judged on that subset.
    A check that reads the parameters of an experiment the run did not supply is not-run too
    (ParametersNotSupplied), and so is one whose inputs hold nothing to measure (NothingToMeasure), or
    whose run an implementation's contract cannot state (NotInContract).
    `runs_algorithm`: the check runs the paper's algorithm itself (not through an experiment), as
    `context.implementation` says, so `dpverify verify` re-runs it on the user's implementation.
    `long_runs`: on an implementation the check's runs take minutes of a per-agent loop (many long runs);
    `dpverify verify` re-runs it only with --long or when the claim is named (--claim), and says so.
    `decision_reads`: the parameters (names as the experiments' TOML spells them) its decision can depend on,
    when fewer than it reads; `decision_argument` says why the others cannot move the verdict (a closed form, a
    proof over every value). The others are recorded as read but not deciding, so the verdict is not said to
    hold "at our defaults" because of them. None (the default): every parameter it reads may decide.
    """

    name: str
    method: Method
    run: Callable[[CheckContext], Measurement]
    description: str = ""
    rule: Rule | None = None
    needs: tuple[str | tuple[str, ...], ...] = ()
    datasets: tuple[str | tuple[str, ...], ...] = ()
    runs_algorithm: bool = False   # runs the paper's algorithm itself, as context.implementation (`dpverify verify`)
    long_runs: bool = False        # verify re-runs it on an implementation only with --long (or --claim)
    decision_reads: tuple[str, ...] | None = None   # the parameters its decision can depend on (None: all it reads)
    decision_argument: str = ""                     # why the other parameters it reads cannot move its verdict

    def __post_init__(self):
        if (self.decision_reads is None) != (not self.decision_argument):
            raise TypeError(f"check {self.name!r}: decision_reads and decision_argument go together (the argument "
                            "says why the parameters left out cannot move the verdict)")

    def unmet(self, context: CheckContext) -> str:
        """Why this run cannot run the check ('' when it can)."""
        if missing := self.outside_run(context):
            return f"{', '.join(missing)} not reproduced in this run (`dpverify reproduce` checks it)"
        requested = {d for e in self.experiments_read(context) for d in context.parameters[e].get("datasets")}
        reasons = []
        for need in ((d,) if isinstance(d, str) else d for d in self.datasets):
            wanted = [d for d in need if not requested or d in requested]
            if not wanted:
                reasons.append(f"{' or '.join(need)}: not requested by this run's parameters")
            elif all(context.datasets.get(d, _UNKNOWN) for d in wanted):
                reasons.append("; ".join(f"{d}: {context.datasets.get(d, _UNKNOWN)}" for d in wanted))
        return "data not available: " + "; ".join(reasons) if reasons else ""

    def outside_run(self, context: CheckContext) -> list[str]:
        """The needed experiments this run did not reproduce (each "a or b" for alternatives): the check is outside
        the run's scope (`check` reproduces no figure), which a gate must not read as a regression."""
        alternatives = [(need,) if isinstance(need, str) else need for need in self.needs]
        return [" or ".join(need) for need in alternatives if not any(e in context.experiments for e in need)]

    def experiments_read(self, context: CheckContext) -> list[str]:
        """The needed experiments that this run supplied and whose parameters name datasets."""
        return [e for need in self.needs for e in ((need,) if isinstance(need, str) else need)
                if e in context.experiments and e in context.parameters and "datasets" in context.parameters[e]]

    def results_read(self, context: CheckContext) -> list[str]:
        """The needed experiments whose results this run supplied, with their parameters (a check that reads an
        experiment's results depends on every parameter of it)."""
        return [e for need in self.needs for e in ((need,) if isinstance(need, str) else need)
                if e in context.experiments and isinstance(context.parameters.get(e), Parameters)]

    def decide(self, measurement: Measurement) -> tuple[Verdict, str, Mapping[str, Any]]:
        """The rule's verdict, the evidence line and its values, with the caveats the measurement names
        (Measurement: outside, cannot_confirm, cannot_refute, instances, readings)."""
        if measurement.outside:
            return (Verdict.INCONCLUSIVE, f"Outside the claim's conditions ({measurement.outside}): inconclusive. "
                    + measurement.summary, measurement.values)
        if measurement.instances:
            decided = {name: self.decide(m) for name, m in measurement.instances.items()}
            verdict = combine_verdicts([v for v, _, _ in decided.values()])
            listing = "; ".join(f"{name}: {v}" for name, (v, _, _) in decided.items())
            summary = (f"For every {measurement.for_every} ({listing}): {verdict}. " + measurement.summary
                       + "".join(f" | {name}: {line}" for name, (_, line, _) in decided.items()))
            instances = {name: {"verdict": str(v), **values} for name, (v, _, values) in decided.items()}
            return verdict, summary, {**measurement.values, "for_every": measurement.for_every, "instances": instances}
        if measurement.readings:
            decided = {name: self.decide(m) for name, m in measurement.readings.items()}
            verdict, head, readings = over_readings(measurement.depends_on, decided)
            summary = head + measurement.summary + "".join(f" | {name}: {line}" for name, (_, line, _) in decided.items())
            return verdict, summary, {**measurement.values, "depends_on": measurement.depends_on, "readings": readings}
        verdict = Verdict(self.rule.decide(measurement))
        if verdict == Verdict.CONFIRMED and measurement.cannot_confirm:
            return (Verdict.INCONCLUSIVE, f"The rule confirms, but this instance could not have refuted the claim "
                    f"({measurement.cannot_confirm}): inconclusive. " + measurement.summary, measurement.values)
        if verdict == Verdict.REFUTED and measurement.cannot_refute:
            return (Verdict.INCONCLUSIVE, f"The rule refutes, but this is not a witness against the claim "
                    f"({measurement.cannot_refute}): inconclusive. " + measurement.summary, measurement.values)
        return verdict, measurement.summary, measurement.values

    def execute(self, context: CheckContext) -> CheckResult:
        started = time.perf_counter()
        if self.rule is None:
            raise TypeError(f"check {self.name!r} declares no rule")
        if reason := self.unmet(context):
            scope = {"outside_run": missing} if (missing := self.outside_run(context)) else {}
            return CheckResult(self.name, self.method, Verdict.NOT_RUN, Evidence(reason, scope), 0.0, self.rule)
        try:
            with record_parameter_reads() as read:
                for experiment in self.results_read(context):   # its results depend on all of its parameters
                    context.parameters[experiment].note_read(*context.parameters[experiment])
                measurement = self.run(context)
            if not isinstance(measurement, Measurement):
                raise TypeError(f"the check returned {type(measurement).__name__}, not a Measurement")
            verdict, summary, values = self.decide(measurement)
        except (ParametersNotSupplied, NothingToMeasure, NotInContract) as missing:
            return CheckResult(self.name, self.method, Verdict.NOT_RUN, Evidence(str(missing)), 0.0, self.rule)
        except ImplementationError as failed:   # a user's code failed on a claim's run (verify): not decided on it
            return CheckResult(self.name, self.method, Verdict.NOT_RUN, Evidence(f"the implementation failed: {failed}"),
                               0.0, self.rule)
        except Exception as error:  # a crashing check is a harness error, reported, never a verdict
            raise CheckCrashed(f"check {self.name!r} crashed: {error}\n{traceback.format_exc()}") from error
        parameters = {**read.provenance(), **measurement.parameters}
        if self.decision_reads is not None:
            parameters = {name: p if name.rsplit("/", 1)[-1] in self.decision_reads else {**p, "decides": False}
                          for name, p in parameters.items()}
        return CheckResult(self.name, self.method, verdict, Evidence(summary, values, measurement.figure),
                           time.perf_counter() - started, self.rule, measurement.paper, parameters,
                           self.decision_argument)


_UNKNOWN = "availability not determined in this run"


def over_readings(depends_on: str, decided: Mapping[str, tuple[Verdict, str, Mapping[str, Any]]]
                  ) -> tuple[Verdict, str, dict[str, Any]]:
    """The one rule for a verdict under several readings of something the paper leaves open (a law, a domain, a
    default's range; `decided`: reading -> (verdict, evidence line, values)): the common verdict if every reading
    gives it, else inconclusive, "depends on <depends_on>". Returns the verdict, the head of the evidence line
    (each reading's verdict) and the readings' record (each reading's verdict with its values)."""
    verdicts = {name: verdict for name, (verdict, _, _) in decided.items()}
    listing = "; ".join(f"{name}: {verdict}" for name, verdict in verdicts.items())
    agree = len(set(verdicts.values())) == 1
    head = (f"The same verdict under every reading of {depends_on} ({listing}). " if agree else
            f"Depends on {depends_on} ({listing}): inconclusive. ")
    readings = {name: {"verdict": str(verdict), **values} for name, (verdict, _, values) in decided.items()}
    return (next(iter(verdicts.values())) if agree else Verdict.INCONCLUSIVE), head, readings


class NothingToMeasure(DpverifyError):
    """Raised by a check whose declared inputs hold nothing it can measure (an experiment run without
    one of the algorithms it compares); the harness reports the check not-run with this reason."""


class CheckCrashed(RuntimeError):
    """A check raised: this is a harness bug, not a finding about the paper."""


# the kind of a statement we checked that the paper does not make (a reading it leaves open, the privacy of its
# experiments' noise where it gives none): reported as a finding beyond the paper's claims, never in its tally
FINDING = "finding"


@dataclass(frozen=True)
class Claim:
    id: str                      # "<paper>/<kind>-<name>", e.g. "zcdp-nfl/lemma-1"
    kind: str                    # lemma, theorem, corollary, assumption, equation, experiment, headline, implicit;
                                 # FINDING: a statement the paper does not make, outside its tally
    seed_line: str               # e.g. "L118-L120" of the paper's seed file
    title: str
    statement: str               # the claim, in short, as the paper states it
    checks: tuple[Check, ...] = ()
    not_run_reason: str = ""     # required when there is no check

    def __post_init__(self) -> None:
        if not self.checks and not self.not_run_reason:
            raise ValueError(f"claim {self.id} has no check and no reason why it is not run")

    @property
    def is_finding(self) -> bool:
        return self.kind == FINDING


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
