"""Stand-in for Agent Zero's helpers/plugins.py.

Same paths, names, signatures and behaviour for what a plugin touches: discovery in
usr/plugins then plugins, .toggle-0/.toggle-1 scope walk, config resolution with env
defaults, hooks.py loading and calling, caches and module purges. The web-UI parts
(git info, thumbnails, frontend notifications over websockets, watchdogs) are reduced
to what keeps the signatures working.
"""
from __future__ import annotations

import asyncio
import glob
import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, List, Literal, TypedDict

from pydantic import BaseModel, Field

from helpers import cache, extension, files, functions, modules
from helpers import yaml as yaml_helper

if TYPE_CHECKING:
    from agent import Agent

ToggleState = Literal["enabled", "disabled", "advanced"]


class PluginAssetFile(TypedDict):
    path: str
    project_name: str
    agent_profile: str


META_FILE_NAME = "plugin.yaml"
CONFIG_FILE_NAME = "config.json"
CONFIG_DEFAULT_FILE_NAME = "default_config.yaml"
DISABLED_FILE_NAME = ".toggle-0"
ENABLED_FILE_NAME = ".toggle-1"
TOGGLE_FILE_PATTERN = ".toggle-[01]"

HOOKS_SCRIPT = "hooks.py"
HOOKS_CACHE_AREA = "plugin_hooks(plugins)"
PLUGINS_LIST_CACHE_AREA = "plugins_list(plugins)"
ENABLED_PLUGINS_LIST_CACHE_AREA = "enabled_plugins(plugins)"
ENABLED_PLUGINS_PATHS_CACHE_AREA = "enabled_plugins_paths(plugins)"


class PluginMetadata(BaseModel):
    name: str = ""
    title: str = ""
    description: str = ""
    version: str = ""
    settings_sections: List[str] = Field(default_factory=list)
    per_project_config: bool = False
    per_agent_config: bool = False
    always_enabled: bool = False


class PluginListItem(BaseModel):
    name: str
    path: str
    display_name: str = ""
    description: str = ""
    version: str = ""
    settings_sections: List[str] = Field(default_factory=list)
    per_project_config: bool = False
    per_agent_config: bool = False
    always_enabled: bool = False
    is_custom: bool = False
    has_main_screen: bool = False
    has_config_screen: bool = False
    has_readme: bool = False
    has_license: bool = False
    has_execute_script: bool = False
    toggle_state: ToggleState = "disabled"
    thumbnail_url: str = ""


# --- change handling -----------------------------------------------------------------

@extension.extensible
def after_plugin_change(plugin_names: list[str] | None = None, python_change: bool = False):
    clear_plugin_cache(plugin_names)
    if python_change:
        refresh_plugin_modules(plugin_names)
    send_frontend_reload_notification(plugin_names)


def refresh_plugin_modules(plugin_names: list[str] | None = None):
    """Built-in ('_' prefixed) plugins live under `plugins`, the others under `usr.plugins`."""
    if not plugin_names:
        modules.purge_namespace("plugins")
        modules.purge_namespace("usr.plugins")
        return
    if any(n.startswith("_") for n in plugin_names):
        modules.purge_namespace("plugins")
    if any(not n.startswith("_") for n in plugin_names):
        modules.purge_namespace("usr.plugins")


def clear_plugin_cache(plugin_names: list[str] | None = None):
    for area in ("*(plugins)*", "*(extensions)*", "*(api)*"):
        cache.clear(area)
    # the real host also tells the browser to drop its caches (websocket); no UI here


def send_frontend_reload_notification(plugin_names: list[str] | None = None):
    # the real host suggests a page reload when a plugin with webui extensions changed
    pass


# --- discovery ----------------------------------------------------------------------

def get_plugin_roots(plugin_name: str = "") -> List[str]:
    """Plugin roots in priority order: usr/plugins first, then plugins."""
    return [
        files.get_abs_path(files.USER_DIR, files.PLUGINS_DIR, plugin_name),
        files.get_abs_path(files.PLUGINS_DIR, plugin_name),
    ]


