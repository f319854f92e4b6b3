"""The noise of exact conformance: one fixed stream of draws that every implementation receives.

`NoiseTape` stands in for a `numpy.random.Generator`. Each distribution (Laplace, Gaussian) has its
own fixed stream of standard variates, derived from a seed, and hands them out in the order they are
asked for: `laplace(loc, scale, size)` returns `loc + scale * z` with `z` the next `prod(size)`
standard Laplace variates. Two implementations that draw the same distributions in the same order
(iteration, then agent, then coordinate: a per-agent loop asking for `size=d` per agent, or a batched
code asking for `size=(N, d)` once per iteration) receive the same numbers, each at the scale it
computed itself. A wrong scale, a skipped draw or a draw in another order therefore shows in the
released messages, which is what exact conformance compares.

numpy has no such object (a Generator's stream depends on how the draws are split), hence this one.
"""

from __future__ import annotations

import numpy as np

from dpverify.algorithms.core.errors import InvalidParameterError

STREAMS = ("laplace", "normal")   # one stream per distribution, so adding Gaussian draws never shifts Laplace ones
CHUNK = 4096                      # variates generated at once (memory only: any value gives the same stream)


class NoiseTape:
    """A Generator look-alike whose draws come from fixed streams (module docstring). `drawn` counts the
    variates handed out per distribution."""

    def __init__(self, seed: int):
        self.seed = int(seed)
        self._generators = {kind: np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(index,)))
                            for index, kind in enumerate(STREAMS)}
        self._buffers = {kind: np.empty(0) for kind in STREAMS}
        self.drawn = dict.fromkeys(STREAMS, 0)

    def _take(self, kind: str, count: int) -> np.ndarray:
        buffer = self._buffers[kind]
        while buffer.size < count:
            generator = self._generators[kind]
            fresh = generator.laplace(0.0, 1.0, CHUNK) if kind == "laplace" else generator.standard_normal(CHUNK)
            buffer = np.concatenate([buffer, fresh])
        self._buffers[kind] = buffer[count:]
        self.drawn[kind] += count
        return buffer[:count]

    def _draw(self, kind: str, loc, scale, size) -> np.ndarray | float:
        loc, scale = np.asarray(loc, dtype=float), np.asarray(scale, dtype=float)
        if np.any(scale < 0):
            raise InvalidParameterError(f"a noise scale must be >= 0; got {scale.min()}")
        shape = np.broadcast(loc, scale).shape if size is None else tuple(np.atleast_1d(size).astype(int))
        z = self._take(kind, int(np.prod(shape, dtype=int))).reshape(shape)
        out = loc + scale * z
        return float(out) if size is None and out.ndim == 0 else out

    def position(self) -> dict:
        """Where the tape is, as plain data (numbers, strings, arrays, dicts): what a worker process sends back for
        the harness's tape to `restore`, so that the harness never unpickles an object built by user code."""
        return {**vars(self), "_generators": {kind: g.bit_generator.state for kind, g in self._generators.items()}}

    def restore(self, position: dict) -> None:
        """Continue from a `position` of a copy of this tape (its known fields only)."""
        for kind, state in position["_generators"].items():
            self._generators[kind].bit_generator.state = state
        self.__dict__.update({key: value for key, value in position.items() if key in vars(self)
                              and key != "_generators"})

    def laplace(self, loc=0.0, scale=1.0, size=None):
        return self._draw("laplace", loc, scale, size)

    def normal(self, loc=0.0, scale=1.0, size=None):
        return self._draw("normal", loc, scale, size)

    def standard_normal(self, size=None):
        return self._draw("normal", 0.0, 1.0, size)


class MirroredTape(NoiseTape):
    """The tape of `seed` with its normal stream reflected across the hyperplane orthogonal to `direction`, block by
    block: variates [b d, (b + 1) d) of the stream, d = len(direction), are one d-vector z_b, handed out as
    z_b - 2 <z_b, e> e (e = direction / ||direction||). An implementation that draws its d-vectors in blocks of d
    (one per agent and round, in order; a batched size=(N, d) call, or d scalar calls, are the same blocks) thus
    receives, from `MirroredTape(seed, e)`, the reflections of what it receives from `NoiseTape(seed)`: noises that
    differ only in the sign of their e component (coupled runs, seeds/003 Definition 2). The Laplace stream is
    unchanged."""

    def __init__(self, seed: int, direction):
        super().__init__(seed)
        direction = np.asarray(direction, dtype=float).ravel()
        self.direction = direction / np.linalg.norm(direction)
        self._mirrored = np.empty(0)   # reflected variates of whole blocks, not yet handed out

    def _take(self, kind: str, count: int) -> np.ndarray:
        if kind != "normal":
            return super()._take(kind, count)
        size = self.direction.size
        missing = max(count - self._mirrored.size, 0)
        handed = self.drawn[kind]
        blocks = super()._take(kind, -(-missing // size) * size).reshape(-1, size)   # whole blocks only
        self.drawn[kind] = handed + count    # variates handed out, not taken from the stream
        reflected = blocks - 2.0 * (blocks @ self.direction)[:, None] * self.direction
        buffer = np.concatenate([self._mirrored, reflected.ravel()])
        self._mirrored = buffer[count:]
        return buffer[:count]
