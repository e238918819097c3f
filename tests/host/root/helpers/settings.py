"""Stand-in for the parts of helpers/settings.py that plugins reach: env defaults
(A0_SET_<name>) and a minimal settings dict."""
import json
from typing import Any, TypeVar

from helpers import dotenv
from helpers.print_style import PrintStyle

T = TypeVar("T")


def get_default_value(name: str, value: T) -> T:
    """A0_SET_<name> (as written, else upper-cased) converted to the default's type."""
    raw = dotenv.get_dotenv_value(f"A0_SET_{name}",
                                  dotenv.get_dotenv_value(f"A0_SET_{name.upper()}", None))
    if raw is None:
        return value
    try:
        if isinstance(value, bool):
            return raw.strip().lower() in ("true", "1", "yes", "on")  # type: ignore[return-value]
        if isinstance(value, dict):
            return json.loads(raw.strip())
        if isinstance(value, str):
            return str(raw).strip()  # type: ignore[return-value]
        # int, float, list (character by character!), None (raises -> default)
        return type(value)(raw.strip())  # type: ignore[call-arg]
    except (ValueError, TypeError, json.JSONDecodeError) as e:
        PrintStyle.warning(f"Invalid value for A0_SET_{name}='{raw}': {e}. Using default: {value}")
        return value


def get_settings() -> dict[str, Any]:
    return {
        "agent_profile": get_default_value("agent_profile", "agent0"),
        "agent_knowledge_subdir": get_default_value("agent_knowledge_subdir", "custom"),
        "agent_memory_subdir": get_default_value("agent_memory_subdir", "default"),
        "mcp_servers": get_default_value("mcp_servers", '{"mcpServers": {}}'),
        "mcp_server_token": get_default_value("mcp_server_token", ""),
    }
