"""Runner: seeding independent of back end and worker count, content-hash cache, resume, corrupt
entries quarantined, Parquet provenance, Dask identical to the local run."""

import json

import numpy as np
import pandas as pd
import pytest

from dpverify.reproductions.data.sources import NOT_AVAILABLE
from dpverify.reproductions.run.runner import (
    ResultCache,
    Runner,
    RunnerError,
    read_provenance,
)
from dpverify.theory.execution import Task, serial_executor, task_seed_sequence

ROOT_SEED = 12345
CALLS = []


def gaussian_sample_mean(rng, size, shift):
    """A tiny seeded task: its numbers depend only on the task's key and the root seed."""
    CALLS.append(size)
    draws = rng.standard_normal(size) + shift
    return pd.DataFrame({"mean": [draws.mean()], "first": [draws[0]], "size": [size]})


def make_tasks(count=6):
    return [Task(f"demo/task-{i}", gaussian_sample_mean, {"size": 50 + i, "shift": float(i)}) for i in range(count)]


def test_seed_depends_on_key_and_root_only():
    first = np.random.default_rng(task_seed_sequence(ROOT_SEED, "a")).standard_normal(3)
    again = np.random.default_rng(task_seed_sequence(ROOT_SEED, "a")).standard_normal(3)
    other = np.random.default_rng(task_seed_sequence(ROOT_SEED, "b")).standard_normal(3)
    assert np.array_equal(first, again)
    assert not np.allclose(first, other)


def test_parallel_equals_serial_and_reference_values():
    tasks = make_tasks()
    serial = serial_executor(tasks, ROOT_SEED)
    parallel = Runner(jobs=2, show_progress=False)(tasks, ROOT_SEED)
    for a, b in zip(serial, parallel):
        pd.testing.assert_frame_equal(a, b)
    # the value is the task's own draw: recompute it by hand from the documented seeding
    rng = np.random.default_rng(task_seed_sequence(ROOT_SEED, "demo/task-2"))
    assert parallel[2]["mean"].iloc[0] == pytest.approx((rng.standard_normal(52) + 2.0).mean(), abs=0)


def test_cache_makes_rerun_compute_nothing_and_resumes(tmp_path):
    tasks = make_tasks()
    first = Runner(cache_directory=tmp_path, show_progress=False)
    first(tasks[:3], ROOT_SEED)                     # an "interrupted" run: half the tasks done
    assert first.computed == 3
    resumed = Runner(cache_directory=tmp_path, show_progress=False)
    results = resumed(tasks, ROOT_SEED)
    assert resumed.computed == 3                    # only the missing half
    rerun = Runner(cache_directory=tmp_path, show_progress=False)
    again = rerun(tasks, ROOT_SEED)
    assert rerun.computed == 0
    for a, b in zip(results, again):
        pd.testing.assert_frame_equal(a, b)


def test_parquet_provenance(tmp_path):
    task = make_tasks(1)[0]
    Runner(cache_directory=tmp_path, show_progress=False)([task], ROOT_SEED)
    path = ResultCache(tmp_path).path(task, ROOT_SEED)
    provenance = read_provenance(path)
    assert provenance["task_key"] == "demo/task-0"
    assert json.loads(provenance["params"]) == {"size": 50, "shift": 0.0}
    assert provenance["root_seed"] == str(ROOT_SEED)
    assert "numpy" in provenance["packages"] and "dpverify" in provenance["packages"]
    assert provenance["git_commit"]
    assert len(provenance["code_digest"]) == 64


