"""Tests run with the same BLAS thread limit as the CLI (reproductions/threads.py)."""

import pytest

from dpverify.reproductions.threads import limit_blas_threads


@pytest.fixture(autouse=True, scope="session")
def _blas_threads():
    with limit_blas_threads():
        yield
