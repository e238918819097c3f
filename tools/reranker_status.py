from helpers.tool import Response, Tool


class RerankerStatus(Tool):
    """Reports whether the reranker plugin works: enabled, wrap live, endpoint and detected
    API, recent stats; with probe=true it also runs a live correctness probe."""

    async def execute(self, probe=False, **kwargs):
        try:
            from usr.plugins.a0_reranker.helpers import status_report, vocabulary

            report = None
            if str(probe).strip().lower() in ("true", "1", "yes", "on"):
                status, report = await status_report.collect_probed(self.agent)  # what the probe found
            else:
                status = status_report.collect(self.agent)
            text = vocabulary.status_text(status, report)
        except Exception as exc:  # the tool must answer, whatever is broken
            text = f"The reranker status could not be read: {type(exc).__name__}: {exc}"
        return Response(message=text, break_loop=False)
