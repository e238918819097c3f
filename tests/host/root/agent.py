"""Stand-in for Agent Zero's agent.py: AgentContext, AgentConfig, UserMessage, LoopData
and the Agent surface that extensions, tools and the memory plugin use. There is no
LLM loop; Host.recall() drives the message_loop_prompts_after point as monologue does."""
import random
import string
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from typing import Any, Awaitable, Callable, Dict

import helpers.log as Log
from helpers import extension, files, history, subagents
from helpers.errors import HandledException, InterventionException, RepairableException  # noqa: F401


class AgentContextType(Enum):
    USER = "user"
    TASK = "task"
    BACKGROUND = "background"


_current_context_id = ""


class AgentContext:
    _contexts: dict[str, "AgentContext"] = {}
    _contexts_lock = threading.RLock()
    _counter: int = 0

    def __init__(self, config: "AgentConfig", id: str | None = None, name: str | None = None,
                 agent0: "Agent|None" = None, log: Log.Log | None = None, paused: bool = False,
                 streaming_agent: "Agent|None" = None, created_at: datetime | None = None,
                 type: AgentContextType = AgentContextType.USER,
                 last_message: datetime | None = None, data: dict | None = None,
                 output_data: dict | None = None, set_current: bool = False):
        self.id = id or AgentContext.generate_id()
        with AgentContext._contexts_lock:
            AgentContext._contexts[self.id] = self
        if set_current:
            AgentContext.set_current(self.id)
        self.name = name
        self.config = config
        self.data = data or {}
        self.output_data = output_data or {}
        self.log = log or Log.Log()
        self.log.context = self
        self.paused = paused
        self.streaming_agent = streaming_agent
        self.task = None
        self.created_at = created_at or datetime.now(timezone.utc)
        self.type = type
        AgentContext._counter += 1
        self.no = AgentContext._counter
        self.last_message = last_message or datetime.now(timezone.utc)
        self.agent0 = agent0 or Agent(0, self.config, self)

    @staticmethod
    def get(id: str):
        with AgentContext._contexts_lock:
            return AgentContext._contexts.get(id)

    @staticmethod
    def use(id: str):
        context = AgentContext.get(id)
        AgentContext.set_current(id if context else "")
        return context

    @staticmethod
    def current():
        return AgentContext.get(_current_context_id) if _current_context_id else None

    @staticmethod
    def set_current(ctxid: str):
        global _current_context_id
        _current_context_id = ctxid

    @staticmethod
    def first():
        with AgentContext._contexts_lock:
            return next(iter(AgentContext._contexts.values()), None)

    @staticmethod
    def all():
        with AgentContext._contexts_lock:
            return list(AgentContext._contexts.values())

    @staticmethod
    def generate_id():
        alphabet = string.ascii_letters + string.digits
        while True:
            candidate = "".join(random.choice(alphabet) for _ in range(8))
            if AgentContext.get(candidate) is None:
                return candidate

    @staticmethod
    def remove(id: str):
        with AgentContext._contexts_lock:
            return AgentContext._contexts.pop(id, None)

    def get_data(self, key: str, recursive: bool = True):
        return self.data.get(key, None)

    def set_data(self, key: str, value: Any, recursive: bool = True):
        self.data[key] = value

    def get_output_data(self, key: str, recursive: bool = True):
        return self.output_data.get(key, None)

    def set_output_data(self, key: str, value: Any, recursive: bool = True):
        self.output_data[key] = value

    def get_agent(self):
        return self.streaming_agent or self.agent0

    def is_running(self) -> bool:
        return False


@dataclass
class AgentConfig:
    mcp_servers: str
    profile: str = ""
    knowledge_subdirs: list[str] = field(default_factory=lambda: ["default", "custom"])
    additional: Dict[str, Any] = field(default_factory=dict)


@dataclass
class UserMessage:
    message: str
    attachments: list[str] = field(default_factory=list)
    system_message: list[str] = field(default_factory=list)
    id: str = ""


class LoopData:
    def __init__(self, **kwargs):
        self.iteration = -1
        self.system = []
        self.user_message: history.Message | None = None
        self.history_output: list[history.OutputMessage] = []
        self.extras_temporary: OrderedDict[str, history.MessageContent] = OrderedDict()
        self.extras_persistent: OrderedDict[str, history.MessageContent] = OrderedDict()
        self.last_response = ""
        self.params_temporary: dict = {}
        self.params_persistent: dict = {}
        self.current_tool = None
        for key, value in kwargs.items():
            setattr(self, key, value)


