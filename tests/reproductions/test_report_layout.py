"""The published report reads in two minutes (issue 31 item 7) and says where the quick profile and the paper profile
disagree (item 3). index.html is parsed with the standard library's html.parser, for a small synthetic summary and
for the committed reports/summary.json (rendered into a temporary folder): each paper opens with one line per
refuted claim, every claim row starts with its verdict, every check's evidence is collapsed, the page stays small,
and the table "Quick vs paper profile" lists exactly the claims whose verdicts differ between reports/summary.json
and reports/paper/summary.json."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from dpverify.reproductions.report.publish import (
    SENTENCE_CHARS,
    VALUE_CHARS,
    cost_text,
    duration,
    opening,
    render_markdown,
    render_reports,
    what_would_decide,
)

REPO = Path(__file__).resolve().parents[2]
VOID = {"br", "img", "meta", "hr", "input", "link"}
DECIDED = {"confirmed", "refuted"}


class Node:
    def __init__(self, tag: str, attrs: dict, parent: Node | None) -> None:
        self.tag, self.attrs, self.parent, self.children = tag, attrs, parent, []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def elements(self) -> list[Node]:
        return [c for c in self.children if isinstance(c, Node)]

    def find_all(self, tag: str, cls: str | None = None) -> list[Node]:
        found = []
        for child in self.elements():
            if child.tag == tag and (cls is None or cls in child.attrs.get("class", "").split()):
                found.append(child)
            found += child.find_all(tag, cls)
        return found


class Tree(HTMLParser):
    """index.html as a tree of Nodes (html.parser gives events; void elements have no end tag)."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.root = self.at = Node("document", {}, None)
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.at)
        self.at.children.append(node)
        if tag not in VOID:
            self.at = node

    def handle_endtag(self, tag):
        node = self.at
        while node.parent is not None and node.tag != tag:
            node = node.parent
        assert node.parent is not None, f"</{tag}> closes nothing"
        self.at = node.parent

    def handle_data(self, data):
        self.at.children.append(data)


# ----------------------------------------------------------------- a small synthetic pair of reports
def _check(name, verdict, summary, values=None):
    return {"name": name, "method": "numerical", "verdict": verdict, "summary": summary, "values": values or {},
            "seconds": 0.5, "figure": None, "rule": None, "paper": "", "parameters": {}}


def _claim(claim_id, verdict, checks, kind="lemma", reason=""):
    return {"id": f"demo/{claim_id}", "kind": kind, "seed_line": f"L{len(claim_id)}", "title": claim_id,
            "statement": f"the paper's {claim_id}", "verdict": verdict, "not_run_reason": reason, "checks": checks}


LONG = [i * 1.7e-309 for i in range(5000)]   # a check's long list: summarised in the page, whole in summary.json


def _claims(profile):
    quick = profile == "quick"
    return [
        _claim("lemma-1", "refuted", [_check("bound", "refuted", "The bound fails at n = 3. Details follow.",
                                             {"p_values": LONG, "n": 3})]),
        _claim("lemma-2", "refuted", [_check("a", "confirmed", "holds"), _check("b", "refuted", "fails by 2x")]),
        _claim("theorem-1", "inconclusive" if quick else "confirmed", [_check(
            "rate", "inconclusive" if quick else "confirmed",
            "Slope 0.45 [0.17, 0.77] vs 0.6 at T = 4000. " + "R/sqrt(T) at T = 486: 17.2, 1018: 13.5; " * 6
            + "(undecided: about 92 runs at this horizon would separate it from 0.6)")]),
        _claim("table-1", "not-run", [], kind="headline", reason="a statement about other papers; nothing here checks it"),
        _claim("remark-1", "confirmed", [_check("exact", "confirmed", "x = 1")]),
        _claim("reading-1", "refuted", [_check("finding", "refuted", "not claimed by the paper: eps = 40")],
               kind="finding"),
    ]


def _summary(profile, run=None):
    claims = _claims(profile)
    paper = {"id": "demo", "title": "Demo paper", "seed_file": "seeds/000.txt", "profile": profile, "seconds": 1.5,
             "counts": {"refuted": 2, "inconclusive": int(profile == "quick"), "not-run": 1,
                        "confirmed": 1 + int(profile == "paper")},
             "finding_counts": {"refuted": 1, "inconclusive": 0, "not-run": 0, "confirmed": 0},
             "claims": claims, "figures": [], "constants": [], "partial": False,
             "provenance": {"git_commit": "x", "code_digest": "0" * 64, "python": "3.11",
                            "packages": {"dpverify": "0.1.0"}, "root_seed": 1}}
    if profile == "quick":
        paper["cpu_seconds"] = {"experiments": 900.0, "checks": 123.4}
    return {"schema_version": "1.5", "run": run or {"generated": "2026-01-01T00:00:00+00:00"}, "papers": {"demo": paper}}


