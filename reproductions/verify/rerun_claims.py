"""`dpverify verify`, part d: the paper's claims that run the algorithm, re-run on the user's implementation.

An experiment whose tasks run the algorithm through the paper's contract declares the parameter
`implementation` (theory/door/implementations.py); a check that runs the algorithm itself declares
`runs_algorithm` and runs `context.implementation`. For each claim, the checks that read such an
experiment or run the algorithm are run twice: on the experiment as the reference ran it, and on the same experiment with the user's
implementation in its place (same parameters, same root seed, the user's code and source digest in the
cache key). The two verdicts are shown side by side. A claim *diverges* when the implementation's runs
refute it and the reference's do not (they confirm it, or cannot decide it, e.g. on a degenerate instance
where only a refutation is evidence); verify counts that as a failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import pandas as pd

from dpverify.algorithms.core.errors import DpverifyError
from dpverify.reproductions.data.datasets import availability
from dpverify.reproductions.run.check_cache import CheckCache
from dpverify.reproductions.run.experiments import Experiment, experiments_of
from dpverify.reproductions.run.params import ExperimentConfig, Parameter
from dpverify.reproductions.run.runner import Runner
from dpverify.theory.claims import CheckResult, Claim, ClaimResult, Evidence, Verdict
from dpverify.theory.door.implementations import implementation_value, in_process_only, isolated
from dpverify.theory.door.isolation import DEFAULT_TIMEOUT
from dpverify.theory.execution import CheckContext
from dpverify.theory.papers import get_paper

IMPLEMENTATION = "implementation"   # the experiment parameter that names the implementation its tasks run
# verify's sizes, where they differ from the profile's: it compares the user's code (often a per-agent loop) with
# the reference at the same values, so it may run smaller than the report, whose quick profile keeps dp-recal's
# PLF 500 because the paper-level verdicts of its figures turn on it (`verify dp-recal`, cold, 2 cores at load 2-4,
# 2026-11-28: 2 min 12 s at these sizes, 8 min 14 s at the report's)
VERIFY_SIZES = {"dp-recal": {"plf": 100, "datasets": ["ijcnn1", "cifar10"]}}


def verify_config(experiment: Experiment, profile: str) -> ExperimentConfig:
    """The experiment as verify runs it: an experiment verify re-runs (it declares IMPLEMENTATION) takes its paper's
    VERIFY_SIZES in place of the profile's values; any other is the profile's."""
    config = experiment.config(profile)
    sizes = VERIFY_SIZES.get(experiment.paper, {}) if IMPLEMENTATION in config.parameters else {}
    sized = {name: Parameter(name, value, "default", f"dpverify verify's size ({profile} profile: "
                             f"{config.parameters[name].value!r})", profile=True)
             for name, value in sizes.items() if name in config.parameters and config.parameters[name].value != value}
    return replace(config, parameters={**config.parameters, **sized})


def verify_parameters(paper: str, profile: str) -> dict:
    """parameters_of, with every experiment at verify's sizes: what the checks read is what the tasks ran."""
    return {experiment.id: verify_config(experiment, profile).as_parameters() for experiment in experiments_of(paper)}


@dataclass(frozen=True)
class ClaimComparison:
    """One claim (restricted to its checks that run the algorithm) on the reference's and on the
    implementation's runs."""

    reference: ClaimResult
    implementation: ClaimResult

    @property
    def claim(self) -> Claim:
        return self.reference.claim

    @property
    def diverges(self) -> bool:
        # the refutation is the implementation's: the reference's runs, same parameters and seed, show none
        return (self.implementation.verdict == Verdict.REFUTED
                and self.reference.verdict in (Verdict.CONFIRMED, Verdict.INCONCLUSIVE))

    def line(self) -> str:
        mark = "  <- diverges" if self.diverges else ""
        return (f"{self.claim.id}  reference {self.reference.verdict}, implementation {self.implementation.verdict}"
                f"{mark}: {self.implementation.summary}")


def rerunnable(paper: str, profile: str) -> list[Experiment]:
    """The paper's experiments whose tasks run an implementation through the contract."""
    return [e for e in experiments_of(paper) if IMPLEMENTATION in e.config(profile).parameters]


def _needed(check) -> set[str]:
    return {e for need in check.needs for e in ((need,) if isinstance(need, str) else need)}


def claims_on(paper: str, experiments: set[str]) -> list[Claim]:
    """The paper's claims with a check that reads one of `experiments` or runs the algorithm itself
    (Check.runs_algorithm), each keeping only those checks."""
    kept = []
    for claim in get_paper(paper).claims:
        checks = tuple(check for check in claim.checks if check.runs_algorithm or _needed(check) & experiments)
        if checks:
            kept.append(replace(claim, checks=checks))
    return kept


