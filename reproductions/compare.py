"""Compare two reports (summary.json): which claims changed verdict, which checks' evidence lines
changed, and which numbers in the evidence moved beyond a relative tolerance.

`dpverify compare BASELINE [CURRENT]` prints the differences; the renovations use it to show that
every claim kept its verdict and its numbers at the same seed.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpverify.algorithms.core.errors import InvalidDataError

NUMBER_TOLERANCE = 1e-9  # default: relative change of an evidence number counted as a change (float noise is ~1e-15)


@dataclass(frozen=True)
class Difference:
    paper: str
    claim: str
    kind: str       # "verdict", "added", "removed", "summary", "number"
    before: Any
    after: Any

    def line(self) -> str:
        return f"{self.claim}: {self.kind}: {self.before!r} -> {self.after!r}"


def load_summary(path: Path) -> dict[str, Any]:
    try:
        summary = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise InvalidDataError(f"cannot read a report summary from {path}: {error}") from error
    if not isinstance(summary, dict) or not isinstance(summary.get("papers"), dict):
        raise InvalidDataError(f"{path} is not a dpverify summary.json (no 'papers' table)")
    return summary


def _numbers(value: Any, prefix: str = "") -> dict[str, float]:
    """Every number in a nested JSON value, by its path."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return {}
    if isinstance(value, (int, float)):
        return {prefix: float(value)}
    items = value.items() if isinstance(value, dict) else enumerate(value)
    return {path: number for key, item in items for path, number in _numbers(item, f"{prefix}/{key}").items()}


def _moved(before: float, after: float, tolerance: float) -> bool:
    if math.isnan(before) and math.isnan(after):
        return False
    return not math.isclose(before, after, rel_tol=tolerance, abs_tol=0.0) and before != after


def compare_summaries(baseline: dict[str, Any], current: dict[str, Any], *,
                      tolerance: float = NUMBER_TOLERANCE) -> list[Difference]:
    """Differences of the papers present in both reports, claim by claim and check by check."""
    differences = []
    for paper in sorted(set(baseline["papers"]) & set(current["papers"])):
        old = {c["id"]: c for c in baseline["papers"][paper]["claims"]}
        new = {c["id"]: c for c in current["papers"][paper]["claims"]}
        differences += [Difference(paper, c, "removed", old[c]["verdict"], None) for c in sorted(set(old) - set(new))]
        differences += [Difference(paper, c, "added", None, new[c]["verdict"]) for c in sorted(set(new) - set(old))]
        for claim in sorted(set(old) & set(new)):
            before, after = old[claim], new[claim]
            if before["verdict"] != after["verdict"]:
                differences.append(Difference(paper, claim, "verdict", before["verdict"], after["verdict"]))
            checks_before = {c["name"]: c for c in before["checks"]}
            for check in after["checks"]:
                previous = checks_before.get(check["name"])
                if previous is None:
                    continue
                if previous["summary"] != check["summary"]:
                    differences.append(Difference(paper, claim, "summary", previous["summary"], check["summary"]))
                old_numbers, new_numbers = _numbers(previous["values"]), _numbers(check["values"])
                for path in sorted(set(old_numbers) & set(new_numbers)):
                    if _moved(old_numbers[path], new_numbers[path], tolerance):
                        differences.append(Difference(paper, f"{claim} [{check['name']}]{path}", "number",
                                                      old_numbers[path], new_numbers[path]))
    return differences
