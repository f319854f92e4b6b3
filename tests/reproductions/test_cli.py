"""The dpverify command: help, list, check, audit, interruption, and a report end to end (its user errors:
tests/test_bad_inputs.py)."""

import subprocess
import sys

import pytest

from dpverify.reproductions import cli


def cli_root():
    from pathlib import Path

    return Path(__file__).resolve().parents[2]


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "dpverify", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


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


def test_audit_command_reports_bounds(tmp_path):
    result = run_cli("audit", "zcdp-nfl", "--claim", "audit-experiments-privacy", "--samples", "2000")
    assert result.returncode == 0, result.stderr
    assert "REFUTED" in result.stdout and "2000 samples/side" in result.stdout


def test_ctrl_c_says_what_was_kept_and_exits_130(tmp_path):
    """Interrupted after its first task is cached (reproduce dpdo-nc: four tasks, the last ones the longest)."""
    import signal
    import time

    cache = tmp_path / "cache"
    # the child gets Ctrl-C's default action, as from an interactive shell: a suite started as a background job
    # (`pytest &` in a script) ignores SIGINT, and a child inherits that and would run to the end
    process = subprocess.Popen([sys.executable, "-m", "dpverify", "reproduce", "dpdo-nc", "--cache", str(cache),
                                "--out", str(tmp_path / "out")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    while not list(cache.rglob("*.parquet")) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == cli.EXIT_INTERRUPTED, err
    assert err.strip().splitlines()[-1] == cli.INTERRUPTED and "Traceback" not in err
    assert list(cache.rglob("*.parquet"))          # what was finished is kept


def test_check_under_several_seeds_records_how_many_agree(tmp_path):
    import json

    import jsonschema

    result = run_cli("check", "dpdo-nc", "--claim", "gradient-bound", "--seeds", "2", "--out", str(tmp_path / "out"),
                     "--cache", str(tmp_path / "cache"))
    assert result.returncode == 0, result.stderr
    assert "(the same verdict under 2 root seeds)" in result.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    (claim,) = summary["papers"]["dpdo-nc"]["claims"]
    assert claim["seeds"] == {"count": 2, "agreeing": 2} and summary["papers"]["dpdo-nc"]["provenance"]["seeds"] == 2
    from dpverify.reproductions.report.publish import SCHEMA_FILE

    jsonschema.validate(summary, json.loads(SCHEMA_FILE.read_text()))


def test_seed_contexts_carry_each_seeds_own_experiments():
    from dpverify.theory.execution import CheckContext

    first = CheckContext(root_seed=10, experiments={"e": "seed 10"})
    others = cli._seed_contexts(first, 3, lambda root: {"e": f"seed {root}"})
    assert [(o.root_seed, o.experiments["e"]) for o in others] == [(11, "seed 11"), (12, "seed 12")]
    assert all(o.memo is not first.memo for o in others)
    assert [o.experiments for o in cli._seed_contexts(first, 2)] == [first.experiments]   # check: none run
    assert cli._seed_contexts(first, 1) == []


def test_reproduce_under_several_seeds_reruns_the_experiments(tmp_path):
    """--seeds 2 on one figure: the claims reading it are decided under both root seeds' runs, and only the first
    seed's results are written (the second's are cached)."""
    import json

    out, cache = tmp_path / "out", tmp_path / "cache"
    result = run_cli("reproduce", "dpdo-nc", "--figure", "figure-1", "--seeds", "2", "--out", str(out),
                     "--cache", str(cache))
    assert result.returncode == 0, result.stderr
    record = json.loads((out / "summary.json").read_text())["papers"]["dpdo-nc"]
    claims = {claim["id"]: claim for claim in record["claims"]}
    assert claims["dpdo-nc/sublinear-regret"]["seeds"]["count"] == 2 and record["provenance"]["seeds"] == 2
    (check,) = claims["dpdo-nc/sublinear-regret"]["checks"]
    assert check["values"]["seeds"]["root_seeds"] == [cli.DEFAULT_ROOT_SEED, cli.DEFAULT_ROOT_SEED + 1]
    assert len(list((out / "results").glob("*.parquet"))) == 1


def test_an_experiment_over_the_seed_cpu_limit_runs_under_one_seed_and_its_claims_say_so(tmp_path):
    """--seed-cpu-limit 0: no experiment is cheap enough to repeat, so the claims reading figure-1 rest on the first
    root seed, say which experiment was not repeated, and nothing of the second seed is computed."""
    import json

    out, cache = tmp_path / "out", tmp_path / "cache"
    result = run_cli("reproduce", "dpdo-nc", "--figure", "figure-1", "--seeds", "2", "--seed-cpu-limit", "0",
                     "--out", str(out), "--cache", str(cache))
    assert result.returncode == 0, result.stderr
    assert "dpdo-nc: one root seed only for figure-1 (" in result.stderr
    record = json.loads((out / "summary.json").read_text())["papers"]["dpdo-nc"]
    claim = {claim["id"]: claim for claim in record["claims"]}["dpdo-nc/sublinear-regret"]
    assert claim["seeds"] == {"count": 1, "agreeing": 1, "not_repeated": ["figure-1 or long-horizon"]}
    assert record["provenance"]["seed_cpu_limit"] == 0
    assert len(list(cache.rglob("*.parquet"))) == 1          # figure-1's one task, under the first seed only
    markdown = (out / "dpdo_nc.md").read_text()
    assert "one root seed (figure-1 or long-horizon not repeated: over the CPU limit)" in markdown


def test_a_crashing_check_is_a_harness_error_on_its_claim_and_the_others_go_on(tmp_path):
    import typer

    from dpverify.theory import rules
    from dpverify.theory.claims import Check, Claim, Measurement, Method, Paper, Verdict
    from dpverify.theory.execution import CheckContext

    def broken(context):
        raise ZeroDivisionError("a bug of ours")
    fine = Check("fine", Method.NUMERICAL, lambda context: Measurement("ok", {"holds": True}), rule=rules.exact())
    paper = Paper("toy", "toy", "seed", (Claim("toy/a", "lemma", "L1", "a", "a", (Check("broken", Method.NUMERICAL, broken,
                                                                                      rule=rules.exact()),)),
                                         Claim("toy/b", "lemma", "L2", "b", "b", (fine,))))
    log = tmp_path / cli.HARNESS_LOG
    results = cli._check_claims(paper, None, CheckContext(), log, cli._seed_contexts(CheckContext(), 2))
    assert [r.verdict for r in results] == [Verdict.NOT_RUN, Verdict.CONFIRMED]
    assert results[0].results[0].evidence.summary.startswith("harness error (a bug of dpverify, not a finding): check "
                                                             "'broken' crashed: a bug of ours; traceback in ")
    assert "ZeroDivisionError" in log.read_text() and cli.crashed(results) == ["toy/a"]
    with pytest.raises(typer.Exit) as done:
        cli._finish(results, strict=False)
    assert done.value.exit_code == cli.EXIT_HARNESS_ERROR
