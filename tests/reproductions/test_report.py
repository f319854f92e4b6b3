"""A figure's summary table (FigureOutput.table, e.g. printed numbers beside ours) reaches both reports."""

from pathlib import Path

import pytest

from dpverify.reproductions.report.publish import (
    TABLE_ROWS_SHOWN,
    figure_table,
    render_html,
    render_markdown,
)


def _record(table):
    figure = {"id": "table-4", "title": "Table IV", "seed_line": "v1:L580", "paper_says": "DP-RECAL is best",
              "observed": "see the table", "images": {}, "parameters": [], "results": "results/table-4.parquet",
              "table": table}
    return {"id": "dp-recal", "title": "DP-RECAL", "seed_file": "seeds/001", "profile": "quick", "generated": "now",
            "seconds": 1.0, "counts": {}, "claims": [], "figures": [figure], "provenance": {}}


def test_figure_table_is_rendered_with_four_significant_digits():
    record = _record([{"algorithm": "DP-RECAL", "RE": 5.8123456e-15, "printed RE": 5.8e-15, "rel. diff": 0.00213}])
    markdown = render_markdown(record)
    assert "| algorithm | RE | printed RE | rel. diff |" in markdown
    assert "| DP-RECAL | 5.812e-15 | 5.8e-15 | 0.00213 |" in markdown
    html = render_html({"papers": {"dp-recal": record}}, out_dir=None)
    assert "<th>printed RE</th>" in html and "<td>5.812e-15</td>" in html


def test_long_tables_are_cut_and_say_so():
    header, rows, left_out = figure_table({"table": [{"k": i} for i in range(TABLE_ROWS_SHOWN + 7)]})
    assert header == ["k"] and len(rows) == TABLE_ROWS_SHOWN and left_out == 7
    assert "(7 more rows in the results file)" in render_markdown(_record([{"k": i} for i in range(TABLE_ROWS_SHOWN + 7)]))
    assert figure_table({"table": None}) == ([], [], 0)


def test_rows_with_different_keys_and_missing_values():
    header, rows, _ = figure_table({"table": [{"a": 1.0, "note": "nan"}, {"a": 2.0, "b": None}]})
    assert header == ["a", "note", "b"] and rows == [["1", "", ""], ["2", "", ""]]


def test_a_check_that_read_defaults_says_so():
    parameters = {"figure-1/rho": {"value": 0.1, "source": "default", "note": "not stated"},
                  "figure-1/T": {"value": 500, "source": "paper", "note": "L301"}}
    check = {"name": "rate", "method": "statistical", "verdict": "refuted", "summary": "diverges", "values": {},
             "seconds": 0.1, "figure": None, "rule": None, "paper": "", "parameters": parameters}
    claim = {"id": "zcdp-nfl/theorem-4", "kind": "theorem", "seed_line": "L256", "title": "rate", "statement": "O(1/n)",
             "verdict": "refuted", "not_run_reason": "", "checks": [check]}
    record = {**_record([]), "claims": [claim], "figures": []}
    line = "depends on values we chose (defaults, see the parameter tables): `figure-1/rho` = 0.1"
    assert line in render_markdown(record) and "figure-1/T" not in render_markdown(record)
    assert "depends on values we chose:</i> `figure-1/rho` = 0.1" in render_html({"papers": {"x": record}}, out_dir=None)


def test_the_summary_stamp_is_one_line_and_the_only_one_a_rewrite_changes(tmp_path):
    import json

    from dpverify.reproductions.report.publish import write_summary

    record = _record(None)
    first = write_summary(tmp_path, record, {"tasks_computed": {"dp-recal": 3}}).read_text().splitlines()
    second = write_summary(tmp_path, record, {"tasks_computed": {"dp-recal": 0}}).read_text().splitlines()
    changed = [(a, b) for a, b in zip(first, second) if a != b]
    assert len(first) == len(second) and len(changed) == 1
    assert changed[0][1].startswith('  "run": {"generated": "') and changed[0][1].endswith('"tasks_computed": {"dp-recal": 0}},')
    summary = json.loads("\n".join(second))
    assert list(summary) == ["schema_version", "run", "papers"] and summary["papers"]["dp-recal"] == record
    assert "generated " + summary["run"]["generated"] + "; tasks computed: {&quot;dp-recal&quot;: 0}" in render_html(
        summary, out_dir=None)


