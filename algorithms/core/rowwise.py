"""Sums, norms, scalings, shifts, clips and small products over the short last axis (the dimension d) of a
batched state (R, N, d), each with numpy's own bits.

numpy reduces or broadcasts over a short axis in an inner loop d elements long: the sum over d = 2 of a
(1000, 6, 2) state took 115 us, adding its two columns 8 us (issue 17). So a short axis is done a column at a
time. Below numpy's pairwise block (8) its reduction adds left to right, as the column loop does, so both give
the same bits; from d = 8 on, these functions are numpy's expressions themselves.
"""

from __future__ import annotations

import numpy as np

SEQUENTIAL_BELOW = 8   # numpy's reduce adds left to right below its pairwise-summation block of 8


def row_sum(values: np.ndarray) -> np.ndarray:
    """values.sum(axis=-1), the same bits, faster when the last axis is short."""
    if values.shape[-1] >= SEQUENTIAL_BELOW:
        return np.add.reduce(values, axis=-1)
    total = values[..., 0].copy()
    for k in range(1, values.shape[-1]):
        total += values[..., k]
    return total


def row_norms(values: np.ndarray) -> np.ndarray:
    """The Euclidean norm over the last axis, (...,): sqrt of row_sum of the squares; from d = 8 on einsum's sum of
    squares (its bits, without a temporary). Below 8 the sum runs left to right, which can differ from einsum's
    order in the last bit for d >= 3 (d = 2, the papers' case, gives the same bits)."""
    if values.shape[-1] >= SEQUENTIAL_BELOW:
        return np.sqrt(np.einsum("...d,...d->...", values, values))
    return np.sqrt(row_sum(values * values))


def scale_rows(values: np.ndarray, factors: np.ndarray) -> np.ndarray:
    """values * factors[..., None] (each row of the last axis times its factor), the same bits. A short last axis
    is done a column at a time: broadcasting a factor over it runs numpy's inner loop d elements long."""
    scaled = np.empty_like(values)   # keeps the layout (core/mixing.py, agent_major)
    if values.shape[-1] >= SEQUENTIAL_BELOW:
        return np.multiply(values, factors[..., None], out=scaled)
    for k in range(values.shape[-1]):
        np.multiply(values[..., k], factors, out=scaled[..., k])
    return scaled


def clip_rows(values: np.ndarray, low, high) -> np.ndarray:
    """np.clip(values, low, high) with bounds (d,) per coordinate of the last axis, the same bits; a short axis a
    column at a time."""
    if values.shape[-1] >= SEQUENTIAL_BELOW:
        return np.clip(values, low, high)
    clipped = np.empty_like(values)
    for k in range(values.shape[-1]):
        np.clip(values[..., k], low[k], high[k], out=clipped[..., k])
    return clipped


def times_matrix(values: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """values @ matrix for a small (d, e) matrix over the last axis. A short axis is done as sums of scaled
    columns, left to right: np.matmul of a (R, N, 2) stack calls one tiny product per row block. A longer axis of an
    agent-major state is one product over all its rows in memory order, where np.matmul makes one per replica (1.5x
    faster at R = 100, N = 10, d = 512; the same bits there)."""
    if values.shape[-1] >= SEQUENTIAL_BELOW:
        if values.ndim == 3 and values.swapaxes(0, 1).flags.c_contiguous:   # agent-major: its rows as one product
            by_agent = values.swapaxes(0, 1)
            rows = by_agent.reshape(-1, values.shape[-1]) @ matrix
            return rows.reshape(*by_agent.shape[:2], matrix.shape[1]).swapaxes(0, 1)
        return values @ matrix
    square = matrix.shape[0] == matrix.shape[1]
    product = np.empty_like(values) if square else np.empty(values.shape[:-1] + (matrix.shape[1],))
    for k in range(matrix.shape[1]):
        column = product[..., k]
        np.multiply(values[..., 0], matrix[0, k], out=column)
        for j in range(1, matrix.shape[0]):
            column += values[..., j] * matrix[j, k]
    return product


def shifted(values: np.ndarray, offsets: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """values + offsets, offsets (..., d) broadcast over values' leading axes (e.g. one row per agent), the same
    bits; a short last axis a column at a time (2.4x faster on an agent-major (1000, 6, 2) state). out: where to
    write it (values itself adds in place)."""
    shape = np.broadcast_shapes(values.shape, offsets.shape)
    if out is not None:
        total = out
    else:   # empty_like keeps the layout
        total = np.empty_like(values) if shape == values.shape else np.empty(shape)
    if values.shape[-1] >= SEQUENTIAL_BELOW:
        return np.add(values, offsets, out=total)
    for k in range(shape[-1]):
        np.add(values[..., k], offsets[..., k], out=total[..., k])
    return total
