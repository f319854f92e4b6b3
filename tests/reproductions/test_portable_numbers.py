"""The same commit on another machine gives the same verdicts and numbers (issue: portable reports). A
different BLAS thread count is the perturbation a second machine most often brings: BLAS may split a
product's sums across threads, which reorders them."""

import sys

from typer.testing import CliRunner

from dpverify.reproductions import cli
from dpverify.reproductions.report.compare import NUMBER_TOLERANCE, compare_summaries, load_summary


def _reproduce(args: list[str]) -> int:
    with CliRunner().isolation():
        try:
            cli.main(args)
        except SystemExit as done:
            return done.code
        finally:
            sys.stdout.flush()
    return 0


def test_two_blas_threads_change_no_verdict_and_no_number_beyond_the_compare_tolerance(tmp_path, monkeypatch):
    """dpdo-nc Lemma 4's Monte-Carlo check (100 runs of 500 rounds, matrix products on every round) with 1 and
    with 2 BLAS threads per process: the same verdict, and every evidence number within compare's relative
    tolerance (NUMBER_TOLERANCE, the tolerance reports are compared with across machines)."""
    summaries = []
    for threads in (1, 2):
        monkeypatch.setenv("DPVERIFY_BLAS_THREADS", str(threads))
        out = tmp_path / f"threads-{threads}"
        status = _reproduce(["check", "dpdo-nc", "--claim", "lemma-4", "--out", str(out),
                             "--cache", str(tmp_path / f"cache-{threads}"), "--jobs", "1"])
        assert status == 0
        summaries.append(load_summary(out / "summary.json"))
    (claim,) = summaries[0]["papers"]["dpdo-nc"]["claims"]
    assert claim["verdict"] == "confirmed"        # decided, with numbers to compare
    assert compare_summaries(*summaries, tolerance=NUMBER_TOLERANCE) == []
