"""`dpverify verify`: validate an implementation of a paper's algorithm against the paper (docs/verify.md).

The implementation goes through the paper's contract (`dpverify.algorithms.<paper>.contract`), the
same door as our reference, and the conformance checks of theory/conformance.py judge it: exact
(same noise draws, same transcript), accounting, noise scale, distribution of its messages, and a
privacy audit of its own messages. Nothing is cached: every verification runs the implementation it
was given, so no implementation can receive another's results.

Exit status of the command: 0 when no check refutes conformance, 3 when one does (the first failing
check is named in one line), 2 on bad input (an implementation that cannot be loaded, an unknown
paper), 1 on a harness error.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from dpverify.algorithms.core.errors import DpverifyError
from dpverify.reproductions.experiments import parameters_of
from dpverify.theory.claims import ClaimResult, NothingToMeasure, Verdict, evaluate
from dpverify.theory.conformance import CHECKS, Suite, conformance_claims
from dpverify.theory.execution import DEFAULT_ROOT_SEED, CheckContext
from dpverify.theory.papers import get_paper, room_module

EXIT_CONFORMS = 0
EXIT_NONCONFORMING = 3
NOISE_MODES = ("tape", "own")   # tape: draws from the rng it is given (exact conformance runs); own: its own noise


class ImplementationNotFound(DpverifyError):
    """`--impl` does not name a loadable callable."""


def load_object(spec: str) -> Any:
    """`package.module:object` or `path/to/file.py:object` (a dotted object path is followed)."""
    target, _, attribute = spec.rpartition(":")
    if not target or not attribute:
        raise ImplementationNotFound(f"expected module:object or path/to/file.py:object; got {spec!r}")
    try:
        if target.endswith(".py"):
            path = Path(target).resolve()
            if not path.is_file():
                raise ImplementationNotFound(f"no file {path} (from --impl {spec!r})")
            module_spec = importlib.util.spec_from_file_location(f"dpverify_user_{path.stem}", path)
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[module_spec.name] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(target)
    except ImplementationNotFound:
        raise
    except Exception as error:  # the user's module may fail to import in any way; say which and why
        raise ImplementationNotFound(f"cannot import {target!r}: {type(error).__name__}: {error}") from error
    found: Any = module
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise ImplementationNotFound(f"{target!r} has no attribute {attribute!r}")
        found = getattr(found, part)
    return found


def load_implementation(spec: str) -> Callable:
    found = load_object(spec)
    if not callable(found):
        raise ImplementationNotFound(f"{spec!r} is a {type(found).__name__}, not a callable implementation(setting, rng)")
    return found


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

    @property
    def verdicts(self) -> dict[str, Verdict]:
        """Check name (accounting, exact, noise-scale, distribution, privacy) -> its verdict."""
        return {r.claim.id.split("conformance-", 1)[1]: r.verdict for r in self.results}

    @property
    def failures(self) -> list[ClaimResult]:
        return [r for r in self.results if r.verdict == Verdict.REFUTED]

    @property
    def conforms(self) -> bool:
        return not self.failures

    @property
    def exit_status(self) -> int:
        return EXIT_CONFORMS if self.conforms else EXIT_NONCONFORMING

    def lines(self) -> list[str]:
        """One line per check, then the outcome (the first failing check named)."""
        out = [f"{r.claim.id}  {r.verdict}: {r.summary}" for r in self.results]
        if self.failures:
            first = self.failures[0]
            out.append(f"{self.implementation} does not conform to {self.paper}: first failing check "
                       f"{first.claim.id}: {first.results[0].evidence.summary}")
        else:
            out.append(f"{self.implementation} conforms to {self.paper}: no check found a deviation")
        return out


def _exact_needs_the_tape(context: CheckContext):
    """The exact check of an implementation that draws its own noise: not-run, with why."""
    raise NothingToMeasure("the implementation draws its own noise (--noise own): exact conformance needs dpverify's "
                           "draws; the statistical checks judge it")


def verify(paper: str, implementation: Callable | str, *, profile: str = "quick", seed: int = DEFAULT_ROOT_SEED,
           noise: str = "tape", checks: tuple[str, ...] | None = None, progress: bool = False) -> Verification:
    """Judge `implementation` (a callable `implementation(setting, rng) -> transcript`, or its `module:object`
    spec) against `paper`'s contract and claims; see the module docstring. `checks` keeps only the named
    ones (CHECKS; default all)."""
    if noise not in NOISE_MODES:
        raise DpverifyError(f"noise must be one of {', '.join(NOISE_MODES)}; got {noise!r}")
    unknown = sorted(set(checks or ()) - set(CHECKS))
    if unknown:
        raise DpverifyError(f"unknown check(s) {', '.join(unknown)}; known: {', '.join(CHECKS)}")
    name = implementation if isinstance(implementation, str) else getattr(implementation, "__qualname__",
                                                                          repr(implementation))
    function = load_implementation(implementation) if isinstance(implementation, str) else implementation
    if not callable(function):
        raise ImplementationNotFound(f"the implementation must be callable as implementation(setting, rng); got "
                                     f"{type(function).__name__}")
    suite = suite_of(paper)
    context = CheckContext(profile=profile, root_seed=seed, parameters=parameters_of(paper, profile))
    claims = tuple(c for c in conformance_claims(suite, function) if checks is None or c.id.split("conformance-")[1] in checks)
    if noise == "own":
        claims = tuple(_without_exact(claim) for claim in claims)
    results = tuple(evaluate(claim, context) for claim in tqdm(
        claims, desc=f"verify {paper}", unit="check", leave=False, disable=None if progress else True))
    return Verification(paper, name, results)


def _without_exact(claim):
    if not claim.id.endswith("conformance-exact"):
        return claim
    return replace(claim, checks=tuple(replace(check, run=_exact_needs_the_tape) for check in claim.checks))