def _write(folder: Path, summary: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "summary.json").write_text(json.dumps(summary))


RUN = {"generated": "2026-01-01T00:00:00+00:00", "tasks_computed": {"demo": 0}, "checks_computed": {"demo": 0},
       "wall_seconds": 3.2, "papers": {"demo": {"wall_seconds": 3.1, "tasks_cached": 4, "checks_cached": 6}}}


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    out = tmp_path_factory.mktemp("synthetic")
    _write(out, _summary("quick", RUN))
    _write(out / "paper", _summary("paper"))
    render_reports(out)
    return out


@pytest.fixture(scope="module")
def committed(tmp_path_factory):
    """The committed quick report re-rendered into a temporary folder (its summary, its figures, the paper profile's
    summary beside it), as `dpverify report --out` renders it."""
    out = tmp_path_factory.mktemp("committed")
    shutil.copy(REPO / "reports" / "summary.json", out / "summary.json")
    shutil.copytree(REPO / "reports" / "figures", out / "figures")
    (out / "paper").mkdir()
    shutil.copy(REPO / "reports" / "paper" / "summary.json", out / "paper" / "summary.json")
    render_reports(out)
    return out


@pytest.fixture(params=["synthetic", "committed"])
def report(request):
    out = request.getfixturevalue(request.param)
    return json.loads((out / "summary.json").read_text()), Tree((out / "index.html").read_text()).root, out


# ----------------------------------------------------------------- the layout, on both reports
def test_each_paper_opens_with_what_is_wrong_and_what_could_not_be_decided(report):
    summary, page, _ = report
    headings = page.find_all("h2")
    for paper in summary["papers"].values():
        (section,) = [s for s in page.find_all("section", "summary") if s.attrs["id"] == f"{paper['id']}-summary"]
        refuted = [li for ul in section.find_all("ul", "refuted") for li in ul.find_all("li")]
        undecided = [li for ul in section.find_all("ul", "undecided") for li in ul.find_all("li")]
        assert len(refuted) == paper["counts"]["refuted"], paper["id"]
        assert len(undecided) == paper["counts"]["inconclusive"] + paper["counts"]["not-run"], paper["id"]
        wrong = [c for c in paper["claims"] if c["verdict"] == "refuted" and c["kind"] != "finding"]
        for line, claim in zip(refuted, wrong):      # the claim, its seed line, a computed sentence, in its order
            text = line.text()
            assert text.startswith("✘ refuted ") and f"{claim['id']} ({claim['seed_line']}): " in text, text
            assert len(text) < 200 + SENTENCE_CHARS + len(claim["id"]) + len(claim["seed_line"])
        # the section opens the paper: right after its heading, before its claims' table
        heading = next(h for h in headings if h.attrs.get("id") == paper["id"])
        siblings = heading.parent.elements()
        position = siblings.index(heading)
        assert siblings.index(section) == position + 3      # heading, header line, counts, then the summary


def test_the_verdict_is_the_first_cell_of_every_claim_row(report):
    summary, page, _ = report
    verdicts = {c["id"]: c["verdict"] for paper in summary["papers"].values() for c in paper["claims"]}
    rows = [row for table in page.find_all("table", "claims") for row in table.find_all("tr", "claim")]
    assert len(rows) == len(verdicts)
    for row in rows:
        first, second = row.elements()[:2]
        claim = second.text()
        assert first.tag == "td" and first.attrs.get("class") == "verdict", claim
        badge = first.elements()[0]         # the badge opens the cell; its qualifiers follow it
        assert badge.attrs.get("class") == "badge" and badge.text().split()[-1] == verdicts[claim], claim
    for table in page.find_all("table", "claims"):
        assert table.find_all("th")[0].text() == "verdict"


