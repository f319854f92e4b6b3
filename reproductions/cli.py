"""The `dpverify` command: list, check, reproduce, audit, report, bench, compare.

Exit codes: 0 the harness ran (refuted claims are findings, not failures); 1 a harness error (a
check crashed: reported on its claim, with the traceback in harness-errors.log, while the other claims
ran); 2 a user error (one line saying what is wrong and what was expected); 3 refuted claims under
--strict, or a regression against --baseline; 130 interrupted (finished tasks are cached).
"""

from __future__ import annotations

import logging
import math
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from tqdm.auto import tqdm

from dpverify.algorithms.core.errors import DpverifyError
from dpverify.reproductions.bench.timing import DEFAULT_REPEATS, MIN_REPEATS
from dpverify.reproductions.data.datasets import DATA_ENV, availability
from dpverify.reproductions.exit_status import EXIT_HARNESS_ERROR, EXIT_INTERRUPTED, EXIT_REFUTED, EXIT_USER_ERROR
from dpverify.reproductions.inputs import directory_to_write, one_line, open_unit_interval, run_paths
from dpverify.reproductions.run.allocator import settle_allocator
from dpverify.reproductions.run.progress import Progress, clock
from dpverify.reproductions.run.threads import limit_blas_threads
from dpverify.theory.audit.auditor import minimum_samples
from dpverify.theory.claims import CheckCrashed, CheckResult, ClaimResult, Evidence, Paper, Verdict, evaluate
from dpverify.theory.door.isolation import DEFAULT_TIMEOUT
from dpverify.theory.execution import DEFAULT_ROOT_SEED, CheckContext
from dpverify.theory.papers import get_paper, paper_ids, room_module
from dpverify.theory.verify.conformance import CHECKS

if TYPE_CHECKING:   # imported where it is used: `dpverify --help` does not load the cache machinery
    from dpverify.reproductions.run.check_cache import CheckCache

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Verify and reproduce papers on differentially private decentralized optimization.")

DEFAULT_OUT = Path("reports")
DEFAULT_CACHE = Path(".dpverify-cache")
# an experiment is re-run under the further root seeds of --seeds only below this much CPU (issue 31: "at least 3 root
# seeds where the experiment is under 5 minutes of CPU; otherwise say it is one seed"): dp-recal's v0 Fig. 4 takes
# about an hour of CPU in the paper profile, and its claims then say they rest on one seed
DEFAULT_SEED_CPU_LIMIT = 300.0


class Profile(StrEnum):
    quick = "quick"
    paper = "paper"


class Backend(StrEnum):
    local = "local"
    dask = "dask"


PaperArg = Annotated[Optional[str], typer.Argument(help="paper id (see `dpverify list`); all papers if omitted")]
ProfileOpt = Annotated[Profile, typer.Option(help="quick: CI-sized runs; paper: the paper's sizes")]
SeedOpt = Annotated[int, typer.Option(min=0, help="root seed (>= 0); every task derives its generator from it and its key")]
SeedsOpt = Annotated[int, typer.Option(min=1, help="decide each randomized check under this many root seeds (SEED, SEED+1, "
                                                "...); a verdict that flips between them is inconclusive")]
SeedCpuLimitOpt = Annotated[float, typer.Option(min=0, help="with --seeds: re-run under the further root seeds only "
                                                "the experiments whose tasks took less CPU than this (seconds, under "
                                                "the first seed); the claims reading the others say they rest on one "
                                                "seed")]
JobsOpt = Annotated[int, typer.Option("--jobs", "-j", min=1, help="local worker processes")]
StrictOpt = Annotated[bool, typer.Option(help="exit with status 3 when a claim is refuted; with --baseline, on any "
                                               "change against it")]
BaselineOpt = Annotated[Optional[Path], typer.Option(help="a previous report's summary.json: list new refutations, fixes, "
                                                     "verdict changes and moved numbers; exit 3 only on a regression")]
JunitOpt = Annotated[Optional[Path], typer.Option(help="write JUnit XML here: one test case per claim (a regression "
                                                  "against --baseline fails its case)")]
OutOpt = Annotated[Path, typer.Option(help="directory of the report, results and figures")]
SweepOpt = Annotated[Optional[list[str]], typer.Option(
    help="EXPERIMENT/PARAM of the PAPER argument, or PAPER:EXPERIMENT/PARAM (repeatable): re-decide the claims that "
         "read this default at each end of its range (or each alternative); a verdict that flips is inconclusive, "
         "'depends on EXPERIMENT/PARAM'")]
CacheOpt = Annotated[Path, typer.Option(help="result cache directory")]
TimeoutOpt = Annotated[float, typer.Option(min=0.001, help="seconds one call of your code may take; a call past it is "
                                                       "ended, and counts as your code's failure")]


def _use_data_dir(directory: Path | None) -> Path | None:
    """--data-dir is $DPVERIFY_DATA for this run and its worker processes (set before any dataset is looked up).
    A missing or unreadable one is a user error (main: exit 2), not a silent fall-back to the other places."""
    from dpverify.reproductions.inputs import readable_directory

    if directory is not None:
        os.environ[DATA_ENV] = str(readable_directory(directory.expanduser(), "--data-dir").resolve())
    return directory


