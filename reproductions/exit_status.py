"""The exit statuses of the `dpverify` command (the README's "Exit status"), in a module of their own so that its entry
point (`launch`) can name one without loading the CLI."""

EXIT_HARNESS_ERROR, EXIT_USER_ERROR, EXIT_REFUTED = 1, 2, 3
EXIT_INTERRUPTED = 130      # 128 + SIGINT, the shells' status for a command ended by Ctrl-C