def test_every_checks_evidence_is_collapsed(report):
    summary, page, _ = report
    claims = {c["id"]: c for paper in summary["papers"].values() for c in paper["claims"]}
    seen = 0
    for row in (r for table in page.find_all("table", "claims") for r in table.find_all("tr", "claim")):
        claim = claims[row.elements()[1].text()]
        shown = row.find_all("details", "evidence")
        assert len(shown) == len(claim["checks"]), claim["id"]
        for details, check in zip(shown, claim["checks"]):
            handle = details.elements()[0]
            assert handle.tag == "summary" and len(handle.text()) <= 40 + len(check["name"]) + SENTENCE_CHARS
            assert " ".join(check["summary"].split()) in " ".join(details.text().split()), check["name"]
            for cell in [row.find_all("td")[1] for table in details.find_all("table") for row in table.find_all("tr")]:
                assert len(cell.text()) <= VALUE_CHARS + 40      # long values are summarised (whole in summary.json)
            seen += 1
        # nothing of a check's evidence is shown open in its row: every table and figure in it sits in a <details>
        for inner in row.find_all("table") + row.find_all("img"):
            assert "details" in _tags_up_to(inner, row), claim["id"]
    assert seen == sum(len(c["checks"]) for c in claims.values())


def _tags_up_to(node: Node, top: Node) -> list[str]:
    tags = []
    while node is not top:
        node = node.parent
        tags.append(node.tag)
    return tags


# ----------------------------------------------------------------- quick vs paper profile
def _expected_differences(quick: dict, paper: dict) -> tuple[set, int, int]:
    """Computed here from the two JSON files: the claims whose verdicts differ, and of the claims the paper
    profile decides, how many the quick report decides the same way."""
    verdicts = [{c["id"]: c["verdict"] for p in s["papers"].values() for c in p["claims"]} for s in (quick, paper)]
    common = verdicts[0].keys() & verdicts[1].keys()
    differ = {(c, verdicts[0][c], verdicts[1][c]) for c in common if verdicts[0][c] != verdicts[1][c]}
    decided = [c for c in common if verdicts[1][c] in DECIDED]
    return differ, len(decided), sum(verdicts[0][c] == verdicts[1][c] for c in decided)


def test_the_table_lists_exactly_the_claims_whose_verdicts_differ(report):
    summary, page, out = report
    paper = json.loads((out / "paper" / "summary.json").read_text())
    differ, decided, same = _expected_differences(summary, paper)
    (table,) = page.find_all("table", "profiles")
    listed = {tuple(cell.text().split()[-1] if i else cell.text() for i, cell in enumerate(row.find_all("td")))
              for row in table.find_all("tr")[1:]}
    assert listed == differ and len(table.find_all("tr")) == len(differ) + 1
    sentence = table.parent.elements()[table.parent.elements().index(table) - 1].text()
    assert f"Of the {decided} claims the paper profile's report" in sentence
    assert f"decides {same} the same way ({same / decided:.0%})" in sentence
    # each differing claim, and only those, is flagged in its row, naming the paper profile's verdict
    flagged = {row.elements()[1].text(): row.elements()[0].text()
               for t in page.find_all("table", "claims") for row in t.find_all("tr", "claim")
               if "the paper profile" in row.elements()[0].text()}
    assert {(c, q, p) for c, q, p in differ} == {(c, q, p) for c, q, p in differ if c in flagged}
    assert set(flagged) == {c for c, _, _ in differ}
    assert all(flagged[c].endswith(f"the paper profile {'decides' if p in DECIDED else 'leaves'} this: {p}")
               for c, _, p in differ)


def test_the_committed_reports_agreement_is_the_one_the_page_states(committed):
    """The agreement figure, recomputed here from the two committed summaries, is the page's; and it does not fall
    below the 129 of 134 measured when the quick profile kept dp-recal's PLF (2026-11-28; 125 of 134 before)."""
    quick, paper = (json.loads((committed / name).read_text())["papers"] for name in ("summary.json", "paper/summary.json"))
    pairs = [(q["verdict"], p["verdict"]) for pid in paper for p in paper[pid]["claims"]
             for q in quick[pid]["claims"] if q["id"] == p["id"]]
    decided = [(q, p) for q, p in pairs if p in ("confirmed", "refuted")]
    same, differ = sum(q == p for q, p in decided), sum(q != p for q, p in pairs)
    page = (committed / "index.html").read_text()
    assert f"Of the {len(decided)} claims the paper profile's report (<code>paper/summary.json</code>) decides" in page
    assert (f"decides <b>{same} the same way ({same / len(decided):.0%})</b>. {differ} of the {len(pairs)} claims both "
            "reports hold have different") in page
    assert same * 134 >= 129 * len(decided)


