"""Stand-in for Agent Zero's api/plugins.py (agent0ai/agent-zero 2d95cd9f): the ``Plugins``
handler with the actions the settings modal and the plugin list's README use, each ``@extension.extensible`` as
in the host. The host imports api files by their file name, so the methods' extension
points are ``_functions/plugins/Plugins/<method>/start|end``; a plugin's extension there
runs here as it does there (the plugin's Save refusal is one). Any exception becomes the
ApiHandler's 500 text, as in the host."""

from helpers import extension, files, plugins
from helpers.api import ApiHandler, Request, Response


class Plugins(ApiHandler):
    """Core plugin management API (cut down to get_config, get_default_config, save_config, get_doc)."""

    async def process(self, input: dict, request: Request) -> dict | Response:
        action = input.get("action", "")
        if action == "get_config":
            return self._get_config(input)
        if action == "get_default_config":
            return self._get_default_config(input)
        if action == "save_config":
            return self._save_config(input)
        if action == "get_doc":
            return self._get_doc(input)
        return Response(status=400, response=f"Unknown action: {action}")

    @extension.extensible
    def _get_config(self, input: dict) -> dict | Response:
        plugin_name = input.get("plugin_name", "")
        project_name = input.get("project_name", "")
        agent_profile = input.get("agent_profile", "")
        if not plugin_name:
            return Response(status=400, response="Missing plugin_name")
        result = plugins.find_plugin_assets(
            plugins.CONFIG_FILE_NAME,
            plugin_name=plugin_name,
            project_name=project_name,
            agent_profile=agent_profile,
            only_first=True,
        )
        if result:
            entry = result[0]
            path = entry.get("path", "")
            settings = files.read_file_json(path) if path else {}
            loaded_project_name = entry.get("project_name", "")
            loaded_agent_profile = entry.get("agent_profile", "")
        else:
            settings = plugins.get_plugin_config(plugin_name, agent=None) or {}
            default_path = files.get_abs_path(plugins.find_plugin_dir(plugin_name), plugins.CONFIG_DEFAULT_FILE_NAME)
            path = default_path if files.exists(default_path) else ""
            loaded_project_name = ""
            loaded_agent_profile = ""
        return {
            "ok": True,
            "loaded_path": path,
            "loaded_project_name": loaded_project_name,
            "loaded_agent_profile": loaded_agent_profile,
            "data": settings,
        }

    @extension.extensible
    def _get_default_config(self, input: dict) -> dict | Response:
        plugin_name = input.get("plugin_name", "")
        if not plugin_name:
            return Response(status=400, response="Missing plugin_name")
        settings = plugins.get_default_plugin_config(plugin_name)
        return {"ok": True, "data": settings or {}}

    @extension.extensible
    def _save_config(self, input: dict) -> dict | Response:
        plugin_name = input.get("plugin_name", "")
        project_name = input.get("project_name", "")
        agent_profile = input.get("agent_profile", "")
        settings = input.get("settings", {})
        if not plugin_name:
            return Response(status=400, response="Missing plugin_name")
        if not isinstance(settings, dict):
            return Response(status=400, response="settings must be an object")
        plugins.save_plugin_config(plugin_name, project_name, agent_profile, settings)
        return {"ok": True}

    @extension.extensible
    def _get_doc(self, input: dict) -> dict | Response:
        plugin_name = input.get("plugin_name", "")
        doc = input.get("doc", "")
        if not plugin_name:
            return Response(status=400, response="Missing plugin_name")
        if doc not in ("readme", "license"):
            return Response(status=400, response="doc must be 'readme' or 'license'")
        plugin_dir = plugins.find_plugin_dir(plugin_name)
        if not plugin_dir:
            return Response(status=404, response="Plugin not found")
        filename = "README.md" if doc == "readme" else "LICENSE"
        file_path = files.get_abs_path(plugin_dir, filename)
        if not files.exists(file_path):
            return Response(status=404, response=f"{filename} not found")
        return {"ok": True, "content": files.read_file(file_path), "filename": filename}
