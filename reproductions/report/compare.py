"""Compare two reports (summary.json): which claims changed verdict, which checks' evidence lines
changed, and which numbers in the evidence moved beyond a relative tolerance.

A check whose numbers are chaotic (a long non-convex optimization) states how far they may move in its values:
`tolerances` maps a key of its values to {"relative": r, "absolute": a, "log_floor": f} (each optional; with
`log_floor` the numbers are compared as log10(max(|x|, f))). Its numbers moving within that are no difference,
nor is an evidence line that changed only in its numbers (they are compared through the values).

`dpverify compare BASELINE [CURRENT]` prints the differences; the renovations use it to show that
every claim kept its verdict and its numbers at the same seed.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpverify.algorithms.core.errors import InvalidDataError
from dpverify.reproductions.report.json_schema import first_violation
from dpverify.reproductions.report.publish import DECIDED, SCHEMA_FILE, SCHEMA_VERSION

NUMBER_TOLERANCE = 1e-9  # default: relative change of an evidence number counted as a change (float noise is ~1e-15)


@dataclass(frozen=True)
class Difference:
    paper: str
    claim: str
    kind: str       # "verdict", "not-comparable", "added", "removed", "summary", "number"
    before: Any
    after: Any
    why: str = ""   # for "not-comparable": why this run could not decide the claim the way the baseline did

    def line(self) -> str:
        return f"{self.claim}: {self.kind}: {self.before!r} -> {self.after!r}" + (f" ({self.why})" if self.why else "")


def not_comparable(before: dict[str, Any], after: dict[str, Any]) -> str:
    """Why a claim's two verdicts were not made the same way ('' if they were): a check the baseline ran that this
    run left out of its scope (an experiment it did not reproduce: `check` reproduces no figure), or a randomized
    check whose baseline seeds disagreed and that this run decided under other seeds. One rule, for every gate."""
    checks_before = {c["name"]: c for c in before["checks"]}
    reasons = []
    for check in after["checks"]:
        previous = checks_before.get(check["name"])
        if previous is None:
            continue
        outside = check.get("values", {}).get("outside_run")
        if check.get("verdict") == "not-run" and outside and previous.get("verdict") != "not-run":
            reasons.append(f"[{check['name']}] read {', '.join(outside)}, which this run did not reproduce and the "
                           "baseline's did")
        seeds_before = previous.get("values", {}).get("seeds") or {}
        seeds_after = (check.get("values", {}).get("seeds") or {}).get("root_seeds")
        disagreed = seeds_before and seeds_before.get("agreeing", 0) < len(seeds_before.get("verdicts", ()))
        if disagreed and seeds_after != seeds_before.get("root_seeds"):
            reasons.append(f"[{check['name']}] flipped between the baseline's root seeds "
                           f"{seeds_before.get('root_seeds')}; this run used {seeds_after or 'one seed'}")
    return "; ".join(reasons)


def load_summary(path: Path) -> dict[str, Any]:
    """A report's summary.json, checked against the published schema (SCHEMA_FILE) before anyone reads it:
    a damaged file is one line naming the file and the first thing wrong, never a traceback later."""
    try:
        summary = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise InvalidDataError(f"cannot read a report summary from {path}: {reason}") from error
    if problem := first_violation(summary, _schema()):
        raise InvalidDataError(f"{path} is not a dpverify summary.json (schema version {SCHEMA_VERSION}): {problem}")
    return summary


@functools.cache
def _schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text())


def _numbers(value: Any, prefix: str = "") -> dict[str, float]:
    """Every number in a nested JSON value, by its path."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return {}
    if isinstance(value, (int, float)):
        return {prefix: float(value)}
    items = value.items() if isinstance(value, dict) else enumerate(value)
    return {path: number for key, item in items for path, number in _numbers(item, f"{prefix}/{key}").items()}


def _moved(before: float, after: float, tolerance: float, stated: dict[str, float] | None = None) -> bool:
    if math.isnan(before) and math.isnan(after):
        return False
    stated = stated or {}
    if "log_floor" in stated:
        before, after = (math.log10(max(abs(x), stated["log_floor"])) for x in (before, after))
    return (not math.isclose(before, after, rel_tol=max(tolerance, stated.get("relative", 0.0)),
                             abs_tol=stated.get("absolute", 0.0)) and before != after)


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?%?")


def _same_but_numbers(before: str, after: str) -> bool:
    return _NUMBER.sub("#", before) == _NUMBER.sub("#", after)


