"""Stand-in for plugins/_memory/tools/memory_forget.py, broken the same way upstream is:
`tools.memory_load` does not exist at the root, so loading this tool fails and the host
falls back to the "unknown" tool."""
from helpers.tool import Response, Tool
from plugins._memory.helpers.memory import Memory

from tools.memory_load import DEFAULT_THRESHOLD


class MemoryForget(Tool):
    async def execute(self, query="", threshold=DEFAULT_THRESHOLD, filter="", **kwargs):
        db = await Memory.get(self.agent)
        deleted = await db.delete_documents_by_query(query=query, threshold=threshold, filter=filter)
        return Response(message=self.agent.read_prompt("fw.memories_deleted.md", memory_count=len(deleted)),
                        break_loop=False)