DataDirOpt = Annotated[Optional[Path], typer.Option(   # readable=False: _use_data_dir is the one check, in our words
    callback=_use_data_dir, readable=False,
    help=f"directory holding the datasets (as ${DATA_ENV}); looked in first, then ../shared/data, then the download "
         "cache (README: Data)")]


def _papers(paper_id: str | None) -> list[Paper]:
    return [get_paper(p) for p in ([paper_id] if paper_id else paper_ids())]


def _parameters(paper: Paper, profile: str) -> dict:
    from dpverify.reproductions.run.experiments import parameters_of

    return parameters_of(paper.id, profile)


HARNESS_LOG = "harness-errors.log"   # tracebacks of checks that crashed, next to the report (or in the cache)


def crashed(results: list[ClaimResult]) -> list[str]:
    """The claims whose checks hit a harness error (reported on the claim, the run went on)."""
    return [r.claim.id for r in results if any(c.evidence.values.get("harness_error") for c in r.results)]


def _without_machine_paths(text: str) -> str:
    """`text` with the absolute prefixes of this machine made relative: site-packages -> `<site-packages>/`, the
    stdlib -> `<stdlib>/`, dpverify's source folder (the checkout, or site-packages/dpverify) and the working
    directory -> nothing, the home -> `~/`.
    A harness-error log and its evidence line are shared (bug reports, the report's summary.json): they should name
    the file, not the machine. Longest prefix first, since site-packages lies inside the stdlib's folder."""
    import site
    import sysconfig

    def folders(*paths) -> list[str]:   # as given and with symlinks resolved: a traceback names either
        return [os.path.join(f(path), "") for path in paths for f in (os.path.abspath, os.path.realpath)]

    paths = sysconfig.get_paths()
    # reproductions/ sits at the checkout's top (an editable install), in a link tree of it (a strict editable
    # install: resolved, the checkout) or in site-packages/dpverify
    here = Path(__file__)
    prefixes = {**dict.fromkeys(folders(here.parents[1], here.resolve().parents[1], os.getcwd()), ""),
                **dict.fromkeys(folders(Path.home()), "~" + os.sep),
                **dict.fromkeys(folders(paths["stdlib"]), "<stdlib>" + os.sep),
                **dict.fromkeys(folders(*site.getsitepackages(), site.getusersitepackages(), paths["purelib"],
                                        paths["platlib"]), "<site-packages>" + os.sep)}
    for prefix in sorted(prefixes, key=len, reverse=True):
        if prefix != os.path.join(os.path.abspath(os.sep), ""):   # never the root itself, whatever the cwd
            text = text.replace(prefix, prefixes[prefix])
    return text


def _evaluate_or_report(claim, context: CheckContext, log: Path, checks: CheckCache) -> ClaimResult:
    """evaluate(claim) through the check cache; a check that crashes is a harness error on this claim alone
    (not-run, the first line of the error, the traceback appended to `log`), so the other claims go on. Neither
    names an absolute path of this machine (_without_machine_paths)."""
    try:
        return checks.evaluate(claim, context)
    except CheckCrashed as error:
        log.parent.mkdir(parents=True, exist_ok=True)
        message = _without_machine_paths(str(error))
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"==== {claim.id} (root seed {context.root_seed})\n{message}\n")
        line = message.splitlines()[0]
        # relative to the working directory when under it; else as the user gave it (--out, --cache)
        shown = os.path.relpath(log) if Path(os.path.abspath(log)).is_relative_to(os.getcwd()) else log
        evidence = Evidence(f"harness error (a bug of dpverify, not a finding): {line}; traceback in {shown}",
                            {"harness_error": True})
        return ClaimResult(claim, (CheckResult(claim.checks[0].name, claim.checks[0].method, Verdict.NOT_RUN,
                                               evidence, 0.0, claim.checks[0].rule),))


def _seed_contexts(context: CheckContext, seeds: int, experiments=None) -> list[CheckContext]:
    """The contexts of root seeds SEED+1 .. SEED+seeds-1 (`--seeds`), each with its own memo; `experiments(root)`
    gives that seed's experiment results (reproduce), else the context's are kept (check has none)."""
    roots = [context.root_seed + offset for offset in range(1, seeds)]
    return [replace(context, root_seed=root, memo={}, memo_reads={},
                    **({"experiments": experiments(root)} if experiments else {})) for root in roots]


def _repeated_experiments(paper: str, experiments: list, profile: str, runner, root: int, seeds: int,
                          limit: float) -> list:
    """The experiments to run again under the further root seeds: those below `limit` CPU seconds (--seed-cpu-limit)
    under the first seed; the others are named on stderr with their cost."""
    from dpverify.reproductions.run.experiments import experiment_cpu_seconds

    if seeds < 2:
        return []
    cost = {experiment.id: experiment_cpu_seconds(experiment, profile, runner, root) for experiment in experiments}
    if once := [f"{e} ({cost[e] / 60:.1f} CPU-min)" for e in cost if cost[e] >= limit]:
        typer.echo(f"{paper}: one root seed only for {', '.join(once)}: at or over --seed-cpu-limit "
                   f"{limit / 60:g} CPU-min", err=True)
    return [experiment for experiment in experiments if cost[experiment.id] < limit]