def _check_moves(paper: str, claim: str, previous: dict[str, Any], check: dict[str, Any],
                 tolerance: float) -> list[Difference]:
    """The evidence line and the numbers of one check that changed; `tolerances` (module docstring) honoured."""
    stated = check["values"].get("tolerances") or {}
    moves = []
    if previous["summary"] != check["summary"] and not (stated and _same_but_numbers(previous["summary"],
                                                                                       check["summary"])):
        moves.append(Difference(paper, claim, "summary", previous["summary"], check["summary"]))
    old_numbers, new_numbers = _numbers(previous["values"]), _numbers(check["values"])
    for path in sorted(set(old_numbers) & set(new_numbers)):
        key = path.split("/")[1]
        if key == "tolerances":   # what the check states, not what it measured
            continue
        if _moved(old_numbers[path], new_numbers[path], tolerance, stated.get(key)):
            moves.append(Difference(paper, f"{claim} [{check['name']}]{path}", "number", old_numbers[path],
                                    new_numbers[path]))
    return moves


def compare_summaries(baseline: dict[str, Any], current: dict[str, Any], *,
                      tolerance: float = NUMBER_TOLERANCE) -> list[Difference]:
    """Differences of the papers present in both reports, claim by claim and check by check."""
    differences = []
    for paper in sorted(set(baseline["papers"]) & set(current["papers"])):
        old, new = _claims(baseline, paper), _claims(current, paper)
        differences += [Difference(paper, c, "removed", old[c]["verdict"], None) for c in sorted(set(old) - set(new))]
        differences += [Difference(paper, c, "added", None, new[c]["verdict"]) for c in sorted(set(new) - set(old))]
        for claim in sorted(set(old) & set(new)):
            before, after = old[claim], new[claim]
            if before["verdict"] != after["verdict"]:
                why = not_comparable(before, after)
                differences.append(Difference(paper, claim, "not-comparable" if why else "verdict", before["verdict"],
                                              after["verdict"], why))
            differences += _privacy_moves(paper, claim, before, after, tolerance)
            checks_before = {c["name"]: c for c in before["checks"]}
            for check in after["checks"]:
                previous = checks_before.get(check["name"])
                if previous is not None:
                    differences += _check_moves(paper, claim, previous, check, tolerance)
    return differences


def _claims(summary: dict[str, Any], paper: str) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in summary["papers"][paper]["claims"]}


def common_claims(first: dict[str, Any], second: dict[str, Any]):
    """(paper, claim id, its record in `first`, in `second`) of every claim both reports hold, paper by paper."""
    for paper in sorted(set(first["papers"]) & set(second["papers"])):
        old, new = _claims(first, paper), _claims(second, paper)
        for claim in sorted(set(old) & set(new)):
            yield paper, claim, old[claim], new[claim]


# ----------------------------------------------------------------- a quick report beside the paper profile's
@dataclass(frozen=True)
class ProfileAgreement:
    """A quick report's verdicts beside the paper profile's report (issue 31 item 3): of the claims the paper profile
    decides (confirmed or refuted), how many the quick report decides the same way, and every claim whose verdicts
    differ (Difference: `before` the quick report's verdict, `after` the paper profile's)."""

    source: str                         # where the paper profile's summary.json was read
    compared: int                       # claims both reports hold
    decided: int                        # of those, decided by the paper profile
    same: int                           # of those, decided the same way by the quick report
    differing: tuple[Difference, ...]

    def paper_verdicts(self) -> dict[str, str]:
        """The paper profile's verdict of each claim the quick report decides otherwise: the flags of its rows."""
        return {d.claim: d.after for d in self.differing}


def profile_agreement(quick: dict[str, Any], paper: dict[str, Any], source: str) -> ProfileAgreement:
    pairs = [(name, claim, q["verdict"], p["verdict"]) for name, claim, q, p in common_claims(quick, paper)]
    decided = [(q, p) for _, _, q, p in pairs if p in DECIDED]
    differing = tuple(Difference(name, claim, "verdict", q, p) for name, claim, q, p in pairs if q != p)
    return ProfileAgreement(source, len(pairs), len(decided), sum(q == p for q, p in decided), differing)


