"""A rerun that is fast, streamed and stable (issue 16, items 5-6), through the command as a user runs it:
- verdicts stream: with stdout a pipe (a CI log), each claim's line is printed when it is decided, between
  the plain progress lines, not after the run;
- claim checks are cached: a second identical `check` measures no check; another seed measures again;
- a warm `reproduce` into another directory writes byte-identical files except the one stamp: the line
  `"run": {"generated": ...}` of summary.json and the line `<p class='note'>generated ...</p>` of index.html
  (when, and what the run computed)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from dpverify.theory.papers import get_paper

VERDICT_LINE = re.compile(r"^dpdo-nc/\S+\s+(confirmed|refuted|inconclusive|not-run)\s")
PROGRESS_LINE = re.compile(r"^dpdo-nc claims \d+/\d+, elapsed \d+:\d\d(, about \d+:\d\d left)?$")
STAMP_LINES = {"summary.json": re.compile(r'^  "run": \{"generated": "[0-9T:+-]+", .*\},$'),
               "index.html": re.compile(r"^<p class='note'>generated [0-9T:+-]+; .*</p>$")}


def dpverify(*args):
    return subprocess.run([sys.executable, "-m", "dpverify", *args], capture_output=True, text=True, timeout=900)


def test_verdicts_stream_into_a_pipe_and_a_rerun_measures_no_check(tmp_path):
    cache = tmp_path / "cache"
    process = subprocess.Popen([sys.executable, "-m", "dpverify", "check", "dpdo-nc", "--cache", str(cache), "--out",
                                str(tmp_path / "first")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "DPVERIFY_PROGRESS_SECONDS": "0.2"})   # a progress line every 0.2 s
    lines, running_at_first_verdict = [], None
    for line in process.stdout:                   # read as the process writes
        lines.append(line.rstrip("\n"))
        if running_at_first_verdict is None and VERDICT_LINE.match(lines[-1]):
            running_at_first_verdict = process.poll() is None
    assert process.wait() == 0, "\n".join(lines)
    assert running_at_first_verdict is True
    verdicts = [i for i, line in enumerate(lines) if VERDICT_LINE.match(line)]
    progress = [i for i, line in enumerate(lines) if PROGRESS_LINE.match(line)]
    done = next(i for i, line in enumerate(lines) if re.match(r"^dpdo-nc claims (\d+)/\1, done in \d+:\d\d$", line))
    start = lines.index(f"dpdo-nc claims 0/{len(verdicts)}")
    assert start < verdicts[0] < verdicts[-1] < done and len(verdicts) == len(get_paper("dpdo-nc").claims)
    assert progress and start < progress[0] and progress[-1] < done

    again = dpverify("check", "dpdo-nc", "--cache", str(cache), "--out", str(tmp_path / "again"))
    assert again.returncode == 0, again.stderr
    first, second = (json.loads((tmp_path / name / "summary.json").read_text()) for name in ("first", "again"))
    assert first["run"]["checks_computed"]["dpdo-nc"] > 0 and second["run"]["checks_computed"] == {"dpdo-nc": 0}
    assert second["run"]["tasks_computed"] == {"dpdo-nc": 0}
    assert second["papers"]["dpdo-nc"]["claims"] == first["papers"]["dpdo-nc"]["claims"]

    other_seed = dpverify("check", "dpdo-nc", "--claim", "gradient-bound", "--seed", "1", "--cache", str(cache),
                          "--out", str(tmp_path / "seed-1"))
    assert other_seed.returncode == 0, other_seed.stderr
    assert json.loads((tmp_path / "seed-1" / "summary.json").read_text())["run"]["checks_computed"] == {"dpdo-nc": 1}


def without_stamp(path: Path) -> list[str]:
    lines = path.read_text().splitlines()
    stamp = STAMP_LINES[path.name]
    assert sum(bool(stamp.match(line)) for line in lines) == 1, f"{path} has not exactly one stamp line"
    return [line for line in lines if not stamp.match(line)]


def test_a_warm_reproduce_changes_no_file_but_the_stamp(tmp_path):
    cache = tmp_path / "cache"
    outs = [tmp_path / name for name in ("cold", "warm")]
    for out in outs:
        run = dpverify("reproduce", "dpdo-nc", "--figure", "figure-2", "--cache", str(cache), "--out", str(out))
        assert run.returncode == 0, run.stderr
    cold, warm = ({p.relative_to(out): p for p in sorted(out.rglob("*")) if p.is_file()} for out in outs)
    assert sorted(cold) == sorted(warm)
    assert {str(p) for p in cold} == {"summary.json", "index.html", "dpdo_nc.md", "results/dpdo-nc__figure-2__quick.parquet",
                                      "figures/dpdo-nc__figure-2__quick__regret.png"}
    for name, path in cold.items():
        if str(name) in STAMP_LINES:
            assert without_stamp(path) == without_stamp(warm[name]), name
        else:
            assert path.read_bytes() == warm[name].read_bytes(), name
    run = json.loads((outs[1] / "summary.json").read_text())["run"]
    assert run["checks_computed"] == {"dpdo-nc": 0} and run["tasks_computed"] == {"dpdo-nc": 0}