def _check_claims(paper: Paper, claim_id: str | None, context: CheckContext, log: Path,
                  others: Sequence[CheckContext] = (), checks: CheckCache | None = None) -> list[ClaimResult]:
    """Every claim (or one) of the paper, each verdict printed the moment it is decided; with `others` (the
    contexts of further root seeds, _seed_contexts), its randomized checks again under each, and a check whose
    verdict flips is inconclusive (theory/robustness.py). A crashing check is reported on its claim
    (_evaluate_or_report)."""
    from dpverify.reproductions.run.check_cache import CheckCache
    from dpverify.theory.robustness import across_seeds, randomized

    checks = checks if checks is not None else CheckCache(None)
    claims = [paper.claim(claim_id)] if claim_id else list(paper.claims)
    width = max(len(claim.id) for claim in claims)
    roots = [context.root_seed] + [other.root_seed for other in others]
    results = []
    with Progress(len(claims), f"{paper.id} claims", unit="claim") as progress:
        for claim in claims:
            progress.set_postfix_str(claim.id.split("/", 1)[1])
            first = _evaluate_or_report(claim, context, log, checks)
            if others and not crashed([first]) and (again := randomized(claim)) is not None:
                repeats = [_evaluate_or_report(again, other, log, checks) for other in others]
                first = first if crashed(repeats) else across_seeds(roots, first, repeats)
            results.append(first)
            progress.write(_verdict_line(first, width))
            progress.update()
    return results


def _verdict_line(result: ClaimResult, width: int) -> str:
    colour = {"confirmed": "green", "refuted": "red", "inconclusive": "yellow"}.get(result.verdict, "white")
    verdict = typer.style(f"{result.verdict:<12}", fg=colour, bold=True)
    return f"{result.claim.id:<{width}}  {verdict}  {result.summary[:160]}"


def _sweeps(paper: str | None, specs: list[str] | None, profile: str) -> dict:
    """The --sweep targets per paper, validated before any work (reproductions/run/sweep.py)."""
    if not specs:
        return {}
    from dpverify.reproductions.run.experiments import experiments_of
    from dpverify.reproductions.run.sweep import parse_sweeps

    by_paper: dict[str, list[str]] = {}
    for spec in specs:   # PAPER:EXPERIMENT/PARAM names its paper; EXPERIMENT/PARAM is the PAPER argument's
        named, _, rest = spec.rpartition(":")
        if not (named or paper):
            raise DpverifyError(f"--sweep {spec!r} needs a PAPER argument, or its paper named as PAPER:EXPERIMENT/PARAM "
                                "(see `dpverify list`)")
        if named and paper and named != paper:
            raise DpverifyError(f"--sweep {spec!r} names paper {named!r}, but this run is of {paper!r}")
        if (named or paper) not in paper_ids():
            raise DpverifyError(f"--sweep {spec!r}: unknown paper {named or paper!r}; expected one of "
                                f"{', '.join(paper_ids())}")
        by_paper.setdefault(named or paper, []).append(rest)
    return {name: parse_sweeps(found, name, profile, experiments_of(name)) for name, found in by_paper.items()}


def _swept(results: list[ClaimResult], sweeps: list, context: CheckContext, log: Path, checks: CheckCache,
           rerun=None) -> list[ClaimResult]:
    """The claims re-decided over the sweeps (reproductions/run/sweep.py), each swept claim's verdict printed again."""
    from dpverify.reproductions.run.sweep import sweep_claims

    if not sweeps:
        return results
    swept = sweep_claims(results, sweeps, context, lambda claim, moved: _evaluate_or_report(claim, moved, log, checks),
                         rerun, echo=lambda line: typer.echo(line, err=True))
    width = max(len(r.claim.id) for r in swept)
    for before, after in zip(results, swept):
        if after is not before:
            typer.echo("swept: " + _verdict_line(after, width))
    return swept


class Work:
    """What this run computed per paper (tasks, checks) and its wall time: the report's stamp (write_summary's
    `run`, the one line a rerun changes) and the closing line on stderr; and what computing each paper's results
    cost in CPU time, now or in the run that cached them (`cpu`: paper_record's, the same on a rerun)."""

    def __init__(self, runner, checks: CheckCache) -> None:
        self.runner, self.checks, self.started = runner, checks, time.perf_counter()
        self.tasks_computed: dict[str, int] = {}
        self.checks_computed: dict[str, int] = {}
        self.papers: dict[str, dict] = {}   # per paper: its wall time and what it read from the cache
        self.cpu_seconds: dict[str, dict[str, float]] = {}

    def _counters(self) -> tuple:
        return (self.runner.computed, self.checks.computed, self.runner.cached, self.checks.cached,
                self.checks.cpu_seconds, time.perf_counter())

    def begin(self) -> None:
        self._before = self._counters()
        self._tasks_before, self._experiment_tasks = set(self.runner.task_cpu), set()

    def experiments_done(self) -> None:
        """The tasks returned since begin() were this paper's experiments' (their CPU time is the paper's
        experiments' cost); those returned later are its checks', counted in the checks' CPU time."""
        self._experiment_tasks = set(self.runner.task_cpu) - self._tasks_before

    def end(self, paper: str) -> None:
        tasks, checks, tasks_cached, checks_cached, checks_cpu, wall = (
            after - before for after, before in zip(self._counters(), self._before))
        self.tasks_computed[paper], self.checks_computed[paper] = tasks, checks
        self.papers[paper] = {"wall_seconds": round(wall, 1), "tasks_cached": tasks_cached,
                              "checks_cached": checks_cached}
        # fsum: the same total whatever order the tasks finished in
        self.cpu_seconds[paper] = {"experiments": math.fsum(self.runner.task_cpu[k] for k in self._experiment_tasks),
                                   "checks": checks_cpu}

    def stamp(self) -> dict:
        return {"tasks_computed": self.tasks_computed, "checks_computed": self.checks_computed,
                "wall_seconds": round(time.perf_counter() - self.started, 1), "papers": self.papers}

    def line(self) -> str:
        return (f"{clock(time.perf_counter() - self.started)} wall time; computed {self.runner.computed} task(s) and "
                f"{self.checks.computed} check(s), {self.checks.cached} check(s) from the cache")


