from helpers.tool import Response, Tool


class RerankerStatus(Tool):
    """Reports whether the reranker plugin works: enabled, wrap live, endpoint and detected
    API, recent stats; with probe=true it also runs a live correctness probe."""

    async def execute(self, probe=False, **kwargs):
        try:
            from usr.plugins.a0_reranker.helpers import reranker, settings_cache, status_report, vocabulary
            from usr.plugins.a0_reranker.helpers.scoring import calling_agent

            report = None
            if str(probe).strip().lower() in ("true", "1", "yes", "on"):
                with calling_agent.asking(self.agent):  # rerank_api utility: this agent's utility model is probed
                    report = await reranker.aprobe(settings_cache.configured_mapping(self.agent))
            status = status_report.collect(self.agent)  # after the probe: it reports what the probe found
            text = vocabulary.status_text(status, report)
        except Exception as exc:  # the tool must answer, whatever is broken
            text = f"The reranker status could not be read: {type(exc).__name__}: {exc}"
        return Response(message=text, break_loop=False)
