"""Claim checks cached like tasks (reproductions/run/check_cache.py): a second identical run measures no check and
returns the same result; the seed, the profile, a parameter, an experiment's results or the implementation
under test give a new key; a corrupt entry is quarantined and recomputed; crashes and not-run checks are never
stored. Plain progress lines for a log (reproductions/run/progress.py)."""

import json

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from dpverify.reproductions.run import progress as progress_module  # noqa: E402
from dpverify.reproductions.run.check_cache import SUFFIX, CheckCache  # noqa: E402
from dpverify.reproductions.run.progress import Progress  # noqa: E402
from dpverify.theory import rules  # noqa: E402
from dpverify.theory.claims import Check, CheckCrashed, Claim, Measurement, Method, Verdict  # noqa: E402
from dpverify.theory.execution import CheckContext, Parameters  # noqa: E402

MEASURED = []   # one entry per time a check's measurement actually ran


def count_rows(context):
    """Reads a parameter and an experiment, draws a figure: everything the cache must key on and keep."""
    size = context.parameters["exp"]["size"]
    MEASURED.append(size)
    figure, axes = plt.subplots(figsize=(2, 2))
    axes.plot([0, size], [0, 1])
    rows = len(context.experiments["exp"])
    return Measurement(f"{rows} rows at size {size}", {"rows": rows, "holds": rows == size}, paper="rows = size",
                       figure=figure)


def crash(context):
    MEASURED.append("crash")
    raise ZeroDivisionError("a bug of ours")


MEASURING = Check("rows", Method.NUMERICAL, count_rows, rule=rules.exact(), needs=("exp",))
CLAIM = Claim("toy/rows", "lemma", "L1", "rows", "rows = size", (MEASURING,))


def context(size=3, rows=3, seed=7, profile="quick"):
    parameters = {"exp": Parameters("exp", {"size": size}, {"size": ("paper", "L1")})}
    return CheckContext(profile=profile, root_seed=seed, parameters=parameters,
                        experiments={"exp": pd.DataFrame({"x": range(rows)})})


def entries(directory):
    return sorted(directory.rglob(f"*{SUFFIX}"))


def test_a_second_identical_run_measures_nothing_and_returns_the_same_result(tmp_path):
    MEASURED.clear()
    first_cache = CheckCache(tmp_path)
    first = first_cache.evaluate(CLAIM, context())
    assert (first_cache.computed, first_cache.cached, MEASURED) == (1, 0, [3])
    again_cache = CheckCache(tmp_path)
    again = again_cache.evaluate(CLAIM, context())
    assert (again_cache.computed, again_cache.cached, MEASURED) == (0, 1, [3])
    (before,), (after,) = first.results, again.results
    assert after.verdict == before.verdict == Verdict.CONFIRMED
    assert after.evidence.summary == before.evidence.summary == "3 rows at size 3"
    assert list(after.evidence.values.items()) == [("rows", 3), ("holds", True)]   # in the check's order, as reported
    assert after.seconds == before.seconds and after.paper == "rows = size" and after.rule is MEASURING.rule
    assert after.parameters == {"exp/size": {"value": 3, "source": "paper", "note": "L1"}}
    assert after.evidence.figure == before.evidence.figure and after.evidence.figure[:4] == b"\x89PNG"


@pytest.mark.parametrize("change, extra", [
    (dict(seed=8), None), (dict(profile="paper"), None), (dict(size=4, rows=4), None), (dict(rows=4), None),
    ({}, {"implementation": {"spec": "mine.py:run", "source": "0" * 64}})])
def test_the_seed_profile_a_parameter_the_results_or_the_implementation_recompute(tmp_path, change, extra):
    CheckCache(tmp_path).evaluate(CLAIM, context())
    MEASURED.clear()
    changed = CheckCache(tmp_path)
    changed.evaluate(CLAIM, context(**change), extra)
    assert (changed.computed, changed.cached, len(MEASURED)) == (1, 0, 1)
    assert len(entries(tmp_path)) == 2


def test_a_corrupt_entry_is_quarantined_and_recomputed(tmp_path, caplog):
    CheckCache(tmp_path).evaluate(CLAIM, context())
    (entry,) = entries(tmp_path)
    entry.write_text(entry.read_text()[:50])
    MEASURED.clear()
    cache = CheckCache(tmp_path)
    with caplog.at_level("WARNING"):
        result = cache.evaluate(CLAIM, context())
    assert (cache.computed, MEASURED, result.verdict) == (1, [3], Verdict.CONFIRMED)
    assert entry.with_suffix(".corrupt").exists() and "check toy/rows [rows] was corrupt" in caplog.text
    assert json.loads(entry.read_text())["summary"] == "3 rows at size 3"      # the recomputed entry


