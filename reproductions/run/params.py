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

Types and signs: one schema per experiment, in reproductions/run/parameters.schema.json (keyed "paper/experiment"),
checked here when the experiment is loaded (Experiment.config: before `check`, `reproduce`, `audit`, `verify` or a
sweep does any work), so a wrong value is one line naming the file, the key (with its profile section) and what was
expected, not a TypeError in a worker. Users change parameters by editing the TOML in place, so the schema cannot
be read from the file being checked: it is derived once from the committed TOML (rules_of, written by
experiments.write_parameter_schema; a test keeps it equal to the committed files) and is that file's baseline.
Every value a run can receive (`value`, every profile's override, each range end and alternative) must have a type
the committed values of that key have: "boolean" (true/false only), "integer" (not a boolean, not 6.0), "number" (an
integer or a float, finite; a key whose committed values include a float), "string", "list" (each item under the
rule of the committed items), "table". Sign: where every committed number of an integer key is > 0, it must stay > 0
(a count such as horizon, num_agents, runs is an integer >= 1), except a seed (>= 0); where every committed number of
a key is >= 0 (or > 0 for a real-valued key: 0 means no noise, no regularizer), it must stay >= 0; otherwise no bound
(kappa = -0.1). Numbers are finite. Changing a key's type or sign on purpose means regenerating the
schema; an experiment or key the schema does not know yet (a paper being added) has its structure checked only.
"""

from __future__ import annotations

import functools
import json
import math
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


def load_experiment(path: Path, profile: str, experiment: str | None = None) -> ExperimentConfig:
    """The experiment at `path` under `profile`; any fault of the file is one InvalidParameterError that names the
    file and, where the fault has one, its line. `experiment` ("paper/id"): its values are checked against that
    experiment's schema (module docstring)."""
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
    rules = parameter_schema().get(experiment, {}) if experiment else {}
    parameters = {}
    for name, entry in document["parameters"].items():
        where = _where(path, text, f"[parameters.{name}]")
        if not isinstance(entry, dict) or "value" not in entry:
            raise InvalidParameterError(f"experiment file {where}: parameter {name!r} must be a table "
                                        f"[parameters.{name}] with a value")
        _check_values(rules.get(name), where, f"parameter {name!r}", entry)
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
    absent = [name for name in rules if name not in parameters]
    if absent:
        raise InvalidParameterError(f"experiment file {path}: parameter {absent[0]!r} is missing; expected a table "
                                    f"[parameters.{absent[0]}] whose value is {describe(rules[absent[0]])} "
                                    f"({SCHEMA_NAME})")
    # every profile's overrides, not only this run's: `reproduce --profile paper` reads the file `check` passed
    profiles = document.get("profiles", {})
    for section, values in (profiles.items() if isinstance(profiles, dict) else ()):
        for name, value in (values.items() if isinstance(values, dict) else ()):
            _check_values(rules.get(name), _where(path, text, f"[profiles.{section}]"), f"[profiles.{section}] {name}",
                          {"value": value})
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


# ------------------------------------------------------------------ types and signs (module docstring)
SCHEMA_FILE = Path(__file__).with_name("parameters.schema.json")
SCHEMA_NAME = "reproductions/run/parameters.schema.json"   # as the messages name it


@functools.cache
def parameter_schema() -> dict[str, dict[str, dict]]:
    """"paper/experiment" -> parameter -> rule, as committed (experiments.write_parameter_schema writes it)."""
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


KINDS = (("boolean", bool), ("integer", int), ("number", float), ("string", str), ("list", list), ("table", dict))


def _kind(value: Any) -> str | None:
    """The value's kind; bool comes before int: a boolean is no integer here. None: a TOML date (no rule has one)."""
    return next((kind for kind, types in KINDS if isinstance(value, types)), None)


def rule_of(values: list[Any], name: str = "") -> dict:
    """The rule the committed `values` of key `name` follow: their kinds (an integer is a number where a float
    occurs), the sign all their numbers share, and for lists the rule of all their items. Only counts stay > 0:
    0 is a meaningful value of a real-valued key (no noise, no regularizer) and of a seed, so those keep >= 0."""
    kinds = {_kind(v) for v in values}
    if None in kinds:
        raise TypeError(f"no schema kind for the TOML values {values!r}")   # a date: no experiment has one
    if "number" in kinds:
        kinds.discard("integer")
    rule: dict[str, Any] = {"type": sorted(kinds)}
    numbers = [v for v in values if _kind(v) in ("integer", "number")]
    if numbers and all(v > 0 for v in numbers) and kinds & {"integer"} and not name.endswith("seed"):
        rule["sign"] = "positive"
    elif numbers and all(v >= 0 for v in numbers):
        rule["sign"] = "non-negative"
    if "list" in kinds:
        rule["items"] = rule_of([item for v in values if isinstance(v, list) for item in v])
    return rule


def rules_of(path: Path) -> dict[str, dict]:
    """The schema of the committed experiment file at `path`: each parameter's rule, from every value a run can
    receive (value, profile overrides, range ends, alternatives)."""
    document = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    overrides = list(document.get("profiles", {}).values())
    return {name: rule_of([entry["value"], *entry.get("range", ()), *entry.get("alternatives", ()),
                           *(values[name] for values in overrides if name in values)], name)
            for name, entry in document["parameters"].items()}


def conforms(value: Any, rule: dict) -> bool:
    """`value` follows `rule` (module docstring: kinds, sign, finiteness, list items)."""
    if not rule.get("type"):   # the items of lists committed empty: no rule yet
        return True
    kind = _kind(value)
    if kind == "integer" and "integer" not in rule["type"]:
        kind = "number"   # an integer is acceptable where a float is expected
    if kind not in rule["type"]:
        return False
    if kind in ("integer", "number"):
        sign = rule.get("sign")
        return math.isfinite(value) and not (sign == "positive" and value <= 0 or sign == "non-negative" and value < 0)
    return kind != "list" or all(conforms(item, rule.get("items", {})) for item in value)


def describe(rule: dict) -> str:
    """What a rule accepts, as the error line says it: 'an integer >= 1', 'a string or a number > 0'."""
    bound = {"positive": {"integer": " >= 1", "number": " > 0"},
             "non-negative": {"integer": " >= 0", "number": " >= 0"}}
    words = {"boolean": "true or false", "integer": "an integer", "number": "a number", "string": "a string",
             "list": "a list", "table": "a table"}
    phrases = [words[kind] + bound.get(rule.get("sign"), {}).get(kind, "") for kind in rule.get("type", ())]
    if "list" in rule.get("type", ()) and rule.get("items", {}).get("type"):
        phrases[rule["type"].index("list")] += f" (each item {describe(rule['items'])})"
    return " or ".join(phrases) or "any value"


def _check_values(rule: dict | None, where: str, label: str, entry: dict) -> None:
    """The entry's value, range ends and alternatives under the key's rule (None: a key the schema does not know)."""
    if rule is None:
        return
    for key in ("value", "range", "alternatives"):
        if key not in entry:
            continue
        for value in ([entry[key]] if key == "value" else entry[key] if isinstance(entry[key], list) else []):
            if not conforms(value, rule):
                of = "" if key == "value" else f" ({key})"
                raise InvalidParameterError(f"experiment file {where}: {label}{of} must be {describe(rule)} "
                                            f"({SCHEMA_NAME}); got {json.dumps(value, default=str)}")
