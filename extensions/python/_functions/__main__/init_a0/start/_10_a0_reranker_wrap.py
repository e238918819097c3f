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
