"""Run seeded tasks through joblib (local processes) or Dask, with a content-hash cache.

Every task result is a pandas DataFrame stored as one Parquet file named by the task's content
hash (key, function, parameters, root seed) and the digest of the code, written atomically as soon as the task finishes. A
rerun recomputes nothing; an interrupted run resumes where it stopped; a corrupt or partial entry
is moved aside (never silently reused, never deleted) and recomputed. Seeds come from the task key
(dpverify.theory.execution.task_seed_sequence), so the numbers do not depend on the back end or on --jobs.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import logging
import os
import platform
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import joblib
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from dpverify.algorithms.core.errors import DpverifyError
from dpverify.reproductions.data.sources import fingerprint, is_not_available, task_datasets
from dpverify.reproductions.inputs import directory_to_write
from dpverify.reproductions.run.progress import Progress
from dpverify.reproductions.run.threads import limit_blas_threads
from dpverify.theory.execution import Task, run_task, task_seed_sequence, value_digest

log = logging.getLogger("dpverify.runner")

PROVENANCE_KEY = b"dpverify.provenance"
TRACKED_PACKAGES = ("dpverify", "numpy", "scipy", "sympy", "cvxpy", "networkx", "statsmodels", "pandas", "pyarrow",
                    "joblib")


SCHEDULER_TIMEOUT = "30s"


class RunnerError(DpverifyError):
    """The runner was misconfigured (unknown back end, missing scheduler, Dask not installed)."""


SOURCE_PATHS = ("algorithms", "theory", "reproductions", "pyproject.toml")   # what dpverify's numbers are made by


@functools.cache
def environment_provenance() -> dict[str, Any]:
    """Where the numbers came from: the last git commit that changed dpverify's source (unknown outside a
    checkout; a commit of the reports alone does not change it, so committing a report and rerunning leaves it
    as it was), the digest of dpverify's source (known everywhere, uncommitted edits included), Python,
    platform and package versions (dpverify's included)."""
    root = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(
            ["git", "log", "-1", "--format=%H", "--", *SOURCE_PATHS], capture_output=True, text=True, check=True,
            cwd=root,
        ).stdout.strip() or "unknown (not a git checkout)"
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown (not a git checkout)"
    versions = {}
    for package in TRACKED_PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return {"git_commit": commit, "code_digest": code_digest(), "python": platform.python_version(),
            "platform": platform.platform(), "packages": versions}


@functools.cache
def code_digest() -> str:
    """A digest of the installed source of the three packages: a cached result is reused only by the
    code that computed it (a new commit or an uncommitted edit recomputes, never reuses stale numbers)."""
    import dpverify.algorithms
    import dpverify.reproductions
    import dpverify.theory

    digest = hashlib.sha256()
    for package in (dpverify.algorithms, dpverify.theory, dpverify.reproductions):
        root = Path(package.__file__).parent
        for source in sorted(root.rglob("*.py")):
            digest.update(str(source.relative_to(root.parent)).encode())
            digest.update(source.read_bytes())
    return digest.hexdigest()


@functools.cache
def environment_digest() -> str:
    """What besides the task can change its numbers: dpverify's source and the tracked packages' versions.
    Computed once per process."""
    environment = environment_provenance()
    return value_digest({"code": environment["code_digest"], "packages": environment["packages"]})


def task_data(task: Task) -> dict[str, Any]:
    """The sha256 of the files of each dataset the task reads (data.sources.fingerprint), so providing, replacing or
    removing them recomputes exactly the tasks that read them. May fetch the data, once, in this process."""
    return {name: fingerprint(name) for name in task_datasets(task.params)}


def cache_key(task: Task, root_seed: int) -> str:
    """The task (key, function, parameters by value, seed), its environment (environment_digest) and its data."""
    return value_digest({"task": task.content_hash(root_seed), "environment": environment_digest(),
                         "data": task_data(task)})


def task_provenance(task: Task, root_seed: int) -> dict[str, str]:
    seed = task_seed_sequence(root_seed, task.key)
    return {
        **environment_provenance(),
        "task_key": task.key,
        "function": task.function_name,
        "params": json.dumps(dict(task.params), sort_keys=True, default=str),   # for reading; the key hashes by value
        "root_seed": str(root_seed),
        "seed_spawn_key": json.dumps(list(seed.spawn_key)),
        "content_hash": task.content_hash(root_seed),
        "code_digest": code_digest(),
        "data_sha256": json.dumps(task_data(task), sort_keys=True),   # the sha256 of the data read, verified or not
        "cache_key": cache_key(task, root_seed),
    }


def write_parquet(frame: pd.DataFrame, path: Path, provenance: dict[str, str]) -> None:
    """Atomic write: a crash mid-write leaves a temp file, never a truncated entry under `path`."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    metadata_ = dict(table.schema.metadata or {})
    metadata_[PROVENANCE_KEY] = json.dumps(provenance, sort_keys=True).encode()
    table = table.replace_schema_metadata(metadata_)
    atomic_write(path, lambda temporary: pq.write_table(table, temporary))


def atomic_write(path: Path, write: Callable[[str], None]) -> None:
    """`write(temporary)` then rename onto `path`: a crash mid-write leaves a temp file, never a truncated `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(handle)
    try:
        write(temporary)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def quarantine(path: Path, what: str, error: Exception) -> None:
    """Move an unreadable cache entry aside (never reused, never deleted) so that it is recomputed."""
    moved = path.with_suffix(".corrupt")
    os.replace(path, moved)
    log.warning("cache entry for %s was corrupt (%s); moved to %s and recomputing", what, error, moved)


def as_stored(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` as the cache gives it back (through Arrow: an object column of floats becomes float64, the index
    a range): a computed result and a cached one are the same frame, so the checks that read it, their cache
    keys and the results written are the same on a cold and a warm run."""
    return pa.Table.from_pandas(frame, preserve_index=False).to_pandas()


def read_provenance(path: Path) -> dict[str, str]:
    raw = pq.read_schema(path).metadata or {}
    return json.loads(raw[PROVENANCE_KEY]) if PROVENANCE_KEY in raw else {}


def writable_directory(path: Path, what: str) -> Path:
    """`path` as a directory this process can write to, created if missing; a one-line error before any
    work is done if it cannot be (a file, a read-only place; inputs.directory_to_write), and a RunnerError if
    writing fails all the same (a full disk, a file system that lies about its permissions)."""
    directory_to_write(path, what)
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-test-"):
            pass
    except OSError as error:
        raise RunnerError(f"{what} {path} is not a writable directory: {error.strerror or error}") from error
    return path


@dataclass
class ResultCache:
    directory: Path

    def path(self, task: Task, root_seed: int) -> Path:
        key = cache_key(task, root_seed)
        return self.directory / key[:2] / f"{key}.parquet"

    def load(self, task: Task, root_seed: int) -> tuple[pd.DataFrame, float] | None:
        """The task's result and the CPU seconds it took when computed, or None (not cached, or unreadable)."""
        path = self.path(task, root_seed)
        if not path.exists():
            return None
        try:
            provenance = read_provenance(path)
            if provenance.get("cache_key") != cache_key(task, root_seed):
                raise ValueError("content hash in the file does not match its name")
            return pq.read_table(path).to_pandas(), float(provenance.get("cpu_seconds", 0.0))
        except Exception as error:  # any unreadable entry is quarantined and recomputed
            quarantine(path, f"task {task.key}", error)
            return None

    def store(self, task: Task, root_seed: int, frame: pd.DataFrame, cpu_seconds: float = 0.0) -> None:
        """Kept with its CPU time, so that a run reading it can say what computing it cost."""
        write_parquet(frame, self.path(task, root_seed),
                      {**task_provenance(task, root_seed), "cpu_seconds": repr(cpu_seconds)})


ORPHAN_POLL_SECONDS = 1.0   # how often a local worker checks that the process that started it is alive


def _exit_with_parent(parent: int) -> None:
    """A local worker's initializer: exit as soon as `parent`, the process that started it, is gone, even after a
    SIGKILL that let the parent clean nothing up (loky's workers would otherwise wait on their dead pipes). A daemon
    thread polls the parent pid; the parent is passed in, so a worker whose parent died while it was still starting
    exits too. The kernel's PR_SET_PDEATHSIG is not used: it fires when the parent's spawning THREAD ends."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(ORPHAN_POLL_SECONDS)
        os._exit(1)
    threading.Thread(target=watch, name="dpverify-orphan-watchdog", daemon=True).start()


def _run_indexed(index: int, task: Task, root_seed: int) -> tuple[int, pd.DataFrame, float]:
    """The task's result and the CPU seconds it took, measured in the process that ran it (rounded to the ms:
    what the cache keeps, so a rerun reads back the same number)."""
    with limit_blas_threads():  # in joblib and Dask workers too
        started = time.process_time()
        frame = run_task(task, root_seed)
        return index, frame, round(time.process_time() - started, 3)


@dataclass
class Runner:
    """A map-like executor for dpverify.theory.execution.CheckContext and for experiments."""

    cache_directory: Path | None = None
    jobs: int = 1
    backend: str = "local"
    scheduler: str | None = None
    show_progress: bool = True
    computed: int = field(default=0, init=False)  # tasks actually computed (not from cache)
    cached: int = field(default=0, init=False)    # tasks read from the cache that an earlier run computed
    # CPU seconds each task returned took when computed (now, or by the run that cached it), by content hash: what
    # a paper's experiments cost, the same on a rerun from the cache
    task_cpu: dict[str, float] = field(default_factory=dict, init=False)
    # CPU seconds of the tasks computed now outside this process (workers): a check that hands tasks to this
    # runner adds them to the CPU time of its own process (check_cache.CheckCache)
    remote_cpu: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        if self.backend not in ("local", "dask"):
            raise RunnerError(f"unknown backend {self.backend!r}; expected 'local' or 'dask'")
        if self.jobs < 1:
            raise RunnerError(f"--jobs must be >= 1; got {self.jobs}")
        if self.backend == "dask" and not self.scheduler:   # checked here, before the cache or any task
            raise RunnerError("--backend dask needs --scheduler ADDRESS (e.g. tcp://127.0.0.1:8786)")
        if self.backend == "dask" and importlib.util.find_spec("distributed") is None:
            raise RunnerError("the Dask back end needs the 'dask' extra: pip install 'dpverify[dask]'")
        if self.backend != "dask" and self.scheduler:
            raise RunnerError(f"--scheduler is only used with --backend dask; got --backend {self.backend}")
        if self.cache_directory is not None:
            writable_directory(Path(self.cache_directory), "--cache")

    @property
    def cache(self) -> ResultCache | None:
        return ResultCache(self.cache_directory) if self.cache_directory is not None else None

    def __call__(self, tasks: Sequence[Task], root_seed: int) -> list[pd.DataFrame]:
        keys = [task.key for task in tasks]
        if len(set(keys)) != len(keys):
            raise RunnerError("task keys must be unique (they seed the tasks)")
        results: dict[int, pd.DataFrame] = {}
        if self.cache is not None:
            for index, task in enumerate(tasks):
                cached = self.cache.load(task, root_seed)
                if cached is not None:
                    results[index], cpu = cached
                    key = task.content_hash(root_seed)
                    self.cached += key not in self.task_cpu   # not a task this run computed or read before
                    self.task_cpu[key] = cpu
        # the largest first (by Task.cost; ties keep their order): a long task started last would leave the other
        # workers idle until it ends (longest-processing-time-first list scheduling, Graham 1969)
        pending = sorted((index for index in range(len(tasks)) if index not in results), key=lambda i: -tasks[i].cost)
        if pending:
            run = self._run_dask if self.backend == "dask" else self._run_local
            # results arrive as tasks finish and are stored at once: an interrupted run resumes
            for index, frame, cpu in run([(i, tasks[i]) for i in pending], root_seed):
                frame = as_stored(frame)
                if self.cache is not None and not is_not_available(frame):   # missing data may be provided later
                    self.cache.store(tasks[index], root_seed, frame, cpu)   # with its CPU time: a rerun reads it back
                self.task_cpu[tasks[index].content_hash(root_seed)] = cpu
                results[index] = frame
                self.computed += 1
                self.remote_cpu += cpu if self.backend == "dask" or self.jobs > 1 else 0.0
        return [results[index] for index in range(len(tasks))]

    def _progress(self, indexed_tasks, description: str):
        """The progress of these tasks, its time left estimated by their Task.cost where they have one."""
        work = sum(task.cost for _, task in indexed_tasks)
        return Progress(len(indexed_tasks), description, unit="task", enabled=self.show_progress, work=work)

    @staticmethod
    def _advance(bar: Progress, task: Task, frame: pd.DataFrame) -> None:
        bar.update(work=task.cost, took_time=not is_not_available(frame))   # without its data a task ends at once

    def _run_local(self, indexed_tasks, root_seed):
        by_index = dict(indexed_tasks)
        with self._progress(indexed_tasks, "tasks") as bar:
            if self.jobs == 1:
                outputs = (_run_indexed(index, task, root_seed) for index, task in indexed_tasks)
            else:
                with joblib.parallel_config(backend="loky", initializer=_exit_with_parent,   # joblib >= 1.5
                                            initargs=(os.getpid(),)):
                    # one task per dispatch: joblib's automatic batching, seeing tasks that end at once (a data set
                    # that is not available), bundles the next ones, and hours of tasks then run one after another
                    # on one worker, out of the largest-first order
                    parallel = joblib.Parallel(n_jobs=self.jobs, batch_size=1, return_as="generator_unordered")
                outputs = parallel(joblib.delayed(_run_indexed)(i, t, root_seed) for i, t in indexed_tasks)
            for index, frame, cpu in outputs:
                yield index, frame, cpu
                self._advance(bar, by_index[index], frame)

    def _run_dask(self, indexed_tasks, root_seed):
        from distributed import Client, as_completed
        indices, tasks = zip(*indexed_tasks)
        by_index = dict(indexed_tasks)
        try:
            client = Client(self.scheduler, timeout=SCHEDULER_TIMEOUT)
        except OSError as error:
            raise RunnerError(f"cannot reach the Dask scheduler at {self.scheduler} ({error})") from error
        with client, self._progress(indexed_tasks, "tasks (dask)") as bar:
            try:
                futures = client.map(_run_indexed, indices, tasks, root_seed=root_seed,
                                     key=[f"dpverify-{t.content_hash(root_seed)}" for t in tasks])
                for future in as_completed(futures):
                    index, frame, cpu = future.result()
                    yield index, frame, cpu
                    self._advance(bar, by_index[index], frame)
            except (ModuleNotFoundError, RuntimeError) as error:
                # the scheduler unpickles the tasks: without dpverify it fails (wrapped in a RuntimeError)
                missing = error if isinstance(error, ModuleNotFoundError) else error.__cause__
                if not isinstance(missing, ModuleNotFoundError):
                    raise
                raise RunnerError(f"the Dask scheduler at {self.scheduler} cannot import dpverify ({missing}); start "
                                  "the scheduler and the workers in an environment where dpverify is installed "
                                  "(pip install -e '.[dask]')") from error
