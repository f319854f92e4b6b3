"""Where the data comes from (reproductions/data/sources.py): the order of the directories, the download fallback
(pooch, mocked: tests never touch the network), and that "data not available" is never a cached result: a
reproduction rerun with the same cache after the data is provided runs the claims that need it."""

import bz2
import hashlib
import os
import pickle
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import requests

from dpverify.reproductions.data import sources as data_sources
from dpverify.reproductions.data.datasets import load_dataset
from dpverify.reproductions.data.sources import (
    DATA_ENV,
    NOT_AVAILABLE,
    OFFLINE_ENV,
    PUBLISHED_SHA256,
    SHARED_DATA_DIR,
    SOURCES,
    DatasetNotAvailableError,
    fingerprint,
    locate,
    read_checksums,
)
from dpverify.reproductions.run.runner import Runner, cache_key
from dpverify.theory.execution import Task

CIFAR_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"


def _shipped_dir() -> Path | None:
    """The shared data: beside the checkout, or where $DPVERIFY_DATA points."""
    for directory in (Path(os.environ.get(DATA_ENV) or SHARED_DATA_DIR), SHARED_DATA_DIR):
        if (directory / "ijcnn1.trn.bz2").is_file():
            return directory
    return None


SHIPPED = _shipped_dir()
needs_ijcnn1 = pytest.mark.skipif(SHIPPED is None, reason=f"no shared data beside the checkout or in ${DATA_ENV}")


@pytest.fixture
def retrieve_calls(monkeypatch):
    """pooch.retrieve replaced: records its calls and raises what a machine without network sees."""
    import pooch

    calls = []

    def no_network(url, known_hash, **kwargs):
        calls.append((url, known_hash, kwargs))
        raise requests.exceptions.ConnectionError(f"Failed to resolve {url.split('/')[2]}\nsecond line")

    monkeypatch.setattr(pooch, "retrieve", no_network)
    monkeypatch.setattr(data_sources, "_failed_downloads", {})
    monkeypatch.delenv(OFFLINE_ENV)
    return calls


def test_published_sums_are_the_shared_sha256sums():
    if SHIPPED is None:
        pytest.skip("no shared data")
    listed = read_checksums(SHIPPED)
    assert {name: listed[name] for name in PUBLISHED_SHA256} == PUBLISHED_SHA256


def test_a_failed_download_is_tried_once_and_named_in_the_reason(retrieve_calls, data_only_from_env, monkeypatch):
    monkeypatch.delenv(DATA_ENV, raising=False)
    for _ in range(3):   # one attempt per process: the next lookups reuse the failure
        with pytest.raises(DatasetNotAvailableError) as error:
            locate("cifar10")
    assert len(retrieve_calls) == 1
    url, known_hash, kwargs = retrieve_calls[0]
    assert (url, known_hash) == (CIFAR_URL, "md5:c58f30108f718f92721af3b95e74349a")
    assert kwargs["downloader"].kwargs == {"timeout": 10}   # short: no retries storm, no long hang
    cache = data_only_from_env / "download-cache"
    assert str(error.value) == (
        "CIFAR-10 data not available: needs cifar-10-batches-py/data_batch_1..5: the python version of CIFAR-10 "
        "(pickle batches); no checksum is published: the sha256 of what is read is recorded; "
        f"{data_only_from_env / 'shared' / 'data'} does not exist; not in {cache}; download of {CIFAR_URL} failed "
        "(ConnectionError: Failed to resolve www.cs.toronto.edu); provide it with --data-dir DIR or DPVERIFY_DATA=DIR")
    assert fingerprint("cifar10") == NOT_AVAILABLE and len(retrieve_calls) == 1


def test_offline_never_calls_pooch(retrieve_calls, data_only_from_env, monkeypatch):
    monkeypatch.setenv(OFFLINE_ENV, "1")
    monkeypatch.delenv(DATA_ENV, raising=False)
    with pytest.raises(DatasetNotAvailableError,
                       match=re.escape(f"download from {SOURCES['ijcnn1'].url} disabled ({OFFLINE_ENV} is set)")):
        locate("ijcnn1")
    with pytest.raises(DatasetNotAvailableError, match="no public source with a published checksum is known"):
        locate("covtype")   # LIBSVM publishes no checksum: never fetched
    assert retrieve_calls == []


