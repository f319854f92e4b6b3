"""User code runs isolated: an implementation (or a mechanism) is called in a worker process of its own.

Why: user code may exit (`sys.exit`, `os._exit`), crash the interpreter, be ended by a signal, hang, or
mutate what it is handed. Called in the harness's process, an exit ends the harness with the user's status
(a silent 0 reads as a pass) and a mutated setting is what the reference then runs on. In a worker, each
of these is the user code's failure, named, and never the harness's outcome:

- the worker answers every call with the result or with the exception raised (SystemExit included);
- a call that gets no answer because the worker died says how (exit status, signal), and one that runs
  past the time limit is ended, saying where it was (file, line, and a round counter if it has one);
- each call unpickles its own copy of its arguments from bytes sent once (a setting is sent once, not
  per call), with every array read-only: a mutation raises in the user's code and reaches nothing else;
- the module is imported in the worker, never here, so its import-time code is isolated too.

A spec (`module:object`, `path/to/file.py:object`) starts a worker by `spawn`, a fresh interpreter. A
callable handed over from Python has no spec a fresh interpreter could load, so its worker is forked.
Every failure is also recorded on the `Isolated` object (`failures`): `dpverify verify` fails an
implementation that failed anywhere, even where a check could only report not-run.
"""

from __future__ import annotations

import atexit
import ctypes
import io
import multiprocessing
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import traceback
import weakref
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from dpverify.algorithms.core.errors import ImplementationError
from dpverify.algorithms.core.tape import NoiseTape

# default: seconds one call of the user's code may take. The examples' per-agent loops take at most about 0.1 s
# per call of verify's settings (the longest claim runs, wang-basar's 3000-round Table 1 runs, about 1 s); 60 s
# is far beyond any of them and ends a hung call within a minute. Plausible 10-600 s; --timeout sets it.
DEFAULT_TIMEOUT = 60.0
START_TIMEOUT = 120.0   # default: seconds to start a worker and import the user's module (a cold import of torch is ~10 s)
KEPT = 256              # arguments kept in a worker by identity (settings; wang-basar sends one per start point)
BATCH = 128             # calls sent to a worker at once (arrays_many): its latency is paid once per batch
PR_SET_PDEATHSIG = 1    # linux/prctl.h
ROUND_NAMES = ("t", "k", "round", "iteration", "step", "n")   # loop counters a hang report names, innermost first


class ImplementationFailed(ImplementationError):
    """The user's code failed in a way that is its own: it raised, exited, crashed, hung or returned
    something that cannot be sent back. Always a failure of the implementation, never a pass."""