def test_an_entry_under_another_key_is_refused(tmp_path):
    CheckCache(tmp_path).evaluate(CLAIM, context())
    (entry,) = entries(tmp_path)
    record = json.loads(entry.read_text())
    entry.write_text(json.dumps({**record, "cache_key": "0" * 64, "verdict": "refuted"}))
    result = CheckCache(tmp_path).evaluate(CLAIM, context())
    assert result.verdict == Verdict.CONFIRMED and entry.with_suffix(".corrupt").exists()


def test_crashes_and_not_run_checks_are_never_stored(tmp_path):
    crashing = Claim("toy/crash", "lemma", "L2", "crash", "crash", (Check("crash", Method.NUMERICAL, crash,
                                                                          rule=rules.exact()),))
    MEASURED.clear()
    for _ in range(2):
        with pytest.raises(CheckCrashed):
            CheckCache(tmp_path).evaluate(crashing, context())
    missing = context()
    missing.experiments.clear()                    # the experiment it needs was not run: not-run, with why
    cache = CheckCache(tmp_path)
    (result,) = cache.evaluate(CLAIM, missing).results
    assert result.verdict == Verdict.NOT_RUN and "exp not reproduced" in result.evidence.summary
    assert MEASURED == ["crash", "crash"] and entries(tmp_path) == [] and (cache.computed, cache.cached) == (0, 0)


def test_a_users_implementation_failing_leaves_the_check_not_run_not_crashed(tmp_path):
    """Under `dpverify verify` a claim's check runs the user's code; if that code raises (ImplementationError), the
    check is not-run with the reason, never a harness error (a bug of ours, ZeroDivisionError above, still is)."""
    from dpverify.theory.verify.conformance import ImplementationError

    def failing(context):
        raise ImplementationError("the implementation raised IndexError: index 8 is out of bounds")

    claim = Claim("toy/user", "lemma", "L3", "user", "user", (Check("user", Method.NUMERICAL, failing, rule=rules.exact()),))
    (result,) = CheckCache(tmp_path).evaluate(claim, context()).results
    assert result.verdict == Verdict.NOT_RUN
    assert result.evidence.summary == "the implementation failed: the implementation raised IndexError: index 8 is out of bounds"
    assert entries(tmp_path) == []


def test_without_a_directory_every_check_runs(tmp_path):
    MEASURED.clear()
    cache = CheckCache(None)
    cache.evaluate(CLAIM, context())
    cache.evaluate(CLAIM, context())
    assert (cache.computed, cache.cached, MEASURED) == (2, 0, [3, 3])


def test_plain_progress_lines_say_how_far_and_how_long(monkeypatch, capsys):
    monkeypatch.setattr(progress_module, "PLAIN_INTERVAL_SECONDS", 3600.0)   # no timer line within this test
    monkeypatch.setattr(progress_module.time, "monotonic", iter([0.0, 20.0, 63.0, 126.0]).__next__)
    with Progress(3, "tasks") as progress:        # stderr is not a terminal here
        assert progress.status() == "tasks 0/3, elapsed 0:20"
        progress.update()
        progress.write("a result line")
        assert progress.status() == "tasks 1/3, elapsed 1:03, about 2:06 left"
        progress.update(2)
    out, err = capsys.readouterr()
    assert out == "a result line\n"
    assert err.splitlines() == ["tasks 0/3", "tasks 3/3, done in 2:06"]


def test_the_time_left_is_estimated_by_the_size_of_the_work(monkeypatch):
    """With sizes (the runner's Task.cost), the time left is the elapsed time x work left / work done, and a step that
    ended at once (a task without its data) leaves the work instead of counting as done. By count, 2 of 3 steps
    done after 1:00 would leave 0:30; by size, 10 of 50 units after 1:00 leave 4:00."""
    monkeypatch.setattr(progress_module, "PLAIN_INTERVAL_SECONDS", 3600.0)
    monkeypatch.setattr(progress_module.time, "monotonic", iter([0.0, 30.0, 60.0, 70.0]).__next__)
    with Progress(3, "tasks", work=100.0) as progress:
        progress.update(work=50.0, took_time=False)
        assert progress.status() == "tasks 1/3, elapsed 0:30"          # no work done yet: no estimate
        progress.update(work=10.0)
        assert progress.status() == "tasks 2/3, elapsed 1:00, about 4:00 left"


def test_disabled_progress_is_silent(capsys):
    with Progress(2, "tasks", enabled=False) as progress:
        progress.update(2)
    assert capsys.readouterr() == ("", "")