def _claim(verdict, checks):
    return {"id": "zcdp-nfl/theorem-4", "kind": "theorem", "seed_line": "L256", "title": "rate", "statement": "O(1/n)",
            "verdict": verdict, "not_run_reason": "", "checks": checks}


def _check(verdict, parameters):
    return {"name": f"c-{len(parameters)}", "method": "numerical", "verdict": verdict, "summary": "s", "values": {},
            "seconds": 0.0, "figure": None, "rule": None, "paper": "", "parameters": parameters}


RHO = {"figure-1/rho": {"value": 0.2, "source": "default", "note": "not given", "range": [0.05, 1.0],
                        "range_why": "the tuning grid"}}
LAW = {"figure-1/law": {"value": "a", "source": "default", "note": "not given", "alternatives": ["a", "b"],
                        "range_why": "two readings"},
       "figure-1/T": {"value": 500, "source": "paper", "note": "L301"},
       "figure-1/theta": {"value": 4.0, "source": "default", "note": "bound", "derived": "smallest valid"}}


def test_a_verdict_resting_on_defaults_not_swept_is_never_shown_plain():
    import json

    import jsonschema

    from dpverify.reproductions.report.publish import SCHEMA_FILE, free_defaults, qualified_verdict

    checks = [_check("confirmed", RHO), _check("confirmed", LAW)]
    claim = _claim("confirmed", checks)
    claim["free_defaults"] = free_defaults(checks, swept=set())
    assert [d["parameter"] for d in claim["free_defaults"]] == ["figure-1/rho", "figure-1/law"]   # not T, not theta
    claim["qualification"] = qualified_verdict(claim)
    assert claim["qualification"] == ('confirmed at our defaults (figure-1/rho = 0.2, range 0.05..1; figure-1/law = '
                                      '"a", alternatives "a", "b"; not swept)')
    markdown = render_markdown({**_record([]), "claims": [claim], "figures": []})
    assert "✔ **confirmed** at our defaults (figure-1/rho = 0.2, range 0.05..1;" in markdown
    assert "### `zcdp-nfl/theorem-4` — confirmed at our defaults (" in markdown
    assert "at our defaults (figure-1/rho = 0.2" in render_html({"papers": {"x": {**_record([]), "claims": [claim],
                                                                                   "figures": []}}}, out_dir=None)
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.validate(claim, {"$defs": schema["$defs"], "$ref": "#/$defs/claim"})
    # a refutation by a check that read no free default stands whatever we chose: plain refuted
    plain = _claim("refuted", [_check("refuted", {}), _check("refuted", RHO)])
    plain["free_defaults"] = free_defaults(plain["checks"], swept=set())
    assert qualified_verdict(plain) == ""
    # a swept default no longer qualifies it; one refuting check that read a free default does
    assert qualified_verdict({**claim, "free_defaults": free_defaults(checks, {"figure-1/rho", "figure-1/law"})}) == ""
    only = _claim("refuted", [_check("confirmed", {}), _check("refuted", RHO)])
    only["free_defaults"] = free_defaults(only["checks"], swept=set())
    assert qualified_verdict(only) == "refuted at our defaults (figure-1/rho = 0.2, range 0.05..1; not swept)"


