"""Stand-in for initialize.initialize_agent(): the default AgentConfig."""
from agent import AgentConfig
from helpers import extension, settings


@extension.extensible
def initialize_agent(override_settings: dict | None = None):
    current = settings.get_settings()
    if override_settings:
        current = {**current, **override_settings}
    return AgentConfig(
        profile=current["agent_profile"],
        knowledge_subdirs=[current["agent_knowledge_subdir"], "default"],
        mcp_servers=current["mcp_servers"],
    )
