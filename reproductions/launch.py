"""The `dpverify` command's entry point (and `python -m dpverify`'s). Loading the CLI imports the harness, a second
or two; a Ctrl-C then, before `cli.main` can catch it, would print Python's traceback. Here it ends as an interrupted
command does: one line, status 130."""

from __future__ import annotations

import sys

from dpverify.reproductions.exit_status import EXIT_INTERRUPTED

INTERRUPTED_WHILE_LOADING = "interrupted while loading: nothing was run"


def main(argv: list[str] | None = None) -> None:
    """Load the CLI and run it (argv: its arguments, default sys.argv[1:]); ends in sys.exit with its status."""
    try:
        from dpverify.reproductions.cli import main as run
    except KeyboardInterrupt:
        print(INTERRUPTED_WHILE_LOADING, file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    run(argv)