def _not_run(claim: Claim, why: str) -> ClaimResult:
    return ClaimResult(claim, tuple(CheckResult(c.name, c.method, Verdict.NOT_RUN, Evidence(why), 0.0, c.rule)
                                    for c in claim.checks))


def _results(experiments: list[Experiment], profile: str, runner: Runner, seed: int,
             value: object | None) -> dict[str, pd.DataFrame]:
    """Every experiment's results; all their tasks go to the runner at once, so its workers share them."""
    tasks = {}
    for experiment in experiments:
        config = verify_config(experiment, profile)
        if value is not None:
            override = Parameter(IMPLEMENTATION, value, "default", "dpverify verify: the implementation under test")
            config = replace(config, parameters={**config.parameters, IMPLEMENTATION: override})
        tasks[experiment.id] = experiment.build_tasks(config)
    frames = iter(runner([task for group in tasks.values() for task in group], seed))
    return {name: pd.concat([next(frames) for _ in group], ignore_index=True) for name, group in tasks.items()}


def selected(paper: str, profile: str, only: tuple[str, ...] | None = None, long: bool = False
             ) -> tuple[list[Experiment], list[Claim], list[Claim]]:
    """The claims to re-run (every one whose checks read a re-runnable experiment, or only the claim ids `only`,
    with or without the paper prefix), the experiments they read, and the claims left out because their checks
    make long runs (Check.long_runs; re-run with `long` or when named in `only`); an id that is not one of them
    is an error."""
    experiments = rerunnable(paper, profile)
    claims = claims_on(paper, {e.id for e in experiments})
    skipped: list[Claim] = []
    if only is not None:
        wanted = {name if "/" in name else f"{paper}/{name}" for name in only}
        if unknown := sorted(wanted - {c.id for c in claims}):
            raise DpverifyError(f"not a claim verify re-runs: {', '.join(unknown)}; these are: "
                                f"{', '.join(c.id for c in claims) or 'none'}")
        claims = [c for c in claims if c.id in wanted]
    elif not long:
        short = [tuple(check for check in c.checks if not check.long_runs) for c in claims]
        skipped = [c for c, checks in zip(claims, short) if len(checks) < len(c.checks)]
        claims = [replace(c, checks=checks) for c, checks in zip(claims, short) if checks]
    read = {e for c in claims for check in c.checks for e in _needed(check)}
    # an experiment the left-out checks need is not run for a check that reads it only as an alternative
    # (dpdo-nc sublinear-regret reads figure-1 or long-horizon: it is decided on figure-1 alone)
    required = {need for c in claims for check in c.checks for need in check.needs if isinstance(need, str)}
    read -= {e for c in skipped for check in c.checks if check.long_runs for e in _needed(check)} - required
    return [e for e in experiments if e.id in read], claims, skipped


def compare_claims(paper: str, implementation: Callable | str, *, profile: str, seed: int, runner: Runner,
                   only: tuple[str, ...] | None = None, long: bool = False, timeout: float = DEFAULT_TIMEOUT,
                   progress: Callable[[str], None] = lambda message: None) -> tuple[ClaimComparison, ...]:
    """The `selected` claims on the reference's and the implementation's runs; only the experiments they read run."""
    experiments, claims, _ = selected(paper, profile, only, long)
    if not claims:
        return ()
    value = implementation_value(implementation, timeout)
    checks = CheckCache(runner.cache_directory)   # each context's checks are keyed on its experiments' results too
    if in_process_only(value):   # a callable handed over from Python cannot be loaded by worker processes
        runner = replace(runner, jobs=1)
    base = {"profile": profile, "root_seed": seed, "executor": runner, "parameters": verify_parameters(paper, profile),
            "datasets": availability()}
    progress(f"re-running {len(experiments)} experiment(s) of {paper} on the reference")
    reference = CheckContext(**base, experiments=_results(experiments, profile, runner, seed, None))
    progress(f"re-running them on the implementation ({len(claims)} claim(s) to compare)")
    try:
        theirs = CheckContext(**base, experiments=_results(experiments, profile, runner, seed, value), implementation=value)
    except DpverifyError as error:   # the implementation raised or returned no transcript: its claims cannot run
        why = f"the implementation failed in the experiments: {error}"
        isolated(value["spec"]).failures.append(why)   # its failure, wherever it ran (theory/door/isolation.py)
        return tuple(ClaimComparison(checks.evaluate(c, reference), _not_run(c, why)) for c in claims)
    return tuple(ClaimComparison(checks.evaluate(claim, reference),
                                 checks.evaluate(claim, theirs, {IMPLEMENTATION: value})) for claim in claims)
