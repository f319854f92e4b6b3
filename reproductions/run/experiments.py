"""Experiments (one per figure or table) and how to run one: config -> tasks -> results -> figure."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from dpverify.algorithms.core.errors import DpverifyError
from dpverify.reproductions.report.publish import jsonable, save_figure
from dpverify.reproductions.run.params import SCHEMA_FILE, ExperimentConfig, load_experiment, parameter_schema, rules_of
from dpverify.reproductions.run.runner import Runner, environment_provenance, write_parquet
from dpverify.theory.execution import Task
from dpverify.theory.papers import paper_ids, room_module


class UnknownExperimentError(DpverifyError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class FigureOutput:
    panels: dict[str, Any]           # panel name -> matplotlib Figure
    observed: str                    # what our run shows, in words, with numbers
    table: pd.DataFrame | None = None


@dataclass(frozen=True)
class Experiment:
    id: str
    paper: str
    config_file: Path
    build_tasks: Callable[[ExperimentConfig], list[Task]]
    summarize: Callable[[ExperimentConfig, pd.DataFrame], FigureOutput]

    def config(self, profile: str) -> ExperimentConfig:
        return load_experiment(self.config_file, profile, experiment=f"{self.paper}/{self.id}")


@dataclass
class ExperimentRun:
    experiment: Experiment
    config: ExperimentConfig
    results: pd.DataFrame
    record: dict[str, Any] = field(default_factory=dict)


def experiments_of(paper_id: str) -> list[Experiment]:
    """The paper's experiments: `EXPERIMENTS` of `reproductions/<room>/experiments.py`, if it has one."""
    module = room_module("reproductions", paper_id, "experiments")
    return list(module.EXPERIMENTS) if module is not None else []


def parameters_of(paper_id: str, profile: str) -> dict:
    """Every experiment's parameter values with their provenance, as the paper's checks receive them."""
    return {experiment.id: experiment.config(str(profile)).as_parameters() for experiment in experiments_of(paper_id)}


def derived_parameter_schema() -> dict[str, dict[str, dict]]:
    """Every experiment's schema derived from its TOML as it stands (params.rules_of): equal to the committed
    parameters.schema.json while the TOML files are as committed (a test keeps them so)."""
    return {f"{experiment.paper}/{experiment.id}": rules_of(experiment.config_file)
            for paper in paper_ids() for experiment in experiments_of(paper)}


def write_parameter_schema() -> Path:
    """Regenerate parameters.schema.json from the TOML files: after changing a key's type or sign on purpose, or
    adding an experiment or a parameter."""
    lines = []   # one line per parameter: a change of type or sign is a one-line diff
    for experiment, rules in sorted(derived_parameter_schema().items()):
        entries = [f"  {json.dumps(name)}: {json.dumps(rule, sort_keys=True)}" for name, rule in sorted(rules.items())]
        lines.append(f" {json.dumps(experiment)}: {{\n" + ",\n".join(entries) + "\n }")
    SCHEMA_FILE.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    parameter_schema.cache_clear()
    return SCHEMA_FILE


def find_experiment(paper_id: str, experiment_id: str) -> Experiment:
    for experiment in experiments_of(paper_id):
        if experiment.id == experiment_id:
            return experiment
    known = ", ".join(e.id for e in experiments_of(paper_id)) or "none"
    raise UnknownExperimentError(f"unknown figure/experiment {experiment_id!r} for paper {paper_id!r}; known: {known}")


def experiment_results(experiment: Experiment, profile: str, runner: Runner, root_seed: int) -> pd.DataFrame:
    """The results of the experiment's tasks under another root seed (`--seeds`): cached like run_experiment's,
    neither written nor drawn (the report shows the first seed's)."""
    config = experiment.config(profile)
    return pd.concat(runner(experiment.build_tasks(config), root_seed), ignore_index=True)


def experiment_cpu_seconds(experiment: Experiment, profile: str, runner: Runner, root_seed: int) -> float:
    """The CPU seconds the experiment's tasks took under `root_seed`, as computed now or by the run that cached them
    (Runner.task_cpu); 0 for tasks this runner has not seen."""
    return math.fsum(runner.task_cpu.get(task.content_hash(root_seed), 0.0)
                     for task in experiment.build_tasks(experiment.config(profile)))


def prefetch(experiments: list[Experiment], profile: str, runner: Runner, root_seed: int) -> int:
    """Run the tasks of all `experiments` through one pool, into the runner's cache, where run_experiment then
    finds them: a worker that finishes one experiment's last task starts on the next experiment instead of idling
    until its siblings finish (on 2 cores, an experiment with one long task otherwise runs on one). A task that
    several experiments share (same key, e.g. v0-table-5's runs) runs once. Without a cache or with one job there
    is nothing to gain, and nothing runs. Returns the number of tasks submitted."""
    if runner.cache is None or runner.jobs < 2 or len(experiments) < 2:
        return 0
    tasks: dict[str, Task] = {}
    for experiment in experiments:
        for task in experiment.build_tasks(experiment.config(profile)):
            tasks.setdefault(task.key, task)
    runner(list(tasks.values()), root_seed)
    return len(tasks)


def run_experiment(experiment: Experiment, profile: str, runner: Runner, root_seed: int, out_dir: Path,
                   config: ExperimentConfig | None = None) -> ExperimentRun:
    """Run the tasks (cached), store the results as Parquet with provenance, draw the figure. `config`: the
    experiment's parameters if not its TOML's under `profile` (a sweep's run)."""
    config = config if config is not None else experiment.config(profile)
    tasks = experiment.build_tasks(config)
    results = pd.concat(runner(tasks, root_seed), ignore_index=True)
    slug = f"{experiment.paper}__{experiment.id}__{profile}"
    results_path = out_dir / "results" / f"{slug}.parquet"
    provenance = {**environment_provenance(), "experiment": experiment.id, "profile": profile,
                  "root_seed": str(root_seed), "parameters": str(jsonable(config.values())),
                  "task_keys": str([t.key for t in tasks])}
    write_parquet(results, results_path, provenance)
    output = experiment.summarize(config, results)
    images = {name: save_figure(figure, out_dir / "figures" / f"{slug}__{name}.png")
              for name, figure in output.panels.items()}
    record = {"id": experiment.id, "title": config.title, "seed_line": config.seed_line,
              "paper_says": config.paper_says, "observed": output.observed, "images": images,
              "results": str(results_path.relative_to(out_dir)),
              "parameters": [{"name": p.name, "value": jsonable(p.value), "source": p.source, "note": p.note,
                              **jsonable(p.spread())} for p in config.parameters.values()],
              "table": jsonable(output.table.to_dict(orient="records")) if output.table is not None else None}
    return ExperimentRun(experiment, config, results, record)