def test_corrupt_and_partial_entries_are_quarantined_and_recomputed(tmp_path, caplog):
    tasks = make_tasks(2)
    reference = Runner(cache_directory=tmp_path, show_progress=False)(tasks, ROOT_SEED)
    cache = ResultCache(tmp_path)
    corrupt = cache.path(tasks[0], ROOT_SEED)
    corrupt.write_bytes(b"PAR1 truncated garbage")
    partial = cache.path(tasks[1], ROOT_SEED)
    partial.write_bytes(partial.read_bytes()[:40])
    runner = Runner(cache_directory=tmp_path, show_progress=False)
    with caplog.at_level("WARNING"):
        results = runner(tasks, ROOT_SEED)
    assert runner.computed == 2
    assert corrupt.with_suffix(".corrupt").exists() and partial.with_suffix(".corrupt").exists()
    assert "corrupt" in caplog.text
    for a, b in zip(reference, results):
        pd.testing.assert_frame_equal(a, b)


def test_bad_configuration_is_a_clear_error():
    with pytest.raises(RunnerError, match="unknown backend"):
        Runner(backend="spark")
    with pytest.raises(RunnerError, match="--scheduler"):
        Runner(backend="dask", show_progress=False)(make_tasks(1), ROOT_SEED)
    with pytest.raises(RunnerError, match="unique"):
        Runner(show_progress=False)(make_tasks(1) * 2, ROOT_SEED)


def test_dask_backend_matches_local_run(tmp_path):
    distributed = pytest.importorskip("distributed")
    tasks = make_tasks()
    local = Runner(show_progress=False)(tasks, ROOT_SEED)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        runner = Runner(backend="dask", scheduler=cluster.scheduler_address,
                        cache_directory=tmp_path, show_progress=False)
        remote = runner(tasks, ROOT_SEED)
    assert runner.computed == len(tasks)
    for a, b in zip(local, remote):
        pd.testing.assert_frame_equal(a, b)


