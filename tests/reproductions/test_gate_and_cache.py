"""Reports a CI job can gate on, and a cache that cannot confuse two results:
- a run against a baseline: regressions fail (exit 3 and a failing JUnit case), fixes and other changes do
  not, unless --strict; two `check` runs of the same code pass;
- summary.json follows its shipped JSON Schema (the committed report included);
- task parameters are hashed by value (hypothesis: equal values share a key, distinct ones never do), and a
  change of the data, a package version or the code gives every task a new key."""

import copy
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dpverify.reproductions.report.compare import Difference, Gate
from dpverify.reproductions.report.junit import write_junit
from dpverify.reproductions.report.publish import SCHEMA_FILE
from dpverify.reproductions.run import runner
from dpverify.theory.execution import Task, UnhashableParameterError, value_digest

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads(SCHEMA_FILE.read_text())


def summary_with(verdicts: dict[str, str]) -> dict:
    claims = [{"id": claim, "kind": "lemma", "seed_line": "L1", "title": claim, "statement": "s", "verdict": verdict,
               "not_run_reason": "", "checks": [{"name": "c", "method": "numerical", "verdict": verdict,
                                                 "summary": f"{claim} is {verdict}", "values": {}, "seconds": 0.5,
                                                 "figure": None, "rule": None, "paper": "", "parameters": {}}]}
              for claim, verdict in verdicts.items()]
    return {"papers": {"p": {"claims": claims}}}


def test_the_gate_fails_on_regressions_only():
    before = {"p/a": "confirmed", "p/b": "refuted", "p/c": "inconclusive", "p/d": "confirmed", "p/e": "inconclusive"}
    after = {"p/a": "inconclusive", "p/b": "confirmed", "p/c": "not-run", "p/d": "confirmed", "p/e": "refuted"}
    from dpverify.reproductions.report.compare import compare_summaries

    judged = Gate(tuple(compare_summaries(summary_with(before), summary_with(after))))
    assert {d.claim for d in judged.regressions} == {"p/a", "p/e"}         # lost confirmation, new refutation
    assert {d.claim for d in judged.fixes} == {"p/b"}
    assert {d.claim for d in judged.failing(strict=True) if d.kind == "verdict"} == {"p/a", "p/b", "p/c", "p/e"}
    assert Gate(tuple(compare_summaries(summary_with(before), summary_with(before)))).failing(strict=True) == []


def _with_check_values(summary: dict, claim: str, **values) -> dict:
    summary = copy.deepcopy(summary)
    record = next(c for c in summary["papers"]["p"]["claims"] if c["id"] == claim)
    record["checks"][0]["values"] = values
    return summary


def test_a_claim_decided_another_way_is_not_comparable_and_a_genuine_regression_still_fails(tmp_path):
    """Issue 31: a check this run left out of its scope (an experiment it did not reproduce), or a randomized check
    whose baseline seeds disagreed and that this run decided under other seeds, makes the claim not comparable: not
    a regression, not a JUnit failure, even with --strict. The same verdict changes without those reasons fail."""
    from dpverify.reproductions.report.compare import compare_summaries

    seeds = {"root_seeds": [1, 2, 3], "verdicts": ["confirmed", "inconclusive", "confirmed"], "agreeing": 2}
    before = _with_check_values(summary_with({"p/a": "confirmed", "p/b": "inconclusive", "p/c": "confirmed"}),
                                "p/b", seeds=seeds)
    after = summary_with({"p/a": "not-run", "p/b": "refuted", "p/c": "refuted"})
    after = _with_check_values(after, "p/a", outside_run=["figure-1"])
    after = _with_check_values(after, "p/b", seeds={"root_seeds": [1], "verdicts": ["refuted"], "agreeing": 1})
    judged = Gate(tuple(compare_summaries(before, after)))
    assert [(d.claim, d.kind) for d in judged.not_comparable] == [("p/a", "not-comparable"), ("p/b", "not-comparable")]
    assert judged.not_comparable[0].why == "[c] read figure-1, which this run did not reproduce and the baseline's did"
    assert judged.not_comparable[1].why == "[c] flipped between the baseline's root seeds [1, 2, 3]; this run used [1]"
    assert [d.claim for d in judged.regressions] == ["p/c"]             # no reason: a genuine new refutation
    assert [d.claim for d in judged.failing(strict=True) if d.kind in ("verdict", "not-comparable")] == ["p/c"]
    root = ElementTree.parse(write_junit(tmp_path / "junit.xml", after, judged)).getroot()
    cases = {case.get("name"): case for case in root.findall("testsuite/testcase")}
    assert root.find("testsuite").get("failures") == "1" and cases["p/c"].find("failure") is not None
    assert cases["p/b"].find("skipped").get("message").startswith("not comparable with the baseline: p/b: ")
    same_seeds = _with_check_values(after, "p/b", seeds=seeds | {"verdicts": ["refuted"] * 3, "agreeing": 3})
    assert [d.claim for d in Gate(tuple(compare_summaries(before, same_seeds))).regressions] == ["p/b", "p/c"]


