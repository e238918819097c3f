"""Stand-in for plugins/_memory/extensions/python/message_loop_prompts_after/
_50_recall_memories.py.

Kept identical to the host where a plugin can observe it: the class and method names,
the keyword arguments of both searches, the order of the work, and the names of the
locals in search_memories (`user_instruction` = loop_data.user_message.output_text(),
`history` = last memory_recall_history_len characters of agent.history.output_text(),
`query` = user_instruction + "\\n\\n" + history when query prep is off, `set` = the
_memory config, `db`, `memories`, `solutions`, `extras`). A reranker finds the caller by
(co_name, file name) = ("search_memories", "_50_recall_memories.py") and reads those
locals from the frame.
"""
import asyncio

from agent import LoopData
from helpers import dirty_json, errors, log, plugins
from helpers.extension import Extension
from plugins._memory.helpers.memory import Memory
from plugins._memory.tools.memory_load import DEFAULT_THRESHOLD as DEFAULT_MEMORY_THRESHOLD  # noqa: F401

DATA_NAME_TASK = "_recall_memories_task"
DATA_NAME_ITER = "_recall_memories_iter"
SEARCH_TIMEOUT = 30

# stand-in only: the harness reads the final Document lists from agent data under this key
DATA_NAME_HOST_RESULT = "_host_recall_result"


class RecallMemories(Extension):

    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        if not self.agent:
            return

        set = plugins.get_plugin_config("_memory", self.agent)
        if not set or not set["memory_recall_enabled"]:
            return None

        task = None
        # the first iteration is 0, so recall always runs on it
        if loop_data.iteration % set["memory_recall_interval"] == 0:
            log_item = self.agent.context.log.log(type="util", heading="Searching memories...")
            # runs in the background; _91_recall_wait awaits it (30 s for the whole search)
            task = asyncio.create_task(
                asyncio.wait_for(
                    self.search_memories(loop_data=loop_data, log_item=log_item, **kwargs),
                    timeout=SEARCH_TIMEOUT,
                )
            )

        self.agent.set_data(DATA_NAME_TASK, task)
        self.agent.set_data(DATA_NAME_ITER, loop_data.iteration)

    async def search_memories(self, log_item: log.LogItem, loop_data: LoopData, **kwargs):
        if not self.agent:
            return

        extras = loop_data.extras_persistent
        extras.pop("memories", None)
        extras.pop("solutions", None)

        set = plugins.get_plugin_config("_memory", self.agent)
        if not set:
            return None

        system = self.agent.read_prompt("memory.memories_query.sys.md")

        # the user's message as the history renders it, e.g. 'user: {"user_message": "..."}'
        user_instruction = (
            loop_data.user_message.output_text() if loop_data.user_message else "None"
        )
        history = self.agent.history.output_text()[-set["memory_recall_history_len"]:]
        message = self.agent.read_prompt(
            "memory.memories_query.msg.md", history=history, message=user_instruction
        )

        if set["memory_recall_query_prep"]:
            try:
                query = await self.agent.call_utility_model(system=system, message=message)
                query = query.strip()
                log_item.update(query=query)
            except Exception as e:
                err = errors.format_error(e)
                self.agent.context.log.log(type="warning", heading="Recall memories extension error:", content=err)
                query = ""
            if not query:
                log_item.update(heading="Failed to generate memory query")
                return
        else:
            query = user_instruction + "\n\n" + history

        if not query or len(query) <= 3:
            log_item.update(query="No relevant memory query generated, skipping search")
            return

        db = await Memory.get(self.agent)

        memories = await db.search_similarity_threshold(
            query=query,
            limit=set["memory_recall_memories_max_search"],
            threshold=set["memory_recall_similarity_threshold"],
            filter=f"area == '{Memory.Area.MAIN.value}' or area == '{Memory.Area.FRAGMENTS.value}'",
        )

        solutions = await db.search_similarity_threshold(
            query=query,
            limit=set["memory_recall_solutions_max_search"],
            threshold=set["memory_recall_similarity_threshold"],
            filter=f"area == '{Memory.Area.SOLUTIONS.value}'",
        )

        if not memories and not solutions:
            log_item.update(heading="No memories or solutions found")
            return

        if set["memory_recall_post_filter"]:
            # the utility model picks indices from the numbered list memories + solutions
            mems_list = {i: memory.page_content for i, memory in enumerate(memories + solutions)}
            try:
                filter = await self.agent.call_utility_model(
                    system=self.agent.read_prompt("memory.memories_filter.sys.md"),
                    message=self.agent.read_prompt(
                        "memory.memories_filter.msg.md",
                        memories=mems_list,
                        history=history,
                        message=user_instruction,
                    ),
                )
                filter_inds = dirty_json.try_parse(filter)
                filtered_memories = []
                filtered_solutions = []
                mem_len = len(memories)
                if isinstance(filter_inds, list):
                    for idx in filter_inds:
                        if not isinstance(idx, int):
                            continue
                        if idx < mem_len:
                            filtered_memories.append(memories[idx])
                        else:
                            sol_idx = idx - mem_len
                            if sol_idx < len(solutions):
                                filtered_solutions.append(solutions[sol_idx])
                memories = filtered_memories
                solutions = filtered_solutions
            except Exception as e:
                err = errors.format_error(e)
                self.agent.context.log.log(type="warning", heading="Failed to filter relevant memories", content=err)
                filter_inds = []

        # the first N win: the order decides what reaches the prompt
        memories = memories[: set["memory_recall_memories_max_result"]]
        solutions = solutions[: set["memory_recall_solutions_max_result"]]

        self.agent.set_data(DATA_NAME_HOST_RESULT, {"memories": memories, "solutions": solutions})

        log_item.update(heading=f"{len(memories)} memories and {len(solutions)} relevant solutions found")

        memories_txt = "\n\n".join(mem.page_content for mem in memories) if memories else ""
        solutions_txt = "\n\n".join(sol.page_content for sol in solutions) if solutions else ""

        if memories_txt:
            log_item.update(memories=memories_txt)
            extras["memories"] = self.agent.parse_prompt("agent.system.memories.md", memories=memories_txt)
        if solutions_txt:
            log_item.update(solutions=solutions_txt)
            extras["solutions"] = self.agent.parse_prompt("agent.system.solutions.md", solutions=solutions_txt)
