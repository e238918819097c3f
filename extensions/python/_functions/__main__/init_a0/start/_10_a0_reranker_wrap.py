from helpers.extension import Extension


class A0RerankerWrapAtStart(Extension):
    """Wrap the memory search once at every start, before chats load. Never raises:
    an exception here would abort Agent Zero's start-up."""

    def execute(self, **kwargs):
        try:
            from usr.plugins.a0_reranker.helpers import reranker
            from usr.plugins.a0_reranker.helpers.recall import wrapper

            wrapper.ensure_wrapped()
            reranker.warm_up()
        except Exception:
            pass
        try:  # a key an older version stored: bound to the server saved with it (hooks.py)
            from helpers import dotenv, plugins
            from usr.plugins.a0_reranker.helpers import config_store

            config_store.bind_unbound_key(dotenv.get_dotenv_file_path(), plugins.get_plugin_config("a0_reranker"))
        except Exception:
            pass
