"""`dpverify verify`: validate an implementation of a paper's algorithm against the paper (docs/verify.md).

The implementation goes through the paper's contract (`dpverify.algorithms.<paper>.contract`), the
same door as our reference, and the conformance checks of theory/verify/conformance.py judge it: exact
(same noise draws, same transcript), accounting, noise scale, distribution of its messages, and a
privacy audit of its own messages. Then (rerun_claims.py) the paper's claims whose checks run the
algorithm are re-run on the implementation, beside the reference's verdicts. The conformance checks are
never cached; the claims' experiments and their checks are cached (with --cache) under keys that hold the
implementation's source digest, so no implementation can receive another's results.

Exit status of the command: 0 when no check refutes conformance and no claim diverges from the reference,
3 otherwise (the first failing check, or diverging claim, is named in one line), 2 on bad input (an implementation that cannot be loaded, an unknown
paper), 1 on a harness error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from dpverify.algorithms.core.errors import DpverifyError, ImplementationError
from dpverify.reproductions.run.runner import Runner
from dpverify.reproductions.verify.rerun_claims import ClaimComparison, compare_claims, selected, verify_parameters
from dpverify.theory.claims import ClaimResult, NothingToMeasure, Verdict, evaluate
from dpverify.theory.door.implementations import (  # noqa: F401 (load_implementation, load_object: API)
    ImplementationNotFound,
    implementation_value,
    isolated,
    load_implementation,
    load_object,
)
from dpverify.theory.door.isolation import DEFAULT_TIMEOUT, ImplementationFailed, Isolated  # noqa: F401 (API)
from dpverify.theory.execution import DEFAULT_ROOT_SEED, CheckContext
from dpverify.theory.papers import get_paper, paper_ids, room_module
from dpverify.theory.verify.conformance import (
    CHECK_LEVEL,
    CHECKS,
    Float64Required,
    Suite,
    conformance_claims,
    transcript,
)

EXIT_CONFORMS = 0
EXIT_NONCONFORMING = 3
NOISE_MODES = ("tape", "own")   # tape: draws from the rng it is given (exact conformance runs); own: its own noise


def suite_of(paper: str) -> Suite:
    get_paper(paper)   # an unknown paper raises with the known ones
    module = room_module("theory", paper, "conformance")
    if module is None:
        raise DpverifyError(f"paper {paper!r} has no conformance suite yet (theory/<room>/conformance.py); "
                            "docs/verify.md lists the papers `verify` supports")
    return module.SUITE


@dataclass(frozen=True)
class Verification:
    """The outcome of `verify`: one ClaimResult per conformance claim."""

    paper: str
    implementation: str
    results: tuple[ClaimResult, ...]
    claims: tuple[ClaimComparison, ...] = ()   # the paper's claims, reference vs implementation (rerun_claims.py)
    skipped: tuple[str, ...] = ()              # claims not re-run: their checks make long runs (--long re-runs them)
    failed: tuple[str, ...] = ()               # how the implementation failed (raised, exited, crashed, hung), in order

    @property
    def verdicts(self) -> dict[str, Verdict]:
        """Check name (accounting, exact, noise-scale, distribution, privacy) -> its verdict."""
        return {r.claim.id.split("conformance-", 1)[1]: r.verdict for r in self.results}

    @property
    def failures(self) -> list[ClaimResult]:
        return [r for r in self.results if r.verdict == Verdict.REFUTED]

    @property
    def divergences(self) -> list[ClaimComparison]:
        """Claims the implementation's runs refute and the reference's do not (rerun_claims.ClaimComparison)."""
        return [c for c in self.claims if c.diverges]

    @property
    def conforms(self) -> bool:
        return not self.failed and not self.failures and not self.divergences

    @property
    def exit_status(self) -> int:
        return EXIT_CONFORMS if self.conforms else EXIT_NONCONFORMING

    def lines(self) -> list[str]:
        """One line per check, one per re-run claim (both verdicts), then the outcome (the first failure named)."""
        out = [f"{r.claim.id}  {r.verdict}: {r.summary}" for r in self.results]
        out += [comparison.line() for comparison in self.claims]
        out += [f"{claim}  not re-run: its check makes many or long runs of your code (minutes for a per-agent loop); "
                "--long (or --claim) re-runs it" for claim in self.skipped]
        if self.failed:
            more = f" (and {len(self.failed) - 1} more failure(s))" if len(self.failed) > 1 else ""
            out.append(f"{self.implementation} does not conform to {self.paper}: {self.failed[0]}{more}")
        elif self.failures:
            first = self.failures[0]
            out.append(f"{self.implementation} does not conform to {self.paper}: first failing check "
                       f"{first.claim.id}: {first.results[0].evidence.summary}")
        elif self.divergences:
            first = self.divergences[0]
            out.append(f"{self.implementation} does not conform to {self.paper}: first diverging claim "
                       f"{first.claim.id} (confirmed on the reference's runs, refuted on the implementation's): "
                       f"{first.implementation.summary}")
        else:
            undecided = {verdict: [name for name, v in self.verdicts.items() if v == verdict]
                         for verdict in (Verdict.NOT_RUN, Verdict.INCONCLUSIVE)}
            named = "; ".join(f"{verdict}: {', '.join(names)}" for verdict, names in undecided.items() if names)
            out.append(f"{self.implementation} conforms to {self.paper}: no check found a deviation"
                       + (f" and {len(self.claims)} re-run claim(s) agree with the reference" if self.claims else "")
                       + (f" ({named})" if named else ""))
        return out


def _exact_needs_the_tape(context: CheckContext):
    """The exact check of an implementation that draws its own noise: not-run, with why."""
    raise NothingToMeasure("the implementation draws its own noise (--noise own): exact conformance needs dpverify's "
                           "draws; the statistical checks judge it")


def _check_names(checks: str | Sequence[str] | None, claims: bool | tuple[str, ...] | None
                 ) -> tuple[str, ...] | None:
    """None (every check), or the named checks: a comma-separated string or a sequence of names. No check is
    a selection only beside claims to re-run (True, or claim ids); with nothing at all to run it is an error,
    never a pass."""
    if checks is None:
        return None
    names = tuple(c.strip() for c in checks.split(",")) if isinstance(checks, str) else tuple(checks)
    if not all(isinstance(name, str) for name in names):
        raise DpverifyError(f"checks must be check names (strings); got {checks!r}")
    names = tuple(name.strip() for name in names if name.strip())
    if not names and not (claims is True or (isinstance(claims, tuple) and claims)):
        raise DpverifyError(f"no check selected and no claim to re-run (that would pass with nothing run); known "
                            f"checks: {', '.join(CHECKS)}")
    if unknown := sorted(set(names) - set(CHECKS)):
        raise DpverifyError(f"unknown check(s) {', '.join(unknown)}; known: {', '.join(CHECKS)}")
    return names


def _runner_of(implementation: Callable | str, timeout: float) -> Isolated:
    """The implementation's isolated runner, started: a spec is imported in its worker (theory/door/isolation.py)."""
    if isinstance(implementation, str):
        return isolated(implementation, timeout).fresh()
    if not callable(implementation):
        raise ImplementationNotFound(f"the implementation must be callable as implementation(setting, rng); got "
                                     f"{type(implementation).__name__}")
    return isolated(implementation_value(implementation, timeout)["spec"], timeout).start()