def get_plugins_list() -> list[str]:
    if cached := cache.get(PLUGINS_LIST_CACHE_AREA, ""):
        return cached
    names: list[str] = []
    for root in get_plugin_roots():
        if not Path(root).is_dir():
            continue
        for entry in Path(root).iterdir():
            if entry.name.startswith(".") or not entry.is_dir() or entry.name in names:
                continue
            if files.exists(str(entry), META_FILE_NAME):
                names.append(entry.name)
    names.sort()
    cache.add(PLUGINS_LIST_CACHE_AREA, "", names)
    return names


def get_enhanced_plugins_list(custom: bool = True, builtin: bool = True,
                              plugin_names: list[str] | None = None) -> List[PluginListItem]:
    wanted = set(plugin_names) if plugin_names else None
    items: list[PluginListItem] = []

    def scan(root: str, is_custom: bool):
        if not Path(root).is_dir():
            return
        for d in sorted(Path(root).iterdir(), key=lambda p: p.name):
            if not d.is_dir() or d.name.startswith(".") or (wanted is not None and d.name not in wanted):
                continue
            if not (d / META_FILE_NAME).exists():
                continue
            meta = PluginMetadata.model_validate(files.read_file_yaml(str(d / META_FILE_NAME)) or {})
            thumbnail = next((f"/plugins/{d.name}/webui/thumbnail.{ext}"
                              for ext in ("png", "jpg", "jpeg", "gif", "webp")
                              if (d / "webui" / f"thumbnail.{ext}").is_file()), "")
            items.append(PluginListItem(
                name=d.name, path=files.normalize_a0_path(str(d)),
                display_name=meta.title or d.name, description=meta.description,
                version=meta.version, settings_sections=meta.settings_sections,
                per_project_config=meta.per_project_config,
                per_agent_config=meta.per_agent_config, always_enabled=meta.always_enabled,
                is_custom=is_custom,
                has_main_screen=(d / "webui" / "main.html").exists(),
                has_config_screen=(d / "webui" / "config.html").exists(),
                has_readme=(d / "README.md").exists(), has_license=(d / "LICENSE").exists(),
                has_execute_script=(d / "execute.py").exists(),
                toggle_state=get_toggle_state(d.name), thumbnail_url=thumbnail,
            ))

    if custom:
        scan(files.get_abs_path(files.USER_DIR, files.PLUGINS_DIR), True)
    if builtin:
        scan(files.get_abs_path(files.PLUGINS_DIR), False)
    return items


def get_plugin_meta(plugin_name: str):
    plugin_dir = find_plugin_dir(plugin_name)
    if not plugin_dir:
        return None
    return PluginMetadata.model_validate(
        files.read_file_yaml(files.get_abs_path(plugin_dir, META_FILE_NAME)) or {}
    )


def find_plugin_dir(plugin_name: str):
    if not plugin_name:
        return None
    for root in get_plugin_roots(plugin_name):
        if files.exists(files.get_abs_path(root, META_FILE_NAME)):
            return root
    return None


@extension.extensible
def uninstall_plugin(plugin_name):
    call_plugin_hook(plugin_name, "uninstall")
    delete_plugin(plugin_name)


@extension.extensible
def delete_plugin(plugin_name: str):
    plugin_dir = find_plugin_dir(plugin_name)
    if not plugin_dir:
        raise FileNotFoundError(f"Plugin '{plugin_name}' not found")
    if not files.is_in_dir(plugin_dir, files.get_abs_path(files.USER_DIR, files.PLUGINS_DIR)):
        raise ValueError("Only custom plugins can be deleted")
    for asset in find_plugin_assets("", plugin_name=plugin_name):
        if not asset["path"].startswith(plugin_dir):
            files.delete_dir(asset["path"])
    python_change = bool(glob.glob(plugin_dir + "/**/*.py", recursive=True))
    files.delete_dir(plugin_dir)
    after_plugin_change([plugin_name], python_change=python_change)


