"""BLAS threads per process.

The work is parallel over replicas inside a process and over tasks across processes (joblib, Dask), so
BLAS threading adds little; on a loaded machine OpenBLAS threads that spin-wait made some products ~1000x
slower (a 22 x 50000 Gram product: 3 s with 2 threads, 3 ms with 1). Every dpverify process and task
worker therefore runs with DPVERIFY_BLAS_THREADS (default 1) BLAS threads.
"""

from __future__ import annotations

import os

from threadpoolctl import threadpool_limits

from dpverify.algorithms.core.errors import InvalidParameterError

BLAS_THREADS_ENV = "DPVERIFY_BLAS_THREADS"
DEFAULT_BLAS_THREADS = 1


def blas_threads() -> int:
    value = os.environ.get(BLAS_THREADS_ENV, "").strip()
    if not value:
        return DEFAULT_BLAS_THREADS
    if not value.isdigit() or int(value) < 1:
        raise InvalidParameterError(f"${BLAS_THREADS_ENV} must be a positive integer; got {value!r}")
    return int(value)


def limit_blas_threads() -> threadpool_limits:
    """Context manager: at most `blas_threads()` BLAS threads in this process."""
    return threadpool_limits(limits=blas_threads(), user_api="blas")
