"""End to end: `dpverify reproduce` writes a self-contained report with a verdict for every claim,
the figure with its parameters and their provenance, Parquet results; a rerun computes nothing."""

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from dpverify.theory.papers import get_paper

VERDICTS = {"confirmed", "refuted", "inconclusive", "not-run"}


def dpverify(*args):
    return subprocess.run([sys.executable, "-m", "dpverify", *args], capture_output=True, text=True,
                          timeout=900)


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory):
    out, cache = tmp_path_factory.mktemp("report"), tmp_path_factory.mktemp("cache")
    first = dpverify("reproduce", "zcdp-nfl", "--figure", "figure-2", "--out", str(out), "--cache", str(cache))
    assert first.returncode == 0, first.stderr
    return out, cache, first


def test_every_claim_has_a_verdict_with_evidence(reproduced):
    out, _, _ = reproduced
    record = json.loads((out / "summary.json").read_text())["papers"]["zcdp-nfl"]
    claims = {c["id"]: c for c in record["claims"]}
    assert set(claims) == {c.id for c in get_paper("zcdp-nfl").claims}
    for claim in claims.values():
        assert claim["verdict"] in VERDICTS
        assert claim["seed_line"]
        assert claim["checks"] or claim["not_run_reason"]
        for check in claim["checks"]:
            assert check["summary"]
    # the reproduced figure's claims are decided; the figures not reproduced are not-run, with why
    assert claims["zcdp-nfl/figure-2-admm-beats-subgradient"]["verdict"] != "not-run"
    assert claims["zcdp-nfl/figure-1-admm-beats-subgradient"]["verdict"] == "not-run"
    assert "not reproduced" in claims["zcdp-nfl/figure-1-admm-beats-subgradient"]["checks"][0]["summary"]
    # findings stay findings: the printed App. C closed form sums T terms, not T-1
    assert claims["zcdp-nfl/appendix-c-sum"]["verdict"] == "refuted"
    # the paper's tally counts its own claims; the findings beyond them are counted apart
    assert claims["zcdp-nfl/audit-reading-25"]["kind"] == "finding"
    assert sum(record["counts"].values()) == len(claims) - sum(record["finding_counts"].values())
    assert record["finding_counts"] == {v: sum(c["verdict"] == v and c["kind"] == "finding" for c in claims.values())
                                        for v in record["counts"]}


def test_figure_record_shows_parameters_and_defaults(reproduced):
    out, _, _ = reproduced
    record = json.loads((out / "summary.json").read_text())["papers"]["zcdp-nfl"]
    (figure,) = record["figures"]
    assert figure["id"] == "figure-2" and figure["paper_says"] and figure["observed"]
    parameters = {p["name"]: p for p in figure["parameters"]}
    assert parameters["num_agents"]["source"] == "paper" and parameters["num_agents"]["value"] == 50
    assert parameters["tau"]["source"] == "default" and "not given" in parameters["tau"]["note"]
    assert parameters["instances"]["source"] == "default" and "quick profile" in parameters["instances"]["note"]
    for image in figure["images"].values():
        assert (out / image).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    provenance = json.loads(pq.read_schema(out / figure["results"]).metadata[b"dpverify.provenance"])
    assert provenance["experiment"] == "figure-2" and provenance["profile"] == "quick"
    table = pq.read_table(out / figure["results"]).to_pandas()
    assert set(table.algorithm) == {"zcdp-nfl", "eps-delta-nfl", "zcdp-grad-nfl"}
    initial = table.normalized_error[table.iteration == 0].to_numpy()
    assert initial == pytest.approx(50.0, rel=1e-12)  # w^(0) = 0 gives K (L304)


def test_html_is_self_contained_and_markdown_written(reproduced):
    out, _, _ = reproduced
    page = (out / "index.html").read_text()
    assert page.count("data:image/png;base64,") >= 1
    assert "src=\"http" not in page and "href=\"http" not in page
    markdown = (out / "zcdp_nfl.md").read_text()
    assert "zcdp-nfl/lemma-1" in markdown and "What the paper says" in markdown
    assert "## Privacy audits" in markdown and "not refuted at 20000 samples" in markdown and "| REFUTED |" in markdown


def test_rerun_computes_nothing_and_report_rerenders(reproduced):
    out, cache, first = reproduced
    again = dpverify("reproduce", "zcdp-nfl", "--figure", "figure-2", "--out", str(out), "--cache", str(cache))
    assert again.returncode == 0, again.stderr
    run = json.loads((out / "summary.json").read_text())["run"]
    assert run["tasks_computed"] == {"zcdp-nfl": 0} and run["checks_computed"] == {"zcdp-nfl": 0}
    (out / "index.html").unlink()
    rendered = dpverify("report", "--out", str(out))
    assert rendered.returncode == 0 and (out / "index.html").exists()
