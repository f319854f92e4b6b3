"""`--sweep EXPERIMENT/PARAM`: a claim's verdict over the plausible range of a default we chose.

Each swept default (a range or alternatives in its TOML, reproductions/run/params.py) is set, one at a time and the
others at our values, to each end of its range or each alternative; the experiment that declares it is re-run
(when this run reproduces it) and every claim whose checks read it is re-decided. Per check, the verdicts at our
value and at the swept ones are combined by the readings rule (theory/robustness.across_values): the same verdict
throughout stands, one that flips is inconclusive, "depends on EXPERIMENT/PARAM", with the evidence at each value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from dpverify.algorithms.core.errors import DpverifyError
from dpverify.reproductions.run.experiments import Experiment
from dpverify.reproductions.run.params import ExperimentConfig, Parameter
from dpverify.theory.claims import CheckResult, Claim, ClaimResult, Evidence, Verdict
from dpverify.theory.execution import CheckContext
from dpverify.theory.robustness import across_values


class SweepError(DpverifyError):
    """A --sweep that names no free default of the paper (a one-line user error, before any work)."""


@dataclass(frozen=True)
class Sweep:
    experiment: Experiment
    config: ExperimentConfig      # at our values, under this run's profile
    parameter: Parameter

    @property
    def name(self) -> str:
        return f"{self.config.id}/{self.parameter.name}"

    def values(self) -> list[Any]:
        """The values to run besides ours: the range's ends or the other alternatives."""
        return [value for value in self.parameter.sweep_values() if value != self.parameter.value]


def parse_sweeps(specs: Sequence[str], paper: str, profile: str, experiments: Sequence[Experiment]) -> list[Sweep]:
    """The sweeps `specs` name ("EXPERIMENT/PARAM"), each a free default of one of the paper's experiments under
    `profile`; anything else is a SweepError naming what is wrong and what would be accepted."""
    by_id = {experiment.id: experiment for experiment in experiments}
    sweeps = []
    for spec in dict.fromkeys(specs):
        experiment_id, _, name = spec.partition("/")
        if experiment_id not in by_id or not name:
            raise SweepError(f"--sweep {spec!r}: expected EXPERIMENT/PARAM with EXPERIMENT one of paper {paper!r}'s "
                             f"experiments ({', '.join(by_id) or 'none'})")
        config = by_id[experiment_id].config(profile)
        free = [p.name for p in config.parameters.values() if p.free]
        parameter = config.parameters.get(name)
        if parameter is None or not parameter.free:
            why = ("is not declared" if parameter is None else "is the paper's value" if parameter.source == "paper"
                   else f"is the {profile} profile's size, not a choice of meaning" if parameter.profile
                   else "is derived, not a free choice")
            raise SweepError(f"--sweep {spec!r}: {name!r} {why}; free defaults of {experiment_id} under the {profile} "
                             f"profile: {', '.join(free) or 'none'}")
        sweeps.append(Sweep(by_id[experiment_id], config, parameter))
    return sweeps


Rerun = Callable[[Experiment, ExperimentConfig], pd.DataFrame]
Decide = Callable[[Claim, CheckContext], ClaimResult]


def sweep_claims(results: Sequence[ClaimResult], sweeps: Sequence[Sweep], context: CheckContext, decide: Decide,
                 rerun: Rerun | None = None, echo: Callable[[str], None] = lambda line: None) -> list[ClaimResult]:
    """`results` (the claims at our values, decided in `context`) re-decided over every sweep: `decide(claim,
    context)` evaluates a claim (through the check cache), `rerun(experiment, config)` re-runs an experiment that
    this run reproduced (None: parameters only, as `check` has no experiments). An experiment that cannot run at
    a swept value leaves the claims that read it not-run there, with the reason."""
    swept: dict[str, list[tuple[str, Any, ClaimResult]]] = {}
    for sweep in sweeps:
        readers = [r for r in results if any(sweep.name in check.parameters for check in r.results)]
        for value in sweep.values():
            echo(f"sweep {sweep.name} = {value!r}: {len(readers)} claim(s) read it")
            if not readers:
                continue
            config = sweep.config.with_value(sweep.parameter.name, value)
            experiments, failure = dict(context.experiments), ""
            if rerun is not None and sweep.config.id in experiments:
                try:
                    experiments[sweep.config.id] = rerun(sweep.experiment, config)
                except DpverifyError as error:
                    failure = f"{sweep.config.id} could not run at {sweep.parameter.name} = {value!r}: {error}"
            moved = replace(context, parameters={**context.parameters, config.id: config.as_parameters()},
                            experiments=experiments, memo={}, memo_reads={})
            for result in readers:
                again = _not_run(result.claim, failure) if failure else decide(result.claim, moved)
                swept.setdefault(result.claim.id, []).append((sweep.name, value, again))
    return [across_values(r, swept[r.claim.id]) if r.claim.id in swept else r for r in results]


def _not_run(claim: Claim, reason: str) -> ClaimResult:
    return ClaimResult(claim, tuple(CheckResult(check.name, check.method, Verdict.NOT_RUN, Evidence(reason), 0.0,
                                                check.rule) for check in claim.checks))