def get_plugin_paths(*subpaths: str) -> List[str]:
    pattern = "*/" + "/".join(subpaths) if subpaths else "*"
    found: list[str] = []
    for root in get_plugin_roots():
        found.extend(files.find_existing_paths_by_pattern(files.get_abs_path(root, pattern)))
    return found


def get_enabled_plugin_paths(agent: Agent | None, *subpaths: str) -> List[str]:
    key = cache.determine_cache_key(agent, *subpaths)
    if cached := cache.get(ENABLED_PLUGINS_PATHS_CACHE_AREA, key):
        return cached
    found: list[str] = []
    for name in get_enabled_plugins(agent):
        base = find_plugin_dir(name)
        if not base:
            continue
        if subpaths:
            found.extend(files.find_existing_paths_by_pattern(files.get_abs_path(base, *subpaths)))
        elif files.exists(base):
            found.append(base)
    cache.add(ENABLED_PLUGINS_PATHS_CACHE_AREA, key, found)
    return found


def get_enabled_plugins(agent: Agent | None) -> list[str]:
    """Every plugin starts ON; toggle files are read from the lowest-priority scope to
    the highest, so the highest explicit file wins and scopes without one inherit."""
    key = cache.determine_cache_key(agent)
    if cached := cache.get(ENABLED_PLUGINS_LIST_CACHE_AREA, key):
        return cached
    enabled: list[str] = []
    for name in get_plugins_list():
        scopes = get_plugin_roots(name)
        if agent:
            from helpers import subagents

            scopes = subagents.get_paths(
                agent, files.PLUGINS_DIR, name,
                must_exist_completely=True, include_default=False, include_user=False,
                include_plugins=False, include_project=True,
            ) + scopes
        if determined_toggle_from_paths(True, reversed(scopes)):
            enabled.append(name)
    cache.add(ENABLED_PLUGINS_LIST_CACHE_AREA, key, enabled)
    return enabled


def determined_toggle_from_paths(default: bool, paths: Iterable[str]) -> bool:
    state = default
    for scope in paths:
        if state:
            state = not files.exists(files.get_abs_path(scope, DISABLED_FILE_NAME))
        else:
            state = files.exists(files.get_abs_path(scope, ENABLED_FILE_NAME))
    return state


def get_toggle_state(plugin_name: str) -> ToggleState:
    meta = get_plugin_meta(plugin_name)
    if not meta:
        return "disabled"
    if meta.always_enabled:
        return "enabled"
    state: ToggleState = (
        "enabled" if determined_toggle_from_paths(True, reversed(get_plugin_roots(plugin_name)))
        else "disabled"
    )
    if meta.per_agent_config or meta.per_project_config:
        overrides = find_plugin_assets(
            TOGGLE_FILE_PATTERN, plugin_name=plugin_name,
            project_name="*" if meta.per_project_config else "",
            agent_profile="*" if meta.per_agent_config else "",
            only_first=False,
        )
        if any(o.get("project_name") or o.get("agent_profile") for o in overrides):
            state = "advanced"
    return state


@extension.extensible
def toggle_plugin(plugin_name: str, enabled: bool, project_name: str = "",
                  agent_profile: str = "", clear_overrides: bool = False):
    if clear_overrides:
        for toggle in find_plugin_assets(TOGGLE_FILE_PATTERN, plugin_name=plugin_name,
                                         project_name="*", agent_profile="*", only_first=False):
            files.delete_file(toggle["path"])
    on = determine_plugin_asset_path(plugin_name, project_name, agent_profile, ENABLED_FILE_NAME)
    off = determine_plugin_asset_path(plugin_name, project_name, agent_profile, DISABLED_FILE_NAME)
    files.delete_file(on)
    files.delete_file(off)
    files.write_file(on if enabled else off, "")
    after_plugin_change([plugin_name])


