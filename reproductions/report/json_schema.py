"""The first way a JSON value breaks a JSON Schema, as one line (or None when it follows it).

Validation is `jsonschema`'s (Draft 2020-12, the dialect of reproductions/report/summary.schema.json); this module
only picks the error to show and says where it is, so that a damaged summary.json given to `report`,
`compare` or `--baseline` is one line naming the first thing wrong.
"""

from __future__ import annotations

from typing import Any

import jsonschema


def first_violation(value: Any, schema: dict[str, Any]) -> str | None:
    """'path: message' of the most relevant error (jsonschema.exceptions.best_match), or None."""
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
    return f"{where}: {error.message}"
