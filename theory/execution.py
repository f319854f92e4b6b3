"""What a check may ask of the layer above it: many seeded runs, and experiment results.

theory/ knows nothing about files, caches or parallel back ends. A check that needs many
simulations describes them as `Task`s and hands them to `context.run_tasks`, a map-like executor
supplied from above (dpverify.reproductions.run.runner adds processes, Dask and a content-hash cache). The
default executor runs them here, serially, with the same seeding, so a check gives the same
numbers whichever executor runs it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpverify.algorithms.core.errors import DpverifyError
from dpverify.theory.door.implementations import REFERENCE

DEFAULT_ROOT_SEED = 20240221  # default: the date of the zCDP-NFL preprint (seeds/004 L2); any fixed value works


@dataclass(frozen=True)
class Task:
    """One seeded unit of work. `function(rng=..., **params)` must be a module-level function
    returning a pandas DataFrame; `params` must be JSON-serializable (they are hashed and stored)."""

    key: str
    function: Callable[..., pd.DataFrame]
    params: Mapping[str, Any]
    cost: float = 0.0   # a rough size (e.g. CPU seconds): the runner starts the largest first; never in the hash

    def __post_init__(self) -> None:  # a task handed an experiment's parameters may read any of them, in a worker
        for value in self.params.values():
            if isinstance(value, Parameters):
                value.note_read(*value)

    @property
    def function_name(self) -> str:
        return f"{self.function.__module__}.{self.function.__qualname__}"

    def content_hash(self, root_seed: int) -> str:
        """A digest of everything that defines the task's numbers here: key, function, root seed and the
        parameters by value (value_digest)."""
        return value_digest({"key": self.key, "function": self.function_name, "params": self.params,
                             "root_seed": root_seed})


class UnhashableParameterError(DpverifyError, TypeError):
    """A task parameter that cannot be hashed by value (the cache could not tell two such values apart)."""


def value_digest(value: Any) -> str:
    """SHA-256 of a value by its content: mappings by sorted keys, sequences in order, numpy arrays by
    dtype, shape and bytes, numbers and strings with their type. Two values share a digest only if they are
    equal (up to SHA-256 collisions); anything else is refused, so no printout (json's default=str, numpy's
    summarized repr of long arrays) can make two different values look alike. json and pickle are not
    used: json cannot hold arrays, and pickle bytes change with library versions for equal values."""
    digest = hashlib.sha256()

    def feed(item: Any, where: str) -> None:
        if isinstance(item, Mapping):
            digest.update(b"M%d;" % len(item))
            for key in sorted(item, key=lambda k: (type(k).__name__, str(k))):
                feed(key, where)
                feed(item[key], f"{where}.{key}")
        elif isinstance(item, (list, tuple)):
            digest.update(b"L%d;" % len(item))
            for index, element in enumerate(item):
                feed(element, f"{where}[{index}]")
        elif isinstance(item, np.ndarray):
            if item.dtype.hasobject:
                raise UnhashableParameterError(f"parameter {where}: an object array cannot be hashed by value")
            contiguous = np.ascontiguousarray(item)
            digest.update(f"A{contiguous.dtype.str}{contiguous.shape};".encode())
            digest.update(contiguous.tobytes())
        elif item is None or isinstance(item, (bool, np.bool_)):
            digest.update(f"B{item};".encode())
        elif isinstance(item, (int, np.integer)):
            digest.update(f"I{int(item)};".encode())
        elif isinstance(item, (float, np.floating)):
            digest.update(f"F{float(item).hex()};".encode())
        elif isinstance(item, str):
            encoded = item.encode()
            digest.update(b"S%d;" % len(encoded) + encoded)
        else:
            raise UnhashableParameterError(f"parameter {where} is a {type(item).__name__}, which the cache cannot hash "
                                           "by value; pass numbers, strings, lists, mappings or numpy arrays")
    feed(value, "params")
    return digest.hexdigest()


def task_seed_sequence(root_seed: int, key: str) -> np.random.SeedSequence:
    """The task's seed: a SeedSequence from the root seed and a stable hash of the task key, so the
    numbers depend on neither the order of tasks nor the number of workers."""
    digest = hashlib.sha256(key.encode()).digest()
    spawn_key = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    return np.random.SeedSequence(entropy=root_seed, spawn_key=spawn_key)


def run_task(task: Task, root_seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(task_seed_sequence(root_seed, task.key))
    result = task.function(rng=rng, **task.params)
    if not isinstance(result, pd.DataFrame):
        raise TypeError(f"task {task.key} returned {type(result).__name__}, expected a pandas DataFrame")
    return result


def serial_executor(tasks: Sequence[Task], root_seed: int) -> list[pd.DataFrame]:
    return [run_task(task, root_seed) for task in tasks]


Executor = Callable[[Sequence[Task], int], list[pd.DataFrame]]


class UndeclaredParameterError(DpverifyError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


class Parameters(Mapping[str, Any]):
    """An experiment's parameter values as a check receives them (`context.parameters[experiment]`),
    each with its provenance: source "paper" with the seed line, or "default" with why, and a default's
    spread (its range or alternatives with range_why, or how it is derived; reproductions/run/params.py). Reading
    a parameter the experiment does not declare raises, `.get` included: no check falls back to a
    default of its own."""

    def __init__(self, experiment: str, values: Mapping[str, Any], provenance: Mapping[str, tuple[str, str]],
                 spreads: Mapping[str, Mapping[str, Any]] | None = None):
        self.experiment, self._values, self._provenance = experiment, dict(values), dict(provenance)
        self._spreads = dict(spreads or {})

    def __getitem__(self, name: str) -> Any:
        if name not in self._values:
            raise UndeclaredParameterError(f"experiment {self.experiment!r} declares no parameter {name!r} "
                                           f"(declared: {', '.join(self._values)})")
        self.note_read(name)
        return self._values[name]

    def __contains__(self, name: object) -> bool:  # asking is not reading
        return name in self._values

    def note_read(self, *names: str) -> None:
        if (log := _READS.get()) is not None:
            log.update((f"{self.experiment}/{name}", record) for name, record in self.provenance(*names).items())

    def get(self, name: str, default: Any = None) -> Any:
        return self[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:  # also what a task's parameter hash sees: the values, never an address
        return repr(self._values)

    def provenance(self, *names: str) -> dict[str, dict[str, Any]]:
        """{name: {"value", "source", "note", and the default's spread if declared}} of the named parameters."""
        return {name: {"value": self._values[name], "source": self._provenance[name][0],
                       "note": self._provenance[name][1], **self._spreads.get(name, {})} for name in names}


_READS: ContextVar[dict[str, dict[str, Any]] | None] = ContextVar("parameter_reads", default=None)


class ParameterReads:
    """The experiment parameters read while it was active (`record_parameter_reads`)."""

    def __init__(self) -> None:
        self.reads: dict[str, dict[str, Any]] = {}   # "experiment/name" -> {"value", "source", "note"}

    def provenance(self) -> dict[str, dict[str, Any]]:
        return dict(sorted(self.reads.items()))


@contextmanager
def record_parameter_reads() -> Iterator[ParameterReads]:
    """Within the block, every parameter read (`params[name]`, `.get`, or a Task handed the mapping) is
    recorded, so the harness attaches the provenance of exactly what a check used."""
    reads = ParameterReads()
    token = _READS.set(reads.reads)
    try:
        yield reads
    finally:
        _READS.reset(token)


class ParametersNotSupplied(KeyError):
    """A check read the parameters of an experiment this run did not supply; the harness reports the
    check not-run with this reason (theory/claims.py), so no check writes that preamble itself."""

    def __str__(self) -> str:
        return f"parameters of experiment {self.args[0]!r} not supplied (its TOML file is read by the CLI)"


class ExperimentParameters(dict):
    """experiment id -> its Parameters; reading an experiment that is not here raises ParametersNotSupplied."""

    def __missing__(self, experiment: str):
        raise ParametersNotSupplied(experiment)


@dataclass
class CheckContext:
    """Handed to every check. `profile` is 'quick' (CI-sized) or 'paper' (the paper's sizes);
    `parameters` maps an experiment id to its parameter values (checks run on the experiments'
    actual instances and parameters); `experiments` maps an experiment id to its results table
    when reproductions has run it."""

    profile: str = "quick"
    root_seed: int = DEFAULT_ROOT_SEED
    executor: Executor = serial_executor
    parameters: dict[str, Mapping[str, Any]] = field(default_factory=ExperimentParameters)
    experiments: dict[str, pd.DataFrame] = field(default_factory=dict)
    memo: dict[str, Any] = field(default_factory=dict)  # results shared between checks of one run
    datasets: dict[str, str] = field(default_factory=dict)  # dataset name -> "" if available, else why not
    memo_reads: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)  # memo key -> parameters it read
    audit_samples: int | None = None    # runs per side of the privacy audits (None: the profile's default)
    audit_confidence: float = 0.95      # simultaneous confidence of an audit's lower bounds
    # which implementation a check that runs the algorithm itself runs (Check.runs_algorithm): REFERENCE, or the
    # user's under `dpverify verify` (theory/door/implementations.py: resolve(context.implementation))
    implementation: Any = REFERENCE

    def __post_init__(self) -> None:
        self.parameters = ExperimentParameters(self.parameters)

    def run_tasks(self, tasks: Sequence[Task]) -> list[pd.DataFrame]:
        return self.executor(tasks, self.root_seed)

    def memoized(self, key: str, compute: Callable[[], Any]) -> Any:
        """compute(), once per run; a later check that reuses it is credited with the parameters it read."""
        if key not in self.memo:
            with record_parameter_reads() as reads:
                self.memo[key] = compute()
            self.memo_reads[key] = reads.reads
        if (log := _READS.get()) is not None:
            log.update(self.memo_reads.get(key, {}))
        return self.memo[key]

    @property
    def is_quick(self) -> bool:
        return self.profile == "quick"
