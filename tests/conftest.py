"""Tests run with the same BLAS thread limit as the CLI (reproductions/run/threads.py), and never download data."""

import pytest

from dpverify.reproductions.data.sources import OFFLINE_ENV
from dpverify.reproductions.run.threads import limit_blas_threads


@pytest.fixture(autouse=True, scope="session")
def _blas_threads():
    with limit_blas_threads():
        yield


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    """No test touches the network: a dataset that is nowhere stays not available (subprocesses inherit this)."""
    monkeypatch.setenv(OFFLINE_ENV, "1")


@pytest.fixture
def data_only_from_env(monkeypatch, tmp_path_factory):
    """Datasets come only from $DPVERIFY_DATA / --data-dir: no ../shared/data fallback, an empty download cache."""
    from dpverify.reproductions.data import sources as data_sources

    nowhere = tmp_path_factory.mktemp("no-shared-data")
    monkeypatch.setattr(data_sources, "SHARED_DATA_DIR", nowhere / "shared" / "data")
    monkeypatch.setattr(data_sources, "cache_dir", lambda: nowhere / "download-cache")
    return nowhere