def test_a_known_claim_records_the_defaults_its_verdict_rests_on(tmp_path):   # about 0.1 s after imports
    """dpdo-nc's Assumption 1 is checked on the cyclic schedule with B = window, our default 2 (range 2..3)."""
    from dpverify.reproductions.report.publish import claim_record
    from dpverify.reproductions.run.experiments import parameters_of
    from dpverify.theory.claims import evaluate
    from dpverify.theory.execution import CheckContext
    from dpverify.theory.papers import get_paper

    result = evaluate(get_paper("dpdo-nc").claim("assumption-1"),
                      CheckContext(parameters=parameters_of("dpdo-nc", "quick")))
    record = claim_record(result, tmp_path)
    assert record["verdict"] == "confirmed"
    assert record["free_defaults"] == [{"parameter": "figure-1/window", "value": 2, "range": [2, 3],
                                        "range_why": "any B >= 2 makes the cyclic schedule B-strongly connected (A_3 "
                                                     "alone is not); 2 is the smallest, 3 the spec's variant (P3)",
                                        "swept": False}]
    assert record["qualification"] == "confirmed at our defaults (figure-1/window = 2, range 2..3; not swept)"


def test_defaults_a_check_argues_away_never_qualify_its_verdict():
    """A check whose decision_argument rules out the defaults it read (parameters marked decides: false) is
    refuted plainly; one that keeps rho among its decision's reads is qualified by rho alone."""
    import json

    import jsonschema

    from dpverify.reproductions.report.publish import SCHEMA_FILE, free_defaults, qualified_verdict

    argued = {name: {**p, "decides": False} for name, p in {**RHO, **LAW}.items()}
    check = {**_check("refuted", argued), "decision_argument": "a closed form, nonzero at every value"}
    claim = _claim("refuted", [check])
    assert free_defaults(claim["checks"], swept=set()) == [] and qualified_verdict(claim) == ""
    markdown = render_markdown({**_record([]), "claims": [claim], "figures": []})
    assert "| ✘ **refuted** |" in markdown and "at our defaults" not in markdown
    assert "its verdict does not depend on the other values it read: a closed form, nonzero at every value" in markdown
    assert "does not depend on the other values it read:</i> a closed form" in render_html(
        {"papers": {"x": {**_record([]), "claims": [claim], "figures": []}}}, out_dir=None)
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.validate(claim, {"$defs": schema["$defs"], "$ref": "#/$defs/claim"})
    partly = {**_check("refuted", {**RHO, **{n: {**p, "decides": False} for n, p in LAW.items()}}),
              "decision_argument": "the law cancels"}
    partial = _claim("refuted", [partly])
    partial["free_defaults"] = free_defaults(partial["checks"], swept=set())
    assert qualified_verdict(partial) == "refuted at our defaults (figure-1/rho = 0.2, range 0.05..1; not swept)"


def test_a_check_narrowing_its_reads_must_say_why():
    from dpverify.theory.claims import Check, Method

    with pytest.raises(TypeError, match="decision_reads and decision_argument go together"):
        Check("c", Method.NUMERICAL, lambda context: None, decision_reads=())
    with pytest.raises(TypeError, match="decision_reads and decision_argument go together"):
        Check("c", Method.NUMERICAL, lambda context: None, decision_argument="why")


def test_a_refutation_argued_free_of_the_data_seed_is_plain(tmp_path):
    """dpdo-nc's Assumption 3 reads the data seed (our default) but its sensor's gradient jump holds for every d > 0:
    refuted with no "at our defaults", the seed recorded as read but not deciding, and the argument kept."""
    from dpverify.reproductions.report.publish import claim_record
    from dpverify.reproductions.run.experiments import parameters_of
    from dpverify.theory.claims import evaluate
    from dpverify.theory.execution import CheckContext
    from dpverify.theory.papers import get_paper

    result = evaluate(get_paper("dpdo-nc").claim("assumption-3"),
                      CheckContext(parameters=parameters_of("dpdo-nc", "quick")))
    record = claim_record(result, tmp_path)
    assert record["verdict"] == "refuted" and "qualification" not in record and "free_defaults" not in record
    (check,) = record["checks"]
    assert check["parameters"]["figure-1/data_seed"]["decides"] is False
    assert check["decision_argument"].startswith("For every d > 0 the gradient of 1/2 (||x - s|| - d)^2 jumps by 2d")


