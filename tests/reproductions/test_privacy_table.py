"""The privacy table: summary.json's claims[].privacy (schema 1.2) rendered in both reports."""

import copy
import json

import pytest

from dpverify.reproductions.report.compare import compare_summaries
from dpverify.reproductions.report.publish import SCHEMA_FILE, claim_record, render_html, render_markdown
from dpverify.theory.audit import accounting
from dpverify.theory.claims import CheckResult, Claim, ClaimResult, Evidence, Method, Verdict

jsonschema = pytest.importorskip("jsonschema")
SCHEMA = json.loads(SCHEMA_FILE.read_text())


def _horizon_row():
    return accounting.privacy_row(
        "T = 500 rounds, eps = 1 per round", 1e-5, "pure eps compared at the default delta",
        paper=accounting.cell(500.0, "Theorem 1: basic composition"),
        accountant=accounting.cell(258.3, "500 x laplace", accountant="PLD (dp-accounting 0.6.0)", rdp=265.9),
        ledger=accounting.cell(354.7, "zCDP route", route="zcdp"),
        audit=accounting.not_applicable("no audit of the whole transcript"))


def _round_row():
    return accounting.privacy_row(
        "one round, eps = 1", 1e-5, "pure eps compared at the default delta",
        paper=accounting.cell(1.0, "Theorem 1"), accountant=accounting.cell(None, accounting.NOT_INSTALLED),
        ledger=accounting.cell(1.0, "basic", route="basic"),
        audit=accounting.cell(1.306, "largest over rounds", samples_per_side=200_000, confidence=0.95))


def _claim(claim_id, rows):
    check = {"name": "audit", "method": "audit", "verdict": "inconclusive", "summary": "s", "values": {}, "seconds": 0.1,
             "figure": None, "rule": None, "paper": "", "parameters": {}}
    claim = {"id": claim_id, "kind": "theorem", "seed_line": "L1", "title": "t", "statement": "s",
             "verdict": "inconclusive", "not_run_reason": "", "checks": [check]}
    return {**claim, "privacy": rows} if rows is not None else claim


def _paper(paper_id, claims):
    return {"id": paper_id, "title": paper_id.upper(), "seed_file": "seeds/002", "profile": "quick", "generated": "now",
            "seconds": 1.0, "counts": {"inconclusive": len(claims)}, "claims": claims, "figures": [], "constants": [],
            "provenance": {"git_commit": "abc", "code_digest": "0" * 64, "python": "3.12",
                           "packages": {"dpverify": "0.1.0"}, "root_seed": 1}}


def _summary():
    dpdo = _paper("dpdo-nc", [_claim("dpdo-nc/theorem-1-horizon", [_horizon_row()]),
                              _claim("dpdo-nc/theorem-1", [_round_row()]), _claim("dpdo-nc/lemma-2", None)])
    zcdp = _paper("zcdp-nfl", [_claim("zcdp-nfl/audit-privacy", [_round_row()])])
    return {"schema_version": "1.2", "papers": {"dpdo-nc": dpdo, "zcdp-nfl": zcdp}}


def test_markdown_shows_the_four_epsilons_and_the_ratios():
    markdown = render_markdown(_summary()["papers"]["dpdo-nc"])
    assert "## Privacy" in markdown
    assert ("| dpdo-nc/theorem-1-horizon | T = 500 rounds, eps = 1 per round | 1e-05 | 500 | 258.3; 265.9 | 354.7 | n/a "
            "| 1.94x | n/a |") in markdown
    assert "| dpdo-nc/theorem-1 | one round, eps = 1 | 1e-05 | 1 | n/a | 1 | 1.306 (200000/side, 0.95) | n/a | n/a |" in markdown
    assert "audit: n/a: no audit of the whole transcript" in markdown          # the reason is shown, not only "n/a"
    assert f"accountant: {accounting.NOT_INSTALLED}; ledger" in markdown


def test_an_rdp_only_cell_is_labelled():
    record = _summary()["papers"]["dpdo-nc"]
    record["claims"][0]["privacy"][0]["accountant_epsilon"] = accounting.cell(5e4, "leaky", accountant="RDP (x)", rdp=5e4)
    assert "| 5e+04 (RDP only) |" in render_markdown(record)


def test_a_paper_without_privacy_records_has_no_privacy_table():
    record = _paper("x", [_claim("x/lemma-1", None)])
    assert "## Privacy" not in render_markdown(record)
    assert "Privacy, all papers" not in render_html({"papers": {"x": record}}, out_dir=None)


def test_html_has_a_table_per_paper_and_one_across_papers():
    html = render_html(_summary(), out_dir=None)
    assert html.count("<h3>Privacy</h3>") == 2
    across = html.split("<h2 id='privacy'>Privacy, all papers</h2>")[1].split("<h2")[0]
    assert "<td>dpdo-nc/theorem-1-horizon</td>" in across and "<td>zcdp-nfl/audit-privacy</td>" in across
    assert "<td>1.94x</td>" in across


def test_the_schema_accepts_summaries_with_and_without_privacy_records():
    jsonschema.validate(_summary(), SCHEMA)
    older = copy.deepcopy(_summary())
    older["schema_version"] = "1.1"
    for paper in older["papers"].values():
        for claim in paper["claims"]:
            claim.pop("privacy", None)
    jsonschema.validate(older, SCHEMA)


@pytest.mark.parametrize("damage", ["made-up-na", "missing-column", "negative", "bad-route"])
def test_the_schema_rejects_a_damaged_privacy_record(damage):
    summary = _summary()
    row = summary["papers"]["dpdo-nc"]["claims"][0]["privacy"][0]
    if damage == "made-up-na":      # a missing number must say why
        row["audit_lower_bound"] = {"value": None, "note": "nothing"}
    elif damage == "missing-column":
        del row["ledger_epsilon"]
    elif damage == "negative":
        row["paper_epsilon"]["value"] = -1.0
    else:
        row["ledger_epsilon"]["route"] = "guess"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(summary, SCHEMA)


def test_rows_move_from_the_checks_values_to_the_claims_record(tmp_path):
    claim = Claim("dpdo-nc/theorem-1", "theorem", "L253", "t", "s", not_run_reason="fixture")
    evidence = Evidence("s", {"epsilon_lower_bound": 1.3, accounting.PRIVACY_KEY: [_round_row()]})
    result = ClaimResult(claim, (CheckResult("audit of each round", Method.AUDIT, Verdict.REFUTED, evidence),))
    record = claim_record(result, tmp_path)
    assert accounting.PRIVACY_KEY not in record["checks"][0]["values"]
    assert record["checks"][0]["values"] == {"epsilon_lower_bound": 1.3}
    assert record["privacy"] == [{**_round_row(), "check": "audit of each round"}]


def test_compare_reports_privacy_numbers_that_moved():
    before, after = _summary(), _summary()
    after["papers"]["dpdo-nc"]["claims"][0]["privacy"][0]["accountant_epsilon"]["value"] = 250.0
    (moved,) = compare_summaries(before, after)
    assert moved.kind == "number" and (moved.before, moved.after) == (258.3, 250.0)
    assert moved.claim == "dpdo-nc/theorem-1-horizon [privacy: T = 500 rounds, eps = 1 per round]/accountant_epsilon/value"