def test_the_markdown_flags_the_claims_the_paper_profile_decides_otherwise(synthetic):
    markdown = (synthetic / "demo.md").read_text()
    (row,) = [line for line in markdown.splitlines() if line.startswith("| ? **inconclusive**")]
    assert "| `demo/theorem-1` |" in row and "(⚑ the paper profile decides this: confirmed)" in row
    assert markdown.count("⚑") == 2      # its row and its line under "Could not be decided"
    assert ("- ? `demo/theorem-1` (L9): Slope 0.45 [0.17, 0.77] vs 0.6 at T = 4000. (⚑ the paper profile decides this: "
            "confirmed; what would decide it: about 92 runs at this horizon would separate it from 0.6)") in markdown


def test_a_paper_profile_report_or_one_without_a_paper_profile_beside_it_has_no_table(tmp_path):
    _write(tmp_path / "paper", _summary("paper"))
    render_reports(tmp_path / "paper")
    _write(tmp_path / "alone", _summary("quick"))
    render_reports(tmp_path / "alone")
    for out in (tmp_path / "paper", tmp_path / "alone"):
        page = (out / "index.html").read_text()
        assert "Quick vs paper profile" not in page and "⚑" not in page
    named = render_reports(tmp_path / "alone", tmp_path / "paper" / "summary.json")   # --paper-report PATH
    assert named and "Quick vs paper profile" in (tmp_path / "alone" / "index.html").read_text()


# ----------------------------------------------------------------- size, sentences, times
# Measured on the committed quick report (162 claims, 31 figures): 3,955,837 bytes before this layout (figures
# embedded in full colour, 3.14 MB of it; every value dumped whole), 1,902,795 after (figures in 256 colours,
# 1.14 MB; long values summarised). 2.3 MB leaves 20% for more claims and figures, and fails if the figures are
# embedded in full colour again (+2 MB) or the values dumped whole with them.
MAX_INDEX_BYTES = 2_300_000


def test_index_html_stays_small(committed):
    size = (committed / "index.html").stat().st_size
    assert 1_000_000 < size < MAX_INDEX_BYTES, size
    page = (committed / "index.html").read_text()
    assert page.count("data:image/png;base64,") == 31 and 'src="http' not in page   # still self-contained


def test_long_values_are_summarised_in_the_page_and_whole_in_the_summary(synthetic):
    page = (synthetic / "index.html").read_text()
    assert '[0.0, 1.7e-309, 3.4e-309, 5.1e-309, "... 5000 items, min 0, max 8.498e-306"]' in page
    assert len(json.loads((synthetic / "summary.json").read_text())["papers"]["demo"]["claims"][0]["checks"][0][
        "values"]["p_values"]) == 5000


def test_a_claims_sentence_and_what_would_decide_it_come_from_its_evidence():
    assert opening("The bound fails at n = 3. Details follow.", limit=30) == "The bound fails at n = 3."
    assert opening("The bound fails at n = 3. Details follow.") == "The bound fails at n = 3. Details follow."
    assert opening("eps 0.02 at Fig. 4 and ref. (24) hold") == "eps 0.02 at Fig. 4 and ref. (24) hold"
    assert opening("word " * 100, limit=22) == "word word word word …"
    theorem = _claims("quick")[2]
    assert what_would_decide(theorem) == "about 92 runs at this horizon would separate it from 0.6"
    flips = _claim("t", "inconclusive", [_check("c", "inconclusive", "It flips: inconclusive; more runs per seed would "
                                                                      "decide it. Root seed 1: refuted")])
    assert what_would_decide(flips) == ""      # the sentence shown already says it
    missing = "data not available: x: needs x.tar; " + "not in ../shared/data; " * 10 + "provide it with --data-dir DIR"
    data = _claim("f", "inconclusive", [_check("a", "confirmed", "ok"), _check("b", "not-run", missing)])
    assert what_would_decide(data) == "provide it with --data-dir DIR"
    assert what_would_decide(_claims("quick")[3]) == ""      # the evidence says nothing: we add nothing


def test_headers_state_what_the_run_and_its_computation_cost(synthetic):
    assert [duration(s) for s in (0.44, 32.2, 594, 3600 + 3, 5809.9)] == ["0.4 s", "32 s", "9 min 54 s", "1 h 0 min 3 s",
                                                                         "1 h 36 min 50 s"]
    paper = json.loads((synthetic / "summary.json").read_text())["papers"]["demo"]
    assert cost_text(paper) == ("computing it took 17 min 3 s CPU (experiments 15 min 0 s, checks 2 min 3 s; "
                                "the checks 1.5 s wall)")
    assert cost_text({"seconds": 32.2}).startswith("checks computed in 32.2 s (wall; the summary records no CPU time")
    page = (synthetic / "index.html").read_text()
    assert ("<p class='note'>generated 2026-01-01T00:00:00+00:00; this run: 3.2 s wall; demo: 3.1 s wall, 17 min 3 s "
            "CPU as computed, from the cache</p>") in page
    assert cost_text(paper) in render_markdown(paper).splitlines()[2]