def quick_against_paper(summary: dict[str, Any], path: Path, *, required: bool = False,
                        relative_to: Path | None = None) -> ProfileAgreement | None:
    """A quick report (`summary`) against the paper-profile report at `path`; None when `summary` is not a quick
    report, or when there is no report at `path` and none was `required` (a path the user named must be there)."""
    path = Path(path)
    if not summary["papers"] or any(p["profile"] != "quick" for p in summary["papers"].values()):
        return None
    if not path.exists() and not required:
        return None
    paper = load_summary(path)
    if any(p["profile"] != "paper" for p in paper["papers"].values()):
        raise InvalidDataError(f"{path} is not a paper-profile report (profiles: "
                               f"{sorted({p['profile'] for p in paper['papers'].values()})})")
    shown = path.relative_to(relative_to) if relative_to is not None and path.is_relative_to(relative_to) else path
    return profile_agreement(summary, paper, str(shown))


def _privacy_moves(paper: str, claim: str, before: dict[str, Any], after: dict[str, Any],
                   tolerance: float) -> list[Difference]:
    """Numbers of the privacy table (claims[].privacy, schema 1.2) that moved, row by row (by setting)."""
    rows_before = {row["setting"]: row for row in before.get("privacy", [])}
    moves = []
    for row in after.get("privacy", []):
        if (previous := rows_before.get(row["setting"])) is None:
            continue
        old_numbers, new_numbers = _numbers(previous), _numbers(row)
        moves += [Difference(paper, f"{claim} [privacy: {row['setting']}]{path}", "number", old_numbers[path],
                             new_numbers[path])
                  for path in sorted(set(old_numbers) & set(new_numbers))
                  if _moved(old_numbers[path], new_numbers[path], tolerance)]
    return moves


# ----------------------------------------------------------------- gating a run on a baseline
@dataclass(frozen=True)
class Gate:
    """A run judged against a baseline report: regressions fail a CI job; other changes only with --strict.
    A regression is a claim that is newly refuted, that lost its confirmation, or that disappeared; a fix
    is a claim that is no longer refuted."""

    differences: tuple[Difference, ...]
    partial: frozenset[str] = frozenset()   # papers the run checked only in part (--claim, --figure)

    def __post_init__(self) -> None:   # in a partial run, a claim it did not run is no difference
        kept = tuple(d for d in self.differences if d.paper not in self.partial
                     or not (d.kind == "removed" or (d.kind in ("verdict", "not-comparable") and d.after == "not-run")))
        object.__setattr__(self, "differences", kept)

    def _verdicts(self, test) -> list[Difference]:
        return [d for d in self.differences if test(d)]

    @property
    def regressions(self) -> list[Difference]:
        return self._verdicts(lambda d: d.kind == "removed" or (d.kind == "verdict" and (
            d.after == "refuted" or d.before == "confirmed")))

    @property
    def fixes(self) -> list[Difference]:
        return self._verdicts(lambda d: d.kind == "verdict" and d.before == "refuted" and d.after != "refuted")

    @property
    def not_comparable(self) -> list[Difference]:
        return self._verdicts(lambda d: d.kind == "not-comparable")

    def failing(self, strict: bool) -> list[Difference]:
        """What fails the job: the regressions, or with `strict` every difference but the claims this run could not
        decide the way the baseline did (not_comparable: never a failure)."""
        return [d for d in self.differences if d.kind != "not-comparable"] if strict else self.regressions

    def lines(self) -> list[str]:
        new = [d for d in self.regressions if d.kind == "verdict" and d.after == "refuted"]
        parts = [("new refutations", new), ("lost confirmations or removed claims", [d for d in self.regressions
                                                                                  if d not in new]),
                 ("fixed", self.fixes), ("not comparable (decided another way than the baseline)", self.not_comparable),
                 ("other changes", [d for d in self.differences if d not in self.regressions and d not in self.fixes
                                    and d not in self.not_comparable])]
        out = []
        for title, found in parts:
            out += [f"{title}: {len(found)}"] + [f"  {d.line()}" for d in found]
        return out


def gate(baseline: dict[str, Any], current: dict[str, Any], *, tolerance: float = NUMBER_TOLERANCE) -> Gate:
    """`current` (a summary record, {"papers": ...}) against `baseline` (a summary.json as load_summary read it,
    before the run), on the papers both hold. A paper record marked `partial` (a run of some of its claims or
    figures) is compared on what the run checked."""
    partial = frozenset(paper for paper, record in current["papers"].items() if record.get("partial"))
    return Gate(tuple(compare_summaries(baseline, current, tolerance=tolerance)), partial)