def _write_batch(path: Path, data: np.ndarray, labels: list[int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as stream:
        pickle.dump({b"labels": labels, b"data": data}, stream, protocol=2)


def test_a_download_lands_in_the_cache_and_is_then_found_there(monkeypatch, data_only_from_env):
    """The archive is unpacked into the cache (mocked here with a one-batch CIFAR-10 in the real format); the cache
    is then a data directory like any other, and what was read is recorded by sha256 (no published sum)."""
    import pooch

    monkeypatch.delenv(OFFLINE_ENV)
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.setattr(data_sources, "_failed_downloads", {})
    data = np.arange(3 * 3072, dtype=np.uint64).reshape(3, 3072).astype(np.uint8)
    unpacked = []

    def fake_retrieve(url, known_hash, fname, path, processor, downloader):
        assert isinstance(processor, pooch.Untar) and Path(path) == data_only_from_env / "download-cache"
        _write_batch(Path(path) / "cifar-10-batches-py" / "data_batch_1", data, [5, 1, 3])
        unpacked.append(fname)

    monkeypatch.setattr(pooch, "retrieve", fake_retrieve)
    assert locate("cifar10") == data_only_from_env / "download-cache" and unpacked == ["cifar-10-python.tar.gz"]
    dataset = load_dataset("cifar10")
    np.testing.assert_array_equal(dataset.labels, [1, -1])   # dog -> +1, cat -> -1
    digest = hashlib.sha256((data_only_from_env / "download-cache/cifar-10-batches-py/data_batch_1")
                            .read_bytes()).hexdigest()
    assert dataset.sha256 == {"cifar-10-batches-py/data_batch_1": digest} and not dataset.checksum_verified
    assert fingerprint("cifar10") == {"cifar-10-batches-py/data_batch_1": digest} and len(unpacked) == 1


def test_the_configured_directory_comes_first_and_a_wrong_one_is_named(tmp_path, monkeypatch, data_only_from_env):
    _write_batch(tmp_path / "mine" / "data_batch_1", np.zeros((1, 3072), np.uint8), [3])
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "mine"))
    assert locate("cifar10") == tmp_path / "mine"
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "typo"))
    with pytest.raises(DatasetNotAvailableError, match=f"{DATA_ENV}={tmp_path / 'typo'} is not a directory; "):
        locate("cifar10")


# ------------------------------------------------------------------------------------------------- the cache


def _maybe_missing(rng, *, dataset: str) -> pd.DataFrame:
    try:
        return pd.DataFrame({"dataset": [dataset], "status": ["ok"], "rows": [load_dataset(dataset).num_samples]})
    except DatasetNotAvailableError as missing:
        return pd.DataFrame({"dataset": [dataset], "status": [f"{NOT_AVAILABLE}: {missing}"]})


def test_not_available_is_never_cached_and_the_key_follows_the_data(tmp_path, monkeypatch, data_only_from_env):
    cache = tmp_path / "cache"
    task = Task("demo/covtype", _maybe_missing, {"dataset": "covtype"})
    other = Task("demo/none", _maybe_missing, {"dataset": "not a dataset"})
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    missing_key, other_key = cache_key(task, 0), cache_key(other, 0)
    runner = Runner(cache_directory=cache, show_progress=False)
    for expected in (1, 2):   # computed each time: nothing was stored
        (result,) = runner([task], 0)
        assert result.status.iloc[0].startswith("data not available: covtype data not available: needs "
                                                "covtype.libsvm.binary.bz2") and runner.computed == expected
    assert list(cache.rglob("*.parquet")) == []
    data = tmp_path / "data"
    data.mkdir()
    (data / "covtype.libsvm.binary.bz2").write_bytes(bz2.compress(b"1 1:2\n2 1:4\n"))   # the real format, 2 rows
    monkeypatch.setenv(DATA_ENV, str(data))
    assert cache_key(task, 0) != missing_key and cache_key(other, 0) == other_key   # only the readers' keys change
    (result,) = runner([task], 0)
    assert result.rows.iloc[0] == 2 and runner.computed == 3
    (result,) = runner([task], 0)   # now from the cache
    assert result.rows.iloc[0] == 2 and runner.computed == 3 and len(list(cache.rglob("*.parquet"))) == 1
    (data / "covtype.libsvm.binary.bz2").write_bytes(bz2.compress(b"1 1:2\n2 1:4\n1 1:3\n"))   # other data: new key
    (result,) = runner([task], 0)
    assert result.rows.iloc[0] == 3 and runner.computed == 4