def test_findings_beyond_the_paper_are_counted_and_shown_apart(tmp_path):
    """A claim of kind "finding" (a statement the paper does not make) is left out of the paper's tally, counted in
    finding_counts and shown in a section of its own, in the markdown and the html."""
    from dpverify.reproductions.report.publish import paper_record
    from dpverify.theory.claims import FINDING, Check, CheckResult, Claim, ClaimResult, Evidence, Method, Paper
    from dpverify.theory.rules import Verdict

    def result(claim_id, kind, verdict):
        check = Check("c", Method.NUMERICAL, lambda context: None)
        claim = Claim(f"zcdp-nfl/{claim_id}", kind, "L1", claim_id, "s", (check,))
        return ClaimResult(claim, (CheckResult("c", Method.NUMERICAL, verdict, Evidence(f"{claim_id} evidence")),))

    results = [result("lemma-1", "lemma", Verdict.CONFIRMED), result("theorem-2", "theorem", Verdict.REFUTED),
               result("reading-3", FINDING, Verdict.REFUTED)]
    record = paper_record(Paper("zcdp-nfl", "T", "seed", ()), results, [], profile="quick", figures_dir=tmp_path,
                          provenance={})
    assert record["counts"] == {"confirmed": 1, "refuted": 1, "inconclusive": 0, "not-run": 0}
    assert record["finding_counts"] == {"confirmed": 0, "refuted": 1, "inconclusive": 0, "not-run": 0}
    markdown = render_markdown(record)
    claims_part, findings_part = markdown.split("## Findings beyond the paper's claims")
    assert "zcdp-nfl/theorem-2" in claims_part and "zcdp-nfl/reading-3" not in claims_part.split("## Claim details")[0]
    assert "zcdp-nfl/reading-3" in findings_part.split("## Claim details")[0]
    page = render_html({"papers": {"zcdp-nfl": record}}, out_dir=None)
    assert page.index("reading-3 evidence") > page.index("Findings beyond the paper's claims") > page.index(
        "theorem-2 evidence")
    assert "findings beyond its claims: 1" in page


def test_the_published_report_qualifies_only_verdicts_a_default_can_move():
    """Over every claim of the committed quick report: the qualification is the one `qualified_verdict` computes,
    and it names only defaults that a deciding check read and did not argue away (no "at our defaults" on a
    verdict whose checks read no free value that decides)."""
    import json
    import re

    from dpverify.reproductions.report.publish import deciding_defaults, free_defaults, qualified_verdict

    summary = json.loads((Path(__file__).resolve().parents[2] / "reports" / "summary.json").read_text())
    claims = [claim for paper in summary["papers"].values() for claim in paper["claims"]]
    qualified = 0
    for claim in claims:
        swept = {s["parameter"] for s in claim.get("sweeps", [])}
        assert claim.get("free_defaults", []) == free_defaults(claim["checks"], swept), claim["id"]
        assert claim.get("qualification", "") == qualified_verdict(claim), claim["id"]
        if claim.get("qualification"):
            qualified += 1
            deciding = {n for c in claim["checks"] if c["verdict"] == claim["verdict"] for n in deciding_defaults(c)}
            named = re.findall(r"([\w-]+/[\w-]+) = ", claim["qualification"])
            assert named and set(named) <= deciding, claim["id"]
    assert qualified > 0   # the report does qualify some verdicts: this test looks at real cases


def test_older_summaries_stay_valid_and_the_new_fields_are_checked():
    import json

    import jsonschema

    from dpverify.reproductions.report.publish import SCHEMA_FILE, SCHEMA_VERSION

    schema = json.loads(SCHEMA_FILE.read_text())
    assert SCHEMA_VERSION == "1.6" and {"1.2", "1.3", "1.4", "1.5"} <= set(schema["properties"]["schema_version"]["enum"])
    claim = {**_claim("confirmed", []), "qualification": "confirmed but only here"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(claim, {"$defs": schema["$defs"], "$ref": "#/$defs/claim"})
    sweep = {"parameter": "figure-1/rho", "outcome": "sometimes", "at": []}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**_claim("confirmed", []), "sweeps": [sweep]}, {"$defs": schema["$defs"], "$ref": "#/$defs/claim"})
