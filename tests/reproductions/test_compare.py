"""Comparing two reports: verdict changes, evidence lines, and numbers beyond a relative tolerance."""

import copy

from dpverify.reproductions.report.compare import compare_summaries


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


def _chaotic(psnr, mse, line):
    """A check whose per-image numbers are chaotic and say so (values["tolerances"])."""
    values = {"psnr_db": psnr, "mse": mse, "n": 8,
              "tolerances": {"psnr_db": {"relative": 0.1}, "mse": {"relative": 0.1, "log_floor": 1e-10}}}
    check = {"name": "c", "summary": line, "values": values}
    return {"papers": {"p": {"claims": [{"id": "p/a", "verdict": "confirmed", "checks": [check]}]}}}


def test_stated_tolerances_are_honoured():
    before = _chaotic([20.0, 80.0], [1e-2, 1e-26], "median 50.0 dB")
    # 20 -> 21.9 dB (9.5 %), 80 -> 73 dB (8.8 %), an MSE at rounding moved 2.6e6 x, 1e-2 -> 1.2e-2 (4 % of its log):
    # all within what the check states, and the line changed only in its numbers
    within = _chaotic([21.9, 73.0], [1.2e-2, 2.6e-20], "median 47.45 dB")
    assert compare_summaries(before, within) == []
    # beyond it: 20 -> 22.5 dB (12.5 %), 1e-2 -> 2e-2 (15 % of its log); a changed word is a changed line
    beyond = _chaotic([22.5, 80.0], [2e-2, 1e-26], "mean 50.0 dB")
    found = compare_summaries(before, beyond)
    assert [(d.kind, d.claim) for d in found] == [("summary", "p/a"), ("number", "p/a [c]/mse/0"),
                                                 ("number", "p/a [c]/psnr_db/0")]
    # a number the check states no tolerance for keeps the 1e-9 default
    other = _chaotic([20.0, 80.0], [1e-2, 1e-26], "median 50.0 dB")
    other["papers"]["p"]["claims"][0]["checks"][0]["values"]["n"] = 9
    assert [d.claim for d in compare_summaries(before, other)] == ["p/a [c]/n"]
