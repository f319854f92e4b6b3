"""JUnit XML for CI systems: one test case per claim, grouped by paper (one test suite each).

A claim passes when it is what the baseline accepted (a refuted claim the baseline also refutes
passes: it is a finding, not a failure); it fails when the run regresses against the baseline, or,
with `strict`, when anything about it changed. Without a baseline nothing fails, and each case still
carries its verdict and evidence. Written with the standard library (xml.etree): the format is a few
elements, and the JUnit libraries on PyPI add nothing here.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

from dpverify.reproductions.report.compare import Gate


def write_junit(path: Path, summary: dict[str, Any], gate: Gate | None = None, *, strict: bool = False) -> Path:
    failing: dict[str, list[str]] = {}
    for difference in (gate.failing(strict) if gate is not None else []):
        failing.setdefault(difference.claim.split(" [")[0], []).append(difference.line())
    incomparable = {d.claim: d.line() for d in (gate.not_comparable if gate is not None else [])}
    suites = ElementTree.Element("testsuites", name="dpverify")
    for paper_id, paper in summary["papers"].items():
        suite = ElementTree.SubElement(suites, "testsuite", name=paper_id, tests=str(len(paper["claims"])))
        failures = 0
        for claim in paper["claims"]:
            case = ElementTree.SubElement(suite, "testcase", classname=paper_id, name=claim["id"],
                                          time=str(sum(check.get("seconds", 0.0) for check in claim["checks"])))
            evidence = " | ".join(f"{check['name']}: {check['verdict']}: {check['summary']}" for check in claim["checks"])
            ElementTree.SubElement(case, "system-out").text = f"{claim['verdict']}: {evidence or claim['not_run_reason']}"
            if claim["id"] in failing:
                failures += 1
                failure = ElementTree.SubElement(case, "failure", message="; ".join(failing[claim["id"]]),
                                                 type="regression" if not strict else "change")
                failure.text = evidence
            elif claim["id"] in incomparable:     # decided another way than the baseline: neither pass nor failure
                ElementTree.SubElement(case, "skipped", message=f"not comparable with the baseline: {incomparable[claim['id']]}")
            elif claim["verdict"] == "not-run":
                ElementTree.SubElement(case, "skipped", message=claim["not_run_reason"] or evidence)
        suite.set("failures", str(failures))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ElementTree.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
    return path