def _finish(results: list[ClaimResult], strict: bool, summary: dict | None = None, baseline: Path | None = None,
            junit: Path | None = None, baseline_summary: dict | None = None) -> None:
    """Counts; then the gate: against --baseline, exit 3 on a regression (with --strict on any change); without
    one, exit 3 with --strict when a claim is refuted. --junit writes the cases either way."""
    from dpverify.reproductions.report.compare import gate
    from dpverify.reproductions.report.junit import write_junit

    refuted = [r.claim.id for r in results if r.verdict == Verdict.REFUTED]
    claimed = [r for r in results if not r.claim.is_finding]   # the papers' tally; findings beyond it apart
    typer.echo(", ".join(f"{v}: {sum(r.verdict == v for r in claimed)}" for v in Verdict)
               + (f"; findings beyond the papers' claims: {len(results) - len(claimed)}" if len(claimed) < len(results)
                  else ""))
    judged = gate(baseline_summary, summary) if baseline_summary is not None else None
    if junit is not None:
        typer.echo(f"junit: {write_junit(junit, summary, judged, strict=strict)}")
    if judged is not None:
        for line in judged.lines():
            typer.echo(line)
        failing = judged.failing(strict)
        if failing:
            typer.echo(f"against {baseline}: {len(failing)} {'change(s)' if strict else 'regression(s)'}", err=True)
            raise typer.Exit(EXIT_REFUTED)
    elif strict and refuted:
        typer.echo(f"--strict: {len(refuted)} refuted claim(s): {', '.join(refuted)}", err=True)
        raise typer.Exit(EXIT_REFUTED)
    if errors := crashed(results):
        typer.echo(f"harness error on {len(errors)} claim(s): {', '.join(errors)} (the other claims ran; "
                   f"tracebacks in {HARNESS_LOG})", err=True)
        raise typer.Exit(EXIT_HARNESS_ERROR)


def _check_summary(papers: list[Paper], results: list[ClaimResult], profile: str, out: Path | None,
                   provenance: dict, partial: bool, run: dict | None = None, cpu: dict | None = None) -> dict:
    """The summary record of a `check` run, marked partial (it runs no figures, so its figure claims are not-run
    by construction and a baseline compares it on what it checked); written to OUT/summary.json with --out."""
    import tempfile

    from dpverify.reproductions.report.publish import paper_record, write_summary

    with tempfile.TemporaryDirectory() as scratch:
        figures = (out if out is not None else Path(scratch)) / "figures"
        records = {paper.id: paper_record(paper, [r for r in results if r.claim.id.startswith(paper.id + "/")], [],
                                          profile=profile, figures_dir=figures, provenance=provenance,
                                          partial=partial, cpu=(cpu or {}).get(paper.id))
                   for paper in papers}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for record in records.values():
            write_summary(out, record, run)
    return {"papers": records}


@app.command("list")
def list_command(paper: PaperArg = None) -> None:
    """List papers, their claims (id, seed line, kind) and their experiments."""
    from dpverify.reproductions.run.experiments import experiments_of

    for entry in _papers(paper):
        typer.echo(typer.style(f"{entry.id}", bold=True) + f"  {entry.title}  ({entry.seed_file})")
        for claim in entry.claims:
            methods = ", ".join(sorted({str(c.method) for c in claim.checks})) or "not-run"
            typer.echo(f"  {claim.id:<48} {claim.seed_line:<12} {claim.kind:<11} [{methods}]")
        for experiment in experiments_of(entry.id):
            typer.echo(f"  experiment {experiment.id:<37} {experiment.config_file.name}")