def test_docs_ci_command_passes_against_the_committed_baseline(tmp_path):
    """Issue 31: docs/ci.md's first command, exactly as written, on a copy of the committed report, exits 0 with no
    failing JUnit case (the committed baseline was made by `reproduce --seeds 5`; `check` reproduces no figure and
    runs one seed, so what it cannot decide the same way is not comparable, not a regression)."""
    text = (REPO / "docs" / "ci.md").read_text()
    command = next(line for line in text.splitlines() if line.startswith("dpverify check --baseline"))
    shutil.copytree(REPO / "reports", tmp_path / "reports", ignore=shutil.ignore_patterns("results", "figures", "paper"))
    done = subprocess.run([sys.executable, "-m", "dpverify", *command.split()[1:]], capture_output=True, text=True,
                          cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "new refutations: 0" in done.stdout and "lost confirmations or removed claims: 0" in done.stdout
    junit = ElementTree.parse(tmp_path / "dpverify-junit.xml").getroot()
    assert all(suite.get("failures") == "0" for suite in junit.findall("testsuite"))


def test_junit_has_one_case_per_claim_and_fails_the_regression(tmp_path):
    current = summary_with({"p/a": "refuted", "p/b": "refuted", "p/c": "not-run"})
    judged = Gate((Difference("p", "p/a", "verdict", "confirmed", "refuted"),))
    root = ElementTree.parse(write_junit(tmp_path / "junit.xml", current, judged)).getroot()
    cases = root.findall("testsuite/testcase")
    assert [c.get("name") for c in cases] == ["p/a", "p/b", "p/c"]
    assert root.find("testsuite").get("failures") == "1"
    failure = cases[0].find("failure")
    assert "confirmed" in failure.get("message") and failure.text == "c: refuted: p/a is refuted"
    assert cases[1].find("failure") is None          # refuted, and the baseline agrees: a finding, not a failure
    assert cases[2].find("skipped") is not None


def run_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "dpverify", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def test_two_check_runs_pass_and_a_planted_change_fails(tmp_path):
    claim = ["check", "zcdp-nfl", "--claim", "lemma-1", "--cache", str(tmp_path / "cache")]
    first = run_cli(*claim, "--out", "first", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    baseline = tmp_path / "first" / "summary.json"
    jsonschema.validate(json.loads(baseline.read_text()), SCHEMA)
    again = run_cli(*claim, "--baseline", str(baseline), "--junit", "same.xml", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    planted = json.loads(baseline.read_text())
    lemma = planted["papers"]["zcdp-nfl"]["claims"][0]
    assert lemma["verdict"] == "confirmed"
    lemma["verdict"] = "refuted"        # the baseline refuted it: today's confirmation is a fix, not a regression
    (tmp_path / "planted.json").write_text(json.dumps(planted))
    fixed = run_cli(*claim, "--baseline", "planted.json", cwd=tmp_path)
    assert fixed.returncode == 0 and "fixed: 1" in fixed.stdout, fixed.stdout + fixed.stderr
    changed = run_cli(*claim, "--baseline", "planted.json", "--strict", "--junit", "changed.xml", cwd=tmp_path)
    assert changed.returncode == 3, changed.stdout + changed.stderr
    failures = ElementTree.parse(tmp_path / "changed.xml").getroot().findall(".//failure")
    assert len(failures) == 1 and "zcdp-nfl/lemma-1" in failures[0].get("message")
    assert not ElementTree.parse(tmp_path / "same.xml").getroot().findall(".//failure")


@pytest.mark.parametrize("summary", sorted((REPO / "reports").rglob("summary.json")),
                         ids=lambda path: str(path.relative_to(REPO)))
def test_every_committed_report_follows_the_schema(summary):
    """The quick report (reports/summary.json) and the paper-profile report (reports/paper/summary.json)."""
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    committed = json.loads(summary.read_text())
    jsonschema.validate(committed, SCHEMA)
    provenance = next(iter(committed["papers"].values()))["provenance"]
    assert isinstance(provenance["packages"], dict) and provenance["packages"]["dpverify"]


# ----------------------------------------------------------------- the cache key
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
    | hnp.arrays(st.sampled_from([np.float64, np.int64]), hnp.array_shapes(max_dims=2, max_side=4)),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=8)


def same(a, b) -> bool:
    """Equal as the cache must see them: same types, same values, arrays with the same dtype, shape and bytes."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return a.hex() == b.hex()
    return a == b


@given(values, values)
def test_equal_values_share_a_key_and_distinct_ones_never_do(a, b):
    assert value_digest(a) == value_digest(copy.deepcopy(a))
    assert (value_digest(a) == value_digest(b)) == same(a, b)


def test_long_arrays_that_differ_in_the_middle_get_different_keys():
    """json.dumps(default=str) printed both as the same summarized repr; the key now reads the bytes."""
    a = np.zeros(2000)
    b = a.copy()
    b[1000] = 1.0
    assert str(a) == str(b)
    assert Task("t", dict, {"x": a}).content_hash(1) != Task("t", dict, {"x": b}).content_hash(1)
    with pytest.raises(UnhashableParameterError, match="params.model"):
        value_digest({"model": object()})


def test_data_package_versions_and_code_are_in_every_key(monkeypatch):
    task = Task("demo", dict, {"size": 3, "dataset": "ijcnn1"})   # a task that reads ijcnn1: its sha256 is in the key
    runner.environment_digest.cache_clear()
    key = runner.cache_key(task, 1)
    for name, change in (("fingerprint", lambda dataset: {"ijcnn1.trn.bz2": "another checksum"}),
                         ("environment_provenance", lambda: {**ENVIRONMENT, "packages": {**ENVIRONMENT["packages"],
                                                                                         "numpy": "0.0"}}),
                         ("environment_provenance", lambda: {**ENVIRONMENT, "code_digest": "0" * 64})):
        with monkeypatch.context() as patch:
            patch.setattr(runner, name, change)
            runner.environment_digest.cache_clear()
            assert runner.cache_key(task, 1) != key, name
    runner.environment_digest.cache_clear()
    assert runner.cache_key(task, 1) == key


ENVIRONMENT = runner.environment_provenance()
