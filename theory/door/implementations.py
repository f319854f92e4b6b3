"""Which implementation a run uses: dpverify's reference, or a user's (`dpverify verify`).

An experiment whose tasks run the paper's algorithm through its contract declares the parameter
`implementation`, value REFERENCE (our batched reference). `dpverify verify` re-runs such an experiment
with `implementation_value(...)`: the implementation's spec (`module:object` or `path/to/file.py:object`),
which each task runs in an isolated worker process (theory/door/isolation.py), and the digest of its source files. The digest is part of
the task's parameters, so it keys the cache: no implementation receives another's results.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dpverify.algorithms.core.errors import DpverifyError
from dpverify.theory.door.isolation import DEFAULT_TIMEOUT, Isolated

REFERENCE = "reference"
_IN_PROCESS: dict[str, Callable] = {}   # callables handed to verify from Python (they have no spec to load)
_ISOLATED: dict[str, Isolated] = {}     # one worker per implementation and process (isolated)


class ImplementationNotFound(DpverifyError):
    """`--impl` does not name a loadable callable."""


def _import(target: str, spec: str):
    if not target.endswith(".py"):
        return importlib.import_module(target)
    path = Path(target).resolve()
    if not path.is_file():
        raise ImplementationNotFound(f"no file {path} (from --impl {spec!r})")
    # named by path and content: loaded once per process (tasks, a second verify), again when the file changes
    name = f"dpverify_user_{path.stem}_{hashlib.sha256(str(path).encode() + path.read_bytes()).hexdigest()[:12]}"
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def load_object(spec: str) -> Any:
    """`package.module:object` or `path/to/file.py:object` (a dotted object path is followed)."""
    if spec in _IN_PROCESS:
        return _IN_PROCESS[spec]
    target, _, attribute = spec.rpartition(":")
    if not target or not attribute:
        raise ImplementationNotFound(f"expected module:object or path/to/file.py:object; got {spec!r}")
    try:
        module = _import(target, spec)
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


def _source_files(module) -> list[Path]:
    """The module's file, or every .py file of the top-level package it belongs to (a helper it imports from
    its own package changes its results as much as its own file does)."""
    file = getattr(module, "__file__", None)
    if file is None:
        return []
    top = sys.modules.get(module.__name__.split(".")[0])
    package_dir = getattr(top, "__path__", None)
    if package_dir:
        return sorted(p for root in package_dir for p in Path(root).rglob("*.py"))
    return [Path(file)]


def source_digest(implementation: Callable) -> str:
    """SHA-256 of the implementation's source files; a fresh random token when they cannot be found (the
    results are then never shared)."""
    files = _source_files(inspect.getmodule(implementation))
    if not files:
        return f"unknown-{uuid.uuid4().hex}"
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.name).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def isolated(spec: str, timeout: float | None = None) -> Isolated:
    """The isolated runner of the implementation `spec` (theory/door/isolation.py), one worker per spec and process;
    a callable handed over from Python (implementation_value) runs in a forked worker. `timeout` (seconds per call)
    replaces the runner's limit when given."""
    if spec not in _ISOLATED:
        _ISOLATED[spec] = Isolated(spec, _IN_PROCESS.get(spec))
    if timeout is not None:
        _ISOLATED[spec].timeout = float(timeout)
    return _ISOLATED[spec]


def implementation_value(implementation: Callable | str, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """The value of an experiment's `implementation` parameter for `implementation` (a spec or a callable), with
    the time limit of one call. A spec is loaded in its worker, never here. A callable is registered in this
    process under a spec of its own, so it runs only in workers forked from this process."""
    if isinstance(implementation, str):
        spec, source = implementation, isolated(implementation, timeout).fresh().digest
    else:
        spec = f"<python>:{getattr(implementation, '__qualname__', type(implementation).__name__)}@{id(implementation):x}"
        _IN_PROCESS[spec] = implementation
        source = source_digest(implementation)    # reads its files; runs none of its code
    return {"spec": spec, "source": source, "timeout": float(timeout)}


def in_process_only(value: Any) -> bool:
    """Whether the implementation can only run in this process (a callable handed over from Python)."""
    return isinstance(value, dict) and value.get("spec", "").startswith("<python>:")


def resolve(value: Any) -> Isolated | None:
    """The isolated runner of the implementation an `implementation` parameter names; None for REFERENCE (the
    caller's batched reference, which runs here)."""
    if value == REFERENCE:
        return None
    if not isinstance(value, dict) or "spec" not in value:
        raise ImplementationNotFound(f"implementation must be {REFERENCE!r} or an implementation_value(...); got {value!r}")
    return isolated(value["spec"], value.get("timeout"))