@needs_ijcnn1
def test_a_reproduction_without_data_runs_its_claims_once_the_data_is_provided(tmp_path, monkeypatch,
                                                                             data_only_from_env):
    """Fig. 9 (ijcnn1) with the same cache: with an empty data directory its two claims are not-run and say how to
    get the data; with a directory holding only ijcnn1.trn.bz2 (no SHA256SUMS: dpverify's published sha256 checks
    it) they run; a third run is served from the cache."""
    from dpverify.reproductions.data.datasets import availability
    from dpverify.reproductions.run.experiments import find_experiment, parameters_of, run_experiment
    from dpverify.theory.claims import Verdict, evaluate
    from dpverify.theory.execution import CheckContext
    from dpverify.theory.papers import get_paper

    claims = [get_paper("dp-recal").claim(c) for c in ("figure-9-recal-mse-to-zero", "figure-9-dp-recal-mse-large")]
    runner = Runner(cache_directory=tmp_path / "cache", show_progress=False)

    def reproduce():
        run = run_experiment(find_experiment("dp-recal", "figure-9"), "quick", runner, 0, tmp_path / "out")
        context = CheckContext(profile="quick", root_seed=0, executor=runner, parameters=parameters_of("dp-recal", "quick"),
                               experiments={"figure-9": run.results}, datasets=availability())
        return [evaluate(claim, context) for claim in claims]

    (tmp_path / "empty").mkdir()
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "empty"))
    first = reproduce()
    assert [r.verdict for r in first] == [Verdict.NOT_RUN, Verdict.NOT_RUN] and runner.computed == 1
    cache = data_only_from_env / "download-cache"
    assert first[0].results[0].evidence.summary == (
        "data not available: ijcnn1: ijcnn1 data not available: needs ijcnn1.trn.bz2 (sha256 "
        "b38a4198ce142d43e96fb86d17b87211feec1f909ac344fa057455c69de29de3): LIBSVM ijcnn1 training set (ijcnn1.tr + "
        f"ijcnn1.val, svmlight, bzip2); {data_only_from_env / 'shared' / 'data'} does not exist; not in "
        f"$DPVERIFY_DATA, {cache}; download from {SOURCES['ijcnn1'].url} disabled (DPVERIFY_OFFLINE is set); "
        "provide it with --data-dir DIR or DPVERIFY_DATA=DIR")
    assert list((tmp_path / "cache").rglob("*.parquet")) == []

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "ijcnn1.trn.bz2").symlink_to(SHIPPED / "ijcnn1.trn.bz2")
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "data"))
    second = reproduce()
    assert [r.verdict for r in second] == [Verdict.CONFIRMED, Verdict.CONFIRMED] and runner.computed == 2
    third = reproduce()
    assert [r.verdict for r in third] == [Verdict.CONFIRMED, Verdict.CONFIRMED] and runner.computed == 2


def test_data_dir_option_is_the_data_directory_of_the_run(tmp_path, monkeypatch):
    """--data-dir sets $DPVERIFY_DATA for the run (and so for its worker processes) before anything is looked up."""
    from typer.testing import CliRunner

    from dpverify.reproductions.cli import app

    monkeypatch.setenv(DATA_ENV, "/before")   # restored after the test
    (tmp_path / "data").mkdir()
    result = CliRunner().invoke(app, ["check", "dp-recal", "--claim", "proposition-1", "--cache", str(tmp_path / "c"),
                                      "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 0, result.output
    assert os.environ[DATA_ENV] == str(tmp_path / "data")
    assert "dp-recal/proposition-1" in result.output


@pytest.mark.parametrize("experiment, row, observed", [
    ("figure-2", {"loss": "linear", "graph": "ring"},
     "Nothing run: none of the datasets is available. ijcnn1: data not available (no substitute used)."),
    ("table-4", {"loss": "linear", "r": "l1"},
     ("Nothing run: none of the datasets is available. ijcnn1: data not available (no substitute used). CPU times are "
      "this machine's process time per replica of a batched run (the paper's: Matlab).")),
    ("figure-9", {"target_kind": "record", "reason": "why"},
     "Nothing run: none of the datasets is available. ijcnn1: data not available."),
])
def test_a_summary_without_any_data_says_so(experiment, row, observed):
    """Every dataset missing (a clone without ../shared): the summaries name them instead of crashing."""
    from dpverify.reproductions.run.experiments import find_experiment

    found = find_experiment("dp-recal", experiment)
    status = NOT_AVAILABLE if experiment == "figure-9" else f"{NOT_AVAILABLE}: why"
    output = found.summarize(found.config("quick"), pd.DataFrame([{"dataset": "ijcnn1", "status": status, **row}]))
    assert output.observed == observed and output.panels == {}


def test_a_long_download_error_is_shortened_in_the_reason(monkeypatch, data_only_from_env):
    import pooch

    def refused(url, known_hash, **kwargs):
        raise requests.exceptions.ConnectionError("x" * 300)

    monkeypatch.setattr(pooch, "retrieve", refused)
    monkeypatch.setattr(data_sources, "_failed_downloads", {})
    monkeypatch.delenv(OFFLINE_ENV)
    monkeypatch.delenv(DATA_ENV, raising=False)
    with pytest.raises(DatasetNotAvailableError) as error:
        locate("ijcnn1")
    assert f"failed (ConnectionError: {'x' * 160}...); provide it" in str(error.value)
