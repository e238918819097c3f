from helpers.extension import Extension

PLUGIN_NAME = "a0_reranker"


class A0RerankerReadmeView(Extension):
    """This plugin's README in Agent Zero's plugin list without broken images and links: the
    end extension of the host's ``@extensible`` ``Plugins._get_doc`` (module ``plugins``)
    turns the README's repository-relative links into text (helpers/readme_view.py). Other
    documents and other plugins are left as they are. Never raises: the host's own answer
    stands."""

    def execute(self, data=None, **kwargs):
        try:
            result = data.get("result") if isinstance(data, dict) else None
            if not isinstance(result, dict) or not result.get("ok") or result.get("filename") != "README.md":
                return
            if _plugin_name(data) != PLUGIN_NAME or not isinstance(result.get("content"), str):
                return
            from usr.plugins.a0_reranker.helpers import readme_view

            result["content"] = readme_view.for_agent_zero(result["content"])
        except Exception:
            pass


def _plugin_name(data: dict) -> str:
    """The plugin_name of the request: ``_get_doc(self, input)``."""
    args = data.get("args")
    request = args[1] if isinstance(args, tuple) and len(args) > 1 else (data.get("kwargs") or {}).get("input")
    return request.get("plugin_name", "") if isinstance(request, dict) else ""