@app.command()
def check(paper: PaperArg = None,
          claim: Annotated[Optional[str], typer.Option(help="one claim id, e.g. lemma-1 or zcdp-nfl/lemma-1")] = None,
          profile: ProfileOpt = Profile.quick, seed: SeedOpt = DEFAULT_ROOT_SEED, jobs: JobsOpt = 1,
          cache: CacheOpt = DEFAULT_CACHE, data_dir: DataDirOpt = None,
          strict: StrictOpt = False, baseline: BaselineOpt = None, junit: JunitOpt = None,
          out: Annotated[Optional[Path], typer.Option(help="also write OUT/summary.json (a baseline for later runs)")]
          = None,
          seeds: SeedsOpt = 1, sweep: SweepOpt = None) -> None:
    """Run the theory checks of a paper (symbolic, ground truth, statistical), without the figures.
    Claims about figures are reported not-run here: `dpverify reproduce` checks them."""
    from dpverify.reproductions.run.check_cache import CheckCache
    from dpverify.reproductions.run.runner import Runner, environment_provenance

    if claim and not paper:
        raise DpverifyError("--claim needs a PAPER argument (see `dpverify list`)")
    # every input before any work, so none is lost to a bad one: paper, claim, paths, baseline, TOML files
    papers = _papers(paper)
    if claim:
        papers[0].claim(claim)
    sweeps = _sweeps(paper, sweep, str(profile))
    baseline_summary = run_paths(cache=cache, out=out, baseline=baseline, junit=junit)
    parameters = {entry.id: _parameters(entry, profile) for entry in papers}
    runner, checks = Runner(cache_directory=cache, jobs=jobs), CheckCache(cache)
    results, work = [], Work(runner, checks)
    for entry in papers:
        context = CheckContext(profile=str(profile), root_seed=seed, executor=runner, parameters=parameters[entry.id],
                               datasets=availability())
        work.begin()
        log = (out or cache) / HARNESS_LOG
        results += _swept(_check_claims(entry, claim, context, log, _seed_contexts(context, seeds), checks),
                          sweeps.get(entry.id, []), context, log, checks)
        work.end(entry.id)
    typer.echo(work.line(), err=True)
    summary = _check_summary(papers, results, str(profile), out,
                             {**environment_provenance(), "root_seed": seed, "seeds": seeds, "command": "check"},
                             partial=True, run=work.stamp(), cpu=work.cpu_seconds)
    _finish(results, strict, summary, baseline, junit, baseline_summary)


@app.command()
def reproduce(paper: PaperArg = None,
              figure: Annotated[Optional[str], typer.Option(help="one figure/experiment id, e.g. figure-1")] = None,
              profile: ProfileOpt = Profile.quick, jobs: JobsOpt = 1,
              backend: Annotated[Backend, typer.Option(help="local processes (joblib) or a Dask cluster")] = Backend.local,
              scheduler: Annotated[Optional[str], typer.Option(help="Dask scheduler address for --backend dask")] = None,
              out: OutOpt = DEFAULT_OUT,
              cache: CacheOpt = DEFAULT_CACHE, data_dir: DataDirOpt = None,
              seed: SeedOpt = DEFAULT_ROOT_SEED, strict: StrictOpt = False, baseline: BaselineOpt = None,
              junit: JunitOpt = None, seeds: SeedsOpt = 1, sweep: SweepOpt = None,
              seed_cpu_limit: SeedCpuLimitOpt = DEFAULT_SEED_CPU_LIMIT) -> None:
    """Reproduce the figures, check every claim, and write the report (index.html, <paper>.md, summary.json).
    With --seeds K the experiments run again under K - 1 further root seeds (their results are cached, not
    drawn), and each randomized check is decided under every seed; an experiment that took more CPU than
    --seed-cpu-limit runs under the first seed only, and the checks that read it say so."""
    import tempfile

    from dpverify.reproductions.report.publish import (
        paper_record,
        render_reports,
        write_summary,
    )
    from dpverify.reproductions.run.check_cache import CheckCache
    from dpverify.reproductions.run.experiments import (
        experiment_results,
        experiments_of,
        find_experiment,
        prefetch,
        run_experiment,
    )
    from dpverify.reproductions.run.runner import Runner, environment_provenance, writable_directory

    if figure and not paper:
        raise DpverifyError("--figure needs a PAPER argument (see `dpverify list`)")
    # every input before any work, so none is lost to a bad one: paper, figure, paths, baseline, TOML files
    papers = _papers(paper)
    experiments = {entry.id: [find_experiment(entry.id, figure)] if figure else experiments_of(entry.id)
                   for entry in papers}
    sweeps = _sweeps(paper, sweep, str(profile))
    baseline_summary = run_paths(cache=cache, out=out, baseline=baseline, junit=junit)
    parameters = {entry.id: _parameters(entry, profile) for entry in papers}
    runner = Runner(cache_directory=cache, jobs=jobs, backend=str(backend), scheduler=scheduler)
    work = Work(runner, CheckCache(cache))
    writable_directory(out, "--out")
    all_results, records = [], {}
    for entry in papers:
        work.begin()
        runs = []
        submitted = prefetch(experiments[entry.id], str(profile), runner, seed)
        if submitted:
            typer.echo(f"{entry.id}: the {submitted} tasks of {len(experiments[entry.id])} experiments went to one pool "
                       "(cached ones were read)", err=True)
        for experiment in experiments[entry.id]:
            typer.echo(f"{entry.id}: reproducing {experiment.id} ({profile} profile)", err=True)
            runs.append(run_experiment(experiment, str(profile), runner, seed, out))
        context = CheckContext(profile=str(profile), root_seed=seed, executor=runner, parameters=parameters[entry.id],
                               experiments={run.experiment.id: run.results for run in runs}, datasets=availability())
        repeated = _repeated_experiments(entry.id, experiments[entry.id], str(profile), runner, seed, seeds,
                                         seed_cpu_limit)

        def further_seed(root: int) -> dict:
            prefetch(repeated, str(profile), runner, root)    # one pool for all of them, as the first seed's
            return {experiment.id: experiment_results(experiment, str(profile), runner, root) for experiment in repeated}

        others = _seed_contexts(context, seeds, further_seed)
        work.experiments_done()
        results = _check_claims(entry, None, context, out / HARNESS_LOG, others, work.checks)
        with tempfile.TemporaryDirectory() as scratch:   # a sweep's results and figures are not the report's
            results = _swept(results, sweeps.get(entry.id, []), context, out / HARNESS_LOG, work.checks,
                             lambda experiment, config: run_experiment(experiment, str(profile), runner, seed,
                                                                       Path(scratch), config=config).results)
        work.end(entry.id)
        all_results += results
        provenance = {**environment_provenance(), "root_seed": seed, "seeds": seeds, "jobs": jobs,
                      "backend": str(backend), **({"seed_cpu_limit": seed_cpu_limit} if seeds > 1 else {})}
        records[entry.id] = paper_record(entry, results, [run.record for run in runs], profile=str(profile),
                                         figures_dir=out / "figures", provenance=provenance,
                                         partial=figure is not None, cpu=work.cpu_seconds[entry.id])
        write_summary(out, records[entry.id], work.stamp())
    paths = render_reports(out)
    typer.echo(work.line(), err=True)
    typer.echo("report: " + ", ".join(str(p) for p in paths))
    _finish(all_results, strict, {"papers": records}, baseline, junit, baseline_summary)


