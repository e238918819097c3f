from helpers.extension import Extension


class A0RerankerRecallClock(Extension):
    """Stamp when the host's recall starts: ``_50_recall_memories`` (which sorts after this
    file) creates the recall task right after, under its 30 s wait_for, and the task copies
    this stamp with its context. The plugin's deadline counts from here, not from its first
    search, so a slow query preparation cannot push the recall past the host's clock."""

    async def execute(self, **kwargs):
        try:
            from usr.plugins.a0_reranker.helpers.recall import deadlines

            deadlines.stamp_host_recall_start()
        except Exception:
            pass
