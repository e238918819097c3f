"""Stand-in for helpers/subagents.get_paths: the folder search order the host uses for
extensions, tools, prompts, skills and plugin toggles."""
from typing import TYPE_CHECKING

from helpers import cache, files

if TYPE_CHECKING:
    from agent import Agent

GLOBAL_DIR = "."
USER_DIR = "usr"
DEFAULT_AGENTS_DIR = "agents"
USER_AGENTS_DIR = "usr/agents"
PATHS_CACHE_AREA = "subagent_paths(plugins)"

cache.toggle_area(PATHS_CACHE_AREA, False)  # the host keeps this area switched off


def get_paths(
    agent: "Agent|None",
    *subpaths,
    must_exist_completely: bool = True,
    include_project: bool = True,
    include_user: bool = True,
    include_default: bool = True,
    include_plugins: bool = True,
    default_root: str = "",
) -> list[str]:
    """Folders for `subpaths`, highest priority first: project agent, project,
    usr/agents/<profile>, plugin agents/<profile>, agents/<profile>, usr, enabled
    plugins (alphabetical), then the default root."""
    from helpers import plugins, projects

    key = cache.determine_cache_key(agent, *subpaths, must_exist_completely, include_project,
                                    include_user, include_default, include_plugins, default_root)
    cached = cache.get(PATHS_CACHE_AREA, key)
    if cached is not None:
        return cached

    checked = subpaths if must_exist_completely else ()
    profile = agent.config.profile if agent and agent.config.profile else ""
    found: list[str] = []

    def consider(base: str, *, dedupe: bool = False):
        target = files.get_abs_path(base, *subpaths)
        if must_exist_completely and not files.exists(files.get_abs_path(base, *checked)):
            return
        if dedupe and target in found:
            return
        found.append(target)

    if include_project and agent:
        project = projects.get_context_project_name(agent.context) or ""
        if project and profile:
            consider(projects.get_project_meta(project, "agents", profile))
        if project:
            consider(projects.get_project_meta(project))

    if profile:
        consider(files.get_abs_path(USER_AGENTS_DIR, profile))
        if include_plugins:
            for plugin_dir in plugins.get_enabled_plugin_paths(agent, "agents", profile):
                consider(plugin_dir)
        consider(files.get_abs_path(DEFAULT_AGENTS_DIR, profile))

    if include_user:
        consider(files.get_abs_path(USER_DIR))

    if include_plugins:
        for plugin_dir in plugins.get_enabled_plugin_paths(agent):
            consider(plugin_dir, dedupe=True)

    if include_default:
        consider(files.get_abs_path(default_root))

    cache.add(PATHS_CACHE_AREA, key, found)
    return found
