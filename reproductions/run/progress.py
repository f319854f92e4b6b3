"""Progress of a long step, readable in a terminal and in a CI log alike.

In a terminal (stderr is a tty) a tqdm bar with its time estimate. Elsewhere (a pipe, a CI log, where a bar
would be one endless line or nothing at all) plain lines on stderr: one when the step starts, one
every PLAIN_INTERVAL_SECONDS while it runs ("tasks 12/40, elapsed 1:03, about 2:10 left"), one when it ends.
Result lines (`write`) go to stdout, flushed at once, without breaking the bar.

The time left is the elapsed time scaled by the work left over the work done. Work is the count of steps, or, when
the steps carry a size (`work`: the runner gives each task's `Task.cost`), their sizes: one hour-long task among
fifty short ones then no longer makes the estimate hours too short or too long. A step that took no time (a task
without its data) leaves the work to do instead of counting as work done.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import typer
from tqdm.auto import tqdm

# seconds between two plain progress lines; DPVERIFY_PROGRESS_SECONDS overrides it (a CI that wants fewer lines)
PLAIN_INTERVAL_SECONDS = float(os.environ.get("DPVERIFY_PROGRESS_SECONDS", "20"))


def clock(seconds: float) -> str:
    """1:03, 12:05, 1:02:03."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """`with Progress(total, "tasks") as progress: ... progress.update()`; disabled: silent (results still written).
    The plain lines come from a timer thread, so a step that takes minutes still shows the run is alive."""

    def __init__(self, total: int, description: str, unit: str = "it", enabled: bool = True,
                 work: float = 0.0) -> None:
        self.total, self.description, self.enabled = total, description, enabled
        self.done = 0
        self.work, self.work_done = float(work), 0.0     # work = 0: the estimate counts steps
        self.bar = None
        terminal = enabled and sys.stderr.isatty()
        self.plain = enabled and not terminal and total > 0
        self.started = time.monotonic()
        self._stop = threading.Event()
        if terminal:
            self.bar = tqdm(total=total, desc=description, unit=unit, leave=False)

    def __enter__(self) -> Progress:
        if self.plain:
            self._line(f"{self.description} 0/{self.total}")
            threading.Thread(target=self._tick, name="dpverify-progress", daemon=True).start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        if self.bar is not None:
            self.bar.close()
        elif self.plain and exc_info[0] is None:
            self._line(f"{self.description} {self.done}/{self.total}, done in {clock(time.monotonic() - self.started)}")

    def update(self, count: int = 1, work: float = 0.0, took_time: bool = True) -> None:
        """`count` steps done, of size `work` in all; `took_time=False`: they ended at once (their size is no
        longer work to do, and is not work done either)."""
        self.done += count
        if took_time:
            self.work_done += work
        else:
            self.work -= work
        if self.bar is not None:
            self.bar.update(count)
            left = self._left(time.monotonic() - self.started)
            if self.work > 0 and left is not None:
                self.bar.set_postfix_str(f"about {clock(left)} left by size")

    def set_postfix_str(self, text: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(text)

    def write(self, line: str) -> None:
        """A result line on stdout, now (above the bar in a terminal)."""
        if self.bar is not None:
            tqdm.write(line, file=sys.stdout)
            sys.stdout.flush()
        else:
            typer.echo(line)   # click flushes after every echo

    def status(self) -> str:
        """"tasks 12/40, elapsed 1:03, about 2:10 left" (no estimate before some work is done)."""
        elapsed = time.monotonic() - self.started
        line = f"{self.description} {self.done}/{self.total}, elapsed {clock(elapsed)}"
        left = self._left(elapsed)
        if left is not None:
            line += f", about {clock(left)} left"
        return line

    def _left(self, elapsed: float) -> float | None:
        """Seconds left, from the work (or the steps) done so far; None before any."""
        if self.work > 0:
            return elapsed / self.work_done * max(self.work - self.work_done, 0.0) if self.work_done else None
        return elapsed / self.done * (self.total - self.done) if self.done else None

    def _tick(self) -> None:
        while not self._stop.wait(PLAIN_INTERVAL_SECONDS):
            self._line(self.status())

    @staticmethod
    def _line(text: str) -> None:
        # one write with its newline: piped, stderr writes through, and print()'s separate newline let a verdict
        # line on stdout land between the two (a glued line in a merged CI log)
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
