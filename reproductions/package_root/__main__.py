"""`python -m dpverify`: the same as the `dpverify` command."""

from dpverify.reproductions.cli import main

main()
