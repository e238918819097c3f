"""Shared test setup: a clean plugin state per test, no backoff sleeps, and the stand-in host.

The markers (pytest.ini) sort the lanes: ``bash tests/run.sh --fast`` leaves out the
browser, real-server, load and local-model tests.
"""

import pytest

from tests.host.harness import Host, host_root


@pytest.fixture(autouse=True)
def clean_plugin_state():
    """Every process-wide cache of the plugin as the unit tests import it (``helpers.*``)
    starts empty. A stand-in host imports its own copy (``usr.plugins.a0_reranker``),
    fresh for each host."""
    from helpers import reranker
    from helpers.scoring import client

    reranker.reset_state()
    client.set_backoff_scale(0.01)
    yield
    client.set_backoff_scale(1.0)


@pytest.fixture
def host(tmp_path) -> Host:
    """A stand-in Agent Zero host with this plugin installed and activated (tests/host/)."""
    h = host_root(tmp_path)
    try:
        yield h
    finally:
        h.close()