@app.command()
def verify(paper: Annotated[str, typer.Argument(help="paper id (see `dpverify list`)")],
           impl: Annotated[str, typer.Option("--impl", help="your implementation: package.module:function or "
                                             "path/to/file.py:function, called as function(setting, rng)")],
           noise: Annotated[str, typer.Option(help="tape: it draws its noise from the rng it is given, in the order "
                                              "(round, agent, coordinate), so exact conformance runs; own: it draws "
                                              "its own noise (exact conformance is not run)")] = "tape",
           checks: Annotated[Optional[str], typer.Option(help=f"comma-separated subset of {', '.join(CHECKS)} "
                                                          "(default: all)")] = None,
           claims: Annotated[Optional[bool], typer.Option(
               help="re-run the paper's claims whose checks run the algorithm (regret, rates, figures) on your "
                    "implementation, beside the reference's verdicts (default: yes, unless --checks selects a subset)",
               show_default=False)] = None,
           claim: Annotated[Optional[list[str]], typer.Option(
               help="re-run only this claim (repeatable), e.g. --claim figure-2")] = None,
           long: Annotated[bool, typer.Option(
               "--long", help="also re-run the claims whose checks make long runs of your code (zcdp-nfl theorems "
                              "3-4, dpdo-nc sqrt-t-rate: minutes for a per-agent loop; listed as not re-run without it)"
           )] = False,
           profile: ProfileOpt = Profile.quick, seed: SeedOpt = DEFAULT_ROOT_SEED, jobs: JobsOpt = 2,
           cache: CacheOpt = DEFAULT_CACHE, timeout: TimeoutOpt = DEFAULT_TIMEOUT) -> None:
    """Validate your implementation of a paper's algorithm: exact conformance on dpverify's noise draws, its
    reported noise scales, the noise it actually sends, the distribution of its messages, a privacy audit of
    its own messages, and the paper's claims re-run on it. Exit status 0 if no check finds a deviation and no
    claim diverges from the reference, 3 otherwise (docs/verify.md). Your code runs in a worker process of its own:
    if it raises, exits, crashes or hangs anywhere, it does not conform (exit 3, the failure named)."""
    from dpverify.reproductions.verify.command import verify as run_verify

    if claim and claims is False:
        raise DpverifyError("--claim selects claims to re-run; it contradicts --no-claims")
    if claims is not False:
        directory_to_write(cache, "--cache")   # verify() checks the rest of its inputs before any work
    result = run_verify(paper, impl, profile=str(profile), seed=seed, noise=noise, checks=checks,
                        claims=tuple(claim) if claim else claims, cache=cache, jobs=jobs, progress=True, long=long,
                        timeout=timeout)
    for line in result.lines():
        typer.echo(line)
    if not result.conforms:
        raise typer.Exit(result.exit_status)


@app.command("audit-mechanism")
def audit_mechanism(
        mechanism: Annotated[str, typer.Argument(help="module:function or path/to/file.py:function, called as "
                                                 "function(dataset, n, rng) -> n outputs, shape (n,) or (n, k)")],
        epsilon: Annotated[float, typer.Option(help="the claimed epsilon")],
        neighbours: Annotated[str, typer.Option(help="module:object holding a pair (dataset, dataset') of neighbouring "
                                                "inputs, or a function returning it")],
        delta: Annotated[float, typer.Option(help="the claimed delta")] = 0.0,
        samples: Annotated[int, typer.Option(min=minimum_samples(), help="outputs per dataset (half choose the test, "
                                             f"half run it), at least {minimum_samples()}")] = 100_000,
        confidence: Annotated[float, typer.Option(help="confidence of the lower bound, in (0, 1)")] = 0.95,
        seed: SeedOpt = DEFAULT_ROOT_SEED, timeout: TimeoutOpt = DEFAULT_TIMEOUT) -> None:
    """Audit your own mechanism: an empirical lower bound on its epsilon from its outputs on two neighbouring
    inputs, against the epsilon you claim. Exit status 3 when the bound exceeds the claim (refuted), or when your
    code fails (it runs in a worker process of its own: raising, exiting, crashing or hanging is its failure, in one
    line); no violation reads "not refuted at N samples", never "private"."""
    from dpverify.theory.audit import PrivacyClaim
    from dpverify.theory.audit import audit as run_audit
    from dpverify.theory.door.isolation import ImplementationFailed, Isolated

    open_unit_interval(confidence, "--confidence")
    claimed = PrivacyClaim(epsilon=epsilon, delta=delta)
    sample = Isolated(mechanism, timeout=timeout, describe=f"the mechanism {mechanism}")
    given = Isolated(neighbours, timeout=timeout, describe=f"--neighbours {neighbours}", callable_only=False)
    try:
        sample.start()
        pair = given.value()   # the pair, or what the function it names returns (called in its worker)
        result = run_audit(sample, pair, claimed, samples=samples, confidence=confidence, rng=seed)
    except ImplementationFailed as failed:
        typer.echo(f"error: {one_line(str(failed))}", err=True)
        raise typer.Exit(EXIT_REFUTED) from None
    finally:
        sample.close()
        given.close()
    typer.echo(result.summary())
    if result.refuted:
        raise typer.Exit(EXIT_REFUTED)


