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
# A whole round of an algorithm run a block of replicas at a time (each array of the block about this size, 512 KiB),
# so that all of the round's passes over the block run in cache. DPDO-NC at R = 100, N = 200, d = 64 and R = 1000,
# N = 10, d = 512 (2 cores, 1 MiB L2, 32 MiB L3): 16k-128k elements within 5% of each other; 512k 1.1-1.6x slower;
# the whole state as one block 1.3-1.7x (issue 32).
ROUND_BLOCK_ELEMENTS = 1 << 16


def row_blocks(rows: int, elements_per_row: int, elements: int | None = None) -> list[slice]:
    """Consecutive slices covering range(rows), each holding about `elements` elements (None: BLOCK_ELEMENTS, for a
    fresh temporary; SCRATCH_ELEMENTS for a kernel that writes into a Scratch), at least one row."""
    size = max(1, (BLOCK_ELEMENTS if elements is None else elements) // max(1, elements_per_row))
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
