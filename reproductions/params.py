"""Experiment parameters from TOML, each value with where it comes from.

Every parameter is a table `[parameters.NAME]` with `value`, `source` ("paper" or "default") and
either `line` (the seed line that gives it) or `why` (the reason for the default). A profile
(`[profiles.quick]`, `[profiles.paper]`) may override values; an override is itself a default whose
reason is the profile. Unknown profiles, missing provenance and overrides of undeclared parameters
are errors: a value the report cannot attribute never reaches a run.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.theory.execution import Parameters

PROFILES = ("quick", "paper")


@dataclass(frozen=True)
class Parameter:
    name: str
    value: Any
    source: str   # "paper" or "default"
    note: str     # seed line for "paper", reason for "default"


@dataclass(frozen=True)
class ExperimentConfig:
    id: str
    title: str
    seed_line: str
    paper_says: str
    profile: str
    parameters: dict[str, Parameter]

    def __getitem__(self, name: str) -> Any:
        return self.parameters[name].value

    def values(self) -> dict[str, Any]:
        return {name: p.value for name, p in self.parameters.items()}

    def as_parameters(self) -> Parameters:
        """The values with their provenance, as checks receive them (CheckContext.parameters)."""
        return Parameters(self.id, self.values(), {name: (p.source, p.note) for name, p in self.parameters.items()})

    def defaults(self) -> list[Parameter]:
        return [p for p in self.parameters.values() if p.source == "default"]


HEADER_KEYS = ("id", "title", "seed_line", "paper_says")   # of the [experiment] table


def _where(path: Path, text: str, header: str) -> str:
    """`path, line N` of the first line that starts with `header` (a table or key), or `path` alone."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().startswith(header):
            return f"{path}, line {number}"
    return str(path)


def load_experiment(path: Path, profile: str) -> ExperimentConfig:
    """The experiment at `path` under `profile`; any fault of the file is one InvalidParameterError that names the
    file and, where the fault has one, its line."""
    if profile not in PROFILES:
        raise InvalidParameterError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")
    try:
        text = Path(path).read_text(encoding="utf-8")
        document = tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidParameterError(f"experiment file {path}: cannot read it ({error})") from error
    except tomllib.TOMLDecodeError as error:   # its message ends with "(at line N, column M)"
        raise InvalidParameterError(f"experiment file {path}: malformed TOML ({error})") from error
    for table in ("experiment", "parameters"):
        if not isinstance(document.get(table), dict):
            raise InvalidParameterError(f"experiment file {_where(path, text, table)}: missing table '{table}' "
                                        f"(expected [{table}])")
    header = document["experiment"]
    missing = [key for key in HEADER_KEYS if key not in header]
    if missing:
        raise InvalidParameterError(f"experiment file {_where(path, text, '[experiment]')}: [experiment] lacks "
                                    f"{', '.join(missing)}")
    parameters = {}
    for name, entry in document["parameters"].items():
        where = _where(path, text, f"[parameters.{name}]")
        if not isinstance(entry, dict) or "value" not in entry:
            raise InvalidParameterError(f"experiment file {where}: parameter {name!r} must be a table "
                                        f"[parameters.{name}] with a value")
        source = entry.get("source")
        if source == "paper" and "line" in entry:
            note = entry["line"]
        elif source == "default" and "why" in entry:
            note = entry["why"]
        else:
            raise InvalidParameterError(
                f"experiment file {where}: parameter {name!r} must say source = 'paper' with a seed line, or "
                "'default' with why")
        parameters[name] = Parameter(name, entry["value"], source, note)
    overrides = document.get("profiles", {})
    overrides = overrides.get(profile, {}) if isinstance(overrides, dict) else None
    if not isinstance(overrides, dict):
        raise InvalidParameterError(f"experiment file {_where(path, text, 'profiles')}: expected a table "
                                    f"[profiles.{profile}] of overrides")
    for name, value in overrides.items():
        if name not in parameters:
            raise InvalidParameterError(f"experiment file {_where(path, text, f'[profiles.{profile}]')}: profile "
                                        f"{profile!r} overrides undeclared parameter {name!r}")
        base = parameters[name]
        if value != base.value:
            parameters[name] = Parameter(name, value, "default",
                                         f"{profile} profile (paper-scale value: {base.value!r}, {base.source})")
    return ExperimentConfig(header["id"], header["title"], header["seed_line"], header["paper_says"],
                            profile, parameters)