def test_the_committed_paper_report_renders_and_so_does_it_as_schema_1_3(tmp_path):
    """The committed paper report (schema 1.6) renders with its CPU time in each header; the same summary without
    what 1.5 and 1.6 added (CPU times, the run's per-paper stamp, seeds not repeated), labelled 1.3 as the paper
    reports made before them, still renders, saying it records no CPU time."""
    shutil.copytree(REPO / "reports" / "paper" / "figures", tmp_path / "figures")
    summary = json.loads((REPO / "reports" / "paper" / "summary.json").read_text())
    assert summary["schema_version"] == "1.6"
    for label, text in (("1.6", json.dumps(summary)), ("1.3", json.dumps(_as_schema_1_3(summary)))):
        (tmp_path / "summary.json").write_text(text)
        render_reports(tmp_path)
        page = Tree((tmp_path / "index.html").read_text()).root
        assert len(page.find_all("section", "summary")) == len(summary["papers"]) == 4, label
        header = (tmp_path / "dp_recal.md").read_text().splitlines()[2]
        seconds = summary["papers"]["dp-recal"]["seconds"]
        assert (f"{seconds} s (wall; the summary records no CPU time)" in header) == (label == "1.3"), header
        assert ("computing it took 2 h 51 min 7 s CPU" in header) == (label == "1.6"), header


def _as_schema_1_3(summary: dict) -> dict:
    old = json.loads(json.dumps(summary))
    old["schema_version"] = "1.3"
    old["run"].pop("papers", None)
    for paper in old["papers"].values():
        paper.pop("cpu_seconds", None)
        paper.pop("finding_counts", None)
        for claim in paper["claims"]:
            if "seeds" in claim:
                claim["seeds"].pop("not_repeated", None)
                claim["seeds"]["count"] = max(claim["seeds"]["count"], 2)
    return old


def _spin(rng, size):
    """A task that takes some CPU time."""
    total = 0.0
    for _ in range(size):
        total += float(rng.standard_normal(2000).sum())
    return pd.DataFrame({"total": [total]})


def test_a_task_keeps_its_cpu_time_in_the_cache(tmp_path):
    """What computing a result cost is measured where it ran and kept with it: a rerun from the cache reads back the
    same seconds, and counts the task as read from the cache."""
    from dpverify.reproductions.run.runner import Runner
    from dpverify.theory.execution import Task

    tasks = [Task(f"demo/spin-{i}", _spin, {"size": 2000}) for i in range(2)]
    cold = Runner(cache_directory=tmp_path, show_progress=False)
    cold(tasks, 1)
    assert cold.computed == 2 and cold.cached == 0 and all(s > 0 for s in cold.task_cpu.values())
    warm = Runner(cache_directory=tmp_path, show_progress=False)
    warm(tasks, 1)
    warm(tasks, 1)      # read twice in one run: one task each
    assert warm.computed == 0 and warm.cached == 2 and warm.task_cpu == cold.task_cpu


def test_the_run_stamp_names_each_paper_and_the_schema_takes_it():
    import jsonschema

    from dpverify.reproductions.report.publish import SCHEMA_FILE

    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.validate(_summary("quick", RUN), schema)
    broken = _summary("quick", {**RUN, "papers": {"demo": {"wall_seconds": -1, "tasks_cached": 0, "checks_cached": 0}}})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
    no_checks = _summary("quick")
    no_checks["papers"]["demo"]["cpu_seconds"] = {"experiments": 1.0}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(no_checks, schema)


def test_rows_are_short(committed):
    """A claim row of the Markdown report: the verdict, the claim, the opening of its evidence (its whole evidence
    is under "Claim details"). Before this layout the committed report's rows averaged 602-964 characters (up to
    2,943)."""
    for path in sorted(committed.glob("*.md")):
        claims = path.read_text().split("## Claim details")[0]
        rows = [line for line in claims.splitlines() if re.match(r"^\| . \*\*[a-z-]+\*\*", line)]
        assert rows and sum(map(len, rows)) / len(rows) < 500 and max(map(len, rows)) < 800, path.name
