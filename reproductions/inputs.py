"""The command line's inputs, checked before any work starts: a bad one is one line and exit 2, with no
file written and no task run.

The checks here create nothing: a directory that does not exist yet is checked through its nearest
existing parent, and is created only once the command starts its work (runner.writable_directory).
Option ranges that typer can check (--seed >= 0, --jobs >= 1) are declared on the options; what needs
more than a range (directories to read, directories and files to write, the JSON a run reads or merges into)
is here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from dpverify.algorithms.core.errors import DpverifyError


class InputError(DpverifyError):
    """A command-line input the command cannot work with."""


def one_line(message: str) -> str:
    """A message as the single line the command prints for a user error."""
    return "; ".join(line.strip() for line in message.splitlines() if line.strip())


def _nearest_existing(path: Path) -> Path:
    return next(candidate for candidate in (path, *path.absolute().parents) if candidate.exists())


def directory_to_write(path: Path, what: str) -> Path:
    """`path` is a directory this process may write, or may create: a one-line InputError otherwise."""
    existing = _nearest_existing(path)
    if existing == path and not path.is_dir():
        raise InputError(f"{what} {path} is a file, not a directory")
    if not existing.is_dir():
        raise InputError(f"{what} {path} cannot be created: {existing} is a file, not a directory")
    # os.access also refuses root on a read-only file system or an immutable directory (chattr +i)
    if not os.access(existing, os.W_OK | os.X_OK):
        where = "" if existing == path else f" cannot be created: {existing}"
        raise InputError(f"{what} {path}{where} is not writable")
    return path


def readable_directory(path: Path, what: str) -> Path:
    """`path` is an existing directory this process may list and read: a one-line InputError otherwise (never a
    fallback: what the user named is what is read)."""
    if not path.exists():
        raise InputError(f"{what} {path} does not exist; expected an existing directory")
    if not path.is_dir():
        raise InputError(f"{what} {path} is a file, not a directory")
    if not os.access(path, os.R_OK | os.X_OK):
        raise InputError(f"{what} {path} is not readable; expected a directory this process can list and read")
    return path


def file_to_write(path: Path, what: str) -> Path:
    """`path` can be written as a file (its directory is created if missing): a one-line InputError otherwise."""
    if path.is_dir():
        raise InputError(f"{what} {path} is a directory; expected a file name")
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError(f"{what} {path} is not writable")
    directory_to_write(path.parent, f"the directory of {what}")
    return path


def open_unit_interval(value: float, what: str) -> float:
    if not 0 < value < 1:
        raise InputError(f"{what} must lie in (0, 1); got {value}")
    return value


def run_paths(*, cache: Path, out: Path | None, baseline: Path | None, junit: Path | None) -> dict[str, Any] | None:
    """The paths and JSON inputs of a run (check, reproduce), all checked before its first task; returns the
    --baseline summary (read once, here: a damaged baseline must not cost a run)."""
    from dpverify.reproductions.report.compare import load_summary

    loaded = load_summary(baseline) if baseline is not None else None
    if out is not None:
        directory_to_write(out, "--out")
        if (out / "summary.json").exists():   # the run merges its records into it: a damaged one stops it now
            load_summary(out / "summary.json")
    if junit is not None:
        file_to_write(junit, "--junit")
    directory_to_write(cache, "--cache")
    return loaded
