"""Stand-in for plugins/_memory/helpers/memory_consolidation.py: the discovery step of
consolidation (MemoryConsolidator._find_similar_memories) and what it needs. The LLM
analysis and the merge/replace/update handlers are left out."""
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from typing import Any, Dict, List, Optional

from langchain_core.documents import Document

from agent import Agent
from helpers.dirty_json import DirtyJson
from helpers.log import LogItem
from helpers.print_style import PrintStyle
from plugins._memory.helpers.memory import Memory
from plugins._memory.tools.memory_load import DEFAULT_THRESHOLD as DEFAULT_MEMORY_THRESHOLD


class ConsolidationAction(Enum):
    MERGE = "merge"
    REPLACE = "replace"
    KEEP_SEPARATE = "keep_separate"
    UPDATE = "update"
    SKIP = "skip"


@dataclass
class ConsolidationConfig:
    similarity_threshold: float = DEFAULT_MEMORY_THRESHOLD
    max_similar_memories: int = 10
    consolidation_sys_prompt: str = "memory.consolidation.sys.md"
    consolidation_msg_prompt: str = "memory.consolidation.msg.md"
    max_llm_context_memories: int = 5
    keyword_extraction_sys_prompt: str = "memory.keyword_extraction.sys.md"
    keyword_extraction_msg_prompt: str = "memory.keyword_extraction.msg.md"
    processing_timeout_seconds: int = 60
    replace_similarity_threshold: float = 0.9  # REPLACE is allowed only at or above this


@dataclass
class ConsolidationResult:
    action: ConsolidationAction
    memories_to_remove: List[str] = field(default_factory=list)
    memories_to_update: List[Dict[str, Any]] = field(default_factory=list)
    new_memory_content: str = ""
    metadata: Dict[str, Any] = field(default_factory=dict)
    reasoning: str = ""


class MemoryConsolidator:
    def __init__(self, agent: Agent, config: Optional[ConsolidationConfig] = None):
        self.agent = agent
        self.config = config or ConsolidationConfig()

    async def _find_similar_memories(self, new_memory: str, area: str,
                                     log_item: Optional[LogItem] = None) -> List[Document]:
        """One semantic search for the memory itself plus one per extracted keyword query,
        merged in order and de-duplicated by id; each kept document gets a rank-based
        `_consolidation_similarity` (1.0 for the first .. replace threshold for the last)
        written into its metadata - the docstore's own object."""
        db = await Memory.get(self.agent)
        search_queries = await self._extract_search_keywords(new_memory, log_item)
        area_filter = f"area == '{area}'"

        all_similar: list[Document] = []
        semantic_similar = await db.search_similarity_threshold(
            query=new_memory,
            limit=self.config.max_similar_memories,
            threshold=self.config.similarity_threshold,
            filter=area_filter,
        )
        all_similar.extend(semantic_similar)

        for query in search_queries:
            if not query.strip():
                continue
            per_query = max(3, self.config.max_similar_memories // max(1, len(search_queries)))
            keyword_similar = await db.search_similarity_threshold(
                query=query.strip(),
                limit=per_query,
                threshold=self.config.similarity_threshold,
                filter=area_filter,
            )
            all_similar.extend(keyword_similar)

        seen: set[str] = set()
        unique_similar: list[Document] = []
        for doc in all_similar:
            doc_id = doc.metadata.get("id")
            if doc_id and doc_id not in seen:
                seen.add(doc_id)
                unique_similar.append(doc)

        count = len(unique_similar)
        floor = self.config.replace_similarity_threshold
        scores: dict[str, float] = {}
        for rank, doc in enumerate(unique_similar):
            doc_id = doc.metadata.get("id")
            if not doc_id:
                continue
            if count == 1:
                scores[doc_id] = 1.0
            else:
                spread = floor + (1.0 - floor) * (1.0 - rank / (count - 1))
                scores[doc_id] = max(spread, self.config.similarity_threshold)
        for doc in unique_similar:
            doc.metadata["_consolidation_similarity"] = scores.get(doc.metadata.get("id"), 0.7)

        return unique_similar[: self.config.max_llm_context_memories]

    async def _extract_search_keywords(self, new_memory: str, log_item: Optional[LogItem] = None) -> List[str]:
        """Utility-LLM keyword queries; on any failure, the memory's first sentence or
        first 200 characters."""
        try:
            system_prompt = self.agent.read_prompt(self.config.keyword_extraction_sys_prompt)
            message_prompt = self.agent.read_prompt(self.config.keyword_extraction_msg_prompt,
                                                    memory_content=new_memory)
            answer = await self.agent.call_utility_model(system=system_prompt, message=message_prompt,
                                                         background=True)
            parsed = DirtyJson.parse_string(answer.strip())
            if isinstance(parsed, list):
                return [str(k) for k in parsed if k]
            if isinstance(parsed, str):
                return [parsed]
            return []
        except Exception as e:
            PrintStyle().print(f"Keyword extraction failed: {e}")
            if len(new_memory) <= 200:
                fallback = new_memory
            else:
                first_sentence = new_memory.split(".")[0]
                fallback = first_sentence[:200] if len(first_sentence) <= 200 else new_memory[:200]
            return [fallback.strip()]

    def _get_timestamp(self) -> str:
        return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def create_memory_consolidator(agent: Agent, **config_overrides) -> MemoryConsolidator:
    return MemoryConsolidator(agent, ConsolidationConfig(**config_overrides))
