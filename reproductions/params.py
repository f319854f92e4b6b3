"""Experiment parameters from TOML, each value with where it comes from.

Every parameter is a table `[parameters.NAME]` with `value`, `source` ("paper" or "default") and
either `line` (the seed line that gives it) or `why` (the reason for the default). A default says how
far our choice reaches, with exactly one of: `range = [low, high]` (a number a careful reader could
have chosen anywhere in it) or `alternatives = [...]` (the readings of something categorical), each with
`range_why`; or `derived = "..."` (not a free choice: how the value follows from the paper). A free
default (range or alternatives) is what a verdict can depend on and what `reproduce --sweep` varies.
A profile (`[profiles.quick]`, `[profiles.paper]`) may override values; an override is itself a default
whose reason is the profile (sizes, not meaning: it carries no range). Unknown profiles, missing
provenance or range, a default outside its own range and overrides of undeclared parameters are errors:
a value the report cannot attribute never reaches a run.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from numbers import Real
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
    range: tuple[Any, Any] | None = None    # (low, high) of a numeric free default
    alternatives: tuple[Any, ...] | None = None   # the readings of a categorical free default
    range_why: str = ""   # why that range or those readings
    derived: str = ""     # a default that is not a free choice: how it follows from the paper
    profile: bool = False   # a profile's override: the profile's size, not a choice of meaning

    @property
    def free(self) -> bool:
        """A value we chose among others as plausible (range or alternatives): a verdict may depend on it."""
        return self.range is not None or self.alternatives is not None

    def sweep_values(self) -> list[Any]:
        """The values a sweep runs: the range's ends, or every alternative."""
        return list(self.range if self.range is not None else self.alternatives or ())

    def spread(self) -> dict[str, Any]:
        """How far the choice reaches, as the harness records it beside the value (empty for a paper value)."""
        if self.profile:
            return {"profile": True}
        if self.derived:
            return {"derived": self.derived}
        if not self.free:
            return {}
        key = "range" if self.range is not None else "alternatives"
        return {key: list(self.sweep_values()), "range_why": self.range_why}


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
        return Parameters(self.id, self.values(), {name: (p.source, p.note) for name, p in self.parameters.items()},
                          {name: p.spread() for name, p in self.parameters.items() if p.spread()})

    def defaults(self) -> list[Parameter]:
        return [p for p in self.parameters.values() if p.source == "default"]

    def with_value(self, name: str, value: Any) -> ExperimentConfig:
        """This config with the free default `name` at `value` (a sweep's run); its range stays as declared."""
        swept = replace(self.parameters[name], value=value, note=f"swept (default {self.parameters[name].value!r}): "
                        + self.parameters[name].note)
        return replace(self, parameters={**self.parameters, name: swept})


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
        parameters[name] = Parameter(name, entry["value"], source, note, **_spread(entry, name, where))
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
                                         f"{profile} profile (paper-scale value: {base.value!r}, {base.source})",
                                         profile=True)
    return ExperimentConfig(header["id"], header["title"], header["seed_line"], header["paper_says"],
                            profile, parameters)


SPREAD_KEYS = ("range", "alternatives", "derived")


def _spread(entry: dict, name: str, where: str) -> dict[str, Any]:
    """A default's range, alternatives or derivation, checked (module docstring); a paper value has none."""
    given = [key for key in SPREAD_KEYS if key in entry]
    if entry["source"] == "paper":
        if given or "range_why" in entry:
            raise InvalidParameterError(f"experiment file {where}: parameter {name!r} is the paper's value; it takes "
                                        f"no {', '.join(given) or 'range_why'}")
        return {}
    if len(given) != 1:
        raise InvalidParameterError(
            f"experiment file {where}: default {name!r} needs exactly one of range = [low, high], alternatives = "
            f"[...] (each with range_why) or derived = '...'; got {', '.join(given) or 'none'}")
    key, spread, value = given[0], entry[given[0]], entry["value"]
    if key == "derived":
        if not isinstance(spread, str) or not spread.strip() or "range_why" in entry:
            raise InvalidParameterError(f"experiment file {where}: default {name!r}: derived must say how the value "
                                        "follows from the paper (a non-empty string), without range_why")
        return {"derived": spread}
    if not isinstance(entry.get("range_why"), str) or not entry["range_why"].strip():
        raise InvalidParameterError(f"experiment file {where}: default {name!r}: {key} needs range_why")
    if key == "range":
        numbers = [v for v in (spread if isinstance(spread, list) else []) if isinstance(v, Real) and not isinstance(v, bool)]
        if len(numbers) != 2 or len(spread) != 2 or not numbers[0] < numbers[1]:
            raise InvalidParameterError(f"experiment file {where}: default {name!r}: range must be [low, high], two "
                                        f"numbers with low < high; got {spread!r}")
        if isinstance(value, bool) or not isinstance(value, Real) or not numbers[0] <= value <= numbers[1]:
            raise InvalidParameterError(f"experiment file {where}: default {name!r} = {value!r} lies outside its own "
                                        f"range {spread!r}")
        return {"range": tuple(spread), "range_why": entry["range_why"]}
    if not isinstance(spread, list) or len(spread) < 2 or any(spread.count(v) > 1 for v in spread):
        raise InvalidParameterError(f"experiment file {where}: default {name!r}: alternatives must list at least two "
                                    f"distinct values; got {spread!r}")
    if value not in spread:
        raise InvalidParameterError(f"experiment file {where}: default {name!r} = {value!r} is not among its own "
                                    f"alternatives {spread!r}")
    return {"alternatives": tuple(spread), "range_why": entry["range_why"]}
