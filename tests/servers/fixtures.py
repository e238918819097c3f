"""A pytest fixture factory, for modules that want a fresh server per test.

tei = server_fixture("tei19", max_client_batch_size=4)   # fixture named "tei"

def test_something(tei):
    httpx.post(tei.url + "/rerank", ...)
"""

from __future__ import annotations

import pytest

from .harness import start

__all__ = ["server_fixture"]


def server_fixture(kind: str, *, scope: str = "function", **options):
    """A fixture yielding a running server of `kind`, stopped afterwards.

    With a wider `scope` the server is shared: call `srv.recover()` and
    `srv.clear()` where a test must not see another's faults or requests.
    """

    @pytest.fixture(scope=scope)
    def _server():
        with start(kind, **options) as srv:
            yield srv

    return _server
