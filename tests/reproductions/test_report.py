"""A figure's summary table (FigureOutput.table, e.g. printed numbers beside ours) reaches both reports."""

from dpverify.reproductions.report import (
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

    from dpverify.reproductions.report import write_summary

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
