"""Stand-in for plugins/_memory/extensions/python/message_loop_prompts_after/_91_recall_wait.py:
await the recall task unless delayed recall is on and the task started this iteration.
A failed or timed-out task raises here, which ends the agent's turn in the host."""
from agent import LoopData
from helpers import plugins
from helpers.extension import Extension
from plugins._memory.extensions.python.message_loop_prompts_after._50_recall_memories import (
    DATA_NAME_ITER as DATA_NAME_ITER_MEMORIES,
    DATA_NAME_TASK as DATA_NAME_TASK_MEMORIES,
)


class RecallWait(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        if not self.agent:
            return
        set = plugins.get_plugin_config("_memory", self.agent)
        if not set:
            return None

        task = self.agent.get_data(DATA_NAME_TASK_MEMORIES)
        iter = self.agent.get_data(DATA_NAME_ITER_MEMORIES) or 0
        if not task or task.done():
            return
        if set["memory_recall_delayed"] and iter == loop_data.iteration:
            loop_data.extras_temporary["memory_recall_delayed"] = self.agent.read_prompt("memory.recall_delay_msg.md")
            return
        await task