def verify(paper: str, implementation: Callable | str, *, profile: str = "quick", seed: int = DEFAULT_ROOT_SEED,
           noise: str = "tape", checks: str | Sequence[str] | None = None, claims: bool | tuple[str, ...] | None = None,
           cache: Path | None = None, jobs: int = 2, progress: bool = False, long: bool = False,
           timeout: float = DEFAULT_TIMEOUT) -> Verification:
    """Judge `implementation` (a callable `implementation(setting, rng) -> transcript`, or its `module:object`
    spec) against `paper`'s contract and claims; see the module docstring. `checks` keeps only the named
    conformance checks (CHECKS, as a comma-separated string or a sequence; default all); `claims` re-runs the
    paper's claims that run the algorithm on it (rerun_claims.py; True: all of them, a tuple of claim ids, or
    None: all of them unless `checks` selects a subset of the conformance checks), with `jobs` worker processes
    (1 for a callable, which worker processes cannot load) and, if given, the result cache `cache`. Claims whose
    checks make long runs (Check.long_runs) are re-run only with `long` or when named in `claims`; the others
    list them as skipped. The implementation runs isolated (theory/door/isolation.py), each call within `timeout`
    seconds; wherever it fails (raises, exits, crashes, hangs, returns no transcript), it does not conform."""
    if noise not in NOISE_MODES:
        raise DpverifyError(f"noise must be one of {', '.join(NOISE_MODES)}; got {noise!r}")
    checks = _check_names(checks, claims)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise DpverifyError(f"seed must be an integer >= 0; got {seed!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise DpverifyError(f"timeout must be a number of seconds > 0; got {timeout!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise DpverifyError(f"jobs must be an integer >= 1; got {jobs!r}")
    name = implementation if isinstance(implementation, str) else getattr(implementation, "__qualname__",
                                                                          repr(implementation))
    if isinstance(implementation, str) and paper in paper_ids():   # (an unknown paper is refused below, before any run)
        isolated(implementation, timeout).launch()     # its worker loads the user's module while the paper loads here
    suite = suite_of(paper)
    # the audit's lower bound at its share of the exit status's false-alarm rate (conformance.VERIFY_LEVEL)
    context = CheckContext(profile=profile, root_seed=seed, parameters=verify_parameters(paper, profile),
                           audit_confidence=1 - CHECK_LEVEL)
    if claims is None:
        claims = checks is None
    only = None if claims in (True, False) else tuple(claims)
    skipped = ()
    if claims is not False:   # an unknown claim id is an error before any work, and so is a bad cache
        skipped = tuple(c.id for c in selected(paper, profile, only, long)[2])
    try:
        function = _runner_of(implementation, timeout)    # ImplementationNotFound (bad input) before any work
        function.workers = jobs          # the conformance checks' independent runs are spread over `jobs` workers
        function.launch_team()           # which load the user's module meanwhile
        # one run first: code that cannot run, or computes in float32 (Float64Required), is told so at once
        transcript(function, suite.setting(context), np.random.default_rng(seed), suite.shapes)
    except (ImplementationNotFound, Float64Required):
        raise
    except ImplementationError as error:
        return Verification(paper, name, (), skipped=skipped, failed=(str(error),))
    runner = Runner(cache_directory=cache, jobs=jobs, show_progress=progress) if claims else None
    conformance = tuple(c for c in conformance_claims(suite, function)
                        if checks is None or c.id.split("conformance-")[1] in checks)
    if noise == "own":
        conformance = tuple(_without_exact(claim) for claim in conformance)
    results = tuple(evaluate(claim, context) for claim in tqdm(
        conformance, desc=f"verify {paper}", unit="check", leave=False, disable=None if progress else True))
    compared = ()
    if runner is not None:   # a spec, not the loaded function, so that worker processes can load it
        compared = compare_claims(paper, implementation, profile=profile, seed=seed, runner=runner, only=only,
                                  long=long, timeout=timeout,
                                  progress=(lambda line: tqdm.write(line)) if progress else (lambda line: None))
    return Verification(paper, name, results, compared, skipped, failed=tuple(function.failures))


def _without_exact(claim):
    if not claim.id.endswith("conformance-exact"):
        return claim
    return replace(claim, checks=tuple(replace(check, run=_exact_needs_the_tape) for check in claim.checks))
