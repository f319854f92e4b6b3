"""dpverify's pytest plugin (entry point `pytest11`, name `dpverify`): conformance checks in your own tests.

With the fixture `dpverify_verify` (the function `dpverify.verify`):

    def test_my_dpdo_nc_conforms(dpverify_verify):
        result = dpverify_verify("dpdo-nc", my_dpdo_nc.run)
        assert result.conforms, "\\n".join(result.lines())

or with the marker, whose outcome the fixture `dpverify_result` holds:

    @pytest.mark.dpverify("dpdo-nc", impl="my_package.my_dpdo_nc:run")
    def test_conformance(dpverify_result):
        assert dpverify_result.conforms, "\\n".join(dpverify_result.lines())

The marker takes verify's keyword arguments (profile, seed, noise). docs/verify.md has the details.
"""

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "dpverify(paper, impl, profile='quick', seed=..., noise='tape'): verify the "
                            "implementation `impl` against `paper`; the fixture dpverify_result holds the outcome")


@pytest.fixture
def dpverify_verify():
    """`dpverify.verify(paper, implementation, *, profile, seed, noise)` -> Verification."""
    from dpverify.reproductions.verify.command import verify

    return verify


@pytest.fixture
def dpverify_result(request):
    """The Verification of the test's @pytest.mark.dpverify(paper, impl=...)."""
    marker = request.node.get_closest_marker("dpverify")
    if marker is None:
        raise pytest.UsageError("the dpverify_result fixture needs @pytest.mark.dpverify(paper, impl=...)")
    from dpverify.reproductions.verify.command import verify

    options = dict(marker.kwargs)
    paper = marker.args[0] if marker.args else options.pop("paper", None)
    implementation = marker.args[1] if len(marker.args) > 1 else options.pop("impl", None)
    if paper is None or implementation is None:
        raise pytest.UsageError("@pytest.mark.dpverify needs a paper and impl=module:object (or a callable)")
    return verify(paper, implementation, **options)
