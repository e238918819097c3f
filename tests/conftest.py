"""Shared test setup: a clean plugin state per test, and no backoff sleeps."""

import pytest


def _plugin_modules():
    """The plugin's process-wide state, as the unit tests import it (``helpers.*``)."""
    from helpers import breaker, cache, client, detect, stats

    return breaker, cache, client, detect, stats


@pytest.fixture(autouse=True)
def clean_plugin_state():
    breaker, cache, client, detect, stats = _plugin_modules()
    client.set_backoff_scale(0.01)
    for reset in (breaker.BREAKER.reset, cache.CACHE.clear, detect.forget, stats.STATS.reset):
        reset()
    yield
    client.set_backoff_scale(1.0)