# --- configuration ------------------------------------------------------------------

@extension.extensible
def get_plugin_config(plugin_name: str, agent: Agent | None = None,
                      project_name: str | None = None, agent_profile: str | None = None):
    """Not cached: the file is read on every call. The hook's return value replaces it."""
    if agent is not None:
        if project_name is None:
            from helpers import projects

            project_name = projects.get_context_project_name(agent.context)
        if agent_profile is None:
            agent_profile = agent.config.profile

    found = find_plugin_asset(plugin_name, CONFIG_FILE_NAME,
                              project_name=project_name or "", agent_profile=agent_profile or "")
    path = found.get("path", "") if found else ""
    from_defaults = not path
    if from_defaults:
        plugin_dir = find_plugin_dir(plugin_name)
        if not plugin_dir:
            return None
        path = files.get_abs_path(plugin_dir, CONFIG_DEFAULT_FILE_NAME)

    result = None
    if path and files.exists(path):
        text = files.read_file(path)
        result = json.loads(text) if path.lower().endswith(".json") else yaml_helper.loads(text)
        if from_defaults:
            _apply_defaults_from_env(plugin_name, result)

    return call_plugin_hook(plugin_name, "get_plugin_config", default=result, agent=agent,
                            project_name=project_name, agent_profile=agent_profile)


def get_default_plugin_config(plugin_name: str):
    plugin_dir = find_plugin_dir(plugin_name)
    if not plugin_dir:
        return None
    path = files.get_abs_path(plugin_dir, CONFIG_DEFAULT_FILE_NAME)
    result = call_plugin_hook(plugin_name, "get_default_plugin_config", file_path=path)
    if result is None and files.exists(path):
        text = files.read_file(path)
        result = json.loads(text) if path.lower().endswith(".json") else yaml_helper.loads(text)
    return result


@extension.extensible
def save_plugin_config(plugin_name: str, project_name: str, agent_profile: str, settings: dict):
    """Writes the hook's result (None = nothing written); does NOT call after_plugin_change."""
    path = determine_plugin_asset_path(plugin_name, project_name, agent_profile, CONFIG_FILE_NAME)
    to_write = call_plugin_hook(plugin_name, "save_plugin_config", default=settings,
                                project_name=project_name, agent_profile=agent_profile,
                                settings=settings)
    if to_write is not None and path:
        files.write_file(path, json.dumps(to_write))


def find_plugin_asset(plugin_name: str, *subpaths: str, project_name="", agent_profile=""):
    found = find_plugin_assets(*subpaths, plugin_name=plugin_name, project_name=project_name,
                               agent_profile=agent_profile, only_first=True)
    return found[0] if found else None


