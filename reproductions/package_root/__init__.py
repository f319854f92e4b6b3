"""dpverify: verify and reproduce papers on differentially private decentralized optimization.

This folder is installed as the top package `dpverify` (pyproject's `package-dir`); its floors are
`dpverify.algorithms` (what is run), `dpverify.theory` (what is claimed) and
`dpverify.reproductions` (what is shown). It lives on the top floor because it re-exports from it.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("dpverify")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "unknown"


def __getattr__(name: str):
    """`dpverify.verify`, imported on first use (it loads the harness, which `import dpverify` should not)."""
    if name == "verify":
        from dpverify.reproductions.verify.command import verify

        return verify
    raise AttributeError(f"module 'dpverify' has no attribute {name!r}")
