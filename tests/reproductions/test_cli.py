"""The dpverify command: one-line user errors with exit 2, help, list, and a report end to end."""

import subprocess
import sys

import pytest

from dpverify.reproductions import cli


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "dpverify", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


@pytest.mark.parametrize("args, expected", [
    (["check", "no-such-paper"], "unknown paper 'no-such-paper'; known papers: dp-recal, dpdo-nc, wang-basar, zcdp-nfl"),
    (["check", "zcdp-nfl", "--claim", "lemma-99"], "unknown claim 'lemma-99' for paper 'zcdp-nfl'"),
    (["reproduce", "zcdp-nfl", "--figure", "figure-9"], "unknown figure/experiment 'figure-9'"),
    (["check", "--claim", "lemma-1"], "--claim needs a PAPER argument"),
    (["reproduce", "zcdp-nfl", "--figure", "figure-1", "--backend", "dask"], "--backend dask needs --scheduler"),
    (["report", "--out", "/nonexistent-dir-for-dpverify"], "no /nonexistent-dir-for-dpverify/summary.json"),
])
def test_user_errors_are_one_line_exit_2(args, expected, tmp_path):
    result = run_cli(*args, "--cache", str(tmp_path)) if args[0] in ("check", "reproduce") else run_cli(*args)
    assert result.returncode == cli.EXIT_USER_ERROR, result.stderr
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    assert len([line for line in result.stderr.splitlines() if line.startswith("error:")]) == 1


def test_bad_option_value_is_a_usage_error():
    result = run_cli("reproduce", "--profile", "huge")
    assert result.returncode == cli.EXIT_USER_ERROR
    assert "huge" in result.stderr and "Traceback" not in result.stderr


def test_help_explains_commands():
    result = run_cli("--help")
    assert result.returncode == 0
    for command in ("list", "check", "reproduce", "audit", "report", "bench"):
        assert command in result.stdout


def test_list_shows_every_claim_with_its_line():
    result = run_cli("list", "zcdp-nfl")
    assert result.returncode == 0
    from dpverify.theory.papers import get_paper

    for claim in get_paper("zcdp-nfl").claims:
        assert claim.id in result.stdout
    assert "experiment figure-3" in result.stdout


def test_check_single_claim_prints_verdict(tmp_path):
    result = run_cli("check", "zcdp-nfl", "--claim", "appendix-c-sum", "--cache", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "zcdp-nfl/appendix-c-sum" in result.stdout
    strict = run_cli("check", "zcdp-nfl", "--claim", "appendix-c-sum", "--strict", "--cache", str(tmp_path))
    expected = cli.EXIT_REFUTED if "refuted" in result.stdout.split("zcdp-nfl/appendix-c-sum")[1].split()[0] else 0
    assert strict.returncode == expected


def test_audit_command_rejects_bad_confidence_and_reports_bounds(tmp_path):
    bad = run_cli("audit", "zcdp-nfl", "--confidence", "1.5")
    assert bad.returncode == cli.EXIT_USER_ERROR and "--confidence must lie in (0, 1)" in bad.stderr
    result = run_cli("audit", "zcdp-nfl", "--claim", "audit-experiments-privacy", "--samples", "2000")
    assert result.returncode == 0, result.stderr
    assert "REFUTED" in result.stdout and "2000 samples/side" in result.stdout
