from helpers.extension import Extension


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
            from usr.plugins.a0_reranker.helpers import readme_view
            from usr.plugins.a0_reranker.helpers.host_calls import for_this_plugin

            if not for_this_plugin(data) or not isinstance(result.get("content"), str):
                return

            result["content"] = readme_view.for_agent_zero(result["content"])
        except Exception:
            pass
