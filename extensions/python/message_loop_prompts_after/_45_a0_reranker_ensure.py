from helpers.extension import Extension


class A0RerankerEnsureWrapped(Extension):
    """Before each recall (``_50_recall_memories`` sorts after this file): re-apply the wrap
    if the host purged and re-imported its memory module. Cheap when already wrapped."""

    async def execute(self, **kwargs):
        try:
            from usr.plugins.a0_reranker.helpers.recall import wrapper

            wrapper.ensure_wrapped()
        except Exception:
            pass
