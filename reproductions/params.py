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


def load_experiment(path: Path, profile: str) -> ExperimentConfig:
    if profile not in PROFILES:
        raise InvalidParameterError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")
    try:
        with open(path, "rb") as handle:
            document = tomllib.load(handle)
        header = document["experiment"]
        document["parameters"].items()
    except (tomllib.TOMLDecodeError, KeyError, AttributeError) as error:
        kind = "malformed TOML" if isinstance(error, tomllib.TOMLDecodeError) else f"missing table {error}"
        raise InvalidParameterError(f"experiment file {path}: {kind} ({error})") from error
    parameters = {}
    for name, entry in document["parameters"].items():
        source = entry.get("source")
        if source == "paper" and "line" in entry:
            note = entry["line"]
        elif source == "default" and "why" in entry:
            note = entry["why"]
        else:
            raise InvalidParameterError(
                f"{path.name}: parameter {name!r} must say source = 'paper' with a seed line, or 'default' with why")
        parameters[name] = Parameter(name, entry["value"], source, note)
    overrides = document.get("profiles", {}).get(profile, {})
    for name, value in overrides.items():
        if name not in parameters:
            raise InvalidParameterError(f"{path.name}: profile {profile!r} overrides undeclared parameter {name!r}")
        base = parameters[name]
        if value != base.value:
            parameters[name] = Parameter(name, value, "default",
                                         f"{profile} profile (paper-scale value: {base.value!r}, {base.source})")
    return ExperimentConfig(header["id"], header["title"], header["seed_line"], header["paper_says"],
                            profile, parameters)
