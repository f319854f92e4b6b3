"""glibc malloc thresholds for dpverify's own processes.

glibc hands a large freed block back to the system (above its mmap threshold, or when the free top of the heap
exceeds its trim threshold; both thresholds move at run time). A kernel that frees and re-allocates an array of a
few MiB every iteration then page-faults it back in each time: zCDP-NFL's physical limit took 4.8 ms per round
instead of 1.5 ms (issue 17), and every benchmark figure depended on what had run before it in the process.
dpverify's commands fix both thresholds at start: in their own process through mallopt, in the worker processes
they start through glibc's environment variables (read when a process starts). Values already in the
environment are kept. Importing dpverify as a library changes nothing; without glibc this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

MMAP_THRESHOLD = 32 << 20    # bytes: blocks below this come from the heap (32 MiB is glibc's largest dynamic value)
TRIM_THRESHOLD = 256 << 20   # bytes of free heap top kept before any is returned to the system
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3   # mallopt parameters (malloc.h)
SETTINGS = (("MALLOC_MMAP_THRESHOLD_", M_MMAP_THRESHOLD, MMAP_THRESHOLD),
            ("MALLOC_TRIM_THRESHOLD_", M_TRIM_THRESHOLD, TRIM_THRESHOLD))


def settle_allocator() -> str:
    """Fix the thresholds here and for child processes; returns what was done, one line for a report."""
    for variable, _, default in SETTINGS:
        os.environ.setdefault(variable, str(default))
    mallopt = _mallopt()
    if mallopt is None:
        return "allocator: not glibc, thresholds left as they are"
    applied = []
    for variable, parameter, _ in SETTINGS:
        value = os.environ[variable]
        if value.isdigit() and mallopt(parameter, int(value)) == 1:
            applied.append(f"{variable.strip('_').lower().replace('malloc_', '')} {int(value) >> 20} MiB")
    return "allocator: glibc, " + (", ".join(applied) if applied else "thresholds not accepted")


def _mallopt():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return None