class Isolated:
    """A callable that runs `spec` (or the in-process `function`) in a worker process (module docstring).
    `describe` names it in messages ("the implementation", "the mechanism")."""

    def __init__(self, spec: str, function: Callable | None = None, *, timeout: float = DEFAULT_TIMEOUT,
                 describe: str = "the implementation", callable_only: bool = True):
        self.spec, self.timeout, self.describe, self.callable_only = spec, float(timeout), describe, callable_only
        self._function = function
        self._process = None
        self._connection = None
        self._loading = False       # launched, its answer to "load" not read yet (start reads it)
        self._kept: dict[int, tuple[int, Any]] = {}    # id(argument) -> (token, argument): sent once to the worker
        self._tokens = 0
        self.digest: str | None = None       # SHA-256 of the user's source files (implementations.source_digest)
        self.calls = 0
        self.failures: list[str] = []
        # processes over which arrays_many may spread calls that share no generator (verify's --jobs); the others
        # are started when first needed, load the same spec and record their failures here too
        self.workers = 1
        self._others: list[Isolated] = []
        _RUNNING.add(self)

    # ------------------------------------------------------------------ the worker's life
    def start(self) -> Isolated:
        """Start the worker (if none runs) and load the user's object in it. A module that cannot be found
        or imported raises ImplementationNotFound (bad input); one that exits, crashes or hangs on import
        raises ImplementationFailed."""
        self.launch()
        if not self._loading:
            return self
        self._loading = False
        answer = self._answer(START_TIMEOUT, "while loading")
        if answer[0] == "not-found":
            from dpverify.theory.door.implementations import ImplementationNotFound

            self.close()
            raise ImplementationNotFound(answer[1])
        self.digest = answer[1]
        return self

    def launch(self) -> None:
        """Start the worker process (if none runs) without waiting for it to load the user's object (`start`
        waits): several workers load at once."""
        if self._process is not None and self._process.is_alive():
            return
        ours, theirs = socket.socketpair()
        if self._function is None:
            # a fresh interpreter, not multiprocessing's spawn: that re-runs the caller's main script in the worker
            self._process = _Spawned(subprocess.Popen(
                [sys.executable, "-c", "from dpverify.theory.door.isolation import main; main()", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL))
        else:
            self._process = multiprocessing.get_context("fork").Process(
                target=_serve, args=(Connection(theirs.detach()), self.spec, self._function), daemon=True)
            self._process.start()
        theirs.close()
        self._connection, self._kept = Connection(ours.detach()), {}
        if self._function is None:   # the caller's import path (its modules load there too) and bytecode setting
            self._send(("load", self.spec, self.callable_only, list(sys.path), sys.dont_write_bytecode))
        self._loading = True

    def fresh(self) -> Isolated:
        """The runner, started, on the source as it is now: a worker that loaded an earlier version of the
        user's files (their digest, read again, has changed) is replaced."""
        self.start()
        self._send(("digest",))
        if self._answer(self.timeout, "while reading its source")[1] != self.digest:
            self.close()
            self.start()
        return self

    def launch_team(self) -> list[Isolated]:
        """This runner and workers - 1 others on the same spec, all launched, so that they load at once and
        while the caller works on (here, not in a thread: a fork)."""
        while len(self._others) < self.workers - 1:
            other = Isolated(self.spec, self._function, timeout=self.timeout, describe=self.describe,
                             callable_only=self.callable_only)
            other.failures = self.failures
            self._others.append(other)
        for other in self._others:
            other.timeout = self.timeout
        team = [self] + self._others[:self.workers - 1]
        for member in team:
            member.launch()
        return team

    def _team(self) -> list[Isolated]:
        """The team (launch_team), loaded, all on one version of the user's source."""
        team = [member.start() for member in self.launch_team()]
        if any(other.digest != self.digest for other in team):    # the source changed in between: all on today's
            for other in team:
                other.close()
            team = [member.start() for member in self.launch_team()]
        return team

    def close(self) -> None:
        """End this runner's worker and its team's."""
        for other in getattr(self, "_others", ()):
            other.close()
        self._end()

    def _end(self) -> None:
        """End this runner's own worker only."""
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join(5)
        if self._connection is not None:
            self._connection.close()
        self._process = self._connection = None

    def __del__(self):   # a worker never outlives its proxy (daemon workers also end with this process)
        try:
            self.close()
        except Exception:   # interpreter shutdown: the modules it needs may be gone already
            pass

    def _fail(self, message: str) -> ImplementationFailed:
        """Its worker ended, and the failure recorded. Only its own worker: the team's others may be in the middle
        of a batch (_shared), which they finish; killing them there would record their death as a second failure."""
        self.failures.append(message)
        self._end()
        return ImplementationFailed(message)

    def _answer(self, timeout: float, during: str):
        """The worker's next answer; its death or a hang is the user code's failure."""
        connection, process = self._connection, self._process
        if not connection.poll(timeout):
            where = ""
            try:      # ask where it is (signal handler in _serve); code stuck outside Python cannot answer
                os.kill(process.pid, signal.SIGUSR1)
                if connection.poll(2.0) and (said := _received(connection))[0] == "where":
                    where = f" ({said[1]})"
            except (OSError, EOFError, pickle.UnpicklingError, LookupError, TypeError):   # nothing said, or garbage
                pass
            raise self._fail(f"{self.describe} did not return within {timeout:g} s {during}{where}: ended "
                             "(--timeout sets the limit)")
        try:
            answer = _received(connection)
        except (EOFError, OSError):
            process.join(5)
            raise self._fail(f"{self.describe} ended its process {during}: {_ending(process.exitcode)}") from None
        except pickle.UnpicklingError as refused:    # not a pickle, or one that names a class outside the allow-list
            raise self._fail(f"{self.describe} sent back something other than numbers and arrays {during} "
                             f"({refused}): refused unread") from None
        if not (isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[0], str)):   # its socket, forged
            raise self._fail(f"{self.describe} sent back an answer that is not the worker's {during}: refused")
        if answer[0] in ("raised", "failed"):
            message = f"{self.describe} {answer[1]}"
            if answer[0] == "failed":
                raise self._fail(message + f" {during}")
            self.failures.append(message)
            raise ImplementationFailed(message)
        return answer

    # ------------------------------------------------------------------ calls
    def __call__(self, *arguments):
        """function(*arguments) in the worker; the result as the worker pickled it (a mechanism's outputs)."""
        return self._batch([arguments], None)[0]

    def arrays(self, arguments: tuple, keys: tuple[str, ...]) -> dict[str, np.ndarray]:
        """function(*arguments)'s transcript: the entries `keys` of the returned mapping (or attributes of the
        returned object) that it has, each as a numpy array in the dtype the user's code computed."""
        return self._batch([arguments], tuple(keys))[0]

    def arrays_many(self, calls: list[tuple], keys: tuple[str, ...]) -> list[dict[str, np.ndarray]]:
        """`arrays` for each argument tuple of `calls`, in order, as one stream: the worker runs them one after
        another (a generator passed to several calls draws on from where the previous call left it, as it would
        here) and sends each result as it is done, each call within the time limit. Calls that share no generator
        (each its own, or none) are spread over `workers` processes (_shared): the same results as one process
        gives, in order."""
        if self.workers > 1 and len(calls) >= 2 * BATCH and _independent(calls):
            return self._shared(calls, tuple(keys))
        return self._stream(calls, keys)

    def _shared(self, calls: list[tuple], keys: tuple[str, ...]) -> list[dict[str, np.ndarray]]:
        """Independent calls over the team, a batch at a time: each worker takes the next batch as soon as it is
        free, so none waits at the end for a slower one (fixed parts did, for whatever else shared its core). A
        failure anywhere stops the others taking more; it is raised after they finish their batch."""
        team = self._team()
        batches = [calls[part] for part in _guided(len(calls), len(team))]
        done: list[list] = [[] for _ in batches]
        order, lock, failed = iter(range(len(batches))), threading.Lock(), threading.Event()

        def serve(runner: Isolated) -> None:     # in a thread of its own, waiting on its worker's socket
            while not failed.is_set():
                with lock:
                    index = next(order, None)
                if index is None:
                    return
                try:
                    done[index] = runner._batch(batches[index], keys)
                except BaseException:
                    failed.set()
                    raise
        with ThreadPoolExecutor(len(team)) as pool:
            for future in [pool.submit(serve, runner) for runner in team]:
                future.result()
        return [result for batch in done for result in batch]

    def _stream(self, calls: list[tuple], keys: tuple[str, ...]) -> list[dict[str, np.ndarray]]:
        results = []
        for first in range(0, len(calls), BATCH):
            results += self._batch(calls[first:first + BATCH], tuple(keys))
        return results

    def value(self) -> Any:
        """The object the spec names as a value, or what it returns if it is a function (audit-mechanism's pair)."""
        self.start()
        self._send(("value",))
        return self._answer(self.timeout, "while handing over its value")[1]

    def _send(self, message) -> None:
        try:
            self._connection.send(message)
        except (BrokenPipeError, EOFError, OSError):
            self._process.join(5)
            raise self._fail(f"{self.describe} ended its process: {_ending(self._process.exitcode)}") from None

    def _token(self, argument) -> int:
        """The worker's token for a kept argument, sending it first if the worker does not hold it (least recently
        used ones are forgotten beyond KEPT; a batch uses at most BATCH < KEPT of them, so none of its own)."""
        if id(argument) in self._kept:
            self._kept[id(argument)] = self._kept.pop(id(argument))     # most recently used last
        else:
            if len(self._kept) >= KEPT:
                self._send(("forget", self._kept.pop(next(iter(self._kept)))[0]))
            self._tokens += 1
            self._kept[id(argument)] = (self._tokens, argument)     # held, so that its id is not reused
            self._send(("keep", self._tokens, *_frozen(argument)))
        return self._kept[id(argument)][0]

    def _batch(self, calls: list[tuple], keys: tuple[str, ...] | None) -> list:
        """Run `calls` (argument tuples) in the worker. Live arguments (_is_live) are sent once per batch, each
        distinct object once, and their final state is adopted here."""
        self.start()
        live: list = []                      # distinct live objects of the batch, by identity
        index: dict[int, int] = {}
        plan = []
        for arguments in calls:
            refs = []
            for argument in arguments:
                if _is_live(argument):
                    if id(argument) not in index:
                        index[id(argument)] = len(live)
                        live.append(argument)
                    refs.append(("live", index[id(argument)]))
                else:
                    refs.append(("kept", self._token(argument)))
            plan.append(tuple(refs))
        self._send(("batch", plan, live, keys))
        results = []
        for _ in calls:
            self.calls += 1
            results.append(self._answer(self.timeout, f"in call {self.calls}")[1])
        for mine, state in zip(live, self._answer(self.timeout, "at the end of its calls")[1]):
            _adopt(mine, state)
        return results