def find_plugin_assets(*subpaths: str, plugin_name: str = "*", project_name: str = "*",
                       agent_profile: str = "*", only_first: bool = False) -> list[PluginAssetFile]:
    """Scopes, highest priority first:
    project+profile, project (only when no profile is given), usr/agents/<profile>,
    enabled plugins' agents/<profile>, agents/<profile>, usr/plugins, plugins."""
    from helpers import projects, subagents

    found: list[PluginAssetFile] = []

    def segment_after(path: str, marker: str, last: bool = False) -> str:
        at = path.rfind(marker) if last else path.find(marker)
        if at < 0:
            return ""
        rest = path[at + len(marker):]
        return rest.split("/", 1)[0]

    def collect(path: str, project: str, profile: str) -> bool:
        """True when only_first is set and something was found (stop searching)."""
        if glob.has_magic(path):
            matches = files.find_existing_paths_by_pattern(path)
        else:
            matches = [path] if files.exists(path) else []
        for match in matches:
            found.append({
                "project_name": segment_after(match, "/projects/") if project == "*" else project,
                "agent_profile": segment_after(match, "/agents/", last=True) if profile == "*" else profile,
                "path": match,
            })
            if only_first:
                return True
        return False

    if project_name:
        if agent_profile and collect(
            projects.get_project_meta(project_name, files.AGENTS_DIR, agent_profile,
                                      files.PLUGINS_DIR, plugin_name, *subpaths),
            project_name, agent_profile,
        ):
            return found
        if (not agent_profile or agent_profile == "*") and collect(
            projects.get_project_meta(project_name, files.PLUGINS_DIR, plugin_name, *subpaths),
            project_name, "",
        ):
            return found

    if agent_profile:
        if collect(files.get_abs_path(subagents.USER_AGENTS_DIR, agent_profile,
                                      files.PLUGINS_DIR, plugin_name, *subpaths), "", agent_profile):
            return found
        for plugin_base in get_enabled_plugin_paths(None):
            if collect(files.get_abs_path(plugin_base, files.AGENTS_DIR, agent_profile,
                                          files.PLUGINS_DIR, plugin_name, *subpaths), "", agent_profile):
                return found
        if collect(files.get_abs_path(subagents.DEFAULT_AGENTS_DIR, agent_profile,
                                      files.PLUGINS_DIR, plugin_name, *subpaths), "", agent_profile):
            return found

    if collect(files.get_abs_path(files.USER_DIR, files.PLUGINS_DIR, plugin_name, *subpaths), "", ""):
        return found
    collect(files.get_abs_path(files.PLUGINS_DIR, plugin_name, *subpaths), "", "")
    return found


def determine_plugin_asset_path(plugin_name: str, project_name: str, agent_profile: str, *subpaths: str):
    """Where a scope's config.json / toggle lives (global = inside usr/plugins/<name>)."""
    base = files.get_abs_path(files.USER_DIR)
    if project_name:
        from helpers import projects

        base = projects.get_project_meta(project_name)
    if agent_profile:
        base = files.get_abs_path(base, files.AGENTS_DIR, agent_profile)
    return files.get_abs_path(base, files.PLUGINS_DIR, plugin_name, *subpaths)


# --- hooks.py -------------------------------------------------------------------------

def _run_coroutine_blocking(coro):
    """The real host calls asyncio.run() and relies on nest_asyncio to allow it inside
    a running loop; without nest_asyncio the stand-in runs it on a helper thread and
    blocks the caller the same way."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def runner():
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as e:  # re-raised in the caller
            box["error"] = e

    worker = threading.Thread(target=runner, name="plugin-hook")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def call_plugin_hook(plugin_name: str, hook_name: str, default: Any = None, *args, **kwargs):
    """hooks.py is imported with modules.import_module (not in sys.modules) and cached
    per plugin; a missing hook returns `default`; exceptions propagate."""
    if cache.has(HOOKS_CACHE_AREA, plugin_name):
        hooks = cache.get(HOOKS_CACHE_AREA, plugin_name)
    else:
        plugin_dir = find_plugin_dir(plugin_name)
        if not plugin_dir:
            return default
        script = files.get_abs_path(plugin_dir, HOOKS_SCRIPT)
        hooks = modules.import_module(script) if files.exists(script) else None
        cache.add(HOOKS_CACHE_AREA, plugin_name, hooks)

    hook = getattr(hooks, hook_name, None) if hooks else None
    if not hook:
        return default
    if asyncio.iscoroutinefunction(hook):
        return _run_coroutine_blocking(functions.safe_call(hook, *args, default=default, **kwargs))
    return functions.safe_call(hook, *args, default=default, **kwargs)


def _apply_defaults_from_env(plugin_name: str, config: dict[str, Any]):
    """A0_SET_<plugin>__<key>[__<subkey>...] overrides, applied only to default_config."""
    from helpers.settings import get_default_value

    def walk(prefix: list[str], mapping: dict[str, Any]):
        for key in list(mapping):
            mapping[key] = get_default_value("__".join([plugin_name, *prefix, key]), mapping[key])
            if isinstance(mapping[key], dict):
                walk([*prefix, key], mapping[key])

    if isinstance(config, dict):
        walk([], config)