@app.command()
def audit(paper: Annotated[str, typer.Argument(help="paper id (see `dpverify list`)")],
          claim: Annotated[Optional[str], typer.Option(help="one claim id; default: every claim with an audit")] = None,
          samples: Annotated[Optional[int], typer.Option(min=minimum_samples(), help="runs per side, at least "
                                                         f"{minimum_samples()} (default: the profile's)")] = None,
          confidence: Annotated[float, typer.Option(help="simultaneous confidence of the lower bounds, in (0, 1)")] = 0.95,
          profile: ProfileOpt = Profile.quick, seed: SeedOpt = DEFAULT_ROOT_SEED, strict: StrictOpt = False,
          data_dir: DataDirOpt = None) -> None:
    """Empirical privacy audits: lower bounds on eps / rho from runs on neighbouring datasets, as the
    paper's adversary observes them. No violation found reads "not refuted at N samples", never "private"."""
    from dpverify.theory.claims import Method

    open_unit_interval(confidence, "--confidence")
    entry = get_paper(paper)
    audited = [c for c in entry.claims if any(check.method == Method.AUDIT for check in c.checks)]
    if claim is None and not audited:
        raise DpverifyError(f"paper {paper!r} has no audited claim yet")
    if claim and entry.claim(claim) not in audited:
        raise DpverifyError(f"{entry.claim(claim).id} has no audit (`dpverify check {paper} --claim {claim}` runs its "
                            f"checks); audited claims: {', '.join(c.id for c in audited) or 'none'}")
    parameters = _parameters(entry, profile)
    context = CheckContext(profile=str(profile), root_seed=seed, parameters=parameters, audit_samples=samples,
                           audit_confidence=confidence, datasets=availability())
    results = [evaluate(entry.claim(claim), context)] if claim else [evaluate(c, context) for c in tqdm(
        audited, desc="audits", unit="claim", leave=False, disable=None)]
    for result in results:
        for check in result.results:
            typer.echo(f"{result.claim.id}  [{check.check}]  {check.verdict}: {check.evidence.summary}")
    _finish(results, strict)


@app.command()
def report(out: OutOpt = DEFAULT_OUT,
           paper_report: Annotated[Optional[Path], typer.Option(
               help="the paper profile's summary.json to compare a quick report with (default: OUT/paper/summary.json "
                    "if there is one): index.html lists the claims whose verdicts differ, each flagged in its row")]
           = None) -> None:
    """Re-render index.html and the Markdown reports from OUT/summary.json (no recomputation)."""
    from dpverify.reproductions.report.publish import render_reports

    if out.exists():
        directory_to_write(out, "--out")    # it re-renders index.html and the Markdown files in OUT
    for path in render_reports(out, paper_report):
        typer.echo(str(path))


