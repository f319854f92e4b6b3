"""An experiment's table (FigureOutput.table) appears in the Markdown and HTML reports, cut at TABLE_ROWS_SHOWN."""

from reproductions import report


def _record(rows):
    return {"id": "table-4", "title": "T", "seed_line": "v1:L580", "paper_says": "p", "observed": "o", "images": {},
            "results": "results/x.parquet", "parameters": [], "table": rows}


def test_table_cells_format_and_cut():
    rows = [{"dataset": "ijcnn1", "re_ours": 0.123456, "note": "nan"}] * (report.TABLE_ROWS_SHOWN + 2)
    header, cells, left_out = report._table_cells(rows)
    assert header == ["dataset", "re_ours", "note"]
    assert cells[0] == ["ijcnn1", "0.123", ""] and len(cells) == report.TABLE_ROWS_SHOWN and left_out == 2
    assert report._table_cells(None) == ([], [], 0)


def test_markdown_and_html_show_the_table(tmp_path):
    paper = {"id": "dp-recal", "title": "DP-RECAL", "seed_file": "s", "profile": "quick", "generated": "now",
             "seconds": 1, "counts": {"confirmed": 0}, "claims": [], "figures": [_record([{"row": "l1/dp-recal/fixed",
                                                                                          "comm_ours": 4281.0}])],
             "provenance": {}}
    markdown = report.render_markdown(paper)
    assert "| row | comm_ours |" in markdown and "| l1/dp-recal/fixed | 4.28e+03 |" in markdown
    html = report.render_html({"papers": {"dp-recal": paper}}, tmp_path)
    assert "<td>l1/dp-recal/fixed</td><td>4.28e+03</td>" in html
