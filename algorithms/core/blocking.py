"""Blocks of the leading (replica) axis for kernels whose temporaries grow with it.

A temporary of a few MiB made afresh every iteration is returned to the system when freed and
page-faulted back in at the next iteration (issue 17 measured zCDP-NFL 2.2x slower for it). Computing
such a kernel a block of replicas at a time keeps each temporary near BLOCK_ELEMENTS, which the
allocator reuses and the cache holds.
"""

from __future__ import annotations

BLOCK_ELEMENTS = 1 << 15   # float64 elements per temporary (256 KiB)


def row_blocks(rows: int, elements_per_row: int) -> list[slice]:
    """Consecutive slices covering range(rows), each holding about BLOCK_ELEMENTS elements (at least one row)."""
    size = max(1, BLOCK_ELEMENTS // max(1, elements_per_row))
    return [slice(start, min(start + size, rows)) for start in range(0, rows, size)]