@app.command()
def bench(paper: PaperArg = None,
          replicas: Annotated[Optional[int], typer.Option(min=1, help="replicas R (default: the paper's target)")] = None,
          iterations: Annotated[Optional[int], typer.Option(min=1, help="rounds per timed call of the reference and "
                                                            "the limit (default: the paper's)")] = None,
          repeats: Annotated[int, typer.Option(min=1, help="rounds of interleaving: every implementation is timed "
                                               "once per round, in rotated order; a target can be decided from "
                                               f"{MIN_REPEATS} on (a 95% interval for a median)")] = DEFAULT_REPEATS,
          grid: Annotated[bool, typer.Option(help="instead of the defaults: reference vs vectorized on R in "
                                             "{1,10,100,1000} x N in {10,50,200} x d in {8,64,512} (cells of at most "
                                             "3e7 state entries) for the papers with a grid (zcdp-nfl, dpdo-nc, wang-basar), with "
                                             "fitted scaling exponents; takes about 20 minutes a paper")] = False,
          audit: Annotated[bool, typer.Option(help="also benchmark the privacy auditor")] = True,
          verify: Annotated[bool, typer.Option(help="also time `dpverify verify` on each paper's per-agent-loop "
                                               "example: the conformance checks alone (budget 15 s), and the default "
                                               "run with its claims on a cold (3 minutes) and a warm cache (60 s); "
                                               "adds about 15 minutes")] = False
          ) -> None:
    """Measure speed: each paper's reference algorithm against three baselines, per round, after a warm-up,
    interleaved (A B C, B C A, ...) and repeated; medians with their ranges and ratios paired within a repeat.

    loop: a plain per-agent Python loop, one replica and one agent at a time.

    vectorized: one replica at a time in Python, one matrix product per round over the (N, d) state.

    limit: not an algorithm: the noise draw, the cheapest product of the batched state, the cheapest gradient.

    Each baseline must first give the reference's numbers on the same draws (to 1e-12).

    Targets: reference / limit <= 2; >= 3x faster than vectorized at R >= 100.

    Targets of --grid: never slower than vectorized at R >= 10; fitted N (sparse graphs) and d exponents <= 1.

    Each target is decided on the 95% confidence interval of its median paired ratio (order statistics).

    met: the whole interval on the target's side; NOT met: wholly on the other side; else undecided at this load.

    The output names the machine (CPU, cores, Python, numpy, BLAS) and the load average around each paper.

    Exit status 0 when a target is not met (a finding), 1 when a baseline disagrees with the reference.

    Also the auditor's tightness, speed and memory, and with --verify the time of `dpverify verify` per paper."""
    from dpverify.reproductions.bench.audit import run_audit_benchmarks
    from dpverify.reproductions.bench.papers import BenchmarkInvalid, machine_line
    from dpverify.reproductions.bench.verify import run_verify_benchmarks

    benchmarks = {p: room_module("reproductions", p, "bench") for p in ([paper] if paper else paper_ids())}
    missing = [p for p, module in benchmarks.items() if module is None]
    if paper and missing:
        with_bench = [p for p in paper_ids() if room_module("reproductions", p, "bench") is not None]
        raise DpverifyError(f"no benchmark for paper {paper!r}; benchmarks exist for: {', '.join(with_bench)}")
    typer.echo(machine_line())   # the verdicts hold for this machine, at the load each paper's lines give
    try:
        if grid:
            gridded = {p: m for p, m in benchmarks.items() if m is not None and hasattr(m, "run_grid_benchmarks")}
            if paper and not gridded:
                with_grid = [p for p in paper_ids() if hasattr(room_module("reproductions", p, "bench"),
                                                                "run_grid_benchmarks")]
                raise DpverifyError(f"no --grid for paper {paper!r}; grids exist for: {', '.join(with_grid)}")
            for module in gridded.values():
                module.run_grid_benchmarks(echo=typer.echo)
            return
        for module in benchmarks.values():
            if module is not None:
                module.run_benchmarks(replicas=replicas, iterations=iterations, repeats=repeats, echo=typer.echo)
    except BenchmarkInvalid as invalid:   # a baseline computes something else: a bug of dpverify, not a finding
        typer.echo(f"harness error: {invalid}", err=True)
        raise typer.Exit(EXIT_HARNESS_ERROR) from None
    if audit:
        run_audit_benchmarks(echo=typer.echo)
    if verify:
        run_verify_benchmarks(benchmarks, echo=typer.echo)


@app.command()
def compare(baseline: Annotated[Path, typer.Argument(help="an earlier report's summary.json")],
            current: Annotated[Path, typer.Argument(help="the report to compare with it")] = DEFAULT_OUT / "summary.json",
            tolerance: Annotated[float, typer.Option(min=0.0, help="relative change of an evidence number that counts")]
            = 1e-9) -> None:
    """Compare two reports claim by claim: verdicts, evidence lines, and evidence numbers that moved by
    more than --tolerance (relative). Papers present in only one report are not compared."""
    from dpverify.reproductions.report.compare import compare_summaries, load_summary

    differences = compare_summaries(load_summary(baseline), load_summary(current), tolerance=tolerance)
    for difference in differences:
        typer.echo(difference.line())
    kinds = {kind: sum(d.kind == kind for d in differences)
             for kind in ("verdict", "not-comparable", "added", "removed", "summary", "number")}
    typer.echo(f"{len(differences)} difference(s): " + ", ".join(f"{kind}: {n}" for kind, n in kinds.items()))


INTERRUPTED = ("interrupted: every finished task is in the cache (--cache); run the same command again to resume "
               "from there")


def main(argv: list[str] | None = None) -> None:
    """The `dpverify` command (argv: its arguments, default sys.argv[1:]); ends in sys.exit with its status."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    settle_allocator()
    try:
        with limit_blas_threads():
            status = app(args=argv, prog_name="dpverify", standalone_mode=False)  # an int when a command exits
        if status == EXIT_INTERRUPTED:           # typer turns Ctrl-C into this status, silently
            typer.echo(INTERRUPTED, err=True)
        sys.exit(status if isinstance(status, int) else 0)
    except DpverifyError as error:
        typer.echo(f"error: {one_line(str(error))}", err=True)
        sys.exit(EXIT_USER_ERROR)
    except CheckCrashed as error:
        typer.echo(f"harness error: {error}", err=True)
        sys.exit(EXIT_HARNESS_ERROR)
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except (typer.Abort, KeyboardInterrupt):   # Ctrl-C outside a command's body (while loading, while exiting)
        typer.echo(INTERRUPTED, err=True)
        sys.exit(EXIT_INTERRUPTED)
    except typer.TyperException as error:  # usage errors (bad option values, unknown commands): one line too
        if type(error).__name__ == "NoArgsIsHelpError":    # `dpverify` alone: the help, already shown
            sys.exit(EXIT_USER_ERROR)
        format_message = getattr(error, "format_message", None)
        context = getattr(error, "ctx", None)
        hint = f" (see `{context.command_path} --help`)" if context is not None else ""
        typer.echo(f"error: {one_line(format_message() if format_message else str(error))}{hint}", err=True)
        sys.exit(EXIT_USER_ERROR)


if __name__ == "__main__":
    main()