def test_no_worker_outlives_a_killed_parent(tmp_path):
    """SIGKILL a `--jobs 2` run while its workers compute: 5 s later none of them is alive."""
    import signal
    import subprocess
    import sys
    import time

    import psutil

    process = subprocess.Popen([sys.executable, "-m", "dpverify", "reproduce", "dpdo-nc", "--jobs", "2", "--cache",
                                str(tmp_path / "cache"), "--out", str(tmp_path / "out")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    parent = psutil.Process(process.pid)
    deadline = time.monotonic() + 300
    workers = []
    while len(workers) < 2 and time.monotonic() < deadline and process.poll() is None:
        workers = [child for child in parent.children(recursive=True) if "loky" in " ".join(child.cmdline())]
        time.sleep(0.2)
    assert len(workers) >= 2, "the run finished before its workers were seen"
    time.sleep(1.0)                                   # the workers have started their tasks
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    time.sleep(5.0)
    alive = [w.pid for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]
    assert not alive, f"workers alive 5 s after the parent was killed: {alive}"


def object_floats(rng, size):
    """A task whose column of floats has dtype object (Parquet stores it as float64)."""
    return pd.DataFrame({"epsilon": pd.Series([float(size), 0.5], dtype=object, index=[5, 6])}, index=[5, 6])


def test_a_computed_result_is_the_frame_the_cache_returns(tmp_path):
    task = Task("demo/object-floats", object_floats, {"size": 2})
    (computed,) = Runner(cache_directory=tmp_path, show_progress=False)([task], ROOT_SEED)
    (cached,) = Runner(cache_directory=tmp_path, show_progress=False)([task], ROOT_SEED)
    (uncached,) = Runner(show_progress=False)([task], ROOT_SEED)
    for frame in (computed, uncached):
        pd.testing.assert_frame_equal(frame, cached)
    assert str(cached["epsilon"].dtype) == "float64" and cached["epsilon"].tolist() == [2.0, 0.5]
    assert list(cached.index) == [0, 1]


def test_prefetch_runs_every_experiments_tasks_once_into_the_cache(tmp_path):
    """experiments.prefetch: the tasks of several experiments in one pool (a shared key once), after which each
    experiment's own run finds all its results in the cache (nothing computed twice), equal to a serial run's."""
    from types import SimpleNamespace

    from dpverify.reproductions.run.experiments import prefetch

    def experiment(keys):
        tasks = [Task(f"demo/{key}", gaussian_sample_mean, {"size": 40 + key, "shift": 0.5}) for key in keys]
        return SimpleNamespace(config=lambda profile: None, build_tasks=lambda config: tasks)

    first, second = experiment([0, 1, 2]), experiment([2, 3])
    runner = Runner(cache_directory=tmp_path, jobs=2, show_progress=False)
    assert prefetch([first, second], "quick", runner, ROOT_SEED) == 4
    assert runner.computed == 4
    frames = runner(second.build_tasks(None), ROOT_SEED) + runner(first.build_tasks(None), ROOT_SEED)
    assert runner.computed == 4
    serial = serial_executor(second.build_tasks(None) + first.build_tasks(None), ROOT_SEED)
    for frame, expected in zip(frames, serial):
        pd.testing.assert_frame_equal(frame, expected, check_dtype=False)
    assert prefetch([first, second], "quick", Runner(jobs=2, show_progress=False), ROOT_SEED) == 0   # no cache
    assert prefetch([first, second], "quick", Runner(cache_directory=tmp_path, jobs=1), ROOT_SEED) == 0


def test_the_costliest_tasks_start_first_and_cost_is_not_in_the_key(tmp_path):
    """Task.cost only orders the work: pending tasks start in decreasing cost (ties in the given order), the results
    come back in the given order with the same numbers, and a task's content hash ignores its cost."""
    tasks = [Task(f"demo/task-{i}", gaussian_sample_mean, {"size": 50 + i, "shift": float(i)}, cost=cost)
             for i, cost in enumerate([1.0, 5.0, 0.0, 5.0, 3.0])]
    CALLS.clear()
    frames = Runner(jobs=1, show_progress=False)(tasks, ROOT_SEED)
    assert CALLS == [51, 53, 54, 50, 52]
    reference = Runner(jobs=1, show_progress=False)(make_tasks(5), ROOT_SEED)
    assert all(a.equals(b) for a, b in zip(frames, reference))
    assert tasks[1].content_hash(ROOT_SEED) == make_tasks(5)[1].content_hash(ROOT_SEED)


def pid_after(rng, seconds):
    """A task that reports which worker ran it, after `seconds`."""
    import os
    import time

    time.sleep(seconds)
    return pd.DataFrame({"pid": [os.getpid()]})


def test_tasks_are_not_batched_behind_instant_ones():
    """Tasks that end at once (missing data) must not make joblib bundle the next ones into one dispatch: the four
    1-second tasks that follow 40 instant ones are shared by the two workers, two each, not run by one."""
    tasks = [Task(f"demo/instant-{i}", pid_after, {"seconds": 0.0}, cost=2.0) for i in range(40)]
    tasks += [Task(f"demo/long-{i}", pid_after, {"seconds": 1.0}, cost=1.0) for i in range(4)]
    tasks += [Task(f"demo/late-{i}", pid_after, {"seconds": 0.0}) for i in range(40)]
    frames = Runner(jobs=2, show_progress=False)(tasks, ROOT_SEED)
    workers = pd.Series([frame["pid"].iloc[0] for frame in frames[40:44]]).value_counts()
    assert list(workers) == [2, 2]


def test_progress_weighs_tasks_by_cost_and_drops_those_without_data():
    """The runner's progress counts each task's Task.cost as its work; a task whose data is not available ends at
    once, so its cost leaves the work to do rather than counting as work done."""
    tasks = [Task(f"demo/sized-{i}", gaussian_sample_mean, {"size": 50, "shift": 0.0}, cost=cost)
             for i, cost in enumerate([30.0, 10.0])]
    runner = Runner(jobs=1, show_progress=False)
    with runner._progress(list(enumerate(tasks)), "tasks") as bar:
        assert bar.work == 40.0
        runner._advance(bar, tasks[0], pd.DataFrame({"status": [f"{NOT_AVAILABLE}: cifar10"]}))
        runner._advance(bar, tasks[1], pd.DataFrame({"value": [1.0]}))
        assert (bar.work, bar.work_done, bar.done) == (10.0, 10.0, 2)
