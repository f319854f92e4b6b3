"""harness-errors.log carries no absolute path of the machine it ran on (issue 34): the tracebacks name files
relative to the checkout, `<site-packages>/...` and `<stdlib>/...`, and the evidence names the log relative to
the working directory."""

import os
import site
import sysconfig
from pathlib import Path

import numpy as np

from dpverify.reproductions import cli
from dpverify.theory import rules
from dpverify.theory.claims import Check, Claim, Method, Paper, Verdict
from dpverify.theory.execution import CheckContext

REPO = Path(__file__).resolve().parents[2]


def crash_in_stdlib(context):
    """A check whose traceback runs through the checkout (this file) and the stdlib."""
    import json

    json.loads("{")   # a frame in the stdlib's json
    return None


def crash_in_numpy(context):
    np.linalg.inv(np.zeros((2, 2)))   # LinAlgError raised from numpy's own file
    return None


def test_the_log_and_the_evidence_carry_no_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paper = Paper("toy", "toy", "seed", (
        Claim("toy/a", "lemma", "L1", "a", "a", (Check("stdlib", Method.NUMERICAL, crash_in_stdlib,
                                                       rule=rules.exact()),)),
        Claim("toy/b", "lemma", "L2", "b", "b", (Check("numpy", Method.NUMERICAL, crash_in_numpy, rule=rules.exact()),))))
    log = tmp_path / "out" / cli.HARNESS_LOG
    results = cli._check_claims(paper, None, CheckContext(), log)
    assert [r.verdict for r in results] == [Verdict.NOT_RUN, Verdict.NOT_RUN]
    assert results[0].results[0].evidence.summary == (
        "harness error (a bug of dpverify, not a finding): check 'stdlib' crashed: Expecting property name enclosed "
        "in double quotes: line 1 column 2 (char 1); traceback in out/harness-errors.log")

    text = log.read_text()
    # the frames are there, with their paths made relative
    assert 'File "tests/reproductions/test_harness_log.py", line ' in text
    assert 'File "<stdlib>/json/decoder.py", line ' in text
    assert 'File "<site-packages>/numpy/linalg/' in text
    assert "numpy.linalg.LinAlgError: Singular matrix" in text
    machine = {str(REPO), str(tmp_path), str(Path(np.__file__).resolve().parents[1]), sysconfig.get_paths()["stdlib"],
               *site.getsitepackages(), str(Path.home())}
    assert [path for path in machine if path in text] == []
    assert f'"{os.sep}' not in text   # no frame's file starts at the root
