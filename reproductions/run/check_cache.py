"""Claim checks cached like tasks, so a rerun of `check`, `reproduce` or `verify` decides from the cache.

A check's result is stored as one JSON file in the task cache's directory, named by a key over everything the
check's result can depend on: the claim and the check, the profile, the root seed, the audit settings, every
experiment parameter of the paper (by value), the results of every experiment the run supplied (by content),
the datasets' availability, anything the caller adds (verify: the implementation under test) and the
environment of the task cache (runner.environment_digest: dpverify's source, package versions, data
checksums). It holds what the report needs: verdict, evidence line and numbers, the figure's PNG, the seconds
the check took when it was computed, the paper's statement and the parameters it read.

Never cached: a check that crashed (a harness error: CheckCrashed propagates before anything is stored) and a
check that was not run (its data, an experiment or a parameter was not available: the next run decides again).
Under `--seeds K` each root seed's result is its own entry; the combination across seeds is recomputed from
them, so K needs no place in the key. The write is atomic and an unreadable entry is quarantined and
recomputed, as for tasks (runner.atomic_write, runner.quarantine). An entry also keeps the CPU seconds the check took
when computed (its process's, and the runner workers' on the tasks it handed them), so that a run deciding from the
cache can say what computing its verdicts cost.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from dpverify.reproductions.report.publish import figure_png, jsonable
from dpverify.reproductions.run.runner import atomic_write, environment_digest, environment_provenance, quarantine
from dpverify.theory.claims import Check, CheckResult, Claim, ClaimResult, Evidence, Verdict
from dpverify.theory.execution import CheckContext, Parameters, value_digest

SUFFIX = ".check.json"


def frame_digest(frame: pd.DataFrame) -> str:
    """An experiment's results by content: column names, dtypes and every value (pandas' row hashes)."""
    digest = hashlib.sha256(json.dumps([[str(c), str(t)] for c, t in frame.dtypes.items()]).encode())
    try:
        digest.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    except TypeError:   # cells pandas cannot hash (lists): their printed form, column by column
        digest.update(frame.to_json(orient="split", double_precision=15).encode())
    return digest.hexdigest()


def check_key(claim: Claim, check: Check, context: CheckContext, extra: Mapping[str, Any]) -> str:
    """Everything `check` of `claim` can depend on in this context (module docstring)."""
    return value_digest({
        "claim": claim.id, "check": check.name, "method": str(check.method), "profile": context.profile,
        "root_seed": context.root_seed, "audit": [context.audit_samples, context.audit_confidence],
        # by value and provenance (with each default's range): the result stores the provenance of what it read
        "parameters": {experiment: values.provenance(*values) if isinstance(values, Parameters) else dict(values)
                       for experiment, values in context.parameters.items()},
        "experiments": {experiment: frame_digest(frame) for experiment, frame in context.experiments.items()},
        # which datasets are available, not the wording of why one is not (offline, a failed download): a check that
        # read a missing dataset is not-run and never stored, and the files' checksums key the tasks that read them
        "datasets": {name: not why for name, why in context.datasets.items()}, "extra": dict(extra),
        "environment": environment_digest()})


def with_png_figure(result: CheckResult) -> CheckResult:
    """The result with its figure as PNG bytes: what the cache stores is what this run's report embeds."""
    figure = result.evidence.figure
    if figure is None or isinstance(figure, bytes):
        return result
    return replace(result, evidence=replace(result.evidence, figure=figure_png(figure)))


def _cpu_spent(context: CheckContext) -> float:
    """CPU seconds spent so far by this process and by the workers of the context's runner (runner.Runner.remote_cpu;
    a plain executor runs its tasks here)."""
    return time.process_time() + getattr(context.executor, "remote_cpu", 0.0)


@dataclass
class CheckCache:
    """Evaluates claims check by check through the cache in `directory` (None: no cache, every check runs).
    `computed` counts the checks measured in this process, `cached` those decided from the cache; a check
    that was not run is in neither. `cpu_seconds` sums the CPU time they took when computed, now or earlier."""

    directory: Path | None
    computed: int = field(default=0, init=False)
    cached: int = field(default=0, init=False)
    cpu_seconds: float = field(default=0.0, init=False)

    def evaluate(self, claim: Claim, context: CheckContext, extra: Mapping[str, Any] | None = None) -> ClaimResult:
        """theory.claims.evaluate, through the cache. `extra`: what else the checks' results depend on here."""
        return ClaimResult(claim, tuple(self._execute(claim, check, context, extra or {}) for check in claim.checks))

    def _execute(self, claim: Claim, check: Check, context: CheckContext, extra: Mapping[str, Any]) -> CheckResult:
        key = check_key(claim, check, context, extra) if self.directory is not None else ""
        if key and (stored := self._load(key, claim, check)) is not None:
            self.cached += 1
            self.cpu_seconds += stored[1]
            return stored[0]
        started = _cpu_spent(context)
        result = check.execute(context)        # CheckCrashed propagates: nothing is stored
        if result.verdict == Verdict.NOT_RUN:  # neither stored nor counted: a rerun decides it again
            return result
        self.computed += 1
        cpu = round(_cpu_spent(context) - started, 3)   # as the cache keeps it: a rerun reads back the same number
        self.cpu_seconds += cpu
        result = with_png_figure(result)
        if key:
            self._store(key, claim, result, context, cpu)
        return result

    def path(self, key: str) -> Path:
        return Path(self.directory) / key[:2] / f"{key}{SUFFIX}"

    def _load(self, key: str, claim: Claim, check: Check) -> tuple[CheckResult, float] | None:
        path = self.path(key)
        if not path.exists():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            if entry["cache_key"] != key:
                raise ValueError("the key in the file does not match its name")
            figure = base64.b64decode(entry["figure_png"]) if entry["figure_png"] is not None else None
            return CheckResult(check.name, check.method, Verdict(entry["verdict"]),
                               Evidence(entry["summary"], entry["values"], figure), entry["seconds"], check.rule,
                               entry["paper"], entry["parameters"], check.decision_argument), entry["cpu_seconds"]
        except Exception as error:   # any unreadable entry is quarantined and recomputed
            quarantine(path, f"check {claim.id} [{check.name}]", error)
            return None

    def _store(self, key: str, claim: Claim, result: CheckResult, context: CheckContext, cpu: float) -> None:
        figure = result.evidence.figure
        entry = {"cache_key": key, "claim": claim.id, "check": result.check, "verdict": str(result.verdict),
                 "summary": result.evidence.summary, "values": jsonable(dict(result.evidence.values)),
                 "seconds": result.seconds, "cpu_seconds": cpu, "paper": result.paper,
                 "parameters": jsonable(dict(result.parameters)),
                 "figure_png": base64.b64encode(figure).decode() if figure is not None else None,
                 "provenance": {**environment_provenance(), "profile": context.profile,
                                "root_seed": context.root_seed}}
        text = json.dumps(entry)   # keys in the check's order: the report lists the values in that order
        atomic_write(self.path(key), lambda temporary: Path(temporary).write_text(text, encoding="utf-8"))
