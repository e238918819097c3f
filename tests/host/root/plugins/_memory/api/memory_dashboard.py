"""Stand-in for plugins/_memory/api/memory_dashboard.py (served at
/api/plugins/_memory/memory_dashboard). Runs without an agent: Memory.get_by_subdir."""
from langchain_core.documents import Document

from agent import AgentContext
from helpers.api import ApiHandler, Request, Response
from plugins._memory.helpers.memory import Memory, get_context_memory_subdir, get_existing_memory_subdirs


class MemoryDashboard(ApiHandler):
    async def process(self, input: dict, request: Request) -> dict | Response:
        try:
            action = input.get("action", "search")
            handlers = {
                "get_memory_subdirs": lambda: self._get_memory_subdirs(),
                "get_current_memory_subdir": lambda: self._get_current_memory_subdir(input),
                "search": lambda: self._search_memories(input),
                "delete": lambda: self._delete_memory(input),
                "bulk_delete": lambda: self._bulk_delete_memories(input),
                "update": lambda: self._update_memory(input),
            }
            if action not in handlers:
                return {"success": False, "error": f"Unknown action: {action}", "memories": [], "total_count": 0}
            return await handlers[action]()
        except Exception as e:
            return {"success": False, "error": str(e), "memories": [], "total_count": 0}

    async def _delete_memory(self, input: dict) -> dict:
        try:
            memory_id = input.get("memory_id")
            if not memory_id:
                return {"success": False, "error": "Memory ID is required for deletion"}
            memory = await Memory.get_by_subdir(input.get("memory_subdir", "default"), preload_knowledge=False)
            removed = await memory.delete_documents_by_ids([memory_id])
            if not removed:
                return {"success": False, "error": f"Memory with ID '{memory_id}' not found"}
            return {"success": True, "message": f"Memory {memory_id} deleted successfully"}
        except Exception as e:
            return {"success": False, "error": f"Failed to delete memory: {e}"}

    async def _bulk_delete_memories(self, input: dict) -> dict:
        try:
            ids = input.get("memory_ids", [])
            if not ids:
                return {"success": False, "error": "No memory IDs provided for bulk deletion"}
            if not isinstance(ids, list):
                return {"success": False, "error": "Memory IDs must be provided as a list"}
            memory = await Memory.get_by_subdir(input.get("memory_subdir", "default"), preload_knowledge=False)
            removed = await memory.delete_documents_by_ids(ids)
            if len(removed) == len(ids):
                return {"success": True, "message": f"Successfully deleted {len(ids)} memories"}
            if removed:
                return {"success": True,
                        "message": f"Successfully deleted {len(removed)} memories. {len(ids) - len(removed)} failed."}
            return {"success": False, "error": "Failed to delete any memories."}
        except Exception as e:
            return {"success": False, "error": f"Failed to bulk delete memories: {e}"}

    async def _get_current_memory_subdir(self, input: dict) -> dict:
        try:
            context_id = input.get("context_id", None)
            context = AgentContext.use(context_id) if context_id else None
            if not context:
                return {"success": True, "memory_subdir": "default"}
            return {"success": True, "memory_subdir": get_context_memory_subdir(context) or "default"}
        except Exception:
            return {"success": True, "memory_subdir": "default"}

    async def _get_memory_subdirs(self) -> dict:
        try:
            return {"success": True, "subdirs": get_existing_memory_subdirs()}
        except Exception as e:
            return {"success": False, "error": f"Failed to get memory subdirectories: {e}", "subdirs": ["default"]}

    async def _search_memories(self, input: dict) -> dict:
        """With a search text: one similarity search (default limit 100, threshold 0.6,
        optional area filter). Without: every document of the area, newest first."""
        try:
            memory_subdir = input.get("memory_subdir", "default")
            area_filter = input.get("area", "")
            search_query = input.get("search", "")
            limit = input.get("limit", 100)
            threshold = input.get("threshold", 0.6)

            memory = await Memory.get_by_subdir(memory_subdir, preload_knowledge=False)

            if search_query:
                memories = await memory.search_similarity_threshold(
                    query=search_query,
                    limit=limit,
                    threshold=threshold,
                    filter=f"area == '{area_filter}'" if area_filter else "",
                )
            else:
                memories = [doc for doc in memory.db.get_all_docs().values()
                            if not area_filter or doc.metadata.get("area", "") == area_filter]
                memories.sort(key=lambda m: m.metadata.get("timestamp", "0000-00-00 00:00:00"), reverse=True)
                if limit and len(memories) > limit:
                    memories = memories[:limit]

            rows = [self._format_memory_for_dashboard(m) for m in memories]
            knowledge_count = sum(1 for r in rows if r["knowledge_source"])
            return {
                "success": True,
                "memories": rows,
                "total_count": len(rows),
                "total_db_count": len(memory.db.get_all_docs()),
                "knowledge_count": knowledge_count,
                "conversation_count": len(rows) - knowledge_count,
                "search_query": search_query,
                "area_filter": area_filter,
                "memory_subdir": memory_subdir,
            }
        except Exception as e:
            return {"success": False, "error": str(e), "memories": [], "total_count": 0}

    def _format_memory_for_dashboard(self, m: Document) -> dict:
        meta = m.metadata
        return {
            "id": meta.get("id", "unknown"),
            "area": meta.get("area", "unknown"),
            "timestamp": meta.get("timestamp", "unknown"),
            "content_full": m.page_content,
            "knowledge_source": meta.get("knowledge_source", False),
            "source_file": meta.get("source_file", ""),
            "file_type": meta.get("file_type", ""),
            "consolidation_action": meta.get("consolidation_action", ""),
            "tags": meta.get("tags", []),
            "metadata": meta,
        }

    async def _update_memory(self, input: dict) -> dict:
        try:
            memory_subdir, original, edited = input.get("memory_subdir"), input.get("original"), input.get("edited")
            if not memory_subdir or not original or not edited:
                return {"success": False, "error": "Missing required parameters"}
            doc = Document(page_content=edited["content_full"], metadata=edited["metadata"])
            memory = await Memory.get_by_subdir(memory_subdir, preload_knowledge=False)
            doc_id = (await memory.update_documents([doc]))[0]
            stored = memory.get_document_by_id(doc_id)
            row = self._format_memory_for_dashboard(stored) if stored else None
            return {"success": row is not None, "memory": row}
        except Exception as e:
            return {"success": False, "error": str(e), "memory": None}
