"""pytest fixture for the stand-in Agent Zero host. In tests/conftest.py:

    from tests.host.fixtures import host  # noqa: F401
"""
import pytest

from tests.host.harness import Host, host_root


@pytest.fixture
def host(tmp_path) -> Host:
    h = host_root(tmp_path)
    try:
        yield h
    finally:
        h.close()
