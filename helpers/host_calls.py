"""What the plugin reads of a host call it extends. Agent Zero's ``@extensible`` hands an
extension ``data`` = {args, kwargs, result, exception} of the call; its API handlers' actions
are methods ``(self, input)``, ``input`` the request's JSON."""

from __future__ import annotations

from typing import Any

from .settings import PLUGIN_NAME


def for_this_plugin(data: Any) -> bool:
    """Whether the host call ``data`` describes is a request about this plugin (its
    ``plugin_name``): the plugin's extensions of the host's plugin actions leave every other
    plugin's alone."""
    return request_of(data).get("plugin_name") == PLUGIN_NAME


def request_of(data: Any) -> dict:
    """The ``input`` of an API handler's action (``_save_config(self, input)``, ...), or {}."""
    if not isinstance(data, dict):
        return {}
    args, kwargs = data.get("args"), data.get("kwargs")
    if isinstance(args, tuple) and len(args) > 1:
        request = args[1]
    elif isinstance(kwargs, dict):
        request = kwargs.get("input")
    else:
        request = None
    return request if isinstance(request, dict) else {}
