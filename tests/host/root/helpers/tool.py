"""Stand-in for helpers/tool.py: Tool base class and its Response."""
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any

from agent import Agent, LoopData
from helpers.extension import call_extensions_async
from helpers.print_style import PrintStyle
from helpers.strings import sanitize_string


@dataclass
class Response:
    message: str
    break_loop: bool
    additional: dict[str, Any] | None = None


class Tool:
    def __init__(self, agent: Agent, name: str, method: str | None, args: dict[str, str],
                 message: str, loop_data: LoopData | None, **kwargs) -> None:
        self.agent = agent
        self.name = name
        self.method = method
        self.args = args
        self.loop_data = loop_data
        self.message = message
        self.progress: str = ""

    @abstractmethod
    async def execute(self, **kwargs) -> Response:
        pass

    async def set_progress(self, content: str | None):
        ctx = {"content": content or ""}
        await call_extensions_async("tool_output_update", self.agent, ctx=ctx)
        self.progress = ctx["content"]

    def add_progress(self, content: str | None):
        if content:
            self.progress += content

    async def before_execution(self, **kwargs):
        PrintStyle().print(f"{self.agent.agent_name}: Using tool '{self.name}'")
        self.log = self.get_log_object()

    async def after_execution(self, response: Response, **kwargs):
        text = sanitize_string(response.message.strip())
        self.agent.hist_add_tool_result(self.name, text, id=self.log.id, **(response.additional or {}))
        self.log.update(content=text)

    def get_log_object(self):
        import uuid

        label = f"{self.name}:{self.method}" if self.method else self.name
        return self.agent.context.log.log(
            type="tool", heading=f"icon://construction {self.agent.agent_name}: Using tool '{label}'",
            content="", kvps=self.args, _tool_name=self.name, id=str(uuid.uuid4()),
        )

    def nice_key(self, key: str):
        words = key.split("_")
        return " ".join([words[0].capitalize()] + [w.lower() for w in words[1:]])
