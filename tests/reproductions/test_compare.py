"""Comparing two reports: verdict changes, evidence lines, and numbers beyond a relative tolerance."""

import copy

from dpverify.reproductions.compare import compare_summaries


def summary(verdict="confirmed", value=1.0, line="x = 1"):
    check = {"name": "c", "summary": line, "values": {"x": value, "ci": [0.5, 2.0], "nested": {"n": [1, 2, 3]}}}
    return {"papers": {"p": {"claims": [{"id": "p/a", "verdict": verdict, "checks": [check]},
                                        {"id": "p/b", "verdict": "refuted", "checks": []}]}}}


def test_identical_reports_have_no_difference():
    assert compare_summaries(summary(), copy.deepcopy(summary())) == []


def test_verdict_summary_and_numbers():
    found = compare_summaries(summary(), summary("refuted", 1.0 + 1e-6, "x = 1.000001"))
    assert [(d.kind, d.before, d.after) for d in found] == [
        ("verdict", "confirmed", "refuted"), ("summary", "x = 1", "x = 1.000001"), ("number", 1.0, 1.000001)]
    assert found[2].claim == "p/a [c]/x"
    assert compare_summaries(summary(value=1.0), summary(value=1.0 + 1e-12)) == []   # below the 1e-9 default
    assert len(compare_summaries(summary(value=1.0), summary(value=1.0 + 1e-12), tolerance=0.0)) == 1


def test_added_and_removed_claims():
    fewer = summary()
    fewer["papers"]["p"]["claims"].pop()
    assert [(d.kind, d.claim) for d in compare_summaries(summary(), fewer)] == [("removed", "p/b")]
    assert [(d.kind, d.claim) for d in compare_summaries(fewer, summary())] == [("added", "p/b")]
