"""`python -m dpverify`: the same as the `dpverify` command."""

from dpverify.reproductions.launch import main

main()
