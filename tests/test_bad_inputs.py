"""Bad inputs (issue 16): every user error of the `dpverify` command is exactly one line on stderr in the
project's format (`error: ...`), exit status 2, no traceback, and no file created, changed or removed.

Each case runs in-process (cli.main inside typer's CliRunner isolation, so stdout and stderr are captured
apart), with every entry into a command's work (WORK) made to fail the test, in a scratch folder that is
also the working directory (where the default --cache and --out would land); the folder's every file and
directory (name, size, mtime) is the same before and after. A few cases
run as a real `python -m dpverify` to show that no traceback reaches a terminal.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

import dpverify.algorithms
import dpverify.reproductions
import dpverify.reproductions.verify.command
import dpverify.theory
from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.reproductions import cli
from dpverify.reproductions.report.json_schema import first_violation
from dpverify.reproductions.report.publish import SCHEMA_FILE
from dpverify.theory.audit.auditor import minimum_samples

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "dpdo_nc" / "my_dpdo_nc.py"
TEMPLATE = REPO / "docs" / "paper-template"
TOY = "toy_bad"          # a paper added from the template, with a malformed experiment TOML
MALFORMED_TOML = "[experiment\nid = 'figure-1'\n"   # line 1 opens a table it never closes


@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str, ...]      # "{t}" stands for the scratch folder
    expected: str              # a part of the one error line ("{t}" as in args)


def case(id: str, command: str, expected: str) -> Case:
    return Case(id, tuple(command.split()), expected)


AT_LEAST = "Invalid value for '--samples'"   # below minimum_samples(); typer words the range per version
LEMMA_1 = "check zcdp-nfl --claim lemma-1"
FIGURE_1 = "reproduce zcdp-nfl --figure figure-1"
IMPL = f"verify dpdo-nc --impl {EXAMPLE}:run"
PAIR = "--neighbours {t}/mechanism.py:PAIR"
MECHANISM = f"audit-mechanism {{t}}/mechanism.py:sample --epsilon 1 {PAIR}"

CASES = [
    # ---- the user's report (issue 16)
    case("seed-negative", f"{LEMMA_1} --seed -1", "Invalid value for '--seed'"),
    case("audit-samples-5", "audit zcdp-nfl --samples 5", AT_LEAST),
    case("audit-samples-39", "audit zcdp-nfl --samples 39", AT_LEAST),
    case("cache-is-a-file", f"{LEMMA_1} --cache {{t}}/a-file", "--cache {t}/a-file is a file, not a directory"),
    case("cache-read-only", f"{LEMMA_1} --cache {{t}}/read-only", "--cache {t}/read-only is not writable"),
    case("cache-cannot-be-created", f"{LEMMA_1} --cache {{t}}/a-file/cache",
         "--cache {t}/a-file/cache cannot be created: {t}/a-file is a file"),
    case("out-is-a-file", f"{FIGURE_1} --out {{t}}/a-file", "--out {t}/a-file is a file, not a directory"),
    case("experiment-toml-malformed", "check toy-bad",   # names the file and the line
         f"experiment file {{t}}/toy/reproductions/{TOY}/figure_1.toml: malformed TOML (Expected ']' at the end of a "
         "table declaration (at line 1, column 12))"),
    case("report-not-json", "report --out {t}/not-json", "cannot read a report summary from {t}/not-json/summary.json"),
    case("report-wrong-shape", "report --out {t}/wrong-shape", "(top level): [1, 2] is not of type 'object'"),
    case("report-missing-field", "report --out {t}/missing-field", "papers/zcdp-nfl: 'claims' is a required property"),
    case("report-schema-version", "report --out {t}/old-schema", "schema_version: '0.9' is not one of"),
    case("bad-cache-before-the-first-task", f"{FIGURE_1} --out {{t}}/out --cache {{t}}/a-file",
         "--cache {t}/a-file is a file"),
    # ---- the command line itself
    case("unknown-command", "frobnicate", "No such command 'frobnicate'"),
    case("unknown-option", "check --frobnicate", "No such option: --frobnicate"),
    case("list-unknown-paper", "list no-such-paper", "unknown paper 'no-such-paper'"),
    # ---- check
    case("check-unknown-paper", "check no-such-paper", "unknown paper 'no-such-paper'; known papers: dp-recal"),
    case("check-unknown-claim", "check zcdp-nfl --claim lemma-99", "unknown claim 'lemma-99' for paper 'zcdp-nfl'"),
    case("check-claim-without-paper", "check --claim lemma-1", "--claim needs a PAPER argument"),
    case("check-jobs-0", f"{LEMMA_1} --jobs 0", "Invalid value for '--jobs'"),
    case("check-profile", f"{LEMMA_1} --profile huge", "Invalid value for '--profile'"),
    case("check-seeds-0", f"{LEMMA_1} --seeds 0", "Invalid value for '--seeds'"),
    case("check-seed-not-a-number", f"{LEMMA_1} --seed one", "Invalid value for '--seed'"),
    case("check-out-is-a-file", f"{LEMMA_1} --out {{t}}/a-file", "--out {t}/a-file is a file"),
    case("check-out-in-read-only", f"{LEMMA_1} --out {{t}}/read-only/out",
         "--out {t}/read-only/out cannot be created: {t}/read-only is not writable"),
    case("check-out-holds-a-damaged-summary", f"{LEMMA_1} --out {{t}}/not-json",
         "cannot read a report summary from {t}/not-json/summary.json"),
    case("check-baseline-missing", f"{LEMMA_1} --baseline {{t}}/nothing.json",
         "cannot read a report summary from {t}/nothing.json: No such file or directory"),
    case("check-baseline-not-json", f"{LEMMA_1} --baseline {{t}}/not-json/summary.json", "Expecting"),
    case("check-baseline-wrong-schema", f"{LEMMA_1} --baseline {{t}}/missing-field/summary.json",
         "'claims' is a required property"),
    case("check-baseline-is-a-directory", f"{LEMMA_1} --baseline {{t}}", "Is a directory"),
    case("check-junit-onto-a-directory", f"{LEMMA_1} --junit {{t}}", "--junit {t} is a directory; expected a file"),
    case("check-junit-inside-a-file", f"{LEMMA_1} --junit {{t}}/a-file/junit.xml",
         "the directory of --junit {t}/a-file is a file, not a directory"),
    case("check-junit-in-read-only", f"{LEMMA_1} --junit {{t}}/read-only/junit.xml",
         "the directory of --junit {t}/read-only is not writable"),
    # ---- reproduce
    case("reproduce-unknown-paper", "reproduce no-such-paper", "unknown paper 'no-such-paper'"),
    case("reproduce-unknown-figure", "reproduce zcdp-nfl --figure figure-9", "unknown figure/experiment 'figure-9'"),
    case("reproduce-figure-without-paper", "reproduce --figure figure-1", "--figure needs a PAPER argument"),
    case("reproduce-seeds-0", f"{FIGURE_1} --seeds 0", "Invalid value for '--seeds'"),
    case("reproduce-dask-without-scheduler", f"{FIGURE_1} --backend dask", "--backend dask needs --scheduler"),
    case("reproduce-sweep-without-paper", "reproduce --sweep figure-1/rho",
         "--sweep 'figure-1/rho' needs a PAPER argument, or its paper named as PAPER:EXPERIMENT/PARAM"),
    case("reproduce-sweep-unknown-paper", "reproduce --sweep no-such:figure-1/rho",
         "--sweep 'no-such:figure-1/rho': unknown paper 'no-such'"),
    case("reproduce-sweep-other-paper", "reproduce zcdp-nfl --sweep dpdo-nc:figure-1/window",
         "--sweep 'dpdo-nc:figure-1/window' names paper 'dpdo-nc', but this run is of 'zcdp-nfl'"),
    case("reproduce-sweep-unknown-experiment", "reproduce zcdp-nfl --sweep figure-9/rho",
         "--sweep 'figure-9/rho': expected EXPERIMENT/PARAM with EXPERIMENT one of paper 'zcdp-nfl''s experiments"),
    case("reproduce-sweep-paper-value", "reproduce zcdp-nfl --sweep figure-1/num_agents",
         "--sweep 'figure-1/num_agents': 'num_agents' is the paper's value; free defaults of figure-1"),
    case("reproduce-sweep-profile-size", "reproduce zcdp-nfl --sweep figure-1/instances",
         "'instances' is the quick profile's size, not a choice of meaning"),
    case("check-sweep-derived", "check zcdp-nfl --sweep figure-1/learning_rate", "'learning_rate' is derived"),
    case("reproduce-scheduler-without-dask", f"{FIGURE_1} --scheduler tcp://127.0.0.1:1",
         "--scheduler is only used with --backend dask"),
    case("reproduce-unknown-backend", f"{FIGURE_1} --backend spark", "Invalid value for '--backend'"),
    case("reproduce-profile", f"{FIGURE_1} --profile huge", "Invalid value for '--profile'"),
    case("reproduce-jobs-0", f"{FIGURE_1} --jobs 0", "Invalid value for '--jobs'"),
    case("reproduce-seed-negative", f"{FIGURE_1} --seed -3", "Invalid value for '--seed'"),
    case("reproduce-baseline-damaged", f"{FIGURE_1} --baseline {{t}}/old-schema/summary.json", "schema_version"),
    case("reproduce-out-holds-a-damaged-summary", f"{FIGURE_1} --out {{t}}/wrong-shape", "is not of type 'object'"),
    case("reproduce-cache-read-only", f"{FIGURE_1} --cache {{t}}/read-only", "--cache {t}/read-only is not writable"),
    case("reproduce-junit-onto-a-directory", f"{FIGURE_1} --junit {{t}}", "--junit {t} is a directory"),
    # ---- --data-dir (issue 34): never a silent fall-back to the other places datasets are looked up
    case("data-dir-missing", f"{LEMMA_1} --data-dir {{t}}/nowhere",
         "error: --data-dir {t}/nowhere does not exist; expected an existing directory"),
    case("data-dir-is-a-file", f"{FIGURE_1} --data-dir {{t}}/a-file",
         "error: --data-dir {t}/a-file is a file, not a directory"),
    case("audit-data-dir-missing", "audit zcdp-nfl --data-dir {t}/nowhere",
         "error: --data-dir {t}/nowhere does not exist; expected an existing directory"),
    # ---- verify
    case("verify-without-paper", f"verify --impl {EXAMPLE}:run", "Missing argument"),
    case("verify-without-impl", "verify dpdo-nc", "Missing option '--impl'"),
    case("verify-unknown-paper", f"verify no-such-paper --impl {EXAMPLE}:run", "unknown paper 'no-such-paper'"),
    case("verify-impl-missing-module", "verify dpdo-nc --impl no_such_module_of_dpverify:run",
         "cannot import 'no_such_module_of_dpverify': ModuleNotFoundError"),
    case("verify-impl-missing-file", "verify dpdo-nc --impl {t}/nothing.py:run", "no file {t}/nothing.py"),
    case("verify-impl-missing-attribute", "verify dpdo-nc --impl {t}/impl.py:missing", "has no attribute 'missing'"),
    case("verify-impl-not-callable", "verify dpdo-nc --impl {t}/impl.py:NOT_CALLABLE", "is a int, not a callable"),
    case("verify-impl-without-colon", "verify dpdo-nc --impl my_dpdo_nc", "expected module:object"),
    case("verify-impl-fails-to-import", "verify dpdo-nc --impl {t}/broken.py:run",
         "cannot import '{t}/broken.py': ZeroDivisionError"),
    case("verify-noise", f"{IMPL} --noise loud", "noise must be one of tape, own; got 'loud'"),
    case("verify-unknown-check", f"{IMPL} --checks exact,speed", "unknown check(s) speed"),
    case("verify-claim-and-no-claims", f"{IMPL} --claim figure-1 --no-claims", "contradicts --no-claims"),
    case("verify-claim-not-rerun", f"{IMPL} --checks exact --claim lemma-2", "not a claim verify re-runs"),
    case("verify-cache-is-a-file", f"{IMPL} --cache {{t}}/a-file", "--cache {t}/a-file is a file"),
    case("verify-jobs-0", f"{IMPL} --jobs 0", "Invalid value for '--jobs'"),
    case("verify-profile", f"{IMPL} --profile huge", "Invalid value for '--profile'"),
    # ---- audit
    case("audit-unknown-paper", "audit no-such-paper", "unknown paper 'no-such-paper'"),
    case("audit-unknown-claim", "audit zcdp-nfl --claim lemma-99", "unknown claim 'lemma-99'"),
    case("audit-claim-without-audit", "audit dpdo-nc --claim lemma-2", "dpdo-nc/lemma-2 has no audit"),
    case("audit-confidence-above-1", "audit zcdp-nfl --confidence 1.5", "--confidence must lie in (0, 1); got 1.5"),
    case("audit-confidence-0", "audit zcdp-nfl --confidence 0", "--confidence must lie in (0, 1); got 0.0"),
    case("audit-profile", "audit zcdp-nfl --profile huge", "Invalid value for '--profile'"),
    case("audit-seed-negative", "audit zcdp-nfl --seed -2", "Invalid value for '--seed'"),
    # ---- audit-mechanism
    case("mechanism-samples-below-the-minimum", f"{MECHANISM} --samples {minimum_samples() - 1}", AT_LEAST),
    case("mechanism-without-epsilon", f"audit-mechanism {{t}}/mechanism.py:sample {PAIR}",
         "Missing option '--epsilon'"),
    case("mechanism-epsilon-negative", f"{MECHANISM.replace('--epsilon 1', '--epsilon -1')}", "epsilon must be"),
    case("mechanism-epsilon-nan", f"{MECHANISM.replace('--epsilon 1', '--epsilon nan')}", "epsilon must be a finite"),
    case("mechanism-delta-above-1", f"{MECHANISM} --delta 1.5", "delta must lie in [0, 1)"),
    case("mechanism-delta-negative", f"{MECHANISM} --delta -0.1", "delta must be >= 0; got -0.1"),
    case("mechanism-seed-negative", f"{MECHANISM} --seed -1", "Invalid value for '--seed'"),
    case("mechanism-confidence", f"{MECHANISM} --confidence 2", "--confidence must lie in (0, 1); got 2.0"),
    case("mechanism-missing-file", f"audit-mechanism {{t}}/nothing.py:sample --epsilon 1 {PAIR}",
         "no file {t}/nothing.py"),
    case("mechanism-not-callable", f"audit-mechanism {{t}}/mechanism.py:PAIR --epsilon 1 {PAIR}",
         "is a tuple, not a callable"),
    case("mechanism-neighbours-missing", "audit-mechanism {t}/mechanism.py:sample --epsilon 1 "
         "--neighbours {t}/mechanism.py:NOWHERE", "has no attribute 'NOWHERE'"),
    case("mechanism-neighbours-not-a-pair", "audit-mechanism {t}/mechanism.py:sample --epsilon 1 "
         "--neighbours {t}/mechanism.py:NOT_A_PAIR",
         "neighbours must be a pair (d0, d1) or an iterable of pairs; got int"),
    # ---- report
    case("report-no-summary", "report --out {t}/empty", "no {t}/empty/summary.json to render"),
    case("report-out-missing", "report --out {t}/nowhere", "no {t}/nowhere/summary.json to render"),
    case("report-no-papers", "report --out {t}/no-papers", "(top level): 'papers' is a required property"),
    case("report-out-is-a-file", "report --out {t}/a-file", "--out {t}/a-file is a file"),
    case("report-out-read-only", "report --out {t}/read-only-report", "--out {t}/read-only-report is not writable"),
    case("report-summary-is-a-directory", "report --out {t}/summary-is-a-directory", "Is a directory"),
    case("report-claim-verdict-unknown", "report --out {t}/bad-verdict",
         "papers/zcdp-nfl/claims/0/verdict: 'maybe' is not one of"),
    # ---- compare
    case("compare-baseline-missing", "compare {t}/nothing.json {t}/good.json", "No such file or directory"),
    case("compare-current-missing", "compare {t}/good.json {t}/nothing.json", "{t}/nothing.json"),
    case("compare-default-current-missing", "compare {t}/good.json", "reports/summary.json: No such file"),
    case("compare-baseline-damaged", "compare {t}/wrong-shape/summary.json {t}/good.json", "is not of type 'object'"),
    case("compare-tolerance-negative", "compare {t}/good.json {t}/good.json --tolerance -1",
         "Invalid value for '--tolerance'"),
    case("compare-without-baseline", "compare", "Missing argument"),
    # ---- bench (its options; the command itself is being rewritten elsewhere)
    case("bench-replicas-0", "bench --replicas 0", "Invalid value for '--replicas'"),
    case("bench-iterations-0", "bench --iterations -5", "Invalid value for '--iterations'"),
]


# ------------------------------------------------------------------------------------------ the scratch folder
def _valid_summary() -> dict:
    """One paper with one claim of the committed report (a real summary, small)."""
    committed = json.loads((REPO / "reports" / "summary.json").read_text())
    paper = committed["papers"]["zcdp-nfl"]
    return {"schema_version": committed["schema_version"],
            "papers": {"zcdp-nfl": {**paper, "claims": paper["claims"][:1], "figures": [], "constants": []}}}


def _toy_paper(root: Path) -> None:
    """A paper added from docs/paper-template (its three rooms), whose experiment TOML is malformed."""
    for floor in ("algorithms", "theory", "reproductions"):
        room = root / floor / TOY
        shutil.copytree(TEMPLATE / floor / "my_paper", room)
        for source in room.rglob("*.*"):
            source.write_text(source.read_text().replace("my_paper", TOY).replace("my-paper", "toy-bad"))
    (root / "reproductions" / TOY / "figure_1.toml").write_text(MALFORMED_TOML)


def _read_only(path: Path) -> bool:
    """Make a directory read-only to this process: chmod, and for root (whom chmod does not stop) the immutable
    attribute. False when neither works here."""
    path.chmod(0o500)
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
    return not os.access(path, os.W_OK)


def _writable_again(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)
    path.chmod(0o700)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    t = tmp_path_factory.mktemp("bad-inputs")
    (t / "a-file").write_text("not a directory\n")
    summary = _valid_summary()
    (t / "good.json").write_text(json.dumps(summary))
    damaged = {"not-json": '{"papers": ', "wrong-shape": "[1, 2]",
               "missing-field": {**summary, "papers": {"zcdp-nfl": {
                   key: value for key, value in summary["papers"]["zcdp-nfl"].items() if key != "claims"}}},
               "old-schema": {**summary, "schema_version": "0.9"},
               "no-papers": {"schema_version": summary["schema_version"]},
               "bad-verdict": json.loads(json.dumps(summary))}
    damaged["bad-verdict"]["papers"]["zcdp-nfl"]["claims"][0]["verdict"] = "maybe"
    for name, content in damaged.items():
        (t / name).mkdir()
        (t / name / "summary.json").write_text(content if isinstance(content, str) else json.dumps(content))
    (t / "empty").mkdir()
    (t / "summary-is-a-directory" / "summary.json").mkdir(parents=True)
    (t / "read-only-report").mkdir()
    (t / "read-only-report" / "summary.json").write_text(json.dumps(summary))
    (t / "impl.py").write_text("NOT_CALLABLE = 3\n\n\ndef run(setting, rng):\n    return None\n")
    (t / "broken.py").write_text("1 / 0\n")
    (t / "mechanism.py").write_text("PAIR = (0.0, 1.0)\nNOT_A_PAIR = 5\n\n\ndef sample(dataset, n, rng):\n"
                                    "    raise AssertionError('the mechanism ran before the inputs were checked')\n\n\n"
                                    "def no_pair():\n    return {}['d0']\n")
    _toy_paper(t / "toy")
    (t / "read-only").mkdir()
    read_only = [t / "read-only", t / "read-only-report"]
    writable = [path for path in read_only if not _read_only(path)]
    yield t, not writable
    for path in read_only:
        _writable_again(path)


def snapshot(root: Path) -> dict[str, tuple]:
    """Every file and directory under root: kind, size, mtime (a directory's mtime moves when an entry is
    created or removed in it, even a temporary one)."""
    found = {}
    for path in [root, *root.rglob("*")]:
        status = path.lstat()
        found[str(path.relative_to(root))] = (path.is_dir(), status.st_size, status.st_mtime_ns)
    return found


@pytest.fixture
def toy_paper_installed(scratch, monkeypatch):
    """The toy paper's rooms on the package's search paths: the same discovery as a room added to the tree."""
    t, _ = scratch
    for package in (dpverify.algorithms, dpverify.theory, dpverify.reproductions):
        floor = package.__name__.rsplit(".", 1)[1]
        monkeypatch.setattr(package, "__path__", [*package.__path__, str(t / "toy" / floor)])
    yield
    for name in [name for name in sys.modules if f".{TOY}" in name]:
        del sys.modules[name]


# where each command's work starts: a case that reaches one of them was not stopped before its work
WORK = [("dpverify.reproductions.run.runner", "Runner.__call__"), ("dpverify.reproductions.cli", "_check_claims"),
        ("dpverify.reproductions.cli", "evaluate"), ("dpverify.reproductions.verify.command", "evaluate")]
# (audit-mechanism's work is running the mechanism: the scratch one fails the test if it is ever called)


def forbid_work(monkeypatch) -> None:
    def started(*args, **kwargs):
        raise AssertionError("work started before the inputs were checked")
    for module, name in WORK:
        owner, _, attribute = name.rpartition(".")
        target = sys.modules[module] if not owner else getattr(sys.modules[module], owner)
        monkeypatch.setattr(target, attribute, started)


def run_in_process(args: list[str], cwd: Path, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    # importing a user's module would leave Python's own __pycache__ beside it: not a write of dpverify's
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    with CliRunner().isolation() as (stdout, stderr, _):
        try:
            cli.main(args)
            status = 0
        except SystemExit as done:
            status = done.code
        sys.stdout.flush(), sys.stderr.flush()
        return status, stdout.getvalue().decode(), stderr.getvalue().decode()


def assert_one_line_user_error(status: int, stdout: str, stderr: str, expected: str) -> None:
    assert status == cli.EXIT_USER_ERROR, (status, stdout, stderr)
    assert "Traceback" not in stderr + stdout
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert expected in lines[0], lines[0]


@pytest.mark.parametrize("bad", CASES, ids=[c.id for c in CASES])
def test_a_bad_input_is_one_line_exit_2_and_changes_no_file(bad, scratch, monkeypatch, request):
    t, read_only_works = scratch
    args = [arg.replace("{t}", str(t)) for arg in bad.args]
    if "read-only" in " ".join(args) and not read_only_works:
        pytest.skip("running as root without chattr +i here: no directory is read-only to this process")
    if bad.id == "experiment-toml-malformed":
        request.getfixturevalue("toy_paper_installed")
    forbid_work(monkeypatch)
    before = snapshot(t)
    status, stdout, stderr = run_in_process(args, t, monkeypatch)
    assert_one_line_user_error(status, stdout, stderr, bad.expected.replace("{t}", str(t)))
    assert snapshot(t) == before


def test_the_corpus_covers_every_command():
    commands = {c.args[0] for c in CASES}
    assert commands >= {"list", "check", "reproduce", "verify", "audit", "audit-mechanism", "report", "bench",
                        "compare"}
    assert len(CASES) >= 60 and len({c.id for c in CASES}) == len(CASES)


# -------------------------------------------------------------------------- the same through a real terminal
def test_no_traceback_reaches_a_real_terminal(scratch):
    """Three of the cases as `python -m dpverify` (a usage error, a damaged summary, a bad --cache before the
    first task), run side by side."""
    t, _ = scratch
    chosen = [c for c in CASES if c.id in ("seed-negative", "report-missing-field", "bad-cache-before-the-first-task")]
    before = snapshot(t)
    processes = [subprocess.Popen([sys.executable, "-m", "dpverify", *(a.replace("{t}", str(t)) for a in c.args)],
                                  cwd=t, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}) for c in chosen]
    for bad, process in zip(chosen, processes):
        stdout, stderr = process.communicate(timeout=120)
        assert_one_line_user_error(process.returncode, stdout, stderr, bad.expected.replace("{t}", str(t)))
    assert snapshot(t) == before


# -------------------------------------------------------------------------- the rules behind the messages
def test_the_summary_check_names_where_a_summary_breaks_the_schema(scratch):
    t, _ = scratch
    schema = json.loads(SCHEMA_FILE.read_text())
    committed = json.loads((REPO / "reports" / "summary.json").read_text())
    assert first_violation(committed, schema) is None
    where = {"missing-field": "papers/zcdp-nfl", "old-schema": "schema_version", "bad-verdict": "papers/zcdp-nfl/claims/0/verdict",
             "wrong-shape": "(top level)", "no-papers": "(top level)"}
    for name, path in where.items():
        damaged = json.loads((t / name / "summary.json").read_text())
        assert first_violation(damaged, schema).startswith(f"{path}: "), name


def test_the_minimum_sample_count_runs_every_score():
    """The command's floor (minimum_samples) is enough for a fitted score, the auditor's most demanding."""
    import numpy as np

    from dpverify.theory.audit import PrivacyClaim, audit

    def gaussian_vectors(dataset, n, rng):
        return dataset + rng.standard_normal((n, 2))

    pair = (np.zeros(2), np.ones(2))
    result = audit(gaussian_vectors, pair, PrivacyClaim(epsilon=1.0), samples=minimum_samples(), score="lda", rng=0)
    assert result.samples_per_side == minimum_samples()
    with pytest.raises(InvalidParameterError, match="each needs at least"):
        audit(gaussian_vectors, pair, PrivacyClaim(epsilon=1.0), samples=minimum_samples() - 2, score="lda", rng=0)


# -------------------------------------------------------------------------- experiment TOML, at the loader
TOML_HEAD = "[experiment]\nid = 'figure-1'\ntitle = 't'\nseed_line = 'L1'\npaper_says = 's'\n"


@pytest.mark.parametrize("text, expected", [
    ("[experiment]\nid = 'x'\n", "{path}: missing table 'parameters'"),
    ("[parameters.a]\nvalue = 1\nsource = 'paper'\nline = 'L1'\n", "{path}: missing table 'experiment'"),
    ("[experiment]\nid = 'x'\n[parameters]\n", "{path}, line 1: [experiment] lacks title, seed_line, paper_says"),
    (TOML_HEAD + "[parameters.a]\nsource = 'paper'\nline = 'L1'\n",
     "{path}, line 6: parameter 'a' must be a table [parameters.a] with a value"),
    (TOML_HEAD + "[parameters]\na = 3\n", "{path}: parameter 'a' must be a table [parameters.a] with a value"),
    (TOML_HEAD + "\n[parameters.a]\nvalue = 1\nsource = 'paper'\n",
     "{path}, line 7: parameter 'a' must say source = 'paper' with a seed line"),
    (TOML_HEAD + "[parameters]\n[profiles.quick]\nb = 2\n", "{path}, line 7: profile 'quick' overrides undeclared"),
    ("profiles = 3\n" + TOML_HEAD + "[parameters]\n", "{path}, line 1: expected a table [profiles.quick] of overrides"),
    (TOML_HEAD + "[parameters]\n[profiles]\nquick = 3\n", "{path}: expected a table [profiles.quick] of overrides"),
    ("a = 1\nb = = 2\n", "{path}: malformed TOML (Invalid value (at line 2, column 5))"),
    # a default says how far our choice reaches (range, alternatives or derived), and lies inside its own range
    (TOML_HEAD + "\n[parameters.a]\nvalue = 1\nsource = 'default'\nwhy = 'w'\n",
     "{path}, line 7: default 'a' needs exactly one of range = [low, high], alternatives = [...] (each with range_why) "
     "or derived = '...'; got none"),
    (TOML_HEAD + "[parameters.a]\nvalue = 1\nsource = 'default'\nwhy = 'w'\nrange = [0, 2]\nderived = 'd'\n",
     "{path}, line 6: default 'a' needs exactly one of range = [low, high], alternatives = [...] (each with range_why) "
     "or derived = '...'; got range, derived"),
    (TOML_HEAD + "[parameters.a]\nvalue = 3\nsource = 'default'\nwhy = 'w'\nrange = [0, 2]\nrange_why = 'r'\n",
     "{path}, line 6: default 'a' = 3 lies outside its own range [0, 2]"),
    (TOML_HEAD + "[parameters.a]\nvalue = 1\nsource = 'default'\nwhy = 'w'\nrange = [2, 0]\nrange_why = 'r'\n",
     "{path}, line 6: default 'a': range must be [low, high], two numbers with low < high; got [2, 0]"),
    (TOML_HEAD + "[parameters.a]\nvalue = 1\nsource = 'default'\nwhy = 'w'\nrange = [0, 2]\n",
     "{path}, line 6: default 'a': range needs range_why"),
    (TOML_HEAD + "[parameters.a]\nvalue = 'x'\nsource = 'default'\nwhy = 'w'\nalternatives = ['y', 'z']\n"
     "range_why = 'r'\n", "{path}, line 6: default 'a' = 'x' is not among its own alternatives ['y', 'z']"),
    (TOML_HEAD + "[parameters.a]\nvalue = 'x'\nsource = 'default'\nwhy = 'w'\nalternatives = ['x']\nrange_why = 'r'\n",
     "{path}, line 6: default 'a': alternatives must list at least two distinct values; got ['x']"),
    (TOML_HEAD + "[parameters.a]\nvalue = 1\nsource = 'paper'\nline = 'L1'\nrange = [0, 2]\n",
     "{path}, line 6: parameter 'a' is the paper's value; it takes no range"),
    (b"\xff\xfe", "{path}: cannot read it"),
])
def test_every_fault_of_an_experiment_toml_names_the_file_and_its_line(text, expected, tmp_path):
    from dpverify.reproductions.run.params import load_experiment

    path = tmp_path / "figure_1.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(InvalidParameterError) as raised:
        load_experiment(path, "quick")
    assert str(raised.value).startswith("experiment file " + expected.format(path=path)), str(raised.value)


# -------------------------------------------------------------------------- --data-dir unreadable (issue 34)
def test_an_unreadable_data_dir_is_one_line_exit_2(tmp_path, monkeypatch):
    from dpverify.reproductions import inputs

    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o000)
    if os.access(locked, os.R_OK | os.X_OK):   # root reads it anyway: deny it to the check as chmod would
        allowed = os.access
        monkeypatch.setattr(inputs.os, "access", lambda path, mode: Path(path) != locked and allowed(path, mode))
    forbid_work(monkeypatch)
    before = snapshot(tmp_path)
    status, stdout, stderr = run_in_process([*LEMMA_1.split(), "--data-dir", str(locked)], tmp_path, monkeypatch)
    locked.chmod(0o700)
    assert_one_line_user_error(status, stdout, stderr, f"error: --data-dir {locked} is not readable; expected a "
                               "directory this process can list and read")
    assert snapshot(tmp_path) == before


# -------------------------------------------------------------------------- experiment values: types and signs
# (issue 34) A value of the wrong type or sign in a real experiment's TOML, as a user edits it in place, is one line
# naming the file, the line, the key (with its profile section) and what was expected, before any work: the file
# is a copy of dpdo-nc's figure-2 TOML in the scratch folder, installed as that experiment's file.
FIGURE_2_TOML = REPO / "reproductions" / "dpdo_nc" / "figure_2_nodes.toml"
SCHEMA = "(reproductions/run/parameters.schema.json)"
BAD_VALUES = {   # case -> (the committed text, the user's edit, the error after "experiment file FILE, ")
    "horizon-a-string": ("value = 500", 'value = "500"',
                         f"line 17: parameter 'horizon' must be an integer >= 1 {SCHEMA}; got \"500\""),
    "num-agents-6.5": ("value = 6\n", "value = 6.5\n",
                       f"line 7: parameter 'num_agents' must be an integer >= 1 {SCHEMA}; got 6.5"),
    "radius-true": ("value = 3.0\n", "value = true\n",
                    f"line 22: parameter 'radius' must be a number >= 0 {SCHEMA}; got true"),
    "horizon-negative": ("value = 500", "value = -5",
                         f"line 17: parameter 'horizon' must be an integer >= 1 {SCHEMA}; got -5"),
    "quick-runs-0": ("runs = 50", "runs = 0",
                     f"line 120: [profiles.quick] runs must be an integer >= 1 {SCHEMA}; got 0"),
    "alternative-negative": ("alternatives = [1, 2, 3]", "alternatives = [1, 2, -3]",
                             f"line 85: parameter 'data_seed' (alternatives) must be an integer >= 0 {SCHEMA}; got -3"),
}


@pytest.mark.parametrize("command", ["check dpdo-nc --claim theorem-1", "reproduce dpdo-nc --figure figure-1"])
@pytest.mark.parametrize("bad", BAD_VALUES)
def test_a_toml_value_of_the_wrong_type_or_sign_is_one_line_exit_2(bad, command, scratch, monkeypatch):
    from dataclasses import replace

    from dpverify.reproductions.dpdo_nc import experiments as dpdo_nc

    t, _ = scratch
    committed, edited, expected = BAD_VALUES[bad]
    path = t / "toml" / bad / FIGURE_2_TOML.name
    if not path.exists():   # before the snapshot: the user's file is there before the command runs
        assert FIGURE_2_TOML.read_text().count(committed) >= 1
        path.parent.mkdir(parents=True)
        path.write_text(FIGURE_2_TOML.read_text().replace(committed, edited, 1))
    monkeypatch.setattr(dpdo_nc, "EXPERIMENTS", [replace(e, config_file=path) if e.id == "figure-2" else e
                                                 for e in dpdo_nc.EXPERIMENTS])
    forbid_work(monkeypatch)
    before = snapshot(t)
    status, stdout, stderr = run_in_process(command.split(), t, monkeypatch)
    assert_one_line_user_error(status, stdout, stderr, expected)
    assert stderr == f"error: experiment file {path}, {expected}\n"
    assert snapshot(t) == before


def test_the_committed_schema_is_the_one_the_committed_toml_files_give():
    """parameters.schema.json is derived, not hand-written: a TOML change of a key's type or sign (or a new key)
    regenerates it (experiments.write_parameter_schema) in the same commit."""
    from dpverify.reproductions.run.experiments import derived_parameter_schema
    from dpverify.reproductions.run.params import parameter_schema

    assert derived_parameter_schema() == parameter_schema(), \
        "run: python -c 'from dpverify.reproductions.run.experiments import write_parameter_schema as w; w()'"
    assert parameter_schema()["dpdo-nc/figure-2"]["horizon"] == {"sign": "positive", "type": ["integer"]}


def test_the_schema_rules():
    from dpverify.reproductions.run.params import conforms, describe, rule_of

    count, real, seed = rule_of([500, 50], "horizon"), rule_of([3.0, 2], "radius"), rule_of([7], "data_seed")
    assert (describe(count), describe(real), describe(seed)) == ("an integer >= 1", "a number >= 0", "an integer >= 0")
    assert conforms(0.0, real) and conforms(0, seed) and not conforms(-1, seed)   # no noise; seed 0
    assert conforms(7, count) and conforms(2, real)   # an integer where a float is expected
    for wrong in (True, 6.0, 0, -5, "500"):           # a boolean is no integer; 6.0 is no integer either
        assert not conforms(wrong, count), wrong
    for wrong in (True, -0.5, float("nan"), float("inf"), "3"):
        assert not conforms(wrong, real), wrong
    either = rule_of(["all", 1000])                   # dp-recal's samples_per_agent
    assert describe(either) == "an integer >= 1 or a string" and conforms("all", either) and not conforms(0, either)
    snapshots = rule_of([[0, 5, 10]])
    assert describe(snapshots) == "a list (each item an integer >= 0)"
    assert conforms([0, 3], snapshots) and not conforms([0, -3], snapshots) and not conforms(3, snapshots)
    assert describe(rule_of([-0.1])) == "a number" and conforms(0.5, rule_of([-0.1]))   # kappa: no sign to keep
