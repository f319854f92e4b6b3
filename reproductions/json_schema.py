"""The first way a JSON value breaks a JSON Schema, as one line (or None when it follows it).

A subset of JSON Schema 2020-12, the keywords reproductions/summary.schema.json uses: type, required,
properties, additionalProperties, items, enum, minimum, pattern, oneOf and local $ref. Written here
because `jsonschema` is a test dependency, not a runtime one; a schema using any other keyword is
refused (UNSUPPORTED), so the published schema and this check cannot drift apart silently.
tests/test_bad_inputs.py checks that it agrees with `jsonschema` on the committed report and on damaged ones.
"""

from __future__ import annotations

import re
from typing import Any

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
         "integer": int, "number": (int, float)}
ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description"}
KNOWN = ANNOTATIONS | {"type", "required", "properties", "additionalProperties", "items", "enum", "minimum",
                       "pattern", "oneOf", "$ref"}


class UnsupportedSchema(Exception):
    """The schema uses a keyword this subset does not check (a harness bug, not the user's)."""


def _has_type(value: Any, name: str) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):   # JSON true is not a number
        return False
    return isinstance(value, TYPES[name])


def first_violation(value: Any, schema: dict, root: dict | None = None, where: str = "") -> str | None:
    """`where: what is wrong` for the first violation found (depth first), or None."""
    root = root if root is not None else schema
    unknown = set(schema) - KNOWN
    if unknown:
        raise UnsupportedSchema(f"schema keywords not checked: {', '.join(sorted(unknown))}")
    at = where or "(top level)"
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return first_violation(value, target, root, where)
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_has_type(value, name) for name in names):
            return f"{at}: expected {' or '.join(names)}, got {type(value).__name__} {_short(value)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{at}: {_short(value)} is not one of {', '.join(map(_short, schema['enum']))}"
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        return f"{at}: {value} is below the minimum {schema['minimum']}"
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        return f"{at}: {_short(value)} does not match {schema['pattern']}"
    if "oneOf" in schema:
        matching = [option for option in schema["oneOf"] if first_violation(value, option, root, where) is None]
        if len(matching) != 1:
            return f"{at}: {_short(value)} matches {len(matching)} of the {len(schema['oneOf'])} allowed forms, not 1"
    if isinstance(value, dict):
        missing = [key for key in schema.get("required", ()) if key not in value]
        if missing:
            return f"{at}: missing {', '.join(repr(key) for key in missing)}"
        for key, item in value.items():
            inner = schema.get("properties", {}).get(key, schema.get("additionalProperties"))
            if inner is False:
                return f"{at}: unexpected key {key!r}"
            if isinstance(inner, dict) and (found := first_violation(item, inner, root, f"{where}/{key}".lstrip("/"))):
                return found
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            if found := first_violation(item, schema["items"], root, f"{where}/{index}".lstrip("/")):
                return found
    return None


def _short(value: Any, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."
