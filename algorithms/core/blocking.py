"""Blocks of the leading (replica) axis for kernels whose temporaries grow with it, and scratch buffers that a
kernel reuses every iteration.

A temporary of a few MiB made afresh every iteration is returned to the system when freed and
page-faulted back in at the next iteration (issue 17 measured zCDP-NFL 2.2x slower for it). Two remedies:
computing the kernel a block of replicas at a time keeps each temporary near BLOCK_ELEMENTS, which the
allocator reuses and the cache holds; or a run allocates a `Scratch` once and the kernel writes into it,
in blocks of up to SCRATCH_ELEMENTS (fewer, larger BLAS calls).
"""

from __future__ import annotations

import math

import numpy as np

BLOCK_ELEMENTS = 1 << 15     # float64 elements per fresh temporary (256 KiB)
SCRATCH_ELEMENTS = 1 << 22   # float64 elements per scratch buffer (32 MiB)


def row_blocks(rows: int, elements_per_row: int, into_scratch: bool = False) -> list[slice]:
    """Consecutive slices covering range(rows), each holding about BLOCK_ELEMENTS elements (SCRATCH_ELEMENTS for a
    kernel that writes into a Scratch), at least one row."""
    size = max(1, (SCRATCH_ELEMENTS if into_scratch else BLOCK_ELEMENTS) // max(1, elements_per_row))
    return [slice(start, min(start + size, rows)) for start in range(0, rows, size)]


class Scratch:
    """Named float64 buffers allocated on first use and reused by every later call of the same run."""

    def __init__(self) -> None:
        self._buffers: dict[str, np.ndarray] = {}

    def array(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """A C-contiguous (uninitialized) array of this shape in the buffer `name`, grown when too small."""
        size = math.prod(shape)
        buffer = self._buffers.get(name)
        if buffer is None or buffer.size < size:
            buffer = self._buffers[name] = np.empty(size)
        return buffer[:size].reshape(shape)
