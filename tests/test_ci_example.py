"""The GitHub Actions example (docs/ci/dpverify.yml) runs: its `run:` steps, in order, on one claim, in a copy of
the repository's reports (the baseline), exit 0 and write the JUnit file and the report."""

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def test_the_workflow_steps_run(tmp_path):
    workflow = yaml.safe_load((REPO / "docs" / "ci" / "dpverify.yml").read_text())
    steps = [step["run"] for step in workflow["jobs"]["verdicts"]["steps"] if "run" in step]
    assert steps[0] == "python -m pip install -e ."     # installed already here: the test runs the rest
    shutil.copytree(REPO / "reports", tmp_path / "reports", ignore=shutil.ignore_patterns("results", "figures"))
    environment = {**os.environ, "DPVERIFY_CHECK": "zcdp-nfl --claim lemma-1"}
    for step in steps[1:]:
        command = step.replace("dpverify ", f"{sys.executable} -m dpverify ", 1)
        result = subprocess.run(command, shell=True, cwd=tmp_path, env=environment, capture_output=True, text=True,
                                timeout=600)
        assert result.returncode == 0, (step, result.stdout[-3000:], result.stderr[-3000:])
    cases = ElementTree.parse(tmp_path / "dpverify-junit.xml").getroot().findall(".//testcase")
    assert [case.get("name") for case in cases] == ["zcdp-nfl/lemma-1"]
    assert (tmp_path / "dpverify-report" / "summary.json").is_file()