_RUNNING: weakref.WeakSet[Isolated] = weakref.WeakSet()


@atexit.register
def _end_all() -> None:
    """No worker outlives the harness's process (one hung in user code would never read the closed socket)."""
    for running in list(_RUNNING):
        running.close()


def _is_live(argument) -> bool:
    """Arguments sent with every call (and returned, so that their state advances here as it did there): random
    generators and small values. Everything else (a setting, a dataset) is sent once and kept."""
    return isinstance(argument, (np.random.Generator, NoiseTape, int, float, str, type(None)))


def _independent(calls: list[tuple]) -> bool:
    """No generator (or noise tape) is handed to two of the calls: their order does not matter."""
    stateful = [id(argument) for arguments in calls for argument in arguments
                if isinstance(argument, (np.random.Generator, NoiseTape))]
    return len(stateful) == len(set(stateful))


def _guided(count: int, workers: int) -> list[slice]:
    """Batches of at most BATCH calls that shrink towards the end, each a share of what is left (down to BATCH / 16,
    below which a round trip costs more than it saves): the workers' last batches are short, so none waits long
    for another's."""
    parts, first = [], 0
    while first < count:
        size = min(BATCH, max(BATCH // 16, -(-(count - first) // (2 * workers))))
        parts.append(slice(first, min(count, first + size)))
        first += size
    return parts


def _state(argument) -> Any:
    """What a live argument reached in the worker, for its original to adopt (_adopt), as plain data: a generator's
    bit-generator state (a small dict; a whole Generator, unpickled, first seeds a new one from the OS), a noise
    tape's position."""
    if isinstance(argument, np.random.Generator):
        return argument.bit_generator.state
    return argument.position() if isinstance(argument, NoiseTape) else None


def _adopt(mine, state) -> None:
    """Give a generator here the state its copy reached in the worker (the next call draws on from there)."""
    if isinstance(mine, np.random.Generator):
        mine.bit_generator.state = state
    elif isinstance(mine, NoiseTape):
        mine.restore(state)


# What the harness unpickles from a worker: plain data (numbers, strings, bytes, lists, tuples, dicts, sets) and
# numpy arrays, scalars and dtypes, nothing else. A worker runs user code, which could send a pickle whose loading
# runs code in the harness's process (an object with a __reduce__), outside the worker that isolates it; every
# answer (_answer) is read through this. pickle offers no such restriction itself, hence the allow-list
# (pickle's documentation, "Restricting Globals").
ALLOWED_GLOBALS = frozenset({
    ("builtins", "complex"), ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "bytearray"),
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "scalar"),
    ("numpy.core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "scalar"),   # numpy < 2
})


class _PlainData(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) not in ALLOWED_GLOBALS:
            raise pickle.UnpicklingError(f"{module}.{name}")
        return super().find_class(module, name)


def _received(connection):
    """The next message of a worker, unpickled as plain data only (ALLOWED_GLOBALS)."""
    return _PlainData(io.BytesIO(connection.recv_bytes())).load()


def _ending(exitcode: int | None) -> str:
    if exitcode is None:
        return "it did not end either (no answer)"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"ended by {name} (a crash of the interpreter or a signal)"
    return f"exit status {exitcode} without an answer (os._exit, or an exit outside Python)"


class _Spawned:
    """A worker started as a fresh interpreter, with the attributes of a multiprocessing.Process used here."""

    def __init__(self, popen: subprocess.Popen):
        self._popen, self.pid = popen, popen.pid

    @property
    def exitcode(self) -> int | None:
        return self._popen.poll()     # negative: ended by that signal, as Process.exitcode

    def is_alive(self) -> bool:
        return self._popen.poll() is None

    def kill(self) -> None:
        self._popen.kill()

    def join(self, timeout: float | None = None) -> None:
        try:
            self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            pass


# ---------------------------------------------------------------------- the worker
def main() -> None:
    """A spawned worker's entry (`python -c ...` with the socket's file descriptor): the caller's import path and
    the spec come first. On Linux the worker is ended when the harness's process ends, however it ends (a worker
    hung in user code would otherwise outlive a harness killed by Ctrl-C or a CI time limit)."""
    try:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (AttributeError, OSError):    # not Linux: the harness's exit handler ends its workers (_end_all)
        pass
    connection = Connection(int(sys.argv[1]))
    _, spec, callable_only, sys.path[:], sys.dont_write_bytecode = connection.recv()
    _serve(connection, spec, None, callable_only)


def _serve(connection, spec: str, function: Callable | None, callable_only: bool = True) -> None:
    """The worker's loop: load, then answer `keep`, `forget`, `call` and `value` messages until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C is the harness's to handle; it ends this process
    signal.signal(signal.SIGUSR1, partial(_where, connection))
    from dpverify.theory.door.implementations import (
        ImplementationNotFound,
        load_implementation,
        load_object,
        source_digest,
    )

    try:
        found = function if function is not None else (load_implementation if callable_only else load_object)(spec)
        digest = source_digest(found) if callable(found) else None
    except ImplementationNotFound as error:
        connection.send(("not-found", str(error)))
        return
    except BaseException as error:   # SystemExit, KeyboardInterrupt and the like on import: the module's failure
        connection.send(("failed", f"failed on import: {_raised(error)}"))
        return
    connection.send(("ready", digest))
    kept: dict[int, tuple[bytes, list[np.ndarray]]] = {}
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        if message[0] == "keep":
            _, token, skeleton, arrays = message
            kept[token] = (skeleton, [np.frombuffer(data, dtype).reshape(shape) for dtype, shape, data in arrays])
        elif message[0] == "forget":
            kept.pop(message[1], None)
        elif message[0] == "digest":
            _reply(connection, ("ok", source_digest(found) if callable(found) else None))
        elif message[0] == "value":
            try:
                _reply(connection, ("ok", found() if callable(found) else found))
            except BaseException as error:
                _reply(connection, ("raised", _raised(error)))
        else:
            _, plan, live, keys = message
            for refs in plan:
                try:
                    arguments = [live[at] if kind == "live" else _thawed(*kept[at]) for kind, at in refs]
                    result = found(*arguments)
                    answer = ("ok", _transcript(result, keys) if keys is not None else np.asarray(result))
                except ImplementationError as error:    # what it returned is no transcript (_transcript)
                    answer = ("raised", str(error))
                except BaseException as error:   # anything, SystemExit included: reported, the batch ends there
                    hint = (" (the noise tape offers laplace, normal and standard_normal; an implementation that draws "
                            "its noise otherwise is judged with noise='own')"
                            if isinstance(error, AttributeError) and any(isinstance(a, NoiseTape) for a in live) else "")
                    answer = ("raised", _raised(error) + hint)
                if not _reply(connection, answer):
                    break
            else:
                _reply(connection, ("ok", [_state(argument) for argument in live]))


def _reply(connection, answer) -> bool:
    """Send `answer`; False if it reports a failure (the batch it belongs to ends)."""
    try:
        connection.send(answer)
    except Exception as error:   # an unpicklable result: the user's output, reported as such
        connection.send(("raised", f"returned something that cannot be sent back ({type(error).__name__}: {error})"))
        return False
    return answer[0] == "ok"


def _raised(error: BaseException) -> str:
    if isinstance(error, SystemExit):
        return f"called sys.exit({error.code!r})"
    location = ""
    frames = traceback.extract_tb(error.__traceback__)
    if frames:
        last = frames[-1]
        location = f" at {Path(last.filename).name}:{last.lineno} in {last.name}"
    return f"raised {type(error).__name__}: {error}{location}"


def _transcript(result, keys: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The entries `keys` of a returned mapping (or the attributes of a returned object), as numpy arrays of the
    dtype the user computed in (torch and JAX arrays convert through np.asarray); absent ones are left out."""
    get = result.get if isinstance(result, Mapping) else partial(getattr, result)
    arrays = {}
    for key in keys:
        value = get(key, None)
        if value is not None:
            try:
                arrays[key] = np.asarray(value)
            except (TypeError, ValueError) as error:    # ragged lists and the like
                raise ImplementationError(f"returned {key} that is not an array of numbers: {error}") from None
    return arrays


def _frozen(value) -> tuple[bytes, list[tuple[str, tuple[int, ...], bytes]]]:
    """`value` pickled with its numeric arrays set apart (dtype, shape, bytes): the worker rebuilds each array
    once, over immutable bytes (so it is read-only and cannot be made writeable), and every call unpickles only
    the rest, a fresh copy of everything else, around those same arrays (_thawed)."""
    arrays: list[tuple[str, tuple[int, ...], bytes]] = []

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            if isinstance(obj, np.ndarray) and obj.dtype.kind in "biufc":
                arrays.append((obj.dtype.str, obj.shape, obj.tobytes()))
                return len(arrays) - 1
            return None

    buffer = io.BytesIO()
    Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue(), arrays


def _thawed(skeleton: bytes, arrays: list[np.ndarray]):
    """A fresh copy of a kept argument around its shared read-only arrays (_frozen)."""
    unpickler = pickle.Unpickler(io.BytesIO(skeleton))
    unpickler.persistent_load = arrays.__getitem__
    return unpickler.load()


def _where(connection, signum, frame) -> None:
    """On SIGUSR1 (the harness's time limit): say where the user's code is (its innermost frame) and the value of
    a loop counter there (ROUND_NAMES) if it has one."""
    ours = [Path(folder).resolve() for floor in ("dpverify.algorithms", "dpverify.theory", "dpverify.reproductions")
            if floor in sys.modules for folder in sys.modules[floor].__path__]   # dpverify's files are not the user's
    libraries = ("site-packages", sys.prefix, sys.base_prefix)
    user = []
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith("<") or any(part in name for part in libraries)
                or any(Path(name).resolve().is_relative_to(folder) for folder in ours)):
            user.append(frame)
        frame = frame.f_back
    if not user:
        connection.send(("where", "outside its own Python code"))
        return
    place = user[0]
    text = f"at {Path(place.f_code.co_filename).name}:{place.f_lineno} in {place.f_code.co_name}"
    counters = (f"{name} = {int(value)}" for frame in user for name in ROUND_NAMES
                if isinstance(value := frame.f_locals.get(name), (int, np.integer)) and not isinstance(value, bool))
    counter = next(counters, "")
    connection.send(("where", text + (f", {counter}" if counter else "")))
