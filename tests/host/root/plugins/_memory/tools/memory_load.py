"""Stand-in for plugins/_memory/tools/memory_load.py. Like the host, the LLM's
arguments are passed through as given (a string "10" is NOT coerced)."""
from helpers.tool import Response, Tool
from plugins._memory.helpers.memory import Memory

DEFAULT_THRESHOLD = 0.7
DEFAULT_LIMIT = 10


class MemoryLoad(Tool):
    async def execute(self, query="", threshold=DEFAULT_THRESHOLD, limit=DEFAULT_LIMIT, filter="", **kwargs):
        db = await Memory.get(self.agent)
        docs = await db.search_similarity_threshold(query=query, limit=limit, threshold=threshold, filter=filter)
        if len(docs) == 0:
            result = self.agent.read_prompt("fw.memories_not_found.md", query=query)
        else:
            result = str("\n\n".join(Memory.format_docs_plain(docs)))
        return Response(message=result, break_loop=False)