class Agent:
    DATA_NAME_SUPERIOR = "_superior"
    DATA_NAME_SUBORDINATE = "_subordinate"
    DATA_NAME_CTX_WINDOW = "ctx_window"
    DATA_NAME_UTILITY_MODEL = "_host_utility_model"  # stand-in only, see call_utility_model

    @extension.extensible
    def __init__(self, number: int, config: AgentConfig, context: AgentContext | None = None):
        self.config = config
        self.context = context or AgentContext(config=config, agent0=self)
        self.number = number
        self.agent_name = f"A{self.number}"
        self.history = history.History(self)
        self.last_user_message: history.Message | None = None
        self.intervention: UserMessage | None = None
        self.data: dict[str, Any] = {}
        self.loop_data = LoopData()
        extension.call_extensions_sync("agent_init", self)

    # --- prompts ---------------------------------------------------------------------
    @extension.extensible
    def parse_prompt(self, _prompt_file: str, **kwargs):
        return files.parse_file(_prompt_file, _directories=subagents.get_paths(self, "prompts"),
                                _agent=self, **kwargs)

    @extension.extensible
    def read_prompt(self, file: str, **kwargs) -> str:
        prompt = files.read_prompt_file(file, _directories=subagents.get_paths(self, "prompts"),
                                        _agent=self, **kwargs)
        if files.is_full_json_template(prompt):
            prompt = files.remove_code_fences(prompt)
        return prompt

    # --- data ------------------------------------------------------------------------
    def get_data(self, field: str):
        return self.data.get(field, None)

    def set_data(self, field: str, value):
        self.data[field] = value

    # --- history ---------------------------------------------------------------------
    @extension.extensible
    def hist_add_message(self, ai: bool, content: history.MessageContent, tokens: int = 0, id: str = ""):
        self.last_message = datetime.now(timezone.utc)
        content_data = {"content": content}
        extension.call_extensions_sync("hist_add_before", self, content_data=content_data, ai=ai)
        return self.history.add_message(ai=ai, content=content_data["content"], tokens=tokens, id=id)

    @extension.extensible
    def hist_add_user_message(self, message: UserMessage, intervention: bool = False):
        """The host renders fw.user_message.md (a JSON template) and drops empty parts, so
        the stored content is e.g. {"user_message": "..."}."""
        self.history.new_topic()
        content = {
            "system_message": message.system_message,
            "user_message": message.message,
            "attachments": message.attachments,
        }
        content = {k: v for k, v in content.items() if v}
        msg = self.hist_add_message(False, content=content, id=message.id)
        self.last_user_message = msg
        return msg

    @extension.extensible
    def hist_add_ai_response(self, message: str, id: str = ""):
        self.loop_data.last_response = message
        return self.hist_add_message(True, content=message, id=id)

    @extension.extensible
    def hist_add_tool_result(self, tool_name: str, tool_result: str, **kwargs):
        msg_id = kwargs.pop("id", "")
        data = {"tool_name": tool_name, "tool_result": tool_result, **kwargs}
        extension.call_extensions_sync("hist_add_tool_result", self, data=data)
        return self.hist_add_message(False, content=data, id=msg_id)

    # --- models ----------------------------------------------------------------------
    @extension.extensible
    def get_utility_model(self):
        return self.get_data(Agent.DATA_NAME_UTILITY_MODEL)

    @extension.extensible
    async def call_utility_model(self, system: str, message: str,
                                 callback: Callable[[str], Awaitable[None]] | None = None,
                                 background: bool = False):
        """Stand-in: the 'model' is a callable (system, message) -> str or awaitable str set
        with Host.agent(utility_model=...); without one the call fails like an
        unreachable provider would."""
        model = self.get_utility_model()
        if model is None:
            raise RuntimeError("No utility model configured in the stand-in host")
        answer = model(system, message)
        if isinstance(answer, Awaitable):
            answer = await answer
        if callback:
            await callback(answer)
        return answer

    # --- tools -----------------------------------------------------------------------
    @extension.extensible
    def get_tool(self, name: str, method: str | None, args: dict, message: str,
                 loop_data: LoopData | None, **kwargs):
        from helpers.modules import load_classes_from_file
        from helpers.tool import Tool
        from tools.unknown import Unknown

        classes = []
        for path in subagents.get_paths(self, "tools", name + ".py"):
            try:  # import errors are swallowed: a broken tool becomes "unknown"
                classes = load_classes_from_file(path, Tool)
                break
            except Exception:
                continue
        tool_class = classes[0] if classes else Unknown
        return tool_class(agent=self, name=name, method=method, args=args, message=message,
                          loop_data=loop_data, **kwargs)
