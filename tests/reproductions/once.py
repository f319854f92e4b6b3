"""A module fixture's value computed once per test run, not once per xdist worker.

Under `-n auto --dist worksteal` the tests of one module can land on every worker, and a module-scoped fixture
then runs on each of them: zCDP-NFL's verifications (about two minutes of CPU) ran twice. This is pytest-xdist's
documented pattern for that: the first worker computes under a file lock in the run's shared temporary folder,
the others read its pickle. Outside xdist the fixture simply computes."""

import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

from filelock import FileLock


def computed_once(name: str, compute: Callable[[], Any], tmp_path_factory, worker_id: str) -> Any:
    if worker_id == "master":    # not under xdist: nothing to share (and the parent folder outlives the run)
        return compute()
    path = Path(tmp_path_factory.getbasetemp()).parent / f"{name}.pickle"   # one folder per run, shared by its workers
    with FileLock(f"{path}.lock"):
        if path.is_file():
            return pickle.loads(path.read_bytes())
        value = compute()
        path.write_bytes(pickle.dumps(value))
        return value
